"""A sampled round's sample in every row: test metadata, component provenance, the provenance summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.sample import METHOD, SampleSpec, draw_sample, ids_digest
from grounding_eval.provenance import format_provenance, results_provenance, row_provenance
from tests.promptfoo_runs import run_eval
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[2]
CONFIG = "tests/fixtures/data/sample_round3_n4.yaml"
SPEC = {"n": 4, "seed": 7, "stratify": ["risk_tier"], "method": METHOD, "pool": 8, "ids_sha256": "0" * 64}


class TestRowProvenance:
    def test_sample_without_ids(self) -> None:
        out = row_provenance(dataset="datasets/sample", sample={**SPEC, "ids": ["a", "b"]})
        assert out["sample"] == SPEC

    @pytest.mark.parametrize("sample", [None, "n=4", ["a"]])
    def test_no_sample_no_key(self, sample: Any) -> None:
        assert "sample" not in row_provenance(dataset="datasets/sample", sample=sample)


def _results(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"results": {"results": rows}}


class TestSummary:
    def test_error_rows_count_through_their_metadata(self) -> None:
        """A graded row names its sample in its components; an ERROR row (no components) in its metadata."""
        graded = {"gradingResult": {"componentResults": [{"metadata": {"provenance": {"grounding_eval": "0.1.0",
                  "dataset": "sample", "sample": SPEC}}}]}}  # fmt: skip
        error = {"metadata": {"sample": {**SPEC, "ids": ["x"]}}}
        summary = results_provenance(_results([graded, error, {"metadata": {}}]))
        label = "n 4 of 8, seed 7, stratified by risk_tier (ids sha256:000000000000)"
        assert summary["samples"] == {label: 2}
        assert format_provenance(summary)[-1] == f"samples: {label} (2 rows)"

    def test_unsampled_summary_reads_as_before(self) -> None:
        summary = results_provenance(_results([{"metadata": {}}]))
        assert summary["samples"] == {}
        assert not any(line.startswith("samples") for line in format_provenance(summary))


@pytest.mark.e2e
def test_sampled_round_records_its_sample_in_every_row(tmp_path: Path) -> None:
    """Round 3 on sample {n: 4, seed: 7, stratify: [risk_tier]}: 12 rows, each with the ids in its
    metadata and the spec in both components' provenance."""
    done = run_eval(CONFIG, tmp_path)
    assert done.out.exists(), done.tail()
    rows = done.rows()
    dataset = load_dataset(REPO / "datasets" / "sample")
    drawn = draw_sample(dataset.high_risk, SampleSpec(n=4, seed=7, stratify=("risk_tier",)))
    assert sorted({query_id(r) for r in rows}) == sorted(drawn.ids)
    assert len(rows) == 12
    for row in rows:
        assert row["metadata"]["sample"]["ids"] == drawn.ids
        provenances = [c["metadata"]["provenance"] for c in row["gradingResult"]["componentResults"]
                       if "provenance" in (c.get("metadata") or {})]  # fmt: skip
        assert len(provenances) >= 2  # verifier and judge
        for provenance in provenances:
            assert provenance["sample"]["ids_sha256"] == ids_digest(drawn.ids)
            assert provenance["sample"]["n"] == 4
    summary = results_provenance({"results": {"results": rows}})
    assert summary["samples"] == {
        f"n 4 of 8, seed 7, stratified by risk_tier (ids sha256:{ids_digest(drawn.ids)[:12]})": 12
    }
