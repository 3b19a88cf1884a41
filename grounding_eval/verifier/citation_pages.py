"""Live mode for citations: ask for a cited section's official page (citeurl's URL for it), and read it.

The page is asked for with the URL check's own machinery (:class:`LivenessChecker`: its deadlines, its
per-answer caps, its refusal of private addresses, its redirects followed hop by hop), so a citation
costs what a URL does and counts against the same limits; its body is read up to :data:`PAGE_BYTES`.

* **KNOWN** only when the page finally reached, after every redirect, is that section's page: the
  section's numbers are in its address (path or query: Texas's ``PR.24.htm#24.005`` is chapter 24's page,
  so a fragment never counts) **and** in its text, and it is not a not-found page.
* **UNKNOWN** when the section's page clearly does not exist: HTTP 404 or 410 at the end of the
  redirects, or a page that says it was not found — in words, never a bare number (the section's own may
  be 404): its title or a heading ("Page not found", "The document you requested is not available"), or
  words about the page or a search in the first part of its text ("returned 0 documents") — or whose
  address is a not-found address (``…/not-found``), whatever its status. Not-found words win over the
  section's number echoed in the page.
* **UNCHECKED**, with the reason, for everything else: a chapter's page, a redirect elsewhere (a search
  page echoing the number asked, a home page), a page that does not show the section in its first
  :data:`PAGE_BYTES`, a page that is not text, a timeout, a refusal, a 5xx, a cap reached.

The page is read in one pass, linear in its length, and the time reading it counts against the
answer's liveness budget.

Citeurl builds four official addresses with plain ``http://`` (Alabama, Alaska, Rhode Island, West
Virginia): they are asked over ``https://``, and a host that does not answer over TLS leaves the citation
UNCHECKED with the reason; nothing is asked in clear text.

**Recorded for offline runs**: a live run with a liveness snapshot (``liveness_snapshot``) appends each
KNOWN or UNKNOWN decision to it as a row with a ``citation`` column (``LIVE``: the section's page,
``DEAD``: no such page). Every later run, offline too, reads that row and decides the same citation the
same way without asking; a row without ``citation`` (a URL's) says only that an address answered, and
is never taken for a section's page.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from grounding_eval.verifier.citations import CitationMention, CitationStatus, Lookup
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult

if TYPE_CHECKING:
    from grounding_eval.verifier.liveness import LivenessChecker, Page

__all__ = ["PAGE_BYTES", "page_lookup", "section_page"]

PAGE_BYTES = 64 * 1024
"""Most bytes of a section's page read: a statute page names its section near the top."""

# A not-found page is told by its words, never by a bare number (the section's own may be 404), or by its
# status (written here: no library says what a soft 404 looks like). In its title or headings, any of
# these; in the first part of its text, only words about the page or the search itself ("does not exist"
# is also statute text).
_NOT_FOUND_HEADING = re.compile(
    r"\b(?:not found|cannot be found|could not be found|can['’]t be found|does not exist|no longer exists?"
    r"|not available|unavailable|no such (?:page|section|document|file)"
    r"|no (?:documents?|results?|matches) (?:were |was )?found|returned (?:0|no|zero) (?:documents?|results?|matches)"
    r"|0 (?:documents?|results?|matches) found)\b",
    re.IGNORECASE,
)
_NOT_FOUND_BODY = re.compile(
    r"\b(?:page not found|404 not found|not found on this server"
    r"|(?:page|document|section|file|resource)s? (?:you (?:requested|are looking for|were looking for) |requested )?"
    r"(?:was not found|could not be found|cannot be found|can['’]t be found|does not exist|no longer exists"
    r"|is not available|is unavailable)"
    r"|no (?:documents?|results?|matches) (?:were |was )?found|returned (?:0|no|zero) (?:documents?|results?|matches)"
    r"|0 (?:documents?|results?|matches) found)\b",
    re.IGNORECASE,
)
_BODY_HEAD = 1000  # characters of a page's text where its not-found message would stand
_NOT_FOUND_ADDRESS = re.compile(
    r"(?:^|[/_.=-])(?:not[-_]?found|page[-_]?not[-_]?found|error[-_]?404|404[-_]?error)(?:$|[/_.?&=-])", re.I
)
# A search page ("/search?q=554.699") echoes what was asked: reached by a redirect, it is not the page.
_SEARCH_PATH = re.compile(r"(?:^|[/_.-])(?:search|results?|find)(?:$|[/_.-])", re.IGNORECASE)
_SEARCH_KEYS = frozenset({"q", "query", "search", "s", "k", "keyword", "keywords", "term", "terms", "text"})
# One pass over a page's markup: a tag's name is at most ten characters and its body holds no "<" or ">",
# so each character is scanned a bounded number of times (the stdlib's HTMLParser has no such bound on
# hostile input, and a lazy heading pattern was quadratic: 31 s on 64 kB of "<h1>").
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]{0,9})?[^<>]*>")
_HEADINGS = frozenset({"title", "h1", "h2", "h3"})
_HIDDEN = frozenset({"script", "style"})
_HEADING_CHARS = 500  # of a heading read (one never closed would run to the page's end)
_TEXT_TYPES = ("text/", "application/xhtml", "application/xml")


