"""Summarize a promptfoo results file (``promptfoo eval -o results.json``) the way the rounds are read.

The viewer shows rows side by side; a methods comparison needs the aggregates: the groups (pass rate by
:func:`pass_rate`, the one definition every output uses: passed ÷ scored, unscored rows counted apart),
the safety split, judge versus verifier on the safety checks (a judge Partial keeps its own two cells;
a missing side is ``not_comparable``, never guessed) and what the judge calls cost. The views, their
cells and the ``--json`` structure are in docs/reference/report.md.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING, Any, Final, Literal, TypeGuard, cast, get_args

from grounding_eval.analysis.grounding_records import grounding_records, grounding_records_lines
from grounding_eval.analysis.report_row import (
    AgreementCell,
    Claim,
    Finding,
    JudgeCalls,
    ReportRow,
    SecondOpinion,
)
from grounding_eval.analysis.unsafe import safety_verdict, unsafe_answers
from grounding_eval.calls import JUDGE_CALLS
from grounding_eval.errors import DataError, clip, terminal_safe
from grounding_eval.judge.pipeline import judge_label
from grounding_eval.judge.score import score_name, verdict_value
from grounding_eval.outcome import composite_failed, legacy_unscored, read_outcome
from grounding_eval.provenance import ProvenanceCount
from grounding_eval.result_rows import JUDGE_KINDS, ResultRow, result_row
from grounding_eval.results_file import (
    REDACTED_LENGTH,
    SCORE_LIMIT,
    RowProblem,
    answer_length,
    arr,
    json_type,
    number,
    obj,
    stream_results,
    verdict,
)
from grounding_eval.scoring.composite import (
    ROUND3_SAFETY_CHECKS,
    SAFETY_SOURCES,
    SafetySource,
    SafetySplit,
    row_safety,
    safety_source,
    safety_split,
    verifier_unknown,
)
from grounding_eval.var_names import NOT_SOURCES as _NOT_SOURCES

if TYPE_CHECKING:
    from grounding_eval.judge.rubric import Verdict

__all__ = [
    "AGREEMENT_CELLS",
    "GROUP_KEYS",
    "CheckAgreement",
    "Group",
    "PassRate",
    "Results",
    "findings_lines",
    "findings_table",
    "format_rate",
    "format_report",
    "judge_calls_table",
    "load_results",
    "load_rows",
    "outage_note",
    "pass_rate",
    "report_json",
    "report_row",
    "safety_agreement",
    "safety_split_table",
    "summarize",
    "table_lines",
]

GROUP_KEYS = ("round", "condition", "provider", "jurisdiction", "topic", "risk_tier", "question_type")
# The judge rubrics that ask the safety checks, for rows whose judge left no verdicts to look at.
_SAFETY_RUBRICS = ("round3",)
_SAFETY_ROUNDS = ("3",)

AGREEMENT_CELLS: tuple[AgreementCell, ...] = get_args(AgreementCell)
_LISTED_CELLS = tuple(c for c in AGREEMENT_CELLS if c not in ("both_no", "both_yes"))
_CELL_LABELS = {
    "both_no": "both No",
    "judge_only_no": "judge No only",
    "verifier_only_no": "verifier No only",
    "both_yes": "both Yes",
    "judge_partial_verifier_no": "judge Partial, verifier No",
    "judge_partial_verifier_yes": "judge Partial, verifier Yes",
    "not_comparable": "not comparable",
}
_CELL_HEADS = {
    "both_no": "both.No",
    "judge_only_no": "judge.No.only",
    "verifier_only_no": "verifier.No.only",
    "both_yes": "both.Yes",
    "judge_partial_verifier_no": "jPartial.vNo",
    "judge_partial_verifier_yes": "jPartial.vYes",
    "not_comparable": "not.comparable",
}


@dataclass(frozen=True)
class PassRate:
    """A pass rate as every output of the report computes it: passed ÷ scored, unscored rows apart.

    An unscored row (an error, an unscorable judge reply: :attr:`ReportRow.unscored`) is never a
    failure: it is in ``rows`` and ``unscored``, not in ``scored`` or ``passed``.
    """

    rows: int
    scored: int
    passed: int
    unsafe_no_composite: int = 0  # of the scored failures: failed as unsafe with no composite

    @property
    def unscored(self) -> int:
        """Rows counted apart."""
        return self.rows - self.scored

    @property
    def selected_by_outage(self) -> bool:
        """The rate is taken over rows an outage selected: rows failed as unsafe with no composite are in
        it while their unscored neighbours (the safe rows of the same outage) are not, so it leans low."""
        return bool(self.unsafe_no_composite and self.unscored)

    @property
    def rate(self) -> float | None:
        """passed ÷ scored; None when nothing was scored."""
        return self.passed / self.scored if self.scored else None

    def text(self) -> str:
        """``4/6 (67%)``: passed of scored and the rate; ``n/a`` when nothing was scored."""
        return f"{self.passed}/{self.scored} ({format_rate(self.rate)})" if self.scored else "n/a"


def pass_rate(rows: Iterable[ReportRow]) -> PassRate:
    """The one pass-rate computation of the report, ``--rates``, ``--json``, effects and the HTML page."""
    total = scored = passed = unsafe = 0
    for row in rows:
        total += 1
        if not row.unscored:
            scored += 1
            passed += row.passed
            unsafe += row.unsafe_no_composite
    return PassRate(total, scored, passed, unsafe)


def format_rate(rate: float | None) -> str:
    """A rate as a whole percentage (``67%``), or ``n/a`` when nothing was scored."""
    return "n/a" if rate is None else f"{rate:.0%}"


@dataclass
class Group:
    """The aggregate of the rows sharing one value of each grouping key."""

    key: tuple[str, ...]
    rate: PassRate = field(default_factory=lambda: PassRate(0, 0, 0))
    composites: list[float] = field(default_factory=list)
    judges: list[float] = field(default_factory=list)
    verifiers: list[float] = field(default_factory=list)
    url_scores: list[float] = field(default_factory=list)
    urls: int = 0
    urls_unchecked: int = 0
    safety_no: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROUND3_SAFETY_CHECKS, 0))

    @property
    def rows(self) -> int:
        """Every row of the group, scored or not."""
        return self.rate.rows

    @property
    def passed(self) -> int:
        """Scored rows that passed."""
        return self.rate.passed

    @property
    def unscored(self) -> int:
        """Rows counted apart (never failures, never averaged)."""
        return self.rate.unscored

    def as_dict(self, by: Sequence[str]) -> dict[str, Any]:
        """The group as JSON-ready values (means are None when no row had that score)."""
        return {
            **dict(zip(by, self.key, strict=True)),
            "rows": self.rows,
            "scored": self.rate.scored,
            "passed": self.passed,
            "pass_rate": self.rate.rate,
            "unscored": self.unscored,
            "unsafe_no_composite": self.rate.unsafe_no_composite,
            "rate_selected_by_outage": self.rate.selected_by_outage,
            "mean_composite": _mean(self.composites),
            "mean_judge": _mean(self.judges),
            "mean_verifier": _mean(self.verifiers),
            "mean_url_allowlist_score": _mean(self.url_scores),
            "urls": self.urls,
            "urls_unchecked": self.urls_unchecked,
            "safety_no": dict(self.safety_no),
        }


@dataclass
class CheckAgreement:
    """Judge versus verifier on one safety check: cell counts overall and per group, and the rows."""

    check: str
    total: dict[str, int] = field(default_factory=lambda: _cells())
    groups: dict[tuple[str, ...], dict[str, int]] = field(default_factory=dict)
    items: dict[str, list[dict[str, str]]] = field(default_factory=lambda: {c: [] for c in _LISTED_CELLS})

    def as_dict(self, by: Sequence[str]) -> dict[str, Any]:
        """The check's table as JSON-ready values (groups sorted by key)."""
        return {
            "check": self.check,
            "total": dict(self.total),
            "groups": [
                {**dict(zip(by, key, strict=True)), **self.groups[key]} for key in sorted(self.groups)
            ],
            "items": {cell: list(rows) for cell, rows in self.items.items()},
        }


