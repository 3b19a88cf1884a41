"""The factual-accuracy judge (seed 000): claims, per-claim verdicts, severity, score computed in code."""
