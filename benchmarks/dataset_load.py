"""Measure loading a full-size dataset and filling C1/C1.5 for every query.

Builds, in a temporary folder, a dataset the size of the private originals — a 5,322-record content
index over the six states, 85 cached articles (≈12,000 characters each, like the IL housing articles)
and 115 queries — from the sample's own records and texts repeated, then times:

* ``load_dataset`` (validation of every record and article), and
* ``condition_vars`` for all 115 queries (relevance over the whole index, template rendering).

Run: .venv/bin/python benchmarks/dataset_load.py
"""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from itertools import cycle
from pathlib import Path

from grounding_eval.data.conditions import condition_vars
from grounding_eval.data.dataset import load_dataset

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
STATES = ("IL", "TX", "MI", "OH", "OR", "WV")


def build(root: Path, records: int = 5322, articles: int = 85, queries: int = 115) -> None:
    base = [
        json.loads(line) for line in (SAMPLE / "jkb_index.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    texts = [p.read_text(encoding="utf-8") for p in sorted((SAMPLE / "articles").glob("*.txt"))]
    (root / "articles").mkdir()
    with (root / "jkb_index.jsonl").open("w", encoding="utf-8") as out:
        for i, (rec, state) in enumerate(zip(cycle(base), cycle(STATES), strict=False)):
            if i == records:
                break
            row = {**rec, "id": f"r{i:05d}", "state": state, "url": f"{rec['url'].rstrip('/')}/p{i}"}
            out.write(json.dumps(row) + "\n")
    text_cycle = cycle(texts)
    for i in range(articles):
        body = next(text_cycle)
        while len(body) < 12_000:
            body += "\n\n" + next(text_cycle)
        (root / "articles" / f"r{i:05d}.txt").write_text(body[:12_000], encoding="utf-8")
    base_q = [
        json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    with (root / "queries.jsonl").open("w", encoding="utf-8") as out:
        for i, q in enumerate(cycle(base_q)):
            if i == queries:
                break
            out.write(
                json.dumps({**{k: v for k, v in q.items() if k != "article_ids"}, "id": f"q{i:03d}"}) + "\n"
            )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ge-data-") as tmp:
        root = Path(tmp)
        build(root)
        t0 = time.perf_counter()
        dataset = load_dataset(root)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        sizes = [condition_vars(q, dataset) for q in dataset.queries]
        fill_s = time.perf_counter() - t0
        tracemalloc.start()  # a second, traced pass for memory only: tracing slows the timed one
        traced = load_dataset(root)
        for q in traced.queries:
            condition_vars(q, traced)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"load_dataset: {len(dataset.index)} index records, {len(dataset.articles)} articles, "
          f"{len(dataset.queries)} queries in {load_s * 1000:.0f} ms")  # fmt: skip
    per_query = fill_s / len(sizes) * 1000
    print(f"C1/C1.5 for all {len(sizes)} queries: {fill_s * 1000:.0f} ms ({per_query:.1f} ms per query); "
          f"peak Python memory {peak / 2**20:.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
