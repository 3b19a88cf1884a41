"""Find the web addresses an answer cites, and put them in one form that can be compared.

Links are the part of a legal-aid answer a reader acts on first, and the part a model most easily
invents: the verifier sees every link a reader would see (full URLs, protocol-relative ``//host``
links, Markdown links, autolinks, bare domains) without mistaking abbreviations, file names or e-mail
addresses for links, and compares them with the allowlist in a form where cosmetic differences do not
matter but different pages stay different. The extraction, normalization and can-this-host-exist
rules, each a decision the tests pin: docs/verifier/urls.md. Known limit: a TLD delegated after the
pinned ``tldextract`` release is unknown here until the pin moves; the pin is what keeps a verdict
reproducible.
"""

from __future__ import annotations

import functools
import importlib.util
import ipaddress
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, urlsplit

from grounding_eval.verifier.link_refs import parse_references
from grounding_eval.verifier.records import quick_init

if TYPE_CHECKING:  # tldextract (with the requests it imports) costs ~200 ms: import on first use
    import tldextract


__all__ = [
    "FILE_EXTENSION_SUFFIXES",
    "TRACKING_PARAMS",
    "UrlMention",
    "extract_urls",
    "host_matches_domain",
    "is_address_host",
    "is_localhost_name",
    "normalize_url",
    "registered_domain",
    "repeated_link_texts",
    "suffix_problem",
    "url_host",
]

TRACKING_PARAMS: Final[tuple[str, ...]] = (
    # Campaign and click identifiers added by analytics, ad and mail tools; they never select content.
    # A trailing "*" is a prefix. Deliberately absent: "ref" (GitHub/GitLab use ?ref=<branch> to pick
    # content) and "source"/"lang" (sites use them to pick content too).
    "utm_*",
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "twclid",
    "ttclid",
    "li_fat_id",
    "igshid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
)
"""Query parameters removed by :func:`normalize_url` (compared case-insensitively)."""

FILE_EXTENSION_SUFFIXES: Final[frozenset[str]] = frozenset(
    {"cc", "md", "ml", "mov", "pl", "pm", "ps", "py", "rs", "sh", "so", "tf", "zip"}
)
"""Public suffixes that are more often file extensions: a bare ``name.<suffix>`` needs ``www.`` or a path."""

_ESTABLISHED_TLDS: Final = frozenset({"com", "edu", "gov", "info", "mil", "net", "org", "us"})
"""Top-level domains answered without loading the suffix list (a test checks each is in the snapshot).

Almost every link in a US legal-aid answer ends in one of these; loading ``tldextract`` and parsing its
snapshot costs ~300 ms in a fresh process, which promptfoo pays once per assertion call."""
_SINGLE_RULE_TLDS: Final = _ESTABLISHED_TLDS - {"us"}
"""Top-level domains whose only ICANN rule in the snapshot is themselves (a test checks each).

For an ASCII host ending in one of them the ICANN public suffix is that label and the registered
domain the label before it, so a bare domain such as ``lawhelp.org/texas`` is decided without
``tldextract`` (whose import and suffix list cost a fresh process ~100 ms); ``us`` has hundreds of
rules (``ak.us``, ``k12.ak.us``) and goes to the list. Likewise no top-level domain is one character
or all digits (checked too), so ``e.g.``, ``U.S.C.`` and ``Sec.5`` are not links without asking it."""


# Characters that end a link: a browser would percent-encode every one of them, and in prose they are
# delimiters. Whitespace is handled by \s. Zero-width spaces end a link so that an invisible character
# cannot splice prose into it.
_TERMINATORS = (
    '<>"\\\\`|'
    "\u200b\u2060\ufeff"
    "\u201c\u201d\u2018\u2019\u00ab\u00bb"
    "\uff5c\uff08\uff09\u300c\u300d\u300e\u300f\u3010\u3011\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f"
    # En and em dashes, the ellipsis character and emoji pictographs glued to a link are prose
    # ("…/il—a directory", "…/texas…", "…/il👈"): no page a legal-aid answer cites has them in its address.
    "\u2013\u2014\u2026\U0001f000-\U0001faff"
)
# Scripts written without spaces between words: a bare domain may touch them ("请访问lawhelp.org获取帮助").
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_URL_CHAR = rf"[^\s{_TERMINATORS}]"
# What follows "//": userinfo, host (or a bracketed IPv6 literal) and port, then the path. The authority
# stops at characters no host holds, so that "https://x.org,then", "[https://x.org]next" and
# "https://x.org's/page" end at the host (Autolinker's generated cases; browsers would reject the host).
_AFTER_SLASHES = (
    rf"(?:[^\s{_TERMINATORS}/?#,;!*'()\[\]{{}}]++|\[[^\s{_TERMINATORS}/?#\[\]]*+\])*+"
    rf"(?:[/?#]{_URL_CHAR}*+)?"
)