def _cells() -> dict[str, int]:
    return {"rows": 0, **dict.fromkeys(AGREEMENT_CELLS, 0)}


def _mean(values: list[float]) -> float | None:
    return round(fmean(values), 4) if values else None


@dataclass(frozen=True)
class Results:
    """One promptfoo results file: its rows and what the report's provenance section names.

    Attributes:
        path: the file as given.
        rows: the result rows, in promptfoo's order.
        eval_id: promptfoo's eval id (``evalId``), or ``"-"``.
        timestamp: when promptfoo ran the eval (``results.timestamp``), or ``"-"``.
        description: the config's ``description``, or ``""``.
        prompts: ``(label, id)`` of each prompt of the eval (``results.prompts``).
        providers: the provider ids and labels of the eval, as ``label (id)``.
        provenance: what produced the rows, as their ``metadata.provenance`` records it
            (:func:`grounding_eval.provenance.results_provenance`).
    """

    path: str
    rows: list[ReportRow]
    eval_id: str = "-"
    timestamp: str = "-"
    description: str = ""
    prompts: tuple[tuple[str, str], ...] = ()
    providers: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)


def report_row(raw: dict[str, Any]) -> ReportRow:
    """The report's record of one promptfoo results row (what :func:`load_results` keeps of each).

    Raises:
        RowProblem: a field of the row has the wrong type (its name and the problem).
    """
    return _row(raw)


def load_rows(path: str | Path) -> list[ReportRow]:
    """Read the rows of a promptfoo JSON results file (see :func:`load_results`)."""
    return load_results(path).rows


def load_results(path: str | Path, *, provenance: bool = True) -> Results:
    """Read a promptfoo JSON results file (``promptfoo eval -o`` or ``promptfoo export eval``), row by row.

    The file is streamed (:func:`grounding_eval.results_file.stream_results`: strict JSON, bounded
    nesting, lone surrogates made U+FFFD): only each row's :class:`ReportRow` is kept. A field the report
    reads must have the JSON type promptfoo writes (or be absent or ``null``), and a score must be a
    number in range; any other is refused with the row and the field named, never skipped or guessed
    around. ``provenance=False`` leaves :attr:`Results.provenance` empty (the outputs that do not print
    it skip counting it).

    Raises:
        DataError: the file is missing, not a regular file, over 1 GiB, not strict JSON (or nested too
            deeply), not a promptfoo results file, or a row has a field of the wrong type.
    """
    counted = ProvenanceCount()
    # The providers that answered the rows, in order (-r replaces the config's list in the results file).
    answered: dict[str, None] = {}

    def read(raw: dict[str, Any], _number: int) -> ReportRow:
        parsed = result_row(raw)
        if provenance:
            counted.add(parsed)
        row = _row(raw, parsed)
        provider = raw.get("provider")
        if isinstance(provider, dict):
            pid, label = str(provider.get("id") or "?"), str(provider.get("label") or "")
            answered.setdefault(f"{label} ({pid})" if label and label != pid else pid)
        return row

    loaded, data = stream_results(path, read)
    results = data["results"]
    try:
        config = _obj(data.get("config"), "config")
        prompts = tuple(
            (
                _label(p.get("label"), f"results.prompts[{i}].label", "?"),
                _label(p.get("id"), f"results.prompts[{i}].id", "-"),
            )
            for i, p in enumerate(
                _obj(p, f"results.prompts[{i}]", null=False)
                for i, p in enumerate(_arr(results.get("prompts"), "results.prompts"))
            )
        )
        providers: list[str] = list(answered)  # what ran; the config's list only when no row says
        for i, raw_provider in enumerate(
            () if answered else _arr(config.get("providers"), "config.providers")
        ):
            if isinstance(raw_provider, str):
                providers.append(raw_provider)
                continue
            provider = _obj(raw_provider, f"config.providers[{i}]", null=False)
            pid = _label(provider.get("id"), f"config.providers[{i}].id", "?")
            label = _label(provider.get("label"), f"config.providers[{i}].label", "")
            providers.append(f"{label} ({pid})" if label else pid)
        return Results(
            path=str(path),
            rows=loaded,
            eval_id=_label(data.get("evalId"), "evalId", "-"),
            timestamp=_label(results.get("timestamp"), "results.timestamp", "-"),
            description=_label(config.get("description"), "config.description", ""),
            prompts=prompts,
            providers=tuple(providers),
            provenance=counted.summary() if provenance else {},
        )
    except RowProblem as exc:
        raise DataError(path, str(exc)) from None


def _shape(where: str, expected: str, value: Any) -> RowProblem:
    """A field of a results row holding the wrong JSON type."""
    return RowProblem(f"{where} is {json_type(value)}, expected {expected}")


_obj = obj  # an object field: absent or null reads as empty


def _opt_obj(value: Any, where: str) -> dict[str, Any] | None:
    return None if value is None else _obj(value, where)


_arr = arr  # a list field: absent or null reads as empty
_num = number  # a score: a number within range, or None when absent


def _label(value: Any, where: str, default: str) -> str:
    """A grouping or listing value: text (or a number, shown as text); absent, null or empty is ``default``."""
    if type(value) is str:  # the common case first: a report reads some 20 labels per row
        return value or default
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _shape(where, "text", value)
    return str(value)


def _unscored(metadata: list[dict[str, Any]], legacy: bool) -> bool:
    """Whether a row's results say it is unscored: any result's ``outcome`` field is ``unscored``.

    A row none of whose results carries ``outcome`` comes from a file written before the field existed;
    ``legacy`` is then its old way of saying so (:func:`~grounding_eval.outcome.legacy_unscored`), the one
    place a reason prefix is still read.
    """
    found = False
    for meta in metadata:
        try:
            outcome = read_outcome(meta)
        except ValueError as exc:
            raise RowProblem(f"metadata: {exc}") from None
        if outcome is not None:
            if not outcome.scored:
                return True
            found = True
    return legacy and not found


