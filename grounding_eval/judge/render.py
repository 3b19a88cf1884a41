"""Rendering the judge prompt from a rubric, with the answer under review treated as hostile.

The prompt is ``rubrics/templates/judge.j2``, rendered with Jinja2 ``StrictUndefined`` so that a
missing variable (a Round 3 rubric rendered without its High-Risk item, a template typo) fails loudly
instead of leaving a blank in front of the judge.

The answer is model output and may try to talk to its grader: close its section early, open a fake
rubric, print its own verdicts. Three cheap defences (docs/explanation/security.md#the-answer-is-hostile):
its section's tags carry a nonce from its own SHA-256, which no answer can contain; :func:`neutralize`
defuses every opening of a section tag (:data:`SECTION_TAGS`) in untrusted text — question, sources,
jurisdiction and High-Risk fields too — look-alike brackets, HTML references, invisible characters
(``_INVISIBLE_RANGES``) and look-alike letters included, changing nothing else and nothing more when run
twice; and the system prompt says the answer is content to grade, not instructions.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2

from grounding_eval.errors import DataError
from grounding_eval.judge.parse import reply_schema
from grounding_eval.judge.rubric import CRITERION_FILTERS, RUBRICS_DIR, Criterion, Rubric

__all__ = [
    "SECTION_TAGS",
    "TEMPLATES_DIR",
    "TEMPLATE_NAME",
    "RenderedPrompt",
    "answer_nonce",
    "judge_environment",
    "neutralize",
    "render_blocks",
    "render_judge_prompt",
]

TEMPLATES_DIR = RUBRICS_DIR / "templates"
TEMPLATE_NAME = "judge.j2"

SECTION_TAGS: tuple[str, ...] = (
    "answer_under_review",
    "criteria",
    "criterion",
    "guidance",
    "jurisdiction",
    "reply_format",
    "rubric",
    "source",
    "sources",
    "user_question",
)
"""Every tag ``judge.j2`` uses as a section marker (a test keeps this list and the template in step)."""

# --- What neutralize() treats as a tag opening ------------------------------------------------------
#
# The sets below are written out once, here, and each is pinned by rows of tests/judge/test_render.py.
# Every pattern piece that can repeat is possessive (``*+``): the characters it may consume are disjoint
# from whatever follows it, so giving any back could never produce a match, and the regex engine never
# retries a run. That keeps neutralize() linear (see its docstring for the budget).

_INVISIBLE_RANGES: tuple[tuple[int, int, str], ...] = (
    # Every Unicode "format" (Cf) character, as of Unicode 15: zero-width space and joiners, bidi
    # controls, word joiner and invisible operators, BOM, interlinear annotation marks, tag characters…
    # (a test checks this list against unicodedata). They render as nothing, so a tag name with one
    # inside still reads as the tag to a language model.
    (0x00AD, 0x00AD, "soft hyphen"),
    (0x0600, 0x0605, "Arabic number signs"),
    (0x061C, 0x061C, "Arabic letter mark"),
    (0x06DD, 0x06DD, "Arabic end of ayah"),
    (0x070F, 0x070F, "Syriac abbreviation mark"),
    (0x0890, 0x0891, "Arabic pound/piastre mark above"),
    (0x08E2, 0x08E2, "Arabic disputed end of ayah"),
    (0x180E, 0x180E, "Mongolian vowel separator"),
    (0x200B, 0x200F, "zero-width space, non-joiner, joiner; LRM, RLM"),
    (0x202A, 0x202E, "bidi embeddings and overrides"),
    (0x2060, 0x2064, "word joiner, invisible operators"),
    (0x2066, 0x206F, "bidi isolates, deprecated format characters"),
    (0xFEFF, 0xFEFF, "byte-order mark / zero-width no-break space"),
    (0xFFF9, 0xFFFB, "interlinear annotation"),
    (0x110BD, 0x110BD, "Kaithi number sign"),
    (0x110CD, 0x110CD, "Kaithi number sign above"),
    (0x13430, 0x1343F, "Egyptian hieroglyph format controls"),
    (0x1BCA0, 0x1BCA3, "shorthand format controls"),
    (0x1D173, 0x1D17A, "musical symbol format characters"),
    (0xE0000, 0xE007F, "tag characters (the whole block, unassigned ones too)"),
    # Not Cf, but drawn as nothing (or as an empty cell) by common fonts.
    (0x034F, 0x034F, "combining grapheme joiner"),
    (0x115F, 0x1160, "Hangul choseong/jungseong fillers"),
    (0x17B4, 0x17B5, "Khmer inherent vowels"),
    (0x180B, 0x180D, "Mongolian free variation selectors 1-3"),
    (0x180F, 0x180F, "Mongolian free variation selector 4"),
    (0x2800, 0x2800, "braille pattern blank"),
    (0x3164, 0x3164, "Hangul filler"),
    (0xFE00, 0xFE0F, "variation selectors (U+FE0F: emoji presentation)"),
    (0xFFA0, 0xFFA0, "halfwidth Hangul filler"),
    (0xE0100, 0xE01EF, "variation selectors supplement"),
)
"""Characters that may sit, unseen, between ``<`` and a tag name or between the name's letters."""


