"""What a Round 3 row costs under promptfoo, next to one trivial Python assertion (issue 9, goal 1).

Runs the main job (``promptfooconfig.yaml``: 24 rows of recorded answers and recorded judge replies,
offline) with ``--repeat`` (default 5, so 120 rows) and the job's concurrency, under five assertion
set-ups that differ in nothing else:

* ``contains`` — one built-in assertion: promptfoo's own cost of a row (the baseline);
* ``trivial python`` — one ``type: python`` assertion that returns a pass: what promptfoo's fresh
  Python process costs;
* ``round3 python`` — the verifier, the judge and the Round 3 composite through the Python entry files
  (three fresh Python processes per row);
* ``round3 worker`` — the same three through ``assertions/grounding.cjs`` (promptfoo's Node process
  forwards each call to warm Python workers): what the shipped configs use.

It prints each wall time, the marginal time per row over the baseline, and the goal's ratio:
marginal(round3 worker) / marginal(trivial python), which should be at most 2. It also checks that the
two Round 3 set-ups gave every row the same pass, score and named scores.

Goal 4: the size of this pack's metadata per row (what the verifier, judge and composite put in the
row's component results), largest and mean, over the Round 3 worker run (should be at most 5 kB).

Issue 21: what grading adds to promptfoo's own row — the mean size of a results row (``-o``) under
``round3 worker`` less that under ``contains``, same rows (should be at most 12 kB).

Goal 5: ``grounding-eval rescore`` over the Round 3 worker results repeated to ``--rescore-rows`` rows
(default 1,200): its grading rate in rows/s with one process per CPU (should be at least 100), as the
command itself reports it, and the whole command's wall time (reading and writing included).

Run from the repository root after ``scripts/install``::

    .venv/bin/python benchmarks/eval_speed.py [--repeat 5] [--runs 1]

A measurement, not a test: nothing here asserts a threshold.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
MAIN = REPO / "promptfooconfig.yaml"

TRIVIAL = """def get_assert(output, context):
    return {"pass": True, "score": 1.0, "reason": "trivial"}
"""


def _absolute(value: Any) -> Any:
    """The main job's ``file://`` references made absolute (the variants are written elsewhere)."""
    if isinstance(value, str) and value.startswith("file://") and not value.startswith("file:///"):
        return f"file://{REPO}/{value[len('file://') :]}"
    if isinstance(value, dict):
        return {k: _absolute(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_absolute(v) for v in value]
    return value


def variants(tmp: Path) -> dict[str, Path]:
    """The set-ups, written as config files in ``tmp``."""
    base = _absolute(yaml.safe_load(MAIN.read_text(encoding="utf-8")))
    default = base["defaultTest"]
    trivial = tmp / "trivial.py"
    trivial.write_text(TRIVIAL, encoding="utf-8")
    entry = f"file://{REPO}/assertions/grounding.cjs"
    python_asserts, worker_asserts = [], []
    for assertion in default["assert"]:
        name = (
            "verifier"
            if str(assertion["value"]).endswith("verifier") or "verifier.py" in assertion["value"]
            else "judge"
        )
        python_asserts.append(
            {**assertion, "type": "python", "value": f"file://{REPO}/assertions/{name}.py:get_assert"}
        )
        worker_asserts.append({**assertion, "type": "javascript", "value": f"{entry}:{name}"})
    assert {a["value"].rsplit(":", 1)[-1] for a in worker_asserts} == {"verifier", "judge"}, default["assert"]
    setups: dict[str, dict[str, Any]] = {
        "contains": {"assert": [{"type": "not-contains", "value": "\u0000"}]},
        "trivial python": {"assert": [{"type": "python", "value": f"file://{trivial}:get_assert"}]},
        "round3 python": {
            "assert": python_asserts,
            "assertScoringFunction": f"file://{REPO}/assertions/composite.py:round3",
        },
        "round3 worker": {"assert": worker_asserts, "assertScoringFunction": f"{entry}:round3"},
    }
    paths = {}
    for name, test in setups.items():
        config = {**base, "defaultTest": test}
        path = tmp / f"{name.replace(' ', '_')}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        paths[name] = path
    return paths


def run(config: Path, out: Path, repeat: int, home: Path) -> float:
    """Wall seconds of one ``promptfoo eval`` of ``config`` (exit 0 or 100 both count as a run)."""
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(home), "NO_COLOR": "1"}
    cmd = ["npx", "promptfoo", "eval", "-c", str(config), "--repeat", str(repeat), "--no-cache"]
    cmd += ["--no-progress-bar", "--no-table", "-o", str(out)]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 100):
        raise SystemExit(f"{config.name}: promptfoo exited {done.returncode}\n{done.stderr[-2000:]}")
    return seconds


