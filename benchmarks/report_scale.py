"""``grounding-eval report`` on a 100,000-row results file: time and peak memory (issue 19).

Builds, in a temporary folder, a promptfoo results file of ``--rows`` rows (100,000 by default) from the
real Round 3 sample rows in ``tests/fixtures/report/round3_sample.json`` (8 items × C0 / C1 / C1.5, as
promptfoo wrote them, trimmed to what the report reads): each copy of the 24 rows gets its own item ids
(``hr-il-lockout-01~17``), result ids and one of four model labels, so the groups, the paired effects and
the HTML page see 4 models × 3 conditions × ~8,300 items. At 100k rows the file is some 260 MB, the
size ``DESIGN.md`` names.

Then it times, each in its own process (wall time; peak resident memory from the child's own
``rusage``, as ``os.wait4`` returns it — the same figure ``getrusage(RUSAGE_CHILDREN)`` gives when one
child is waited for):

* a bare ``json.load`` of the file (the yardstick),
* ``grounding-eval report --json``,
* ``grounding-eval report --effects --json``,
* ``grounding-eval report --html FILE``,

and prints each figure with its ratio to ``json.load``. Goals (issue 19): ``report --effects --json``
within 4× the time of ``json.load``, and every report command's peak memory at most 1.5 GB. Exits 1
when a goal fails (or a command fails), 0 otherwise.

The time goal is judged on each process's CPU time (user + system, from the same ``rusage``): on a
shared machine wall time moves with everything else running (a bare ``json.load`` of this file took
15 s in one run and 47 s in another on 2 busy cores), while CPU time stays put. Both are printed.

Run from the repository root: ``.venv/bin/python benchmarks/report_scale.py [--rows 100000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "tests" / "fixtures" / "report" / "round3_sample.json"
MODELS = ("model-a", "model-b", "model-c", "model-d")
TIME_GOAL = 4.0  # report --effects --json ÷ json.load
MEMORY_GOAL = 1.5e9  # bytes of peak resident memory, per report command


def _retag(row: dict[str, Any], copy: int, model: str, number: int) -> dict[str, Any]:
    """One sample row as item ``<id>~<copy>`` answered by ``model``, with its own result id."""
    qid = f"{row['vars']['query_id']}~{copy}"
    test = row["testCase"]
    return {
        **row,
        "id": f"r{number:07d}",
        "provider": {**row["provider"], "label": model},
        "vars": {**row["vars"], "query_id": qid},
        "testCase": {**test, "metadata": {**test["metadata"], "query_id": qid}},
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def build(path: Path, rows: int) -> int:
    """Write a results file of ``rows`` rows at ``path``; returns its size in bytes."""
    sample = json.loads(SOURCE.read_text(encoding="utf-8"))
    base = sample["results"]["results"]
    head = {
        "evalId": "eval-report-scale",
        "config": {
            "description": f"report_scale: {rows:,} rows from {SOURCE.name}",
            "providers": [{"id": base[0]["provider"]["id"], "label": m} for m in MODELS],
        },
    }
    prompts = [{"label": c, "id": f"prompt-{c}"} for c in ("C0", "C1", "C1.5")]
    with path.open("w", encoding="utf-8") as out:
        out.write(_compact(head)[:-1])
        out.write(',"results":{"version":3,"timestamp":"2026-12-01T00:00:00.000Z","prompts":')
        out.write(_compact(prompts))
        out.write(',"results":[')
        number = 0
        while number < rows:
            copy, model = divmod(number // len(base), len(MODELS))
            for row in base:
                if number == rows:
                    break
                out.write(("," if number else "") + _compact(_retag(row, copy, MODELS[model], number)))
                number += 1
        out.write("]}}")
    return path.stat().st_size


def measure(command: list[str]) -> tuple[float, float, int, str]:
    """Run ``command``; its wall and CPU seconds, peak resident bytes and (when it failed) its last stderr
    line."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    failure = "" if child.returncode == 0 else f"exit {child.returncode}: {(lines or ['?'])[-1][:200]}"
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss * 1024, failure  # ru_maxrss is in KiB on Linux


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args(argv)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="ge-report-scale-") as tmp:
        results = Path(tmp) / "results.json"
        size = build(results, args.rows)
        print(f"{args.rows:,} rows, {size / 1e6:.0f} MB ({results.name} from {SOURCE.name})")
        cli = [python, "-m", "grounding_eval", "report", str(results)]
        runs = {
            "json.load": [python, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))", str(results)],
            "report --json": [*cli, "--json"],
            "report --effects --json": [*cli, "--effects", "--json"],
            "report --html": [*cli, "--html", str(Path(tmp) / "report.html")],
        }
        figures = {name: measure(command) for name, command in runs.items()}
    wall_base, cpu_base = figures["json.load"][:2]
    failed = []
    for name, (seconds, cpu, peak, failure) in figures.items():
        ratios = "" if name == "json.load" else f" ({seconds / wall_base:4.1f}×)"
        cpu_ratio = "" if name == "json.load" else f" ({cpu / cpu_base:4.1f}×)"
        print(f"{name:<24} wall {seconds:6.1f} s{ratios:<8}  cpu {cpu:6.1f} s{cpu_ratio:<8}  peak {peak / 1e9:.2f} GB"
              f"  {failure}".rstrip())  # fmt: skip
        if failure:
            failed.append(f"{name} failed")
        elif name != "json.load" and peak > MEMORY_GOAL:
            failed.append(f"{name} peak {peak / 1e9:.2f} GB > {MEMORY_GOAL / 1e9:.1f} GB")
    effects = figures["report --effects --json"][1]
    if effects > TIME_GOAL * cpu_base:
        failed.append(
            f"report --effects --json took {effects / cpu_base:.1f}× json.load's CPU time (goal ≤ {TIME_GOAL:.0f}×)"
        )
    for line in failed:
        print(f"goal not met: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
