"""The warm Python workers behind assertions/grounding.cjs: protocol, lifetime, fallback, equivalence.

Real processes throughout: the worker is started with the project's Python, the JavaScript entry with
Node, and promptfoo itself for the eval-level properties (concurrency, a killed eval).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.promptfoo import worker
from tests.entry_points import load_entry_point
from tests.outcomes import unscored_reason
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "assertions" / "grounding.cjs"

CONTEXT: dict[str, Any] = {
    "prompt": "C0: Who can help me?",
    "vars": {"query_id": "t-1", "jurisdiction": "IL", "question": "Who can help me?"},
    "test": {"metadata": {"dataset": "datasets/sample", "quotation": "information"}},
    "config": {"liveness": "offline"},
}
ANSWER = "Call Legal Aid Chicago at (312) 341-1070 or see https://www.legalaidchicago.org/."


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "grounding_eval.promptfoo.worker", *args],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _request(rid: int, call: str, args: list[Any]) -> bytes:
    return (json.dumps({"id": rid, "call": call, "args": args, "pack_root": str(REPO)}) + "\n").encode()


def _send(proc: subprocess.Popen[bytes], *messages: bytes | dict[str, Any]) -> None:
    """Write each message to the worker (a request line as is, a dict as one JSON line) and flush."""
    assert proc.stdin is not None
    for message in messages:
        proc.stdin.write(message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _read(proc: subprocess.Popen[bytes]) -> Any:
    """The worker's next line, parsed."""
    assert proc.stdout is not None
    return json.loads(proc.stdout.readline())


def _ready(*requests: bytes) -> subprocess.Popen[bytes]:
    """A worker (``--idle 30``) past its ready line, with ``requests`` sent."""
    proc = _start("--idle", "30")
    _read(proc)
    _send(proc, *requests)
    return proc


