"""Kept for configs written before ``file://assertions/grounding.py:verifier``, which this is."""

from grounding import verifier as get_assert  # noqa: F401  (promptfoo puts this file's folder on sys.path)
