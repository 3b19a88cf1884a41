"""The judge template's section tags, and :func:`neutralize`, which defuses them inside untrusted text.

The answer under review is model output and may try to close its section early or open a fake rubric
(docs/explanation/security.md#the-answer-is-hostile). :func:`neutralize` defuses every opening of a
section tag (:data:`SECTION_TAGS`) — look-alike brackets, HTML references, invisible characters
(``_INVISIBLE_RANGES``) and look-alike letters included — changing nothing else and nothing more when run
twice. The prompt renderers apply it to every untrusted text and the reply readers use it to recognise
an answer's text echoed in a reply; it imports nothing of the package, so both may.
"""

from __future__ import annotations

import re

__all__ = ["SECTION_TAGS", "neutralize"]

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