# "http" or "https" in any case, not glued to a letter or digit before it (an underscore is Markdown
# emphasis). The first letter is written out, with the look-behind after it ("[hH](?<![^\W_][hH])" is a
# look-behind before the h: no other character matches "h" case-insensitively), so that the regex
# engine skips, in C, every position that holds no h. ("_https://…_" is emphasis: extract_urls.)
_SCHEME_RE: Final = re.compile(rf"[hH](?<![^\W_][hH])(?i:ttps?)://{_AFTER_SLASHES}")
# A protocol-relative link ("//host/path", the page's own scheme): not glued to a word, a number, emphasis,
# another scheme's "://", a third slash, a path or an e-mail address. The slashes come first, the
# look-behind after them, so that the engine skips, in C, every position that holds no "//" (a
# look-behind first is tried at every character: 50 times slower on a plain answer).
_RELATIVE_RE: Final = re.compile(rf"//(?<![\w:/\\@.]//)(?=[^\W_]|\[){_AFTER_SLASHES}")
_BARE_WORD = rf"[^\W{_UNSPACED}]"  # a bare host's letters: no ideograph, kana or hangul (see _UNSPACED)
# A label: letters, digits, underscores and hyphens, neither end a hyphen or an underscore (an underscore
# only in a subdomain: _valid_bare). Written with _BARE_WORD once, not three times: each copy costs a fresh
# process ~1 ms to compile (re builds a 64k map for _UNSPACED's ranges per copy), and it matches, longest
# first, what "A(?:(?:A|-)*A)?" does (tests/verifier/test_linear_equivalence.py).
_BARE_LABEL = rf"(?![-_])(?:{_BARE_WORD}|-)+(?<![-_])"
_BARE_RE: Final = re.compile(
    # Not glued to a word, a path, an e-mail local part or a longer host. A backslash before it is a path
    # separator or a delimiter, told apart by what stands around it (_backslash_delimits).
    rf"(?<![^\W{_UNSPACED}])(?<![@.\-/])"
    # A host holds a full stop after its first label: said first, so that a word of prose is passed
    # over at the first character that is not [\w-] (most of extract_urls' time was trying each word
    # as a host). It changes no match: whatever the host matches, [\w-]* then "." matches too.
    r"(?=[\w-]*\.)"
    rf"(?P<host>(?>{_BARE_LABEL}(?:\.{_BARE_LABEL})+))"  # atomic: no retreat to a shorter host
    rf"(?![^\W{_UNSPACED}])(?![@-])"  # not the local part of an e-mail address
    r"(?::(?P<port>\d+))?"
    rf"(?P<rest>[/?#]{_URL_CHAR}*)?"
)
# [text](dest "title"): one level of brackets in the text and of parentheses in the destination
# (Wikipedia-style). Possessive quantifiers: no backtracking, so hostile input stays linear.
_MD_LINK_RE: Final = re.compile(
    r"\[(?P<text>[^\[\]\n]*+(?:\[[^\[\]\n]*+\][^\[\]\n]*+)*+)\]"
    r"\([ \t]*+"
    r"(?:<(?P<angle>[^<>\n]*+)>|(?P<dest>(?:[^\s()]|\([^\s()]*+\))++))"
    r"(?:[ \t]++(?:\"[^\"\n]*+\"|'[^'\n]*+'))?+"
    r"[ \t]*+\)"
)
_SCHEME_PREFIX_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_ASCII_LABEL_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# A subdomain label may hold underscores ("files_2024.lawhelp.org"): browsers open such hosts, and GFM's
# autolinks allow them outside the last two labels, where no registrar allows them.
_SUBDOMAIN_LABEL_RE: Final = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")

_ALWAYS_TRIM: Final = frozenset(".,;:!?*")
_CLOSERS: Final = {")": "(", "]": "[", "}": "{"}
_TRIMMABLE: Final = _ALWAYS_TRIM | frozenset(_CLOSERS) | {"'"}
_TRIMMABLE_END: Final = _TRIMMABLE | {"s"}  # (a possessive 's)
_EMPHASIS: Final = frozenset("_~")
_EMPHASIS_MARKS: Final = frozenset("*_~")
_OPENERS: Final = {"(": ")", "[": "]", "{": "}"}
_OPENS_OR_EMPHASIS: Final = frozenset("([{*_~")  # what may stand before a link opened by a bracket
_TITLE_CASE_SUFFIXES: Final = frozenset({"com", "edu", "info", "net", "org"})
"""Suffixes a bare domain may write in title case (``Google.Com``): no legal citation ends in them,
unlike ``.App``, ``.St`` or ``.Gov`` (``Cal.App``, ``Pa.St``, ``Cal.Gov. Code``), which count in one
case only (or after ``www.``)."""

