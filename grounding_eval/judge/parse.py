"""The judge's reply: its JSON schema, and a parser that is strict first, lenient second, never silent.

The reply schema is ``{"criteria": {"<criterion_id>": {"verdict": "Yes"|"Partial"|"No", "reasoning":
"<one sentence>"}, ...}, "summary": "<optional>"}``, with every criterion of the rubric present.

:func:`parse_reply` never raises. It returns a :class:`ParsedReply` (``mode`` says whether the reply
was exactly the schema, or needed lenient reading, and ``repairs`` lists every liberty taken) or a
:class:`ParseFailure` whose ``error`` paragraph can be appended to a retry prompt as is. What lenient
reading allows and refuses — only liberties that cannot change a verdict, each pinned by a row of
``tests/golden/judge_replies.yaml`` — is docs/reference/rounds.md#the-judges-reply. Finding the object
(strict and lenient steps, echoes, budgets) is :mod:`grounding_eval.judge.extract`, shared with the
factual-accuracy and docs-QA judges; this module is the rubric judge's validator.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from grounding_eval.judge.extract import (
    MAX_BAD_OBJECTS,
    MAX_REPLY_CHARS,
    ParseFailure,
    ParseMode,
    ReplyShape,
    clean_key,
    invisible,
    neutralize_tags,
    read_reply,
)
from grounding_eval.judge.rubric import VERDICTS, Rubric, Verdict

__all__ = [
    "MAX_BAD_OBJECTS",
    "MAX_REASONING_CHARS",
    "MAX_REPLY_CHARS",
    "Judgment",
    "ParseFailure",
    "ParseMode",
    "ParsedReply",
    "parse_reply",
    "reply_schema",
]

MAX_REASONING_CHARS: Final = 2_000
"""Longest reasoning kept per criterion; the schema asks for one sentence."""

_SHAPE: Final = ReplyShape("criteria")
_CANONICAL: Mapping[str, Verdict] = MappingProxyType({v.casefold(): v for v in VERDICTS})
_ENUM = ", ".join(f'"{v}"' for v in VERDICTS)
# Longest excerpt of reply text quoted back in an error (the reply is model output: keep it short).
_QUOTE_MAX = 40


@dataclass(frozen=True)
class Judgment:
    """The judge's answer to one criterion."""

    verdict: Verdict
    reasoning: str


@dataclass(frozen=True)
class ParsedReply:
    """A reply that satisfied the schema.

    Attributes:
        judgments: criterion id → judgment, in the rubric's order.
        mode: ``strict`` when the whole reply was exactly one schema-conforming JSON object,
            ``lenient`` when it took one of the documented repairs.
        repairs: one line per liberty taken (empty in strict mode).
        summary: the optional ``summary`` text, if the judge gave one.
        raw: the reply text as received.
    """

    judgments: Mapping[str, Judgment]
    mode: ParseMode
    repairs: tuple[str, ...] = ()
    summary: str | None = None
    raw: str = ""

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Criterion id → verdict, in the rubric's order."""
        return {cid: j.verdict for cid, j in self.judgments.items()}


def reply_schema(rubric: Rubric) -> dict[str, Any]:
    """Return the JSON Schema of a valid reply for ``rubric`` (embedded in the judge prompt)."""
    judgment = {
        "type": "object",
        "properties": {
            "verdict": {"enum": list(VERDICTS)},
            "reasoning": {"type": "string", "minLength": 1, "description": "One sentence."},
        },
        "required": ["verdict", "reasoning"],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "criteria": {
                "type": "object",
                "properties": {cid: {"$ref": "#/$defs/judgment"} for cid in rubric.ids},
                "required": list(rubric.ids),
                "additionalProperties": False,
            },
            "summary": {"type": "string", "description": "Optional: one or two sentences overall."},
        },
        "required": ["criteria"],
        "additionalProperties": False,
        "$defs": {"judgment": judgment},
    }


def parse_reply(text: str, rubric: Rubric, *, judged_text: str | None = None) -> ParsedReply | ParseFailure:
    """Read a judge reply against ``rubric``: strictly if possible, else leniently, else a failure.

    ``judged_text`` is the answer under review: a reply object it already holds (verbatim, reformatted,
    or as :func:`~grounding_eval.judge.render.neutralize` wrote it into the prompt) is never the reply
    (:func:`~grounding_eval.judge.extract.read_reply`). Never raises.
    """
    read = read_reply(
        text, lambda obj: _validate(obj, rubric), _SHAPE, judged_text=judged_text, neutralize=neutralize_tags
    )
    if isinstance(read, ParseFailure):
        return read
    result = read.checked
    return ParsedReply(result.judgments, read.mode, read.repairs, result.summary, str(text))


# ---------------------------------------------------------------------------------------------------
# Validation against the rubric.
# ---------------------------------------------------------------------------------------------------


