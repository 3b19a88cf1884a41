"""A warm Python for a whole promptfoo eval: the grading calls of ``assertions/grounding.cjs``.

promptfoo starts a fresh Python process for every ``type: python`` assertion and every Python scoring
function (about 50 ms before any of our code runs, then the imports and the directory load). A
``type: javascript`` file assertion and a JavaScript scoring function run inside promptfoo's own Node
process instead, so ``assertions/grounding.cjs`` forwards each call to a few of these workers, started
on first use and kept for the eval. A worker grades with exactly the functions the Python entry files
call (``verifier_assertion``, ``judge_assertion``, the ``score_round*`` composites), so a row gets the
same GradingResult through either entry.

The protocol is one JSON object per line. Request: ``{"id": N, "call": NAME, "args": [...],
"pack_root": PATH}``; reply: ``{"id": N, "result": GradingResult}``. Standard output carries only
replies (anything our code prints goes to standard error). A worker handles one call at a time; the
JavaScript side runs several workers for concurrency.

A worker never outlives its eval: it reads requests from a pipe held by the Node process, so it exits
when that pipe closes (promptfoo finished, crashed or was killed), and it also exits after
``--idle`` seconds without a request (the JavaScript side starts a new one if a call comes later).
It opens no socket and writes no file of its own. A worker that does not answer a call within the
JavaScript side's deadline (``GROUNDING_EVAL_CALL_TIMEOUT``; by default the judge client's own bound on
the slowest judgment, plus margin) is killed with SIGKILL and replaced, and that row's result says so:
nothing here needs to cooperate, so a stopped or deadlocked worker cannot hang the eval.

That deadline is the slowest legitimate call's, far too long to wait on a worker that has stopped
(SIGSTOP, a C call that holds the interpreter, a machine swapping it out). With ``--heartbeat SECONDS``
a thread of its own writes ``{"beat": N}`` every SECONDS, whatever the call is doing, and the JavaScript
side kills and replaces a busy worker that has written nothing for ``GROUNDING_EVAL_WORKER_STALL``
seconds: the call it was on is unscored as a worker failure, in seconds, not at the call's deadline.

``python -m grounding_eval.promptfoo.worker --once`` reads a single request line from standard input,
writes its reply and exits: the JavaScript entry's way to grade when no worker can be kept.

A judge's model call goes through promptfoo (:mod:`grounding_eval.judge.host`): while grading request
N the worker writes ``{"id": N, "model": {"seq": K, ...}}`` and reads ``{"model_reply": K, ...}`` back
from its input; a request that arrives meanwhile waits its turn.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from typing import Any, TextIO

from grounding_eval.calls import CALLS as REGISTRY
from grounding_eval.calls import SCORING_FAILED, WORKER_FAILED, WORKER_IDLE_S, Call

__all__ = ["CALLS", "handle", "main"]

PROTOCOL = 1
DEFAULT_IDLE_S = WORKER_IDLE_S


def _function(adapter: str | None) -> Callable[..., dict[str, Any]]:
    """A call's adapter (``module:function``, :class:`grounding_eval.calls.Call`), imported on first use."""
    module, _, name = str(adapter).partition(":")
    function: Callable[..., dict[str, Any]] = getattr(import_module(module), name)
    return function


def _assertion(adapter: str | None) -> Callable[[list[Any], Path], dict[str, Any]]:
    def grade(args: list[Any], pack_root: Path) -> dict[str, Any]:
        return _function(adapter)(args[0], args[1], pack_root=pack_root)

    return grade


def _check(args: list[Any], pack_root: Path) -> dict[str, Any]:
    """The configuration check of a suite's pack assertions (``grounding.cjs:beforeAll``): one answer each."""
    from grounding_eval.promptfoo.preflight import preflight

    entries = args[0] if isinstance(args[0], list) else []
    return {"checks": [
        preflight(str(e.get("call")), e.get("context"), pack_root, python_entry=e.get("entry") == "python")
        if isinstance(e, dict) else {"ok": False, "error": "malformed check request"}
        for e in entries
    ]}  # fmt: skip


