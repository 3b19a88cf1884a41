"""Issue 41, design facts: where the records C1 and C1.5 give the model differ, per item, and the matched
directory that makes them the same.

(The new module is imported inside the tests that use it, so on code without it each other test fails on
its own behaviour.) Expected values are read from the prompts' own text (the URLs each block prints) and the index file, not
from :func:`grounding_eval.data.design.record_difference`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from grounding_eval.data.records import IndexRecord
from grounding_eval.errors import DataError
from grounding_eval.promptfoo.round_tests import generate_tests, source_vars

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"

_ARTICLE_URL = re.compile(r"^=== Article \d+ of \d+: .*\nURL: (\S+)$", re.MULTILINE)


def _index_by_url() -> dict[str, dict[str, Any]]:
    rows = [
        json.loads(line) for line in (SAMPLE / "jkb_index.jsonl").read_text().splitlines() if line.strip()
    ]
    return {row["url"]: row for row in rows}


def _directory_urls(block: str) -> list[str]:
    """The URLs a C1 directory block prints: the line after each ``### title`` heading."""
    lines = block.splitlines()
    return [lines[i + 1].strip() for i, line in enumerate(lines) if line.startswith("### ")]


def _article_urls(block: str) -> list[str]:
    """The URLs a C1.5 block prints: the ``URL:`` line under each article's heading."""
    return _ARTICLE_URL.findall(block)


def _expected_from_prompts(config: dict[str, Any]) -> dict[str, tuple[set[str], set[str]]]:
    """Per item: (ids only C1 prints, ids only C1.5 prints), read from the generated tests' blocks."""
    by_url = _index_by_url()
    out = {}
    for test in generate_tests({"dataset": str(SAMPLE), **config}, pack_root=REPO):
        c1 = {by_url[u]["id"] for u in _directory_urls(test["vars"]["jkb_directory"])}
        c15 = {by_url[u]["id"] for u in _article_urls(test["vars"]["jkb_full_content"])}
        out[test["metadata"]["query_id"]] = (c1 - c15, c15 - c1)
    return out


class TestRecordDifference:
    """record_difference: records compared by id, in each condition's order, named from the index."""

    def test_only_in_each_in_order_and_named(self) -> None:
        from grounding_eval.data.design import GivenRecord, record_difference

        index = {
            i: IndexRecord(i, "IL", f"title {i}", f"https://{i}.example", "d", org)
            for i, org in (("a", "Org A"), ("b", "Org B"), ("c", "Org C"), ("d", "Org B"))
        }
        found = record_difference("q1", ["b", "a", "c"], ["a", "d"], index)
        assert [r.id for r in found.c1_only] == ["b", "c"]
        assert found.c1_only[0] == GivenRecord("b", "Org B", "https://b.example")
        assert [r.id for r in found.c1_5_only] == ["d"]
        # Org B is in both (records b and d): only Org C is an organisation C1 alone gives.
        assert found.organizations_c1_only == ("Org C",)
        assert found.organizations_c1_5_only == ()
        assert found.differs

    def test_same_records_in_another_order_do_not_differ(self) -> None:
        from grounding_eval.data.design import record_difference

        found = record_difference("q1", ["a", "b"], ["b", "a"])
        assert not found.differs and found.c1_only == found.c1_5_only == ()
        assert not found.named

    def test_without_index_records_are_ids(self) -> None:
        from grounding_eval.data.design import GivenRecord, record_difference

        found = record_difference("q1", ["a"], ["b"])
        assert found.c1_only == (GivenRecord("a"),) and found.c1_only[0].text() == "a"


class TestValidateSaysWhereRecordsDiffer:
    """data validate names each item whose C1 and C1.5 records differ (13 of the sample's 38)."""

    def test_sample(self, capsys: pytest.CaptureFixture[str]) -> None:
        expected = _expected_from_prompts({})
        differing = {item for item, (c1, c15) in expected.items() if c1 or c15}
        assert len(expected) == 38 and len(differing) == 13
        assert main(["data", "validate", str(SAMPLE)]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[-1].endswith("— valid")
        notes = out[:-1]
        assert notes[0] == (
            f"{SAMPLE}: C1 and C1.5 give different records for 13 of 38 items: for those, C1.5 − C1 "
            "compares content as well as format (directory: matched builds C1 from the C1.5 articles' records)"
        )
        by_id = {row["id"]: row for row in _index_by_url().values()}
        lines = {line.split(": ")[0].strip(): line for line in notes[1:]}
        assert all(line.startswith("  ") for line in notes[1:])
        assert set(lines) == differing
        for item in differing:
            c1_only, c15_only = expected[item]
            only_c1, only_c15 = lines[item].split(" · only in C1.5: ")
            for record in c1_only:
                assert f"{record} ({by_id[record]['organization']}, {by_id[record]['url']})" in only_c1
            for record in c15_only:
                assert f"{record} ({by_id[record]['organization']}, {by_id[record]['url']})" in only_c15
            assert (only_c15 == "none") == (not c15_only)
            # The finding: what C1.5 loses is the state's legal-aid organisation's home page.
            assert any("legal-aid" in by_id[r]["topics"] for r in c1_only), item


class TestMatchedDirectory:
    """directory: matched builds C1's directory from exactly the C1.5 articles' records."""

    def test_generator_matched_gives_the_same_records(self) -> None:
        tests = generate_tests({"dataset": str(SAMPLE), "directory": "matched"}, pack_root=REPO)
        assert len(tests) == 38
        for test in tests:
            c1 = _directory_urls(test["vars"]["jkb_directory"])
            c15 = _article_urls(test["vars"]["jkb_full_content"])
            assert c1 == c15 and c1, test["metadata"]["query_id"]
            assert test["metadata"]["directory"] == "matched"
            assert test["metadata"]["directory_ids"] == test["metadata"]["full_content_ids"]

    def test_default_is_the_seed_directory(self) -> None:
        expected = _expected_from_prompts({})
        assert sum(bool(a or b) for a, b in expected.values()) == 13
        seed = generate_tests({"dataset": str(SAMPLE)}, pack_root=REPO)
        assert all("directory" not in t["metadata"] for t in seed)

    def test_rescore_rebuilds_the_matched_directory(self) -> None:
        """The vars a results file drops are rebuilt as the eval rendered them: matched, not the seed's."""
        (test,) = generate_tests(
            {"dataset": str(SAMPLE), "directory": "matched", "ids": ["il-evict-01"]}, pack_root=REPO
        )
        assert source_vars(test["metadata"])["jkb_directory"] == test["vars"]["jkb_directory"]
        assert "legalaidchicago" not in test["vars"]["jkb_directory"]

    def test_conditions_show_flag(self, capsys: pytest.CaptureFixture[str]) -> None:
        args = ["conditions", "show", "il-evict-01", "--condition", "C1", "--dataset", str(SAMPLE)]
        assert main(args) == 0
        assert "https://www.legalaidchicago.org" in capsys.readouterr().out
        assert main([*args, "--matched-directory"]) == 0
        shown = capsys.readouterr().out
        assert "https://www.legalaidchicago.org" not in shown
        assert "https://www.usa.gov/avoid-eviction" in shown

    def test_unknown_mode_is_one_line(self) -> None:
        with pytest.raises(DataError, match="directory 'closest' is not one of seed, matched"):
            generate_tests({"dataset": str(SAMPLE), "directory": "closest"}, pack_root=REPO)
