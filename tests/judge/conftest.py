"""A scriptable judge API on 127.0.0.1, and one case per wire format, for the judge client's tests.

The server answers each request with the next scripted response (status, headers, JSON or raw bytes,
delay) and records every request it saw, so a test can check both what the client sent and how it copes
with what came back. Nothing here leaves the loopback interface.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

# Fake keys: distinctive so a test can grep for them, and obviously not real.
FAKE_KEYS = {
    "anthropic": "sk-ant-test-KEY-0123456789abcdef",
    "openai": "sk-test-OPENAI-KEY-fedcba9876543210",
    "google": "AIza-test-GOOGLE-KEY-00112233",
}


@dataclass(frozen=True)
class Scripted:
    """One response the server will give: a JSON ``body`` (or ``raw`` bytes), after ``delay`` seconds.

    With ``chunks`` > 0 the body is sent ``chunks`` times over, chunked, with no ``Content-Length``,
    and the server stops as soon as the client hangs up (:attr:`JudgeServer.sent` says how far it got).
    """

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunks: int = 0


@dataclass(frozen=True)
class Seen:
    """One request the server received (header names lower-cased, body parsed as JSON when it is)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    at: float


class JudgeServer:
    """A ThreadingHTTPServer on 127.0.0.1 that replays a per-test script and records requests."""

    def __init__(self) -> None:
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self.requests: list[Seen] = []
        self.sent: list[int] = []  # body bytes written per response (less than scripted: client hung up)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs: the client's session reuses it
            # Headers and body go out as two writes; with Nagle on, the second waits ~40 ms for the
            # client's delayed ACK on every response.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    raw,
                    time.monotonic(),
                )
                reply = server._next(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode("utf-8")
                written = 0
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if reply.chunks:
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        for _ in range(reply.chunks):
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                            written += len(data)
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        written = len(data)
                except OSError:  # the client gave up (read timeout, body too large) and hung up
                    self.close_connection = True
                with server._lock:
                    server.sent.append(written)

            do_GET = do_POST

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        # A short poll interval: shutdown() waits for the next poll, and every test stops a server.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.005,), daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *replies: Scripted) -> None:
        """Queue responses, answered in order, one per request."""
        with self._lock:
            self._script.extend(replies)

    @property
    def count(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    def _next(self, seen: Seen) -> Scripted:
        with self._lock:
            self.requests.append(seen)
            if self._script:
                return self._script.popleft()
        # 418 is not retried: a test that under-scripts fails at once with a clear reason.
        return Scripted(418, {"error": "judge test server: nothing scripted for this request"})

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    """A fresh scriptable judge server for one test."""
    server = JudgeServer()
    server.start()
    yield server
    server.stop()


def _anthropic_ok(text: str) -> dict[str, Any]:
    return {
        "id": "msg_test_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _openai_ok(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test-01",
        "object": "chat.completion",
        "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _google_ok(text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        ],
        # A thinking model's: totalTokenCount holds the thoughts, which candidatesTokenCount leaves out.
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "thoughtsTokenCount": 3,
            "totalTokenCount": 18,
        },
        "modelVersion": "gemini-test",
        "responseId": "resp-test-01",
    }


@dataclass(frozen=True)
class WireCase:
    """One provider family pointed at the test server: its id, key env, base URL, expected request and a
    success body.

    The server is reached through ``base_url`` (the judge's own setting), never a ``*_BASE_URL`` variable:
    the client reads none.
    """

    kind: str
    provider_id: str
    model: str
    env: dict[str, str]
    base_url: str
    path: str
    key_header: str
    key_value: str
    ok: Callable[[str], dict[str, Any]]
    request_id: str
    tokens: tuple[int, int, int]  # (prompt, completion, total) as the ``ok`` body reports them

    @property
    def key(self) -> str:
        return FAKE_KEYS[self.kind]


def wire_cases(server_url: str) -> dict[str, WireCase]:
    """The three HTTP wire formats, each aimed at ``server_url``."""
    k = FAKE_KEYS
    return {
        "anthropic": WireCase(
            kind="anthropic",
            provider_id="anthropic:messages:claude-test-1",
            model="claude-test-1",
            env={"ANTHROPIC_API_KEY": k["anthropic"]},
            base_url=server_url,
            path="/v1/messages",
            key_header="x-api-key",
            key_value=k["anthropic"],
            ok=_anthropic_ok,
            request_id="msg_test_01",
            tokens=(10, 5, 15),  # Anthropic sends no total: the sum
        ),
        "openai": WireCase(
            kind="openai",
            provider_id="openai:chat:gpt-test-1",
            model="gpt-test-1",
            env={"OPENAI_API_KEY": k["openai"]},
            base_url=f"{server_url}/v1",
            path="/v1/chat/completions",
            key_header="authorization",
            key_value=f"Bearer {k['openai']}",
            ok=_openai_ok,
            request_id="chatcmpl-test-01",
            tokens=(10, 5, 15),
        ),
        "google": WireCase(
            kind="google",
            provider_id="google:gemini-test-1",
            model="gemini-test-1",
            env={"GEMINI_API_KEY": k["google"]},
            base_url=server_url,
            path="/v1beta/models/gemini-test-1:generateContent",
            key_header="x-goog-api-key",
            key_value=k["google"],
            ok=_google_ok,
            request_id="resp-test-01",
            tokens=(10, 5, 18),
        ),
    }


@pytest.fixture(params=["anthropic", "openai", "google"])
def wire_case(request: pytest.FixtureRequest, judge_server: JudgeServer) -> WireCase:
    """Each HTTP wire format in turn, aimed at this test's judge server."""
    return wire_cases(judge_server.url)[request.param]
