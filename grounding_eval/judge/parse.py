"""The judge's reply: its JSON schema, and a parser that is strict first, lenient second, never silent.

The reply schema is ``{"criteria": {"<criterion_id>": {"verdict": "Yes"|"Partial"|"No", "reasoning":
"<one sentence>"}, ...}, "summary": "<optional>"}``, with every criterion of the rubric present.

:func:`parse_reply` never raises. It returns a :class:`ParsedReply` (``mode`` says whether the reply
was exactly the schema, or needed lenient reading, and ``repairs`` lists every liberty taken) or a
:class:`ParseFailure` whose ``error`` paragraph can be appended to a retry prompt as is.

What lenient reading allows, and what it refuses (each decision is pinned by a row of
``tests/golden/judge_replies.yaml``):

* allowed, recorded as a repair: a leading byte-order mark; Markdown code fences and prose around the
  JSON object; verdicts differing only in case, surrounding white space or invisible format characters
  (``"yes"``, ``" PARTIAL "``); invisible format characters (zero-width space, joiner, BOM…) inside
  keys; extra fields (top level, or beside ``verdict`` / ``reasoning``), which are ignored because they
  cannot change a verdict; the same object repeated verbatim.
* refused: a missing or unknown criterion; a verdict outside the enum after that normalization
  (``"Maybe"``, ``1``, ``true``); an empty or non-text reasoning; a key repeated within one object (JSON
  parsers silently keep the last, which would hide a disagreement); two JSON objects with a
  ``criteria`` key that differ, such as a judge echoing an answer's injected ``{"criteria": …}`` before
  its own: the parser never picks one; invalid JSON, including trailing commas (a model that emits them
  is not following the schema, and "fixing" them means guessing where an object ends).

Reasoning text is kept exactly as written, up to :data:`MAX_REASONING_CHARS`: nothing is normalized,
and a longer reasoning is cut there (``…`` appended), recorded as a repair, so never silently.

Budgets (the reply is model output, so a loop or an attack can make it huge and strange):

* A reply longer than :data:`MAX_REPLY_CHARS` is refused without being read (a :class:`ParseFailure`
  saying so). The HTTP client stops reading a response at the same size.
* Everything else is linear in the reply's length. Finding JSON objects in prose decodes only at a
  ``{`` that can start one (``{`` then ``"`` or ``}``); a decoded object is skipped whole, and after
  :data:`MAX_BAD_OBJECTS` such starts that fail to decode the parser gives up with an explicit failure
  instead of trying the next ``{`` (each failed attempt may read to the end of the reply, so without
  that cap ``{"a":{"a":…`` or ``{"{"{"…`` cost a read per brace: quadratic).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

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

ParseMode = Literal["strict", "lenient"]

MAX_REPLY_CHARS: Final = 1_000_000
"""Longest reply read, in characters (a 19-criterion judgment is a few kilobytes)."""

MAX_REASONING_CHARS: Final = 2_000
"""Longest reasoning kept per criterion; the schema asks for one sentence."""

MAX_BAD_OBJECTS: Final = 32
"""Starts of a JSON object (``{"`` or ``{}``) that fail to decode before the parser gives up."""

_CANONICAL: Mapping[str, Verdict] = MappingProxyType({v.casefold(): v for v in VERDICTS})
_ENUM = ", ".join(f'"{v}"' for v in VERDICTS)
_FENCE = re.compile(r"```[\w+-]*")
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


@dataclass(frozen=True)
class ParseFailure:
    """A reply that could not be read as the schema: an explicit unscored outcome, never a 0.

    Attributes:
        error: one paragraph for the retry prompt ("Your previous reply was invalid: …").
        problems: the individual problems, in the order found.
        raw: the reply text as received.
    """

    error: str
    problems: tuple[str, ...]
    raw: str = field(default="", repr=False)


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


def parse_reply(text: str, rubric: Rubric) -> ParsedReply | ParseFailure:
    """Read a judge reply against ``rubric``: strictly if possible, else leniently, else a failure.

    Never raises.
    """
    if not isinstance(text, str):
        return _failure([f"the reply is not text (got {type(text).__name__})"], "")
    if len(text) > MAX_REPLY_CHARS:
        return _failure(
            [
                f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} read;"
                " send only the JSON object"
            ],
            text,
        )
    if not text.strip("\ufeff \t\r\n"):
        return _failure(["the reply is empty"], text)

    strict = _decode_whole(text)
    if strict is not None:
        result = _validate(strict, rubric)
        if not result.problems and not result.repairs:
            return ParsedReply(result.judgments, "strict", (), result.summary, text)

    repairs: list[str] = []
    body = text
    if body.startswith("\ufeff"):
        body = body.lstrip("\ufeff")
        repairs.append("removed a leading byte-order mark")
    found = _objects(body)
    if found.gave_up:
        return _failure(
            [
                f"the reply starts more than {MAX_BAD_OBJECTS} JSON objects that are not valid JSON"
                f" (first: {found.first_error}); send exactly one valid JSON object"
            ],
            text,
        )
    if found.replies > 1:
        if found.replies_differ:
            return _failure(
                [
                    f"the reply contains {found.replies} different JSON objects with a 'criteria' key;"
                    " send exactly one"
                ],
                text,
            )
        repairs.append(f"the same JSON object appears {found.replies} times; read it once")
    if found.first_reply is not None:
        span, chosen = found.first_reply
    elif found.truncated:
        return _failure(["the reply ends inside an unfinished JSON object (was it cut off?)"], text)
    elif found.first_error is not None:
        return _failure(
            [f"the reply contains no valid JSON object with a 'criteria' key ({found.first_error})"], text
        )
    elif found.first_object is not None and found.objects == 1:
        span, chosen = found.first_object
    elif found.objects:
        return _failure(["none of the reply's JSON objects has a 'criteria' key"], text)
    else:
        return _failure(["the reply contains no JSON object"], text)

    if _FENCE.search(body):
        repairs.append("ignored Markdown code fences")
    if _FENCE.sub("", body[: span[0]]).strip() or _FENCE.sub("", body[span[1] :]).strip():
        repairs.append("ignored text around the JSON object")
    result = _validate(chosen, rubric)
    if result.problems:
        return _failure(result.problems, text)
    return ParsedReply(result.judgments, "lenient", (*repairs, *result.repairs), result.summary, text)


# ---------------------------------------------------------------------------------------------------
# Finding JSON objects in text.
# ---------------------------------------------------------------------------------------------------


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers keys it saw twice (plain dicts keep the last silently)."""

    duplicates: tuple[str, ...] = ()


def _pairs_hook(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    repeated: list[str] = []
    for key, value in pairs:
        if key in obj:
            repeated.append(key)
        obj[key] = value
    if repeated:
        obj.duplicates = tuple(repeated)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook)


def _decode_whole(text: str) -> Any | None:
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None


_Span = tuple[tuple[int, int], Any]  # ((start, end), decoded object)


@dataclass
class _Found:
    """What the scan found; only the objects the parser can use are kept, not every ``{}`` in a reply."""

    objects: int = 0  # top-level objects decoded
    first_object: _Span | None = None
    replies: int = 0  # of which reply-like (a "criteria" key)
    first_reply: _Span | None = None
    replies_differ: bool = False  # a later reply-like object differs from the first
    first_error: str | None = None
    truncated: bool = False
    gave_up: bool = False

    def add(self, span: tuple[int, int], obj: Any, reply_key: str) -> None:
        self.objects += 1
        if self.first_object is None:
            self.first_object = (span, obj)
        if _reply_like(obj, reply_key):
            self.replies += 1
            if self.first_reply is None:
                self.first_reply = (span, obj)
            elif obj != self.first_reply[1]:
                self.replies_differ = True


# A "{" that a JSON object can start at: "{", optional JSON white space, then a key's quote or "}".
# Any other "{" (prose such as "{helpfulness}", or brace soup) fails at its next character, so it is
# not worth a decode. Possessive: the white space run is read once.
_CAN_OPEN = re.compile(r'\{[ \t\n\r]*+["}]')


def _objects(text: str, reply_key: str = "criteria") -> _Found:
    """Every top-level JSON object in ``text``: decode at each ``{`` not inside an object already read.

    An object with a ``reply_key`` key is reply-like (the rubric judge's ``criteria``; other judges
    built on this parser pass their own).

    Only the first decoding error is kept: it is where the judge's object began, while later ones are
    usually the same object's insides.

    Budget: linear in ``len(text)``. The scan for the next candidate ``{`` moves only forward; a
    decoded object is skipped whole; a ``{`` that cannot open an object costs no decode (only the
    first one is decoded, for its error message); and a failed decode, which may read to the end of
    the text and whose error counts lines from its start, happens at most :data:`MAX_BAD_OBJECTS`
    times before the scan gives up (``gave_up``).
    """
    found = _Found()
    failed = 0
    i = 0
    while True:
        candidate = _CAN_OPEN.search(text, i)
        if found.first_error is None:
            brace = text.find("{", i, candidate.start() if candidate else len(text))
            if brace >= 0:
                found.first_error = _decode_error(text, brace)
        if candidate is None:
            break
        start = candidate.start()
        try:
            obj, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError) as exc:
            if found.first_error is None:
                found.first_error = _describe(exc)
            failed += 1
            if failed > MAX_BAD_OBJECTS:
                found.gave_up = True
                break
            i = start + 1
            continue
        found.add((start, end), obj, reply_key)
        i = end
    found.truncated = _unbalanced(text)
    return found


def _decode_error(text: str, start: int) -> str:
    """The decoding error at a ``{`` that cannot open an object (it fails at its next character)."""
    try:
        _DECODER.raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError) as exc:
        return _describe(exc)
    return "invalid JSON"  # not reached: _CAN_OPEN accepts every "{" that can decode


def _describe(exc: json.JSONDecodeError | RecursionError) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"


def _unbalanced(text: str) -> bool:
    """True when text ends inside a ``{`` (string-aware): the signature of a cut-off reply."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth:
            in_string = True  # quotes only delimit strings inside JSON, not in the prose around it
        elif ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
    return depth > 0


def _reply_like(obj: Any, reply_key: str) -> bool:
    return isinstance(obj, dict) and any(_clean_key(k) == reply_key for k in obj)


# ---------------------------------------------------------------------------------------------------
# Validation against the rubric.
# ---------------------------------------------------------------------------------------------------


def _invisible(ch: str) -> bool:
    # Unicode "format" characters: zero-width space/joiners, BOM, soft hyphen, bidi marks. They
    # render as nothing, so a key containing one looks right to a person and wrong to a dict.
    return unicodedata.category(ch) == "Cf"


def _clean_key(key: str) -> str:
    return "".join(ch for ch in key if not _invisible(ch)).strip()


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
    top = _clean_keys(obj, "top-level", out)
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
    entries = _clean_keys(criteria, "criterion", out)
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


def _clean_keys(obj: Mapping[str, Any], what: str, out: _Validation) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    for key, value in obj.items():
        clean = _clean_key(key)
        if clean != key:
            out.repairs.append(f"removed invisible characters or spaces from {what} key {_quote(key)}")
        if clean in cleaned:
            out.problems.append(f"{what} key {_quote(clean)} appears more than once")
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
    fields = _clean_keys(entry, f"criterion '{cid}'", out)
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
    canonical = _CANONICAL.get("".join(ch for ch in value if not _invisible(ch)).strip().casefold())
    if canonical is None:
        out.problems.append(f"criterion '{cid}': verdict {_quote(value)} is not one of {_ENUM}")
        return None
    if canonical != value:
        out.repairs.append(f"criterion '{cid}': verdict {_quote(value)} read as \"{canonical}\"")
    return canonical


# ---------------------------------------------------------------------------------------------------
# Messages.
# ---------------------------------------------------------------------------------------------------


def _failure(problems: list[str], raw: str) -> ParseFailure:
    error = f"Your previous reply was invalid: {'; '.join(problems)}. Reply with only the JSON object."
    return ParseFailure(" ".join(error.split()), tuple(problems), raw)


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
