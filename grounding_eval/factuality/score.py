"""The factual-accuracy score, computed in code from the claims — never taken from the model.

Step 5 of the seed: ``overall = (sum of scores of verifiable claims) / (number of verifiable claims)``,
a verifiable claim being one whose score is not NULL. Here:

* each claim's score is the one its verification result fixes (the parser refused any other);
* every ``evidence_quote`` is looked up in the evidence (:func:`~.evidence.locate_quotes`); a Supported or
  Contradicted verdict whose quote is not there is an ``UNGROUNDED_VERDICT`` and, when the rubric's
  ``downgrade_ungrounded`` is on, is scored as Unverifiable (NULL);
* zero verifiable claims is the status ``no_verifiable_claims`` with ``score`` ``None``, never 0 or 1;
* the judge's own ``overall_factual_accuracy_score`` and ``total_verifiable_claims`` are compared with
  the computed ones and a difference is recorded in ``mismatches`` — not corrected, not ignored;
* at risk level ``high``, a finding whose severity the scale marks for human verification (Critical,
  Major) makes the status ``needs_human_verification``.

The score depends only on the claims' verification results and the evidence check: a test changes the
judge's own numbers and checks that nothing else moves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from grounding_eval.factuality.evidence import Document, EvidenceCheck, locate_quotes
from grounding_eval.factuality.parse import ClaimVerdict, Scorecard
from grounding_eval.factuality.rubric import FactualityRubric

__all__ = ["UNGROUNDED_VERDICT", "AssessedClaim", "Assessment", "Status", "assess", "computed_score"]

Status = Literal["scored", "no_verifiable_claims", "needs_human_verification", "error"]
UNGROUNDED_VERDICT: Final = "UNGROUNDED_VERDICT"


@dataclass(frozen=True)
class AssessedClaim:
    """A claim with the deterministic evidence check and the score it counts with.

    Attributes:
        verdict: the judge's claim, as parsed.
        evidence_check: ``FOUND`` / ``NOT_FOUND`` for a quote, ``N/A`` without one.
        match_status: the quotation matcher's status (EXACT, NEAR, PARTIAL, NO_MATCH) or ``N/A``.
        source_document_ids: the documents the quote was found in.
        chunk_ids: the chunks the quote's match overlaps.
        ungrounded: a Supported or Contradicted verdict whose quote is not in the evidence.
        score: the score counted (``None``: not verifiable, or downgraded).
    """

    verdict: ClaimVerdict
    evidence_check: EvidenceCheck
    match_status: str
    source_document_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    ungrounded: bool
    score: float | None


@dataclass(frozen=True)
class Assessment:
    """The scorecard turned into a result.

    Attributes:
        status: ``scored``, ``no_verifiable_claims`` or ``needs_human_verification``.
        score: the computed score, ``None`` when no claim is verifiable.
        verifiable: the number of verifiable claims counted.
        claims: every claim, assessed.
        mismatches: where the judge's own numbers differ from the computed ones (one line each).
        human_findings: the claims that sent the row to a human (high risk only).
        counts: verification result → claims (as the judge said, before any downgrade).
        severities: severity level → claims.
    """

    status: Status
    score: float | None
    verifiable: int
    claims: tuple[AssessedClaim, ...]
    mismatches: tuple[str, ...]
    human_findings: tuple[AssessedClaim, ...]
    counts: dict[str, int]
    severities: dict[str, int]

    @property
    def ungrounded(self) -> int:
        """How many verdicts were ungrounded."""
        return sum(c.ungrounded for c in self.claims)


def computed_score(scores: Sequence[float | None]) -> tuple[float | None, int]:
    """Step 5: the mean of the non-NULL scores and how many there were (``None, 0`` when there are none)."""
    counted = [s for s in scores if s is not None]
    return (sum(counted) / len(counted) if counted else None), len(counted)


def assess(
    card: Scorecard,
    documents: Sequence[Document],
    rubric: FactualityRubric,
    *,
    risk_level: str,
    downgrade_ungrounded: bool | None = None,
) -> Assessment:
    """Check every quote, compute the score, compare the judge's numbers, decide the status."""
    downgrade = rubric.downgrade_ungrounded if downgrade_ungrounded is None else downgrade_ungrounded
    locations = locate_quotes([c.evidence_quote for c in card.claims], documents)
    claims: list[AssessedClaim] = []
    for claim, where in zip(card.claims, locations, strict=True):
        quoted_verdict = rubric.result(claim.verification_result).quote_required
        ungrounded = quoted_verdict and where.check != "FOUND"
        score = None if ungrounded and downgrade else claim.score
        claims.append(AssessedClaim(claim, where.check, where.status, where.source_document_ids,
                                    where.chunk_ids, ungrounded, score))  # fmt: skip
    score, verifiable = computed_score([c.score for c in claims])
    mismatches: list[str] = []
    if card.reported_total != verifiable:
        mismatches.append(
            f"judge reported total_verifiable_claims {card.reported_total}, computed {verifiable}"
        )
    reported = card.reported_score
    if (reported is None) != (score is None) or (
        reported is not None and score is not None and abs(reported - score) > rubric.score_tolerance
    ):
        shown = "null" if reported is None else f"{reported:g}"
        mine = "none (no verifiable claims)" if score is None else f"{score:.4g}"
        mismatches.append(f"judge reported overall_factual_accuracy_score {shown}, computed {mine}")
    human = tuple(c for c in claims if risk_level == "high" and rubric.needs_human(c.verdict.severity))
    status: Status
    if human:
        status = "needs_human_verification"
    elif score is None:
        status = "no_verifiable_claims"
    else:
        status = "scored"
    counts = Counter(c.verdict.verification_result for c in claims)
    severities = Counter(c.verdict.severity for c in claims if c.verdict.severity)
    return Assessment(
        status=status,
        score=score,
        verifiable=verifiable,
        claims=tuple(claims),
        mismatches=tuple(mismatches),
        human_findings=human,
        counts={name: counts.get(name, 0) for name in rubric.result_names},
        severities={level: severities.get(level, 0) for level in rubric.severity_levels},
    )
