"""Kept for configs written before ``file://assertions/grounding.py:docs_qa``, which this is."""

from grounding import docs_qa as get_assert  # noqa: F401  (promptfoo puts this file's folder on sys.path)
