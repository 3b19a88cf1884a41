"""The reproducible stratified sample: golden table (tests/golden/sample_selection.yaml), spec checks,
properties, and the same selection from the generator and from ``grounding-eval data sample``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from grounding_eval.cli import main
from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.records import HighRiskItem, Query
from grounding_eval.data.sample import METHOD, SampleSpec, allocate, draw_sample, ids_digest, rank_key
from grounding_eval.errors import DataError
from grounding_eval.promptfoo.round_tests import generate_tests
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[2]
GOLDEN = yaml.safe_load((REPO / "tests" / "golden" / "sample_selection.yaml").read_text(encoding="utf-8"))
SAMPLE = REPO / "datasets" / "sample"


def _item(row: dict[str, str]) -> HighRiskItem:
    return HighRiskItem(
        id=row["id"],
        jurisdiction=row["jurisdiction"],
        topic="eviction",
        question="q",
        risk_tier=row["risk_tier"],
        required_clarifying_questions=("c",),
        failure_modes=("f",),
        sme_variables=("v",),
    )


POOL = [_item(row) for row in GOLDEN["pool"]]


class TestRankKey:
    @pytest.mark.parametrize("row", GOLDEN["ranks"], ids=lambda r: f"{r['seed']}:{r['id']}")
    def test_matches_coreutils_sha256sum(self, row: dict[str, Any]) -> None:
        """An item's rank is sha256("<seed>:<id>"), as `printf … | sha256sum` prints it."""
        assert rank_key(row["seed"], row["id"]) == row["expected"]


class TestAllocate:
    @pytest.mark.parametrize("row", GOLDEN["allocation"], ids=lambda r: r["note"][:40])
    def test_golden(self, row: dict[str, Any]) -> None:
        """Seats per stratum as worked out by hand (largest remainder, ties by size then seeded rank)."""
        sizes = {(k,): v for k, v in row["sizes"].items()}
        seats = allocate(sizes, row["n"], row.get("seed", 0))
        assert {k[0]: v for k, v in seats.items()} == row["expected"]

    @given(
        sizes=st.lists(st.integers(1, 60), min_size=1, max_size=12),
        data=st.data(),
        seed=st.integers(0, 10**6),
    )
    def test_proportional_and_exact(self, sizes: list[int], data: st.DataObject, seed: int) -> None:
        """Seats add up to n, and each stratum's seats are the floor or the ceiling of its exact share."""
        total = sum(sizes)
        n = data.draw(st.integers(0, total))
        strata = {(f"s{i:02d}",): size for i, size in enumerate(sizes)}
        seats = allocate(strata, n, seed)
        assert sum(seats.values()) == n
        for key, size in strata.items():
            low = n * size // total
            assert seats[key] in (low, low + (1 if n * size % total else 0))
        event("had remainders" if any(n * s % total for s in sizes) else "exact shares")

    def test_refuses_more_seats_than_items(self) -> None:
        with pytest.raises(ValueError, match="cannot allocate 4 seats over 3 items"):
            allocate({("a",): 3}, 4)