def _source_vars(args: list[Any], pack_root: Path) -> dict[str, Any]:
    """Each test's vars with the source vars its metadata names rebuilt from its dataset
    (``grounding.cjs:beforeAll``, for tests re-run from a results file, which keeps none), or the error."""
    from grounding_eval.promptfoo.source_vars import with_source_vars

    out: list[dict[str, Any]] = []
    for entry in args[0] if isinstance(args[0], list) else []:
        try:
            vars_, metadata = entry["vars"], entry["metadata"]
            if not isinstance(vars_, dict) or not isinstance(metadata, dict):
                raise TypeError("vars and metadata must be mappings")
            out.append({"vars": with_source_vars(vars_, metadata)})
        except Exception as exc:  # each test's own answer: one bad test names itself
            out.append({"error": str(exc) or type(exc).__name__})
    return {"source_vars": out}


def _composite(adapter: str | None) -> Callable[[list[Any], Path], dict[str, Any]]:
    def score(args: list[Any], pack_root: Path) -> dict[str, Any]:
        return _function(adapter)(args[0] or {}, args[1])

    return score


_OWN: Mapping[str, Callable[[list[Any], Path], dict[str, Any]]] = {
    "check": _check,
    "source_vars": _source_vars,
}


def _answering(call: Call) -> Callable[[list[Any], Path], dict[str, Any]]:
    if call.kind == "worker":
        return _OWN[call.name]
    return (_assertion if call.kind == "assertion" else _composite)(call.adapter)


# The calls a worker answers (grounding_eval.calls): the same functions the Python entry files in
# assertions/ call, and beforeAll's own.
CALLS: dict[str, Callable[[list[Any], Path], dict[str, Any]]] = {
    c.name: _answering(c) for c in REGISTRY.values()
}


def handle(request: Any) -> dict[str, Any]:
    """Answer one request: ``{"id", "result"}``; never raises.

    An unknown call or malformed request is answered with a failing GradingResult naming the problem,
    so the row shows it rather than the eval stopping.
    """
    from grounding_eval.encodable import utf8_encodable

    rid = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return {
            "id": rid,
            "result": _failure(WORKER_FAILED, "the request is not a JSON object"),
        }
    call = request.get("call")
    args = request.get("args")
    root = request.get("pack_root")
    if call not in CALLS:
        return {"id": rid, "result": _failure(WORKER_FAILED, f"unknown call {call!r}")}
    prefix = REGISTRY[str(call)].failed
    if not isinstance(args, list) or len(args) != 2 or not isinstance(root, str):
        return {"id": rid, "result": _failure(prefix, "malformed request: args must be [value, context]")}
    try:
        result = CALLS[str(call)](args, Path(root))
    except Exception as exc:  # the adapters return GradingResults; this is a bug, shown on the row
        result = _failure(prefix, f"{type(exc).__name__}: {exc}")
    return {"id": rid, "result": utf8_encodable(result)}


def _failure(prefix: str, message: str) -> dict[str, Any]:
    """An unscored result (``metadata.outcome``, :mod:`grounding_eval.outcome`) whose reason line is
    ``prefix: message``; a composite's also says ``metadata.composite.status`` unscored, as the
    composite itself does."""
    from grounding_eval.outcome import unscored_result

    result = unscored_result(prefix, message)
    if prefix == SCORING_FAILED:  # a composite's result keeps the row's other named scores (none added)
        del result["namedScores"]
        result["metadata"]["composite"] = {"status": "unscored"}
    return result


_WRITING = threading.Lock()  # one line at a time on standard output: the heartbeat writes from its own thread


