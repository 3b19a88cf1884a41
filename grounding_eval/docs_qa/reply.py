"""The docs-QA grader's reply: its JSON schema, and a parser that is strict first, lenient second.

Schema: ``{"criteria": {"<criterion_id>": {"score": 1 | 0 | "n/a", "reason": "<one sentence>"}, ...}}``
with every criterion of the rubric present, plus an optional ``"summary"``. Which criteria may (or
must) be ``"n/a"`` depends on the question: :func:`parse_grading` checks the rubric's applicability
rules too, so a reply that marks Correct n/a, or scores Complete on an out-of-scope question, is
invalid and goes back to the grader (once), like any other schema violation.

The design is the rubric judge's (:mod:`grounding_eval.judge.parse`), and the JSON scanning is the one
extractor every judge uses (:mod:`grounding_eval.judge.extract`): finding the reply's object in prose or
fences, refusing two different ``criteria`` objects, duplicate keys, cut-off replies, the budgets
(:data:`~grounding_eval.judge.extract.MAX_REPLY_CHARS`, linear scanning), and, given the answer
(``judged_text``), never taking a ``criteria`` object the answer holds as the reply.

Liberties taken in lenient mode, each recorded as a repair (and pinned by ``tests/docs_qa/golden/
grader_replies.yaml``): a leading BOM; code fences and prose around the object; the same object
repeated verbatim; invisible characters or spaces in keys; extra fields (ignored); a score written
``"1"`` or ``"0"`` (a string), or ``"N/A"``, ``"NA"``, ``"n.a."`` in any case or spacing.

Refused: a missing or unknown criterion; a score of ``true``/``false``, ``"pass"``/``"fail"``, ``0.5``,
``2``, ``null`` or anything else; an empty or non-text reason; n/a where the rubric requires a score
and a score where it requires n/a; invalid JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from grounding_eval.docs_qa.rubric import DocsQaRubric
from grounding_eval.judge.extract import (
    ParseFailure,
    ReplyShape,
    invisible,
    neutralize_tags,
    read_reply,
)
from grounding_eval.judge.parse import MAX_REASONING_CHARS, _clean_keys, _json_type, _quote

__all__ = ["Grade", "GradingFailure", "ParsedGrading", "Score", "grading_schema", "parse_grading"]

Score = Literal[1, 0] | None
"""1 pass, 0 fail, ``None`` n/a."""

_NA_FORMS: Final = frozenset({"n/a", "na", "n.a.", "n.a", "not applicable"})
_NA: Final = "n/a"
_SHAPE: Final = ReplyShape("criteria", noun="grading object", judged="the answer")


@dataclass(frozen=True)
class Grade:
    """The grader's score and reason for one criterion (``score`` ``None`` means n/a)."""

    score: Score
    reason: str

    @property
    def verdict(self) -> str:
        """``pass``, ``fail`` or ``n/a``."""
        return {1: "pass", 0: "fail", None: _NA}[self.score]


@dataclass(frozen=True)
class ParsedGrading:
    """A reply that fits the schema and the applicability rules.

    Attributes:
        grades: criterion id → grade, in the rubric's order.
        mode: ``strict`` (exactly the schema) or ``lenient`` (``repairs`` lists each liberty taken).
        repairs: one line per liberty.
        summary: the optional summary.
        raw: the reply as received.
    """

    grades: Mapping[str, Grade]
    mode: Literal["strict", "lenient"]
    repairs: tuple[str, ...] = ()
    summary: str | None = None
    raw: str = ""


GradingFailure = ParseFailure
"""A reply that could not be read: the one extractor's failure (``error`` for the retry, ``problems``, ``raw``)."""


def grading_schema(rubric: DocsQaRubric, *, out_of_scope: bool) -> dict[str, Any]:
    """The JSON Schema of a valid reply for a question of that kind (embedded in the grader prompt)."""
    forms: dict[str, list[Any]] = {"required": [1, 0], "n/a": [_NA], "grader": [1, 0, _NA]}
    properties = {
        c.id: {
            "type": "object",
            "properties": {
                "score": {"enum": forms[c.applies(out_of_scope=out_of_scope)]},
                "reason": {"type": "string", "minLength": 1, "description": "One sentence."},
            },
            "required": ["score", "reason"],
            "additionalProperties": False,
        }
        for c in rubric.criteria
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "criteria": {
                "type": "object",
                "properties": properties,
                "required": list(rubric.ids),
                "additionalProperties": False,
            },
            "summary": {"type": "string"},
        },
        "required": ["criteria"],
        "additionalProperties": False,
    }


def parse_grading(
    text: str, rubric: DocsQaRubric, *, out_of_scope: bool, judged_text: str | None = None
) -> ParsedGrading | GradingFailure:
    """Read a grader reply for a question of that kind: strictly, else leniently, else a failure.

    ``judged_text`` is the answer under review: a ``{"criteria": …}`` object it holds is never the reply
    (:func:`~grounding_eval.judge.extract.read_reply`). Never raises.
    """

    def validate(obj: Any) -> _Check:
        checked = _Check(rubric, out_of_scope)
        checked.reply(obj)
        return checked

    read = read_reply(text, validate, _SHAPE, judged_text=judged_text, neutralize=neutralize_tags)
    if isinstance(read, ParseFailure):
        return read
    checked = read.checked
    return ParsedGrading(checked.grades, read.mode, read.repairs, checked.summary, str(text))