class TestDrawSample:
    @pytest.mark.parametrize("row", GOLDEN["selections"], ids=lambda r: r["note"][:40])
    def test_golden(self, row: dict[str, Any]) -> None:
        """The chosen ids, per-stratum seats and ids digest of each hand-worked selection."""
        spec = SampleSpec.from_config(row["sample"])
        drawn = draw_sample(POOL, spec)
        assert drawn.ids == row["expected"]
        assert {"|".join(s.key): s.quota for s in drawn.strata} == row["strata"]
        if "ids_sha256" in row:
            assert drawn.provenance()["ids_sha256"] == row["ids_sha256"]

    def test_file_order_does_not_matter(self) -> None:
        """The same ids whatever order the dataset lists its items in (the output keeps that order)."""
        spec = SampleSpec(n=5, seed=7, stratify=("risk_tier",))
        assert sorted(draw_sample(POOL[::-1], spec).ids) == sorted(draw_sample(POOL, spec).ids)
        assert draw_sample(POOL[::-1], spec).ids == sorted(draw_sample(POOL, spec).ids, reverse=True)

    def test_seed_changes_the_sample(self) -> None:
        ids = {tuple(draw_sample(POOL, SampleSpec(n=3, seed=s)).ids) for s in range(20)}
        assert len(ids) > 5

    def test_more_than_the_pool_is_refused(self) -> None:
        with pytest.raises(DataError, match="n is 11 but the items are only 10; a sample is never silently"):
            draw_sample(POOL, SampleSpec(n=11, seed=1))

    def test_risk_tier_of_queries_is_refused(self) -> None:
        query = Query(id="q1", jurisdiction="IL", topic="t", question="q")
        with pytest.raises(
            DataError, match="cannot stratify the items by 'risk_tier': item 'q1' has no such"
        ):
            draw_sample([query], SampleSpec(n=1, seed=1, stratify=("risk_tier",)))

    @given(
        tiers=st.lists(st.sampled_from(["critical", "high", "moderate"]), min_size=1, max_size=40),
        data=st.data(),
    )
    def test_sample_is_a_proportional_subset(self, tiers: list[str], data: st.DataObject) -> None:
        """n distinct pool items; each tier's count is within one of its exact proportional share."""
        pool = [_item({"id": f"i{i:03d}", "risk_tier": t, "jurisdiction": "IL"}) for i, t in enumerate(tiers)]
        n = data.draw(st.integers(1, len(pool)))
        seed = data.draw(st.integers(0, 2**32))
        drawn = draw_sample(pool, SampleSpec(n=n, seed=seed, stratify=("risk_tier",)))
        assert len(drawn.ids) == len(set(drawn.ids)) == n
        assert set(drawn.ids) <= {p.id for p in pool}
        have = Counter(t for t in tiers)
        got = Counter(item.risk_tier for item in drawn.items if isinstance(item, HighRiskItem))
        for tier, size in have.items():
            assert abs(got[tier] - n * size / len(pool)) < 1
        event(f"{len(have)} strata")


class TestSampleSpec:
    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ({"n": 4}, "'seed' is required"),
            ({"n": "4", "seed": 1}, "'n' must be a whole number"),
            ({"n": True, "seed": 1}, "'n' must be a whole number"),
            ({"n": 0, "seed": 1}, "'n' must be at least 1"),
            ({"n": 2, "seed": -1}, "'seed' must be 0 or more"),
            ({"n": 2, "seed": 1, "stratify": ["county"]}, "cannot stratify by 'county'"),
            ({"n": 2, "seed": 1, "stratify": ["topic", "topic"]}, "names a field twice"),
            ({"n": 2, "seed": 1, "size": 3}, "unknown key(s) size"),
            ([2, 1], "must be a mapping"),
            # A falsy non-list was read as "no strata" (a quietly unstratified sample) before this commit:
            # each is a config typo.
            ({"n": 2, "seed": 1, "stratify": 0}, "'stratify' must be a list of field names"),
            ({"n": 2, "seed": 1, "stratify": False}, "'stratify' must be a list of field names"),
            ({"n": 2, "seed": 1, "stratify": {}}, "'stratify' must be a list of field names"),
            ({"n": 2, "seed": 1, "stratify": ""}, "cannot stratify by ''"),
        ],
    )
    def test_bad_spec_is_one_line(self, value: Any, message: str) -> None:
        with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
            SampleSpec.from_config(value)

    def test_single_stratify_string(self) -> None:
        assert SampleSpec.from_config({"n": 1, "seed": 0, "stratify": "topic"}).stratify == ("topic",)

    @pytest.mark.parametrize("stratify", [None, []])
    def test_null_or_empty_stratify_is_one_stratum(self, stratify: Any) -> None:
        assert SampleSpec.from_config({"n": 1, "seed": 0, "stratify": stratify}).stratify == ()


