"""``grounding-eval rescore``: grade an existing promptfoo results file again, without promptfoo.

When a team updates its allowlist, directory or rubric, every row must be graded again, but the model
outputs have not changed. ``grounding-eval rescore RESULTS.json -o NEW.json`` re-runs this pack's
assertions (the verifier and the judge, whichever entry file a row used: ``assertions/grounding.py``,
its aliases ``verifier.py`` and ``judge.py``, or ``grounding.cjs``) and the round composite (the
``assertScoringFunction``) on every row's recorded output, in one process per CPU, with no model call
beyond what the judge's own configuration makes (a replayed or cached judge makes none). It writes a
results file in promptfoo's format, which ``promptfoo import NEW.json`` loads into the viewer.

Each row is rebuilt the way promptfoo builds it (``AssertionsResult`` in promptfoo 0.123.1): the
assertions' results in config order as component results, each followed by its own component results;
named scores as weight-averaged sums; the row's score as the weighted mean of the assertion scores;
then the scoring function's result over the top; token counts with 0.123.1's ``incurredTokenUsage``.
By hand, not by ``promptfoo eval`` over the recorded outputs with the replay provider: that took 41 s
for 24 rows and 104 s for 480, this 9 s and 22 s (issue 24). Re-grading an unchanged results file gives
every row its original pass, score and named scores (a test checks this on the sample rounds).

What is not ours is kept, never guessed: an assertion of another type keeps its recorded result, a
row without output (a provider error) is copied unchanged, and a scoring function that is not one of
ours leaves the row as its assertions make it, with ``rescore.kept`` counting all of these.

Run it from the directory promptfoo ran in: relative paths in the assertions' config (a liveness
snapshot, a judge's fixture file) are read from there, as promptfoo read them.

A results file is data, possibly someone else's: the judge's endpoint comes from your environment and
switch, never from it. A row whose judge settings name an endpoint other than a model provider's own API
host (``base_url``, a provider's ``apiBaseUrl`` or ``url``…) is not followed — said in one line before
any call, and that row's judge is unscored — unless you name the host with ``--allow-endpoint``. Where
each live judge sends an API key is said first, one line each (``grounding-eval: API key sent to …``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grounding_eval.calls import ASSERTION_CALLS, CALLS, SCORING_CALLS
from grounding_eval.errors import DataError, clip, terminal_safe
from grounding_eval.outcome import row_unscored
from grounding_eval.promptfoo.source_vars import with_source_vars

__all__ = [
    "COMMANDS",
    "Reliability",
    "add_commands",
    "announce_judges",
    "check_row",
    "draw_retest",
    "reliability_options",
    "remetric",
    "rescore_rows",
    "run",
]

COMMANDS = frozenset({"rescore"})

_TOKEN_FIELDS = ("total", "prompt", "completion", "cached", "numRequests")
_DETAIL_FIELDS = ("reasoning", "acceptedPrediction", "rejectedPrediction", "cacheReadInputTokens",
                  "cacheCreationInputTokens")  # fmt: skip

# Which of the calls rescore grades again an assertion or scoring function names (any entry file of this
# pack); the others keep their recorded result.
_RESCORED = "|".join(c for c in ASSERTION_CALLS if CALLS[c].rescored)
_RESCORED_SCORING = "|".join(c for c in SCORING_CALLS if CALLS[c].rescored)
_ASSERTION = re.compile(
    rf"assertions/(?:({_RESCORED})\.py(?::get_assert)?|grounding\.(?:cjs|py):({_RESCORED}))$"
)
_SCORING = re.compile(rf"assertions/(?:composite\.py|grounding\.cjs|grounding\.py):({_RESCORED_SCORING})$")


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``rescore`` to the ``grounding-eval`` parser."""
    r = sub.add_parser("rescore", help="grade a promptfoo results file again (verifier, judge, composite)")
    r.add_argument(
        "results", metavar="RESULTS_JSON", type=Path, help="written by promptfoo eval -o FILE.json"
    )
    r.add_argument("-o", "--output", metavar="NEW_JSON", type=Path, required=True, help="where to write")
    r.add_argument("-j", "--jobs", metavar="N", type=int, default=None, help="processes (default: CPUs)")
    r.add_argument(
        "--allow-endpoint", metavar="HOST", action="append", default=[],
        help="a judge endpoint host the results file names that you accept (repeatable; by default a row's "
        "judge endpoint other than a model provider's own API host is not followed)",
    )  # fmt: skip
    r.add_argument(
        "--retest", metavar="FRACTION", type=float, default=None,
        help="judge test-retest: ask the judge again, its reply cache bypassed, for this share of the rows "
        "(0 < FRACTION <= 1, drawn with --seed); both verdicts kept (gradingResult.metadata.judge_retest)",
    )  # fmt: skip
    r.add_argument("--seed", type=int, default=None, help="the seed that draws the --retest rows (required)")
    r.add_argument(
        "--retest-judge", metavar="ID",
        help="with --retest: who answers the second asking (default: each row's own judge); a recording of "
        "a second asking (replay:FILE) replays it offline",
    )  # fmt: skip
    r.add_argument(
        "--panel", metavar="ID[,ID...]",
        help="a judge panel: each of these promptfoo provider ids (or replay:FILE) also judges every row with "
        "the row's rubric; their verdicts kept beside the judge's (gradingResult.metadata.judge_panel)",
    )  # fmt: skip


