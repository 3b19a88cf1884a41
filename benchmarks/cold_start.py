"""Measure a cold verifier call: what promptfoo pays per row for the verifier assertion.

promptfoo runs every ``type: python`` assertion in a fresh Python process: its ``wrapper.py`` imports
``assertions/verifier.py``, calls ``get_assert(output, context)`` and writes the result as JSON. This
times that process, on the benchmark answer of ``benchmarks/benchmark_answer.py`` (≈600 words, URLs,
phone numbers and quotes, checked against two statutes shown in full), against ``python -c pass`` with
the same interpreter:

* ``python -c pass`` — the interpreter alone (with the venv's site-packages);
* promptfoo's wrapper calling a trivial assertion — the floor every Python assertion pays: the wrapper
  itself imports ``asyncio``, ``inspect`` and ``json``;
* promptfoo's wrapper calling the verifier — what a row costs;
* the verifier without the wrapper — the same import, call and JSON dump in a bare process;
* the floor — ``python -c "import json, re, ..."`` with the third-party libraries the verifier's call on
  this answer imported (found by running it once: ``phonenumbers`` for its phone numbers, ``rapidfuzz``
  for its near quotes), and the same plus the standard-library modules our code cannot reasonably do
  without (``dataclasses``, ``enum``, ``hashlib`` for the resource cache's keys, ``pathlib``, ``typing``).
  A cold call imports at least these, so it cannot be below them.

Goal 2 of issue 9 is the ratio *cold verifier call / python -c pass*; it prints that ratio for the
wrapper run, and for the verifier's own share (the wrapper run minus the trivial one, plus the
interpreter). Runs are interleaved (one of each per round) so that other load on the shared machine hits
all of them alike: each ratio is the median over rounds of that round's ratio, with the ratio of the
minimums beside it (a quiet machine); each kind's median and minimum time are printed too. Bytecode
is cached as in a normal install (``PYTHONDONTWRITEBYTECODE`` is dropped; a warm-up round writes it)
and the processes run in a scratch folder, where the verifier's compiled-resource cache
(the user's, ``~/.cache/grounding-eval``, sealed: :mod:`grounding_eval.user_cache`) is written by the
warm-up round, as by a promptfoo run's first row.

Run from the repository root::

    .venv/bin/python benchmarks/cold_start.py [--runs 21]

These are measurements, not tests: nothing here asserts a threshold.
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
sys.path.insert(0, str(REPO / "benchmarks"))

from benchmark_answer import ARTICLES, SOURCE_FILES, build_answer  # noqa: E402

PROMPTFOO_WRAPPER = REPO / "node_modules" / "promptfoo" / "dist" / "src" / "python" / "wrapper.py"
# promptfoo 0.121's wrapper.py, for a checkout without node_modules: import the file, call, dump JSON.
WRAPPER_COPY = """import asyncio, importlib.util, inspect, json, os, sys
def call_method(script_path, method_name, *args):
    script_dir = os.path.dirname(os.path.abspath(script_path))
    module_name = os.path.basename(script_path).rsplit(".", 1)[0]
    if script_dir not in sys.path:
        sys.path.insert(0, script_dir)
    print(f"Importing module {module_name} from {script_dir} ...")
    spec = importlib.util.spec_from_file_location(module_name, script_path)
    script_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script_module)
    method_to_call = getattr(script_module, method_name)
    if inspect.iscoroutinefunction(method_to_call):
        return asyncio.run(method_to_call(*args))
    return method_to_call(*args)
if __name__ == "__main__":
    script_path, method_name, json_path, output_path = sys.argv[1:5]
    with open(json_path, "r", encoding="utf-8") as fp:
        data = json.load(fp)
    result = call_method(script_path, method_name, *data)
    with open(output_path, "w", encoding="utf-8") as fp:
        json.dump({"type": "final_result", "data": result}, fp, ensure_ascii=False)
