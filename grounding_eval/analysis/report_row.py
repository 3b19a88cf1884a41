"""What the report keeps of one promptfoo result row (:class:`ReportRow`) and the small values it holds.

Kept apart from :mod:`grounding_eval.analysis.summary`, which reads the rows, so the modules that take rows
(:mod:`~grounding_eval.analysis.unsafe`, :mod:`~grounding_eval.analysis.grounding_records`, the effects and
reliability sections) import the type without importing the reader that imports them (issue 40).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS, SafetySplit, safety_split

__all__ = [
    "NOT_READ",
    "AgreementCell",
    "Claim",
    "Finding",
    "JudgeCalls",
    "ReportRow",
    "SafetyVerdict",
    "SecondOpinion",
]

AgreementCell = Literal[
    "both_no",
    "judge_only_no",
    "verifier_only_no",
    "both_yes",
    "judge_partial_verifier_no",
    "judge_partial_verifier_yes",
    "not_comparable",
]


@dataclass(frozen=True, slots=True)
class SafetyVerdict:
    """A row's safety as the report reads it.

    Attributes:
        no: the checks found No (:attr:`~grounding_eval.scoring.composite.KnownSafety.no`), in check order;
            empty when a person rated the row.
        decided_by: per check in ``no``, the side(s) whose No counted (``verifier``, ``judge``).
        findings: per check in ``no``, what those sides found (the verifier's hard-failure details,
            the judge's reason on the criterion): untrusted text, escaped where it is shown.
        undecided: why the row's safety is not decided (empty when it is: unsafe, safe, or rated).
    """

    no: tuple[str, ...] = ()
    decided_by: Mapping[str, tuple[str, ...]] | None = None
    findings: Mapping[str, tuple[str, ...]] | None = None
    undecided: str = ""


NOT_READ = SafetyVerdict(undecided="not read from the row's records")


@dataclass(frozen=True, slots=True)
class SecondOpinion:
    """The rubric judge asked again on a row by ``grounding-eval rescore`` (issue 41): ``kind`` ``retest``
    (the same judge, its reply cache bypassed, or a recording of a second asking) or ``panel`` (another
    judge). ``verdicts``: Yes / Partial / No per criterion; empty when it did not score (``scored``
    False: counted apart, never as a disagreement)."""

    kind: Literal["retest", "panel"]
    provider: str
    scored: bool
    verdicts: Mapping[str, str]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the verifier reported that is not plainly fine: its check, status and a short detail."""

    check: str
    status: str
    detail: str


@dataclass(frozen=True, slots=True)
class JudgeCalls:
    """One judge's calls on one row (``metadata.judge_usage``, :class:`grounding_eval.judge.pipeline.Meter`):
    model calls made, replies from the pack's cache, recorded replies, failed calls (no reply), invalid
    replies (a reply that did not parse; also counted by its source), new tokens, cost, and the endpoint
    host a live judge was asked at (``None``: a recording, or a file written before hosts were kept)."""

    provider: str
    model: int = 0
    cache: int = 0
    recorded: int = 0
    failed: int = 0
    tokens: int = 0
    cost: float | None = None
    invalid: int = 0
    host: str | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim the factual-accuracy judge verified (``metadata.factuality.claims[i]``)."""

    claim_id: str
    claim_text: str
    verdict: str


@dataclass(frozen=True, slots=True)
class ReportRow:
    """What the report needs from one promptfoo result row (``__slots__``: a report holds 100,000 of them).

    Attributes:
        keys: the row's value of each of :data:`~grounding_eval.analysis.summary.GROUP_KEYS`.
        passed: promptfoo's verdict for the row.
        unscored: an error, an unscorable judge reply, or a composite that could not score the row (a
            result's ``metadata.outcome`` is ``unscored``; see ``summary._unscored`` for files written before
            that field): counted, never averaged, never a failure.
        composite: the ``composite`` named score, if any.
        judge: the ``<rubric>.llm_judge_score`` named score, if any.
        verifier: ``deterministic_verifier_score``, if any.
        safety_no: the Round 3 safety checks the verifier found No (a hard failure mapped to them).
        query_id: the item's id.
        urls: URLs the verifier found.
        urls_unchecked: of those, the ones whose status is ``UNCHECKED``.
        verifier_ran: the verifier's result (``metadata.verifier``) is in the row.
        judge_safety: the judge's own verdict (Yes / Partial / No) per safety check it answered.
        judge_missing: why the judge gave no verdicts (None when it scored the row).
        safety_scope: the row was judged with a rubric that asks the safety checks.
        scores: every numeric named score of the row.
        verdicts: the rubric judge's verdict (Yes / Partial / No) per criterion it answered.
        rubric: the judge rubric's ``id@version`` (None when no judge metadata).
        negative: the criteria the judge's metadata lists as negative (a Yes is bad; empty in older files).
        prompt_version: the judge prompt's version (None when no judge metadata).
        docs_qa: the docs-QA verdict (pass / fail / n/a) per criterion (``metadata.docs_qa.criteria``).
        claims: the factual-accuracy judge's per-claim verdicts (``metadata.factuality.claims``).
        factuality_status: ``metadata.factuality.status`` (None when the judge did not run).
        findings: the verifier's findings other than plain successes.
        result_id: promptfoo's id of the result row (its viewer and rating API use it).
        question: the item's question (``vars.question``).
        answer: the model's answer (``response.output``).
        sources: the vars shown to the model as sources (name, text): those whose text is in the prompt.
        human: a reviewer's rating in promptfoo's viewer (the ``human`` component), if any.
        judge_pass: the pass of the row's first judge component (rubric, docs-QA or factual-accuracy).
        test_metadata: the test's whole ``metadata`` (a Round 3 item's SME fields render its criteria).
        safety_source: the side that decided the Round 3 safety checks, as the composite recorded it
            (``gradingResult.metadata.safety.source``); None when the row does not record it.
        safety_reasons: per Round 3 safety check, what each side said, for a reader of a disagreement:
            the judge's reason on that criterion and the verifier's findings mapped to it (display only:
            no verdict is read from it).
        judge_calls: each judge's calls on the row (``metadata.judge_usage``).
        undecided: what the verifier left undecided, by kind (``URL``, ``statute``, ``case`` …;
            ``metadata.verifier.undecided.kinds``); None when the verifier did not run.
        undecided_skipped: why the verifier's undecided record was skipped (a value the report cannot
            read, named with its component's index): the row is left out of the undecided counts.
        undecided_derived: the row's verifier predates ``undecided``: :attr:`undecided` is derived from
            its ``UNCHECKED`` URLs and citations (the kinds it could not record: quotes, checks that raised).
        citations: the verifier's legal citations by status (``metadata.verifier.citations[*].status``);
            None when the verifier did not run or predates the citation check.
        unsafe_no_composite: a scored failure as unsafe with no composite (a judge outage, a composite
            that crashed under a safety No): counted in its own column, never in the mean composite.
        safety_unknown: the Round 3 safety checks the verifier could not decide (a check feeding them
            raised: :func:`~grounding_eval.scoring.composite.verifier_unknown`), unless it found a No.
        safety: whether the row is unsafe (by ``row_safety``, the rule that fails it), which side decided
            each check No and what it found, or why its safety is undecided
            (:func:`~grounding_eval.analysis.unsafe.safety_verdict`).
    """

    keys: Mapping[str, str]
    passed: bool
    unscored: bool
    composite: float | None
    judge: float | None
    verifier: float | None
    safety_no: tuple[str, ...]
    query_id: str = "-"
    urls: int = 0
    urls_unchecked: int = 0
    verifier_ran: bool = False
    judge_safety: Mapping[str, str] = field(default_factory=dict)
    judge_missing: str | None = None
    safety_scope: bool = False
    scores: Mapping[str, float] = field(default_factory=dict)
    verdicts: Mapping[str, str] = field(default_factory=dict)
    rubric: str | None = None
    negative: frozenset[str] = frozenset()
    prompt_version: str | None = None
    docs_qa: Mapping[str, str] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    factuality_status: str | None = None
    findings: tuple[Finding, ...] = ()
    result_id: str = ""
    question: str = ""
    answer: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    human: Mapping[str, Any] | None = None
    judge_pass: bool | None = None
    test_metadata: Mapping[str, Any] = field(default_factory=dict)
    safety_source: str | None = None
    safety_reasons: Mapping[str, str] = field(default_factory=dict)
    judge_calls: tuple[JudgeCalls, ...] = ()
    undecided: Mapping[str, int] | None = None
    undecided_derived: bool = False
    undecided_skipped: str | None = None
    citations: Mapping[str, int] | None = None
    safety_unknown: tuple[str, ...] = ()
    unsafe_no_composite: bool = False
    opinions: tuple[SecondOpinion, ...] = ()
    length: tuple[int, int] | None = None
    safety: SafetyVerdict = NOT_READ

    @property
    def url_score(self) -> float | None:
        """``url_allowlist_score``, if any URL was scored."""
        return self.scores.get("url_allowlist_score")

    @property
    def dataset(self) -> str:
        """The test's ``metadata.dataset`` (the dataset folder the generator read), or ``"-"``."""
        value = self.test_metadata.get("dataset")
        return "-" if value is None or value == "" else str(value)  # text or a number: checked on load

    def item(self) -> dict[str, str]:
        """The row's id in the agreement listings: query id, condition and provider label."""
        return {
            "query_id": self.query_id,
            "condition": self.keys["condition"],
            "provider": self.keys["provider"],
        }

    def agreement(self, check: str) -> tuple[AgreementCell, str | None]:
        """The cell this row falls in for ``check``, and why it is not comparable (else None)."""
        judge = self.judge_safety.get(check)
        why = []
        if judge is None:
            why.append(self.judge_missing or f"the judge gave no verdict for {check}")
        if not self.verifier_ran:
            why.append("the verifier did not run (or returned an error)")
        elif check in self.safety_unknown:
            why.append("the verifier's check raised")
        if why:
            if self.verifier_ran and check in self.safety_no:
                why.append("the verifier found No")  # the row's safety failure, whatever the judge did
            return "not_comparable", "; ".join(why)
        verifier_no = check in self.safety_no
        if judge == "Partial":
            return ("judge_partial_verifier_no" if verifier_no else "judge_partial_verifier_yes"), None
        if judge == "No":
            return ("both_no" if verifier_no else "judge_only_no"), None
        return ("verifier_only_no" if verifier_no else "both_yes"), None

    def safety_split(self) -> SafetySplit | None:
        """Both sides' answers on the three checks (the composite's own definition), or None when a side is
        missing: the verifier did not run, or the judge left a check unanswered."""
        if (
            not self.verifier_ran
            or self.safety_unknown
            or any(c not in self.judge_safety for c in ROUND3_SAFETY_CHECKS)
        ):
            return None
        return safety_split(self.safety_no, self.judge_safety)