def reliability_options(args: argparse.Namespace) -> Reliability | None:
    """``--retest``, ``--seed``, ``--retest-judge`` and ``--panel`` as a :class:`Reliability`, checked before
    anything is read (None when none is given).

    Raises:
        DataError: an option out of range or without the one it needs (one line naming it).
    """

    retest, seed, retest_judge = (getattr(args, k, None) for k in ("retest", "seed", "retest_judge"))
    panel = tuple(p.strip() for p in str(getattr(args, "panel", None) or "").split(",") if p.strip())
    if retest is None:
        for given, name in ((seed, "--seed"), (retest_judge, "--retest-judge")):
            if given is not None:
                raise DataError(name, "needs --retest FRACTION")
        return Reliability(panel=panel) if panel else None
    if not 0 < retest <= 1:
        raise DataError("--retest", f"{retest} is not a share of the rows in (0, 1]")
    if seed is None:
        raise DataError("--retest", "needs --seed N (the draw of the rows asked again is recorded with it)")
    judge = str(retest_judge).strip() if retest_judge else None
    return Reliability(fraction=retest, seed=seed, retest_judge=judge, panel=panel)


@dataclass(frozen=True)
class Reliability:
    """What rescore asks beyond the grading: a test-retest sample and a judge panel (issue 41).

    Attributes:
        fraction, seed: the share of the graded rows asked again, and the seed that draws them.
        retest_judge: who answers the second asking (None: the row's own judge, its cache bypassed).
        panel: other judges' provider ids, each asked on every row.
        chosen: the indices of the rows drawn for the retest (filled by :func:`draw_retest`).
    """

    fraction: float | None = None
    seed: int | None = None
    retest_judge: str | None = None
    panel: tuple[str, ...] = ()
    chosen: frozenset[int] = frozenset()


def draw_retest(rows: Sequence[Any], reliability: Reliability) -> Reliability:
    """The rows asked again: ``round(fraction × N)`` (halves up, at least 1) of the N rows with an output and
    a rubric judge, drawn without replacement by ``random.Random(seed).sample`` over them in the eval's
    grid order (``testIdx``, ``promptIdx``, provider id): the same eval, the same seed, the same rows."""
    import math
    import random
    from dataclasses import replace

    if reliability.fraction is None or reliability.seed is None:
        return reliability
    judged = [i for i, row in enumerate(rows) if _row_context(row) is not None and _judges(row)]
    # In the order of the eval's grid (test, then prompt, then provider), not the file's: promptfoo writes
    # rows as they finish, so the same eval run twice lists them in another order and would draw others.
    judged.sort(key=lambda i: (_place(rows[i], "testIdx"), _place(rows[i], "promptIdx"),
                               str((rows[i].get("provider") or {}).get("id") or ""), i))  # fmt: skip
    k = min(len(judged), max(1, math.floor(reliability.fraction * len(judged) + 0.5))) if judged else 0
    return replace(reliability, chosen=frozenset(random.Random(reliability.seed).sample(judged, k)))


