"""Finding an API key in what a server sent back, in each form servers echo it, so it can be scrubbed.

A judge API that echoes the key (an error body, a debugging proxy, a model repeating a header) must not
get it into a reply, an error message or a cache file, and servers seldom echo it verbatim. The rules
(one table for both scrubbers, tests/golden/key_echoes.yaml; the Node one is assertions/judges.cjs):

* **Escapes, by rule.** The text is read through a view (:func:`decoded`) in which every escape of a
  character — URL ``%XX`` (once or twice), JSON and JavaScript ``\\uXXXX``, ``\\u{X}``, ``\\/``, Python
  ``\\xHH``, ``\\UXXXXXXXX``, HTML numeric and named references — is decoded where it stands and the rest
  of it filled, so every mix of them is the key itself, and a match in the view is a span of the text.
  Also octal ``\\163``, CSS ``\\73 `` and ``%uXXXX``; what shows nothing (zero-width characters, a soft
  hyphen, a terminal's colour codes) is fill, and a compatibility form NFKC folds one character for one
  (fullwidth ``ｓ``) is that character. Transformations (reversed, rot13, base32, compressed, split across
  fields) are not chased: an endpoint that transforms the key on purpose is kept from it by where keys go.
* **Whitespace anywhere** inside the key, its hex or its base64 (a line break, an indent, JSON's ``\\n``;
  up to 40 characters at a time), for a key of ``MIN_FORM_CHARS`` and more.
* **Forms:** the key, in any case; without its vendor prefix segments; hex of its bytes (``:``/``-``/space
  separated or not); base64 and base64url (alone, or inside base64 of more bytes at any alignment);
  shortened with an ellipsis (``sk-ab…wxyz``); truncated, once it shows ``TRUNCATED_MIN`` characters of its
  random part. :func:`key_shape` finds text shaped like *some* key, for files where the key itself is not
  known (``share``).

Budget: building the view is one pass (escapes are found with one regular expression). The patterns are
literals, character classes, bounded gaps and chains of optional groups, each starting with a literal, so
nothing matches one text in many ways: an attempt costs at most the key's length times a gap, and dies at
its first character unless the text there looks like the key (a 1 MB reply: tests/judge/test_redact.py).
"""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache
from html.entities import html5
from typing import Any, Final, NamedTuple

__all__ = [
    "MIN_FORM_CHARS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_NAME",
    "TRUNCATED_MIN",
    "SecretPattern",
    "decoded",
    "key_shape",
    "redact",
    "secret_pattern",
]

REDACTED: Final = "[REDACTED]"
MIN_FORM_CHARS: Final = 12
"""Shortest key whose base64, hex and shortened forms are looked for (real API keys are 20 and more)."""