def page_lookup(liveness: LivenessChecker) -> Lookup:
    """A :data:`~grounding_eval.verifier.citations.Lookup` for one answer's citations: the snapshot's
    recorded decision first (live or offline), then, live only, the page itself."""

    def look(mention: CitationMention) -> tuple[CitationStatus, str] | None:
        url = mention.url
        if not url or not url.lower().startswith(("https://", "http://")):
            return None
        asked = f"https://{url[len('http://') :]}" if url.lower().startswith("http://") else url
        upgraded = f" (citeurl's {url} asked over https)" if asked != url else ""
        citation = mention.normalized or mention.raw
        recorded = liveness.recorded_page(asked, citation)
        if recorded is not None:
            return _recorded(recorded, asked)
        if liveness.offline:
            return None
        page = liveness.page(asked, PAGE_BYTES)
        started = time.monotonic()
        status, why = _judged(mention, asked, page)
        liveness.spend(time.monotonic() - started)  # (reading the page is the answer's time too)
        why += upgraded
        if status in (CitationStatus.KNOWN, CitationStatus.UNKNOWN):
            live = Liveness.LIVE if status is CitationStatus.KNOWN else Liveness.DEAD
            unrecorded = liveness.record_page(
                asked, citation, LivenessResult(live, why, page.result.http_status)
            )
            why += f"; {unrecorded}" if unrecorded else ""
        return status, why

    return look


def _recorded(result: LivenessResult, url: str) -> tuple[CitationStatus, str]:
    if result.status is Liveness.LIVE:
        return CitationStatus.KNOWN, f"its official page {url} was that section's page ({result.detail})"
    return CitationStatus.UNKNOWN, f"its official page {url} did not exist ({result.detail})"


def _judged(mention: CitationMention, asked: str, page: Page) -> tuple[CitationStatus, str]:
    result, final = page.result, page.url
    reached = asked if final == asked else f"{asked}, redirected to {final},"
    status = result.http_status
    if status in (404, 410):
        return CitationStatus.UNKNOWN, f"its official page {reached} does not exist ({result.detail})"
    if result.status is not Liveness.LIVE:
        return CitationStatus.UNCHECKED, f"its official page {asked} was not confirmed: {result.detail}"
    read = _read(page)
    if _NOT_FOUND_ADDRESS.search(urlsplit(final).path) or (read is not None and read.says_not_found()):
        return CitationStatus.UNKNOWN, f"its official page {reached} is a not-found page ({result.detail})"
    if final != asked and _is_search(final):
        return (
            CitationStatus.UNCHECKED,
            f"{reached} is a search page, not the section's page ({result.detail})",
        )
    if not _section_in_address(mention.section, final):
        where = "the chapter's page" if final == asked else "not the section's page"
        return CitationStatus.UNCHECKED, f"{reached} is {where} ({result.detail})"
    if read is None:
        kind = page.content_type or "no Content-Type"
        return CitationStatus.UNCHECKED, f"{reached} is not a text page ({kind})"
    if not _section_in_text(mention, read.text):
        return CitationStatus.UNCHECKED, (
            f"{reached} does not show {mention.section} in its first {PAGE_BYTES // 1024} kB ({result.detail})"
        )
    return CitationStatus.KNOWN, f"its official page {reached} shows {mention.section} ({result.detail})"


