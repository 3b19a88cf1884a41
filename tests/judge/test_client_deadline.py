"""The judge HTTP client's overall deadline per attempt, against hostile servers on 127.0.0.1.

Each server (``tests/golden/judge_deadline_servers.yaml``) keeps a per-read timeout from ever firing or
fires it late: a body trickled a byte at a time, headers trickled a line at a time, a server that
accepts and never answers. Every call must end within timeout × attempts + backoff + a small margin,
with a ``JudgeError`` that names the deadline, and the promptfoo judge assertion must turn it into an
unscored row. Real sockets, real threads; nothing mocked.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.files import read_yaml
from grounding_eval.judge.client import JudgeError, make_client, worst_case_seconds
from grounding_eval.promptfoo.judge_assertion import judge_assertion
from tests.judge.conftest import wire_cases
from tests.outcomes import unscored_reason

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "judge_deadline_servers.yaml"
CASES: list[dict[str, Any]] = read_yaml(GOLDEN)["cases"]
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 1.0
MARGIN = 1.5  # first use imports requests; a loaded 2-core machine; the old client took 25-144 s here
FAST = {"backoff_base": 0.01, "backoff_max": 0.05}


class HostileServer:
    """A TCP server on 127.0.0.1 that reads each request, then plays one behaviour until told to stop."""

    def __init__(self, behaviour: str, body: bytes, every: float = 0.25) -> None:
        self.behaviour = behaviour
        self.body = body
        self.every = every  # seconds between two trickled pieces
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                self._read_request(conn)
                self._play(conn)
            except OSError:
                return  # the client went away (its deadline shut the connection): what is tested

    def _read_request(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        while len(rest) < length:
            rest += conn.recv(65536)

    def _play(self, conn: socket.socket) -> None:
        def drip(chunks: Iterator[bytes], every: float) -> None:
            for chunk in chunks:
                if self._stop.wait(every):
                    return
                conn.sendall(chunk)

        if self.behaviour == "trickle_body":
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(self.body)}\r\n\r\n"
            conn.sendall(head.encode())
            drip((self.body[i : i + 1] for i in range(len(self.body))), self.every)  # 0.25: 4 bytes a second
        elif self.behaviour == "trickle_headers":
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            drip((f"X-Slow-{n}: {n}\r\n".encode() for n in range(10_000)), self.every)
        elif self.behaviour == "status_then_silent":
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            self._stop.wait(60)
        elif self.behaviour == "silent":
            self._stop.wait(60)
        else:
            raise AssertionError(f"unknown behaviour {self.behaviour!r} in {GOLDEN.name}")


def _openai(url: str, **options: Any) -> Any:
    case = wire_cases(url)["openai"]
    return make_client(
        case.provider_id, env=case.env, **{"base_url": case.base_url, **FAST, "timeout": TIMEOUT, **options}
    )


def _body() -> bytes:
    return json.dumps(wire_cases("http://x")["openai"].ok("a valid reply, if it ever arrived")).encode()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
class TestOverallDeadline:
    def test_one_attempt_ends_at_its_deadline(self, case: dict[str, Any]) -> None:
        with HostileServer(case["behaviour"], _body()) as server:
            started = time.monotonic()
            with pytest.raises(JudgeError) as info:
                _openai(server.url, max_retries=0).complete("grade this")
            took = time.monotonic() - started
        assert f"{case['expected']} (after 1 attempt)" in str(info.value), case["note"]
        assert f"no complete response within {TIMEOUT:g} s" in str(info.value)
        assert info.value.status is None and info.value.attempts == 1
        assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN, f"{case['id']}: {took:.2f} s"

    def test_retries_are_bounded_by_attempts_and_backoff(self, case: dict[str, Any]) -> None:
        """The deadline is per attempt: two attempts and one wait, each attempt a fresh connection."""
        with HostileServer(case["behaviour"], _body()) as server:
            started = time.monotonic()
            with pytest.raises(JudgeError, match=r"\(after 2 attempts\)"):
                _openai(server.url, max_retries=1).complete("grade this")
            took = time.monotonic() - started
            connections = server.connections
        bound = worst_case_seconds(timeout=TIMEOUT, max_retries=1, backoff_max=FAST["backoff_max"])
        assert 2 * TIMEOUT * 0.9 <= took < bound + MARGIN, f"{case['id']}: {took:.2f} s"
        assert connections == 2


class TestWorstCase:
    def test_the_documented_bound(self) -> None:
        """(max_retries + 1) attempts × timeout + max_retries waits of at most backoff_max."""
        assert worst_case_seconds(timeout=120, max_retries=4, backoff_max=30) == 720
        assert worst_case_seconds(timeout=3, max_retries=0, backoff_max=30) == 3


def test_a_reply_trickled_inside_the_deadline_is_read_whole() -> None:
    """Control: the same trickle, fast enough to end inside the deadline, is a reply, not an error."""
    body = json.dumps(wire_cases("http://x")["openai"].ok("fine")).encode()
    with HostileServer("trickle_body", body, every=TIMEOUT / 4 / len(body)) as server:
        reply = _openai(server.url, max_retries=0).complete("grade this")
    assert (reply.text, reply.attempts) == ("fine", 1)


def test_the_judge_assertion_turns_the_deadline_into_an_unscored_row(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with HostileServer("trickle_body", _body()) as server:
        case = wire_cases(server.url)["openai"]
        monkeypatch.setenv("OPENAI_API_KEY", case.key)
        context = {
            "prompt": "C0: Who can help me?",
            "vars": {"query_id": "t-1", "jurisdiction": "IL", "question": "Who can help me?"},
            "test": {"metadata": {"rubric": "v4"}},
            "config": {
                "rubric": "v4",
                "provider": case.provider_id,
                "base_url": f"{server.url}/v1",
                "timeout": TIMEOUT,
                "max_retries": 0,
                "cache_dir": str(tmp_path / "cache"),
            },
        }
        started = time.monotonic()
        result = judge_assertion("Call 211.", context, pack_root=REPO)
        took = time.monotonic() - started
    assert result["pass"] is False and result["score"] == 0
    assert unscored_reason(result).startswith("judge call failed (openai:chat:gpt-test-1)")
    assert "deadline passed (after 1 attempt)" in result["reason"]
    assert took < TIMEOUT + MARGIN