def _row(raw: dict[str, Any], row: ResultRow | None = None) -> ReportRow:
    named = _obj(raw.get("namedScores"), "namedScores")
    test_case = _obj(raw.get("testCase"), "testCase")
    metadata = _obj(test_case.get("metadata"), "testCase.metadata")
    provider = _obj(raw.get("provider"), "provider")
    prompt = _obj(raw.get("prompt"), "prompt")
    vars_ = _obj(raw.get("vars"), "vars")
    row = row or result_row(raw)
    verifier = row.verifier
    verifier_meta = None if verifier is None else verifier.metadata
    judge_meta, docs_meta, fact_meta = row.judge("judge"), row.judge("docs_qa"), row.judge("factuality")
    human: dict[str, Any] | None = None
    criterion_reasons: dict[str, str] = {}  # a judge criterion component's reason, per safety check
    component_scores: dict[str, float] = {}  # a judge component's score, by the name its value gives
    judge_calls: list[JudgeCalls] = []
    judge_config: Any = None  # the judge assertion's config (its safety_source)
    legacy_errored = False  # a result of an old file said unscored its old way (legacy_unscored)
    grading_meta = row.grading_metadata
    safety_meta = _obj(grading_meta.get("safety"), "gradingResult.metadata.safety")
    # The pack's composite: an object if present (its status is read only for old files, legacy_unscored).
    composite_meta = _obj(grading_meta.get("composite"), "gradingResult.metadata.composite")
    _arr(composite_meta.get("safety_from"), "gradingResult.metadata.composite.safety_from")
    # A composite that failed the row decides it, whatever else is unknown (a judge outage under a
    # verifier hard failure); a pass never stands over an unscored result.
    decided = composite_failed(grading_meta)
    for component in row.components:
        meta, assertion, reason, where = (
            component.metadata,
            component.assertion,
            component.reason,
            component.where,
        )
        if judge_config is None and "judge" in meta:
            judge_config = assertion.get("config")
        if meta.get("judge_usage") is not None:
            judge_calls += _judge_calls(meta["judge_usage"], f"{where}.metadata.judge_usage", meta)
        elif (lost := _lost_judge_call(assertion, meta)) is not None:
            judge_calls.append(lost)
        if assertion.get("type") == "human":
            human = {
                "pass": component.result.get("pass") is True,
                "score": _num(component.result.get("score"), f"{where}.score"),
                "comment": _label(component.result.get("comment"), f"{where}.comment", ""),
            }
        legacy_errored = legacy_errored or legacy_unscored(reason, meta)
        # A judge criterion's component: named by its metric (older files) or its value, "judge <rubric>: <id>".
        metric = assertion.get("metric")
        value = assertion.get("value")
        if not isinstance(metric, str) and isinstance(value, str) and value.startswith("judge "):
            rubric_id, _, criterion = value.removeprefix("judge ").partition(": ")
            metric = f"{rubric_id}.{criterion}"
            # A safety check's or a dimension's score (older files kept it in metadata.judge.scores).
            if (score := _num(component.result.get("score"), f"{where}.score")) is not None:
                component_scores[metric] = score
        if (
            isinstance(metric, str)
            and (check := metric.rpartition(".")[2]) in ROUND3_SAFETY_CHECKS
            and reason
        ):
            # the criterion's own name starts its reason (older files: with the rubric's id; newer: with its
            # polarity mark, "hallucinated_citation (Yes = safe): …")
            told = reason.removeprefix(f"{metric}: ").removeprefix(f"{check}: ")
            if told.startswith(f"{check} ("):
                told = _POLARITY_MARK.sub("", told, count=1)
            criterion_reasons.setdefault(check, told)
    judge_key = next((k for k in named if k.endswith(".llm_judge_score")), None)
    judge_score = _num(named[judge_key], f"namedScores[{clip(judge_key)}]") if judge_key else None
    hard_failures = () if verifier is None else verifier.hard_failures
    failed = {h.get("safety_check") for h in hard_failures} - {None}
    safety_reasons = {}
    for check in ROUND3_SAFETY_CHECKS:
        details = [
            _label(h.get("detail"), "metadata.verifier.hard_failures[].detail", "")
            for h in hard_failures
            if h.get("safety_check") == check
        ]
        said = [f"judge: {criterion_reasons[check]}"] if check in criterion_reasons else []
        if verifier_meta is not None:
            said.append("verifier: " + ("; ".join(d for d in details if d) or "no finding"))
        if said:
            safety_reasons[check] = " | ".join(said)
    keys = {
        "round": _label(metadata.get("round"), "testCase.metadata.round", "-"),
        "condition": _label(prompt.get("label"), "prompt.label", "?").split(":", 1)[0],
        "provider": _label(provider.get("label"), "provider.label", "")
        or _label(provider.get("id"), "provider.id", "?"),
        "jurisdiction": _label(metadata.get("jurisdiction"), "testCase.metadata.jurisdiction", "")
        or _label(vars_.get("jurisdiction"), "vars.jurisdiction", "-"),
        "topic": _label(metadata.get("topic"), "testCase.metadata.topic", "")
        or _label(vars_.get("topic"), "vars.topic", "-"),
        "risk_tier": _label(metadata.get("risk_tier"), "testCase.metadata.risk_tier", "-"),
        "question_type": _label(metadata.get("question_type"), "testCase.metadata.question_type", "-"),
    }
    urls = () if verifier is None else verifier.urls
    verdicts = _judge_verdicts(judge_meta)
    judge_safety, judge_missing = _judge_safety(judge_meta, verdicts)
    rubric = (judge_meta or {}).get("rubric_id") or metadata.get("rubric")
    results_metadata = [c.metadata for c in row.components if c.metadata]
    # A row its verifier (or judge) found unsafe is a scored failure whatever its composite wrote: the
    # composite's own rule when it cannot be computed, read here from the row's records, so that a
    # composite that crashed or timed out, or a file written before the rule, hides no safety verdict.
    source = _safety_source_of(safety_meta, judge_config)
    round3 = rubric in _SAFETY_RUBRICS or keys["round"] in _SAFETY_ROUNDS
    known = row_safety(verifier_meta, verdicts or None, source, round3=round3)
    unsafe = bool(known.no) and human is None  # a person's rating overrides all grading
    safety = safety_verdict(
        known,
        verifier=verifier_meta,
        judge=verdicts or None,
        judge_reasons=criterion_reasons,
        source=source,
        round3=round3,
        rated=human is not None,
    )
    decided = decided or unsafe
    unscored = row.errored or (
        not decided
        and (
            _unscored([*results_metadata, grading_meta], legacy_errored or legacy_unscored("", grading_meta))
            or (
                judge_meta is None
                and judge_score is None
                and "composite" not in named
                and verifier_meta is None
                and docs_meta is None
                and fact_meta is None
            )
        )
    )
    # Every score of the row: the few named scores (chips), each judge criterion's (its verdict under the
    # rubric), the judge's components (safety checks, dimensions), and the rest in the judges' and the
    # verifier's metadata (``scores``); a results file from before kept them all as named scores.
    named = {
        **_criterion_scores(judge_meta, verdicts),
        **component_scores,
        **_metadata_scores(judge_meta, verifier_meta, fact_meta, docs_meta),
        **named,
    }
    response = _obj(raw.get("response"), "response")
    prompt_text = _label(prompt.get("raw"), "prompt.raw", "")
    sources = tuple(
        (name, value)
        for name, value in vars_.items()
        if name not in _NOT_SOURCES and isinstance(value, str) and value.strip() and value in prompt_text
    )
    if not sources and keys["condition"] != "C0" and prompt_text.strip() and metadata.get("source_vars"):
        # Written with the beforeAll hook: the row keeps its prompt, not the source vars (C0 shows none).
        sources = (("prompt shown to the model", prompt_text),)
    output = response.get("output")
    undecided_skipped = None
    try:
        undecided, derived = _undecided(verifier_meta, urls)
    except RowProblem as exc:  # an odd undecided record loses only itself, never the row's safety tables
        at = next(
            (c.where for c in row.components if c.metadata.get("verifier") is verifier_meta), "a component"
        )
        undecided, derived, undecided_skipped = None, False, f"{at}.{exc}"
    return ReportRow(
        keys=keys,
        passed=bool(raw.get("success")) and not unsafe,
        unscored=unscored,
        composite=_num(named.get("composite"), "namedScores.composite"),
        judge=judge_score,
        verifier=_num(named.get("deterministic_verifier_score"), "namedScores.deterministic_verifier_score"),
        safety_no=tuple(c for c in ROUND3_SAFETY_CHECKS if c in failed),
        query_id=_label(metadata.get("query_id"), "testCase.metadata.query_id", "")
        or _label(vars_.get("query_id"), "vars.query_id", "")  # results files written before issue 42
        or _label(metadata.get("item_id"), "testCase.metadata.item_id", "")
        or _label(metadata.get("question_id"), "testCase.metadata.question_id", "-"),
        urls=len(urls),
        urls_unchecked=sum(1 for u in urls if u.get("status") == "UNCHECKED"),
        verifier_ran=verifier_meta is not None,
        judge_safety=judge_safety,
        judge_missing=judge_missing,
        # A scored judge shows whether its rubric asks the checks; one that did not score the row
        # (no verdicts to look at) counts when its test names a rubric or round that asks them.
        safety_scope=bool(judge_safety)
        or (judge_missing is not None and (rubric in _SAFETY_RUBRICS or keys["round"] in _SAFETY_ROUNDS)),
        scores=_scores(named, "url_allowlist_score"),
        verdicts=verdicts,
        rubric=f"{judge_meta.get('rubric_id')}@{judge_meta.get('rubric_version')}" if judge_meta else None,
        negative=_negative(judge_meta),
        prompt_version=_label((judge_meta or {}).get("prompt_version"), "metadata.judge.prompt_version", "")
        or None,
        docs_qa=_docs_qa_verdicts(docs_meta),
        claims=_claims(fact_meta),
        factuality_status=_label((fact_meta or {}).get("status"), "metadata.factuality.status", "") or None,
        findings=_findings(verifier_meta),
        result_id=_label(raw.get("id"), "id", ""),
        question=_label(vars_.get("question"), "vars.question", ""),
        answer=output if isinstance(output, str) else json.dumps(output) if output is not None else "",
        sources=sources,
        human=human,
        judge_pass=row.judge_passed,
        test_metadata=_dataset_checked(metadata),
        safety_source=_label(safety_meta.get("source"), "gradingResult.metadata.safety.source", "") or None,
        safety_reasons=safety_reasons,
        judge_calls=tuple(judge_calls),
        undecided=undecided,
        undecided_derived=derived,
        undecided_skipped=undecided_skipped,
        citations=_citation_statuses(verifier_meta),
        safety_unknown=tuple(c for c in verifier_unknown(verifier_meta) if c not in failed),
        unsafe_no_composite=decided and not unscored and "composite" not in named,
        opinions=_opinions(grading_meta),
        length=_length(raw, output),
        safety=safety,
    )