def _is_search(url: str) -> bool:
    parts = urlsplit(url)
    keys = {k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    return _SEARCH_PATH.search(parts.path) is not None or bool(keys & _SEARCH_KEYS)


@dataclass(frozen=True, slots=True)
class _Page:
    """A page's text (tags removed, scripts and styles dropped, entities read) and its title and
    headings' texts."""

    text: str
    headings: tuple[str, ...]

    def says_not_found(self) -> bool:
        """Whether its title or a heading, or the first part of its text, says it was not found."""
        return any(_NOT_FOUND_HEADING.search(h) for h in self.headings) or (
            _NOT_FOUND_BODY.search(self.text, 0, _BODY_HEAD) is not None
        )


def _read(page: Page) -> _Page | None:
    """The page read in one pass, or None when it is not a text page."""
    kind = page.content_type.split(";", 1)[0].strip().lower()
    if kind and not kind.startswith(_TEXT_TYPES):
        return None
    charset = re.search(r"charset=[\"']?([\w.:-]+)", page.content_type, re.IGNORECASE)
    try:
        decoded = page.body.decode(charset.group(1) if charset else "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know: its digits and dots are ASCII anyway
        decoded = page.body.decode("utf-8", errors="replace")
    texts: list[str] = []
    headings: list[list[str]] = []
    heading: str | None = None  # the heading element open, whose text is being collected
    hidden: str | None = None  # the script or style element open, whose text is no text
    at = 0
    for tag in _TAG.finditer(decoded):
        if hidden is None and tag.start() > at:
            texts.append(decoded[at : tag.start()])
            if heading is not None:
                headings[-1].append(texts[-1])
        at = tag.end()
        closing, name = tag.group(1) == "/", (tag.group(2) or "").lower()
        if hidden is not None:
            hidden = None if closing and name == hidden else hidden
        elif name in _HIDDEN and not closing:
            hidden = name
        elif name in _HEADINGS:
            heading = None if closing else name
            if not closing:
                headings.append([])
        texts.append(" ")
    if hidden is None:
        texts.append(decoded[at:])
        if heading is not None:
            headings[-1].append(texts[-1])
    said = tuple(" ".join(html.unescape("".join(h)[:_HEADING_CHARS]).split()) for h in headings)
    return _Page(html.unescape("".join(texts)), said)


def _pieces(section: str) -> list[str]:
    return [p for p in re.split(r"[.\-‑–/]", section) if p]


def section_page(mention: CitationMention) -> bool:
    """Whether a live run could decide ``mention``: its official page is a web address naming its
    section (a chapter's page, as ORS's and the Texas codes', decides nothing)."""
    url = mention.url
    if not url or not url.lower().startswith(("https://", "http://")):  # (http is asked over https)
        return False
    return _section_in_address(mention.section, url)


def _section_in_address(section: str | None, url: str) -> bool:
    """Whether the page's path or query names ``section`` (``554.601`` in ``doc.aspx?mcl-554-601``,
    ``37-6-30`` in ``chap=37&art=6&section=30``), its numbers in order and not inside longer numbers.

    The fragment is no part of the address (Texas's ``PR.24.htm#24.005`` is chapter 24's page), nor are
    the host and port.
    """
    if not section:
        return False
    parts = urlsplit(url)
    address = f"{parts.path}?{parts.query}"
    between = r"[^0-9A-Za-z]+(?:[A-Za-z]+[^0-9A-Za-z]+)?"
    pattern = r"(?<![0-9])" + between.join(re.escape(p) for p in _pieces(section)) + r"(?![0-9])"
    return re.search(pattern, address, re.IGNORECASE) is not None


def _section_in_text(mention: CitationMention, text: str) -> bool:
    """Whether the page's text shows the section's number as a number of its own (``554.601``, not
    ``554.6011`` nor ``554.601a``); a number of one or two digits (``705/1``'s ``1``) only after the
    part before it in the citation (``705``), within a few characters."""
    pieces = _pieces(mention.section or "")
    if not pieces:
        return False
    needle = r"\s?[.\-‑–/:]\s?".join(re.escape(p) for p in pieces)
    if len(pieces) == 1 and len(pieces[0]) <= 2 and mention.key and len(mention.key) >= 3:
        needle = re.escape(mention.key[-2]) + r"[^0-9]{1,12}" + needle
    return re.search(r"(?<![0-9.])" + needle + r"(?![0-9A-Za-z])", text) is not None
