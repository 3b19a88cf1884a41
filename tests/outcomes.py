"""Reading a GradingResult's outcome in tests (grounding_eval/outcome.py): the field, not the reason's wording."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def unscored_reason(result: Mapping[str, Any]) -> str:
    """Why ``result`` is unscored; fails the test unless it is an unscored result (no pass, score 0)."""
    metadata = result.get("metadata") or {}
    assert metadata.get("outcome") == "unscored", result.get("reason")
    assert result["pass"] is False and result["score"] == 0, result
    reason: str = metadata["unscored_reason"]
    return reason