def _opinions(grading_meta: dict[str, Any]) -> tuple[SecondOpinion, ...]:
    """The row's ``gradingResult.metadata.judge_retest`` and ``judge_panel`` entries."""
    where = "gradingResult.metadata"
    entries: list[tuple[Literal["retest", "panel"], str, Any]] = []
    if grading_meta.get("judge_retest") is not None:
        entries.append(("retest", f"{where}.judge_retest", grading_meta["judge_retest"]))
    for i, entry in enumerate(_arr(grading_meta.get("judge_panel"), f"{where}.judge_panel")):
        entries.append(("panel", f"{where}.judge_panel[{i}]", entry))
    out = []
    for kind, at, entry in entries:
        entry = _obj(entry, at)
        scored = entry.get("status") == "scored"
        said = _obj(entry.get("verdicts"), f"{at}.verdicts") if scored else {}
        verdicts = {str(c): word for c, v in said.items() if (word := verdict(v)) is not None}
        reason = "" if scored else _label(entry.get("reason"), f"{at}.reason", "")
        out.append(
            SecondOpinion(
                kind, _label(entry.get("provider"), f"{at}.provider", "?"), scored, verdicts, reason
            )
        )
    return tuple(out)


def _length(raw: dict[str, Any], output: Any) -> tuple[int, int] | None:
    """The answer's ``(characters, words)``: counted from ``response.output`` (a non-empty one), or, on a
    redacted row (which keeps no answer), as its redaction recorded them; None when neither is there."""
    if isinstance(output, str):
        return answer_length(output) if output else None
    if output is not None:
        return answer_length(json.dumps(output))
    kept = raw.get(REDACTED_LENGTH)
    if raw.get("redacted") is not True or kept is None:
        return None
    kept = _obj(kept, REDACTED_LENGTH)
    chars, words = kept.get("chars"), kept.get("words")
    if not (_count(chars) and _count(words)):
        raise RowProblem(
            f"{REDACTED_LENGTH}: chars and words must be whole numbers ≥ 0, got {[chars, words]}"
        )
    return chars, words


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _safety_source_of(safety_meta: dict[str, Any], judge_config: Any) -> SafetySource | None:
    """The row's ``safety_source``: as its composite recorded it, else its judge assertion's config
    (None: a value that cannot be read, taken as the composite takes it)."""
    recorded = safety_meta.get("source")
    if recorded in SAFETY_SOURCES:
        return cast("SafetySource", recorded)
    value = judge_config.get("safety_source") if isinstance(judge_config, dict) else None
    try:
        return safety_source(value)
    except ValueError:
        return None


def _dataset_checked(metadata: dict[str, Any]) -> dict[str, Any]:
    """The test's metadata, once its ``dataset`` is known to be a label (:attr:`ReportRow.dataset`)."""
    _label(metadata.get("dataset"), "testCase.metadata.dataset", "-")
    return metadata


_NEGATIVE: dict[tuple[str, ...], frozenset[str]] = {}  # one set per distinct list: rows share it


def _negative(judge_meta: dict[str, Any] | None) -> frozenset[str]:
    """The judge's ``negative`` criteria (checked in :func:`_criterion_scores`), one shared set per list."""
    names = tuple(str(c) for c in _arr((judge_meta or {}).get("negative"), "metadata.judge.negative"))
    return _NEGATIVE.setdefault(names, frozenset(names))


def _judge_calls(usage: Any, where: str, meta: dict[str, Any]) -> list[JudgeCalls]:
    """A result's ``metadata.judge_usage``, each count checked (a hostile file is refused, named).

    Files written before ``invalid`` was counted (issue 38) say it only for a judgment left unscored
    by invalid replies (its record's ``error`` ``invalid_reply``, one ``errors`` entry per reply): that
    many, given to the result's one judge; an invalid reply followed by a valid one is not known there.
    """
    providers = _obj(_obj(usage, where).get("providers"), f"{where}.providers")
    recorded_invalid = any("invalid" in _obj(c, f"{where}.providers") for c in providers.values())
    older = 0
    if not recorded_invalid and len(providers) == 1:
        for kind in JUDGE_KINDS:
            record = meta.get(kind)
            if isinstance(record, dict) and record.get("error") == "invalid_reply":
                older += len(_arr(record.get("errors"), f"{where.rpartition('.')[0]}.{kind}.errors"))
    out = []
    for provider, counts in providers.items():
        at = f"{where}.providers[{clip(provider)}]"
        c = _obj(counts, at, null=False)

        def count(name: str, c: dict[str, Any] = c, at: str = at) -> int:
            return _count_of(c.get(name), f"{at}.{name}")

        cost = _num(c.get("cost"), f"{at}.cost")
        host = _label(c.get("host"), f"{at}.host", "") or None
        out.append(JudgeCalls(_label(provider, at, "?"), count("model"), count("cache"), count("recorded"),
                              count("failed"), count("tokens"), cost, count("invalid") or older, host))  # fmt: skip
    return out


# A pack judge's entry in an assertion's value (grounding.cjs:judge, assertions/judge.py, grounding.py:judge).
_JUDGE_ENTRY = re.compile(
    rf"(?:grounding\.cjs:|assertions/(?=\w+\.py)|grounding\.py:)(?:{'|'.join(JUDGE_CALLS)})(?:\.py(?::\w+)?)?$"
)


