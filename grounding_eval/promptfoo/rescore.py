"""``grounding-eval rescore``: grade an existing promptfoo results file again, without promptfoo.

When a team updates its allowlist, directory or rubric, every row must be graded again, but the model
outputs have not changed. ``grounding-eval rescore RESULTS.json -o NEW.json`` re-runs this pack's
assertions (the verifier and the judge, whichever entry file a row used: ``assertions/verifier.py``,
``judge.py`` or ``grounding.cjs``) and the round composite (the ``assertScoringFunction``) on every
row's recorded output, in one process per CPU, with no model call beyond what the judge's own
configuration makes (a replayed or cached judge makes none). It writes a results file in promptfoo's
format, which ``promptfoo import NEW.json`` loads into the viewer.

Each row is rebuilt the way promptfoo builds it (``AssertionsResult`` in promptfoo 0.121.20): the
assertions' results in config order as component results, each followed by its own component results;
named scores as weight-averaged sums; the row's score as the weighted mean of the assertion scores;
then the scoring function's result over the top. Re-grading an unchanged results file gives every row
its original pass, score and named scores (a test checks this on the sample rounds).

What is not ours is kept, never guessed: an assertion of another type keeps its recorded result, a
row without output (a provider error) is copied unchanged, and a scoring function that is not one of
ours leaves the row as its assertions make it, with ``rescore.kept`` counting all of these.

Run it from the directory promptfoo ran in: relative paths in the assertions' config (a liveness
snapshot, a judge's fixture file) are read from there, as promptfoo read them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "rescore_rows", "run"]

COMMANDS = frozenset({"rescore"})

_ERROR = 2  # promptfoo's failureReason: 0 none, 1 an assertion failed, 2 an error (no output to grade)
_TOKEN_FIELDS = ("total", "prompt", "completion", "cached", "numRequests")

# Which of our calls an assertion or scoring function names (any entry file of this pack).
_ASSERTION = re.compile(
    r"assertions/(?:(verifier|judge)\.py(?::get_assert)?|grounding\.cjs:(verifier|judge))$"
)
_SCORING = re.compile(r"assertions/(?:composite\.py|grounding\.cjs):(round1|round2b|round3)$")


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``rescore`` to the ``grounding-eval`` parser."""
    r = sub.add_parser("rescore", help="grade a promptfoo results file again (verifier, judge, composite)")
    r.add_argument(
        "results", metavar="RESULTS_JSON", type=Path, help="written by promptfoo eval -o FILE.json"
    )
    r.add_argument("-o", "--output", metavar="NEW_JSON", type=Path, required=True, help="where to write")
    r.add_argument("-j", "--jobs", metavar="N", type=int, default=None, help="processes (default: CPUs)")


def run(args: argparse.Namespace) -> int:
    """Rescore ``args.results`` into ``args.output``; prints one summary line."""
    import time

    from grounding_eval.errors import DataError
    from grounding_eval.files import RESULTS, read_text

    started = time.perf_counter()
    try:
        data = json.loads(read_text(args.results, RESULTS))
        rows = data["results"]["results"]
        if not isinstance(rows, list):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise DataError(args.results, "not a promptfoo results file (no results.results list)") from None
    default_scoring = ((data.get("config") or {}).get("defaultTest") or {}).get("assertScoringFunction")
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
    grading_started = time.perf_counter()
    new_rows, kept = rescore_rows(rows, default_scoring, jobs=jobs)
    grading = time.perf_counter() - grading_started
    data["results"]["results"] = new_rows
    _restat(data, new_rows)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    data["metadata"] = {
        **(data.get("metadata") or {}),
        "groundingEvalRescore": {"from": str(args.results), "fromEvalId": data.get("evalId"), "at": stamp},
    }
    data["evalId"] = f"{data.get('evalId') or 'eval'}-rescored-{stamp}"
    args.output.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    seconds = time.perf_counter() - started
    passed = sum(1 for r in new_rows if isinstance(r, dict) and r.get("success"))
    print(
        f"rescored {len(new_rows)} rows in {seconds:.1f} s ({grading:.1f} s grading with {jobs} process(es), "
        f"{len(new_rows) / grading if grading else 0:.0f} rows/s; the rest reading and writing): {passed} passed; "
        f"kept as recorded: {kept['rows']} rows without output, {kept['assertions']} assertions "
        f"and {kept['scoring']} scoring functions not of this pack; wrote {args.output}"
    )
    return 0


