"""Analysis of promptfoo results files: no model calls, no promptfoo — read ``-o results.json`` and report."""
