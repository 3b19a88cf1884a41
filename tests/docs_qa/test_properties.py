"""Properties of the docs-QA checks over generated inputs (Hypothesis)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.docs_qa.citations import check_citations
from grounding_eval.docs_qa.coverage import check_coverage
from grounding_eval.docs_qa.docs_set import load_docs_set, slugify
from grounding_eval.docs_qa.reply import GradingFailure, ParsedGrading, parse_grading
from grounding_eval.docs_qa.rubric import load_docs_qa_rubric

DOCS = load_docs_set(Path(__file__).resolve().parents[1] / "fixtures" / "docs_qa" / "citations_docs")
RUBRIC = load_docs_qa_rubric()
WORDS = st.lists(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=1, max_size=30)


@given(WORDS, st.data())
@settings(max_examples=200, deadline=None)
def test_a_run_of_the_answers_own_words_is_always_covered(words: list[str], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    answer = " ".join(words)
    point = " ".join(words[i:j])
    assert check_coverage(answer, [point], min_ratio=88, min_word_share=0.8).missed == ()


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_parser_never_raises(text: str) -> None:
    for oos in (False, True):
        assert isinstance(parse_grading(text, RUBRIC, out_of_scope=oos), ParsedGrading | GradingFailure)


@given(
    st.sampled_from(sorted(DOCS.sections)),
    st.sampled_from(["See ", "(", "Sources: ", "`"]),
    st.sampled_from([".", ")", "", ",", "`"]),
)
def test_every_section_of_the_set_is_a_valid_citation(section: str, before: str, after: str) -> None:
    report = check_citations(f"{before}{section}{after} and more.", DOCS)
    assert [c.section for c in report.citations] == [section] and report.invalid == ()


# What an answer may cite: the set's sections, and sections, files and URLs of its host it does not have.
_INVALID = ["guide.md#no-such-heading", "missing.md", "sub/setup.md#nope", "https://example.org/guide#nope",
            "https://example.org/elsewhere"]  # fmt: skip
_CITED = st.sampled_from(
    [*sorted(DOCS.sections), "https://example.org/guide", "https://other.org/x", *_INVALID]
)


@given(st.lists(st.tuples(st.text(max_size=30), _CITED), max_size=6), st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_citation_check_never_raises_and_only_flags_what_it_found(
    pieces: list[tuple[str, str]], tail: str
) -> None:
    # Random text between citations (the random text alone almost never holds one to flag).
    text = "".join(f"{filler} {cited} " for filler, cited in pieces) + tail
    report = check_citations(text, DOCS)
    assert set(report.invalid) <= {c.text for c in report.citations}
    assert {cited for _, cited in pieces if cited in _INVALID} <= set(report.invalid)
    event(f"invalid citations flagged: {min(len(report.invalid), 3)}{'+' if len(report.invalid) > 3 else ''}")


@given(st.text(max_size=80))
def test_slug_has_no_spaces_or_upper_case(heading: str) -> None:
    slug = slugify(heading)
    assert " " not in slug and slug == slug.lower()
