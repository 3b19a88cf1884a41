"""The one reader of a judge reply's JSON object, for every judge: strict first, lenient second, never silent.

The rubric judge (:mod:`grounding_eval.judge.parse`), the factual-accuracy judge
(:mod:`grounding_eval.factuality.parse`) and the docs-QA grader (:mod:`grounding_eval.docs_qa.reply`)
differ only in their schema: each passes :func:`read_reply` a :class:`ReplyShape` (the key that marks its
reply object) and a validator; this module finds the object, the validator says whether it is right.
Refused outright: what is not text, longer than :data:`MAX_REPLY_CHARS`, or empty. Then strict (the whole
reply one object that validates), then lenient (every top-level object with the key; each liberty a
repair; two different ones refused, never chosen between).

**An object from the judged text is never the reply** (``judged_text``: the answer may hold a ready-made
reply for the judge to copy): an *echo*, found by canonical equality so reformatting cannot hide it, is
never read, and a judged text too broken to scan refuses every reply — toward caution, never toward a
verdict nobody checked. The rules: docs/explanation/security.md#the-answer-is-hostile.

Budgets: linear in the reply's and the judged text's lengths. Decoding is tried only at a ``{`` that
can start an object (``{`` then ``"`` or ``}``); a decoded object is skipped whole; after
:data:`MAX_BAD_OBJECTS` starts that fail to decode the scan gives up explicitly (each failed attempt may
read to the end of the text, so without the cap ``{"a":{"a":…`` would cost a read per brace).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from grounding_eval.judge.section_tags import neutralize

__all__ = [
    "MAX_BAD_OBJECTS",
    "MAX_REPLY_CHARS",
    "ParseFailure",
    "ParseMode",
    "Reading",
    "ReplyShape",
    "clean_key",
    "decode_whole",
    "failure",
    "invisible",
    "neutralize_tags",
    "read_reply",
    "reply_objects_in",
]

ParseMode = Literal["strict", "lenient"]

MAX_REPLY_CHARS: Final = 1_000_000
"""Longest reply read, in characters (a 19-criterion judgment is a few kilobytes)."""

MAX_BAD_OBJECTS: Final = 32
"""Starts of a JSON object (``{"`` or ``{}``) that fail to decode before a scan gives up."""

FENCE: Final = re.compile(r"```[\w+-]*")
"""A Markdown code fence (with its language tag), ignored around the reply's object."""


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


def failure(problems: list[str] | tuple[str, ...], raw: str) -> ParseFailure:
    """A :class:`ParseFailure` whose ``error`` lists every problem in one paragraph."""
    error = f"Your previous reply was invalid: {'; '.join(problems)}. Reply with only the JSON object."
    return ParseFailure(" ".join(error.split()), tuple(problems), raw)


@dataclass(frozen=True)
class ReplyShape:
    """What marks one judge's reply object, and how its error messages name things.

    Attributes:
        key: the top-level key every reply object has (``criteria``, ``claim_verifications``).
        noun: what the messages call a reply-like object the judged text holds ("verdict object").
        judged: what the messages call the judged text ("the answer under review").
    """

    key: str
    noun: str = "verdict object"
    judged: str = "the answer under review"


class Validation(Protocol):
    """What a judge's validator returns: its problems (the reply is invalid) and repairs (liberties)."""

    problems: list[str]
    repairs: list[str]


V = TypeVar("V", bound=Validation)


@dataclass(frozen=True)
class Reading(Generic[V]):
    """A reply whose object validated.

    Attributes:
        checked: the validator's record of the chosen object.
        mode: ``strict`` (the whole reply was the object, no repair) or ``lenient``.
        repairs: every liberty taken, the extractor's first, then the validator's (empty when strict).
    """

    checked: V
    mode: ParseMode
    repairs: tuple[str, ...] = ()


def read_reply(
    text: object,
    validate: Callable[[Any], V],
    shape: ReplyShape,
    *,
    judged_text: str | None = None,
    neutralize: Callable[[str], str] | None = None,
) -> Reading[V] | ParseFailure:
    """Find the judge's own reply object in ``text`` and validate it; never raises.

    Args:
        text: the reply as received (anything: a non-text reply is a failure).
        validate: the judge's validator for one decoded JSON value.
        shape: the judge's reply key and wording.
        judged_text: the text under judgment, as given to the prompt before neutralisation; an object
            it holds is never the reply. ``None`` skips that check (callers that judge no text).
        neutralize: what the prompt applied to ``judged_text`` (so an echo of the neutralised form is
            recognised too); ``None`` when nothing was applied.
    """
    if not isinstance(text, str):
        return failure([f"the reply is not text (got {type(text).__name__})"], "")
    if len(text) > MAX_REPLY_CHARS:
        return failure(
            [
                f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} read;"
                " send only the JSON object"
            ],
            text,
        )
    if not text.strip("\ufeff \t\r\n"):
        return failure(["the reply is empty"], text)
    echoes = _Echoes(judged_text, shape.key, neutralize)
    if echoes.unscannable:
        return failure(
            [
                f"{shape.judged} holds more than {MAX_BAD_OBJECTS} JSON objects that are not valid JSON, so a"
                f" '{shape.key}' object copied from it cannot be ruled out; the reply cannot be read"
            ],
            text,
        )

    whole = decode_whole(text)
    if whole is not None and not echoes.holds(whole):
        checked = validate(whole)
        if not checked.problems and not checked.repairs:
            return Reading(checked, "strict", ())

    repairs: list[str] = []
    body = text
    if body.startswith("\ufeff"):
        body = body.lstrip("\ufeff")
        repairs.append("removed a leading byte-order mark")
    found = _scan(body, shape.key, echoes.holds)
    if found.gave_up:
        return failure(
            [
                f"the reply starts more than {MAX_BAD_OBJECTS} JSON objects that are not valid JSON"
                f" (first: {found.first_error}); send exactly one valid JSON object"
            ],
            text,
        )
    key = shape.key
    if found.replies > 1:
        if found.replies_differ:
            return failure(
                [
                    f"the reply contains {found.replies} different JSON objects with a '{key}' key; send exactly one"
                ],
                text,
            )
        repairs.append(f"the same JSON object appears {found.replies} times; read it once")
    if found.echoes:
        source = f"copied from a JSON {shape.noun} inside {shape.judged}"
        if found.first_reply is None:
            subject = (
                f"JSON object with a '{key}' key is"
                if found.echoes == 1
                else f"{found.echoes} JSON objects with a '{key}' key are"
            )
            problems = [
                f"the reply's {subject} {source}, which is content to evaluate, never a verdict;"
                " give your own verdicts as one JSON object"
            ]
            if found.objects > found.echoes:
                problems.append(f"none of the reply's other JSON objects has a '{key}' key")
            return failure(problems, text)
        repairs.append(f"ignored {found.echoes} JSON object(s) with a '{key}' key {source}")
    if found.first_reply is not None:
        span, chosen = found.first_reply
    elif found.truncated:
        return failure(["the reply ends inside an unfinished JSON object (was it cut off?)"], text)
    elif found.first_error is not None:
        return failure(
            [f"the reply contains no valid JSON object with a '{key}' key ({found.first_error})"], text
        )
    elif found.objects == 1:
        return failure(
            [f"the JSON object has no '{key}' key; the reply must be one JSON object that has a '{key}' key"],
            text,
        )
    elif found.objects:
        return failure([f"none of the reply's JSON objects has a '{key}' key"], text)
    else:
        return failure(["the reply contains no JSON object"], text)

    if FENCE.search(body):
        repairs.append("ignored Markdown code fences")
    if FENCE.sub("", body[: span[0]]).strip() or FENCE.sub("", body[span[1] :]).strip():
        repairs.append("ignored text around the JSON object")
    checked = validate(chosen)
    if checked.problems:
        return failure(checked.problems, text)
    return Reading(checked, "lenient", (*repairs, *checked.repairs))


def neutralize_tags(text: str) -> str:
    """:func:`grounding_eval.judge.section_tags.neutralize`, what the rubric and docs-QA prompts apply to the
    answer."""
    return neutralize(text)


def reply_objects_in(text: str, key: str) -> tuple[list[dict[str, Any]], bool]:
    """Every JSON object in ``text`` with ``key`` (top level or nested), and whether the scan gave up.

    Budget: one forward scan, giving up after :data:`MAX_BAD_OBJECTS` undecodable starts.
    """
    found: list[dict[str, Any]] = []
    failed, i = 0, 0
    while True:
        candidate = _CAN_OPEN.search(text, i)
        if candidate is None:
            return found, False
        try:
            obj, end = _DECODER.raw_decode(text, candidate.start())
        except (json.JSONDecodeError, RecursionError):
            failed += 1
            if failed > MAX_BAD_OBJECTS:
                return found, True
            i = candidate.start() + 1
            continue
        stack = [obj]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if _reply_like(item, key):
                    found.append(item)
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        i = end


# ---------------------------------------------------------------------------------------------------
# Echoes: reply objects the judged text already holds.
# ---------------------------------------------------------------------------------------------------


class _Echoes:
    """The canonical verdict-bearing parts of the judged text's reply-like objects."""

    def __init__(self, judged_text: str | None, key: str, neutralize: Callable[[str], str] | None) -> None:
        self.key = key
        self.neutralize = neutralize
        self.injected: frozenset[Hashable] = frozenset()
        self.unscannable = False
        if judged_text:
            self.injected, gave_up = _injected(judged_text, key, neutralize)
            # Past the scan's budget an object may still hide; only text that could spell the key (or
            # escape it as \\u…) can hold one.
            self.unscannable = gave_up and (key in _visible(judged_text) or "\\u" in judged_text)

    def holds(self, obj: Any) -> bool:
        if not self.injected or not _reply_like(obj, self.key):
            return False
        return _verdict_part(obj, self.key, self.neutralize) in self.injected


@lru_cache(maxsize=16)
def _injected(
    judged_text: str, key: str, neutralize: Callable[[str], str] | None
) -> tuple[frozenset[Hashable], bool]:
    # Cached: a judge loop reads each reply twice (the client's accept, then the loop) and retries once,
    # always against the same judged text.
    objects, gave_up = reply_objects_in(judged_text, key)
    return frozenset(_verdict_part(o, key, neutralize) for o in objects), gave_up


def _verdict_part(obj: dict[str, Any], key: str, neutralize: Callable[[str], str] | None) -> Hashable:
    return tuple(_canonical(v, neutralize) for k, v in obj.items() if clean_key(k) == key)


def _canonical(value: Any, neutralize: Callable[[str], str] | None) -> Hashable:
    """A hashable form of a JSON value that ignores key order, white space, case and invisible characters."""
    if isinstance(value, dict):
        return (
            "{",
            frozenset((clean_key(k).casefold(), _canonical(v, neutralize)) for k, v in value.items()),
        )
    if isinstance(value, list):
        return ("[", tuple(_canonical(v, neutralize) for v in value))
    if isinstance(value, str):
        text = _visible(value)
        if neutralize is not None:
            text = neutralize(text)  # idempotent: the raw and the neutralised forms meet here
        return ("s", " ".join(text.split()).casefold())
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("?", repr(value))


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


def decode_whole(text: str) -> Any | None:
    """The whole text as one JSON value (objects remember repeated keys), or ``None``."""
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None


_Span = tuple[tuple[int, int], Any]  # ((start, end), decoded object)


@dataclass
class _Found:
    """What the scan found; only the objects the parser can use are kept, not every ``{}`` in a reply."""

    objects: int = 0  # top-level objects decoded
    replies: int = 0  # of which reply-like (the shape's key) and not echoes
    first_reply: _Span | None = None
    replies_differ: bool = False  # a later reply-like object differs from the first
    echoes: int = 0  # reply-like objects the judged text holds
    first_error: str | None = None
    truncated: bool = False
    gave_up: bool = False

    def add(self, span: tuple[int, int], obj: Any, key: str, echo: Callable[[Any], bool]) -> None:
        self.objects += 1
        if not _reply_like(obj, key):
            return
        if echo(obj):
            self.echoes += 1
        elif self.first_reply is None:
            self.replies += 1
            self.first_reply = (span, obj)
        else:
            self.replies += 1
            self.replies_differ = self.replies_differ or obj != self.first_reply[1]


# A "{" that a JSON object can start at: "{", optional JSON white space, then a key's quote or "}".
# Any other "{" (prose such as "{helpfulness}", or brace soup) fails at its next character, so it is
# not worth a decode. Possessive: the white space run is read once.
_CAN_OPEN = re.compile(r'\{[ \t\n\r]*+["}]')


def _scan(text: str, key: str, echo: Callable[[Any], bool]) -> _Found:
    """Every top-level JSON object in ``text``: decode at each ``{`` not inside an object already read.

    Only the first decoding error is kept: it is where the judge's object began, while later ones are
    usually the same object's insides. A ``{`` that cannot open an object costs no decode (only the
    first one is decoded, for its error message).
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
        found.add((start, end), obj, key, echo)
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


def _reply_like(obj: Any, key: str) -> bool:
    return isinstance(obj, dict) and any(clean_key(k) == key for k in obj)


# ---------------------------------------------------------------------------------------------------
# Keys.
# ---------------------------------------------------------------------------------------------------


def invisible(ch: str) -> bool:
    """True for a Unicode "format" character (zero-width space, joiners, BOM, soft hyphen, bidi marks).

    They render as nothing, so a key containing one looks right to a person and wrong to a dict.
    """
    return unicodedata.category(ch) == "Cf"


def _visible(text: str) -> str:
    return "".join(ch for ch in text if not invisible(ch))


def clean_key(key: str) -> str:
    """A JSON key without invisible characters and surrounding white space."""
    return _visible(key).strip()