def _class_body(ranges: tuple[tuple[int, int, str], ...]) -> str:
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi, _ in ranges
    )


_INVISIBLE_CLASS = _class_body(_INVISIBLE_RANGES)
# Between "<" and the name (and around a "/"): white space and invisible characters, any number.
_GAP = rf"[\s{_INVISIBLE_CLASS}]*+"
# Between two letters of the name: invisible characters only ("<answer under review>" is not a tag).
_INSIDE = rf"[{_INVISIBLE_CLASS}]*+"

_LESS_THAN_CHARS = "<\u02c2\u1438\u2039\u2329\u276c\u276e\u2770\u27e8\u29fc\u3008\ufe64\uff1c"
"""``<`` and the characters a model may read as one: ˂ ᐸ ‹ 〈 ❬ ❮ ❰ ⟨ ⧼ 〈 ﹤ ＜."""

# The HTML character references for "<" (named, decimal, hex; the ";" optional, as HTML parsers allow
# for these): a model that knows HTML reads "&#60;source>" as "<source>". They are rewritten to the
# canonical "&lt;", the same defused form a raw "<" gets, which the system prompt tells the judge is
# part of the answer. One level only: "&amp;lt;" (an escaped entity) is left alone.
_ENTITY = r"&(?:lt|\#0*60|\#x0*3c);?"
_OPENER = rf"(?:[{re.escape(_LESS_THAN_CHARS)}]|{_ENTITY})"
_SLASH = "[/\u2044\u2215\u29f8\uff0f]"  # / ⁄ ∕ ⧸ ／

_HOMOGLYPHS: dict[str, str] = {
    # Cyrillic and Greek letters drawn like the Latin letters the section tags use (case partners come
    # from IGNORECASE: listing "а" covers "А"). Hand-picked from Unicode's confusables for these letters.
    "a": "\u0430\u03b1",  # а α
    "b": "\u042c\u0412\u0392",  # Ь В Β
    "c": "\u0441\u03f2",  # с ϲ
    "d": "\u0501",  # ԁ
    "e": "\u0435\u0395",  # е Ε
    "i": "\u0456\u03b9\u04cf",  # і ι ӏ
    "j": "\u0458\u03f3",  # ј ϳ
    "l": "\u04cf",  # ӏ
    "m": "\u041c\u039c",  # М Μ
    "n": "\u039d",  # Ν
    "o": "\u043e\u03bf",  # о ο
    "p": "\u0440\u03c1",  # р ρ
    "q": "\u051b",  # ԛ
    "r": "\u0433",  # г
    "s": "\u0455",  # ѕ
    "t": "\u0442\u03a4",  # т Τ
    "u": "\u03c5",  # υ
    "v": "\u03bd\u0475",  # ν ѵ
    "w": "\u051d",  # ԝ
    "y": "\u0443\u03a5\u04af",  # у Υ ү
    "_": "\u02cd\u2017\ufe4d\ufe4e\ufe4f",  # ˍ ‗ ﹍ ﹎ ﹏
}