_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE: Final = _UNRESERVED | frozenset("!$&'()*+,;=:@/")
_QUERY_SAFE: Final = _UNRESERVED | frozenset("!$'()*+,;=:@/?")  # '&' separates pairs, so never raw
_HEX: Final = frozenset("0123456789abcdefABCDEF")


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class UrlMention:
    """One link as it appears in an answer.

    Attributes:
        raw: The link exactly as written (after trailing punctuation is trimmed).
        url: An absolute URL: ``raw``, with ``https://`` added to a bare domain and ``https:`` to a
            protocol-relative ``//host`` link.
        start: Offset of ``raw`` in the text.
        end: Offset just past ``raw`` (``text[start:end] == raw``).
        link_text: The Markdown link text for ``[text](url)`` (for a reference definition, the text of
            the first link using it), else ``None``.
    """

    raw: str
    url: str
    start: int
    end: int
    link_text: str | None


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Created on first use, not at import. No suffix-list URLs and no cache dir: tldextract then reads
    # only the snapshot bundled with the pinned wheel, so results are reproducible and nothing downloads.
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


_START = attrgetter("start")


def extract_urls(text: str) -> list[UrlMention]:
    """Find every web link in ``text``, in order of appearance (repeats are all reported).

    Args:
        text: Answer text, plain prose or Markdown.

    Returns:
        One :class:`UrlMention` per link; see the module docstring for what counts as a link.
    """
    mentions: list[UrlMention] = []
    # Each pass blanks what it consumed (same length, so offsets stay valid) so that later passes do not
    # find links inside it: a Markdown destination is not prose, and "example.com" inside
    # "ftp://example.com" or "http://-example.com" is not a bare domain.
    work = list(text)

    for m in _MD_LINK_RE.finditer(text):
        group = "angle" if m.group("angle") is not None else "dest"
        raw = m.group(group)
        url = _as_link(raw)
        if url is not None:
            mentions.append(UrlMention(raw, url, m.start(group), m.end(group), m.group("text")))
        _blank(work, m.end("text"), m.end())  # from "](" to ")": the text stays visible as prose

    # Reference definitions: each is one mention, credited through the text of the first link that
    # uses it (or its own label when nothing does); the links themselves hold no URL.
    references = parse_references(text)
    first = references.first_reference
    links: dict[str, str | None] = {}  # each distinct destination read once (a pure function of it)
    for d in references.definitions:
        raw = text[d.dest_start : d.dest_end]
        url = links[raw] if raw in links else links.setdefault(raw, _as_link(raw))
        if url is not None:
            used = first.get(d.dest_start)
            mentions.append(UrlMention(raw, url, d.dest_start, d.dest_end, used.text if used else None))
        _blank(work, d.dest_start, d.dest_end)
    for start, end in repeated_link_texts(text):
        _blank(work, start, end)  # "[https://a.org](https://a.org)": one URL, the destination

    # Links that say they are links: a scheme, then "//host" (the page's own scheme, read as https).
    # The prose is rebuilt after a pass only when it blanked something (a join costs ~0.3 ms per 4 kB).
    prose = "".join(work)
    for pattern, absolute in ((_SCHEME_RE, _scheme_link), (_RELATIVE_RE, _relative_link)):
        matched = False
        for m in pattern.finditer(prose):
            link = _explicit_link(prose, m, absolute)
            if link is not None:
                mentions.append(UrlMention(link[0], link[1], m.start(), m.start() + len(link[0]), None))
            _blank(work, m.start(), m.end())
            matched = True
        if matched:
            prose = "".join(work)

    # Each distinct bare match is decided once: its groups, so its verdict, depend on the matched text
    # alone (the look-ahead after the host reads a character of the match, or the one after it when
    # the host ends the match, which then passed it); what stands around it (an opening bracket, a
    # backslash, a contraction) is read first. A wall of repeated domains costs a lookup each.
    bare: dict[str, tuple[str, str] | None] = {}
    # The checks of what stands around a match run only when the text holds what they look for: a wall
    # of domains costs what it cost before them.
    around = any(c in prose for c in "\\([{'")
    for m in _BARE_RE.finditer(prose):
        written, start = m.group(), m.start()
        if around:
            end = m.end()
            before = prose[start - 1] if start else ""
            if before == "\\":
                if not _backslash_delimits(prose, start - 1, end):
                    continue  # "C:\\dir\\lawhelp.org\\x": a file path
            elif before and before in _OPENS_OR_EMPHASIS:
                written = _close_bracket(prose, start, written)
            if prose[end : end + 1] == "'" and m.group("rest") is None and _contraction_at(prose, end):
                continue  # "Tex.Gov't Code": a host does not take a contraction
        if written not in bare:
            raw, host = _trim(written), m.group("host")
            valid = _valid_bare(raw, host, m.group("port"), raw[len(host) :])
            bare[written] = (raw, "https://" + raw) if valid else None
        link = bare[written]
        if link is not None:
            mentions.append(UrlMention(link[0], link[1], start, start + len(link[0]), None))

    mentions.sort(key=_START)
    return mentions


