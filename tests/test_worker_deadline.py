"""Nothing hangs: every call assertions/grounding.cjs forwards to a Python worker has a deadline.

A worker that stops answering (SIGSTOP, a deadlock, a call that never returns) is killed with SIGKILL
past ``GROUNDING_EVAL_CALL_TIMEOUT`` seconds and replaced; its row gets an explicit ERROR (or, for a
composite, UNSCORED as a value) naming the deadline, calls on other workers are untouched, and the eval
finishes with every row. Real processes throughout: Node runs the entry, the project's Python the
workers, the pinned promptfoo the eval. One test needs a worker whose calls take chosen times, which
the real worker cannot be told to do: a stand-in speaking the worker's protocol (``STAND_IN``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.summary import _row
from grounding_eval.files import read_yaml
from tests.outcomes import unscored_reason
from tests.promptfoo_runs import EvalRun, shared_group
from tests.scores import query_id
from tests.test_worker import ANSWER, CONTEXT, ENTRY, REPO, _alive, _graded, _promptfoo, _workers

GOLDEN: list[dict[str, Any]] = read_yaml(REPO / "tests" / "golden" / "call_timeout_env.yaml")["cases"]
POOL = "globalThis[Symbol.for('grounding-eval.worker-pool')]"


def _run_node(body: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``body`` (async JavaScript, ``g`` the entry) in Node with exactly ``env``; it must exit 0."""
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    script = f"const g = require({json.dumps(str(ENTRY))});\n(async () => {{\n{body}\n}})();"
    done = subprocess.run(
        [node, "-e", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _script(body: str, env: dict[str, str]) -> Any:
    """What ``body`` prints, read as JSON."""
    return json.loads(_run_node(body, env).stdout)


def _without_deadline() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GROUNDING_EVAL_CALL_TIMEOUT"}


@pytest.fixture
def marker() -> Iterator[str]:
    """An idle limit that tags this test's workers; any left (stopped ones included) are killed after."""
    tag = f"{os.getpid() % 1000}.{time.monotonic_ns() % 10_000:04d}1"
    yield tag
    for pid in _workers(tag):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class TestDeadlineSetting:
    """The deadline a call gets (``deadlineSeconds``): the variable, else the judge's own bound."""

    @pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
    def test_golden(self, case: dict[str, Any]) -> None:
        env = {} if case["env"] is None else {"GROUNDING_EVAL_CALL_TIMEOUT": case["env"]}
        got = _script(
            f"const s = g.deadlineSeconds({{ config: {json.dumps(case['config'])} }});\n"
            "process.stdout.write(JSON.stringify(s instanceof Error ? { error: s.message } : { s }));",
            {**_without_deadline(), **env},
        )
        if case.get("error"):
            assert got["error"].startswith("GROUNDING_EVAL_CALL_TIMEOUT must be a number of seconds"), case[
                "note"
            ]
            assert json.dumps(case["env"]) in got["error"]
        else:
            assert got == {"s": case["expected"]}, case["note"]

    def test_a_bad_value_is_one_line_and_every_row_unscored_before_any_python(self, tmp_path: Path) -> None:
        """No worker is started (the Python here does not exist); two calls, one line on standard error."""
        env = {
            **_without_deadline(),
            "GROUNDING_EVAL_CALL_TIMEOUT": "ten",
            "PROMPTFOO_PYTHON": str(tmp_path / "missing"),
        }
        done = _run_node(
            "const a = await g.verifier('x', {}); const b = await g.round3({}, {});\n"
            "process.stdout.write(JSON.stringify([a, b]));",
            env,
        )
        verifier, composite = json.loads(done.stdout)
        message = (
            'GROUNDING_EVAL_CALL_TIMEOUT must be a number of seconds above 0 and at most 2147483, got "ten"'
        )
        unscored = {"outcome": "unscored", "unscored_reason": message}
        assert verifier == {"pass": False, "score": 0, "reason": f"ERROR (verifier not run): {message}",
                            "metadata": unscored}  # fmt: skip
        assert composite["reason"] == f"UNSCORED: composite not computed: {message}"
        assert composite["metadata"] == {"composite": {"status": "unscored"}, **unscored}
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert lines == [f"grounding-eval: {message}; every grounding-eval assertion is unscored"]


def _stop_a_warm_worker(marker: str, **limit: str) -> dict[str, Any]:
    """SIGSTOP a warm worker, then make two calls at once and one after: what each returned, how long the
    pair took, the stopped pid and the pool's pids after."""
    env = {
        **_without_deadline(),
        "PROMPTFOO_PYTHON": sys.executable,
        "GROUNDING_EVAL_WORKER_IDLE": marker,
        **limit,
    }
    got: dict[str, Any] = _script(
        f"""
        const args = [{json.dumps(ANSWER)}, {json.dumps(CONTEXT)}];
        const clean = await g.verifier(...args);
        const stopped = {POOL}.workers[0].child.pid;
        process.kill(stopped, 'SIGSTOP');
        const t0 = Date.now();
        const [stuck, other] = await Promise.all([g.verifier(...args), g.verifier(...args)]);
        const took = (Date.now() - t0) / 1000;
        const after = await g.verifier(...args);
        const pids = {POOL}.workers.map((w) => w.child.pid);
        process.stdout.write(JSON.stringify({{ clean, stopped, stuck, other, took, after, pids }}));
        """,
        env,
    )
    return got


def _replaced(got: dict[str, Any], why: str, failure: str) -> None:
    """The stopped worker's call is an ERROR naming ``why`` in about 2 s, a concurrent call on another
    worker is graded as usual, the call after that gets a fresh worker, and the report counts the row apart."""
    assert got["stuck"] == {
        "pass": False,
        "score": 0,
        "reason": f"ERROR (verifier not run): {why}",
        "metadata": {"outcome": "unscored", "unscored_reason": why, "worker_failure": failure},
    }
    assert got["other"] == got["clean"] and got["after"] == got["clean"]
    assert got["clean"]["pass"] is True
    assert 1.9 <= got["took"] < 2 + 3, got["took"]
    assert got["stopped"] not in got["pids"]
    assert not _alive(got["stopped"]), "the stopped worker was not killed"
    assert _report_row({"componentResults": [got["stuck"]]}).unscored is True  # never a failure


class TestStoppedWorker:
    def test_killed_replaced_and_the_other_call_unaffected(self, marker: str) -> None:
        """SIGSTOP a warm worker under a 2 s call deadline."""
        why = (
            "the grounding-eval worker did not answer within 2 s; it was killed (GROUNDING_EVAL_CALL_TIMEOUT)"
        )
        _replaced(_stop_a_warm_worker(marker, GROUNDING_EVAL_CALL_TIMEOUT="2"), why, "deadline")


class TestStalledWorker:
    """A worker that holds a call and shows no sign of life (no heartbeat) for GROUNDING_EVAL_WORKER_STALL
    seconds is killed and replaced whatever the call's deadline (here the default, 2,220 s)."""

    def test_a_stopped_worker_is_replaced_long_before_the_deadline(self, marker: str) -> None:
        why = (
            "the grounding-eval worker showed no sign of life for 2 s (stopped, stuck or swapped out); "
            "it was killed (GROUNDING_EVAL_WORKER_STALL)"
        )
        _replaced(_stop_a_warm_worker(marker, GROUNDING_EVAL_WORKER_STALL="2"), why, "stalled")

    def test_a_silent_worker_is_replaced_and_the_calls_queued_behind_it_go_on(
        self, stand_in: Callable[..., dict[str, str]]
    ) -> None:
        """A process that runs but writes nothing (the stand-in keeps no heartbeat, as one stuck holding
        its interpreter): the call it is on is a worker failure, the two queued behind it are graded."""
        got = _script(
            "const t0 = Date.now();\n"
            "const r = await Promise.all([30, 0.1, 0.2].map((s) => g.judge(s, {})));\n"
            "process.stdout.write(JSON.stringify({ r, took: (Date.now() - t0) / 1000 }));",
            stand_in(GROUNDING_EVAL_WORKERS="1", GROUNDING_EVAL_WORKER_STALL="2"),
        )
        assert unscored_reason(got["r"][0]).startswith(
            "the grounding-eval worker showed no sign of life for 2 s"
        )
        assert got["r"][0]["metadata"]["worker_failure"] == "stalled"
        assert [r["reason"] for r in got["r"][1:]] == ["slept 0.1", "slept 0.2"]
        assert got["took"] < 10

    def test_the_one_off_process_is_watched_too(self, stand_in: Callable[..., dict[str, str]]) -> None:
        got = _script(
            "const t0 = Date.now(); const r = await g.round3(30, {});\n"
            "process.stdout.write(JSON.stringify({ r, took: (Date.now() - t0) / 1000 }));",
            stand_in(GROUNDING_EVAL_WORKER_STALL="2", STAND_IN_REFUSE="1"),
        )
        assert got["r"]["reason"].endswith(
            "one-off: the one-off Python process showed no sign of life for 2 s (stopped, stuck or swapped out); "
            "it was killed (GROUNDING_EVAL_WORKER_STALL)"
        )
        assert got["took"] < 10

    @pytest.mark.e2e
    @pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
    def test_a_stalled_composite_hides_no_safety_verdict(
        self, marker: str, shared_eval: Callable[[str], EvalRun]
    ) -> None:
        """The composite of a row is the call a stopped worker held: the row is unscored, unless its verifier
        found a safety failure, which still fails it (every row of the main job, with its own components)."""
        env = {
            **_without_deadline(),
            "PROMPTFOO_PYTHON": sys.executable,
            "GROUNDING_EVAL_WORKER_STALL": "2",
            "GROUNDING_EVAL_WORKER_IDLE": marker,
        }
        stuck = _script(
            f"await g.verifier({json.dumps(ANSWER)}, {json.dumps(CONTEXT)});\n"
            f"process.kill({POOL}.workers[0].child.pid, 'SIGSTOP');\n"
            "process.stdout.write(JSON.stringify(await g.round3({}, {})));",
            env,
        )
        assert stuck["metadata"]["worker_failure"] == "stalled"
        clean = shared_eval("promptfooconfig.yaml")
        unsafe = 0
        for row in clean.rows():
            before = _row(row)
            components = row["gradingResult"]["componentResults"]
            held = _row(
                {
                    **row,
                    "success": False,
                    "score": 0,
                    "gradingResult": {**stuck, "componentResults": components},
                }
            )
            if before.safety_no:
                unsafe += 1
                assert (held.passed, held.unscored, held.safety_no) == (False, False, before.safety_no)
            else:
                assert (held.passed, held.unscored) == (False, True)
        assert unsafe == 4  # the sample's verifier-unsafe Round 3 rows (tests/test_safety_outage_e2e.py)

    @pytest.mark.parametrize("value", ["1", "ten", "-5"])
    def test_a_bad_setting_is_one_line_and_every_row_unscored(self, value: str) -> None:
        env = {
            **_without_deadline(),
            "PROMPTFOO_PYTHON": sys.executable,
            "GROUNDING_EVAL_WORKER_STALL": value,
        }
        done = _run_node(
            "const a = await g.verifier('x', {}); const b = await g.judge('x', {});\n"
            "process.stdout.write(JSON.stringify([a, b]));",
            env,
        )
        message = f"GROUNDING_EVAL_WORKER_STALL must be a number of seconds from 2 to 2147483, got {json.dumps(value)}"
        assert [unscored_reason(r) for r in json.loads(done.stdout)] == [message, message]
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert lines == [f"grounding-eval: {message}; every grounding-eval assertion is unscored"]


def _report_row(grading: dict[str, Any]) -> Any:
    return _row({
        "success": False, "score": 0, "namedScores": {}, "prompt": {"label": "C0", "raw": "p"},
        "vars": {"query_id": "q"}, "testCase": {"metadata": {"round": "3"}}, "provider": {"id": "p"},
        "response": {"output": "answer"}, "gradingResult": {"pass": False, "score": 0, **grading},
    })  # fmt: skip


# A worker stand-in: ready line, then one reply per request after sleeping args[0] seconds (the real
# worker cannot be told how long to take). --once answers one request the same way; --refuse exits.
STAND_IN = r"""
import json, os, sys, time
if "--once" not in sys.argv and os.environ.get("STAND_IN_REFUSE"):
    sys.exit(3)
out = sys.stdout
def answer(line):
    request = json.loads(line)
    time.sleep(float(request["args"][0]))
    out.write(json.dumps({"id": request["id"], "result": {"pass": True, "score": 1, "reason": f"slept {request['args'][0]}"}}) + "\n")
    out.flush()
if "--once" in sys.argv:
    answer(sys.stdin.read())
    sys.exit(0)
out.write(json.dumps({"id": None, "ready": 1, "pid": os.getpid()}) + "\n")
out.flush()
for line in sys.stdin:
    answer(line)
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> Callable[..., dict[str, str]]:
    program = tmp_path / "stand_in.py"
    program.write_text(STAND_IN, encoding="utf-8")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {program} "$@"\n', encoding="utf-8")
    python.chmod(0o755)

    def env(**extra: str) -> dict[str, str]:
        return {**_without_deadline(), "PROMPTFOO_PYTHON": str(python), **extra}

    return env


class TestQueue:
    def test_a_call_waiting_behind_another_is_not_charged_for_the_wait(
        self, stand_in: Callable[..., dict[str, str]]
    ) -> None:
        """One worker, a 1.5 s deadline, three 1 s calls sent together: 3 s in all, each within its own."""
        got = _script(
            "const t0 = Date.now();\n"
            "const r = await Promise.all([1, 1, 1].map((s) => g.verifier(s, {})));\n"
            "process.stdout.write(JSON.stringify({ r, took: (Date.now() - t0) / 1000 }));",
            stand_in(GROUNDING_EVAL_WORKERS="1", GROUNDING_EVAL_CALL_TIMEOUT="1.5"),
        )
        assert [r["reason"] for r in got["r"]] == ["slept 1"] * 3
        assert got["took"] >= 3

    def test_calls_queued_behind_a_stuck_one_go_to_a_new_worker(
        self, stand_in: Callable[..., dict[str, str]]
    ) -> None:
        got = _script(
            "const r = await Promise.all([30, 0.1, 0.2].map((s) => g.judge(s, {})));\n"
            "process.stdout.write(JSON.stringify(r));",
            stand_in(GROUNDING_EVAL_WORKERS="1", GROUNDING_EVAL_CALL_TIMEOUT="1"),
        )
        assert unscored_reason(got[0]).startswith("the grounding-eval worker did not answer within 1 s")
        assert [r["reason"] for r in got[1:]] == ["slept 0.1", "slept 0.2"]

    def test_the_one_off_process_has_the_deadline_too(self, stand_in: Callable[..., dict[str, str]]) -> None:
        got = _script(
            "const t0 = Date.now(); const r = await g.round3(30, {});\n"
            "process.stdout.write(JSON.stringify({ r, took: (Date.now() - t0) / 1000 }));",
            stand_in(GROUNDING_EVAL_CALL_TIMEOUT="1", STAND_IN_REFUSE="1"),
        )
        assert got["r"]["reason"].startswith(
            "UNSCORED: composite not computed: no Python could grade this row"
        )
        assert got["r"]["reason"].endswith(
            "one-off: the one-off Python process did not answer within 1 s; it was killed (GROUNDING_EVAL_CALL_TIMEOUT)"
        )
        why = got["r"]["reason"].removeprefix("UNSCORED: composite not computed: ")
        assert got["r"]["metadata"] == {"composite": {"status": "unscored"}, "outcome": "unscored",
                                        "unscored_reason": why}  # fmt: skip
        assert got["took"] < 10


# --- promptfoo end to end ------------------------------------------------------------------------------


def _waiting_for_a_request(pid: int) -> bool:
    """Whether the worker sits in select() on its pipe: it has sent its ready line."""
    try:
        wchan = (Path("/proc") / str(pid) / "wchan").read_text()
    except OSError:
        return False
    return "select" in wchan or "poll" in wchan


def _mentions(row: dict[str, Any], text: str) -> bool:
    return text in json.dumps(row.get("gradingResult"), ensure_ascii=False)


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_stopped_worker_never_hangs_the_eval(
    tmp_path: Path, marker: str, shared_eval: Callable[[str], EvalRun]
) -> None:
    """SIGSTOP one worker early in the 24-row sample eval with a 3 s deadline: the eval finishes, every
    row is written, the rows it held carry the ERROR and count as unscored, the others are graded exactly
    as a clean run grades them."""
    clean = shared_eval("promptfooconfig.yaml")
    assert clean.returncode in (0, 100), clean.tail()
    out = tmp_path / "out.json"
    started = time.monotonic()
    proc = _promptfoo(
        ["-c", "promptfooconfig.yaml", "-j", "4", "-o", str(out)],
        tmp_path,
        env={"GROUNDING_EVAL_CALL_TIMEOUT": "3", "GROUNDING_EVAL_WORKER_IDLE": marker},
    )
    stopped = None
    try:
        while stopped is None:
            assert proc.poll() is None, "promptfoo ended before a worker could be stopped"
            assert time.monotonic() - started < 120, "no worker started"
            ready = [pid for pid in _workers(marker) if _waiting_for_a_request(pid)]
            if ready:
                stopped = min(ready)
                os.kill(stopped, signal.SIGSTOP)
            else:
                time.sleep(0.05)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - started
    assert proc.returncode in (0, 100), err[-3000:]
    assert not _alive(stopped), "the stopped worker outlived its deadline"
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 24
    said = "the grounding-eval worker did not answer within 3 s; it was killed (GROUNDING_EVAL_CALL_TIMEOUT)"
    held = [r for r in rows if _mentions(r, said)]
    assert held, "no row was graded by the stopped worker"
    assert all(_row(r).unscored for r in held)
    held_keys = {(query_id(r), r["prompt"]["label"]) for r in held}
    graded = {g[0]: g for g in _graded(out)}
    expected = {g[0]: g for g in _graded(clean.out)}
    assert {k: v for k, v in graded.items() if k not in held_keys} == {
        k: v for k, v in expected.items() if k not in held_keys
    }
    assert took < 200


# --- loading a judge provider has a deadline too --------------------------------------------------------

# A judge provider module whose loading never settles; the first line keeps Node busy meanwhile (as a
# connection that never answers would), or not.
NEVER_LOADS = """{busy}await new Promise(() => {{}});
export default class Never {{ id() {{ return 'never'; }} async callApi() {{ return {{ output: '' }}; }} }}
"""


@pytest.mark.e2e
@pytest.mark.parametrize(
    "busy", ["setInterval(() => {}, 1000);\n", ""], ids=["node-kept-busy", "node-left-idle"]
)
def test_a_provider_that_never_loads_stops_the_eval_naming_it(tmp_path: Path, busy: str) -> None:
    """beforeAll loads each live judge before any model is called: a module that never settles stops the
    eval within the load deadline (here GROUNDING_EVAL_CALL_TIMEOUT, 3 s), with one line naming it."""
    provider = tmp_path / "never.mjs"
    provider.write_text(NEVER_LOADS.format(busy=busy), encoding="utf-8")
    entry = f"file://{ENTRY}"
    judge = {
        "type": "javascript",
        "value": f"{entry}:judge",
        "provider": f"file://{provider}",
        "config": {"rubric": "v3"},
    }
    test = {"vars": {"question": "Who can help me?", "query_id": "t-1", "jurisdiction": "IL"},
            "metadata": {"dataset": str(REPO / "datasets" / "sample")}, "assert": [judge]}  # fmt: skip
    suite = {
        "prompts": ["{{ question }}"],
        "providers": ["echo"],
        "extensions": [f"{entry}:beforeAll"],
        "tests": [test],
    }
    config = tmp_path / "never.yaml"
    config.write_text(json.dumps(suite), encoding="utf-8")
    env = {**_without_deadline(), "GROUNDING_EVAL_CALL_TIMEOUT": "3", "PROMPTFOO_PYTHON": sys.executable}
    proc = _promptfoo(["-c", str(config)], tmp_path, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the eval still ran 90 s after it started: the provider's loading held it")
    said = (
        f"judge provider file://{provider} (the assertion's provider): the provider did not load within 3 s"
    )
    assert proc.returncode == 1, (out + err)[-3000:]
    assert f"  - judge (t-1): {said}\n" in err, err[-3000:]


def _state(pid: int) -> str:
    """The process's state letter (R running, S sleeping, T stopped, …), or "" when it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_worker_stopped_mid_eval_is_found_by_its_silence(
    tmp_path: Path, marker: str, shared_eval: Callable[[str], EvalRun]
) -> None:
    """SIGSTOP one worker while the main job runs with the shipped limits (a call's deadline 2,220 s, a
    worker's stall 15 s): the eval finishes with every row long before any deadline; the rows the worker
    held are unscored as worker failures, a safety failure their verifier found still fails them, and
    every other row is graded exactly as a clean run grades it."""
    clean = shared_eval("promptfooconfig.yaml")
    assert clean.returncode in (0, 100), clean.tail()
    out = tmp_path / "out.json"
    started = time.monotonic()
    env = {
        "GROUNDING_EVAL_CALL_TIMEOUT": "2220",
        "GROUNDING_EVAL_WORKER_STALL": "",
        "GROUNDING_EVAL_WORKER_IDLE": marker,
    }
    proc = _promptfoo(
        ["-c", "promptfooconfig.yaml", "-j", "4", "-o", str(out)], tmp_path, env=env, start_new_session=True
    )
    stopped = None
    try:
        # A worker that has sent its ready line (seen waiting for a request) and is now at work on a call;
        # if none is caught at work within 3 s, an idle one (its next call is the one it holds).
        ready: dict[int, float] = {}
        while stopped is None:
            assert proc.poll() is None, "promptfoo ended before a worker could be stopped"
            assert time.monotonic() - started < 120, "no worker started"
            for pid in _workers(marker):
                if pid not in ready and _waiting_for_a_request(pid):
                    ready[pid] = time.monotonic()
            working = [pid for pid in ready if _state(pid) == "R"]
            if working or (ready and time.monotonic() - min(ready.values()) > 3):
                stopped = (working or sorted(ready))[0]
                os.kill(stopped, signal.SIGSTOP)
            else:
                time.sleep(0.01)
        _, err = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        pytest.fail(f"promptfoo still ran {time.monotonic() - started:.0f} s in, a stopped worker holding it")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - started
    assert proc.returncode in (0, 100), err[-3000:]
    assert not _alive(stopped), "the stopped worker was left behind"
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 24
    said = "the grounding-eval worker showed no sign of life for 15 s (stopped, stuck or swapped out)"
    held = [r for r in rows if _mentions(r, said)]
    assert held, "no row was graded by the stopped worker"
    clean_rows = {(query_id(r), r["prompt"]["label"]): r for r in clean.rows()}
    for r in held:
        key = (query_id(r), r["prompt"]["label"])
        results = [r["gradingResult"], *r["gradingResult"]["componentResults"]]
        assert any((c.get("metadata") or {}).get("worker_failure") == "stalled" for c in results), key
        report, before = _row(r), _row(clean_rows[key])
        if report.verifier_ran and before.safety_no:
            assert (report.passed, report.unscored, report.safety_no) == (False, False, before.safety_no), key
        else:
            assert report.unscored, key
    held_keys = {(query_id(r), r["prompt"]["label"]) for r in held}
    graded = {g[0]: g for g in _graded(out)}
    expected = {g[0]: g for g in _graded(clean.out)}
    assert {k: v for k, v in graded.items() if k not in held_keys} == {
        k: v for k, v in expected.items() if k not in held_keys
    }
    assert took < 120, took
