"""Kept for configs written before ``file://assertions/grounding.py:factuality``, which this is."""

from grounding import factuality as get_assert  # noqa: F401  (promptfoo puts this file's folder on sys.path)
