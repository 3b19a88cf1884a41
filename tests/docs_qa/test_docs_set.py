"""The docs set format: documents, heading anchors, the URL manifest, and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.docs_qa.docs_set import load_docs_set, slugify
from grounding_eval.errors import DataError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docs_qa"


class TestSlugify:
    """Anchors are made from headings the GitHub way."""

    @pytest.mark.parametrize(
        ("heading", "anchor"),
        [
            ("Getting started", "getting-started"),
            ("(a) Court-ordered eviction", "a-court-ordered-eviction"),
            ("**Get help for a dispute**", "get-help-for-a-dispute"),
            ("[Linked](http://x) title", "linked-title"),
            ("§ 9058. Temporary moratorium", "-9058-temporary-moratorium"),
            ("Under age 62 & disabled", "under-age-62--disabled"),
            ("snake_case stays", "snake_case-stays"),
        ],
    )
    def test_heading(self, heading: str, anchor: str) -> None:
        assert slugify(heading) == anchor


class TestLoadDocsSet:
    """Loading a folder of Markdown and text files."""

    def test_sections_and_files(self) -> None:
        docs = load_docs_set(FIXTURES / "citations_docs")
        assert set(docs.documents) == {"guide.md", "notes.txt", "sub/setup.md"}
        assert {s for s in docs.sections if s.startswith("guide.md#")} == {
            "guide.md#guide", "guide.md#getting-started", "guide.md#faq", "guide.md#faq-1", "guide.md#setext-heading",
        }  # fmt: skip
        assert docs.section("guide.md#faq-1").text.startswith("## FAQ\n\nSecond FAQ.")
        assert "not a heading inside a fence" in docs.section("guide.md#setext-heading").text
        assert [s for s in docs.sections if s.startswith("notes.txt")] == ["notes.txt"]
        assert docs.urls == {"example.org/guide": "guide.md"}

    def test_sample_docs_set_sections_used_by_the_test_set(self) -> None:
        docs = load_docs_set(Path(__file__).resolve().parents[2] / "datasets" / "docs_qa" / "docs")
        assert docs.has("scra-evictions.md#1-court-authority")
        assert docs.has("rent-help-groups.md#rental-assistance-for-people-under-age-62-with-disabilities")

    def test_reload_after_edit(self, tmp_path: Path) -> None:
        (tmp_path / "a.md").write_text("# One\n", encoding="utf-8")
        assert load_docs_set(tmp_path).has("a.md#one")
        (tmp_path / "a.md").write_text("# Two, longer\n", encoding="utf-8")
        docs = load_docs_set(tmp_path)
        assert docs.has("a.md#two-longer") and not docs.has("a.md#one")

    @pytest.mark.parametrize(
        ("setup", "message"),
        [
            (lambda p: None, "no .md, .markdown, .txt files"),
            (lambda p: (p / "a.md").write_text("x", encoding="utf-8") and (p / "docs_set.yaml").write_text("urls: {b.md: https://x.org}\n", encoding="utf-8"), "'b.md' is not a document"),
            (lambda p: (p / "a.md").write_text("x", encoding="utf-8") and (p / "docs_set.yaml").write_text("urls: {a.md: ftp://x.org}\n", encoding="utf-8"), "expected an http(s) URL"),
            (lambda p: (p / "a.md").write_text("x", encoding="utf-8") and (p / "docs_set.yaml").write_text("pages: []\n", encoding="utf-8"), "expected a mapping with 'urls'"),
        ],
        ids=["empty-folder", "manifest-unknown-doc", "manifest-bad-url", "manifest-unknown-key"],
    )  # fmt: skip
    def test_errors_are_one_line(self, tmp_path: Path, setup: object, message: str) -> None:
        setup(tmp_path)  # type: ignore[operator]
        with pytest.raises(DataError) as info:
            load_docs_set(tmp_path)
        assert message in str(info.value)
        assert "\n" not in str(info.value)

    def test_missing_folder(self, tmp_path: Path) -> None:
        with pytest.raises(DataError, match="not a folder"):
            load_docs_set(tmp_path / "nope")
