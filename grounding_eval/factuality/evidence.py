"""Ground-truth evidence with ids, and the deterministic check that a judge's quote is really in it.

The seed asks that the evidence carry "document chunk IDs so the evaluation output can trace each claim
back to its supporting or contradicting source". Evidence is a list of documents, each with a
``source_document_id``, cut into chunks (``<document id>#<n>``) at paragraph breaks; the prompt shows
every chunk with its ids. A caller that already has chunks (a RAG system's retrieval) passes them as
they are, ids and all.

:func:`locate_quotes` looks every ``evidence_quote`` up with the verifier's quotation matcher
(:func:`grounding_eval.verifier.quotes.check_spans`): ``EXACT`` or ``NEAR`` is ``FOUND``, anything else
``NOT_FOUND``. Quotes are matched against whole documents, then traced to the chunks the match overlaps,
so a quote running across a chunk boundary is still found (and names both chunks).

An evidence quote is one passage (the seed asks for "the exact quote"; the rubric's constraints, for a
quote "copied character for character from one chunk"). The matcher forgives elisions, as an answer
quoting a source may use them: ``a landlord … may … evict`` is ``EXACT`` against "a landlord may not
(A) evict", and segments stitched out of order or from two documents are ``NEAR``. Here a quote with an
elision mark is ``FOUND`` only when its segments are verbatim, in order, in one document, with nothing
but spaces and punctuation between them; otherwise it is ``NOT_FOUND`` (status ``ELIDED``): what an
elision leaves out (a "not", a number) cannot be checked, so it never confirms a verdict.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from grounding_eval.errors import DataError
from grounding_eval.files import ARTICLE, read_text, read_yaml

__all__ = [
    "Chunk",
    "Document",
    "EvidenceCheck",
    "QuoteLocation",
    "chunk_documents",
    "documents_from_chunks",
    "load_article_evidence",
    "load_evidence_files",
    "locate_quotes",
]

EvidenceCheck = Literal["FOUND", "NOT_FOUND", "N/A"]

_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t]*\n")
_ID: Final = re.compile(r"[^\s|\[\]]{1,200}")  # shown in a chunk header: no spaces, bars or brackets


@dataclass(frozen=True)
class Chunk:
    """One piece of evidence as the judge sees it.

    Attributes:
        source_document_id: The document it comes from.
        chunk_id: Its id, unique in the evidence set.
        text: Its text.
        start: Offset of ``text`` in its document's text.
    """

    source_document_id: str
    chunk_id: str
    text: str
    start: int

    @property
    def end(self) -> int:
        """Offset just past the chunk in its document's text."""
        return self.start + len(self.text)


@dataclass(frozen=True)
class Document:
    """One evidence document and its chunks (offsets into ``text``)."""

    source_document_id: str
    text: str
    chunks: tuple[Chunk, ...]


@dataclass(frozen=True)
class QuoteLocation:
    """Where a quote was found: ``FOUND`` with the chunks its match overlaps, or ``NOT_FOUND``."""

    check: EvidenceCheck
    status: str  # the matcher's EXACT / NEAR / PARTIAL / NO_MATCH (NO_SOURCE: no evidence text), or ELIDED
    similarity: float | None
    source_document_ids: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()


def _check_id(value: str, where: str) -> str:
    if not _ID.fullmatch(value):
        raise DataError(where, f"id {value[:40]!r} must be 1-200 characters without spaces, '|' or brackets")
    return value