def _letter(ch: str) -> str:
    # ASCII "!"…"~" have fullwidth twins at +0xFEE0 ("ｓｏｕｒｃｅ"), which a model reads as the same word.
    forms = {ch.lower(), ch.upper()}
    twins = "".join(f + chr(ord(f) + 0xFEE0) for f in sorted(forms)) + _HOMOGLYPHS.get(ch, "")
    return f"[{re.escape(twins)}]"


def _tag_pattern() -> re.Pattern[str]:
    names = sorted(SECTION_TAGS, key=len, reverse=True)
    spelled = "|".join(_INSIDE.join(_letter(ch) for ch in name) for name in names)
    # The look-ahead keeps look-alike words such as "<sourcery>" or "<rubrics>" untouched.
    return re.compile(
        rf"{_OPENER}(?P<rest>{_GAP}(?:{_SLASH}{_GAP})?(?:{spelled}))(?![a-z0-9_])", re.IGNORECASE
    )


_TAG_OPEN = _tag_pattern()


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered judge prompt and the versions that produced it (kept with every judgment).

    Attributes:
        system: the system message.
        user: the user message (rubric, context, the answer under review, the reply schema).
        prompt_version: the rubric's ``prompt_version``.
        rubric_id: the rubric's ``id``.
        rubric_version: the rubric's ``version``.
        answer_id: the content-derived nonce on the answer's delimiters.
    """

    system: str
    user: str
    prompt_version: str
    rubric_id: str
    rubric_version: str
    answer_id: str = ""

    def messages(self) -> list[dict[str, str]]:
        """The prompt as chat messages (system, then user)."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


def neutralize(text: str) -> str:
    """Defuse the template's section tags inside untrusted text, changing nothing else.

    Every ``<`` (or look-alike, or HTML reference to ``<``) that opens or closes a tag named in
    :data:`SECTION_TAGS` becomes ``&lt;``; the rest of the text, including the tag name, is left as
    written, so the judge still sees exactly what the answer tried.

    Budget: one regex pass, linear in ``len(text)``. Every repeat in the pattern is possessive, and a
    match attempt starts only at an opener and stops at the next character that cannot continue a tag
    (another opener among them), so no character is read by more than one attempt, and by each at most
    once per tag name (ten). No input size limit is needed: 1 MB of ``<`` followed by zero-width spaces
    takes milliseconds (``benchmarks/judge_degenerate.py``; ``tests/judge/test_degenerate.py`` bounds it).
    """
    return _TAG_OPEN.sub(lambda m: "&lt;" + m.group("rest"), text)


