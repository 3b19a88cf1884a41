"""The factual-accuracy score, computed in code from the claims — never taken from the model.

Step 5 of the seed: ``overall = (sum of scores of verifiable claims) / (number of verifiable claims)``,
a verifiable claim being one whose score is not NULL. Here:

* each claim's score is the one its verification result fixes (the parser refused any other);
* every ``evidence_quote`` is looked up in the evidence (:func:`~.evidence.locate_quotes`); a verdict whose
  quote is not there (or a Supported / Contradicted verdict without one) is an ``UNGROUNDED_VERDICT``, and
  what it counts with follows one rule (:func:`counted_score`): **a verdict whose evidence cannot be
  verified never makes the answer look better.** An ungrounded Supported claim is scored as Unverifiable
  (NULL; the rubric's ``downgrade_ungrounded``, on by default — off, it keeps its 1); an ungrounded
  Contradicted or Partially Supported claim keeps its 0 or 0.5 and its severity. A null quote where the
  seed allows one (Partially Supported, Unverifiable) is ``N/A``, not a flag;
* zero verifiable claims is the status ``no_verifiable_claims`` with ``score`` ``None``, never 0 or 1;
* the judge's own ``overall_factual_accuracy_score`` and ``total_verifiable_claims`` are compared with
  Step 5 over the judge's own verdicts (``verdict_score``, ``verdict_verifiable``: its arithmetic, before
  the evidence check, whose effect the flags report) and a difference is recorded in ``mismatches`` — not
  corrected, not ignored;
* at risk level ``high``, a finding whose severity the scale marks for human verification (Critical,
  Major), or any ungrounded finding (score 0 or 0.5), makes the status ``needs_human_verification``.

Why the outcome is never better than the judge's own verdict (``tests/factuality/test_ungrounded.py``
checks each point for generated scorecards): a claim's counted score is its verdict's score or NULL, and
NULL only for a 1 — removing a 1 from a mean of numbers at most 1 lowers the mean or keeps it
(``s/n <= (s+1)/(n+1)`` because ``s <= n``); a finding with a severity is never removed, so its severity
still routes it; the status ``no_verifiable_claims`` reached by removing claims never passes
(:func:`~.judge.decide`).

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

__all__ = [
    "UNGROUNDED_VERDICT",
    "AssessedClaim",
    "Assessment",
    "Status",
    "assess",
    "computed_score",
    "counted_score",
    "is_ungrounded",
]

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
        ungrounded: the verdict's quote is not in the evidence (or a quote it needs is missing).
        score: the score counted (``None``: not verifiable, or an ungrounded Supported downgraded).
    """

    verdict: ClaimVerdict
    evidence_check: EvidenceCheck
    match_status: str
    source_document_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    ungrounded: bool
    score: float | None

    @property
    def downgraded(self) -> bool:
        """Whether the evidence check took the claim out of the score (an ungrounded Supported)."""
        return self.score is None and self.verdict.score is not None


@dataclass(frozen=True)
class Assessment:
    """The scorecard turned into a result.

    Attributes:
        status: ``scored``, ``no_verifiable_claims`` or ``needs_human_verification``.
        score: the computed score, ``None`` when no claim is verifiable.
        verifiable: the number of verifiable claims counted.
        verdict_score: Step 5 over the judge's own verdicts, before the evidence check (``None``: none).
        verdict_verifiable: the number of verifiable claims by the judge's own verdicts.
        claims: every claim, assessed.
        mismatches: where the judge's own numbers differ from the computed ones (one line each).
        human_findings: the claims that sent the row to a human (high risk only): a severity the scale
            marks for it, or an ungrounded finding (score 0 or 0.5).
        counts: verification result → claims (as the judge said, before any downgrade).
        severities: severity level → claims.
    """

    status: Status
    score: float | None
    verifiable: int
    verdict_score: float | None
    verdict_verifiable: int
    claims: tuple[AssessedClaim, ...]
    mismatches: tuple[str, ...]
    human_findings: tuple[AssessedClaim, ...]
    counts: dict[str, int]
    severities: dict[str, int]

    @property
    def ungrounded(self) -> int:
        """How many verdicts were ungrounded."""
        return sum(c.ungrounded for c in self.claims)

    @property
    def downgraded(self) -> int:
        """How many claims the evidence check took out of the score."""
        return sum(c.downgraded for c in self.claims)


def computed_score(scores: Sequence[float | None]) -> tuple[float | None, int]:
    """Step 5: the mean of the non-NULL scores and how many there were (``None, 0`` when there are none)."""
    counted = [s for s in scores if s is not None]
    return (sum(counted) / len(counted) if counted else None), len(counted)


def is_ungrounded(quote: str | None, check: EvidenceCheck, *, quote_required: bool) -> bool:
    """Whether a verdict's evidence failed the check: a quote given and not found, or a required one missing.

    A null quote where the seed allows it (Partially Supported, Unverifiable: ``"string or null"``) is not a
    failure; the seed asks for "the exact quote" only for Supported and Contradicted.
    """
    if isinstance(quote, str) and quote.strip():
        return check != "FOUND"
    return quote_required


def counted_score(verdict_score: float | None, *, ungrounded: bool, downgrade: bool) -> float | None:
    """The score a claim counts with after the evidence check: never more favourable than its verdict's.

    An ungrounded verdict at the top of the scale (Supported, 1) is not confirmed by its evidence and, with
    ``downgrade``, counts as Unverifiable (NULL): dropping a 1 from the mean can only lower it or keep it.
    Any other ungrounded verdict keeps its score: dropping a 0 or a 0.5 could raise the mean.
    """
    if ungrounded and downgrade and verdict_score is not None and verdict_score >= 1:
        return None
    return verdict_score


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
        required = rubric.result(claim.verification_result).quote_required
        ungrounded = is_ungrounded(claim.evidence_quote, where.check, quote_required=required)
        score = counted_score(claim.score, ungrounded=ungrounded, downgrade=downgrade)
        claims.append(AssessedClaim(claim, where.check, where.status, where.source_document_ids,
                                    where.chunk_ids, ungrounded, score))  # fmt: skip
    score, verifiable = computed_score([c.score for c in claims])
    verdict_score, verdict_verifiable = computed_score([c.score for c in card.claims])
    mismatches: list[str] = []
    if card.reported_total != verdict_verifiable:
        mismatches.append(
            f"judge reported total_verifiable_claims {card.reported_total}, its verdicts give {verdict_verifiable}"
        )
    reported = card.reported_score
    if (reported is None) != (verdict_score is None) or (
        reported is not None
        and verdict_score is not None
        and abs(reported - verdict_score) > rubric.score_tolerance
    ):
        shown = "null" if reported is None else f"{reported:g}"
        mine = "none (no verifiable claims)" if verdict_score is None else f"{verdict_score:.4g}"
        mismatches.append(f"judge reported overall_factual_accuracy_score {shown}, its verdicts give {mine}")
    human = tuple(
        c
        for c in claims
        if risk_level == "high"
        and (rubric.needs_human(c.verdict.severity) or (c.ungrounded and c.verdict.severity is not None))
    )
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
        verdict_score=verdict_score,
        verdict_verifiable=verdict_verifiable,
        claims=tuple(claims),
        mismatches=tuple(mismatches),
        human_findings=human,
        counts={name: counts.get(name, 0) for name in rubric.result_names},
        severities={level: severities.get(level, 0) for level in rubric.severity_levels},
    )