def chunk_documents(documents: Iterable[tuple[str, str]], *, max_chars: int) -> list[Document]:
    """Cut ``(source_document_id, text)`` pairs into chunks of at most ``max_chars`` at paragraph breaks.

    A paragraph longer than ``max_chars`` is cut at the last white space before the limit (or at the
    limit). Chunk ids are ``<id>#1``, ``<id>#2``, … Empty documents are refused.

    Raises:
        DataError: an empty document, a bad or repeated id.
    """
    out: list[Document] = []
    seen: set[str] = set()
    for doc_id, text in documents:
        _check_id(doc_id, "evidence")
        if doc_id in seen:
            raise DataError("evidence", f"document id {doc_id!r} appears twice")
        seen.add(doc_id)
        if not text.strip():
            raise DataError(doc_id, "evidence document is empty")
        pieces = _pieces(text, max_chars)
        chunks = tuple(Chunk(doc_id, f"{doc_id}#{n}", text[a:b], a) for n, (a, b) in enumerate(pieces, 1))
        out.append(Document(doc_id, text, chunks))
    return out


def _pieces(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Spans of ``text``: paragraphs packed up to ``max_chars``, long paragraphs cut at white space."""
    paragraphs: list[tuple[int, int]] = []
    pos = 0
    for brk in _PARAGRAPH_BREAK.finditer(text):
        paragraphs.append((pos, brk.start()))
        pos = brk.end()
    paragraphs.append((pos, len(text)))
    spans: list[tuple[int, int]] = []
    for a, b in paragraphs:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        while b - a > max_chars:  # a paragraph longer than a chunk
            cut = text.rfind(" ", a + 1, a + max_chars)
            cut = cut if cut > a else a + max_chars
            spans.append((a, cut))
            a = cut + 1 if text[cut : cut + 1] == " " else cut
        if b > a:
            if spans and b - spans[-1][0] <= max_chars and spans[-1][1] <= a:
                spans[-1] = (spans[-1][0], b)  # pack into the previous chunk
            else:
                spans.append((a, b))
    return spans


def documents_from_chunks(records: Sequence[dict[str, Any]], where: str) -> list[Document]:
    """Documents from ready-made chunks ``{source_document_id, chunk_id?, text}`` (a retriever's output).

    A document's text is its chunks joined by blank lines, in the order given; a missing ``chunk_id`` is
    ``<document id>#<n>``.

    Raises:
        DataError: a record without ``source_document_id`` or ``text``, an unknown field, a repeated
            chunk id.
    """
    grouped: dict[str, list[tuple[str | None, str]]] = {}
    for i, record in enumerate(records, 1):
        if not isinstance(record, dict) or set(record) - {"source_document_id", "chunk_id", "text"}:
            raise DataError(where, f"chunk {i}: expected {{source_document_id, chunk_id, text}}")
        doc_id, text, chunk_id = record.get("source_document_id"), record.get("text"), record.get("chunk_id")
        if not isinstance(doc_id, str) or not isinstance(text, str) or not text.strip():
            raise DataError(where, f"chunk {i}: source_document_id and a non-empty text are required")
        if chunk_id is not None and not isinstance(chunk_id, str):
            raise DataError(where, f"chunk {i}: chunk_id must be text")
        grouped.setdefault(_check_id(doc_id, where), []).append((chunk_id, text.strip()))
    documents: list[Document] = []
    ids: set[str] = set()
    for doc_id, parts in grouped.items():
        chunks: list[Chunk] = []
        pos = 0
        for n, (chunk_id, text) in enumerate(parts, 1):
            cid = _check_id(chunk_id or f"{doc_id}#{n}", where)
            if cid in ids:
                raise DataError(where, f"chunk id {cid!r} appears twice")
            ids.add(cid)
            chunks.append(Chunk(doc_id, cid, text, pos))
            pos += len(text) + 2
        documents.append(Document(doc_id, "\n\n".join(t for _, t in parts), tuple(chunks)))
    if not documents:
        raise DataError(where, "no evidence chunks")
    return documents


def load_evidence_files(paths: Sequence[str | Path], *, max_chars: int) -> list[Document]:
    """Evidence from files: a ``.yaml``/``.yml``/``.json`` file is a list of chunks
    (:func:`documents_from_chunks`); any other file is one text document whose id is its name without
    the extension.

    Raises:
        DataError: an unreadable file, a malformed chunk list, two documents with one id.
    """
    documents: list[Document] = []
    texts: list[tuple[str, str]] = []
    for path in paths:
        path = Path(path)
        if path.suffix.lower() in (".yaml", ".yml", ".json"):
            records = read_yaml(path)
            if not isinstance(records, list):
                raise DataError(path, "expected a list of {source_document_id, chunk_id, text} chunks")
            documents.extend(documents_from_chunks(records, str(path)))
        else:
            texts.append((path.stem, read_text(path)))
    documents.extend(chunk_documents(texts, max_chars=max_chars))
    ids = [d.source_document_id for d in documents]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise DataError("--evidence", f"document id(s) {', '.join(repeated)} given twice")
    return documents


def load_article_evidence(dataset: str | Path, ids: Sequence[str], *, max_chars: int) -> list[Document]:
    """The C1.5 evidence of a legal-aid item: the dataset's cached articles with these index ids.

    Raises:
        DataError: an id with no ``articles/<id>.txt`` (or ``.md``) inside the dataset folder.
    """
    root = Path(dataset)
    texts = []
    for doc_id in ids:
        found = next((p for p in (root / "articles" / f"{doc_id}.txt", root / "articles" / f"{doc_id}.md")
                      if p.exists()), None)  # fmt: skip
        if found is None:
            raise DataError(root / "articles", f"no cached article for id {doc_id!r}")
        texts.append((doc_id, read_text(found, ARTICLE, inside=root).strip() + "\n"))
    return chunk_documents(texts, max_chars=max_chars)


def locate_quotes(quotes: Sequence[str | None], documents: Sequence[Document]) -> list[QuoteLocation]:
    """Look each quote up in the evidence; ``None`` or an empty quote is ``N/A``.

    Budget: one :func:`~grounding_eval.verifier.quotes.check_spans` call (each distinct quote matched
    once, each document prepared once).
    """
    from grounding_eval.verifier.quotes import QuoteSpan, QuoteStatus, check_spans

    wanted = [(i, q.strip()) for i, q in enumerate(quotes) if isinstance(q, str) and q.strip()]
    out = [QuoteLocation("N/A", "N/A", None)] * len(quotes)
    if not wanted:
        return out
    spans = [QuoteSpan(q, 0, len(q), "double") for _, q in wanted]
    findings = check_spans(spans, [d.text for d in documents])
    for (i, _), finding in zip(wanted, findings, strict=True):
        found = finding.status in (QuoteStatus.EXACT, QuoteStatus.NEAR)
        if not found or finding.source_index is None:
            out[i] = QuoteLocation("NOT_FOUND", finding.status.value, finding.similarity)
            continue
        if not _one_passage(finding, documents):
            out[i] = QuoteLocation("NOT_FOUND", "ELIDED", finding.similarity)
            continue
        doc = documents[finding.source_index]
        a = finding.match_start if finding.match_start is not None else 0
        b = finding.match_end if finding.match_end is not None else a
        chunks = tuple(c.chunk_id for c in doc.chunks if c.start < max(b, a + 1) and c.end > a)
        out[i] = QuoteLocation(
            "FOUND", finding.status.value, finding.similarity, (doc.source_document_id,), chunks
        )
    return out


def _one_passage(finding: Any, documents: Sequence[Document]) -> bool:
    """Whether a found quote is one passage: no elision, or elided segments verbatim, in order, in one
    document, with no letter or digit of the evidence between two of them (nothing left out)."""
    segments = finding.segments
    if len(segments) <= 1:
        return True
    if not finding.in_order:  # stitched out of order, or from two documents (the matcher's NEAR)
        return False
    for a, b in itertools.pairwise(segments):
        if a.source_index != b.source_index or a.end is None or b.start is None or b.start < a.end:
            return False
        if any(ch.isalnum() for ch in documents[a.source_index].text[a.end : b.start]):
            return False
    return True