def answer_nonce(answer: str) -> str:
    """The answer delimiters' id: the first 12 hex digits of the answer's SHA-256."""
    return hashlib.sha256(answer.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def judge_environment(templates_dir: str | Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment judge templates render in (``StrictUndefined``, no autoescaping)."""
    return _environment(str(Path(templates_dir) if templates_dir is not None else TEMPLATES_DIR))


@cache
def _environment(templates_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir),
        undefined=jinja2.StrictUndefined,
        # The prompt is plain text for a model, not HTML: escaping would turn the answer's "&" into
        # "&amp;" and change what is graded. Untrusted text is defused by neutralize() instead.
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(CRITERION_FILTERS)
    return env


def render_judge_prompt(
    rubric: Rubric,
    *,
    question: str,
    answer: str,
    jurisdiction: str,
    sources: Sequence[str] = (),
    item: Mapping[str, Any] | None = None,
    templates_dir: str | Path | None = None,
) -> RenderedPrompt:
    """Render the judge prompt for one answer.

    Args:
        rubric: the loaded rubric.
        question: the user's question the answer responds to.
        answer: the answer under review (hostile: delimited and neutralized).
        jurisdiction: the user's jurisdiction as shown to the judge (e.g. ``IL`` or ``Illinois``).
        sources: the source texts the answering model was given (directory blocks or articles); a
            single string counts as one source.
        item: the High-Risk item's fields (``dataclasses.asdict(item)`` works), required when the rubric
            lists ``item_variables``.
        templates_dir: where ``judge.j2`` lives (default ``rubrics/templates``).

    Raises:
        DataError: a template variable is undefined (for example a Round 3 rubric rendered without its
            High-Risk item, or an item missing ``failure_modes``); the Jinja2 error is the cause.
    """
    env = judge_environment(templates_dir)
    if isinstance(sources, str):
        sources = (sources,)
    values = {k: _neutralize_value(v) for k, v in (item or {}).items() if k in rubric.item_variables}
    criteria = [_criterion_context(env, rubric, c, values) for c in rubric.criteria]
    nonce = answer_nonce(answer)
    context = {
        "rubric": {
            "id": rubric.id,
            "version": rubric.version,
            "title": rubric.title,
            "prompt_version": rubric.prompt_version,
        },
        "guidance": rubric.guidance,
        "criteria": criteria,
        "has_negative": any(c.negative for c in rubric.criteria),
        "has_safety": any(c.kind == "safety" for c in rubric.criteria),
        "jurisdiction": neutralize(jurisdiction),
        "question": neutralize(question),
        "sources": [neutralize(s) for s in sources],
        "answer": neutralize(answer),
        "answer_id": nonce,
        "reply_schema": json.dumps(reply_schema(rubric), indent=2, ensure_ascii=False),
    }
    return render_blocks(
        env.get_template(TEMPLATE_NAME), context,
        prompt_version=rubric.prompt_version, rubric_id=rubric.id, rubric_version=rubric.version, answer_id=nonce,
    )  # fmt: skip


def render_blocks(
    template: jinja2.Template, context: Mapping[str, Any], *, prompt_version: str, rubric_id: str,
    rubric_version: str, answer_id: str,
) -> RenderedPrompt:  # fmt: skip
    """A judge template's ``system`` and ``user`` blocks rendered with ``context`` (StrictUndefined).

    Raises:
        DataError: the template uses a variable the context does not have (one line naming the file).
    """
    try:
        parts = {
            name: "".join(template.blocks[name](template.new_context(dict(context)))).strip() + "\n"
            for name in ("system", "user")
        }
    except jinja2.UndefinedError as exc:
        raise DataError(template.filename, f"template variable undefined: {exc.message}") from exc
    return RenderedPrompt(
        system=parts["system"],
        user=parts["user"],
        prompt_version=prompt_version,
        rubric_id=rubric_id,
        rubric_version=rubric_version,
        answer_id=answer_id,
    )


@lru_cache(maxsize=1024)
def _compiled(env: jinja2.Environment, text: str) -> jinja2.Template:
    """A criterion's templated text compiled once per environment (rendering stays per call)."""
    return env.from_string(text)


def _criterion_context(
    env: jinja2.Environment, rubric: Rubric, criterion: Criterion, values: Mapping[str, Any]
) -> dict[str, str]:
    out = {"id": criterion.id, "polarity": criterion.polarity, "kind": criterion.kind}
    for key in ("question", "yes", "partial", "no"):
        text: str = getattr(criterion, key)
        if "{" in text:  # only templated text pays for compiling
            try:
                text = _compiled(env, text).render(values)
            except jinja2.UndefinedError as exc:
                raise DataError(
                    rubric.path,
                    f"criterion {criterion.id!r}: {key}: {exc.message}"
                    " (pass the High-Risk item's fields as item=…)",
                ) from exc
        out[key] = text.strip()
    return out


def _neutralize_value(value: Any) -> Any:
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, Mapping):
        return {neutralize(str(k)): _neutralize_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_neutralize_value(v) for v in value]
    return value
