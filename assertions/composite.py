"""Kept for configs written before ``file://assertions/grounding.py:round1`` (``:round2b``, ``:round3``)."""

from grounding import round1, round2b, round3  # noqa: F401  (promptfoo puts this file's folder on sys.path)