def repeated_link_texts(text: str) -> list[tuple[int, int]]:
    """The spans of Markdown link texts that are their own destination, in order.

    ``[https://www.lsc.gov](https://www.lsc.gov)``, ``[lsc.gov](https://lsc.gov/)``,
    ``[https://www.lsc.gov][1]`` with ``[1]: https://www.lsc.gov``, and a host alone naming the site of
    the page a link opens (``[lsc.gov](https://www.lsc.gov/about)``) each show a reader one URL, so
    :func:`extract_urls` reports the destination alone, and the host written in the text is no name
    of an organization (the pairing drops mentions inside these spans).
    """
    spans = []
    for m in _MD_LINK_RE.finditer(text):
        dest = m.group("angle") if m.group("angle") is not None else m.group("dest")
        if _repeats(m.group("text"), dest):
            spans.append(m.span("text"))
    for ref in parse_references(text).references:
        if _repeats(ref.text, text[ref.definition.dest_start : ref.definition.dest_end]):
            spans.append((ref.text_start, ref.text_end))
    return sorted(spans)


def _repeats(link_text: str, dest: str) -> bool:
    """True when ``link_text`` (emphasis, code marks and angle brackets aside) is the link ``dest``, or
    names its site: a host alone (``[lsc.gov](https://www.lsc.gov/about?utm_source=…)``)."""
    shown = link_text.strip().strip("<>`*_").strip()
    if not shown or "." not in shown or any(c.isspace() for c in shown):
        return False
    shown_url, dest_url = _as_link(shown), _as_link(dest)
    if shown_url is None or dest_url is None:
        return False
    if normalize_url(shown_url) == normalize_url(dest_url):
        return True
    if any(c in shown.split("://", 1)[-1].rstrip("/") for c in "/?#"):
        return False  # a page of its own, which the reader sees besides the one the link opens
    shown_host, dest_host = url_host(shown_url), url_host(dest_url)
    return (
        shown_host is not None and dest_host is not None and _strip_www(shown_host) == _strip_www(dest_host)
    )


def normalize_url(url: str) -> str:
    """Return the canonical form of ``url`` used for allowlist lookup (idempotent).

    A bare domain is read as ``https://``. Input that is not a parsable http(s) URL is returned with
    surrounding whitespace stripped, so that it can only ever equal itself.

    Args:
        url: An absolute http(s) URL or a bare domain.

    Returns:
        ``https://host[:port][/path][?query]`` as described in the module docstring.
    """
    text = url.strip()
    return _normalized(text) if len(text) <= _MEMO_MAX_CHARS else _normalize(text)


def _normalize(text: str) -> str:
    parts = _split(text)
    if parts is None:
        return text
    host, port, path, query = parts
    host = _strip_www(host)
    host_out = f"[{host}]" if ":" in host else host
    port_out = f":{port}" if port is not None and port not in (80, 443) else ""
    path_out = _normalize_path(path)
    query_out = _normalize_query(query)
    return f"https://{host_out}{port_out}{path_out}{'?' + query_out if query_out else ''}"


def url_host(url: str) -> str | None:
    """Return the lower-cased, ASCII (IDNA) host of an http(s) URL, or ``None`` if it cannot be parsed.

    Userinfo is removed the way a browser removes it: ``https://trusted.org@evil.test/`` has host
    ``evil.test``. A backslash counts as a slash, as browsers treat it, so ``https://evil.test\\@a.org``
    has host ``evil.test``. ``www.`` is kept. IPv6 hosts are returned without brackets.

    Args:
        url: An absolute http(s) URL (a bare domain is read as ``https://``).

    Returns:
        The host, or ``None``.
    """
    parts = _split(url.strip())
    return None if parts is None else parts[0]


def registered_domain(host: str) -> str | None:
    """Return the domain under the public suffix: ``www.illinoislegalaid.org`` → ``illinoislegalaid.org``.

    Private suffixes of the public suffix list count (``x.github.io`` → ``x.github.io``,
    ``x.wixsite.com`` → ``x.wixsite.com``): two organizations on one hosting service do not own each
    other's sites. Only the bundled snapshot is used.

    Args:
        host: A host name (any case, Unicode or punycode).

    Returns:
        The registered domain in ASCII, or ``None`` for IP addresses, bare suffixes and unparsable hosts.
    """
    canonical = _canonical_host(host)
    if canonical is None or _is_ip(canonical):
        return None
    result = _extractor().extract_str(canonical, include_psl_private_domains=True)
    return result.top_domain_under_public_suffix or None


def host_matches_domain(host: str, domain: str) -> bool:
    """Return whether ``host`` is ``domain`` or a subdomain of it (on a label boundary, ``www.`` ignored).

    ``sub.trusted.org`` matches ``trusted.org``; ``trusted.org.evil.test`` and ``evil-trusted.org`` do
    not. A ``domain`` that is itself a public suffix (``org``, ``co.uk``) matches nothing, so a bad
    directory entry cannot claim a whole suffix.

    Args:
        host: A host, e.g. from :func:`url_host`.
        domain: A domain an organization owns.

    Returns:
        ``True`` on a match.
    """
    h, d = _canonical_host(host), _canonical_host(domain)
    if h is None or d is None:
        return False
    h, d = _strip_www(h), _strip_www(d)
    if _is_ip(d):
        return h == d
    if not _extractor().extract_str(d).domain:
        return False
    return h == d or h.endswith("." + d)