"""
# The verifier without the wrapper: import the assertion file, call it, write the result.
BARE_CALL = """import importlib.util, json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))  # the wrapper's one path step
spec = importlib.util.spec_from_file_location("verifier", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
with open(sys.argv[2], encoding="utf-8") as fp:
    data = json.load(fp)
result = module.get_assert(*data)
with open(sys.argv[3], "w", encoding="utf-8") as fp:
    json.dump({"type": "final_result", "data": result}, fp, ensure_ascii=False)
"""
TRIVIAL = 'def get_assert(output, context):\n    return {"pass": True, "score": 1.0, "reason": "trivial"}\n'
# The third-party libraries a verifier call may import, and the standard-library modules our code cannot
# reasonably do without (the dataclasses of every report, enums of every status, paths, type hints, the
# resource cache's SHA-256 keys). ``re`` and ``json`` are in every floor: every check and the wrapper use them.
LIBRARIES = ("phonenumbers", "rapidfuzz")
STDLIB = ("dataclasses", "enum", "hashlib", "pathlib", "typing")
# Run once, untimed: which of LIBRARIES the bare verifier call imported.
PROBE = BARE_CALL + f"print(' '.join(name for name in {LIBRARIES!r} if name in sys.modules))\n"


def row_input(answer: str, source: str) -> list[object]:
    """``[output, context]`` as promptfoo passes them for one C1.5-like row (source shown in full)."""
    context = {
        "prompt": f"{answer}\n\n{source}",
        "vars": {"answer": answer, "jkb_full_content": source, "jurisdiction": "MI"},
        "test": {"vars": {"jurisdiction": "MI"}, "metadata": {}},
        "config": {"liveness": "offline"},
    }
    return [answer, context]


def measure(runs: int = 21, assertion: Path = REPO / "assertions" / "verifier.py") -> dict[str, list[float]]:
    """Seconds per process of each kind, ``runs`` rounds (interleaved), after a warm-up round.

    Also returns the very first verifier call (before bytecode and the resource cache) under
    ``"first verifier call"``. The floor is named after what it imports (``"floor: import json, ..."``);
    ``"floor + stdlib"`` imports that and :data:`STDLIB`.
    """
    answer = build_answer()
    source = "\n\n".join((ARTICLES / f).read_text(encoding="utf-8") for f in SOURCE_FILES)
    with tempfile.TemporaryDirectory(prefix="ge-cold-") as tmp_name:
        tmp = Path(tmp_name)
        wrapper = PROMPTFOO_WRAPPER
        if not wrapper.exists():
            wrapper = tmp / "wrapper.py"
            wrapper.write_text(WRAPPER_COPY, encoding="utf-8")
        (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
        (tmp / "input.json").write_text(json.dumps(row_input(answer, source)), encoding="utf-8")
        work = tmp / "work"  # where promptfoo was launched
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        py = sys.executable
        out = str(tmp / "out.json")
        commands = {
            "python -c pass": [py, "-c", "pass"],
            "wrapper + trivial assertion": [py, str(wrapper), str(tmp / "trivial.py"), "get_assert",
                                            str(tmp / "input.json"), out],
            "wrapper + verifier": [py, str(wrapper), str(assertion), "get_assert", str(tmp / "input.json"), out],
            "verifier, no wrapper": [py, "-c", BARE_CALL, str(assertion), str(tmp / "input.json"), out],
        }  # fmt: skip

        def run(cmd: list[str]) -> float:
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, check=True)
            return time.perf_counter() - t0

        first_call = run(commands["wrapper + verifier"])  # writes bytecode and the resource cache
        result = json.loads(Path(out).read_text(encoding="utf-8"))["data"]
        if not {"pass", "score", "reason"} <= set(result) or result["reason"].startswith("ERROR"):
            raise SystemExit(f"the verifier did not grade the row: {result.get('reason', result)!r}")
        probe = [py, "-c", PROBE, str(assertion), str(tmp / "input.json"), out]
        imported = subprocess.run(
            probe, cwd=work, env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        floor = f"import {', '.join(['json', 're', *imported])}"
        commands[f"floor: {floor}"] = [py, "-c", floor]
        commands["floor + stdlib"] = [py, "-c", f"{floor}, {', '.join(STDLIB)}"]
        for cmd in commands.values():
            run(cmd)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                times[name].append(run(cmd))
    times["first verifier call"] = [first_call]
    return times


def report(times: dict[str, list[float]]) -> None:
    """Print each kind's median and minimum, and goal 2's ratios."""
    runs = len(times["python -c pass"])
    print(f"cold process ({runs} rounds, the benchmark answer; median and min):")
    width = max(map(len, times))
    for name, ts in times.items():
        if name != "first verifier call":
            print(
                f"  {name:{width}} median {statistics.median(ts) * 1000:6.1f} ms   min {min(ts) * 1000:6.1f} ms"
            )
    first = times["first verifier call"][0]
    print(f"  (first verifier call, before bytecode and resource cache: {first * 1000:.0f} ms)")

    # Each round ran one process of each kind back to back, so the ratio within a round cancels most of
    # whatever else the machine was doing then: the median of those ratios is the figure to quote, and
    # the ratio of the minimums says what a quiet machine would show.
    def ratio(name: str, over: str = "python -c pass") -> tuple[float, float]:
        per_round = [a / b for a, b in zip(times[name], times[over], strict=True)]
        return statistics.median(per_round), min(times[name]) / min(times[over])

    def own_share(name: str) -> tuple[float, float]:
        trivial, base = times["wrapper + trivial assertion"], times["python -c pass"]
        per_round = [(v - t + b) / b for v, t, b in zip(times[name], trivial, base, strict=True)]
        return statistics.median(per_round), (min(times[name]) - min(trivial) + min(base)) / min(base)

    full, floor, own, bare = (
        ratio("wrapper + verifier"), ratio("wrapper + trivial assertion"), own_share("wrapper + verifier"),
        ratio("verifier, no wrapper"),
    )  # fmt: skip
    print(
        f"goal 2: cold verifier call / python -c pass = {full[0]:.2f}x through promptfoo's wrapper "
        f"(ratio of minimums {full[1]:.2f}x; the wrapper alone: {floor[0]:.2f}x, minimums {floor[1]:.2f}x)"
    )
    print(
        f"        the verifier's own share, (wrapper + verifier - wrapper + trivial + pass) / pass: {own[0]:.2f}x "
        f"(minimums {own[1]:.2f}x); without the wrapper: {bare[0]:.2f}x (minimums {bare[1]:.2f}x)"
    )
    floor = next((name for name in times if name.startswith("floor: ")), None)
    if floor is not None:
        statement = floor.removeprefix("floor: ")
        libraries = [name for name in statement.removeprefix("import ").split(", ") if name in LIBRARIES]
        print(
            "        the floor, which a cold call cannot be below: importing what it cannot avoid — "
            f"on this answer {' and '.join(libraries) or 'no library'} (of {', '.join(LIBRARIES)})"
        )
        for name, imports in ((floor, statement), ("floor + stdlib", f"{statement}, {', '.join(STDLIB)}")):
            median, of_minimums = ratio(name)
            print(f"          {median:.2f}x (minimums {of_minimums:.2f}x)  python -c {imports!r}")
    print("        (ratios are medians of each round's ratio)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="rounds (one process of each kind per round)")
    parser.add_argument("--assertion", type=Path, default=REPO / "assertions" / "verifier.py")
    args = parser.parse_args()
    report(measure(args.runs, args.assertion))


if __name__ == "__main__":
    main()