class _Check:
    """Validation of one decoded object against the rubric and the question's kind."""

    def __init__(self, rubric: DocsQaRubric, out_of_scope: bool) -> None:
        self.rubric = rubric
        self.out_of_scope = out_of_scope
        self.grades: dict[str, Grade] = {}
        self.repairs: list[str] = []
        self.problems: list[str] = []
        self.summary: str | None = None

    def reply(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            self.problems.append(f"the reply's JSON is {_json_type(obj)}, not an object with 'criteria'")
            return
        top = self._keys(obj, "top-level")
        criteria = top.pop("criteria", None)
        summary = top.pop("summary", None)
        if isinstance(summary, str):
            self.summary = summary
        elif summary is not None:
            self.repairs.append("ignored a non-text 'summary'")
        if top:
            self.repairs.append(f"ignored extra top-level field(s) {', '.join(map(_quote, top))}")
        if not isinstance(criteria, dict):
            what = "missing" if criteria is None else _json_type(criteria)
            self.problems.append(f"'criteria' is {what}, not an object keyed by criterion id")
            return
        entries = self._keys(criteria, "criterion")
        missing = [cid for cid in self.rubric.ids if cid not in entries]
        unknown = [k for k in entries if k not in self.rubric.ids]
        for cid in missing:
            self.problems.append(f"criterion '{cid}' is missing")
        for key in unknown:
            self.problems.append(f"criterion {_quote(key)} is not in the rubric")
        for criterion in self.rubric.criteria:
            if criterion.id in entries:
                grade = self._grade(criterion.id, entries[criterion.id])
                if grade is not None:
                    self._applicability(
                        criterion.id, grade, criterion.applies(out_of_scope=self.out_of_scope)
                    )
                    self.grades[criterion.id] = grade

    def _keys(self, obj: Mapping[str, Any], what: str) -> dict[str, Any]:
        for key in getattr(obj, "duplicates", ()):
            self.problems.append(f"{what} key {_quote(key)} appears more than once")
        return _clean_keys(obj, what, self.repairs, self.problems)

    def _grade(self, cid: str, entry: Any) -> Grade | None:
        if not isinstance(entry, dict):
            self.problems.append(
                f"criterion '{cid}' is {_json_type(entry)}, not an object with score and reason"
            )
            return None
        fields = self._keys(entry, f"criterion '{cid}'")
        has_score = "score" in fields
        score = self._score(cid, fields.pop("score", None), has_score)
        reason = fields.pop("reason", None)
        if fields:
            self.repairs.append(f"criterion '{cid}': ignored extra field(s) {', '.join(map(_quote, fields))}")
        if not isinstance(reason, str) or not reason.strip():
            what = "missing" if reason is None else "empty" if isinstance(reason, str) else _json_type(reason)
            self.problems.append(f"criterion '{cid}': reason is {what} (give one sentence)")
            return None
        if len(reason) > MAX_REASONING_CHARS:
            self.repairs.append(
                f"criterion '{cid}': reason cut to its first {MAX_REASONING_CHARS:,} characters"
            )
            reason = reason[:MAX_REASONING_CHARS] + "…"
        if score == "bad":
            return None
        return Grade(score, reason)

    def _score(self, cid: str, value: Any, present: bool) -> Score | Literal["bad"]:
        allowed = '1, 0 or "n/a"'
        if not present:
            self.problems.append(f"criterion '{cid}': score is missing; use {allowed}")
            return "bad"
        if isinstance(value, bool) or value is None:
            self.problems.append(f"criterion '{cid}': score {json.dumps(value)} is not {allowed}")
            return "bad"
        if isinstance(value, int) and value in (0, 1):
            return 1 if value == 1 else 0
        if isinstance(value, str):
            folded = "".join(ch for ch in value if not invisible(ch)).strip().casefold()
            folded = re.sub(r"\s+", " ", folded)
            if folded in ("1", "0"):
                self.repairs.append(f"criterion '{cid}': score {_quote(value)} read as the number {folded}")
                return 1 if folded == "1" else 0
            if folded in _NA_FORMS:
                if value != _NA:
                    self.repairs.append(f"criterion '{cid}': score {_quote(value)} read as \"n/a\"")
                return None
        self.problems.append(f"criterion '{cid}': score {_quote(json.dumps(value))} is not {allowed}")
        return "bad"

    def _applicability(self, cid: str, grade: Grade, applies: str) -> None:
        kind = "an out-of-scope" if self.out_of_scope else "an in-scope"
        if applies == "required" and grade.score is None:
            self.problems.append(f"criterion '{cid}' must be scored 1 or 0 for {kind} question, not \"n/a\"")
        elif applies == "n/a" and grade.score is not None:
            self.problems.append(f"criterion '{cid}' must be \"n/a\" for {kind} question")
