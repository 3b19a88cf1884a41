"""A result's outcome as a value: pass, fail or unscored (with its reason).

Every GradingResult the pack returns carries its outcome in its metadata — ``outcome`` (``"pass"``,
``"fail"`` or ``"unscored"``) and, only when unscored, ``unscored_reason`` — so that ``report``,
``rescore`` and ``calibrate`` read a field, never a reason's text (which any assertion's reason, or an
answer quoted in one, could imitate). inspect_ai's ``Score.unscored()`` is the model: a parse failure,
a missing input or an exception is an explicit unscored result with a reason, never a quiet 0 or 1.

The visible reason line is built from the outcome (``ERROR (judge unscored): <reason>``,
``UNSCORED: …``) for people reading the viewer; nothing reads those prefixes back, except
:func:`legacy_unscored` for results files written before the field existed.
``assertions/grounding.cjs`` writes the same two fields for the rows it fails itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = [
    "OUTCOMES",
    "Outcome",
    "OutcomeKind",
    "composite_failed",
    "legacy_unscored",
    "read_outcome",
    "unscored_result",
    "with_outcome",
]

OutcomeKind = Literal["pass", "fail", "unscored"]
OUTCOMES: tuple[OutcomeKind, ...] = get_args(OutcomeKind)

# The reason prefixes results files carried before ``outcome`` existed; read only by legacy_unscored.
_LEGACY_PREFIX = "ERROR ("


@dataclass(frozen=True)
class Outcome:
    """Pass, fail or unscored; ``reason`` says why a result is unscored (empty otherwise)."""

    kind: OutcomeKind
    reason: str = ""

    def __post_init__(self) -> None:
        if self.kind not in OUTCOMES:
            raise ValueError(f"outcome is {self.kind!r}: use {', '.join(OUTCOMES)}")
        if (self.kind == "unscored") != bool(self.reason):
            raise ValueError("an unscored outcome needs a reason, and only an unscored one has one")

    @classmethod
    def of(cls, passed: bool) -> Outcome:
        """A scored outcome: pass or fail."""
        return cls("pass" if passed else "fail")

    @classmethod
    def unscored(cls, reason: str) -> Outcome:
        """No verdict, and why (a blank reason is refused)."""
        return cls("unscored", reason.strip() or "no reason given")

    @property
    def scored(self) -> bool:
        """False for an unscored outcome."""
        return self.kind != "unscored"

    def metadata(self) -> dict[str, str]:
        """The fields a GradingResult's ``metadata`` carries: ``outcome`` (+ ``unscored_reason``)."""
        return {"outcome": self.kind, **({"unscored_reason": self.reason} if self.reason else {})}


def unscored_result(label: str, reason: str, **metadata: Any) -> dict[str, Any]:
    """An unscored GradingResult: fails in promptfoo (score 0: it needs a number), no named scores.

    ``label`` is the visible prefix (``ERROR (judge unscored)``); the reason line is ``label: reason``.
    ``metadata`` adds the caller's own keys (``judge=…``) next to the outcome's.
    """
    outcome = Outcome.unscored(reason)
    return {"pass": False, "score": 0.0, "reason": f"{label}: {outcome.reason}", "namedScores": {},
            "metadata": {**metadata, **outcome.metadata()}}  # fmt: skip


def with_outcome(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (changed in place and returned) with its outcome in its metadata: the one it already
    says (an :func:`unscored_result`), else the scored outcome its ``pass`` gives."""
    metadata = result.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    if "outcome" not in metadata:
        metadata.update(Outcome.of(result.get("pass") is True).metadata())
    result["metadata"] = metadata
    return result


def read_outcome(metadata: Mapping[str, Any]) -> Outcome | None:
    """The outcome a result's metadata carries; None when it has no ``outcome`` field (an old file, or
    an assertion not from this pack).

    Raises:
        ValueError: ``outcome`` is not one of :data:`OUTCOMES`, or ``unscored_reason`` is not text.
    """
    kind = metadata.get("outcome")
    if kind is None:
        return None
    if kind not in OUTCOMES:
        raise ValueError(f"outcome is {kind!r}, expected one of {', '.join(OUTCOMES)}")
    if kind != "unscored":
        return Outcome(kind)
    reason = metadata.get("unscored_reason")
    if reason is not None and not isinstance(reason, str):
        raise ValueError("unscored_reason is not text")
    return Outcome.unscored(reason or "")


def row_unscored(grading: Mapping[str, Any]) -> bool:
    """Whether a promptfoo row's ``gradingResult`` (the composite's result, or promptfoo's aggregate)
    or any of its component results says ``outcome`` unscored; reads only the field (a malformed value
    is not unscored here: the report refuses it with the row named). A composite that failed the row
    (``metadata.composite`` with ``outcome`` fail: a judge outage under a verifier safety failure) decides
    it whatever a component says: a failure stands over an unknown, a pass does not."""
    metadata = grading.get("metadata")
    if isinstance(metadata, dict) and composite_failed(metadata):
        return False
    results = [grading, *(grading.get("componentResults") or ())]
    return any(
        isinstance(r, dict)
        and isinstance(r.get("metadata"), dict)
        and r["metadata"].get("outcome") == "unscored"
        for r in results
    )


def composite_failed(metadata: Mapping[str, Any]) -> bool:
    """Whether a row's ``gradingResult.metadata`` is the pack's composite failing the row: ``outcome``
    fail, or (a redacted file keeps no outcome) ``composite.safety_from``, the side whose safety No
    failed a row that has no composite. Such a row is a scored failure whatever its components say."""
    composite = metadata.get("composite")
    if not isinstance(composite, dict):
        return False
    return metadata.get("outcome") == "fail" or bool(composite.get("safety_from"))


def legacy_unscored(reason: str, metadata: Mapping[str, Any]) -> bool:
    """Whether a component of a results file written before ``outcome`` existed was unscored.

    Only for rows none of whose results carry ``outcome``: such files said it with a reason prefix
    (``ERROR (judge unscored)``, ``ERROR (verifier not run)``, …) or a status field
    (``metadata.judge.status`` / ``metadata.composite.status`` ``unscored``). New files are read with
    :func:`read_outcome`, never with this.
    """
    if reason.startswith(_LEGACY_PREFIX):
        return True
    return any(
        isinstance(metadata.get(key), dict) and metadata[key].get("status") == "unscored"
        for key in ("judge", "composite")
    )