def is_address_host(host: str) -> bool:
    """Return whether ``host`` is an address rather than a name: an IP literal or a numeric last label.

    Browsers (the WHATWG URL standard) read a host whose last label is a decimal number or ``0x`` hex as
    an IPv4 address (``2130706433`` and ``0x7f.1`` are ``127.0.0.1``) or reject the URL; such a host is
    never a domain name, so neither the suffix rule nor a DNS query applies to it.

    Args:
        host: A host, e.g. from :func:`url_host` (IPv6 with or without brackets).

    Returns:
        ``True`` for an address; ``False`` for a name or an unparsable host.
    """
    canonical = _canonical_host(host)
    if canonical is None:
        return False
    if _is_ip(canonical):
        return True
    last = canonical.rpartition(".")[2]
    if last.isdigit():
        return True
    return last.startswith("0x") and all(c in _HEX for c in last[2:])


def is_localhost_name(host: str) -> bool:
    """Return whether ``host`` is ``localhost`` or a name under it (RFC 6761: always the local machine).

    Args:
        host: A host, any case, with or without a trailing dot.

    Returns:
        ``True`` for ``localhost``, ``LOCALHOST.`` and ``app.localhost``.
    """
    canonical = _canonical_host(host)
    return canonical is not None and (canonical == "localhost" or canonical.endswith(".localhost"))


def suffix_problem(host: str) -> str | None:
    """Say why ``host`` cannot be a name in the public DNS, or return ``None`` if it can be.

    Decided offline from the bundled public suffix snapshot; see the module docstring for the cases
    that are deliberately not this rule (addresses, ``localhost``, bare suffixes).

    Args:
        host: A host, e.g. from :func:`url_host` (any case, Unicode or punycode, trailing dot or not).

    Returns:
        ``'not a real public suffix: ".illinois-legal-aid"'``,
        ``'not a real public suffix: single-label host "legalaid"'``, or ``None`` (also for an
        unparsable host: this rule only speaks about names it can read).
    """
    canonical = _canonical_host(host)
    if canonical is None or is_address_host(canonical) or is_localhost_name(canonical):
        return None
    tld = canonical.rpartition(".")[2]
    if tld in _ESTABLISHED_TLDS:
        return None
    # Ask about "x.<tld>", not the host: a TLD listed only through wildcard rules ("*.ck") is no
    # suffix on its own, so "http://ck/" would otherwise look invented although "ck" is delegated.
    if _extractor().extract_str(f"x.{tld}", include_psl_private_domains=False).suffix:
        return None
    if "." not in canonical:
        return f'not a real public suffix: single-label host "{canonical}"'
    return f'not a real public suffix: ".{tld}"'


# --- extraction helpers -------------------------------------------------------------------------------


def _explicit_link(
    prose: str, m: re.Match[str], absolute: Callable[[str], str | None]
) -> tuple[str, str] | None:
    """The (raw, url) of a scheme or protocol-relative match, trimmed as prose reads it, or ``None``."""
    start = m.start()
    opened = start  # the emphasis run ("_", "~~") written just before the link, if any
    while opened > 0 and start - opened < 3 and prose[opened - 1] in _EMPHASIS:
        opened -= 1
    written = m.group()
    if start and prose[start - 1] in _OPENS_OR_EMPHASIS:
        written = _close_bracket(prose, start, written)
    emphasis, raw = prose[opened:start], _trim(written)
    closed = bool(emphasis) and raw.endswith(emphasis) and len(raw) > len(emphasis)
    if "_" in emphasis and (not closed or prose[opened - 1 : opened].isalnum()):
        return None  # "_http://x", "a_http://x_": glued to a word, no link
    if closed:  # the emphasis' closing half, then the punctuation before it: "_https://x.org/il_."
        raw = _trim(raw[: -len(emphasis)])
    raw = _drop_word_port(raw)
    url = absolute(raw)
    return None if url is None else (raw, url)


def _scheme_link(raw: str) -> str | None:
    return raw if _valid_scheme_url(raw) else None


