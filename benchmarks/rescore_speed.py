"""Measure ``grounding-eval rescore`` on 120 Round 3 rows, start-up included (issue 38's goal: >= 100 rows/s).

Runs the main job (``promptfooconfig.yaml``: 24 rows of recorded answers and judge replies, offline) once
with ``--repeat 5`` under the pinned promptfoo, then times ``grounding-eval rescore`` on its results as a
user runs it: a fresh process (the interpreter's start-up, imports, reading, grading with one process per
CPU, writing), ``--runs`` times. Bytecode is cached as after an install (``PYTHONDONTWRITEBYTECODE`` is
dropped, a warm-up run writes it), and the citation pre-scan's cache (``$XDG_CACHE_HOME/grounding-eval``)
is warm, as after any first run. It prints each run's rows per second (rows / the command's wall time)
and their median, with the CPU time the command's processes used (on a loaded machine the wall clock
waits for a core; the CPU time says what the command costs); ``--check`` exits 1 when the median is
under 100 rows/s.

``--results FILE`` rescores an existing results file instead of running promptfoo (it must be one this
checkout's promptfoo run wrote: rescore refuses rows it cannot read).

Run from the repository root after ``scripts/install``::

    .venv/bin/python benchmarks/rescore_speed.py [--runs 5] [--check] [--results FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 100.0  # rows per second, start-up included


def _promptfoo_results(tmp: Path) -> Path:
    """The main job's results for 120 rows (24 rows, --repeat 5), written by the pinned promptfoo."""
    out = tmp / "round3.json"
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp / "home"), "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    cmd = ["npx", "promptfoo", "eval", "-c", str(REPO / "promptfooconfig.yaml"), "--repeat", "5", "--no-cache",
           "--no-progress-bar", "--no-table", "-o", str(out)]  # fmt: skip
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode not in (0, 100) or not out.exists():
        raise SystemExit(f"promptfoo eval failed ({done.returncode}): {done.stderr[-2000:]}")
    return out


def measure(results: Path, runs: int) -> list[float]:
    """Rows per second of ``runs`` rescore commands (after one warm-up run)."""
    rows = len(json.loads(results.read_text(encoding="utf-8"))["results"]["results"])
    with tempfile.TemporaryDirectory(prefix="rescore-speed-") as name:
        tmp = Path(name)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
        cmd = [
            sys.executable,
            "-m",
            "grounding_eval.cli",
            "rescore",
            str(results),
            "-o",
            str(tmp / "out.json"),
        ]
        rates = []
        for n in range(runs + 1):
            started, cpu = time.perf_counter(), _children_cpu()
            done = subprocess.run(
                cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=600
            )
            seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
            if done.returncode != 0:
                raise SystemExit(f"rescore failed ({done.returncode}): {done.stderr[-2000:]}")
            if n:  # (the first run writes bytecode)
                rates.append(rows / seconds)
                print(
                    f"run {n}: {rows} rows in {seconds:.2f} s = {rows / seconds:.0f} rows/s "
                    f"({cpu:.2f} s of CPU time in all processes)",
                    flush=True,
                )
    return rates


def _children_cpu() -> float:
    """User and system CPU seconds of the waited-for child processes so far (the rescore and its pool)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed rescore runs (median reported)")
    parser.add_argument("--results", type=Path, help="an existing results file (default: run promptfoo)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 under {GOAL:.0f} rows/s")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rescore-speed-results-") as name:
        results = args.results or _promptfoo_results(Path(name))
        rates = measure(results, args.runs)
    median = statistics.median(rates)
    print(
        f"rescore, start-up included: median {median:.0f} rows/s over {len(rates)} runs (goal >= {GOAL:.0f})"
    )
    return 1 if args.check and median < GOAL else 0


if __name__ == "__main__":
    raise SystemExit(main())
