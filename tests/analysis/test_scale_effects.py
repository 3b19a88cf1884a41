"""``report --effects`` at scale (issue 19): the statistics of 20,000 rows cost about what reading them
costs, where they cost 30× a ``json.load`` of the file before (160 s for 100,000 rows)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from grounding_eval.analysis.effects import paired_effects
from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import load_results
from tests.analysis.rows import REPO

SAMPLE = REPO / "tests" / "fixtures" / "report" / "round3_sample.json"  # real Round 3 rows, trimmed
MODELS = ("model-a", "model-b", "model-c", "model-d")


def _study(rows: int) -> tuple[list[ReportRow], str]:
    """``rows`` report rows and the results text they come from: the sample's 24 rows (8 items × C0 / C1 /
    C1.5) copied with their own item ids under four model labels (as ``benchmarks/report_scale.py``)."""
    raw = json.loads(SAMPLE.read_text(encoding="utf-8"))
    base_raw: list[dict[str, Any]] = raw["results"]["results"]
    base = load_results(SAMPLE).rows
    out: list[ReportRow] = []
    text_rows: list[dict[str, Any]] = []
    number = 0
    while len(out) < rows:
        copy, model = divmod(number // len(base), len(MODELS))
        for r, source in zip(base, base_raw, strict=True):
            if len(out) == rows:
                break
            item = f"{r.query_id}~{copy}"
            out.append(replace(r, keys={**r.keys, "provider": MODELS[model]}, query_id=item))
            text_rows.append({**source, "vars": {**source["vars"], "query_id": item}})
            number += 1
    return out, json.dumps({**raw, "results": {**raw["results"], "results": text_rows}})


def test_effects_cost_about_what_reading_the_file_costs() -> None:
    rows, text = _study(20_000)
    started = time.process_time()
    json.loads(text)
    load = time.process_time() - started
    started = time.process_time()
    effects = paired_effects(rows)
    spent = time.process_time() - started
    composite = [e for e in effects if e.metric == "composite"]
    assert len(composite) == len(MODELS) * 3  # three pairs per model
    assert all(e.n > 1000 and e.ci_low is not None and e.p_value is not None for e in composite)
    # Measured on 2 shared cores: 0.6–1.2× json.loads (was ≈ 30×: one draw and one gather per metric).
    assert spent < 2.5 * load + 1.0, (spent, load)