def _reply(out: TextIO, reply: Mapping[str, Any]) -> None:
    line = json.dumps(reply, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    with _WRITING:
        out.write(line)
        out.flush()


def _heartbeat(out: TextIO, every: float) -> None:
    """Write ``{"beat": N}`` every ``every`` seconds from a daemon thread, until the pipe closes: the sign
    of life the JavaScript side watches while a call is on (a stopped or stuck process writes none)."""

    def beat() -> None:
        count = 0
        while True:
            time.sleep(every)
            count += 1
            try:
                _reply(out, {"beat": count})
            except (OSError, ValueError):  # the pipe closed: promptfoo has gone, and the worker follows
                return

    threading.Thread(target=beat, name="grounding-eval-heartbeat", daemon=True).start()


class _Reader:
    """Lines read from ``fd`` (the descriptor itself, not a buffered file, so that waiting for input
    never misses a line already read into a buffer), with requests that arrive while a call waits for
    a model reply kept for later."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._parts: list[bytes] = []
        self._ready: deque[bytes] = deque()  # whole lines read, not yet taken
        self.later: deque[bytes] = deque()  # requests that came while a model reply was awaited

    def line(self, idle: float | None) -> bytes | None:
        """The next line, or ``None`` when the pipe closed or stayed silent ``idle`` seconds."""
        while not self._ready:
            ready, _, _ = select.select([self._fd], [], [], idle)
            if not ready:
                return None  # idle past the limit: the JavaScript side starts a new worker when needed
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:  # the pipe closed (promptfoo has gone): a last line without its newline counts
                rest, self._parts = b"".join(self._parts), []
                return rest or None
            while (cut := chunk.find(b"\n")) >= 0:
                self._ready.append(b"".join([*self._parts, chunk[:cut]]))
                self._parts, chunk = [], chunk[cut + 1 :]
            if chunk:
                self._parts.append(chunk)
        return self._ready.popleft()

    def request(self, idle: float) -> bytes | None:
        """The next request: one kept from before, else a new line."""
        return self.later.popleft() if self.later else self.line(idle)


class _Channel:
    """The model calls of the request being graded, asked of promptfoo's Node process over the pipe
    (:class:`grounding_eval.judge.host.HostChannel`)."""

    def __init__(self, out: TextIO, reader: _Reader, request_id: Any) -> None:
        self._out, self._reader, self._id = out, reader, request_id
        self._seq = 0
        self._lock = threading.Lock()

    def ask(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        with self._lock:
            self._seq += 1
            _reply(self._out, {"id": self._id, "model": {"seq": self._seq, **request}})
            while True:
                line = self._reader.line(None)
                if line is None:
                    raise OSError("the pipe to promptfoo closed while a model reply was awaited")
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if isinstance(message, dict) and "model_reply" in message:
                    if message["model_reply"] == self._seq:
                        return message
                    continue  # a late reply to an earlier call: that call has given up
                self._reader.later.append(line)  # the next request, queued behind this one


def _serve(fd: int, out: TextIO, idle: float) -> int:
    reader = _Reader(fd)
    while (line := reader.request(idle)) is not None:
        _answer(line, out, reader)
    return 0


def _answer(line: bytes, out: TextIO, reader: _Reader) -> None:
    from grounding_eval.judge.host import hosting

    try:
        request = json.loads(line)
    except ValueError as exc:
        _reply(out, {"id": None, "error": f"not JSON: {exc}"})
        return
    rid = request.get("id") if isinstance(request, dict) else None
    with hosting(_Channel(out, reader, rid)):
        _reply(out, handle(request))


def main(argv: list[str] | None = None) -> int:
    """Serve requests from standard input until it closes or stays idle; ``--once`` answers one."""
    parser = argparse.ArgumentParser(prog="python -m grounding_eval.promptfoo.worker")
    parser.add_argument(
        "--idle", type=float, default=DEFAULT_IDLE_S, help="exit after SECONDS without a request"
    )
    parser.add_argument("--once", action="store_true", help="answer one request from standard input and exit")
    parser.add_argument(
        "--heartbeat", type=float, default=None, help='write {"beat": N} every SECONDS (a sign of life)'
    )
    args = parser.parse_args(argv)
    out = sys.stdout
    sys.stdout = sys.stderr  # replies only on the real standard output
    if args.heartbeat is not None:
        if not args.heartbeat > 0:
            parser.error("--heartbeat must be a number of seconds above 0")
        _heartbeat(out, args.heartbeat)
    if args.once:
        reader = _Reader(sys.stdin.fileno())
        line = reader.line(None)
        if line is None:
            _reply(out, {"id": None, "error": "no request on standard input"})
            return 2
        _answer(line, out, reader)
        return 0
    _reply(out, {"id": None, "ready": PROTOCOL, "pid": os.getpid()})
    return _serve(sys.stdin.fileno(), out, args.idle)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
