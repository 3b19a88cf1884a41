"""Judge model calls through promptfoo's own providers, and the judges they are made for.

Which model judges a row — its provider, its endpoint, its secrets — is decided in one place,
``assertions/judges.cjs``, in Node, where promptfoo's providers live (docs/how-to/judge-provider.md). The
Python side never sees a provider's configuration: it gets a :class:`Judge` — a label (the provider id
without a URL's userinfo or query), the endpoint host, a digest for the reply cache and a reference — and
asks for model calls by that reference. Replies and errors come back already scrubbed of every secret the
provider holds.

Two ways to reach ``judges.cjs``, behind one :class:`HostChannel`:

* inside ``promptfoo eval``, the pack's Python workers are children of promptfoo's Node process
  (``assertions/grounding.cjs``), which resolves each judge row's judges before forwarding it
  (``context["grounding_eval_judges"]``) and answers its model calls over the worker's pipe
  (:func:`hosting` makes that pipe the current channel while a row is graded);
* everywhere else — the ``grounding-eval`` command line, ``rescore``, promptfoo's ``type: python``
  entries — a host process, ``node assertions/judges.cjs --serve``, is started on first use
  (:func:`node_host`) and answers the same requests, resolution included.

:class:`HostJudgeClient` is the judge behind the :class:`~grounding_eval.judge.calls.JudgeClient`
protocol, so the judges' loop (:mod:`grounding_eval.judge.pipeline`) does not know which way it goes.
promptfoo's own cache is bypassed (the library copy is not the CLI's, and ``--no-cache`` does not reach
it); the pack's reply cache (:mod:`grounding_eval.judge.cache`) keeps replies that parse, keyed by the
judge's label, its digest, the system text and the prompt. A cached reply reports 0 new tokens and its
original count as cached, as promptfoo ≥ 0.122 does.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import math
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from grounding_eval.calls import MODEL_CALL_DEFAULT_S
from grounding_eval.errors import terminal_safe
from grounding_eval.judge.cache import ReplyCache
from grounding_eval.judge.calls import JudgeError, JudgeReply, Usage

__all__ = [
    "HostChannel",
    "HostJudgeClient",
    "Judge",
    "Judges",
    "NodeHost",
    "current_host",
    "hosting",
    "node_host",
    "received_rows",
    "resolve_judges",
    "say_key_hosts",
]

NODE_ENV: Final = "GROUNDING_EVAL_NODE"
"""Which ``node`` runs the host process (default: the pack's own ``node_modules``, else ``PATH``)."""
PROMPTFOO_ENV: Final = "GROUNDING_EVAL_PROMPTFOO"
"""Which promptfoo package the host loads providers with (default: the one running this ``type: python``
entry, else the pack's own ``node_modules/promptfoo``)."""

_READY_TIMEOUT_S: Final = 60.0
_RESOLVE_TIMEOUT_S: Final = 300.0  # a resolution loads the provider (promptfoo's library: seconds)
_MARGIN_S: Final = 30.0


class HostChannel(Protocol):
    """A way to promptfoo's providers: one model call out, its reply back."""

    def ask(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        """Send ``request`` (``ref``, ``prompt``, ``system``, ``deadline_s``) and return the reply
        (``output``, ``token_usage``, ``cost``, ``host``; or ``error``).

        Raises:
            OSError: The channel closed (promptfoo, or the host process, has gone).
        """
        ...


_host_lock = threading.Lock()
_host: HostChannel | None = None


@contextlib.contextmanager
def hosting(channel: HostChannel | None) -> Iterator[None]:
    """Make ``channel`` (the worker's pipe to promptfoo's Node process) the judges' way while one call is
    graded: the judges it resolved are then read from the call's context."""
    global _host
    with _host_lock:
        previous, _host = _host, channel
    try:
        yield
    finally:
        with _host_lock:
            _host = previous


def current_host() -> HostChannel | None:
    """The channel of the call being graded inside an eval's worker, or ``None``."""
    return _host


# --- the judges of a call ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Judge:
    """A judge as ``assertions/judges.cjs`` resolved it: never its configuration or its keys.

    Attributes:
        id: The provider id as rows and reports name it (a URL's userinfo and query dropped).
        use: ``replay`` (recorded replies, read here) or ``live`` (a model promptfoo calls).
        where: Where it was set, for messages (``$GROUNDING_EVAL_JUDGE_PROVIDER``, ``config.provider``, …).
        path: A recording's file.
        dataset: The dataset folder a recording named with ``{dataset}`` must lie in.
        ref: A live judge's reference in the process that resolved it.
        host: The endpoint host a live judge sends its requests (and its key) to, when known.
        key_host: That host when the provider holds an API key (what the key-host lines name).
        digest: A live judge's provider and settings, secrets replaced, hashed (the reply cache's key).
    """

    id: str
    use: Literal["replay", "live"]
    where: str
    path: str | None = None
    dataset: str | None = None
    ref: str | None = None
    host: str | None = None
    key_host: str | None = None
    digest: str | None = None


@dataclass(frozen=True)
class Judges:
    """The judges of one call: the judge (the factual-accuracy judge's capable one) and its cheap first
    stage, if any."""

    judge: Judge
    cheap: Judge | None = None


def resolve_judges(
    call: str,
    context: Mapping[str, Any],
    *,
    override: Mapping[str, Any] | None = None,
    check: bool = False,
) -> Judges:
    """The judges of ``call`` (a judge call, :data:`grounding_eval.calls.JUDGE_CALLS`) for a row with ``context``.

    Inside an eval's worker, what ``assertions/grounding.cjs`` resolved for the row; elsewhere, asked of
    the host process (:func:`node_host`).

    Args:
        call: The pack call.
        context: promptfoo's assertion context (``config``, ``test``, ``provider``).
        override: The command line's own judge (``provider``, ``base_url``, ``cheap_provider``,
            ``cheap_base_url``), which comes first.
        check: Also load each live judge and check its key is set (the command line, before any call).

    Raises:
        ValueError: No judge, a setting that cannot be used, a judge that is the model under test, or an
            endpoint refused while ``$GROUNDING_EVAL_JUDGE_PROVIDER`` is set (one line).
        JudgeError: The host process could not be started or asked.
    """
    given = context.get("grounding_eval_judges")
    if current_host() is not None and isinstance(given, Mapping) and override is None:
        answer: Mapping[str, Any] = given
    else:
        answer = node_host().resolve(call, context, override, check=check, received=_received)
    if isinstance(answer.get("error"), str):
        raise ValueError(answer["error"])
    judge = _judge(answer.get("judge"))
    if judge is None:
        raise ValueError("the judge could not be resolved (no answer from assertions/judges.cjs)")
    return Judges(judge, _judge(answer.get("cheap")))


_received: dict[str, Any] | None = None


@contextlib.contextmanager
def received_rows(source: str, allow: Sequence[str]) -> Iterator[None]:
    """While rows read from the results file ``source`` are graded (``rescore``): an endpoint a row's
    judge settings name is not followed (``assertions/judges.cjs``) unless its host is in ``allow`` (the
    hosts the user named, and the model providers' own API hosts). Processes forked inside keep it."""
    global _received
    previous, _received = _received, {"source": str(source), "allow": [str(a) for a in allow]}
    try:
        yield
    finally:
        _received = previous


_said: set[str] = set()


def say_key_hosts(judges: Judges) -> None:
    """Print, once per process, where each live judge sends an API key, as ``beforeAll`` does in an eval:
    ``grounding-eval: API key sent to HOST (judge: ID)`` on stderr, before the judge's first call."""
    for judge in (judges.judge, judges.cheap):
        if judge is None or judge.use != "live" or not judge.key_host:
            continue
        line = f"grounding-eval: API key sent to {judge.key_host} (judge: {judge.id})"
        if line not in _said:
            _said.add(line)
            print(terminal_safe(line), file=sys.stderr, flush=True)


def _judge(value: object) -> Judge | None:
    if not isinstance(value, Mapping) or value.get("use") not in ("replay", "live"):
        return None
    text = {
        k: str(value[k]) for k in ("path", "dataset", "ref", "host", "key_host", "digest") if value.get(k)
    }
    return Judge(str(value.get("id") or ""), value["use"], str(value.get("where") or "the judge"), **text)


# --- the host process ------------------------------------------------------------------------------------


class NodeHost:
    """``node assertions/judges.cjs --serve``: JSON lines over its stdin and stdout, one request at a time.

    Started on first use by :func:`node_host`; it ends when this process closes its stdin (at exit).
    """

    def __init__(self, node: str, script: Path, promptfoo: Path | None = None) -> None:
        self.environment = dict(os.environ)  # what it was started with: its keys and switches
        self.cwd = os.getcwd()  # where a provider's relative paths are read from
        self._lock = threading.Lock()
        self._next = 1
        self._buffer = b""
        given = ["--promptfoo", str(promptfoo)] if promptfoo is not None else []
        try:
            self._process = subprocess.Popen(
                [node, str(script), "--serve", *given],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=os.getcwd(),
                env={**os.environ, "NODE_NO_WARNINGS": "1"},  # Node's own notices are not the user's business
            )
        except OSError as exc:
            raise _host_error(f"cannot start {node} {script}: {exc}") from None
        try:
            ready = self._read(None, _READY_TIMEOUT_S)
        except OSError as exc:
            self.close()
            raise _host_error(f"{script} did not start: {exc}") from None
        if not isinstance(ready, dict) or not ready.get("ready"):
            self.close()
            raise _host_error(f"{script} did not start (no ready line)")

    def resolve(
        self,
        call: str,
        context: Mapping[str, Any],
        override: Mapping[str, Any] | None,
        *,
        check: bool = False,
        received: Mapping[str, Any] | None = None,
    ) -> Mapping[str, Any]:
        """The judges of ``call`` for ``context`` as ``judges.cjs`` resolves them (``{judge, cheap}`` or
        ``{error}``); ``received``: the row comes from a results file (:func:`received_rows`).

        Raises:
            JudgeError: The host process failed or did not answer.
        """
        request = {"call": call, "context": _plain(context), "override": dict(override) if override else None,
                   "check": check, "received": dict(received) if received else None}  # fmt: skip
        try:
            reply = self._request({"resolve": request}, _RESOLVE_TIMEOUT_S)
        except OSError as exc:
            raise _host_error(f"the judge could not be resolved: {exc}") from None
        if "judges" not in reply:
            raise _host_error(f"the judge could not be resolved: {reply.get('error') or 'no answer'}")
        judges: Mapping[str, Any] = reply["judges"]
        return judges

    def ask(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        """One model call (:class:`HostChannel`); the reply's own deadline plus a margin bounds the wait."""
        deadline = request.get("deadline_s")
        seconds = (
            float(deadline) if isinstance(deadline, int | float) and deadline > 0 else MODEL_CALL_DEFAULT_S
        )
        return self._request({"model": dict(request)}, seconds + _MARGIN_S)

    def close(self) -> None:
        """End the host process (its stdin closes; killed if it does not leave)."""
        with contextlib.suppress(OSError):
            if self._process.stdin:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _request(self, body: Mapping[str, Any], seconds: float) -> Mapping[str, Any]:
        with self._lock:
            rid = self._next
            self._next += 1
            line = json.dumps({"id": rid, **body}, ensure_ascii=False, default=str) + "\n"
            stdin = self._process.stdin
            if stdin is None or self._process.poll() is not None:
                raise OSError("the judges host process has ended")
            stdin.write(line.encode("utf-8", "surrogatepass"))
            stdin.flush()
            reply = self._read(rid, seconds)
            return reply

    def _read(self, rid: int | None, seconds: float) -> dict[str, Any]:
        """The next line answering ``rid`` (``None``: the ready line), within ``seconds``."""
        stdout = self._process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        ends = time.monotonic() + seconds
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and (rid is None or message.get("id") == rid):
                    return message
            left = ends - time.monotonic()
            if left <= 0:
                self._process.kill()
                raise OSError(f"no answer within {seconds:.0f} s (the host process was stopped)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise OSError(f"the host process ended (status {self._process.poll()})")
            self._buffer += chunk


def _plain(value: Any) -> Any:
    """``value`` as JSON would carry it (promptfoo's context can hold what JSON cannot)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _host_error(message: str) -> JudgeError:
    return JudgeError(message, provider="promptfoo", model="assertions/judges.cjs", status=None, attempts=0)


_node_lock = threading.Lock()
_node_host: tuple[int, NodeHost] | None = None


def node_host() -> NodeHost:
    """This process's host process, started on first use (a forked child starts its own, and a changed
    environment — another key or switch — or working directory a new one).

    Raises:
        JudgeError: No ``node`` found, or the host process did not start.
    """
    global _node_host
    with _node_lock:
        if _node_host is not None and _node_host[0] == os.getpid():
            if _node_host[1].environment == os.environ and _node_host[1].cwd == os.getcwd():
                return _node_host[1]
            _node_host[1].close()
        from grounding_eval.resources import pack_root

        script = pack_root() / "assertions" / "judges.cjs"
        host = NodeHost(_node(), script, _promptfoo())
        _node_host = (os.getpid(), host)
        atexit.register(_close_if_mine, os.getpid(), host)
        return host


def _close_if_mine(pid: int, host: NodeHost) -> None:
    if os.getpid() == pid:
        host.close()


def _node() -> str:
    """The ``node`` to run: ``$GROUNDING_EVAL_NODE``, else the pack's pinned one (its own
    ``node_modules/node``, as ``npx promptfoo`` runs it), else ``node`` on ``PATH``.

    Never the current folder's: a study folder you received may ship its own ``node_modules/.bin/node``
    (or a relative ``PATH`` entry may name one), and the host holds your keys
    (docs/explanation/security.md, "A study you received")."""
    given = os.environ.get(NODE_ENV, "").strip()
    if given:
        return given
    from grounding_eval.resources import pack_root

    for base in (pack_root(), pack_root().parent):
        for candidate in (
            base / "node_modules" / "node" / "bin" / "node",
            base / "node_modules" / ".bin" / "node",
        ):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    absolute = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and os.path.isabs(d)]
    found = shutil.which("node", path=os.pathsep.join(absolute))
    if found is None:
        raise _host_error(
            f"no Node.js to reach promptfoo's providers: install the pack's node_modules (npm install), put "
            f"node on PATH, or set {NODE_ENV}"
        )
    return found


def _promptfoo() -> Path | None:
    """The promptfoo package the host should load: ``$GROUNDING_EVAL_PROMPTFOO``, else the one whose
    Python wrapper runs this process (a ``type: python`` entry inside ``promptfoo eval``: the promptfoo
    the user is running). ``None``: the pack's own, which ``judges.cjs`` finds beside itself."""
    given = os.environ.get(PROMPTFOO_ENV, "").strip()
    if given:
        return Path(given).resolve()
    main = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if main is not None and main.name in ("wrapper.py", "persistent_wrapper.py"):
        for folder in main.parents[:4]:
            try:
                package = json.loads((folder / "package.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(package, dict) and package.get("name") == "promptfoo":
                return folder
    return None


# --- the judge client ----------------------------------------------------------------------------------


class HostJudgeClient:
    """A live judge promptfoo calls for us (see the module docstring).

    Args:
        judge: The judge, as resolved.
        cache_dir: Where parsed replies are cached; ``None`` for no cache.
        deadline_s: The most one model call may take, the provider's own retries included.
    """

    def __init__(self, judge: Judge, *, cache_dir: Path | None, deadline_s: float) -> None:
        self.judge = judge
        self.provider_id = judge.id
        self.model = judge.id
        self.host = judge.host
        self._deadline = float(deadline_s)
        self._cache = ReplyCache(cache_dir) if cache_dir is not None else None
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"HostJudgeClient({self.provider_id!r}, host={self.host!r})"

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        fixture_key: str | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> JudgeReply:
        """Return the model's reply, from the pack's cache if this exact request was answered and kept.

        Raises:
            JudgeError: The host could not be asked, or the provider failed (its error, scrubbed, in
                one line).
        """
        del fixture_key  # a live model needs none
        started = time.perf_counter()
        system = system or None
        fields = {"transport": "promptfoo", "provider": self.provider_id, "config_sha256": self.judge.digest,
                  "system": system, "prompt": prompt}  # fmt: skip
        if self._cache is not None:
            hit = self._cache.get(fields)
            if hit is not None:
                if accept is None or accept(hit.text):
                    usage = Usage.from_promptfoo((hit.raw or {}).get("token_usage"))
                    cached = usage.as_cached() if usage is not None else None  # counts unknown: None
                    return self._reply(hit.text, started, cached=True, usage=cached)
                self._cache.discard(fields)
        request = {"ref": self.judge.ref, "prompt": prompt, "system": system, "deadline_s": self._deadline}
        try:
            channel = current_host() or node_host()
            answer = channel.ask(request)
        except OSError as exc:
            raise self._error(f"promptfoo could not be asked: {exc}") from None
        if "error" in answer or not isinstance(answer.get("output"), str):
            raise self._error(str(answer.get("error") or "the provider returned no text"))
        text = answer["output"]
        usage = Usage.from_promptfoo(answer.get("token_usage"))
        cost = answer.get("cost")
        cost = float(cost) if isinstance(cost, int | float) and math.isfinite(cost) and cost >= 0 else None
        if self._cache is not None and (accept is None or accept(text)):
            raw = {"token_usage": dataclasses.asdict(usage) if usage else None, "cost": cost}
            self._cache.put(fields, text=text, raw=raw, request_id=None)
        return self._reply(text, started, cached=False, usage=usage, cost=cost, attempts=1)

    def _reply(
        self, text: str, started: float, *, cached: bool, usage: Usage | None, cost: float | None = None,
        attempts: int = 0,
    ) -> JudgeReply:  # fmt: skip
        return JudgeReply(
            text=text,
            provider=self.provider_id,
            model=self.model,
            cached=cached,
            attempts=attempts,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            raw=None,
            request_id=None,
            usage=usage,
            cost=cost,
        )

    def _error(self, message: str) -> JudgeError:
        return JudgeError(message, provider=self.provider_id, model=self.model, status=None, attempts=1)
