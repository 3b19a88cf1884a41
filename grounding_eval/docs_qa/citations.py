"""Citation validity: does every section an answer cites exist in the docs set?

An invented section (``tenant-rights.md#appeals`` when the page has no such heading, a file the set
does not have) is the docs-QA form of a hallucinated citation. What counts as a citation
(grounding-eval's decision, recorded in ``rubrics/docs_qa.yaml``):

* ``name.md#anchor``, ``name.md``, ``dir/name.txt`` … — a path ending in ``.md``, ``.markdown`` or
  ``.txt``, optionally followed by ``#anchor``, written anywhere in the answer (in prose, in Markdown
  links, in backticks);
* an ``http(s)`` URL on a host the docs set publishes at (its ``docs_set.yaml``): it must be the URL of
  one of its documents (after :func:`~grounding_eval.docs_qa.docs_set.normalize_url`), and its
  ``#fragment``, if any, an anchor there. URLs on other hosts are not citations of the docs set; they
  are listed as ``external_urls`` and not judged here.

Budget: two linear regex passes over the answer, then one dictionary lookup per citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from grounding_eval.docs_qa.docs_set import DocsSet, normalize_url

__all__ = ["Citation", "CitationReport", "check_citations"]

_URL: Final = re.compile(r"https?://[^\s<>()\[\]\"'`]+", re.IGNORECASE)
_TRAILING: Final = ".,;:!?*_"
_FILE: Final = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|markdown|txt))(#[\w\-]+)?(?![\w])", re.IGNORECASE
)


@dataclass(frozen=True)
class Citation:
    """One citation found in an answer.

    Attributes:
        text: as written (a URL without its trailing punctuation).
        section: the section id it resolves to (``doc#anchor`` or ``doc``), or ``None`` when its document
            is not in the docs set.
        valid: whether that section exists.
    """

    text: str
    section: str | None
    valid: bool


@dataclass(frozen=True)
class CitationReport:
    """Every citation of an answer, in order of first appearance (each distinct text once)."""

    citations: tuple[Citation, ...]
    external_urls: tuple[str, ...]

    @property
    def invalid(self) -> tuple[str, ...]:
        """The citations (as written) that name no section of the docs set."""
        return tuple(c.text for c in self.citations if not c.valid)

    @property
    def validity(self) -> float | None:
        """Share of valid citations; ``None`` when the answer cites nothing."""
        if not self.citations:
            return None
        return sum(c.valid for c in self.citations) / len(self.citations)


def check_citations(answer: str, docs: DocsSet) -> CitationReport:
    """Find every citation in ``answer`` and check it against ``docs``."""
    hosts = {key.split("/", 1)[0] for key in docs.urls}
    found: dict[str, Citation] = {}
    external: list[str] = []
    rest = answer
    for match in _URL.finditer(answer):
        url = match.group(0).rstrip(_TRAILING)
        rest = rest.replace(match.group(0), " ")
        try:
            key = normalize_url(url)
        except ValueError:
            continue
        if key.split("/", 1)[0] not in hosts:
            if url not in external:
                external.append(url)
            continue
        doc = docs.urls.get(key)
        fragment = urlsplit(url).fragment
        section = None if doc is None else f"{doc}#{fragment}" if fragment else doc
        found.setdefault(url, Citation(url, section, section is not None and docs.has(section)))
    for match in _FILE.finditer(rest):
        text = match.group(0)
        doc = _document(match.group(1), docs)
        section = None if doc is None else doc + (match.group(2) or "")
        found.setdefault(text, Citation(text, section, section is not None and docs.has(section)))
    return CitationReport(tuple(found.values()), tuple(external))


def _document(path: str, docs: DocsSet) -> str | None:
    """The document a cited path names: its id, or the one document whose file name it is."""
    if path in docs.documents:
        return path
    matches = [d for d in docs.documents if d.rsplit("/", 1)[-1] == path]
    return matches[0] if len(matches) == 1 else None