class TestGeneratorAndCli:
    CONFIG: ClassVar[dict[str, Any]] = {
        "round": "3",
        "sample": {"n": 4, "seed": 7, "stratify": ["risk_tier"]},
    }

    def test_generator_tests_carry_the_sample(self) -> None:
        """The generator keeps exactly the drawn items and records the spec and ids in every test."""
        tests = generate_tests(dict(self.CONFIG), pack_root=REPO)
        dataset = load_dataset(SAMPLE)
        drawn = draw_sample(dataset.high_risk, SampleSpec(n=4, seed=7, stratify=("risk_tier",)))
        assert [query_id(t) for t in tests] == drawn.ids
        for test in tests:
            sample = test["metadata"]["sample"]
            assert sample == {
                "n": 4,
                "seed": 7,
                "stratify": ["risk_tier"],
                "method": METHOD,
                "pool": 8,
                "ids_sha256": ids_digest(drawn.ids),
                "ids": drawn.ids,
            }

    def test_cli_prints_the_same_selection(self, capsys: pytest.CaptureFixture[str]) -> None:
        tests = generate_tests(dict(self.CONFIG), pack_root=REPO)
        args = ["data", "sample", "--dataset", str(SAMPLE), "--round", "3", "--n", "4", "--seed", "7"]
        assert main([*args, "--stratify", "risk_tier", "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["ids"] == [query_id(t) for t in tests]
        assert sum(s["seats"] for s in printed["strata"]) == 4
        assert [s["items"] for s in printed["strata"]] == [2, 3, 3]  # critical, high, moderate in the sample

    def test_cli_table(self, capsys: pytest.CaptureFixture[str]) -> None:
        args = ["data", "sample", "--dataset", str(SAMPLE), "--round", "3", "--n", "4", "--seed", "7"]
        assert main([*args, "--stratify", "risk_tier"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[1].split() == ["stratum", "items", "seats", "chosen"]
        # By hand: 4 of 8 over critical 2, high 3, moderate 3: floors 1, 1, 1; high and moderate tie on
        # remainder (4) and size: sha256("7:moderate") 10db… < sha256("7:high") c82a…, so moderate gets 2.
        assert [line.split()[:3] for line in out[2:5]] == [
            ["critical", "2", "1"],
            ["high", "3", "1"],
            ["moderate", "3", "2"],
        ]
        assert out[-1] == "config: sample: {n: 4, seed: 7, stratify: [risk_tier]}"

    def test_cli_too_large_is_exit_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert (
            main(["data", "sample", "--dataset", str(SAMPLE), "--round", "3", "--n", "40", "--seed", "1"])
            == 2
        )
        assert capsys.readouterr().err == (
            "grounding-eval: error: grounding-eval data sample: 'sample': n is 40 but round 3's items are "
            "only 8; a sample is never silently the whole pool\n"
        )

    def test_unsampled_tests_have_no_sample(self) -> None:
        assert all("sample" not in t["metadata"] for t in generate_tests({"round": "3"}, pack_root=REPO))


def test_cli_ids_narrow_the_pool_as_the_config_does(capsys: pytest.CaptureFixture[str]) -> None:
    keep = ["hr-tx-dv-01", "hr-oh-evict-01", "hr-wv-military-01"]
    tests = generate_tests({"round": "3", "ids": keep, "sample": {"n": 2, "seed": 3}}, pack_root=REPO)
    ids = [arg for i in keep for arg in ("--ids", i)]
    assert main(["data", "sample", "--round", "3", *ids, "--n", "2", "--seed", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["pool"] == 3
    assert printed["ids"] == [query_id(t) for t in tests]
    assert len(printed["ids"]) == 2 and set(printed["ids"]) <= set(keep)


def test_cli_config_lines_name_the_ids_that_narrowed_the_pool(capsys: pytest.CaptureFixture[str]) -> None:
    # The printed config must draw the printed sample: before, it gave only `sample:`, which over the
    # whole round (8 items, not these 3) draws other ids.
    keep = ["hr-tx-dv-01", "hr-oh-evict-01", "hr-wv-military-01"]
    ids = [arg for i in keep for arg in ("--ids", i)]
    assert main(["data", "sample", "--round", "3", *ids, "--n", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [f"config: ids: [{', '.join(keep)}]", "config: sample: {n: 2, seed: 3}"]
    chosen = out[-4].split(": ", 1)[1].split(", ")
    with_ids = generate_tests({"round": "3", "ids": keep, "sample": {"n": 2, "seed": 3}}, pack_root=REPO)
    assert chosen == [query_id(t) for t in with_ids]