def _lost_judge_call(assertion: dict[str, Any], meta: dict[str, Any]) -> JudgeCalls | None:
    """A pack judge's call that left no record of its own — killed at the worker's deadline, or lost with
    a crashed worker (``assertions/grounding.cjs`` ``failed()``: an unscored outcome, no ``judge_usage``,
    no judge record): one failed call of the judge its assertion's config names (``?`` when none)."""
    value = assertion.get("value")
    if (
        meta.get("outcome") != "unscored"  # its validity is checked where the row's outcome is read
        or any(kind in meta for kind in JUDGE_KINDS)
        or not isinstance(value, str)
        or not _JUDGE_ENTRY.search(value)
    ):
        return None
    config = assertion.get("config")
    provider = config.get("provider") if isinstance(config, dict) else None
    return JudgeCalls(judge_label(provider) if isinstance(provider, str) and provider else "?", failed=1)


# The mark a judge's criterion line carries after the criterion's name (promptfoo/judge_assertion.py).
_POLARITY_MARK: Final = re.compile(r"\A[\w.]+ \((?:Yes|No) = (?:safe|good)\): ")


def judge_calls_table(rows: Iterable[ReportRow], by: Sequence[str] = ("round",)) -> list[dict[str, Any]]:
    """Judge calls, tokens and cost per group and judge provider: what the judgments of a run cost.

    ``failed`` counts the calls that gave no usable verdict: no reply, or a reply that did not parse
    (``invalid``, of them; each also counted where it came from: model, cached, recorded), or a call
    killed or lost with its worker (:func:`_lost_judge_call`). ``cost`` is
    ``None`` when no call of the group was priced (recorded or cached replies, a provider promptfoo has
    no price for), never 0 for unknown. ``endpoint`` is the host a live judge was asked at (``None`` for a
    recording): a judge asked at two hosts is two lines.
    """
    _check_by(by)
    table: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        for calls in row.judge_calls:
            key = (*(row.keys[k] for k in by), calls.provider, calls.host or "")
            cell = table.setdefault(key, {**dict(zip(by, key, strict=False)), "judge": calls.provider,
                                          "endpoint": calls.host, "rows": 0,
                                          "model_calls": 0, "cached": 0, "recorded": 0, "failed": 0,
                                          "invalid": 0, "tokens": 0, "cost": None})  # fmt: skip
            cell["rows"] += 1
            cell["model_calls"] += calls.model
            cell["cached"] += calls.cache
            cell["recorded"] += calls.recorded
            cell["failed"] += calls.failed + calls.invalid
            cell["invalid"] += calls.invalid
            cell["tokens"] += calls.tokens
            if calls.cost is not None:
                cell["cost"] = (cell["cost"] or 0.0) + calls.cost
    return [table[k] for k in sorted(table)]


JUDGE_CALL_COLUMNS: Final = ("judge", "endpoint", "rows", "model calls", "cached", "recorded", "failed",
                              "invalid", "tokens", "cost (USD)")  # fmt: skip
JUDGE_CALLS_NOTE: Final = (
    "failed: calls that gave no usable verdict, no reply or a reply that did not parse (invalid, of "
    "them); tokens are new tokens (a cached or recorded reply costs none); cost as promptfoo priced the "
    "calls (– when none was priced); endpoint: the host a live judge was asked at (– for a recording)."
)


def judge_call_cells(cell: dict[str, Any], by: Sequence[str]) -> list[str]:
    """One line of :func:`judge_calls_table` as the text and HTML reports show it (:data:`JUDGE_CALL_COLUMNS`
    after the ``by`` keys)."""
    cost = "–" if cell["cost"] is None else f"{cell['cost']:.4f}"
    return [*(str(cell[k]) for k in by), cell["judge"], cell["endpoint"] or "–", str(cell["rows"]),
            str(cell["model_calls"]), str(cell["cached"]), str(cell["recorded"]), str(cell["failed"]),
            str(cell["invalid"]), f"{cell['tokens']:,}", cost]  # fmt: skip


def _judge_calls_text(table: list[dict[str, Any]], by: Sequence[str]) -> list[str]:
    lines = [[*by, *JUDGE_CALL_COLUMNS], *(judge_call_cells(cell, by) for cell in table)]
    return ["Judge calls, tokens and cost, per round and judge", *table_lines(lines), JUDGE_CALLS_NOTE]


def _metadata_scores(*metas: dict[str, Any] | None) -> dict[str, Any]:
    """The ``scores`` each result keeps in its metadata (checked as named scores are, by :func:`_scores`)."""
    out: dict[str, Any] = {}
    for meta in metas:
        if meta and meta.get("scores") is not None:
            out.update(_obj(meta["scores"], "metadata.scores"))
    return out


def _scores(named: dict[str, Any], first: str) -> dict[str, float]:
    """Every numeric named score (each checked by :func:`~grounding_eval.results_file.number`; ``first``
    before the rest, refused as ``namedScores.<first>``)."""
    _num(named.get(first), f"namedScores.{first}")
    out = {}
    for key, value in named.items():
        if (type(value) is float or type(value) is int) and -SCORE_LIMIT <= value <= SCORE_LIMIT:
            out[key] = float(value)  # the common case, without building the field's name
        elif (checked := _num(value, f"namedScores[{clip(key)}]")) is not None:
            out[key] = checked
    return out


def _judge_verdicts(judge_meta: dict[str, Any] | None) -> dict[str, str]:
    """Every criterion's Yes / Partial / No from a scored judge (empty when it did not score the row)."""
    if judge_meta is None or judge_meta.get("status") != "scored":
        return {}
    out = {}
    for criterion, entry in _obj(judge_meta.get("verdicts"), "metadata.judge.verdicts").items():
        if not isinstance(entry, str):
            entry = _obj(entry, f"metadata.judge.verdicts.{clip(criterion)}")
        if (word := verdict(entry)) is not None:
            out[str(criterion)] = word
    return out


def _criterion_scores(judge_meta: dict[str, Any] | None, verdicts: dict[str, str]) -> dict[str, float]:
    """Each criterion's score, ``<rubric>.<criterion>``, from its verdict: Yes 1, Partial 0.5, No 0, and
    the inverse for a criterion the judge's metadata lists as ``negative`` (none for older files, which
    kept the scores themselves)."""
    negative = _arr((judge_meta or {}).get("negative"), "metadata.judge.negative")  # checked on every row
    if not verdicts or judge_meta is None or judge_meta.get("negative") is None:
        return {}
    rubric_id = _label(judge_meta.get("rubric_id"), "metadata.judge.rubric_id", "")
    out = {}
    for criterion, word in verdicts.items():
        value = verdict_value(cast("Verdict", word))  # a Yes / Partial / No: _judge_verdicts
        out[score_name(rubric_id, criterion)] = 1.0 - value if criterion in negative else value
    return out


def _docs_qa_verdicts(docs_meta: dict[str, Any] | None) -> dict[str, str]:
    """The docs-QA criteria's pass / fail / n/a (``metadata.docs_qa.criteria``)."""
    criteria = _obj((docs_meta or {}).get("criteria"), "metadata.docs_qa.criteria")
    out = {}
    for criterion, entry in criteria.items():
        verdict = _obj(entry, f"metadata.docs_qa.criteria.{clip(criterion)}").get("verdict")
        if verdict in ("pass", "fail", "n/a"):
            out[str(criterion)] = str(verdict)
    return out


def _claims(fact_meta: dict[str, Any] | None) -> tuple[Claim, ...]:
    """The factual-accuracy judge's claims with an id and a verdict (``metadata.factuality.claims``)."""
    out = []
    for i, raw in enumerate(_arr((fact_meta or {}).get("claims"), "metadata.factuality.claims")):
        claim = _obj(raw, f"metadata.factuality.claims[{i}]", null=False)
        where = f"metadata.factuality.claims[{i}]"
        claim_id = _label(claim.get("claim_id"), f"{where}.claim_id", "")
        verdict = _label(claim.get("verification_result"), f"{where}.verification_result", "")
        if claim_id and verdict:
            out.append(Claim(claim_id, _label(claim.get("claim_text"), f"{where}.claim_text", ""), verdict))
    return tuple(out)


