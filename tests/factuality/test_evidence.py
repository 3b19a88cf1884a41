"""Evidence chunks with ids, and quotes traced back to the chunks they came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounding_eval.errors import DataError
from grounding_eval.factuality.evidence import (
    chunk_documents,
    documents_from_chunks,
    load_evidence_files,
    locate_quotes,
)

from .conftest import EVIDENCE_FILES


class TestChunks:
    @settings(max_examples=200, deadline=None)
    @given(
        text=st.text(st.sampled_from("ab \n.\t"), min_size=1, max_size=3000).filter(str.strip)
        | st.lists(st.sampled_from(["word", "a", "\n\n", " ", "x" * 150]), min_size=50, max_size=400).map(
            " ".join
        ),
        size=st.integers(100, 400),
    )
    def test_chunks_are_slices_of_their_document_in_order_and_bounded(self, text: str, size: int) -> None:
        (doc,) = chunk_documents([("d", text)], max_chars=size)
        assert [c.chunk_id for c in doc.chunks] == [f"d#{n}" for n in range(1, len(doc.chunks) + 1)]
        for chunk in doc.chunks:
            assert doc.text[chunk.start : chunk.end] == chunk.text
            assert 0 < len(chunk.text) <= size
        assert all(a.end <= b.start for a, b in zip(doc.chunks, doc.chunks[1:], strict=False))
        # no character lost: only white space between chunks is dropped (a word longer than a chunk is cut)
        assert "".join("".join(c.text for c in doc.chunks).split()) == "".join(text.split())

    def test_files_take_their_name_as_id(self) -> None:
        docs = load_evidence_files(EVIDENCE_FILES, max_chars=1200)
        assert [d.source_document_id for d in docs] == ["scra", "avoid"]
        assert docs[0].chunks[0].chunk_id == "scra#1"

    def test_ready_made_chunks_keep_their_ids(self, tmp_path: Path) -> None:
        path = tmp_path / "chunks.json"
        path.write_text(json.dumps([
            {"source_document_id": "kb-7", "chunk_id": "kb-7/p3", "text": "Rent is due on the first of the month."},
            {"source_document_id": "kb-7", "chunk_id": "kb-7/p4", "text": "A late fee may not exceed ten dollars."},
            {"source_document_id": "kb-9", "text": "Deposits are returned within 30 days."},
        ]))  # fmt: skip
        docs = load_evidence_files([path], max_chars=1200)
        assert [[c.chunk_id for c in d.chunks] for d in docs] == [["kb-7/p3", "kb-7/p4"], ["kb-9#1"]]
        (found,) = locate_quotes(["A late fee may not exceed ten dollars."], docs)
        assert (found.check, found.source_document_ids, found.chunk_ids) == ("FOUND", ("kb-7",), ("kb-7/p4",))

    @pytest.mark.parametrize(
        ("records", "problem"),
        [
            ([{"source_document_id": "a", "text": ""}], "non-empty text"),
            ([{"source_document_id": "a b", "text": "x"}], "without spaces"),
            (
                [
                    {"source_document_id": "a", "chunk_id": "c", "text": "x"},
                    {"source_document_id": "b", "chunk_id": "c", "text": "y"},
                ],
                "appears twice",
            ),
            (
                [{"source_document_id": "a", "text": "x", "page": 3}],
                "expected {source_document_id, chunk_id, text}",
            ),
            ([], "no evidence chunks"),
        ],
    )
    def test_bad_chunk_lists(self, records: list[dict[str, object]], problem: str) -> None:
        with pytest.raises(DataError, match=problem):
            documents_from_chunks(records, "chunks.json")

    def test_same_id_twice_is_refused(self) -> None:
        with pytest.raises(DataError, match="appears twice"):
            chunk_documents([("a", "x"), ("a", "y")], max_chars=100)


class TestQuotes:
    def test_quote_across_a_chunk_boundary_names_both_chunks(self) -> None:
        text = (
            ("First paragraph about notices. " * 3).strip()
            + "\n\n"
            + ("Second paragraph about deposits. " * 3).strip()
        )
        (doc,) = chunk_documents([("d", text)], max_chars=120)
        assert len(doc.chunks) == 2
        (found,) = locate_quotes(
            ["First paragraph about notices.\n\nSecond paragraph about deposits."], [doc]
        )
        assert found.check == "FOUND" and found.chunk_ids == ("d#1", "d#2")

    def test_statuses(self) -> None:
        docs = load_evidence_files(EVIDENCE_FILES, max_chars=1200)
        found = locate_quotes(
            [None, "", "stay the proceedings for a period of 90 days", "stay the proceedings for a period of 60 days",
             "the moon is made of green cheese and always has been"],
            docs,
        )  # fmt: skip
        assert [f.check for f in found] == ["N/A", "N/A", "FOUND", "NOT_FOUND", "NOT_FOUND"]
        assert found[2].status == "EXACT" and found[2].source_document_ids == ("scra",)
        assert found[3].status == "PARTIAL"  # a changed number is never NEAR