class TestHandle:
    def test_unknown_call_is_a_failing_result_not_an_exception(self) -> None:
        reply = worker.handle({"id": 3, "call": "nope", "args": [], "pack_root": str(REPO)})
        assert reply["id"] == 3
        assert reply["result"]["pass"] is False
        assert "unknown call 'nope'" in reply["result"]["reason"]

    @pytest.mark.parametrize("request_", [[], "x", None, 7])
    def test_a_request_that_is_not_an_object(self, request_: Any) -> None:
        reply = worker.handle(request_)
        assert reply["result"]["pass"] is False and "not a JSON object" in reply["result"]["reason"]

    def test_malformed_args_name_the_problem_in_the_calls_words(self) -> None:
        reply = worker.handle({"id": 1, "call": "judge", "args": ["only one"], "pack_root": str(REPO)})
        assert unscored_reason(reply["result"]).startswith("malformed request")

    def test_a_bug_in_a_call_is_shown_on_the_row(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(args: list[Any], root: Path) -> dict[str, Any]:
            raise RuntimeError("boom")

        monkeypatch.setitem(worker.CALLS, "verifier", broken)  # type: ignore[arg-type]
        reply = worker.handle({"id": 1, "call": "verifier", "args": ["x", {}], "pack_root": str(REPO)})
        assert reply["result"] == {
            "pass": False,
            "score": 0.0,
            "reason": "ERROR (verifier not run): RuntimeError: boom",
            "namedScores": {},
            "metadata": {"outcome": "unscored", "unscored_reason": "RuntimeError: boom"},
        }

    def test_same_result_as_the_python_entry_file(self) -> None:
        entry = load_entry_point("verifier")
        reply = worker.handle(
            {"id": 1, "call": "verifier", "args": [ANSWER, CONTEXT], "pack_root": str(REPO)}
        )
        assert reply["result"] == entry(ANSWER, CONTEXT)


class TestProcess:
    def test_ready_then_replies_in_order_even_when_requests_arrive_together(self) -> None:
        proc = _start("--idle", "30")
        ready = _read(proc)
        assert ready["ready"] == worker.PROTOCOL and ready["pid"] == proc.pid
        # Two requests in one write: the second must not wait in a buffer for more input.
        _send(proc, _request(1, "verifier", [ANSWER, CONTEXT]) + _request(2, "round3", [{}, {}]))
        first, second = _read(proc), _read(proc)
        assert proc.stdin is not None
        assert first["id"] == 1 and "deterministic_verifier_score" in first["result"]["namedScores"]
        assert second["id"] == 2 and second["result"]["reason"].startswith("Round 3: UNSCORED")
        proc.stdin.close()  # promptfoo gone: the pipe closes
        assert proc.wait(timeout=10) == 0

    def test_a_line_that_is_not_json_gets_an_error_reply_and_the_worker_goes_on(self) -> None:
        proc = _ready(b"{not json\n" + _request(5, "round1", [{}, {}]))
        assert "not JSON" in _read(proc)["error"]
        assert _read(proc)["id"] == 5
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)

    def test_exits_after_the_idle_limit(self) -> None:
        proc = _start("--idle", "0.5")
        assert proc.stdout is not None
        proc.stdout.readline()
        started = time.monotonic()
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - started < 15
        assert proc.stdin is not None
        proc.stdin.close()

    def test_a_heartbeat_comes_every_period_between_the_replies(self) -> None:
        """``--heartbeat S``: ``{"beat": N}`` lines from a thread of its own, counted up, whole lines
        between the replies (the JavaScript side's sign of life)."""
        proc = _start("--idle", "30", "--heartbeat", "0.1")
        assert proc.stdout is not None and proc.stdin is not None
        started = time.monotonic()
        lines = [json.loads(proc.stdout.readline()) for _ in range(6)]
        assert time.monotonic() - started < 5
        beats = [line["beat"] for line in lines if "beat" in line]
        assert [line for line in lines if "beat" not in line] == [
            {"id": None, "ready": worker.PROTOCOL, "pid": proc.pid}
        ]
        assert beats == list(range(beats[0], beats[0] + len(beats))) and len(beats) == 5
        _send(proc, _request(3, "verifier", [ANSWER, CONTEXT]))
        while "beat" in (reply := json.loads(proc.stdout.readline())):
            pass
        assert reply["id"] == 3 and reply["result"]["pass"] is True
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0

    @pytest.mark.parametrize("period", ["0", "-1", "nan"])
    def test_a_heartbeat_period_must_be_positive(self, period: str) -> None:
        proc = _start("--heartbeat", period)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 2
        assert b"--heartbeat must be a number of seconds above 0" in err

    def test_once_answers_one_request(self) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval.promptfoo.worker", "--once"],
            cwd=REPO, input=_request(9, "verifier", [ANSWER, CONTEXT]), capture_output=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        reply = json.loads(done.stdout)
        assert reply["id"] == 9 and reply["result"]["pass"] is True


