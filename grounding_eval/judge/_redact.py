"""Finding an API key in what a server sent back, in each form servers echo it, so it can be scrubbed.

A judge API that echoes the key (an error body, a debugging proxy, a model repeating a header) must not
get it into a reply, an error message or a cache file, and servers seldom echo it verbatim:
:func:`secret_pattern` builds one regular expression for the key as written, URL-, JSON-, HTML-entity-,
hex- and base64-encoded, shortened (``sk-ab…wxyz``), in another case and without its vendor prefix. The
forms and what is not found: docs/explanation/security.md#judges-and-keys. :func:`key_shape` finds text
shaped like *some* key, for files where the key itself is not known (``share``).

Budget: literals, character classes, one chain of optional prefixes and one separator run before an
alternation of suffixes. Nothing matches one text in two ways, so an attempt costs at most the separator
run plus a few times the key's length (O(len(text) x len(key)) at worst), and in practice one pass: an
attempt dies at its first character unless the text there looks like the key.
"""

from __future__ import annotations

import base64
import json
import re
from functools import cache
from typing import Any, Final

__all__ = [
    "MIN_FORM_CHARS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_NAME",
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

_PREFIX_MIN: Final = 3  # characters of the key shown before "…" in a shortened echo with a suffix
_SUFFIX_MIN: Final = 3  # characters shown after it
_PREFIX_ALONE_MIN: Final = 8  # characters shown before a trailing "…" with no suffix
# "…" also as JSON writes it in an error body it did not decode (ensure_ascii: "\u2026").
_ELLIPSIS: Final = r"(?:…|\\u2026|\.{2,}|\*{2,})"
# RFC 3986 unreserved characters: the ones urllib.parse.quote never encodes.
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
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


def secret_pattern(secret: str) -> re.Pattern[str] | None:
    """Return one pattern matching ``secret`` in every form listed in the module docstring.

    Returns ``None`` for an empty secret (nothing to scrub).
    """
    if not secret:
        return None
    return _compiled(secret)


@cache
def _compiled(secret: str) -> re.Pattern[str]:
    forms: list[str] = []
    starts: set[str] = set()  # every character a form can start with
    # The key itself first, then each prefix-stripped rest, longest first: where two forms match at the
    # same place, the one covering more of the key wins.
    for variant in _variants(secret):
        first = variant[0]
        forms.append(f"(?i:{_char_encoded(variant)})")
        starts |= {first, first.lower(), first.upper(), "&", "%", "\\"}
        if len(variant) >= MIN_FORM_CHARS:
            for form in _base64_forms(variant.encode("utf-8")):
                forms.append(form)
                starts |= (
                    {"+", "-"}
                    if form.startswith("[+-]")
                    else {"/", "_"}
                    if form.startswith("[/_]")
                    else {form[0]}
                )
            forms.append(f"(?i:{_hex(variant)})")
            lead = f"{variant.encode('utf-8')[0]:02x}"[0]
            starts |= {lead, lead.upper(), "\\"}
            forms += [f"(?i:{form})" for form in _shortened(variant)]
    # One look at the next character before trying the alternatives: without it every position of the
    # text tries each form (some 40 times slower on text that holds no key).
    guard = "".join(re.escape(c) for c in sorted(c for c in starts if len(c) == 1))
    return re.compile(f"(?=[{guard}])(?:{'|'.join(forms)})")


def _variants(secret: str) -> list[str]:
    """The key, and the key without each longer run of its leading prefix segments."""
    out, rest = [secret], secret
    while (match := _PREFIX_SEGMENT.match(rest)) and len(rest) - match.end() >= MIN_FORM_CHARS:
        rest = rest[match.end() :]
        out.append(rest)
    return out


def redact(value: Any, pattern: re.Pattern[str] | None) -> Any:
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


def _char_encoded(secret: str) -> str:
    """Each character as itself or URL-, JSON- or HTML-entity-encoded (the pattern is used ignoring case,
    so the encodings of the character's other case are listed too: ``é`` is ``%C3%A9``, ``É`` ``%C3%89``)."""
    parts = []
    for ch in secret:
        alternatives = [re.escape(ch)]
        for same in dict.fromkeys(c for c in (ch, ch.lower(), ch.upper()) if len(c) == 1):
            alternatives += _entities(same)
            if same in _UNRESERVED:
                continue
            alternatives.append("".join(f"%{b:02x}" for b in same.encode("utf-8")))
            if same == " ":
                alternatives.append(r"\+")
            # As JSON may write it in a body no one decoded: "\/", "\"", "\\", or "\u00e9".
            if same in '/"\\':
                alternatives.append(re.escape("\\" + same))
            elif not same.isascii() or not same.isprintable():
                alternatives.append(re.escape(json.dumps(same)[1:-1]))
        parts.append(f"(?:{'|'.join(dict.fromkeys(alternatives))})")
    return "".join(parts)


def _entities(ch: str) -> list[str]:
    """``ch`` as an HTML character reference: decimal and hex (any leading zeros) and its named ones."""
    named = sorted(name for name, value in _html5().items() if value == ch and name.endswith(";"))
    return [f"&\\#0*{ord(ch)};", f"&\\#x0*{ord(ch):x};", *(f"&{re.escape(name)}" for name in named)]


@cache
def _html5() -> dict[str, str]:
    from html.entities import html5

    return html5


def _hex(secret: str) -> str:
    """The key's UTF-8 bytes in hex: contiguous, each byte after ``\\x``, or bytes split by ``:``/``-``/space."""
    octets = [f"{b:02x}" for b in secret.encode("utf-8")]
    plain = "".join(octets)
    escaped = "".join(rf"\\x{o}" for o in octets)
    split = "(?:" + "|".join(re.escape(sep).join(octets) for sep in (":", "-", " ")) + ")"
    return f"(?:{escaped}|{plain}|{split})"


def _b64_class(text: str) -> str:
    # One pattern for both alphabets: "+" or "-" at 62, "/" or "_" at 63.
    return "".join({"+": "[+-]", "/": "[/_]"}.get(ch, ch) for ch in text)


def _base64_forms(data: bytes) -> list[str]:
    alone = base64.b64encode(data).decode("ascii").rstrip("=")
    forms = [_b64_class(alone) + "={0,2}"]
    for offset in range(3):
        # The characters fully determined by the key's bits when it starts `offset` bytes into a group.
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = (4 * offset + 2) // 3
        last = (8 * (offset + len(data))) // 6
        forms.append(_b64_class(encoded[first:last]))
    return forms


def _shortened(secret: str) -> list[str]:
    prefix = _prefixes(secret, _PREFIX_MIN)
    suffix = _suffixes(secret, _SUFFIX_MIN)
    alone = _prefixes(secret, _PREFIX_ALONE_MIN)
    return [f"{prefix}{_ELLIPSIS}{suffix}", f"{alone}{_ELLIPSIS}"]


def _prefixes(secret: str, minimum: int) -> str:
    """Any proper prefix of ``secret`` with at least ``minimum`` characters, longest first.

    Written as a chain of optional groups (``abc(?:d(?:e)?)?``): each starts with a literal, so a given
    text matches it in one way per length, and backing off to a shorter prefix costs one step.
    """
    core, rest = secret[:minimum], secret[minimum:-1]
    tail = ""
    for ch in reversed(rest):
        tail = f"(?:{re.escape(ch)}{tail})?"
    return re.escape(core) + tail


def _suffixes(secret: str, minimum: int) -> str:
    """Any proper suffix of ``secret`` with at least ``minimum`` characters, longest first.

    An alternation, not nested groups: nested optional groups growing leftwards could match one text in
    many ways for a key that repeats itself, and backtrack exponentially.
    """
    return "(?:" + "|".join(re.escape(secret[i:]) for i in range(1, len(secret) - minimum + 1)) + ")"