def _relative_link(raw: str) -> str | None:
    """``https:`` + ``raw`` for a protocol-relative link whose host is localhost, an IP address or a name
    under a real public suffix, by the rules of a bare domain: ``//intake``, ``//e.g``, ``//v1.2.3``,
    ``//Gov`` and ``//Cal.App`` are not links."""
    url = "https:" + raw
    if not _valid_scheme_url(url):
        return None
    authority = re.split(r"[/?#]", raw[2:], maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    split = _split_hostport(hostport)
    if split is None:
        return None
    host = _canonical_host(split[0])
    if host is None:
        return None
    if host == "localhost" or _is_ip(host):
        return url
    written = split[0].removesuffix(".")
    if "." not in written:
        return None  # a suffix alone ("//Gov"): no name under it
    host_end = 2 + len(authority) - len(hostport) + len(split[0])
    return url if _valid_bare(raw[2:], written, None, raw[host_end:]) else None


def _close_bracket(prose: str, start: int, written: str) -> str:
    """``written`` up to the bracket closing the one written just before it (emphasis aside), if any.

    ``text(https://a.org/b)more``: the link opened with the parenthesis ends with the parenthesis that
    closes it, although a word follows. Without an opener before it, a link keeps an inner unbalanced
    closer (GFM: ``www.x.org/search?q=(a))+b``); a balanced pair inside it is kept either way.
    """
    before = start - 1
    while before >= 0 and start - before <= 3 and prose[before] in _EMPHASIS_MARKS:
        before -= 1
    closer = _OPENERS.get(prose[before]) if before >= 0 else None
    if closer is None or closer not in written:
        return written
    opener, depth, pos = _CLOSERS[closer], 0, 0
    # From closer to closer, counting the openers between (str methods: linear, in C).
    while (found := written.find(closer, pos)) >= 0:
        depth += written.count(opener, pos, found) - 1
        if depth < 0:
            return written[:found]
        pos = found + 1
    return written


def _drop_word_port(raw: str) -> str:
    """``raw`` without a colon after its host that no port number follows (``https://x.org:texas``)."""
    scheme_end = raw.find("//") + 2
    if raw.find(":", scheme_end) < 0:
        return raw  # (most links: no colon after the scheme's)
    authority_end = len(raw)
    for sep in "/?#":
        found = raw.find(sep, scheme_end)
        if 0 <= found < authority_end:
            authority_end = found
    host_start = raw.rfind("@", scheme_end, authority_end) + 1 or scheme_end
    if raw.startswith("[", host_start):
        return raw
    colon = raw.find(":", host_start, authority_end)
    if colon < 0 or raw[colon + 1 : authority_end].isdigit() or colon + 1 == authority_end:
        return raw
    return raw[:colon]


def _backslash_delimits(prose: str, backslash: int, end: int) -> bool:
    """Whether the backslash at ``backslash`` opens a link that ends at ``end`` (``\\lawhelp.org\\``),
    rather than separating a file path (``C:\\x\\a.org``, ``\\\\server.org\\share``, ``\\a.org\\dir``)."""
    before = prose[backslash - 1] if backslash else " "
    if not (before.isspace() or before in "([{<\"'*_~>"):
        return False
    return not (prose[end : end + 1] == "\\" and prose[end + 1 : end + 2].isalnum())


def _contraction_at(prose: str, end: int) -> bool:
    """Whether a contraction (``'t``, ``'d``; not the possessive ``'s``) is glued at ``end``."""
    if prose[end : end + 1] != "'" or not prose[end + 1 : end + 2].isalpha():
        return False
    return prose[end + 1] not in "sS" or prose[end + 2 : end + 3].isalnum()


def _blank(work: list[str], start: int, end: int) -> None:
    if end > start:
        work[start:end] = " " * (end - start)  # (one space per character: the length is kept)


def _as_link(dest: str) -> str | None:
    """Return the absolute URL for a Markdown destination that is a web link, else ``None``."""
    if _SCHEME_RE.fullmatch(dest):
        return dest if _valid_scheme_url(dest) else None
    if _RELATIVE_RE.fullmatch(dest):
        return _relative_link(dest)
    m = _BARE_RE.fullmatch(dest)
    if m and _valid_bare(dest, m.group("host"), m.group("port"), dest[len(m.group("host")) :]):
        return "https://" + dest
    return None


def _trim(raw: str) -> str:
    """Strip trailing prose punctuation, keeping closers and quotes that are balanced inside the link.

    Also prose, at the end: a possessive ``'s`` (``https://www.lsc.gov's``), a footnote or citation
    marker (``[^1]``, ``[2]``) and an entity reference after ``&`` (``&gt;``: GFM's autolink rule).
    """
    if not raw or raw[-1] not in _TRIMMABLE_END:
        return raw  # the common case, without counting anything
    # Counts are kept up to date while trimming (not recounted), so a hostile run of punctuation
    # costs linear time.
    counts = Counter(c for c in raw if c in "()[]{}'")
    end = len(raw)
    while end:
        last = raw[end - 1]
        if last == "]" and (marker := _marker_start(raw, end)) is not None:
            counts["["] -= 1
            counts["]"] -= 1
            end = marker
        elif last == ";" and (entity := _entity_start(raw, end)) is not None:
            end = entity
        elif last == "s" and end >= 2 and raw[end - 2] == "'" and counts["'"] % 2 == 1:
            counts["'"] -= 1
            end -= 2
        elif (
            last in _ALWAYS_TRIM
            or (last in _CLOSERS and counts[last] > counts[_CLOSERS[last]])
            or (last == "'" and counts["'"] % 2 == 1)
        ):
            counts[last] -= 1
            end -= 1
        else:
            break
    return raw[:end]


def _marker_start(raw: str, end: int) -> int | None:
    """Where a footnote or citation marker (``[^note-1]``, ``[2]``) ending at ``end`` starts, if one does.

    Looked for backwards within its longest length (not a regex search, which would scan from the
    start of the link: a run of "]" would cost quadratic time)."""
    opening = raw.rfind("[", max(0, end - 23), end - 1)
    if opening < 0:
        return None
    inner = raw[opening + 1 : end - 1]
    if not inner.isascii():
        return None
    if (inner.isdigit() and len(inner) <= 3) or (
        len(inner) > 1 and inner[0] == "^" and inner[1:].replace("-", "").replace("_", "").isalnum()
    ):
        return opening
    return None


def _entity_start(raw: str, end: int) -> int | None:
    """Where an entity reference (``&gt;``) ending at ``end`` starts, if one does (backwards, as above)."""
    amp = raw.rfind("&", max(0, end - 12), end - 1)
    if amp < 0:
        return None
    inner = raw[amp + 1 : end - 1]
    return amp if inner.isascii() and inner.isalnum() else None


def _valid_scheme_url(raw: str) -> bool:
    return _valid_scheme_memo(raw) if len(raw) <= _MEMO_MAX_CHARS else _scheme_url_ok(raw)


def _scheme_url_ok(raw: str) -> bool:
    rest = raw.split("://", 1)[1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    split = _split_hostport(hostport)
    if split is None:
        return False
    host = split[0]
    if not host.startswith("["):
        labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
        if not all(_written_label_ok(label.replace("_", "a")) for label in labels[:-2]) or not all(
            _written_label_ok(label) for label in labels[-2:]
        ):
            return False
    return _canonical_host(host) is not None


def _written_label_ok(label: str) -> bool:
    # As written in prose: ASCII letters, digits and inner hyphens, or any non-ASCII letter, digit,
    # mark or symbol (IDN; "✪df.ws" is a registered domain). "_" (outside subdomains, which the caller
    # lets through) and other ASCII punctuation are not hostname characters, so "http://example.com_"
    # is not a link.
    if not label or label[0] == "-" or label[-1] == "-":
        return False
    return all(
        (c.isascii() and (c.isalnum() or c == "-"))
        or (not c.isascii() and unicodedata.category(c)[0] in "LMNS")
        or c in "\u200c\u200d"
        for c in label
    )


def _valid_bare(raw: str, host: str, port: str | None, after_host: str) -> bool:
    if port is not None and int(port) > 65535:
        return False
    suffix = _bare_suffix(host)
    if suffix is None:
        return False
    if "_" in host and "_" in host.rsplit(".", suffix.count(".") + 2)[-suffix.count(".") - 2 :][0]:
        return False  # "legal_aid.org": an underscore in the registered name is an identifier
    if suffix in FILE_EXTENSION_SUFFIXES:
        path = re.sub(r"^:\d+", "", after_host)
        has_path = path.startswith("/") and len(path) > 1
        if not (host.lower().startswith("www.") or has_path):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _bare_suffix(host: str) -> str | None:
    """The public suffix of a bare host as written, or ``None`` when such a host is not a link.

    Remembered per host: an answer repeating a domain, or "e.g." a thousand times, asks the suffix
    list once.
    """
    if _canonical_host(host) is None:
        return None
    labels = host.split(".")
    last = labels[-1].lower()
    if len(last) == 1 or last.isdigit():
        return None  # "e.g", "U.S.C", "Sec.5": no top-level domain is one character or a number
    if host.isascii() and last in _SINGLE_RULE_TLDS:
        suffix = last  # (what the suffix list says, without loading it: see _SINGLE_RULE_TLDS)
    elif host.isascii() and not last.startswith("xn--") and not _may_be_top_level(last):
        return None  # "Mr.Smith", "a.or": no rule of the list ends in that label, so no suffix
    else:
        result = _extractor().extract_str(host.lower())
        if not result.suffix or not result.domain:
            return None
        suffix = str(result.suffix)
    written_suffix = ".".join(labels[-(suffix.count(".") + 1) :])
    if written_suffix not in (written_suffix.lower(), written_suffix.upper()) and not (
        labels[0].lower() == "www"  # after www. the writer means a site: "WWW.LawHelp.Org"
        or (suffix in _TITLE_CASE_SUFFIXES and written_suffix.istitle() and len(labels[-2]) > 1)
    ):
        return None  # "Cal.App", "Pa.St": a citation or a missing space; "U.S.Gov": initials
    return suffix


def _may_be_top_level(label: str) -> bool:
    """False when no rule of the bundled public suffix snapshot ends in ``label`` (lower-case ASCII),
    read without importing ``tldextract``, whose import and suffix list cost a fresh process ~200 ms
    for a host such as "Mr.Smith" or "a.or" that ends in no top-level domain. True when the snapshot
    cannot be read: then the list itself is asked."""
    labels = _top_level_labels()
    return not labels or label in labels


@functools.cache
def _top_level_labels() -> frozenset[str]:
    """The last label of every rule of the bundled public suffix snapshot (empty if it is not found)."""
    spec = importlib.util.find_spec("tldextract")  # finds the package without importing it
    folders = spec.submodule_search_locations if spec else None
    try:
        text = (Path(next(iter(folders or ()))) / ".tld_set_snapshot").read_text(encoding="utf-8")
    except (OSError, StopIteration):
        return frozenset()
    return frozenset(
        line.rpartition(".")[2] for line in text.splitlines() if line and not line.startswith("//")
    )


# --- parsing and normalization helpers ----------------------------------------------------------------

# A URL is parsed and normalized several times per answer (allowlist, liveness, owner, jurisdiction),
# and the same few URLs recur across answers; parsing, normalizing and checking a link as written are
# pure functions of the text, so results are remembered — for URLs up to this length only, so the
# memory holds no hostile megabyte.
_MEMO_MAX_CHARS: Final = 2048


def _split(text: str) -> tuple[str, int | None, str, str] | None:
    """Split an http(s) URL into (canonical host, port, path, query); ``None`` if it is not one."""
    return _split_memo(text) if len(text) <= _MEMO_MAX_CHARS else _parse(text)


def _parse(text: str) -> tuple[str, int | None, str, str] | None:
    if text.startswith("//"):
        text = "https:" + text  # protocol-relative: read as https, like a bare domain
    elif not _SCHEME_PREFIX_RE.match(text):
        if "@" in re.split(r"[/?#\\]", text, maxsplit=1)[0]:
            return None  # "mailto:a@b.org" or "a@b.org": an address, not a bare domain with userinfo
        text = "https://" + text
    text = re.sub(r"[\t\r\n]", "", text)  # browsers drop these anywhere in a URL
    scheme, _, rest = text.partition("://")
    if scheme.lower() not in ("http", "https"):
        return None
    # Browsers read "\" as "/" before the query in http(s) URLs; parse the same way, or
    # "https://evil.test\@trusted.org" would look like trusted.org here and open evil.test there.
    before_query, sep, after = rest.partition("?")
    rest = before_query.replace("\\", "/") + sep + after
    try:
        parts = urlsplit("https://" + rest)
    except ValueError:
        return None
    split = _split_hostport(parts.netloc.rpartition("@")[2])
    host = None if split is None else _canonical_host(split[0])
    if split is None or host is None:
        return None
    return host, split[1], parts.path, parts.query


def _split_hostport(hostport: str) -> tuple[str, int | None] | None:
    """Return (host, port or ``None`` when absent), or ``None`` when either is missing or invalid."""
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            return None
        host, tail = hostport[: close + 1], hostport[close + 1 :]
        if tail and not tail.startswith(":"):
            return None
        port_text = tail[1:]
    else:
        host, _, port_text = hostport.partition(":")
    if not host:
        return None
    if not port_text:
        return host, None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        return None
    return host, int(port_text)


def _canonical_host(host: str) -> str | None:
    h = host.strip()
    if ":" in h:  # IPv6, bracketed as in a URL or bare as url_host returns it
        try:
            return ipaddress.IPv6Address(h.removeprefix("[").removesuffix("]")).compressed
        except ValueError:
            return None
    if h.endswith("."):
        h = h[:-1]  # a fully qualified "example.com." is the same host
    if not h or "%" in h:
        return None  # percent-escapes in a host only serve to disguise it
    h = h.lower()
    if not h.isascii():
        try:
            h = h.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    labels = h.split(".")
    if (
        len(h) > 253
        or not all(_ASCII_LABEL_RE.fullmatch(label) for label in labels[-2:])
        or not all(_SUBDOMAIN_LABEL_RE.fullmatch(label) for label in labels[:-2])
    ):
        return None
    return h


def _strip_www(host: str) -> str:
    # Every leading "www." goes (so normalizing twice changes nothing), but never the last dot:
    # "www.org" stays itself.
    while host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return host


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _normalize_percent(text: str, safe: frozenset[str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%" and len(text) > i + 2 and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        out.append(c if c in safe else quote(c, safe="", errors="surrogatepass"))
        i += 1
    return "".join(out)


def _normalize_path(path: str) -> str:
    segments: list[str] = []
    for segment in _normalize_percent(path, _PATH_SAFE).split("/")[1:]:
        if segment == ".":
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return ("/" + "/".join(segments)).rstrip("/")


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return any(lowered.startswith(p[:-1]) if p.endswith("*") else lowered == p for p in TRACKING_PARAMS)


def _normalize_query(query: str) -> str:
    pairs: list[tuple[str, str]] = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, eq, value = piece.partition("=")
        name = _normalize_percent(name, _QUERY_SAFE - {"="})
        if _is_tracking(name):
            continue
        pairs.append((name, eq + _normalize_percent(value, _QUERY_SAFE)))
    pairs.sort(key=lambda pair: pair[0])
    return "&".join(name + rest for name, rest in pairs)


_split_memo = functools.lru_cache(maxsize=4096)(_parse)
_normalized = functools.lru_cache(maxsize=4096)(_normalize)
_valid_scheme_memo = functools.lru_cache(maxsize=4096)(_scheme_url_ok)
