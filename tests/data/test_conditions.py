"""C1/C1.5 variables from data: relevance rules, rendered-prompt snapshots, and the stats command.

Snapshots live in tests/snapshots/conditions/<id>.<condition>.txt. After an intended change to the
data, the templates or the relevance rule, regenerate them with
``UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/data/test_conditions.py`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grounding_eval.data.conditions import condition_vars, render_prompt
from grounding_eval.data.dataset import Dataset, load_dataset
from grounding_eval.data.records import IndexRecord, Query
from grounding_eval.data.select import approx_tokens, rank, select_directory

REPO = Path(__file__).resolve().parents[2]
SNAPSHOTS = REPO / "tests" / "snapshots" / "conditions"
SAMPLE = load_dataset(REPO / "datasets" / "sample")
ITEMS = [*SAMPLE.queries, *SAMPLE.high_risk]


@pytest.mark.parametrize("condition", ["C1", "C1.5"])
@pytest.mark.parametrize("item_id", [i.id for i in ITEMS])
def test_rendered_prompt_snapshot(item_id: str, condition: str) -> None:
    """The prompt each sample item gets under C1 and C1.5 is exactly the reviewed snapshot."""
    text = render_prompt(condition, SAMPLE.item(item_id), SAMPLE)
    path = SNAPSHOTS / f"{item_id}.{condition}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


def test_no_stale_snapshots() -> None:
    expected = {f"{i.id}.{c}.txt" for i in ITEMS for c in ("C1", "C1.5")}
    assert {p.name for p in SNAPSHOTS.iterdir()} == expected


def test_prompts_carry_the_seed_text_and_no_placeholders() -> None:
    for item in ITEMS:
        for condition in ("C0", "C1", "C1.5"):
            text = render_prompt(condition, item, SAMPLE)
            assert text.startswith(
                f"You are a legal information assistant helping someone in {item.jurisdiction}.\n"
            )
            assert "{{" not in text and item.question in text


def _record(rid: str, state: str, topics: tuple[str, ...] = (), description: str = "d") -> IndexRecord:
    return IndexRecord(rid, state, f"title {rid}", f"https://example.org/{rid}", description, "O", topics)


def _dataset(*records: IndexRecord) -> Dataset:
    return Dataset("mem", (), (), {r.id: r for r in records}, {})


class TestRelevance:
    """Deterministic, explainable relevance."""

    def test_listed_article_ids_win_in_order(self) -> None:
        ds = _dataset(_record("a", "IL", ("eviction",)), _record("b", "IL"), _record("c", "IL"))
        q = Query("q", "IL", "eviction", "eviction notice", article_ids=("c", "b"))
        assert [s.record.id for s in select_directory(q, ds.index)] == ["c", "b"]
        assert rank(q, ds.index)[0].reasons == ("listed in the query's article_ids",)

    def test_other_states_never_chosen(self) -> None:
        ds = _dataset(_record("tx", "TX", ("eviction",)), _record("us", "US", ("eviction",)))
        q = Query("q", "IL", "eviction", "eviction notice")
        assert [s.record.id for s in rank(q, ds.index)] == ["us"]

    def test_topic_then_overlap_then_own_state_then_id(self) -> None:
        ds = _dataset(
            _record("z-topic", "US", ("deposit",)),
            _record("b-words", "US", (), "security deposit returned late"),
            _record("a-words", "US", (), "security deposit returned late"),
            _record("il-words", "IL", (), "security deposit returned late"),
            _record("none", "US", (), "unrelated text"),
        )
        q = Query("q", "IL", "deposit", "My security deposit was not returned")
        ranked = rank(q, ds.index)
        # z-topic: 3 (topic) + 1 (shares "deposit"); il-words: 3 words + 0.5 own state; a/b: 3, tie → id.
        assert [s.record.id for s in ranked] == ["z-topic", "il-words", "a-words", "b-words"]
        assert [s.score for s in ranked] == [4.0, 3.5, 3.0, 3.0]
        assert ranked[1].reasons == ("shared words: deposit, returned, security", "IL record")

    def test_full_content_only_cached_articles(self) -> None:
        item = SAMPLE.item("il-evict-01")
        cv = condition_vars(item, SAMPLE)
        assert [s.record.id for s in cv.directory] == [
            "us-15usc9058",
            "il-org-legalaidchicago",
            "usagov-avoid-eviction",
        ]
        assert [s.record.id for s in cv.full_content] == ["us-15usc9058", "usagov-avoid-eviction"]
        assert cv.jkb_full_content.startswith("=== Article 1 of 2: 15 U.S.C. § 9058")

    def test_token_estimate(self) -> None:
        assert approx_tokens("") == 0 and approx_tokens("abcd") == 1 and approx_tokens("abcde") == 2
