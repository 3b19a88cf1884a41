"""Every score of a promptfoo row or GradingResult, wherever the pack put it.

The pack gives promptfoo a few named scores per row (the chips a reviewer reads: the composite, the
safety checks, the judge's and the verifier's scores); every other score — each verifier check, each
judge criterion and dimension, each factual-accuracy count — is in its result's metadata (``scores``),
under the names earlier results files gave them as named scores. ``row_scores`` merges both, as
``grounding-eval report`` reads them, so a test can ask for any score by its name.
"""

from __future__ import annotations

from typing import Any

_SCORED = ("judge", "verifier", "factuality", "docs_qa")


def row_scores(row: dict[str, Any]) -> dict[str, Any]:
    """The named scores of ``row`` (a results row or a GradingResult) and every ``metadata.*.scores``."""
    grading = row.get("gradingResult") or row
    found: dict[str, Any] = {}
    for result in [grading, *(grading.get("componentResults") or [])]:
        metadata = (result or {}).get("metadata") or {}
        for key in _SCORED:
            found.update((metadata.get(key) or {}).get("scores") or {})
    return {**found, **(row.get("namedScores") or {})}
