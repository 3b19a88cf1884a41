"""Live mode for citations: ask for a cited section's official page (citeurl's URL for it).

The page is asked for with the URL check's own machinery (:class:`LivenessChecker`: its deadlines, its
per-answer caps, its refusal of private addresses, its snapshot and cache), so a citation costs what a
URL does and counts against the same limits.

* HTTP 404 or 410: the section's page does not exist — ``UNKNOWN`` (a hard failure).
* HTTP 2xx: ``KNOWN`` — but only when the section itself is in the page's address. A page that names the
  section only in its fragment (Texas: ``PR.24.htm#24.005``) or not at all (a chapter's page) shows that
  the chapter exists, not the section, so the citation stays ``UNCHECKED`` and says so.
* Anything else (a timeout, a refusal, a 5xx, a cap reached): ``UNCHECKED`` with the reason.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from grounding_eval.verifier.citations import CitationMention, CitationStatus, Lookup

if TYPE_CHECKING:
    from grounding_eval.verifier.liveness import LivenessChecker

__all__ = ["page_lookup", "section_page"]


def page_lookup(liveness: LivenessChecker) -> Lookup:
    """A :data:`~grounding_eval.verifier.citations.Lookup` asking ``liveness`` (one answer's view)."""

    def look(mention: CitationMention) -> tuple[CitationStatus, str] | None:
        url = mention.url
        if not url or not url.startswith(("https://", "http://")):
            return None
        result = liveness.check(url)
        status = result.http_status
        if status in (404, 410):
            return CitationStatus.UNKNOWN, f"its official page {url} does not exist (HTTP {status})"
        if status is not None and 200 <= status < 300:
            if _section_in_address(mention.section, url):
                return CitationStatus.KNOWN, f"its official page {url} exists (HTTP {status})"
            return CitationStatus.UNCHECKED, f"{url} is the chapter's page (HTTP {status}), not the section's"
        return CitationStatus.UNCHECKED, f"its official page {url} was not confirmed: {result.detail}"

    return look


def section_page(mention: CitationMention) -> bool:
    """Whether a live run could decide ``mention``: its official page is an http(s) address naming its
    section (a chapter's page, as ORS's and the Texas codes', decides nothing)."""
    url = mention.url
    if not url or not url.startswith(("https://", "http://")):
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
    pieces = [p for p in re.split(r"[.\-‑–/]", section) if p]
    between = r"[^0-9A-Za-z]+(?:[A-Za-z]+[^0-9A-Za-z]+)?"
    pattern = r"(?<![0-9])" + between.join(re.escape(p) for p in pieces) + r"(?![0-9])"
    return re.search(pattern, address, re.IGNORECASE) is not None
