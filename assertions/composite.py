"""Kept for configs written before ``file://assertions/grounding.py:round1`` (``:round2b``, ``:round3``): each
scoring function of ``grounding.py`` (the calls of kind ``scoring`` in ``calls.json``), under its own name."""

import grounding  # promptfoo puts this file's folder on sys.path

globals().update(
    {name: getattr(grounding, name) for name, c in grounding._CALLS.items() if c["kind"] == "scoring"}
)