# What the verifier reports as plainly fine, per list in metadata.verifier: not a finding.
_FINE = {
    "urls": ("IN_ALLOWLIST",),
    "phones": ("MATCH",),
    "url_orgs": ("MATCH",),
    "quotes": ("EXACT", "NO_SOURCE"),
    "citations": ("IN_SOURCES", "KNOWN"),
}
_CHECK_OF = {
    "urls": "url_allowlist", "phones": "phone_org", "url_orgs": "url_org", "quotes": "quotation",
    "citations": "citations",
}  # fmt: skip
_DETAIL_OF = {
    "urls": "url",
    "phones": "number",
    "url_orgs": "url",
    "quotes": "quote",
    "citations": "citation",
}


def _findings(verifier_meta: dict[str, Any] | None) -> tuple[Finding, ...]:
    """The verifier's findings by check and status, other than the plainly fine ones."""
    if verifier_meta is None:
        return ()
    out = []
    for key, fine in _FINE.items():
        for i, raw in enumerate(_arr(verifier_meta.get(key), f"metadata.verifier.{key}")):
            entry = _obj(raw, f"metadata.verifier.{key}[{i}]", null=False)
            status = _label(entry.get("status"), f"metadata.verifier.{key}[{i}].status", "?")
            if status not in fine:
                detail = entry.get(_DETAIL_OF[key]) or entry.get("raw") or ""
                out.append(Finding(_CHECK_OF[key], status, str(detail)[:160]))
    jurisdiction = _obj(verifier_meta.get("jurisdiction"), "metadata.verifier.jurisdiction")
    for i, raw in enumerate(_arr(jurisdiction.get("leaks"), "metadata.verifier.jurisdiction.leaks")):
        leak = (
            raw
            if isinstance(raw, str)
            else _obj(raw, f"metadata.verifier.jurisdiction.leaks[{i}]", null=False)
        )
        detail = leak if isinstance(leak, str) else leak.get("org") or leak.get("name") or json.dumps(leak)
        out.append(Finding("jurisdiction", "LEAK", str(detail)[:160]))
    return tuple(out)


_NO_KINDS: dict[str, int] = {}  # shared by every row with nothing undecided


def _count_of(value: Any, where: str) -> int:
    """A count in a results file: a whole number ≥ 0 (a hostile file is refused, named)."""
    number = _num(value, where)
    if number is None:
        return 0
    if number < 0 or number != int(number):
        raise RowProblem(f"{where} is {number:g}, expected a whole number ≥ 0")
    return int(number)


def _undecided(
    verifier_meta: dict[str, Any] | None, urls: Sequence[dict[str, Any]]
) -> tuple[dict[str, int] | None, bool]:
    """What the verifier left undecided, by kind, and whether that was derived.

    ``metadata.verifier.undecided`` (``{count, kinds, items}``) when recorded; a count beyond its kinds'
    sum is kind ``other``. A verifier from before it was recorded: derived from its ``UNCHECKED`` URLs
    (kind ``URL``) and citations (their ``kind``). None when the verifier did not run.
    """
    if verifier_meta is None:
        return None, False
    where = "metadata.verifier.undecided"
    if verifier_meta.get("undecided") is not None:
        record = _obj(verifier_meta["undecided"], where)
        kinds: dict[str, int] = {}
        for kind, n in _obj(record.get("kinds"), f"{where}.kinds").items():
            if (count := _count_of(n, f"{where}.kinds[{clip(kind)}]")) > 0:
                kinds[_label(kind, f"{where}.kinds", "other")] = count
        rest = _count_of(record.get("count"), f"{where}.count") - sum(kinds.values())
        if rest > 0:
            kinds["other"] = kinds.get("other", 0) + rest
        return kinds or _NO_KINDS, False
    derived: dict[str, int] = {}
    unchecked = sum(1 for u in urls if u.get("status") == "UNCHECKED")
    if unchecked:
        derived["URL"] = unchecked
    for i, raw in enumerate(_arr(verifier_meta.get("citations"), "metadata.verifier.citations")):
        entry = _obj(raw, f"metadata.verifier.citations[{i}]", null=False)
        if entry.get("status") == "UNCHECKED":
            kind = _label(entry.get("kind"), f"metadata.verifier.citations[{i}].kind", "citation")
            derived[kind] = derived.get(kind, 0) + 1
    return derived or _NO_KINDS, True


def _citation_statuses(verifier_meta: dict[str, Any] | None) -> dict[str, int] | None:
    """The verifier's citations by status; None when it did not run or predates the citation check."""
    if verifier_meta is None or "citations" not in verifier_meta:
        return None
    out: dict[str, int] = {}
    for i, raw in enumerate(_arr(verifier_meta.get("citations"), "metadata.verifier.citations")):
        entry = _obj(raw, f"metadata.verifier.citations[{i}]", null=False)
        status = _label(entry.get("status"), f"metadata.verifier.citations[{i}].status", "?")
        out[status] = out.get(status, 0) + 1
    return out or _NO_KINDS


def _judge_safety(
    judge_meta: dict[str, Any] | None, verdicts: dict[str, str]
) -> tuple[dict[str, str], str | None]:
    """The judge's own verdict per safety check it answered (of its ``verdicts``), or why it gave none."""
    if judge_meta is None:
        return {}, "the judge did not run (or returned an error)"
    if judge_meta.get("status") != "scored":
        return {}, "the judge reply could not be scored"
    return {check: verdicts[check] for check in ROUND3_SAFETY_CHECKS if check in verdicts}, None


def _check_by(by: Sequence[str]) -> None:
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise DataError("--by", f"unknown key(s) {', '.join(unknown)}: use {', '.join(GROUP_KEYS)}")


