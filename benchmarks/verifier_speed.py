"""Measure the deterministic verifier's speed: in process, and the wall time it adds to a promptfoo row.

Run from the repository root after ``scripts/install``:

    .venv/bin/python benchmarks/verifier_speed.py [--rows 60] [--seconds 5] [--skip-cold] [--skip-promptfoo]
    .venv/bin/python benchmarks/verifier_speed.py --against /tmp/base901 [--rounds 5] [--seconds 1]

1. In-process throughput (issue 9's goal 3): answers per second for a ~600-word answer with several URLs,
   phone numbers and quotes, checked against a ~8,700-token source (two public-domain statutes from the
   sample articles); the median, best and worst of half-second rounds.
2. A cold call (issue 9's goal 2): ``benchmarks/cold_start.py``'s measurement of one promptfoo row's fresh
   process against ``python -c pass``, printed as a ratio.
   The same with a paragraph of statute citations, and with a case citation as well (the citations
   check), and the first-use cost of the citations libraries in a fresh process.
3. Under promptfoo: the same answer graded on N rows by the verifier assertion, against N rows graded by
   one trivial Python assertion (promptfoo's ``echo`` provider, so no model is involved). The difference
   divided by N is the wall time per row the verifier adds. Both runs use the same concurrency.

``--against PATH`` compares this checkout with another one (a ``git worktree`` of an older commit, say)
in the same run, since this machine's speed drifts by ±30 % between runs: each round runs one fresh
process per checkout, in alternating order, each importing its own ``grounding_eval`` (``PYTHONPATH``)
with this interpreter and measuring the same answers (built here) for ``--seconds`` each, taking turns
by half-second rounds: the plain answer, with statutes, with statutes and a case. Each rate is counted
per second of the process's CPU time (what the code costs, steady when other work shares the machine)
and per second of the wall clock. It prints each rate's median over ``--rounds`` rounds, the median of
the rounds' ratios this/other for each answer, and this checkout's statutes/plain and case/plain ratios
(issue 38's goals: plain ≥ 0.95× 901235b, statutes ≥ 0.75× plain, case ≥ 0.6× plain), and the first
use of the citation libraries in a fresh process (its median over the rounds)::

    .venv/bin/python benchmarks/verifier_speed.py --against /tmp/base901 --rounds 5 --seconds 2

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

from benchmark_answer import ARTICLES, CASE, SOURCE_FILES, STATUTES, build_answer  # noqa: E402
from cold_start import measure, report  # noqa: E402


def library_first_use() -> dict[str, float]:
    """Seconds a fresh process spends on the citations check's first use: citeurl's templates
    (``citations._library()``), then eyecite's first call, then a first statute-only answer."""
    code = (
        "import json, time\n"
        "from grounding_eval.verifier import citations as c\n"
        "t = time.perf_counter(); c.find_citations('MCL 554.602 and Id.'); a = time.perf_counter() - t\n"
        "t = time.perf_counter(); c._library(); b = time.perf_counter() - t\n"
        "t = time.perf_counter(); c.find_citations('245 N.W.2d 737'); e = time.perf_counter() - t\n"
        "print(json.dumps({'first_statute_s': a, 'library_after_s': b, 'first_case_s': e}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def in_process(answer: str, source: str, seconds: float, fresh: bool = False) -> dict[str, float]:
    """``fresh``: the citations check's per-sentence memory is emptied before each answer (what an
    answer whose sentences were never read costs)."""
    from grounding_eval.verifier.setup import load_resources
    from grounding_eval.verifier.verdict import verify

    t0 = time.perf_counter()
    resources = load_resources(
        allowlist=REPO / "datasets" / "sample" / "allowlist.txt",
        orgs=REPO / "datasets" / "sample" / "organizations.yaml",
        liveness="offline",
    )
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = verify(answer, jurisdiction="MI", sources=[source], resources=resources)
    first_s = time.perf_counter() - t0
    # Rounds of about half a second: the median round says what a run sees, the best one what the code
    # does when the shared machine leaves it alone.
    rates = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(rates) < 3:
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.5:
            if fresh:
                from grounding_eval.verifier.citations import _sentence

                _sentence.cache_clear()
            verify(answer, jurisdiction="MI", sources=[source], resources=resources)
            n += 1
        rates.append(n / (time.perf_counter() - t0))
    return {
        "load_resources_ms": load_s * 1000,
        "first_answer_ms": first_s * 1000,
        "answers_per_second": statistics.median(rates),
        "best_answers_per_second": max(rates),
        "worst_answers_per_second": min(rates),
        "rounds": len(rates),
        "ms_per_answer": 1000 / statistics.median(rates),
        "urls": len(first.urls),
        "phones": len(first.phones),
        "quotes": len(first.quotes),
        "citations": len(getattr(first, "citations", ())),  # (none in a checkout without the check)
    }


TRIVIAL = """def get_assert(output, context):
    return {"pass": True, "score": 1.0, "reason": "trivial"}
"""


def promptfoo_rows(answer: str, source: str, rows: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ge-bench-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "trivial.py").write_text(TRIVIAL, encoding="utf-8")
        (tmp / "answer.txt").write_text(answer, encoding="utf-8")
        (tmp / "source.txt").write_text(source, encoding="utf-8")
        tests = [
            {
                "vars": {
                    "answer": "file://answer.txt",
                    "jkb_full_content": "file://source.txt",
                    "jurisdiction": "MI",
                }
            }
            for _ in range(rows)
        ]
        timings = {}
        for name, assertion in (
            ("trivial", {"type": "python", "value": "file://trivial.py"}),
            ("verifier", {"type": "python", "value": f"file://{REPO}/assertions/verifier.py:get_assert",
                          "config": {"liveness": "offline"}}),
        ):  # fmt: skip
            config = {
                "prompts": ["{{answer}}\n\n{{jkb_full_content}}"],
                "providers": ["echo"],
                "defaultTest": {"assert": [assertion]},
                "tests": tests,
            }
            path = tmp / f"{name}.json"
            path.write_text(json.dumps(config), encoding="utf-8")
            env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp / ".promptfoo"), "NO_COLOR": "1"}
            t0 = time.perf_counter()
            result = subprocess.run(
                ["npx", "promptfoo", "eval", "-c", str(path), "--no-cache", "--no-progress-bar", "--no-table",
                 "-o", str(tmp / f"{name}-out.json")],
                cwd=REPO, env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            timings[name] = time.perf_counter() - t0
            if result.returncode not in (0, 100):
                raise SystemExit(f"promptfoo failed ({result.returncode}): {result.stderr[-2000:]}")
            out = json.loads((tmp / f"{name}-out.json").read_text(encoding="utf-8"))
            graded = [r for r in out["results"]["results"] if r.get("gradingResult")]
            if len(graded) != rows:
                raise SystemExit(f"{name}: expected {rows} graded rows, got {len(graded)}")
    return {
        "rows": rows,
        "trivial_total_s": timings["trivial"],
        "verifier_total_s": timings["verifier"],
        "added_ms_per_row": (timings["verifier"] - timings["trivial"]) / rows * 1000,
    }


# The answers --against measures in each checkout: (name, paragraph added to the plain answer).
VARIANTS = (("plain", ""), ("statutes", STATUTES), ("statutes + case", STATUTES + CASE))


def _worker(seconds: float) -> None:
    """One --against round in this process (whichever ``grounding_eval`` PYTHONPATH names): each
    variant's in-process rates, as JSON on stdout's last line. The variants take turns by half-second
    rounds (so that a change in the machine's load hits them alike), ``seconds`` for each in all;
    each rate is the median of its rounds, by the wall clock and by this process's CPU time (what the
    code costs, whatever else the machine runs)."""
    from grounding_eval.verifier.setup import load_resources
    from grounding_eval.verifier.verdict import verify

    source = "\n\n".join((ARTICLES / f).read_text(encoding="utf-8") for f in SOURCE_FILES)
    resources = load_resources(
        allowlist=REPO / "datasets" / "sample" / "allowlist.txt",
        orgs=REPO / "datasets" / "sample" / "organizations.yaml",
        liveness="offline",
    )
    answers = {name: build_answer(extra=extra) for name, extra in VARIANTS}
    wall: dict[str, list[float]] = {name: [] for name in answers}
    cpu: dict[str, list[float]] = {name: [] for name in answers}
    for answer in answers.values():
        verify(answer, jurisdiction="MI", sources=[source], resources=resources)  # first use, untimed
    for _ in range(max(3, round(seconds / 0.5))):
        for name, answer in answers.items():
            n, t0, c0 = 0, time.perf_counter(), time.process_time()
            while time.perf_counter() - t0 < 0.5:
                verify(answer, jurisdiction="MI", sources=[source], resources=resources)
                n += 1
            wall[name].append(n / (time.perf_counter() - t0))
            cpu[name].append(n / max(time.process_time() - c0, 1e-9))
    med = statistics.median
    print(
        json.dumps({"wall": {k: med(v) for k, v in wall.items()}, "cpu": {k: med(v) for k, v in cpu.items()}})
    )


def against(other: Path, rounds: int, seconds: float) -> None:
    """Alternate rounds of this checkout and ``other`` (see the module's docstring) and print the ratios."""
    if not (other / "grounding_eval" / "verifier" / "verdict.py").is_file():
        raise SystemExit(f"{other}: not a checkout of grounding-eval (no grounding_eval/verifier/verdict.py)")
    checkouts = {"this": REPO, "other": other.resolve()}
    rates: dict[str, list[dict[str, dict[str, float]]]] = {"this": [], "other": []}
    first_use: list[float] = []
    for n in range(rounds):
        for name in ("this", "other") if n % 2 == 0 else ("other", "this"):
            env = {**os.environ, "PYTHONPATH": str(checkouts[name])}
            done = subprocess.run(
                [sys.executable, __file__, "--worker", "--seconds", str(seconds)],
                cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=600,
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"{checkouts[name]}: the measuring process failed: {done.stderr[-2000:]}")
            rates[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
        use = library_first_use()
        first_use.append(use["first_statute_s"] + use["library_after_s"] + use["first_case_s"])
        print(f"round {n + 1} (answers per cpu second): " + "; ".join(
            f"{name} " + ", ".join(f"{v} {rates[name][-1]['cpu'][v]:.0f}" for v, _ in VARIANTS) for name in rates
        ) + f"; citation libraries' first use {first_use[-1]:.2f} s", flush=True)  # fmt: skip
    med = statistics.median
    for clock in ("cpu", "wall"):
        this, that = [r[clock] for r in rates["this"]], [r[clock] for r in rates["other"]]
        print(f"answers per {clock} second, median of {rounds} alternating rounds ({REPO} against {other}):")
        for v, _ in VARIANTS:
            ratio = med(t[v] / o[v] for t, o in zip(this, that, strict=True))
            print(f"  {v:<16} this {med(r[v] for r in this):6.0f}   other {med(r[v] for r in that):6.0f}"
                  f"   this/other {ratio:.3f}")  # fmt: skip
        for v in ("statutes", "statutes + case"):
            print(f"  this: {v}/plain {med(r[v] / r['plain'] for r in this):.3f}")
    print(f"this: citation libraries' first use in a fresh process {med(first_use):.2f} s (median)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, metavar="PATH", help="another checkout, measured alternately")
    parser.add_argument("--rounds", type=int, default=5, help="--against: rounds (one process per checkout)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=60, help="promptfoo rows per run")
    parser.add_argument("--seconds", type=float, default=5.0, help="in-process measuring time")
    parser.add_argument("--skip-promptfoo", action="store_true")
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold-process measurement (goal 2)")
    parser.add_argument("--cold-runs", type=int, default=21, help="rounds of cold processes")
    args = parser.parse_args()
    if args.worker:
        return _worker(args.seconds)
    if args.against is not None:
        return against(args.against, args.rounds, args.seconds)
    answer = build_answer()
    source = "\n\n".join((ARTICLES / f).read_text(encoding="utf-8") for f in SOURCE_FILES)
    words = len(source.split())
    print(f"answer: {len(answer.split())} words; source: {words} words, {len(source)} chars "
          f"(~{round(words * 1.3):,} tokens at 1.3 tokens/word)")  # fmt: skip
    r = in_process(answer, source, args.seconds)
    print(
        f"in-process: {r['answers_per_second']:.1f} answers/s ({r['ms_per_answer']:.2f} ms/answer; "
        f"{r['urls']} URLs, {r['phones']} phones, {r['quotes']} quotes); "
        f"first answer {r['first_answer_ms']:.0f} ms; "
        f"loading allowlist + directory {r['load_resources_ms']:.0f} ms"
    )
    print(
        f"goal 3: {r['answers_per_second']:.0f} answers/s in process (median of {r['rounds']} half-second "
        f"rounds; best {r['best_answers_per_second']:.0f}, worst {r['worst_answers_per_second']:.0f})"
    )
    for name, extra, fresh in (
        ("statutes", STATUTES, False), ("statutes + case", STATUTES + CASE, False),
        ("statutes, sentences not remembered", STATUTES, True),
        ("statutes + case, sentences not remembered", STATUTES + CASE, True),
    ):  # fmt: skip
        c = in_process(build_answer(extra=extra), source, args.seconds, fresh)
        print(
            f"with {name}: {c['answers_per_second']:.1f} answers/s ({c['ms_per_answer']:.2f} ms/answer; "
            f"{c['citations']} citations; best {c['best_answers_per_second']:.0f}, "
            f"worst {c['worst_answers_per_second']:.0f})"
        )
    first_use = library_first_use()
    print(
        f"citations, first use in a fresh process: first statute answer {first_use['first_statute_s']:.2f} s "
        f"(citeurl's templates built as needed), all templates after it {first_use['library_after_s']:.2f} s, "
        f"first case {first_use['first_case_s']:.2f} s (eyecite)"
    )
    if not args.skip_cold:
        report(measure(args.cold_runs))
    if not args.skip_promptfoo:
        p = promptfoo_rows(answer, source, args.rows)
        print(
            f"promptfoo ({p['rows']} rows, default concurrency): trivial python assertion "
            f"{p['trivial_total_s']:.1f} s, verifier {p['verifier_total_s']:.1f} s → "
            f"verifier adds {p['added_ms_per_row']:.0f} ms wall time per row"
        )


if __name__ == "__main__":
    main()
