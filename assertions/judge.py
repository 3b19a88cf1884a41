"""Kept for configs written before ``file://assertions/grounding.py:judge``, which this is."""

from grounding import judge as get_assert  # noqa: F401  (promptfoo puts this file's folder on sys.path)