def rescore_rows(
    rows: Sequence[Any], default_scoring: Any, *, jobs: int = 1
) -> tuple[list[Any], dict[str, int]]:
    """Every row graded again (in ``jobs`` processes), and counts of what was kept as recorded.

    The worker processes are forked with the rows already in memory and send back only the fields
    they change, so a large results file is not copied through pipes.
    """
    global _FORKED_ROWS
    if jobs > 1 and len(rows) > 1:
        import multiprocessing

        first = _changes(rows[0], default_scoring)  # imports and loads once, before the fork shares them
        _FORKED_ROWS = (rows, default_scoring)
        try:
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                chunks = max(1, len(rows) // (jobs * 8))
                done = [first, *pool.map(_rescore_index, range(1, len(rows)), chunksize=chunks)]
        finally:
            _FORKED_ROWS = None
    else:
        done = [_changes(row, default_scoring) for row in rows]
    kept = {"rows": 0, "assertions": 0, "scoring": 0}
    out = []
    for row, (changes, counts) in zip(rows, done, strict=True):
        out.append({**row, **changes} if changes else row)
        for key, value in counts.items():
            kept[key] += value
    return out, kept


_FORKED_ROWS: tuple[Sequence[Any], Any] | None = None


def _rescore_index(index: int) -> tuple[dict[str, Any], dict[str, int]]:
    assert _FORKED_ROWS is not None  # set before the pool forks
    rows, default_scoring = _FORKED_ROWS
    return _changes(rows[index], default_scoring)


def _changes(row: Any, default_scoring: Any) -> tuple[dict[str, Any], dict[str, int]]:
    new, counts = rescore_row(row, default_scoring)
    if new is row:
        return {}, counts
    return {k: new[k] for k in ("gradingResult", "namedScores", "success", "score", "failureReason")}, counts


def rescore_row(row: Any, default_scoring: Any) -> tuple[Any, dict[str, int]]:
    """One row graded again; the counts say what was kept as recorded."""
    counts = {"rows": 0, "assertions": 0, "scoring": 0}
    response = row.get("response") if isinstance(row, dict) else None
    test = row.get("testCase") if isinstance(row, dict) else None
    errored = row.get("failureReason") == _ERROR if isinstance(row, dict) else True
    if not isinstance(response, dict) or "output" not in response or errored or not isinstance(test, dict):
        counts["rows"] = 1
        return row, counts
    from grounding_eval.promptfoo.worker import handle
    from grounding_eval.resources import pack_root

    new = dict(row)  # only the grading fields are replaced, with new objects
    recorded = list((row.get("gradingResult") or {}).get("componentResults") or ())
    vars_ = row.get("vars") or test.get("vars") or {}
    context = {
        "prompt": (row.get("prompt") or {}).get("raw", ""),
        "vars": vars_,
        "test": test,
        "providerResponse": response,
        **({"metadata": response["metadata"]} if response.get("metadata") else {}),
    }
    results = []
    for index, assertion in enumerate(test.get("assert") or ()):
        call = _our_assertion(assertion)
        if call is None:
            counts["assertions"] += 1
            results.append(_recorded(recorded, assertion, index))
            continue
        ctx = {**context, **({"config": assertion["config"]} if assertion.get("config") else {})}
        reply = handle(
            {"id": index, "call": call, "args": [response["output"], ctx], "pack_root": str(pack_root())}
        )
        results.append({**reply["result"], "assertion": assertion})
    grading = aggregate(results, test.get("assert") or ())
    scoring = test.get("assertScoringFunction") or default_scoring
    if scoring:
        name = _our_scoring(scoring)
        if name is None:
            counts["scoring"] += 1
        else:
            args = [grading["namedScores"], {"componentResults": grading["componentResults"]}]
            scored = handle({"id": 0, "call": name, "args": args, "pack_root": str(pack_root())})["result"]
            metadata = {**(scored.get("metadata") or {}), **(grading.get("metadata") or {})} or None
            grading = {**grading, **scored}
            if metadata:
                grading["metadata"] = metadata
    new["gradingResult"] = grading
    new["namedScores"] = grading["namedScores"]
    new["success"] = bool(grading["pass"])
    new["score"] = grading["score"]
    new["failureReason"] = 0 if grading["pass"] else 1
    return new, counts


def aggregate(results: Sequence[dict[str, Any]], assertions: Sequence[Any]) -> dict[str, Any]:
    """The row's GradingResult from its assertions' results, as promptfoo's ``AssertionsResult`` makes it."""
    total_score = total_weight = 0.0
    named: dict[str, float] = {}
    weights: dict[str, float] = {}
    failed: str | None = None
    for result, assertion in zip(results, assertions, strict=True):
        weight = float((assertion or {}).get("weight", 1) if isinstance(assertion, dict) else 1)
        metric = assertion.get("metric") if isinstance(assertion, dict) else None
        score = float(result.get("score") or 0)
        total_score += score * weight
        total_weight += weight
        if metric:
            named[metric] = named.get(metric, 0.0) + score * weight
            weights[metric] = weights.get(metric, 0.0) + weight
        incoming_weights = result.get("namedScoreWeights") or {}
        for name, value in (result.get("namedScores") or {}).items():
            if name != metric:
                w = float(incoming_weights.get(name, 1)) * weight
                named[name] = named.get(name, 0.0) + float(value) * w
                weights[name] = weights.get(name, 0.0) + w
        if not result.get("pass"):
            failed = str(result.get("reason"))
    flattened: list[dict[str, Any]] = []
    for result in results:
        flattened.append(result)
        for sub in result.get("componentResults") or ():
            flattened.append({**sub, "assertion": sub.get("assertion") or result.get("assertion")})
    grading: dict[str, Any] = {
        "pass": failed is None,
        "score": total_score / total_weight if total_weight > 0 else 0,
        "reason": failed or "All assertions passed",
        "namedScores": {k: (v / weights[k] if weights.get(k) else 0) for k, v in named.items()},
        "componentResults": flattened,
        "tokensUsed": {
            f: sum(int((r.get("tokensUsed") or {}).get(f) or 0) for r in results) for f in _TOKEN_FIELDS
        },
    }
    if weights:
        grading["namedScoreWeights"] = weights
    return grading


def _our_assertion(assertion: Any) -> str | None:
    if not isinstance(assertion, dict) or assertion.get("type") not in ("python", "javascript"):
        return None
    match = _ASSERTION.search(str(assertion.get("value") or ""))
    return None if match is None else (match.group(1) or match.group(2))


def _our_scoring(value: Any) -> str | None:
    match = _SCORING.search(str(value))
    return None if match is None else match.group(1)


def _recorded(recorded: Iterable[dict[str, Any]], assertion: Any, index: int) -> dict[str, Any]:
    """The recorded top-level result of the assertion at ``index`` (same assertion, in order)."""
    tops = [c for c in recorded if isinstance(c, dict) and c.get("assertion") == assertion]
    if tops:
        return {k: v for k, v in tops[0].items()}
    return {"pass": False, "score": 0.0, "reason": f"rescore: no recorded result for assertion {index}",
            "assertion": assertion}  # fmt: skip


def _restat(data: dict[str, Any], rows: Sequence[Any]) -> None:
    stats = data["results"].get("stats")
    if not isinstance(stats, dict):
        return
    graded = [r for r in rows if isinstance(r, dict)]
    stats["successes"] = sum(1 for r in graded if r.get("success"))
    stats["failures"] = sum(1 for r in graded if not r.get("success") and r.get("failureReason") == 1)
    stats["errors"] = sum(1 for r in graded if r.get("failureReason") == _ERROR)