def _place(row: Any, field: str) -> int:
    value = row.get(field)
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _judges(row: Any) -> bool:
    test = row.get("testCase") or {}
    return any(_our_assertion(a) == "judge" for a in test.get("assert") or ())


def run(args: argparse.Namespace) -> int:
    """Rescore ``args.results`` into ``args.output``; prints one summary line."""
    import time

    from grounding_eval.files import write_text_atomic
    from grounding_eval.results_file import RowProblem, obj, read_results

    started = time.perf_counter()
    reliability = reliability_options(args)
    data = read_results(args.results)  # strict, shape-checked, lone surrogates made writable
    rows = data["results"]["results"]
    try:
        for number, row in enumerate(rows, 1):
            try:
                check_row(row)
            except RowProblem as exc:
                raise DataError(args.results, f"row {number} of results.results: {exc}") from None
        config = obj(data.get("config"), "config")
        default_test = obj(config.get("defaultTest"), "config.defaultTest")
    except RowProblem as exc:
        raise DataError(args.results, str(exc)) from None
    default_scoring = default_test.get("assertScoringFunction")
    for number, row in enumerate(rows, 1):  # an unreadable dataset stops here, before any grading
        try:
            test = row.get("testCase") or {}
            with_source_vars(row.get("vars") or test.get("vars") or {}, test.get("metadata") or {})
        except DataError as exc:
            raise DataError(args.results, f"row {number}: {exc}") from None
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
    from grounding_eval.judge.host import received_rows
    from grounding_eval.share.redact import policy

    # The results file is data: its rows' judge endpoints are not followed unless the user allows them.
    allow = [*args.allow_endpoint, *policy()["bundle"]["official_api_hosts"]]
    with received_rows(str(args.results), allow):
        announce_judges(rows)  # before any call: where keys go, and what is not followed
        grading_started = time.perf_counter()
        if reliability is not None:
            reliability = draw_retest(rows, reliability)
        new_rows, kept = rescore_rows(rows, default_scoring, jobs=jobs, reliability=reliability)
        grading = time.perf_counter() - grading_started
    data["results"]["results"] = new_rows
    _restat(data, new_rows)
    derived = [d.get("name") for d in config.get("derivedMetrics") or () if isinstance(d, dict)]
    remetric(data["results"], new_rows, [str(name) for name in derived if name])
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    data["metadata"] = {
        **(data["metadata"] if isinstance(data.get("metadata"), dict) else {}),
        "groundingEvalRescore": {
            "from": str(args.results),
            "fromEvalId": data.get("evalId"),
            "at": stamp,
            **(_reliability_record(reliability) if reliability is not None else {}),
        },
    }
    data["evalId"] = f"{data.get('evalId') or 'eval'}-rescored-{stamp}"
    write_text_atomic(args.output, json.dumps(data, ensure_ascii=False))  # a failure leaves the old file
    seconds = time.perf_counter() - started
    passed = sum(1 for r in new_rows if r.get("success"))
    unscored = sum(
        1 for r in new_rows if isinstance(r.get("gradingResult"), dict) and row_unscored(r["gradingResult"])
    )
    print(
        f"rescored {len(new_rows)} rows in {seconds:.1f} s ({grading:.1f} s grading with {jobs} process(es), "
        f"{len(new_rows) / grading if grading else 0:.0f} rows/s; the rest reading and writing): {passed} passed, "
        f"{unscored} unscored (metadata.outcome); "
        f"kept as recorded: {kept['rows']} rows without output, {kept['assertions']} assertions "
        f"and {kept['scoring']} scoring functions not of this pack; wrote {terminal_safe(args.output)}"
    )
    return 0