SECRET_NAME: Final = re.compile(r"(?i)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
"""A setting whose name says it holds a secret (``OPENAI_API_KEY``, ``apiKey``, ``HF_TOKEN``): its value
is scrubbed from what a judge hands back and looked for in a shared bundle."""

MIN_SECRET_CHARS: Final = 8
"""Shortest such value looked for verbatim; shorter ones would match prose (only key shapes find them)."""

# A vendor prefix segment: letters and digits ended by "-" or "_" ("sk-", "ant-", "api03-").
_PREFIX_SEGMENT: Final = re.compile(r"[A-Za-z0-9]+[-_]")

_VENDOR_KEY: Final = re.compile(
    r"""(?x)
    sk-[A-Za-z0-9_-]{20,}                                   # OpenAI, Anthropic, OpenRouter, DeepSeek
    | [sr]k_(?:live|test)_[A-Za-z0-9]{16,}                  # Stripe
    | (?:AKIA|ASIA)[0-9A-Z]{16}\b                           # AWS access key id
    | AIza[0-9A-Za-z_-]{35}                                 # Google API key
    | gh[pousr]_[A-Za-z0-9]{36,} | github_pat_[A-Za-z0-9_]{40,}   # GitHub
    | xox[abprs]-[A-Za-z0-9-]{10,}                          # Slack
    | hf_[A-Za-z0-9]{30,}                                   # Hugging Face
    | gsk_[A-Za-z0-9]{40,}                                  # Groq
    | -----BEGIN[A-Z\ ]*PRIVATE\ KEY-----
    | Bearer\s+[A-Za-z0-9._~+/-]{20,}
    """
)
# Each vendor form's literal start: the text is searched for these (C speed), the pattern tried there.
_VENDOR_STARTS: Final = (
    "sk-", "sk_", "rk_", "AKIA", "ASIA", "AIza", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "hf_", "gsk_", "-----BEGIN", "Bearer",
)  # fmt: skip
# A literal value given to a key-like name (apiKey: …, "api_key": "…", TOKEN=…): at least 16 characters
# with a letter and a digit; a reference ({{ env.X }}, ${X}, $X, os.environ[...]) is not one.
_ASSIGNED_KEY: Final = re.compile(
    r"""(?ix)
    (?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|auth[_-]?token|token|password|passwd)\b
    ["']?\s*[:=]\s*["']?
    (?=[a-z0-9._~+/=-]*[0-9])(?=[a-z0-9._~+/=-]*[a-z])[a-z0-9._~+/=-]{16,}
    """
)
# (a word inside those names, how many characters before it each name may start): "api_key" has "key"
# 4 characters in, "auth_token" has "token" 5 in. Searched as written, upper-cased and capitalised.
_ASSIGNED_WORDS: Final = (("key", (3, 4, 6, 7)), ("token", (0, 4, 5)), ("secret", (0,)), ("passw", (0,)))


def key_shape(text: str) -> re.Match[str] | None:
    """The first text in ``text`` shaped like an API key or a private key, whoever's it is: a vendor's
    key prefix with enough characters after it, a private key block, a bearer token, or a literal value
    given to a key-like name (``apiKey: …``, ``"api_key": "…"``, ``TOKEN=…``).

    Budget: each vendor prefix and name word is found with ``str.find`` and the pattern is tried only
    there, so a text with none of them costs a few passes at C speed (a regular expression with these
    alternatives tried at every character cost about a second per MB).
    """
    found: list[re.Match[str]] = []
    for start in _VENDOR_STARTS:
        at = text.find(start)
        while at >= 0:
            match = None if at and _word(text[at - 1]) else _VENDOR_KEY.match(text, at)
            if match:
                found.append(match)
                break
            at = text.find(start, at + 1)
    for word, offsets in _ASSIGNED_WORDS:
        for spelling in dict.fromkeys((word, word.upper(), word.capitalize())):
            at = text.find(spelling)
            while at >= 0:
                match = next(
                    (m for s in (at - o for o in offsets) if s >= 0 and not (s and _word(text[s - 1]))
                     if (m := _ASSIGNED_KEY.match(text, s))),
                    None,
                )  # fmt: skip
                if match:
                    found.append(match)
                    break
                at = text.find(spelling, at + 1)
    return min(found, key=lambda m: m.start()) if found else None


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def secret_pattern(secret: str) -> SecretPattern | None:
    """Return a matcher for ``secret`` in every form listed in the module docstring.

    Returns ``None`` for an empty secret (nothing to scrub).
    """
    if not secret:
        return None
    return _compiled(secret)


class SecretPattern:
    """One secret's forms, matched in the text's decoded view (:func:`decoded`) and reported as spans of the
    text itself (the view keeps every character where it was)."""

    def __init__(self, groups: list[_Group]) -> None:
        self._groups = groups

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secret is in ``text``: sorted, overlapping spans merged."""
        view = decoded(text)
        folded: dict[str, str] = {}

        def has(needle: tuple[str, str]) -> bool:
            kind, piece = needle
            if kind not in folded:
                folded[kind] = _VIEWS[kind](view)
            return piece in folded[kind]

        found = sorted(
            m.span()
            for g in self._groups
            if g.gate is None or any(all(has(n) for n in entry) for entry in g.gate)
            for m in g.pattern.finditer(view)
            if m.end() > m.start()
        )
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def search(self, text: str) -> _Found | None:
        """The first place the secret is in ``text``, or ``None``."""
        spans = self.spans(text)
        return _Found(*spans[0]) if spans else None

    def sub(self, replacement: str, text: str) -> str:
        """``text`` with each place the secret is replaced by ``replacement``."""
        out, at = [], 0
        for start, end in self.spans(text):
            out += [text[at:start], replacement]
            at = end
        return "".join(out) + text[at:] if out else text


class _Found:
    """Where a secret was found (the part of :class:`re.Match` that callers read)."""

    def __init__(self, start: int, end: int) -> None:
        self._span = (start, end)

    def start(self) -> int:
        return self._span[0]

    def end(self) -> int:
        return self._span[1]

    def span(self) -> tuple[int, int]:
        return self._span


@cache
def _compiled(secret: str) -> SecretPattern:
    """The secret's forms in groups, each run only when the text holds one of its needles (see ``_VIEWS``)."""
    key = decoded(secret).replace(_FILL, "")
    long = len(key) >= MIN_FORM_CHARS
    joint = _GAP if long else f"{_FILL}*"
    variants = _variants(key)
    core = variants[-1]
    # The key itself first, then each prefix-stripped rest, longest first: where two forms match at the
    # same place, the one covering more of the key wins; a truncated key is tried last. Each holds the
    # start of the random part (a truncated one shows 12 characters of it).
    main = [_Form(_joined(_atoms(v), joint) + f"{_FILL}*", _cases(v[0])) for v in variants]
    if long:
        main += _truncated(key, core)
    groups = [_group(main, re.IGNORECASE, [[_needle("L", core[:12])]])]
    if long:
        shortened: list[_Form] = []
        entries: list[list[tuple[str, str] | None]] = []
        for variant in variants:
            shortened += _shortened(variant)
            # every suffix of 3 or more characters ends with the last 3
            entries += [[_needle("L", variant[:3]), _needle("L", variant[-3:]), _ELLIPSIS_SEEN],
                        [_needle("L", variant[:8]), _ELLIPSIS_SEEN]]  # fmt: skip
        groups.append(_group(shortened, re.IGNORECASE, entries))
        hex_needle = _needle("H", core.encode("utf-8")[:3].hex())
        groups.append(_group([_hex(v) for v in variants], re.IGNORECASE, [[hex_needle]]))
        b64 = [f for v in variants for f in _base64_forms(v.encode("utf-8"))]
        groups.append(_group(b64, 0, [[_needle("B", f.text[max(0, len(f.text) // 2 - 3) :])] for f in b64]))
    return SecretPattern(groups)


class _Group(NamedTuple):
    pattern: re.Pattern[str]
    gate: (
        list[list[tuple[str, str]]] | None
    )  # run when every needle of one entry is in the text; None: always


def _group(forms: list[_Form], flags: int, entries: list[list[tuple[str, str] | None]]) -> _Group:
    pattern = _union(forms, flags)
    assert pattern is not None  # every group has forms
    if all(all(n is not None for n in entry) for entry in entries):
        return _Group(pattern, [[n for n in entry if n is not None] for entry in entries])
    return _Group(pattern, None)


# The views a group's needles are looked for in: the text's decoded view with its gaps taken out (and a "+",
# which may stand for a key's space), case folded ("L"); with byte separators too, for hex ("H"); with the two
# base64 alphabets made one ("B"); and whether it holds an ellipsis ("E"). A match of a form holds its needle
# in that view, so a form whose needles are all absent cannot match and is not run: a reply is seldom near
# any of the user's keys (assertions/judges.cjs holds the same).
_VIEWS: Final[dict[str, Callable[[str], str]]] = {
    "L": lambda view: re.sub(r"[\s\x01+]+", "", view).casefold(),  # (as re.IGNORECASE folds: ſ is s)
    "H": lambda view: re.sub(r"[\s\x01:-]+", "", view).casefold(),
    "B": lambda view: re.sub(r"[\s\x01]+", "", view).replace("-", "+").replace("_", "/"),
    "E": lambda view: "ellipsis" if re.search(r"…|\.\.|\*\*", view) else "",
}
_NEEDLE_CHARS: Final = 6
_ELLIPSIS_SEEN: Final = ("E", "ellipsis")


def _needle(kind: str, text: str) -> tuple[str, str] | None:
    folded = _VIEWS[kind](text)
    return (kind, folded[:_NEEDLE_CHARS]) if len(folded) >= 3 else None


class _Form(NamedTuple):
    regex: str
    starts: frozenset[str]  # every character a match can start with; empty: any
    text: str = ""  # a base64 form's characters (its needle is taken from them)


def _union(forms: list[_Form], flags: int) -> re.Pattern[str] | None:
    if not forms:
        return None
    alternatives = "|".join(f.regex for f in forms)
    if any(not f.starts for f in forms):
        return re.compile(alternatives, flags)
    # One look at the next character before trying the alternatives: without it every position of the
    # text tries each form (some 40 times slower on text that holds no key).
    guard = "".join(re.escape(c) for c in sorted(set().union(*(f.starts for f in forms))))
    return re.compile(f"(?=[{guard}])(?:{alternatives})", flags)


def _cases(ch: str) -> frozenset[str]:
    return frozenset() if ch.isspace() else frozenset(c for c in (ch, ch.lower(), ch.upper()) if len(c) == 1)


def _variants(secret: str) -> list[str]:
    """The key, and the key without each longer run of its leading prefix segments (the last: its random part)."""
    out, rest = [secret], secret
    while (match := _PREFIX_SEGMENT.match(rest)) and len(rest) - match.end() >= MIN_FORM_CHARS:
        rest = rest[match.end() :]
        out.append(rest)
    return out


def redact(value: Any, pattern: SecretPattern | None) -> Any:
    """Return ``value`` with every match of ``pattern`` in its strings (keys too) replaced by ``[REDACTED]``.

    Dicts and lists are rebuilt; other values come back as they are.
    """
    if pattern is None:
        return value
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, dict):
        return {redact(k, pattern): redact(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, pattern) for v in value]
    return value


# --- the decoded view: each escape decoded where it stands, the rest of it filled -------------------------

_FILL: Final = "\x01"
"""What the rest of a decoded escape becomes in the view (a character no text holds: one in the text is
shown as \x02), so the view keeps every character of the text at its own index."""


# An escape of a character, as a reply would write one: URL (once or twice: %2541) and Python's \x, each one
# UTF-8 character's bytes (bytes that are not one stay as written); JSON and JavaScript (\u0041, \u{41}, \/),
# Python (\U00000041), HTML (&#65; &#x41; &#65 &amp;); and JSON's \n \r \t.
def _utf8(lead: str) -> str:
    more = rf"{lead}[89abAB][0-9A-Fa-f]"
    # longest first: "%25C3%25A9" is é encoded twice, not "%" and "C3"
    return (
        rf"{lead}[fF][0-4](?:{more}){{3}}|{lead}[eE][0-9A-Fa-f](?:{more}){{2}}"
        rf"|{lead}[cdCD][0-9A-Fa-f]{more}|{lead}[0-7][0-9A-Fa-f]"
    )


_URL_BYTES: Final = _utf8("%(?:25)?")
_PY_BYTES: Final = _utf8(r"\\x")
# A terminal's control sequence (a colour: ESC [ 1 m), raw or with ESC escaped: it shows nothing, so the view
# holds only fill for it. First, so that "\x1b[" is not read as the byte \x1b and a "[".
_ANSI: Final = r"(?:\x1b|\\u001[bB]|\\x1[bB]|\\033|\\e)\[[0-9;?]{0,32}[ -/]{0,4}[@-~]"
_ESCAPE_SOURCE: Final = (
    rf"(?=[%\\&\x01\x1b])(?:(?P<ansi>{_ANSI})|(?P<bytes>{_URL_BYTES}|{_PY_BYTES})"
    r"|\\u\{(?P<cp>[0-9A-Fa-f]{1,6})\}|\\u(?P<u4>[0-9A-Fa-f]{4})|\\U(?P<u8>[0-9A-Fa-f]{8})|%u(?P<pu>[0-9A-Fa-f]{4})"
    r"|\\(?P<oct>[0-3][0-7]{2})|\\(?P<css>[0-9A-Fa-f]{1,6})[ \t\n]"
    r"|\\(?P<ctl>[nrt])|\\(?P<lit>[/\"'\\])"
    r"|&\#[xX](?P<hx>[0-9A-Fa-f]{1,8});?|&\#(?P<dec>[0-9]{1,10});?|&(?P<name>[A-Za-z][A-Za-z0-9]{1,31};)"
    r"|\x01)"
)
# Found without groups, then read with them, once per distinct escape (the same few recur).
_ESCAPE: Final = re.compile(re.sub(r"\(\?P<[a-z0-9]+>", "(?:", _ESCAPE_SOURCE))
_ESCAPE_ONE: Final = re.compile(_ESCAPE_SOURCE)
_CONTROL: Final = {"n": "\n", "r": "\r", "t": "\t"}
_INVISIBLE: Final = "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width space/joiners, BOM


def _fold_table() -> dict[int, str]:
    """Each character shown as another one (NFKC, one character for one: fullwidth ``ｓ`` is ``s``, ``ſ`` is
    ``s``, a mathematical bold ``𝐬`` is ``s``), in the blocks that hold such forms; each invisible character
    (``_INVISIBLE``) becomes fill. assertions/judges.cjs builds the same table from the same blocks."""
    table = {ord(c): _FILL for c in _INVISIBLE}
    for low, high in _FOLD_BLOCKS:
        for code in range(low, high + 1):
            char = chr(code)
            if code in table or 0xD800 <= code <= 0xDFFF:
                continue
            folded = unicodedata.normalize("NFKC", char)
            if len(folded) == 1 and folded != char:
                table[code] = folded
    return table


# Latin-1 to CJK symbols (superscripts, letterlike symbols, enclosed and compatibility forms), the
# halfwidth and fullwidth forms, mathematical alphanumerics and enclosed alphanumerics.
_FOLD_BLOCKS: Final = ((0x80, 0x33FF), (0xFB00, 0xFFEF), (0x1D400, 0x1D7FF), (0x1F100, 0x1F1FF))
_FOLD: Final = _fold_table()


def _ranges(codes: list[int]) -> str:
    """A character class of ``codes`` written as runs (``a-z``): one test per run, not per character."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in runs)


_FOLDABLE: Final = re.compile(f"[{_ranges(sorted(_FOLD))}]")


def decoded(text: str) -> str:
    """``text`` with each escape (see ``_ESCAPE``) decoded at its first character and the rest of it filled,
    each invisible character (``_INVISIBLE``) and terminal control sequence filled, and each compatibility
    form folded (``_FOLD``): the same length, each character at its own index, so a match in the view is a
    span of the text."""
    if any(c in text for c in "%\\&\x01\x1b"):
        text = _ESCAPE.sub(_decode, text)
    if text.isascii() or not _FOLDABLE.search(text):
        return text
    return _FOLDABLE.sub(lambda m: _FOLD[ord(m.group())], text)


def _decode(match: re.Match[str]) -> str:
    return _decode_token(match.group())


@lru_cache(maxsize=4096)
def _decode_token(token: str) -> str:
    """One escape, decoded (a token fully determines it: the same few recur, so each is decoded once)."""
    match = _ESCAPE_ONE.fullmatch(token)
    kind = match.lastgroup if match else None
    if match is None or kind is None:
        return "\x02"
    value = match.group(kind)
    if kind == "ansi":
        return _FILL * len(token)
    if kind == "bytes":
        # each byte's two hex digits end its escape: "%41", "%2541", "\\x41"
        digits = [token[i - 2 : i] for i in range(len(token), 0, -1) if i == len(token) or token[i] in "%\\"]
        try:
            char = bytes(int(d, 16) for d in reversed(digits)).decode("utf-8")
        except UnicodeDecodeError:
            char = ""
    elif kind == "ctl":
        char = _CONTROL[value]
    elif kind == "lit":
        char = value
    elif kind == "name":
        char = _ENTITIES.get(value, "")
    else:
        code = int(value, {"dec": 10, "oct": 8}.get(kind, 16))
        char = chr(code) if code <= 0x10FFFF else ""
    return char + _FILL * (len(token) - 1) if char else token


# HTML's named references for the characters up to U+00FF (assertions/judges.cjs holds the same table).
_ENTITIES: Final = {
    name: value
    for name, value in html5.items()
    if name.endswith(";") and len(value) == 1 and ord(value) < 0x100
}

# --- the forms, as patterns over the view -----------------------------------------------------------------

# Between two characters of a form: a line break, an indent, JSON's \n (in the view: whitespace and fill).
_GAP: Final = rf"[\s{_FILL}]{{0,40}}"
# Between two hex digits: that, or a byte separator (":", "-").
_HEX_GAP: Final = rf"[\s{_FILL}:-]{{0,40}}"
_PREFIX_MIN: Final = 3  # characters of the key shown before "…" in a shortened echo with a suffix
_SUFFIX_MIN: Final = 3  # characters shown after it
_PREFIX_ALONE_MIN: Final = 8  # characters shown before a trailing "…" with no suffix
TRUNCATED_MIN: Final = 12
"""Characters of a key's random part (the key after its vendor prefix segments) a truncated echo must
show to be scrubbed: as many as any other derived form needs (``MIN_FORM_CHARS``), and enough that it names
one key (12 base-62 characters are 71 bits: no other text holds them by chance), where the vendor prefix
alone names every key of its kind."""
_ELLIPSIS: Final = rf"(?:…|\.{{2,}}|\*{{2,}}){_FILL}*"
_TOKEN: Final = re.compile(r"[A-Za-z0-9._~+/=-]+")  # a secret written as one token, as keys are


def _atoms(text: str) -> list[str]:
    # A space of the key may come back as "+" (a form's encoding): the view never decodes "+".
    return [r"[\s+]" if ch.isspace() else re.escape(ch) for ch in text]


def _joined(atoms: list[str], joint: str) -> str:
    return joint.join(atoms)


def _hex(secret: str) -> _Form:
    """The key's UTF-8 bytes in hex, byte separators and line breaks allowed (``\\x`` escapes are decoded in
    the view, so they are the key itself)."""
    digits = secret.encode("utf-8").hex()
    return _Form(_HEX_GAP.join(digits) + f"{_FILL}*", _cases(digits[0]))


def _base64_forms(data: bytes) -> list[_Form]:
    """base64 (or base64url) of the key alone, and where it starts 0, 1 or 2 bytes into a group (the
    characters fully determined by its bits), with line breaks anywhere."""

    def form(encoded: str, padded: bool) -> _Form:
        atoms = [{"+": "[+-]", "/": "[/_]"}.get(ch, ch) for ch in encoded]
        tail = rf"(?:{_GAP}={_FILL}*){{0,2}}" if padded else f"{_FILL}*"
        first = {"+": {"+", "-"}, "/": {"/", "_"}}.get(encoded[0], {encoded[0]})
        return _Form(_GAP.join(atoms) + tail, frozenset(first), encoded)

    forms = [form(base64.b64encode(data).decode("ascii").rstrip("="), True)]
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = (4 * offset + 2) // 3
        last = (8 * (offset + len(data))) // 6
        forms.append(form(encoded[first:last], False))
    return forms


def _shortened(secret: str) -> list[_Form]:
    joint = f"{_FILL}*"
    atoms = _atoms(secret)
    prefix = _prefixes(atoms, _PREFIX_MIN, joint)
    # the last characters as written: a shortened echo seldom escapes them, and their n² alternatives stay small
    suffix = "(?:" + "|".join("".join(atoms[i:]) for i in range(1, len(atoms) - _SUFFIX_MIN + 1)) + ")"
    alone = _prefixes(atoms, _PREFIX_ALONE_MIN, joint)
    starts = _cases(secret[0])
    return [_Form(f"{prefix}{_ELLIPSIS}{suffix}", starts), _Form(f"{alone}{_ELLIPSIS}", starts)]


def _truncated(key: str, core: str) -> list[_Form]:
    """The key cut short, once it shows ``TRUNCATED_MIN`` characters of its random part ``core``, with or
    without any run of its vendor prefix segments; only for a key written as one token (a URL's or a
    phrase's beginning is ordinary text)."""
    if not _TOKEN.fullmatch(key) or len(core) <= TRUNCATED_MIN:
        return []
    vendor, starts = "", _cases(core[0])
    for segment in _PREFIX_SEGMENT.findall(key[: len(key) - len(core)]):
        vendor = f"(?:{vendor}{_joined(_atoms(segment), _GAP)}{_GAP})?"
        starts |= _cases(segment[0])  # the chain may start at any segment
    return [_Form(vendor + _prefixes(_atoms(core), TRUNCATED_MIN, _GAP) + f"{_FILL}*", starts)]


def _prefixes(atoms: list[str], minimum: int, joint: str) -> str:
    """Any proper prefix of the key (its ``atoms``) with at least ``minimum`` characters, longest first.

    Written as a chain of optional groups (``a b(?: c(?: d)?)?``): each starts with a joint and a literal, so
    a given text matches it in one way per length, and backing off to a shorter prefix costs one step.
    """
    tail = ""
    for atom in reversed(atoms[minimum:-1]):
        tail = f"(?:{joint}{atom}{tail})?"
    return joint.join(atoms[:minimum]) + tail
