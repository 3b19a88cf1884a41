"""A docs set: a folder of Markdown and text files whose sections are ``file#anchor``.

Format (grounding-eval's):

* every ``*.md`` / ``*.markdown`` / ``*.txt`` file directly in the folder, or below it, is a document;
  its id is its path relative to the folder, with ``/`` separators (``guides/setup.md``);
* in a Markdown file each heading (ATX ``## Title`` or setext ``Title`` / ``-----``) starts a section
  whose anchor is made from the heading text the GitHub way: Markdown emphasis and links reduced to
  their text, lower case, every character that is not a letter, digit, space, ``-`` or ``_`` dropped,
  spaces to ``-``; a repeated anchor gets ``-1``, ``-2``… A section runs to the next heading of any
  level. Text before the first heading belongs to the file only;
* a ``.txt`` file has no headings: it is one section, cited as the file alone;
* an optional ``docs_set.yaml`` in the folder maps documents to the URLs they are published at
  (``urls: {tenant-rights.md: https://www.usa.gov/tenant-rights}``), so an answer citing the URL cites
  the document.

``file`` alone (no anchor) names the whole document and is a valid citation too.

Budget: the folder is read once per process (cached by folder, and each file's size and mtime), at
most :data:`MAX_FILES` files of the pack's usual data-file size limit.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from grounding_eval.errors import DataError
from grounding_eval.files import read_text, read_yaml

__all__ = ["DOC_SUFFIXES", "MAX_FILES", "DocsSet", "Section", "load_docs_set", "normalize_url", "slugify"]

DOC_SUFFIXES: Final = (".md", ".markdown", ".txt")
MAX_FILES: Final = 2_000
MANIFEST: Final = "docs_set.yaml"

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)")


def normalize_url(url: str) -> str:
    """Scheme and host in lower case, ``www.`` and default ports dropped, no query, fragment or final ``/``."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    port = parts.port if parts.port not in (None, 80, 443) else None
    path = parts.path.rstrip("/")
    return f"{host}{':' + str(port) if port else ''}{path}"


def slugify(heading: str) -> str:
    """The GitHub-style anchor of a heading's text (before de-duplication)."""
    text = _EMPHASIS.sub("", _LINK.sub(r"\1", heading)).strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


@dataclass(frozen=True)
class Section:
    """One section: ``doc#anchor`` (or the whole ``doc``), its heading and its text."""

    id: str
    doc: str
    anchor: str | None
    heading: str
    text: str


@dataclass(frozen=True)
class DocsSet:
    """A loaded docs set.

    Attributes:
        root: the folder.
        documents: document id → full text.
        sections: section id → section (``doc#anchor``; a whole document is under its bare id too).
        urls: normalized URL → document id (from ``docs_set.yaml``).
    """

    root: str
    documents: Mapping[str, str]
    sections: Mapping[str, Section]
    urls: Mapping[str, str]

    def has(self, section_id: str) -> bool:
        """Whether ``doc`` or ``doc#anchor`` names a document or section of this set."""
        return section_id in self.sections

    def section(self, section_id: str) -> Section:
        """The section ``section_id``.

        Raises:
            KeyError: not in this docs set.
        """
        return self.sections[section_id]


def load_docs_set(root: str | Path) -> DocsSet:
    """Load the docs set in folder ``root`` (cached per folder and file size/mtime).

    Raises:
        DataError: the folder is missing, holds no documents or too many, or a file is unreadable.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise DataError(folder, "docs set: not a folder")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in DOC_SUFFIXES and p.is_file())
    if not files:
        raise DataError(folder, f"docs set: no {', '.join(DOC_SUFFIXES)} files")
    if len(files) > MAX_FILES:
        raise DataError(folder, f"docs set: more than {MAX_FILES} files")
    manifest = folder / MANIFEST
    stamp = tuple((str(p), *_stat(p)) for p in [*files, manifest] if p.exists())
    return _load(str(folder), stamp)


def _stat(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


@cache
def _load(root: str, stamp: tuple[tuple[str, int, int], ...]) -> DocsSet:
    folder = Path(root)
    documents: dict[str, str] = {}
    sections: dict[str, Section] = {}
    for name, *_ in stamp:
        path = Path(name)
        if path.name == MANIFEST and path.parent == folder:
            continue
        doc = path.relative_to(folder).as_posix()
        text = read_text(path, inside=folder)
        documents[doc] = text
        sections[doc] = Section(doc, doc, None, doc, text)
        if path.suffix.lower() != ".txt":
            for section in _markdown_sections(doc, text):
                sections[section.id] = section
    return DocsSet(root, documents, sections, _urls(folder, documents))


def _markdown_sections(doc: str, text: str) -> list[Section]:
    lines = text.splitlines()
    heads: list[tuple[int, str]] = []  # (first line of the heading, its text)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        atx = _ATX.match(line)
        if atx:
            heads.append((i, atx.group(2)))
        elif (
            i
            and _SETEXT.match(line)
            and lines[i - 1].strip()
            and not _ATX.match(lines[i - 1])
            and not (heads and heads[-1][0] == i - 1)  # the line above is not itself a heading
        ):
            heads.append((i - 1, lines[i - 1].strip()))
    seen: dict[str, int] = {}
    out: list[Section] = []
    for n, (start, heading) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        base = slugify(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchor = base if count == 0 else f"{base}-{count}"
        plain = _EMPHASIS.sub("", _LINK.sub(r"\1", heading)).strip()
        out.append(Section(f"{doc}#{anchor}", doc, anchor, plain, "\n".join(lines[start:end]).strip()))
    return out


def _urls(folder: Path, documents: Mapping[str, str]) -> dict[str, str]:
    manifest = folder / MANIFEST
    if not manifest.exists():
        return {}
    data = read_yaml(manifest, inside=folder)
    if not isinstance(data, dict) or set(data) - {"urls", "note"}:
        raise DataError(manifest, "expected a mapping with 'urls' (document → URL) and an optional 'note'")
    urls = data.get("urls") or {}
    if not isinstance(urls, dict):
        raise DataError(manifest, "'urls' must map document ids to URLs")
    out: dict[str, str] = {}
    for doc, url in urls.items():
        if doc not in documents:
            raise DataError(manifest, f"urls: {doc!r} is not a document of the docs set")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise DataError(manifest, f"urls: {doc!r}: expected an http(s) URL")
        out[normalize_url(url)] = str(doc)
    return out