def announce_judges(rows: Sequence[Any]) -> None:
    """Resolve every row's judges once, before any is graded, and say on stderr where each live judge
    sends an API key and, in one line each, every judge setting that cannot be used (such a row's judge
    is unscored with the same reason)."""
    from grounding_eval.judge.calls import JudgeError
    from grounding_eval.judge.clients import judges_for
    from grounding_eval.judge.host import say_key_hosts

    seen: set[str] = set()
    problems: dict[str, int] = {}
    for row in rows:
        built = _row_context(row)
        if built is None:
            continue
        context, test = built
        for assertion in test.get("assert") or ():
            call = _our_assertion(assertion)
            if call is None or not CALLS[call].judge:
                continue
            config = assertion.get("config") or {}
            key = json.dumps([call, config, test.get("options"), (test.get("metadata") or {}).get("dataset"),
                              test.get("assert"), test.get("provider")], sort_keys=True, default=str)  # fmt: skip
            if key in seen:
                continue
            seen.add(key)
            try:
                say_key_hosts(judges_for(call, {**context, **({"config": config} if config else {})}))
            except ValueError as exc:
                problems[str(exc)] = problems.get(str(exc), 0) + 1
            except JudgeError:
                continue  # Node could not be reached: each row says so
    for problem in problems:
        print(terminal_safe(f"grounding-eval: {problem} (those rows' judge is unscored)"), file=sys.stderr)


