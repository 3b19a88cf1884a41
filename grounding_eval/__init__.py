"""grounding-eval: grounding evaluation for promptfoo."""