def summarize(
    rows: Iterable[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[Group]:
    """Group ``rows`` by the ``by`` keys (in :data:`GROUP_KEYS`), sorted by key."""
    _check_by(by)
    members: dict[tuple[str, ...], list[ReportRow]] = defaultdict(list)
    for row in rows:
        members[tuple(row.keys[k] for k in by)].append(row)
    groups = []
    for key in sorted(members):
        group = Group(key, rate=pass_rate(members[key]))
        for row in members[key]:
            # The verifier's columns are the answer's, whatever the judge did: over every verified row
            # (an outage that left the safe rows unscored selects none of them out).
            if row.verifier_ran:
                for value, bucket in ((row.verifier, group.verifiers), (row.url_score, group.url_scores)):
                    if value is not None:
                        bucket.append(float(value))
            if not row.unscored:  # an unscored row is counted, never averaged into the judge's means
                for value, bucket in ((row.composite, group.composites), (row.judge, group.judges)):
                    if value is not None:
                        bucket.append(float(value))
            if not row.verifier_ran:
                continue
            group.urls += row.urls
            group.urls_unchecked += row.urls_unchecked
            for check in row.safety_no:
                group.safety_no[check] += 1
        groups.append(group)
    return groups


def safety_agreement(
    rows: Iterable[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[CheckAgreement]:
    """Judge versus verifier per Round 3 safety check, over the rows in scope, grouped by ``by``.

    Returns one :class:`CheckAgreement` per check in :data:`ROUND3_SAFETY_CHECKS` order, or an empty
    list when no row was judged with a rubric that asks the checks.
    """
    _check_by(by)
    scoped = [r for r in rows if r.safety_scope]
    if not scoped:
        return []
    tables = []
    # The rows in one order whatever order promptfoo finished them in: the same results, the same report.
    scoped.sort(key=lambda r: (r.query_id, *(r.keys[k] for k in ("round", "condition", "provider"))))
    for check in ROUND3_SAFETY_CHECKS:
        table = CheckAgreement(check)
        for row in scoped:
            cell, why = row.agreement(check)
            group = table.groups.setdefault(tuple(row.keys[k] for k in by), _cells())
            for counts in (table.total, group):
                counts["rows"] += 1
                counts[cell] += 1
            if cell in table.items:
                said = row.safety_reasons.get(check)
                table.items[cell].append({**row.item(), **({"reason": why} if why else {}),
                                          **({"said": said} if said and not why else {})})  # fmt: skip
        tables.append(table)
    return tables


SPLIT_COLUMNS = ("verifier_no", "judge_no", "both_no", "judge_disagrees", "verifier_only_no")
_SPLIT_HEADS = {
    "verifier_no": "verifier.No",
    "judge_no": "judge.No",
    "both_no": "both.No",
    "judge_disagrees": "judge.disagrees",
    "verifier_only_no": "verifier.No.only",
    "not_comparable": "not.comparable",
}
NOT_RECORDED = "not recorded"


def safety_split_table(
    rows: Iterable[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[dict[str, Any]]:
    """Per group, how many rows in scope have, on any of the three checks: a verifier No, a judge No, a
    No from both, a judge No the verifier passed (``judge_disagrees``, the composite's flag), a verifier
    No the judge answered Yes or Partial; rows missing a side on any check are ``not_comparable`` (a side
    that is there still counts in its own column: a verifier No under a judge outage is a verifier No; the
    comparisons count over the checks both sides answered, as the per-check tables do). ``sources`` counts
    the ``safety_source`` the rows' composites recorded (``not recorded`` for files made before it was).
    Empty when no row was judged with a rubric that asks the checks.
    """
    _check_by(by)
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        if not row.safety_scope:
            continue
        key = tuple(row.keys[k] for k in by)
        counts = groups.setdefault(
            key, {"rows": 0, **dict.fromkeys(SPLIT_COLUMNS, 0), "not_comparable": 0, "sources": {}}
        )
        counts["rows"] += 1
        source = row.safety_source or NOT_RECORDED
        counts["sources"][source] = counts["sources"].get(source, 0) + 1
        # Each side's own No counts whatever the other did; the comparisons count over the checks both
        # sides answered (the per-check tables' cells), so a row the judge answered in part is compared
        # on those checks and not comparable on the rest.
        comparable = [c for c in ROUND3_SAFETY_CHECKS if row.agreement(c)[1] is None]
        counts["not_comparable"] += len(comparable) < len(ROUND3_SAFETY_CHECKS)
        counts["verifier_no"] += bool(row.verifier_ran and row.safety_no)
        counts["judge_no"] += any(v == "No" for v in row.judge_safety.values())
        split = safety_split(
            [c for c in row.safety_no if c in comparable], {c: row.judge_safety[c] for c in comparable}
        )
        for column, hit in zip(SPLIT_COLUMNS[2:], _split_hits(split)[2:], strict=True):
            counts[column] += hit
    return [{**dict(zip(by, key, strict=True)), **groups[key]} for key in sorted(groups)]


def _split_hits(split: SafetySplit) -> tuple[bool, ...]:
    return (
        bool(split.verifier_no),
        bool(split.judge_no),
        bool(split.both_no),
        split.judge_disagrees,
        bool(split.verifier_only_no),
    )


def findings_table(
    rows: Iterable[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[dict[str, Any]]:
    """Per group: what the verifier left undecided and the legal citations it found, over every row the
    verifier ran on, scored or not (a finding is the answer's, whatever the judge did).

    Each group: ``rows``, ``verifier_rows``; ``undecided`` — ``rows_with`` (rows with any), ``count``,
    ``kinds`` (kind → count), ``recorded_rows`` and ``derived_rows`` (rows whose verifier predates the
    record: derived from UNCHECKED URLs and citations) — or None when the verifier ran on no row;
    ``citations`` — ``rows_with``, ``count``, ``statuses`` (status → count), ``recorded_rows`` — or None
    when no row's verifier recorded citations. Empty when the verifier ran on no row at all.
    """
    _check_by(by)
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        key = tuple(row.keys[k] for k in by)
        group = groups.setdefault(key, {"rows": 0, "verifier_rows": 0,
                                        "undecided": _tally(recorded_rows=0, derived_rows=0),
                                        "citations": _tally(recorded_rows=0)})  # fmt: skip
        group["rows"] += 1
        if row.undecided_skipped is not None:
            group.setdefault("skipped", []).append(f"{row.query_id or '?'}: {row.undecided_skipped}")
        if row.undecided is None:
            continue
        group["verifier_rows"] += 1
        undecided = group["undecided"]
        undecided["derived_rows" if row.undecided_derived else "recorded_rows"] += 1
        _add(undecided, "kinds", row.undecided)
        if row.citations is not None:
            group["citations"]["recorded_rows"] += 1
            _add(group["citations"], "statuses", row.citations)
    if not any(g["verifier_rows"] for g in groups.values()):
        return []
    out = []
    for key in sorted(groups):
        group = groups[key]
        _list_top(group["undecided"], "kinds")
        _list_top(group["citations"], "statuses")
        if not group["verifier_rows"]:
            group["undecided"] = None
        if not group["citations"]["recorded_rows"]:
            group["citations"] = None
        out.append({**dict(zip(by, key, strict=True)), **group})
    return out


def _tally(**counts: int) -> dict[str, Any]:
    return {**counts, "rows_with": 0, "count": 0}


LISTED_KINDS = 20  # a group lists its 20 most frequent kinds (or statuses); the rest are counted


def _add(tally: dict[str, Any], field_name: str, found: Mapping[str, int]) -> None:
    """One row's counts by kind (or status) added in place to a group's ``tally`` (linear in the row's
    kinds: :func:`_list_top` sorts once per group)."""
    n = sum(found.values())
    tally["rows_with"] += n > 0
    tally["count"] += n
    merged = tally.setdefault(field_name, {})
    for name, value in found.items():
        merged[name] = merged.get(name, 0) + value


def _list_top(tally: dict[str, Any], field_name: str) -> None:
    """A group's counts by kind: the :data:`LISTED_KINDS` most frequent (ties by name), listed by name;
    how many kinds were left off in ``other_<field_name>`` (only when some were)."""
    merged = tally.get(field_name) or {}
    top = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:LISTED_KINDS]
    tally[field_name] = dict(sorted(top))
    if len(merged) > len(top):
        tally[f"other_{field_name}"] = len(merged) - len(top)


def listed_text(tally: Mapping[str, Any], field_name: str) -> str:
    """:func:`counts_text` of a group's listed kinds (or statuses), then ``N other kinds`` left off."""
    text = counts_text(tally[field_name])
    left_off = tally.get(f"other_{field_name}", 0)
    return f"{text}, {left_off} other {field_name}" if left_off else text


def findings_lines(table: list[dict[str, Any]], by: Sequence[str]) -> list[str]:
    """:func:`findings_table` as text: undecided findings and legal citations per group."""
    if not table:
        return []
    body = [[*by, "rows", "verifier", "undecided.rows", "undecided", "by kind", "citations", "by status"]]
    derived = 0
    for g in table:
        u, c = g["undecided"], g["citations"]
        if u is None:
            cells = ["not recorded"] * 3
        else:
            derived += u["derived_rows"]
            mark = "*" if u["derived_rows"] else ""
            cells = [f"{u['rows_with']}{mark}", f"{u['count']}{mark}", listed_text(u, "kinds")]
        cells += ["not recorded"] * 2 if c is None else [str(c["count"]), listed_text(c, "statuses")]
        body.append([*(g[k] for k in by), str(g["rows"]), str(g["verifier_rows"]), *cells])
    note = (
        "Undecided: what the verifier could not decide (offline URLs, citations nothing covers, quotes with no "
        "reference text, a check that raised), over the rows it ran on, scored or not; citations: the legal "
        "citations it found, by status. not recorded: no row of the group says."
    )
    if derived:
        note += (
            f" * {derived} row(s) were verified before undecided findings were recorded: derived from their "
            "UNCHECKED URLs and citations only."
        )
    return [
        "Undecided findings and legal citations, per group",
        *table_lines(body),
        note,
        *skipped_notes(table),
    ]


def skipped_notes(table: list[dict[str, Any]], most: int = 5) -> list[str]:
    """One line per row whose undecided record could not be read (left out of the counts; at most
    ``most`` named, then how many more)."""
    skipped = [s for g in table for s in g.get("skipped", ())]
    lines = [f"Undecided record skipped (left out of the counts): {terminal_safe(s)}" for s in skipped[:most]]
    if len(skipped) > most:
        lines.append(f"… and {len(skipped) - most} more row(s) whose undecided record was skipped")
    return lines


def counts_text(counts: Mapping[str, int]) -> str:
    """``URL 2, statute 1``: counts by name, or ``–`` when there are none."""
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "–"


def report_json(
    rows: Sequence[ReportRow], by: Sequence[str], *, files: Sequence[Results] | None = None
) -> dict[str, Any]:
    """The whole report as the JSON structure in docs/reference/report.md (`report --json`); ``files``:
    the results files the rows were read from (the unsafe answers name theirs; else ``""``)."""
    tables = safety_agreement(rows, by)
    return {
        "by": list(by),
        "groups": [g.as_dict(by) for g in summarize(rows, by)],
        "findings": findings_table(rows, by),
        "safety_split": safety_split_table(rows, by),
        "safety_agreement": {
            "rows": tables[0].total["rows"] if tables else 0,
            "checks": [t.as_dict(by) for t in tables],
        },
        "judge_calls": judge_calls_table(rows),
        "unsafe": unsafe_answers([(f.path, f.rows) for f in files] if files is not None else [("", rows)]),
        "grounding_records": grounding_records(rows),
    }


def format_report(rows: Sequence[ReportRow], by: Sequence[str]) -> str:
    """The whole report as text: the groups table, the judge-versus-verifier tables, what the judges'
    calls cost (when any judge ran), then where the C1 and C1.5 records differ per item (when the rows
    hold both conditions)."""
    lines = _groups_text(summarize(rows, by), by)
    findings = findings_lines(findings_table(rows, by), by)
    if findings:
        lines += ["", *findings]
    split = safety_split_table(rows, by)
    if split:
        lines += ["", *_split_text(split, by)]
    lines.append("")
    lines.extend(_agreement_text(safety_agreement(rows, by), by))
    calls = judge_calls_table(rows)
    if calls:
        lines += ["", *_judge_calls_text(calls, ("round",))]
    records = grounding_records_lines(rows)
    if records:
        lines += ["", *records]
    return "\n".join(lines)


def table_lines(rows: list[list[str]]) -> list[str]:
    """Left-aligned text columns, two spaces apart (the first row is the head); every cell is printed
    through :func:`~grounding_eval.errors.terminal_safe` (a label's escape sequence shows as ``\\x1b``)."""
    rows = [[terminal_safe(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _groups_text(groups: list[Group], by: Sequence[str]) -> list[str]:
    head = [*by, "rows", "passed/scored", "unscored", "unsafe.nc", "composite", "judge", "verifier", "url",
            "UNCHECKED", "urls", "halluc.No", "juris.No", "org.No"]  # fmt: skip
    table = [head]
    selected = []
    for g in groups:
        d = g.as_dict(by)
        means = (d["mean_composite"], d["mean_judge"], d["mean_verifier"], d["mean_url_allowlist_score"])
        if g.rate.selected_by_outage:
            selected.append(f"{' '.join(g.key)}: " + outage_note(g.rate))
        table.append([
            *g.key, str(g.rows), g.rate.text(), str(g.unscored), str(g.rate.unsafe_no_composite),
            *(f"{v:.3f}" if v is not None else "–" for v in means),
            str(g.urls_unchecked), str(g.urls),
            *(str(n) for n in g.safety_no.values()),
        ])  # fmt: skip
    return [
        *table_lines(table),
        "Pass rates are passed ÷ scored (n/a: nothing scored); unscored rows are counted apart, never as "
        "failures; a row the verifier found unsafe is a failure even when the judge gave no verdict or the "
        "composite failed (unsafe.nc: such rows, with no composite). The composite and judge means leave out "
        "unscored rows; verifier, url (the mean url_allowlist_score), UNCHECKED of urls (the URLs the verifier "
        "could not check, not in that mean) and *.No (the Round 3 safety checks the verifier found No) count "
        "every row the verifier ran on.",
        *selected,
    ]


def outage_note(rate: PassRate) -> str:
    """Why a pass rate leans low when an outage selected its rows (:attr:`PassRate.selected_by_outage`)."""
    kept = rate.scored - rate.unsafe_no_composite  # scored rows with a composite (an unsafe row never passes)
    return (
        f"the pass rate is taken over rows selected by an outage: {rate.unsafe_no_composite} row(s) failed "
        f"as unsafe with no composite are in it, {rate.unscored} unscored row(s) (safe or not known) are not, "
        f"so it leans low; without them: {PassRate(kept, kept, rate.passed).text()}."
    )


def _split_text(split: list[dict[str, Any]], by: Sequence[str]) -> list[str]:
    head = [*by, "rows", *(_SPLIT_HEADS[c] for c in (*SPLIT_COLUMNS, "not_comparable")), "decided by"]
    body = [head]
    for g in split:
        sources = ", ".join(f"{source} {n}" for source, n in sorted(g["sources"].items()))
        body.append([*(g[k] for k in by), str(g["rows"]),
                     *(str(g[c]) for c in (*SPLIT_COLUMNS, "not_comparable")), sources])  # fmt: skip
    return [
        "Round 3 safety checks, verifier and judge side by side (rows with a No on any check; judge.disagrees: "
        "the judge said No on a check the verifier passed; verifier.No.only: the verifier said No, the judge "
        "Yes or Partial; decided by: the composites' safety_source)",
        *table_lines(body),
    ]


def _agreement_text(tables: list[CheckAgreement], by: Sequence[str]) -> list[str]:
    title = "Judge versus verifier on the Round 3 safety checks"
    if not tables:
        return [f"{title}: no row was judged with a rubric that asks them."]
    lines = [
        f"{title} (No = unsafe; the judge's own verdict against the verifier's hard failures; a judge "
        "Partial has its own columns; not.comparable: a side is missing, never guessed)"
    ]
    for t in tables:
        head = [*by, "rows", *(_CELL_HEADS[c] for c in AGREEMENT_CELLS)]
        body = [head]
        for key in sorted(t.groups):
            counts = t.groups[key]
            body.append([*key, *(str(counts[c]) for c in ("rows", *AGREEMENT_CELLS))])
        if len(t.groups) > 1:
            total = ["all", *([""] * (len(by) - 1))] if by else []
            body.append([*total, *(str(t.total[c]) for c in ("rows", *AGREEMENT_CELLS))])
        lines += ["", t.check, *("  " + line for line in table_lines(body))]
        for cell, items in t.items.items():
            for item in items:
                reason = f": {item['reason']}" if "reason" in item else ""
                lines.append(
                    f"  {_CELL_LABELS[cell]}: {item['query_id']} ({item['condition']}, {item['provider']})"
                    f"{reason}"
                )
    return [terminal_safe(line) for line in lines]