def _row_context(row: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The assertion context promptfoo gave ``row``'s assertions, without their config, and its test;
    ``None`` for a row that is not graded again (no output, an error, no test)."""
    from grounding_eval.results_file import FAILED_ERROR

    response = row.get("response") if isinstance(row, dict) else None
    test = row.get("testCase") if isinstance(row, dict) else None
    errored = row.get("failureReason") == FAILED_ERROR if isinstance(row, dict) else True
    if not isinstance(response, dict) or "output" not in response or errored or not isinstance(test, dict):
        return None
    context = {  # (the pack's assertions rebuild the test's source vars themselves: source_vars.py)
        "prompt": (row.get("prompt") or {}).get("raw", ""),
        "vars": row.get("vars") or test.get("vars") or {},
        "test": test,
        "providerResponse": response,
        **({"metadata": response["metadata"]} if response.get("metadata") else {}),
    }
    return context, test


def check_row(row: dict[str, Any]) -> None:
    """Refuse a row whose fields rescore reads hold the wrong JSON type (a traceback before).

    Raises:
        RowProblem: naming the field, e.g. ``gradingResult is a list, expected an object``.
    """
    from grounding_eval.result_rows import result_row
    from grounding_eval.results_file import arr, number, obj

    for name in ("response", "vars", "prompt"):
        obj(row.get(name), name)
    test = obj(row.get("testCase"), "testCase")
    for i, assertion in enumerate(arr(test.get("assert"), "testCase.assert")):
        if isinstance(assertion, dict):
            obj(assertion.get("config"), f"testCase.assert[{i}].config")
            number(assertion.get("weight"), f"testCase.assert[{i}].weight")
    grading = obj(row.get("gradingResult"), "gradingResult")
    components = "gradingResult.componentResults"
    for i, component in enumerate(arr(grading.get(components.split(".")[1]), components)):
        _check_result(obj(component, f"{components}[{i}]", null=False), f"{components}[{i}]")
    result_row(row)  # the pack's records it keeps: refused as report, audit and provenance refuse them
    number(row.get("promptIdx"), "promptIdx")


def _check_result(result: dict[str, Any], where: str) -> None:
    """The numbers :func:`aggregate` reads from a recorded result."""
    from grounding_eval.results_file import number, obj

    number(result.get("score"), f"{where}.score")
    for key in ("namedScores", "namedScoreWeights", "tokensUsed"):
        for name, value in obj(result.get(key), f"{where}.{key}").items():
            if key != "tokensUsed" or name in _TOKEN_FIELDS:
                number(value, f"{where}.{key}.{name}")
    for i, sub in enumerate(result.get("componentResults") or ()):
        _check_result(
            obj(sub, f"{where}.componentResults[{i}]", null=False), f"{where}.componentResults[{i}]"
        )


def _reliability_record(reliability: Reliability) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if reliability.fraction is not None:
        out["retest"] = {"fraction": reliability.fraction, "seed": reliability.seed, "rows": len(reliability.chosen),
                         "judge": reliability.retest_judge or "each row's own, reply cache bypassed"}  # fmt: skip
    if reliability.panel:
        out["panel"] = list(reliability.panel)
    return out


def rescore_rows(
    rows: Sequence[Any], default_scoring: Any, *, jobs: int = 1, reliability: Reliability | None = None
) -> tuple[list[Any], dict[str, int]]:
    """Every row graded again (in ``jobs`` processes), and counts of what was kept as recorded.

    The worker processes are forked with the rows already in memory and send back only the fields
    they change, so a large results file is not copied through pipes.
    """
    global _FORKED_ROWS
    if jobs > 1 and len(rows) > 1:
        import multiprocessing

        first = _changes(rows[0], default_scoring, _asked(reliability, 0))  # imports once, before the fork
        _FORKED_ROWS = (rows, default_scoring, reliability)
        try:
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                chunks = max(1, len(rows) // (jobs * 8))
                done = [first, *pool.map(_rescore_index, range(1, len(rows)), chunksize=chunks)]
        finally:
            _FORKED_ROWS = None
    else:
        done = [_changes(row, default_scoring, _asked(reliability, i)) for i, row in enumerate(rows)]
    kept = {"rows": 0, "assertions": 0, "scoring": 0}
    out = []
    for row, (changes, counts) in zip(rows, done, strict=True):
        out.append({**row, **changes} if changes else row)
        for key, value in counts.items():
            kept[key] += value
    return out, kept


_FORKED_ROWS: tuple[Sequence[Any], Any, Reliability | None] | None = None


def _asked(reliability: Reliability | None, index: int) -> _Asked | None:
    """What row ``index`` is asked beyond its grading (None: nothing)."""
    if reliability is None:
        return None
    retest = index in reliability.chosen
    if not retest and not reliability.panel:
        return None
    return _Asked(retest, reliability.retest_judge, reliability.panel)


@dataclass(frozen=True)
class _Asked:
    retest: bool
    retest_judge: str | None
    panel: tuple[str, ...]


def _rescore_index(index: int) -> tuple[dict[str, Any], dict[str, int]]:
    assert _FORKED_ROWS is not None  # set before the pool forks
    rows, default_scoring, reliability = _FORKED_ROWS
    return _changes(rows[index], default_scoring, _asked(reliability, index))


def _changes(
    row: Any, default_scoring: Any, asked: _Asked | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    new, counts = rescore_row(row, default_scoring, asked)
    if new is row:
        return {}, counts
    return {k: new[k] for k in ("gradingResult", "namedScores", "success", "score", "failureReason")}, counts


def rescore_row(row: Any, default_scoring: Any, asked: _Asked | None = None) -> tuple[Any, dict[str, int]]:
    """One row graded again; the counts say what was kept as recorded. ``asked``: the second asking of its
    rubric judge (test-retest) and the panel's judges, kept in ``gradingResult.metadata`` (they change no
    score: the row's verdict stays its own judge's)."""
    from grounding_eval.results_file import FAILED_ASSERT  # not at the top: cli imports us

    counts = {"rows": 0, "assertions": 0, "scoring": 0}
    built = _row_context(row)
    if built is None:
        counts["rows"] = 1
        return row, counts
    context, test = built
    response = context["providerResponse"]
    from grounding_eval.promptfoo.worker import handle
    from grounding_eval.resources import pack_root

    new = dict(row)  # only the grading fields are replaced, with new objects
    recorded = list((row.get("gradingResult") or {}).get("componentResults") or ())
    results = []
    extra: dict[str, Any] = {}  # judge_retest, judge_panel
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
        if asked is not None and call == "judge" and "judge_retest" not in extra:
            extra.update(_ask_again(response["output"], ctx, index, asked))
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
    if extra:
        grading["metadata"] = {**(grading.get("metadata") or {}), **extra}
    new["gradingResult"] = grading
    new["namedScores"] = grading["namedScores"]
    new["success"] = bool(grading["pass"])
    new["score"] = grading["score"]
    new["failureReason"] = 0 if grading["pass"] else FAILED_ASSERT
    new.pop("error", None)  # as promptfoo writes a row: a failing one's error is its reason
    if not grading["pass"]:
        new["error"] = grading["reason"]
    return new, counts


def _ask_again(output: Any, ctx: dict[str, Any], index: int, asked: _Asked) -> dict[str, Any]:
    """The rubric judge asked again for a retest (the reply cache bypassed) and each panel judge asked,
    each kept as :func:`_second_opinion`: ``{"judge_retest": …, "judge_panel": [...]}``."""
    from grounding_eval.promptfoo.judge_assertion import FRESH_KEY, OTHER_JUDGE_KEY
    from grounding_eval.promptfoo.worker import handle
    from grounding_eval.resources import pack_root

    def ask(extra: dict[str, Any]) -> dict[str, Any]:
        reply = handle({"id": index, "call": "judge", "args": [output, {**ctx, **extra}],
                        "pack_root": str(pack_root())})  # fmt: skip
        return _second_opinion(reply["result"])

    out: dict[str, Any] = {}
    if asked.retest:
        other = {OTHER_JUDGE_KEY: {"provider": asked.retest_judge}} if asked.retest_judge else {}
        entry = ask({FRESH_KEY: True, **other})
        if not asked.retest_judge and str(entry.get("provider") or "").startswith("replay:"):
            # A recording read twice gives the same replies: that would be agreement by construction.
            entry = {**entry, "status": "unscored", "verdicts": {}, "reason": NOT_ASKED_AGAIN}
        out["judge_retest"] = entry
    if asked.panel:
        out["judge_panel"] = [ask({OTHER_JUDGE_KEY: {"provider": judge}}) for judge in asked.panel]
    return out


NOT_ASKED_AGAIN = (
    "a recorded judge (replay:) cannot be asked again: name the recording of a second asking with "
    "--retest-judge"
)


def _second_opinion(result: dict[str, Any]) -> dict[str, Any]:
    """A judge's result cut to what agreement needs: its provider, status, verdict per criterion, whether
    the reply came from a cache or a recording, and the reason when it did not score."""
    judge = (result.get("metadata") or {}).get("judge") or {}
    verdicts = judge.get("verdicts") if judge.get("status") == "scored" else None
    out = {
        "provider": judge.get("provider"),
        "status": "scored" if isinstance(verdicts, dict) else "unscored",
        "verdicts": {
            str(c): (v.get("verdict") if isinstance(v, dict) else v) for c, v in (verdicts or {}).items()
        },
        "cached": bool(judge.get("cached")),
        "answer_sha256": judge.get("answer_sha256"),
    }
    if out["status"] == "unscored":
        out["reason"] = " ".join(str(result.get("reason") or "").split())[:300]
    return out


def _not_boolean(verdict: Any) -> str:
    from grounding_eval.results_file import json_type

    return f"an assertion's pass is {json_type(verdict)} ({clip(json.dumps(verdict))}), expected true/false"


def aggregate(results: Sequence[dict[str, Any]], assertions: Sequence[Any]) -> dict[str, Any]:
    """The row's GradingResult from its assertions' results, as promptfoo's ``AssertionsResult`` makes it."""
    total_score = total_weight = 0.0
    named: dict[str, float] = {}
    weights: dict[str, float] = {}
    failed: str | None = None
    for result, assertion in zip(results, assertions, strict=True):
        recorded_weight = assertion.get("weight") if isinstance(assertion, dict) else None
        weight = 1.0 if recorded_weight is None else float(recorded_weight)
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
        verdict = result.get("pass")
        if verdict is not True:  # strictly: a kept result's "false" (a string) is truthy, never a pass
            failed = str(result.get("reason")) if verdict is False else _not_boolean(verdict)
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
        "tokensUsed": _tokens_used(results),
    }
    if weights:
        grading["namedScoreWeights"] = weights
    return grading