@dataclass
class _Validation:
    judgments: dict[str, Judgment] = field(default_factory=dict)
    summary: str | None = None
    repairs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _validate(obj: Any, rubric: Rubric) -> _Validation:
    out = _Validation()
    if not isinstance(obj, dict):
        out.problems.append(f"the reply's JSON is {_json_type(obj)}, not an object with a 'criteria' key")
        return out
    _note_duplicates(obj, "the reply's top-level object", out)
    top = _clean_keys(obj, "top-level", out.repairs, out.problems)
    criteria = top.pop("criteria", None)
    summary = top.pop("summary", None)
    if summary is not None:
        if isinstance(summary, str):
            out.summary = summary
        else:
            out.repairs.append(f"ignored a non-text 'summary' ({_json_type(summary)})")
    if top:
        out.repairs.append(f"ignored extra top-level field(s) {_names(top)}")
    if criteria is None:
        out.problems.append("the JSON object has no 'criteria' key")
        return out
    if not isinstance(criteria, dict):
        out.problems.append(f"'criteria' is {_json_type(criteria)}, not an object keyed by criterion id")
        return out
    _note_duplicates(criteria, "'criteria'", out)
    entries = _clean_keys(criteria, "criterion", out.repairs, out.problems)
    known = set(rubric.ids)
    missing = [cid for cid in rubric.ids if cid not in entries]
    unknown = [key for key in entries if key not in known]
    if missing:
        out.problems.append(_plural(missing, "is missing", "are missing"))
    if unknown:
        out.problems.append(_plural(unknown, "is not in the rubric", "are not in the rubric"))
    for cid in rubric.ids:
        if cid in entries:
            judgment = _judgment(cid, entries[cid], out)
            if judgment is not None:
                out.judgments[cid] = judgment
    return out


def _clean_keys(obj: Mapping[str, Any], what: str, repairs: list[str], problems: list[str]) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    for key, value in obj.items():
        clean = clean_key(key)
        if clean != key:
            repairs.append(f"removed invisible characters or spaces from {what} key {_quote(key)}")
        if clean in cleaned:
            problems.append(f"{what} key {_quote(clean)} appears more than once")
        cleaned[clean] = value
    return cleaned


def _note_duplicates(obj: Any, where: str, out: _Validation) -> None:
    for key in getattr(obj, "duplicates", ()):
        out.problems.append(f"key {_quote(key)} appears more than once in {where}")


def _judgment(cid: str, entry: Any, out: _Validation) -> Judgment | None:
    if not isinstance(entry, dict):
        out.problems.append(
            f"criterion '{cid}' is {_json_type(entry)}, not an object with verdict and reasoning"
        )
        return None
    _note_duplicates(entry, f"criterion '{cid}'", out)
    fields = _clean_keys(entry, f"criterion '{cid}'", out.repairs, out.problems)
    verdict = _verdict(cid, fields.pop("verdict", None), out)
    reasoning = fields.pop("reasoning", None)
    if fields:
        out.repairs.append(f"criterion '{cid}': ignored extra field(s) {_names(fields)}")
    if reasoning is None or not isinstance(reasoning, str) or not reasoning.strip():
        if reasoning is None:
            what = "missing"
        elif isinstance(reasoning, str):
            what = "empty"
        else:
            what = _json_type(reasoning)
        out.problems.append(f"criterion '{cid}': reasoning is {what} (give one sentence)")
        return None
    if len(reasoning) > MAX_REASONING_CHARS:
        out.repairs.append(
            f"criterion '{cid}': reasoning cut to its first {MAX_REASONING_CHARS:,} of"
            f" {len(reasoning):,} characters"
        )
        reasoning = reasoning[:MAX_REASONING_CHARS] + "…"
    return Judgment(verdict, reasoning) if verdict is not None else None


def _verdict(cid: str, value: Any, out: _Validation) -> Verdict | None:
    if value is None:
        out.problems.append(f"criterion '{cid}': verdict is missing; use one of {_ENUM}")
        return None
    if not isinstance(value, str):
        out.problems.append(
            f"criterion '{cid}': verdict {json.dumps(value)} is not one of {_ENUM} (it must be a string)"
        )
        return None
    canonical = _CANONICAL.get("".join(ch for ch in value if not invisible(ch)).strip().casefold())
    if canonical is None:
        out.problems.append(f"criterion '{cid}': verdict {_quote(value)} is not one of {_ENUM}")
        return None
    if canonical != value:
        out.repairs.append(f"criterion '{cid}': verdict {_quote(value)} read as \"{canonical}\"")
    return canonical


# ---------------------------------------------------------------------------------------------------
# Messages.
# ---------------------------------------------------------------------------------------------------


def _quote(text: str) -> str:
    # Reply text quoted back into a prompt: escaped (invisible characters show as \\u200b) and short.
    shown = json.dumps(text, ensure_ascii=True)
    return shown if len(shown) <= _QUOTE_MAX else shown[: _QUOTE_MAX - 2] + '…"'


def _names(obj: Mapping[str, Any]) -> str:
    return ", ".join(_quote(k) for k in obj)


def _plural(ids: list[str], one: str, many: str) -> str:
    if len(ids) == 1:
        return f"criterion {_quote_id(ids[0])} {one}"
    return f"criteria {', '.join(_quote_id(i) for i in ids)} {many}"


def _quote_id(cid: str) -> str:
    return f"'{cid}'" if re.fullmatch(r"[a-z][a-z0-9_]*", cid) else _quote(cid)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