def _verdicts(path: Path) -> list[tuple[Any, ...]]:
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    key = [
        (
            r["testIdx"],
            r["promptIdx"],
            r["success"],
            r["score"],
            json.dumps(r.get("namedScores"), sort_keys=True),
        )
        for r in rows
    ]
    return sorted(key)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="promptfoo --repeat (default 5: 120 rows)")
    parser.add_argument("--runs", type=int, default=1, help="runs per set-up; the median is used")
    parser.add_argument("--rescore-rows", type=int, default=1200, help="rows for the rescore measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eval-speed-") as name:
        tmp = Path(name)
        configs = variants(tmp)
        times: dict[str, float] = {}
        for setup, config in configs.items():
            samples = [
                run(config, tmp / f"{config.stem}.json", args.repeat, tmp / "home") for _ in range(args.runs)
            ]
            times[setup] = statistics.median(samples)
        rows = len(json.loads((tmp / "contains.json").read_text(encoding="utf-8"))["results"]["results"])
        same = _verdicts(tmp / "round3_python.json") == _verdicts(tmp / "round3_worker.json")
        sizes = _metadata_sizes(tmp / "round3_worker.json")
        added = _row_bytes(tmp / "round3_worker.json") - _row_bytes(tmp / "contains.json")
        rescore = _rescore(tmp / "round3_worker.json", tmp, args.rescore_rows)
    base = times["contains"]
    print(f"{rows} rows, concurrency as in {MAIN.name}, median of {args.runs} run(s)")
    for setup, seconds in times.items():
        marginal = (seconds - base) / rows * 1000
        print(f"  {setup:<15} {seconds:6.1f} s   marginal {marginal:7.1f} ms/row")
    trivial = times["trivial python"] - base
    for setup in ("round3 python", "round3 worker"):
        print(
            f"goal 1 ratio, {setup}: {(times[setup] - base) / trivial:.2f}x the trivial Python assertion (goal <= 2)"
        )
    print(f"round3 python and round3 worker verdicts identical: {'yes' if same else 'NO'}")
    largest, mean = max(sizes) / 1000, statistics.mean(sizes) / 1000
    print(f"goal 4, our metadata per row: largest {largest:.1f} kB, mean {mean:.1f} kB (goal <= 5 kB)")
    print(
        f"issue 21, grading adds {added / 1000:.1f} kB per Round 3 row to promptfoo's own row (goal <= 12 kB)"
    )
    print(f"goal 5, {rescore}")
    return 0


def _row_bytes(path: Path) -> float:
    """The mean size of a results row, as promptfoo writes it (``-o``)."""
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return statistics.mean(len(json.dumps(r, ensure_ascii=False)) for r in rows)


def _metadata_sizes(path: Path) -> list[int]:
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return [
        sum(
            len(json.dumps(c.get("metadata") or {}, ensure_ascii=False))
            for c in r["gradingResult"]["componentResults"]
        )
        + len(json.dumps(r["gradingResult"].get("metadata") or {}, ensure_ascii=False))
        for r in rows
    ]


def _rescore(results: Path, tmp: Path, rows: int) -> str:
    data = json.loads(results.read_text(encoding="utf-8"))
    have = data["results"]["results"]
    data["results"]["results"] = (have * (rows // len(have) + 1))[:rows]
    big = tmp / "rescore_in.json"
    big.write_text(json.dumps(data), encoding="utf-8")
    cmd = [
        str(REPO / ".venv" / "bin" / "grounding-eval"),
        "rescore",
        str(big),
        "-o",
        str(tmp / "rescore_out.json"),
    ]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"rescore failed: {done.stderr[-2000:]}")
    return f"rescore: {done.stdout.strip()} [command wall time {seconds:.1f} s] (goal >= 100 rows/s grading)"


if __name__ == "__main__":
    raise SystemExit(main())