def _node(script: str, env: dict[str, str] | None = None) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH")
    done = subprocess.run(
        [node, "-e", script],
        cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _call_entry(call: str, value: Any, context: Any, env: dict[str, str] | None = None) -> Any:
    script = (
        f"require({json.dumps(str(ENTRY))}).{call}({json.dumps(value)}, {json.dumps(context)})"
        ".then((r) => process.stdout.write(JSON.stringify(r)))"
    )
    return _node(script, env)


@pytest.fixture
def python_env() -> dict[str, str]:
    return {"PROMPTFOO_PYTHON": sys.executable}


class TestJavaScriptEntry:
    def test_same_result_as_the_python_entry_file(self, python_env: dict[str, str]) -> None:
        entry = load_entry_point("verifier")
        assert _call_entry("verifier", ANSWER, CONTEXT, python_env) == entry(ANSWER, CONTEXT)

    def test_composite_through_the_entry(self, python_env: dict[str, str]) -> None:
        composite = load_entry_point("composite", "round3")
        assert _call_entry("round3", {}, {"componentResults": []}, python_env) == composite(
            {}, {"componentResults": []}
        )

    def test_node_exits_when_grading_is_done(self, python_env: dict[str, str]) -> None:
        """The workers must not keep Node alive: the script ends once its call is answered."""
        started = time.monotonic()
        _call_entry("verifier", ANSWER, CONTEXT, {**python_env, "GROUNDING_EVAL_WORKER_IDLE": "300"})
        assert time.monotonic() - started < 60

    def test_falls_back_to_a_one_off_process_and_says_so(self, tmp_path: Path) -> None:
        """A Python that cannot run as a worker (here: it refuses unless asked for --once)."""
        fake = tmp_path / "python"
        fake.write_text(
            f'#!/bin/sh\ncase "$*" in *--once*) exec {sys.executable} "$@";; esac\n'
            'echo "cannot serve" >&2\nexit 3\n',
            encoding="utf-8",
        )
        fake.chmod(0o755)
        result = _call_entry("verifier", ANSWER, CONTEXT, {"PROMPTFOO_PYTHON": str(fake)})
        assert result["pass"] is True
        last = result["reason"].splitlines()[-1]
        assert last.startswith("(graded in a one-off Python process: the grounding-eval worker failed: ")
        assert "worker exited (status 3)" in last

    def test_no_python_at_all_is_an_explicit_failure(self, tmp_path: Path) -> None:
        result = _call_entry("judge", ANSWER, CONTEXT, {"PROMPTFOO_PYTHON": str(tmp_path / "missing")})
        assert result["pass"] is False and result["score"] == 0
        assert unscored_reason(result).startswith("no Python could grade this row: worker: ")


# --- promptfoo end to end ------------------------------------------------------------------------------


def _promptfoo(args: list[str], tmp_path: Path, **kwargs: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    env.update(kwargs.pop("env", {}))
    return subprocess.Popen(
        ["npx", "promptfoo", "eval", "--no-progress-bar", "--no-table", "--no-cache", *args],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs,
    )  # fmt: skip


def _graded(path: Path) -> list[tuple[Any, ...]]:
    rows = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    out = []
    for r in rows:
        components = []
        for c in r["gradingResult"]["componentResults"]:
            metadata = dict(c.get("metadata") or {})
            judge = dict(metadata.get("judge") or {})
            judge.pop("timestamp", None)  # when it was judged is the only thing allowed to differ
            metadata["judge"] = judge
            components.append((c["pass"], c["score"], c["reason"], json.dumps(metadata, sort_keys=True)))
        key = (query_id(r), r["prompt"]["label"])
        out.append(
            (key, r["success"], r["score"], r["gradingResult"]["reason"], r["namedScores"], components)
        )
    return sorted(out, key=lambda x: x[0])


@pytest.mark.e2e
def test_concurrency_gives_the_same_results_as_one_at_a_time(tmp_path: Path) -> None:
    results = {}
    for jobs in ("1", "4"):
        out = tmp_path / f"j{jobs}.json"
        proc = _promptfoo(["-c", "promptfooconfig.yaml", "-j", jobs, "-o", str(out)], tmp_path)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 100), err[-3000:]
        results[jobs] = _graded(out)
    assert len(results["1"]) == 24
    assert results["1"] == results["4"]


def _workers(marker: str) -> list[int]:
    """Worker processes started with ``--idle <marker>`` (so only this test's)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"grounding_eval.promptfoo.worker" in cmdline and marker.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.e2e
def test_a_killed_eval_leaves_no_worker_behind(tmp_path: Path) -> None:
    """SIGKILL promptfoo (its Node processes only) mid-run: every worker is gone within seconds."""
    marker = "47.25"  # the idle limit doubles as a tag on this test's workers
    proc = _promptfoo(
        ["-c", "promptfooconfig.yaml", "--repeat", "30", "-o", str(tmp_path / "never.json")],
        tmp_path,
        env={"GROUNDING_EVAL_WORKER_IDLE": marker},
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not _workers(marker):
        assert proc.poll() is None, "promptfoo ended before any worker started"
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.2)
    started = _workers(marker)
    # Kill the Node side only; the workers are in the same session and must leave on their own.
    session = os.getsid(proc.pid)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in started:
            try:
                if os.getsid(int(entry.name)) == session:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
    proc.wait(timeout=30)

    def left() -> list[int]:
        # A worker Node spawned while the loop above ran is one of this eval's too: it must leave as well.
        return [pid for pid in {*started, *_workers(marker)} if _alive(pid)]

    deadline = time.monotonic() + 10
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left(), "a worker outlived its eval"


# --- a composite that could not run is unscored as a value, on every path -----------------------------


def _report_row(grading: dict[str, Any]) -> Any:
    """The report's reading of a row whose composite returned ``grading`` (its judge and verifier ran)."""
    from grounding_eval.analysis.summary import _row

    return _row({
        "success": False, "score": 0, "namedScores": {"round3.llm_judge_score": 0.9},
        "prompt": {"label": "C1: c1.txt", "raw": "p"}, "vars": {"query_id": "q"},
        "testCase": {"metadata": {"round": "3"}}, "provider": {"id": "p"},
        "response": {"output": "answer"}, "gradingResult": grading,
    })  # fmt: skip


def _unscored(why: str, *, composite: bool = False) -> dict[str, Any]:
    """The metadata of an unscored fallback: its outcome and reason (a composite's status too)."""
    status = {"composite": {"status": "unscored"}} if composite else {}
    return {**status, "outcome": "unscored", "unscored_reason": why}


class TestCompositeFallbacksAreUnscored:
    """Every fallback that stands in for a composite (the worker's, the one-off entry's, the JavaScript
    entry's) says ``metadata.outcome: unscored`` with its reason (and ``metadata.composite.status``), so
    the report counts the row apart, never as a failure — the reason's "UNSCORED:" text is never what
    decides."""

    def test_the_report_reads_the_value_not_the_text(self) -> None:
        scored = _report_row({"pass": False, "reason": "UNSCORED: composite not computed: x"})
        unscored = _report_row({**worker._failure("UNSCORED: composite not computed", "x")})
        assert (scored.unscored, unscored.unscored) == (False, True)

    def test_the_worker(self) -> None:
        reply = worker.handle({"id": 1, "call": "round3", "args": ["only one"], "pack_root": str(REPO)})
        why = "malformed request: args must be [value, context]"
        assert reply["result"]["metadata"] == _unscored(why, composite=True)
        assert "namedScores" not in reply["result"]  # the row keeps its others; no composite score added
        assert _report_row(reply["result"]).unscored is True
        judge = worker.handle({"id": 2, "call": "judge", "args": ["only one"], "pack_root": str(REPO)})
        assert judge["result"]["metadata"] == _unscored(why)  # an assertion's too: a value, not its prefix
        assert judge["result"]["namedScores"] == {}

    def test_the_one_off_entry(self) -> None:
        composite = load_entry_point("composite", "round3")
        result = composite({}, object())  # a context that is not a mapping: the entry's own guard
        assert result["reason"].startswith("UNSCORED: composite not computed: AttributeError")
        why = result["reason"].removeprefix("UNSCORED: composite not computed: ")
        assert result["metadata"] == _unscored(why, composite=True)
        assert _report_row(result).unscored is True

    def test_the_javascript_entry_with_no_python(self, tmp_path: Path) -> None:
        result = _call_entry(
            "round3", {}, {"componentResults": []}, {"PROMPTFOO_PYTHON": str(tmp_path / "none")}
        )
        assert result["reason"].startswith("UNSCORED: composite not computed: no Python could grade this row")
        why = result["reason"].removeprefix("UNSCORED: composite not computed: ")
        assert result["metadata"] == _unscored(why, composite=True)
        assert _report_row(result).unscored is True


def _v3_reply(verdict: str = "Yes") -> str:
    from grounding_eval.judge.rubric import load_rubric, rubric_path

    rubric = load_rubric(rubric_path("v3", REPO / "rubrics"))
    return json.dumps(
        {"criteria": {c.id: {"verdict": verdict, "reasoning": f"Because {c.id}."} for c in rubric.criteria}}
    )


class TestModelCallsThroughThePipe:
    """A judge inside an eval asks promptfoo's Node process for its model call over the worker's pipe."""

    @staticmethod
    def _judge_request(rid: int, cache: Path) -> bytes:
        context = {**CONTEXT, "config": {"rubric": "v3", "provider": "ollama:chat:standin", "cache_dir": str(cache),
                                         "audit_dir": str(cache / "audit"), "review_queue": str(cache / "q.jsonl")},
                   "grounding_eval_judges": {"protocol": 2, "cheap": None, "judge": {
                       "id": "ollama:chat:standin", "use": "live", "ref": "r1", "host": "127.0.0.1:11434",
                       "digest": "d1", "where": "config.provider"}}}  # fmt: skip
        return _request(rid, "judge", [ANSWER, context])

    def test_a_request_that_arrives_meanwhile_waits_its_turn(self, tmp_path: Path) -> None:
        proc = _ready(self._judge_request(1, tmp_path), _request(2, "verifier", [ANSWER, CONTEXT]))
        assert proc.stdin is not None
        asked = _read(proc)
        assert asked["id"] == 1 and asked["model"]["ref"] == "r1" and "spec" not in asked["model"]
        assert "Who can help me?" in asked["model"]["prompt"] and asked["model"]["system"]
        usage = {"prompt": 1200, "completion": 300, "total": 1500}
        reply = {
            "model_reply": asked["model"]["seq"],
            "output": _v3_reply(),
            "token_usage": usage,
            "cost": 0.01,
        }
        _send(proc, {"model_reply": 99, "output": "a stale reply"}, reply)  # the stale one is ignored
        judged, verified = _read(proc), _read(proc)
        assert judged["id"] == 1 and judged["result"]["pass"] is True
        assert judged["result"]["tokensUsed"] == {**usage, "cached": 0, "numRequests": 1}
        meta = judged["result"]["metadata"]
        assert meta["judge_usage"]["providers"]["ollama:chat:standin"]["cost"] == 0.01
        assert verified["id"] == 2 and "deterministic_verifier_score" in verified["result"]["namedScores"]
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0

    def test_the_providers_error_is_an_unscored_row_naming_it(self, tmp_path: Path) -> None:
        proc = _ready(self._judge_request(1, tmp_path))
        assert proc.stdin is not None
        asked = _read(proc)
        _send(proc, {"model_reply": asked["model"]["seq"], "error": "Ollama error: no model"})
        result = _read(proc)["result"]
        assert result["metadata"]["outcome"] == "unscored"
        assert unscored_reason(result).startswith("judge call failed (ollama:chat:standin): ")
        assert "Ollama error: no model" in result["reason"]
        proc.stdin.close()
        proc.wait(timeout=10)

    def test_once_serves_its_model_call_too(self, tmp_path: Path) -> None:
        proc = _start("--once")
        _send(proc, self._judge_request(4, tmp_path))
        asked = _read(proc)
        _send(proc, {"model_reply": asked["model"]["seq"], "output": _v3_reply("No")})
        result = _read(proc)
        assert (
            result["id"] == 4
            and result["result"]["pass"] is False
            and result["result"]["metadata"]["outcome"] == "fail"
        )
        assert proc.wait(timeout=10) == 0

    def test_the_pipe_closing_while_a_reply_is_awaited_ends_the_worker(self, tmp_path: Path) -> None:
        proc = _ready(self._judge_request(1, tmp_path))
        assert proc.stdin is not None
        _read(proc)  # the model call
        proc.stdin.close()  # promptfoo gone mid-call
        result = _read(proc)["result"]
        assert "pipe to promptfoo closed" in result["reason"]
        assert proc.wait(timeout=10) == 0


class TestBeforeAll:
    """grounding.cjs:beforeAll, called as promptfoo calls an extension hook: ({suite}, {hookName})."""

    @staticmethod
    def _suite(config: dict[str, Any]) -> dict[str, Any]:
        verifier = {
            "type": "javascript",
            "value": "file://assertions/grounding.cjs:verifier",
            "config": config,
        }
        return {"suite": {"providers": [], "defaultTest": {"assert": [verifier]},
                          "tests": [{"vars": CONTEXT["vars"], "metadata": CONTEXT["test"]["metadata"]}]}}  # fmt: skip

    def _run(self, suite: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        script = (
            f"require({json.dumps(str(ENTRY))}).beforeAll({json.dumps(suite)}, {{hookName: 'beforeAll'}})"
            ".then(() => process.stdout.write('went on'), (e) => { process.stdout.write(e.message); })"
        )
        return subprocess.run(["node", "-e", script], cwd=REPO, env={**os.environ, **env}, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip

    def test_a_sound_suite_goes_on(self, python_env: dict[str, str]) -> None:
        done = self._run(self._suite({"liveness": "offline"}), python_env)
        assert done.stdout == "went on", done.stderr[-2000:]

    def test_a_problem_stops_it_naming_the_test(self, python_env: dict[str, str]) -> None:
        done = self._run(self._suite({"liveness": "offline", "orgs": "no/such.yaml"}), python_env)
        assert done.stdout.startswith(
            "grounding-eval: the configuration has 1 problem(s); no model was called:"
        )
        assert "verifier (t-1): " in done.stdout and "no/such.yaml" in done.stdout

    def test_a_check_that_cannot_run_is_said_and_the_eval_goes_on(self, tmp_path: Path) -> None:
        done = self._run(
            self._suite({"liveness": "offline"}), {"PROMPTFOO_PYTHON": str(tmp_path / "no-python")}
        )
        assert done.stdout == "went on"
        assert "grounding-eval: the configuration could not be checked before the eval (" in done.stderr


class TestSourceVars:
    """beforeAll lifts the source vars a test's metadata names out of its vars and gives each prompt that
    uses them a function putting them back verbatim — only where that is exact."""

    SCRIPT = """
const nunjucks = require('nunjucks');
const suite = JSON.parse(process.argv[1]);
require(process.argv[2]).beforeAll({ suite }, { hookName: 'beforeAll' }).then(async () => {
  const cells = [];
  for (const t of suite.tests) {
    for (const p of suite.prompts) {
      const vars = { ...t.vars, __evalStepId: 'x' };
      let text;
      try {
        const raw = p.function ? await p.function({ vars, provider: { id: () => 'echo' } }) : p.raw;
        text = nunjucks.renderString(raw, vars);
      } catch (e) { text = `THROWN ${e.message}`; }
      cells.push(text);
    }
  }
  process.stdout.write(JSON.stringify({ vars: suite.tests.map((t) => t.vars), cells }));
});
"""

    def _run(self, tests: list[dict[str, Any]], prompts: list[str], **suite: Any) -> dict[str, Any]:
        body = {"providers": [], "prompts": [{"raw": r, "label": f"p{i}"} for i, r in enumerate(prompts)],
                "tests": tests, **suite}  # fmt: skip
        env = {**os.environ, "PROMPTFOO_PYTHON": sys.executable}  # for beforeAll's check
        done = subprocess.run(["node", "-e", self.SCRIPT, json.dumps(body), str(ENTRY)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        out: dict[str, Any] = json.loads(done.stdout)
        return out

    @staticmethod
    def _test(q: str, src: str) -> dict[str, Any]:
        return {"vars": {"q": q, "src": src}, "metadata": {"source_vars": ["src"]}}

    def test_lifted_and_put_back_verbatim(self) -> None:
        hostile = "A {{ q }} {% endraw %} {# not a comment #} {%- raw -%} Z"
        out = self._run([self._test("one", hostile), self._test("two", "plain")],
                        ["Q {{ q }}\n{{src}}\nend", "no source {{ q }}"])  # fmt: skip
        assert out["vars"] == [{"q": "one"}, {"q": "two"}]  # no column, no copy in the row
        assert out["cells"] == [
            f"Q one\n{hostile}\nend",
            "no source one",
            "Q two\nplain\nend",
            "no source two",
        ]

    @pytest.mark.parametrize(
        ("prompts", "suite"),
        [
            (["{{ src | upper }}"], {}),  # a use nunjucks must evaluate: left to promptfoo
            (["{{ src }} {% if src %}x{% endif %}"], {}),
            (["{{ src }}"], {"defaultTest": {"options": {"transformVars": "return vars"}}}),
        ],
        ids=["filter", "tag", "transformVars"],
    )
    def test_not_lifted_where_it_would_not_be_exact(self, prompts: list[str], suite: dict[str, Any]) -> None:
        out = self._run([self._test("one", "TEXT")], prompts, **suite)
        assert out["vars"] == [{"q": "one", "src": "TEXT"}]

    @pytest.mark.parametrize(
        ("suite", "lifted"),
        [
            ({"defaultTest": {"assert": [{"type": "llm-rubric", "value": "Uses {{ src }} faithfully"}]}}, False),
            ({"defaultTest": {"assert": [{"type": "python", "value": "file://my_check.py"}]}}, False),
            ({"defaultTest": {"assertScoringFunction": "file://my_scoring.js"}}, False),
            ({"providers": [{"id": "file://my_rag.py"}]}, False),
            ({"providers": [{"id": "openai:chat:gpt-4o-mini"}, {"id": "file://providers/replay.py:call_api"}],
              "defaultTest": {"assert": [{"type": "python", "value": "file://assertions/verifier.py:get_assert"},
                                         {"type": "contains", "value": "Illinois"}],
                              "assertScoringFunction": "file://assertions/grounding.cjs:round3"}}, True),
        ],
        ids=["rubric-names-it", "own-assertion-code", "own-scoring-code", "own-provider-code", "pack-and-builtins"],
    )  # fmt: skip
    def test_not_lifted_when_something_else_could_read_them(
        self, suite: dict[str, Any], lifted: bool
    ) -> None:
        test = {
            "vars": {"q": "one", "jurisdiction": "IL", "src": "TEXT"},
            "metadata": {"source_vars": ["src"]},
        }
        out = self._run([test], ["{{ src }}"], **suite)
        kept = {"q": "one", "jurisdiction": "IL"}
        assert out["vars"] == [kept if lifted else {**kept, "src": "TEXT"}]
        assert out["cells"] == ["TEXT"]

    def test_tests_told_apart_only_by_their_sources_keep_them(self) -> None:
        out = self._run([self._test("same", "first"), self._test("same", "second"), self._test("other", "x")],
                        ["{{ src }}"])  # fmt: skip
        assert out["vars"] == [{"q": "same", "src": "first"}, {"q": "same", "src": "second"}, {"q": "other"}]
        assert out["cells"] == ["first", "second", "x"]

    def test_a_called_var_is_called_as_promptfoo_calls_it(self, tmp_path: Path) -> None:
        stand_in = tmp_path / "stand_in.cjs"
        stand_in.write_text(
            "module.exports = (name, prompt, vars) => { if (prompt.includes(name)) throw new Error(`ERROR (no ${name})`);"
            " return { output: `(no ${name} for ${vars.q})` }; };\n",
            encoding="utf-8",
        )
        out = self._run([self._test("one", f"file://{stand_in}")], ["{{ src }}", "C0 {{ q }}"])
        assert out["vars"] == [{"q": "one"}]
        assert out["cells"] == ["THROWN ERROR (no src)", "C0 one"]


def test_a_test_whose_source_vars_cannot_be_rebuilt_stops_the_eval(tmp_path: Path) -> None:
    """A test re-run from a results file without its source vars, whose dataset is gone: beforeAll stops
    the eval, naming the test, rather than render its prompt with an empty block."""
    suite = {"providers": [], "prompts": [{"raw": "{{ jkb_full_content }}", "label": "C1.5"}],
             "tests": [{"description": "t-gone", "vars": {"query_id": "hr-x"},
                        "metadata": {"source_vars": ["jkb_directory", "jkb_full_content"],
                                     "dataset": str(tmp_path / "gone"), "query_id": "hr-x"}}]}  # fmt: skip
    script = (
        f"require({json.dumps(str(ENTRY))}).beforeAll({json.dumps({'suite': suite})}, {{hookName: 'beforeAll'}})"
        ".then(() => process.stdout.write('went on'), (e) => { process.stdout.write(e.message); })"
    )
    done = subprocess.run(["node", "-e", script], cwd=REPO, env={**os.environ, "PROMPTFOO_PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.stdout.startswith("grounding-eval: the configuration has 1 problem(s); no model was called:")
    assert "source vars (t-gone): " in done.stdout and "dataset folder not found" in done.stdout