def _tokens_used(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The row's ``tokensUsed``: its assertions' summed as promptfoo 0.123.1 sums them
    (``normalizeAssertionTokenUsage``, ``accumulateNormalizedAssertionTokenUsage``), with
    ``incurredTokenUsage`` (the tokens paid for, a cached reply's none) once any result reports it."""
    total: dict[str, Any] = dict.fromkeys(_TOKEN_FIELDS, 0)
    for result in results:
        used = result.get("tokensUsed")
        if isinstance(used, dict) and used:
            _add_tokens(total, _normalized_tokens(used, result.get("metadata") or {}))
    return total


def _normalized_tokens(used: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    if metadata.get("cachedResponse") is True:  # a cached grader reply: counted, but nothing incurred
        prompt, completion, cached = (
            used.get("prompt") or 0,
            used.get("completion") or 0,
            used.get("cached") or 0,
        )
        logical = (used["total"] if used.get("total") is not None else prompt + completion) or cached
        return {**used, "total": logical, "prompt": prompt, "completion": completion,
                "cached": max(cached, logical), "numRequests": max(used.get("numRequests") or 0, 1),
                "incurredTokenUsage": dict.fromkeys(_TOKEN_FIELDS, 0)}  # fmt: skip
    if metadata.get("renderedGradingPrompt") is not None and used.get("numRequests") == 0:
        return {**used, "numRequests": 1}
    return used


def _add_tokens(target: dict[str, Any], update: dict[str, Any]) -> None:
    def breakdown(usage: dict[str, Any]) -> dict[str, Any]:
        return {
            k: (dict(v) if isinstance(v, dict) else v) for k, v in usage.items() if k != "incurredTokenUsage"
        }

    incurred = update.get("incurredTokenUsage")
    track = isinstance(target.get("incurredTokenUsage"), dict) or isinstance(incurred, dict)
    if track and not isinstance(target.get("incurredTokenUsage"), dict):
        target["incurredTokenUsage"] = breakdown(target)
    for field in _TOKEN_FIELDS:
        target[field] = (target.get(field) or 0) + (update.get(field) or 0)
    if isinstance(details := update.get("completionDetails"), dict):
        mine = target.get("completionDetails") or {}
        target["completionDetails"] = {k: (mine.get(k) or 0) + (details.get(k) or 0) for k in _DETAIL_FIELDS}
    if track:
        _add_tokens(
            target["incurredTokenUsage"], incurred if isinstance(incurred, dict) else breakdown(update)
        )


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
    """The top-level ``results.stats`` counts, as promptfoo counts them: a row that did not succeed is an
    error when its ``failureReason`` is ERROR (2), else a failure."""
    from grounding_eval.results_file import FAILED_ERROR

    stats = data["results"].get("stats")
    if not isinstance(stats, dict):
        return
    stats["successes"] = sum(1 for r in rows if r.get("success"))
    stats["errors"] = sum(1 for r in rows if not r.get("success") and r.get("failureReason") == FAILED_ERROR)
    stats["failures"] = len(rows) - stats["successes"] - stats["errors"]


def remetric(results: dict[str, Any], rows: Sequence[dict[str, Any]], derived: Iterable[str] = ()) -> None:
    """Recompute each ``results.prompts[i].metrics`` from the rescored rows, as promptfoo 0.121.20 sums them
    (``Evaluator.updatePromptMetricsForRow``; the viewer's "N % passing (p/n)" header reads them).

    Per prompt (the rows' ``promptIdx``): ``score`` is the sum of the rows' scores; ``testPassCount``,
    ``testFailCount`` and ``testErrorCount`` count the rows that succeeded, failed, or did not succeed with
    ``failureReason`` 2; ``assertPassCount`` / ``assertFailCount`` count the rows' component results that
    passed / did not; each named score adds its value (times its weight when the row's
    ``gradingResult.namedScoreWeights`` has one) to ``namedScores``, the number of the row's components
    whose assertion's metric is that name (at least 1) to ``namedScoresCount``, and that weight (else the
    count) to ``namedScoreWeights``; ``tokenUsage.assertions`` sums the rows' ``gradingResult.tokensUsed``.

    Choices where promptfoo does more: metric names are taken as written (promptfoo renders a templated
    ``metric`` with the test's vars; this pack's metrics are plain names); latency, cost and the provider's
    token counts are kept (grading changes none of them); the ``derived`` names (the config's
    ``derivedMetrics``, which promptfoo evaluates with mathjs over the sums) keep their recorded values.
    """
    from grounding_eval.results_file import FAILED_ERROR

    prompts = results.get("prompts")
    if not isinstance(prompts, list):
        return
    fresh: list[dict[str, Any]] = [
        {
            "score": 0,
            "testPassCount": 0,
            "testFailCount": 0,
            "testErrorCount": 0,
            "assertPassCount": 0,
            "assertFailCount": 0,
            "namedScores": {},
            "namedScoresCount": {},
            "namedScoreWeights": {},
            "assertions": dict.fromkeys(_TOKEN_FIELDS, 0),
        }
        for _ in prompts
    ]
    for row in rows:
        index = row.get("promptIdx")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(fresh):
            continue
        m = fresh[index]
        grading = row.get("gradingResult") or {}
        m["score"] += row.get("score") or 0
        components = grading.get("componentResults") or ()
        weights = grading.get("namedScoreWeights") or {}
        for name, value in (row.get("namedScores") or {}).items():
            count = (
                sum(1 for c in components if ((c or {}).get("assertion") or {}).get("metric") == name) or 1
            )
            weight = weights.get(name, count)
            m["namedScores"][name] = m["namedScores"].get(name, 0) + (
                value * weight if name in weights else value
            )
            m["namedScoresCount"][name] = m["namedScoresCount"].get(name, 0) + count
            m["namedScoreWeights"][name] = m["namedScoreWeights"].get(name, 0) + weight
        if row.get("success"):
            m["testPassCount"] += 1
        elif row.get("failureReason") == FAILED_ERROR:
            m["testErrorCount"] += 1
        else:
            m["testFailCount"] += 1
        m["assertPassCount"] += sum(1 for c in components if (c or {}).get("pass"))
        m["assertFailCount"] += sum(1 for c in components if not (c or {}).get("pass"))
        for field in _TOKEN_FIELDS:
            m["assertions"][field] += int((grading.get("tokensUsed") or {}).get(field) or 0)
    for prompt, m in zip(prompts, fresh, strict=True):
        if not isinstance(prompt, dict) or not isinstance(prompt.get("metrics"), dict):
            continue  # promptfoo wrote none for it: nothing to bring up to date
        metrics = prompt["metrics"]
        assertions = m.pop("assertions")
        recorded = metrics.get("namedScores") if isinstance(metrics.get("namedScores"), dict) else {}
        m["namedScores"].update({name: recorded[name] for name in derived if name in recorded})
        metrics.update(m)
        usage = metrics.get("tokenUsage")
        if isinstance(usage, dict):
            usage["assertions"] = {**(usage.get("assertions") or {}), **assertions}
