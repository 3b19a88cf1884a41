"""Live mode for citations: ask for a cited section's official page (citeurl's URL for it), and read it.

The page is asked for with the URL check's own machinery (:class:`LivenessChecker`: its deadlines, its
per-answer caps, its refusal of private addresses, its redirects followed hop by hop), so a citation
costs what a URL does and counts against the same limits; its body is read up to :data:`PAGE_BYTES`.

* **KNOWN** only when the page finally reached, after every redirect, is that section's page: the
  section's numbers are in its address (path or query: Texas's ``PR.24.htm#24.005`` is chapter 24's page,
  so a fragment never counts) **and** in its text, and it is not a not-found page.
* **UNKNOWN** when the section's page clearly does not exist: HTTP 404 or 410 at the end of the
  redirects, or a page that says it was not found (its title or first heading: "Page not found",
  "404") or whose address is a not-found address (``/404``, ``…/not-found``), whatever its status.
* **UNCHECKED**, with the reason, for everything else: a chapter's page, a redirect elsewhere, a page
  that does not show the section in its first :data:`PAGE_BYTES`, a page that is not text, a timeout,
  a refusal, a 5xx, a cap reached.

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
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from grounding_eval.verifier.citations import CitationMention, CitationStatus, Lookup
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult

if TYPE_CHECKING:
    from grounding_eval.verifier.liveness import LivenessChecker, Page

__all__ = ["PAGE_BYTES", "page_lookup"]

PAGE_BYTES = 64 * 1024
"""Most bytes of a section's page read: a statute page names its section near the top."""

# A not-found page's title or first heading, or its address (written here: no library says what a
# soft 404 looks like).
_NOT_FOUND_TEXT = re.compile(
    r"\b(?:not found|404|cannot be found|could not be found|can't be found|does not exist|no longer exists"
    r"|page unavailable|no such (?:page|section|document))\b",
    re.IGNORECASE,
)
_NOT_FOUND_ADDRESS = re.compile(
    r"(?:^|[/_.=-])(?:404|not[-_]?found|page[-_]?not[-_]?found|error404)(?:$|[/_.?&=-])", re.I
)
_HEADING = re.compile(r"<(title|h1)\b[^>]*>(?P<text>.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")
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
        status, why = _judged(mention, asked, page)
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
    text = _text(page)
    if _NOT_FOUND_ADDRESS.search(urlsplit(final).path) or (text is not None and _says_not_found(page.body)):
        return CitationStatus.UNKNOWN, f"its official page {reached} is a not-found page ({result.detail})"
    if not _section_in_address(mention.section, final):
        where = "the chapter's page" if final == asked else "not the section's page"
        return CitationStatus.UNCHECKED, f"{reached} is {where} ({result.detail})"
    if text is None:
        kind = page.content_type or "no Content-Type"
        return CitationStatus.UNCHECKED, f"{reached} is not a text page ({kind})"
    if not _section_in_text(mention, text):
        return CitationStatus.UNCHECKED, (
            f"{reached} does not show {mention.section} in its first {PAGE_BYTES // 1024} kB ({result.detail})"
        )
    return CitationStatus.KNOWN, f"its official page {reached} shows {mention.section} ({result.detail})"


def _text(page: Page) -> str | None:
    """The page's text (tags removed, entities read), or None when it is not a text page."""
    kind = page.content_type.split(";", 1)[0].strip().lower()
    if kind and not kind.startswith(_TEXT_TYPES):
        return None
    charset = re.search(r"charset=[\"']?([\w.:-]+)", page.content_type, re.IGNORECASE)
    try:
        decoded = page.body.decode(charset.group(1) if charset else "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know: its digits and dots are ASCII anyway
        decoded = page.body.decode("utf-8", errors="replace")
    return html.unescape(_TAG.sub(" ", decoded))


def _says_not_found(body: bytes) -> bool:
    """Whether the page's title or first heading says it was not found."""
    head = body.decode("utf-8", errors="replace")
    return any(
        _NOT_FOUND_TEXT.search(html.unescape(_TAG.sub(" ", m.group("text")))) for m in _HEADING.finditer(head)
    )


def _pieces(section: str) -> list[str]:
    return [p for p in re.split(r"[.\-‑–/]", section) if p]


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
