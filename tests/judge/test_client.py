"""The judge client against a real HTTP server on 127.0.0.1 speaking each provider's wire format.

Every HTTP behaviour is checked for all three formats (Anthropic, OpenAI-compatible, Gemini): the exact
request, retries on 429/5xx/timeouts/malformed replies, immediate failure on other 4xx, and that the API
key never leaks into what the client returns. Configuration errors are raised when the client is built.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import os
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, quote_plus

import pytest

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.judge._wire import WIRES
from grounding_eval.judge.client import (
    MAX_RESPONSE_BYTES,
    SUPPORTED_FORMS,
    HttpJudgeClient,
    JudgeConfigError,
    JudgeError,
    JudgeReply,
    ReplayJudgeClient,
    Usage,
    answer_sha256,
    backoff_delay,
    make_client,
    retry_after_seconds,
)
from tests.judge.conftest import JudgeServer, Scripted, WireCase, wire_cases

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "judge_client"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01}  # retries in milliseconds, not seconds
PROMPT = "Grade this answer against the rubric.\n<answer>Call 211.</answer>"
SYSTEM = "You are a strict grader. Reply with JSON only."


def _client(case: WireCase, **options: Any) -> Any:
    return make_client(case.provider_id, env=case.env, **{"base_url": case.base_url, **FAST, **options})


def _expected_body(case: WireCase, system: str | None, *, temperature: float = 0.0) -> dict[str, Any]:
    """The request body, written out by hand (its shape against the providers' published examples:
    test_client_published.py)."""
    if case.kind == "anthropic":
        body: dict[str, Any] = {"model": case.model, "max_tokens": 4096, "temperature": temperature}
        if system is not None:
            body["system"] = system
        body["messages"] = [{"role": "user", "content": PROMPT}]
        return body
    if case.kind == "openai":
        system_msg = [{"role": "system", "content": system}] if system is not None else []
        return {
            "model": case.model,
            "temperature": temperature,
            "max_tokens": 4096,
            "messages": [*system_msg, {"role": "user", "content": PROMPT}],
        }
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    body["generationConfig"] = {"temperature": temperature, "maxOutputTokens": 4096}
    return body


class TestWireFormats:
    """Each provider's request and reply, exactly as its API documents them."""

    def test_success_sends_the_documented_request(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """Path, key header, version header and body (temperature 0, system in its place) are exact."""
        judge_server.script(Scripted(body=wire_case.ok('{"overall": "pass"}')))
        reply = _client(wire_case).complete(PROMPT, system=SYSTEM)

        assert reply == JudgeReply(
            text='{"overall": "pass"}',
            provider=wire_case.kind,
            model=wire_case.model,
            cached=False,
            attempts=1,
            latency_ms=reply.latency_ms,
            raw=wire_case.ok('{"overall": "pass"}'),
            request_id=wire_case.request_id,
            usage=Usage(*wire_case.tokens),
            cost=None,
        )
        assert reply.latency_ms > 0
        [seen] = judge_server.requests
        assert (seen.method, seen.path) == ("POST", wire_case.path)
        assert seen.headers[wire_case.key_header] == wire_case.key_value
        assert seen.headers["content-type"] == "application/json"
        assert seen.headers["user-agent"].startswith("grounding-eval-judge/")
        assert seen.body == _expected_body(wire_case, SYSTEM)
        # The key travels in its own header only: not in the URL, and not in another family's header.
        other_key_headers = {"x-api-key", "authorization", "x-goog-api-key"} - {wire_case.key_header}
        assert not other_key_headers & set(seen.headers)
        assert wire_case.key not in seen.path
        if wire_case.kind == "anthropic":
            assert seen.headers["anthropic-version"] == "2023-06-01"

    def test_without_system_prompt_no_system_field_is_sent(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """No system prompt (or an empty one) sends no system field or message at all."""
        judge_server.script(Scripted(body=wire_case.ok("a")), Scripted(body=wire_case.ok("b")))
        client = _client(wire_case)
        client.complete(PROMPT)
        client.complete(PROMPT, system="")
        assert [r.body for r in judge_server.requests] == [_expected_body(wire_case, None)] * 2

    def test_temperature_and_max_tokens_are_sent(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """Non-default options reach the body under each provider's own field names."""
        judge_server.script(Scripted(body=wire_case.ok("x")))
        _client(wire_case, temperature=0.5, max_tokens=256).complete(PROMPT)
        body = judge_server.requests[0].body
        if wire_case.kind == "google":
            assert body["generationConfig"] == {"temperature": 0.5, "maxOutputTokens": 256}
        else:
            assert (body["temperature"], body["max_tokens"]) == (0.5, 256)

    def test_request_id_header_wins_over_the_body_id(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """The provider's request-id header (Anthropic, OpenAI) is the id kept; Gemini's is responseId."""
        header = {"anthropic": "request-id", "openai": "x-request-id", "google": "x-request-id"}[
            wire_case.kind
        ]
        judge_server.script(Scripted(body=wire_case.ok("x"), headers={header: "req_from_header"}))
        reply = _client(wire_case).complete(PROMPT)
        expected = "resp-test-01" if wire_case.kind == "google" else "req_from_header"
        assert reply.request_id == expected

    def test_unicode_round_trips(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Legal text (section signs, curly quotes, Spanish) survives both directions."""
        text = "§ 1983 — “aviso de desalojo”: sí ✓"
        judge_server.script(Scripted(body=wire_case.ok(text)))
        assert _client(wire_case).complete(text).text == text
        assert text in json.dumps(judge_server.requests[0].body, ensure_ascii=False)


class TestRetries:
    """Rate limits, server errors, timeouts and malformed replies are retried; other 4xx are not."""

    def test_429_then_success_honours_retry_after(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """Two attempts, and the second waits the server's Retry-After, not the (tiny) backoff."""
        judge_server.script(
            Scripted(429, {"error": {"type": "rate_limit_error"}}, headers={"Retry-After": "0.25"}),
            Scripted(body=wire_case.ok("ok")),
        )
        reply = _client(wire_case, backoff_max=5.0).complete(PROMPT)
        assert (reply.text, reply.attempts) == ("ok", 2)
        first, second = judge_server.requests
        assert second.at - first.at >= 0.24
        assert first.body == second.body

    def test_retry_after_is_capped_at_backoff_max(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """A server asking for 30 s gets backoff_max instead, so one worker cannot stall a run."""
        judge_server.script(
            Scripted(429, {}, headers={"Retry-After": "30"}), Scripted(body=wire_case.ok("ok"))
        )
        reply = _client(wire_case, backoff_max=0.02).complete(PROMPT)
        assert reply.attempts == 2
        assert judge_server.requests[1].at - judge_server.requests[0].at < 2.0

    @pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 529])
    def test_retryable_statuses_are_retried(
        self, wire_case: WireCase, judge_server: JudgeServer, status: int
    ) -> None:
        """Each retryable status (529 is Anthropic's "overloaded") is followed by another attempt."""
        judge_server.script(Scripted(status, {"error": "busy"}), Scripted(body=wire_case.ok("ok")))
        assert _client(wire_case).complete(PROMPT).attempts == 2

    def test_500_until_retries_run_out(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Five 500s with max_retries=4 → JudgeError naming provider, model, status and the body."""
        judge_server.script(*[Scripted(500, {"error": {"message": "internal boom"}})] * 5)
        with pytest.raises(JudgeError) as info:
            _client(wire_case, max_retries=4).complete(PROMPT)
        message = str(info.value)
        assert judge_server.count == 5
        assert f"provider {wire_case.kind}, model {wire_case.model}" in message
        assert "HTTP 500 (after 5 attempts)" in message
        assert "internal boom" in message
        assert "\n" not in message
        assert (info.value.status, info.value.attempts) == (500, 5)

    def test_max_retries_zero_means_one_attempt(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """max_retries counts retries, not attempts."""
        judge_server.script(Scripted(503, {}))
        with pytest.raises(JudgeError, match=r"HTTP 503 \(after 1 attempt\)"):
            _client(wire_case, max_retries=0).complete(PROMPT)
        assert judge_server.count == 1

    def test_read_timeout_then_success(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """A reply slower than the timeout is abandoned and asked again."""
        judge_server.script(Scripted(body=wire_case.ok("late"), delay=0.6), Scripted(body=wire_case.ok("ok")))
        reply = _client(wire_case, timeout=0.2).complete(PROMPT)
        assert (reply.text, reply.attempts) == ("ok", 2)
        assert judge_server.count == 2

    def test_timeouts_until_retries_run_out(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Only timeouts → JudgeError naming the attempt's overall deadline."""
        judge_server.script(*[Scripted(body=wire_case.ok("late"), delay=0.5)] * 2)
        with pytest.raises(
            JudgeError, match=r"deadline passed \(after 2 attempts\): no complete response within 0.15 s"
        ):
            _client(wire_case, timeout=0.15, max_retries=1).complete(PROMPT)

    @pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
    def test_client_errors_fail_at_once(
        self, wire_case: WireCase, judge_server: JudgeServer, status: int
    ) -> None:
        """400/401/403/404 mean the request itself is wrong: one attempt, then JudgeError."""
        judge_server.script(Scripted(status, {"error": {"message": "invalid x-api-key"}}))
        with pytest.raises(JudgeError) as info:
            _client(wire_case).complete(PROMPT)
        assert judge_server.count == 1
        assert f"HTTP {status} (not retried)" in str(info.value)
        assert "invalid x-api-key" in str(info.value)
        assert (info.value.status, info.value.attempts) == (status, 1)

    def test_redirect_is_not_followed(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """A redirected POST would turn into a GET or carry the key elsewhere: it is an error."""
        judge_server.script(Scripted(307, {}, headers={"Location": "http://127.0.0.1:9/elsewhere"}))
        with pytest.raises(JudgeError, match=r"HTTP 307 \(not retried\)"):
            _client(wire_case).complete(PROMPT)
        assert judge_server.count == 1

    @pytest.mark.parametrize(
        "bad",
        [
            Scripted(raw=b'{"content": [{"type": "text", "text": "tru'),
            Scripted(raw=b"<html>Bad gateway</html>"),
            Scripted(raw=b"\xff\xfe not utf-8"),
            Scripted(raw=b""),
            Scripted(body=[1, 2, 3]),
            Scripted(body={}),
            Scripted(body={"content": [], "choices": [], "candidates": []}),
            Scripted(body={"error": {"message": "200 but an error object"}}),
        ],
        ids=[
            "truncated",
            "html",
            "not-utf8",
            "empty",
            "json-list",
            "empty-object",
            "no-text",
            "error-object",
        ],
    )
    def test_malformed_twice_then_success(
        self, wire_case: WireCase, judge_server: JudgeServer, bad: Scripted
    ) -> None:
        """A 200 without reply text counts as a failed attempt and is retried."""
        judge_server.script(bad, bad, Scripted(body=wire_case.ok("ok")))
        reply = _client(wire_case).complete(PROMPT)
        assert (reply.text, reply.attempts) == ("ok", 3)

    def test_malformed_until_retries_run_out(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Malformed replies are not retried forever: JudgeError with the reason and a body excerpt."""
        judge_server.script(*[Scripted(raw=b"not json at all")] * 3)
        with pytest.raises(JudgeError) as info:
            _client(wire_case, max_retries=2).complete(PROMPT)
        message = str(info.value)
        assert "malformed reply (after 3 attempts)" in message
        assert "not json at all" in message
        assert info.value.status == 200
        assert judge_server.count == 3

    def test_long_error_body_is_cut_to_an_excerpt(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """The message carries the start of the body, not all of it, on one line."""
        judge_server.script(Scripted(400, raw=("bad request\n" + "x" * 5000).encode()))
        with pytest.raises(JudgeError) as info:
            _client(wire_case).complete(PROMPT)
        assert len(str(info.value)) < 500
        assert str(info.value).endswith("…")
        assert "\n" not in str(info.value)

    def test_connection_refused_is_retried_then_fails(self, wire_case: WireCase) -> None:
        """Nobody listening → connection errors, retried, then JudgeError naming the exception."""
        with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        client = make_client(
            wire_case.provider_id,
            env=wire_case.env,
            base_url=f"http://127.0.0.1:{port}",
            max_retries=2,
            **FAST,
        )
        with pytest.raises(JudgeError, match=r"ConnectionError \(after 3 attempts\)") as info:
            client.complete(PROMPT, fixture_key="ignored")
        assert (info.value.status, info.value.attempts) == (None, 3)


class TestBackoffPolicy:
    """The wait between attempts, as pure functions and as the client applies it."""

    @pytest.mark.parametrize(
        ("attempt", "rand", "retry_after", "expected"),
        [
            (1, 0.0, None, 0.5),  # equal jitter: half the step at least ...
            (1, 0.999999, None, 1.0),  # ... the full step at most
            (2, 0.0, None, 1.0),
            (3, 0.0, None, 2.0),
            (6, 0.0, None, 10.0),  # 2**5 = 32 > cap 20: the step is capped
            (100, 0.0, None, 10.0),  # no overflow on absurd attempt counts
            (1, 0.5, 3.0, 3.0),  # Retry-After is obeyed exactly, no jitter
            (1, 0.5, 60.0, 20.0),  # ... but capped
            (1, 0.5, 0.0, 0.0),
        ],
    )
    def test_backoff_delay(
        self, attempt: int, rand: float, retry_after: float | None, expected: float
    ) -> None:
        """Doubling from base, capped, jittered; Retry-After obeyed up to the cap."""
        delay = backoff_delay(attempt, base=1.0, cap=20.0, retry_after=retry_after, rand=rand)
        assert math.isclose(delay, expected, rel_tol=1e-5)

    @pytest.mark.parametrize(
        ("headers", "expected"),
        [
            ({"retry-after": "7"}, 7.0),
            ({"retry-after": "0.5"}, 0.5),
            ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # OpenAI's finer header wins
            ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),  # HTTP-date: fall back to backoff
            ({"retry-after": "-3"}, None),
            ({"retry-after": "nan"}, None),
            ({}, None),
        ],
    )
    def test_retry_after_seconds(self, headers: dict[str, str], expected: float | None) -> None:
        """Seconds (or OpenAI's milliseconds); anything else is ignored."""
        assert retry_after_seconds(headers) == expected

    def test_client_waits_double_each_time(self, judge_server: JudgeServer) -> None:
        """Four retries after five 503s wait 1, 2, 4, 8 s (rand fixed at 1) — recorded, not slept."""
        judge_server.script(*[Scripted(503, {})] * 5)
        waits: list[float] = []
        client = HttpJudgeClient(
            "openai:chat:m",
            WIRES["openai"],
            "m",
            api_key="k",
            base_url=judge_server.url,
            temperature=0.0,
            max_tokens=10,
            timeout=5.0,
            max_retries=4,
            backoff_base=1.0,
            backoff_max=30.0,
            cache=None,
            sleep=waits.append,
            rand=lambda: 0.999999,
        )
        with pytest.raises(JudgeError):
            client.complete("p")
        assert [round(w, 3) for w in waits] == [1.0, 2.0, 4.0, 8.0]


class TestSecrets:
    """The API key is sent in its header and nowhere else the caller can see."""

    def test_key_echoed_by_the_server_is_scrubbed(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """A (misbehaving) server that echoes the key does not get it into text or raw."""
        judge_server.script(Scripted(body=wire_case.ok(f"your key is {wire_case.key}")))
        reply = _client(wire_case).complete(PROMPT)
        assert wire_case.key not in reply.text
        assert wire_case.key not in repr(reply.raw)
        assert "[REDACTED]" in reply.text

    def test_key_never_in_error_messages(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Neither a 4xx body nor a retried 5xx body echoing the key leaks it into JudgeError."""
        judge_server.script(Scripted(401, {"error": f"bad key {wire_case.key}"}))
        with pytest.raises(JudgeError) as info:
            _client(wire_case).complete(PROMPT)
        assert wire_case.key not in str(info.value)
        judge_server.script(*[Scripted(500, raw=f"key={wire_case.key}".encode())] * 2)
        with pytest.raises(JudgeError) as info:
            _client(wire_case, max_retries=1).complete(PROMPT)
        assert wire_case.key not in str(info.value)
        # Where the excerpt is cut through the key, not even a prefix of it survives.
        judge_server.script(Scripted(400, raw=("x" * 290 + wire_case.key + "y" * 400).encode()))
        with pytest.raises(JudgeError) as info:
            _client(wire_case).complete(PROMPT)
        assert wire_case.key[:8] not in str(info.value)
        assert "[REDACTED]" in str(info.value)

    def test_key_not_in_repr(self, wire_case: WireCase) -> None:
        """A client printed in a log or a traceback does not show its key."""
        client = _client(wire_case)
        assert wire_case.key not in repr(client)


# A key with characters URL-encoding changes ("+", "/", "=", ":", " "), so every echoed form differs.
ODD_KEY = "sk-odd+Test/KEY=0123456789:abc def~XYZ"


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def _b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


ECHOED_FORMS: list[tuple[str, Callable[[str], str]]] = [
    ("verbatim", lambda k: k),
    ("url-quote", lambda k: quote(k)),
    ("url-quote-nothing-safe", lambda k: quote(k, safe="")),
    ("url-quote-plus", lambda k: quote_plus(k)),
    ("url-lowercase-hex", lambda k: _lower_hex(quote(k, safe=""))),
    ("base64", lambda k: _b64(k)),
    ("base64-unpadded", lambda k: _b64(k).rstrip("=")),
    ("base64-urlsafe", lambda k: base64.urlsafe_b64encode(k.encode()).decode()),
    ("base64-urlsafe-unpadded", lambda k: base64.urlsafe_b64encode(k.encode()).decode().rstrip("=")),
    ("basic-auth-offset-0", lambda k: "Basic " + _b64("ab:" + k)),
    ("basic-auth-offset-1", lambda k: "Basic " + _b64("u:" + k)),
    ("basic-auth-offset-2", lambda k: "Basic " + _b64("user:" + k)),
    ("base64-json-with-key-inside", lambda k: _b64(json.dumps({"api_key": k, "n": 1}))),
    ("short-dots", lambda k: f"{k[:5]}...{k[-4:]}"),
    ("short-ellipsis", lambda k: f"{k[:8]}…{k[-4:]}"),
    ("short-stars", lambda k: f"{k[:7]}{'*' * 24}{k[-4:]}"),
    ("short-prefix-only", lambda k: f"{k[:10]}…"),
]


class TestEchoedKeyForms:
    """The key is scrubbed however the server echoes it: URL-encoded, base64, shortened (issue 8)."""

    @pytest.mark.parametrize(("form"), [pytest.param(f, id=i) for i, f in ECHOED_FORMS])
    def test_reply_text_raw_and_cache(
        self, form: Callable[[str], str], judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """The echoed form is in neither the reply text, nor raw, nor the cache file."""
        case = wire_cases(judge_server.url)["openai"]
        echoed = form(ODD_KEY)
        judge_server.script(Scripted(body=case.ok(f"you sent: {echoed} (thanks)")))
        env = {**case.env, "OPENAI_API_KEY": ODD_KEY}
        client = make_client(case.provider_id, env=env, base_url=case.base_url, cache_dir=tmp_path, **FAST)
        reply = client.complete(PROMPT)
        assert judge_server.requests[0].headers["authorization"] == f"Bearer {ODD_KEY}"
        assert echoed not in reply.text and echoed not in json.dumps(reply.raw, ensure_ascii=False)
        assert reply.text.startswith("you sent: ") and "[REDACTED]" in reply.text
        on_disk = b"".join(f.read_bytes() for f in tmp_path.iterdir())
        assert echoed.encode() not in on_disk and b"[REDACTED]" in on_disk

    @pytest.mark.parametrize(("form"), [pytest.param(f, id=i) for i, f in ECHOED_FORMS])
    def test_error_message(self, form: Callable[[str], str], judge_server: JudgeServer) -> None:
        """A 401 body echoing the key in that form does not carry it into the JudgeError."""
        case = wire_cases(judge_server.url)["anthropic"]
        echoed = form(ODD_KEY)
        judge_server.script(Scripted(401, {"error": {"message": f"invalid x-api-key {echoed}"}}))
        env = {**case.env, "ANTHROPIC_API_KEY": ODD_KEY}
        with pytest.raises(JudgeError) as info:
            make_client(case.provider_id, env=env, base_url=case.base_url, **FAST).complete(PROMPT)
        assert echoed not in str(info.value)
        assert "[REDACTED]" in str(info.value)


class TestResponseSize:
    """A response body is read as a stream and abandoned past MAX_RESPONSE_BYTES (issue 8)."""

    @staticmethod
    def _body_of(case: WireCase, size: int) -> bytes:
        """A valid success body of exactly ``size`` bytes."""
        empty = len(json.dumps(case.ok("")).encode())
        return json.dumps(case.ok("x" * (size - empty))).encode()

    def test_body_at_the_limit_is_read(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """Exactly MAX_RESPONSE_BYTES bytes is a normal reply."""
        raw = self._body_of(wire_case, MAX_RESPONSE_BYTES)
        assert len(raw) == MAX_RESPONSE_BYTES
        judge_server.script(Scripted(raw=raw))
        reply = _client(wire_case).complete(PROMPT)
        assert set(reply.text) == {"x"}

    def test_body_over_the_limit_fails_unretried(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """One byte more and the call fails at once, naming the size, with one attempt."""
        judge_server.script(Scripted(raw=self._body_of(wire_case, MAX_RESPONSE_BYTES + 1)))
        with pytest.raises(JudgeError) as info:
            _client(wire_case).complete(PROMPT)
        message = str(info.value)
        assert "reply larger than 1 MB (not retried)" in message
        assert "declares 1,000,001 bytes, over the 1,000,000 read" in message
        assert info.value.attempts == 1 and info.value.status == 200
        assert judge_server.count == 1

    def test_endless_chunked_body_is_abandoned(self, judge_server: JudgeServer) -> None:
        """Without a Content-Length, reading stops after 1 MB and the connection is dropped."""
        case = wire_cases(judge_server.url)["openai"]
        chunk = b" " * 65_536
        judge_server.script(Scripted(raw=chunk, chunks=800))  # 52 MB, if anyone read it all
        with pytest.raises(JudgeError, match="stopped reading the response after 1,000,000 bytes"):
            _client(case).complete(PROMPT)
        for _ in range(200):
            if judge_server.sent:
                break
            time.sleep(0.01)
        assert judge_server.sent and judge_server.sent[0] < 800 * len(chunk)

    def test_compressed_body_counts_decompressed(self, judge_server: JudgeServer) -> None:
        """A gzip body of a few kilobytes that inflates past 1 MB is refused as it inflates."""
        case = wire_cases(judge_server.url)["openai"]
        raw = gzip.compress(json.dumps(case.ok("0" * 5_000_000)).encode())
        assert len(raw) < 100_000
        judge_server.script(Scripted(raw=raw, headers={"Content-Encoding": "gzip"}))
        with pytest.raises(JudgeError, match="reply larger than 1 MB"):
            _client(case).complete(PROMPT)

    def test_large_error_body_is_an_http_error(self, judge_server: JudgeServer) -> None:
        """A huge 500 body is read only as far as its message needs; the error is the HTTP status."""
        case = wire_cases(judge_server.url)["openai"]
        judge_server.script(Scripted(500, raw=b"overloaded " + b"z" * 5_000_000))
        with pytest.raises(JudgeError) as info:
            _client(case, max_retries=0).complete(PROMPT)
        assert "HTTP 500" in str(info.value) and "overloaded" in str(info.value)
        assert "larger than 1 MB" not in str(info.value)


class TestBuild:
    """make_client checks everything when the client is built, and opens nothing."""

    ALL_KEYS: ClassVar[dict[str, str]] = {
        "ANTHROPIC_API_KEY": "a",
        "OPENAI_API_KEY": "o",
        "GOOGLE_API_KEY": "g",
    }

    @pytest.mark.parametrize(
        "row", read_yaml(FIX / "provider_ids.yaml"), ids=lambda row: row["id"] or "<empty>"
    )
    def test_provider_ids(self, row: dict[str, str]) -> None:
        """Golden table: promptfoo-style ids → (kind, model), or the error naming the supported forms."""
        if "error" in row:
            with pytest.raises(JudgeConfigError) as info:
                make_client(row["id"], env=self.ALL_KEYS)
            assert row["error"] in str(info.value)
        else:
            client = make_client(row["id"], env=self.ALL_KEYS)
            assert isinstance(client, HttpJudgeClient)
            assert (client.provider_id, client.model) == (row["id"], row["model"])
            assert client._wire.kind == row["kind"]

    def test_unknown_provider_lists_every_supported_form(self) -> None:
        """The error teaches the accepted forms."""
        with pytest.raises(JudgeConfigError) as info:
            make_client("bedrock:claude", env=self.ALL_KEYS)
        for form in SUPPORTED_FORMS:
            assert form in str(info.value)

    @pytest.mark.parametrize(
        ("provider_id", "message"),
        [
            (
                "anthropic:messages:claude-sonnet-4-5-20250929",
                "ANTHROPIC_API_KEY is not set (needed by judge provider anthropic:messages:claude-sonnet-4-5-20250929)",
            ),
            ("openai:chat:gpt-4o", "OPENAI_API_KEY is not set (needed by judge provider openai:chat:gpt-4o)"),
            (
                "google:gemini-2.5-pro",
                "GOOGLE_API_KEY or GEMINI_API_KEY is not set (needed by judge provider google:gemini-2.5-pro)",
            ),
        ],
    )
    def test_missing_key_names_the_variable(self, provider_id: str, message: str) -> None:
        """No key (or an empty one) → JudgeConfigError at build time, naming the variable."""
        for env in (
            {},
            {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "GOOGLE_API_KEY": "", "GEMINI_API_KEY": ""},
        ):
            with pytest.raises(JudgeConfigError) as info:
                make_client(provider_id, env=env)
            assert str(info.value) == message

    def test_other_familys_key_does_not_count(self) -> None:
        """An OpenAI key is no use to the Anthropic judge."""
        with pytest.raises(JudgeConfigError, match="ANTHROPIC_API_KEY"):
            make_client("anthropic:messages:claude", env={"OPENAI_API_KEY": "o"})

    def test_gemini_accepts_either_key_preferring_google(self, judge_server: JudgeServer) -> None:
        """GOOGLE_API_KEY or GEMINI_API_KEY; with both set, GOOGLE_API_KEY is sent."""
        case = wire_cases(judge_server.url)["google"]
        judge_server.script(Scripted(body=case.ok("a")), Scripted(body=case.ok("b")))
        make_client(case.provider_id, env=case.env, base_url=case.base_url).complete(PROMPT)
        both = {**case.env, "GOOGLE_API_KEY": "google-wins"}
        make_client(case.provider_id, env=both, base_url=case.base_url).complete(PROMPT)
        assert [r.headers["x-goog-api-key"] for r in judge_server.requests] == [case.key, "google-wins"]

    PUBLIC_BASES: ClassVar = {
        "anthropic:messages:m": "https://api.anthropic.com",
        "openai:chat:m": "https://api.openai.com/v1",
        "google:m": "https://generativelanguage.googleapis.com",
    }

    def test_default_base_urls(self) -> None:
        """With no base_url option, the public endpoints."""
        for provider_id, base in self.PUBLIC_BASES.items():
            client = make_client(provider_id, env=self.ALL_KEYS)
            assert isinstance(client, HttpJudgeClient)
            assert client.base_url == base

    @pytest.mark.parametrize("where", ["env", "process"])
    def test_base_url_variables_are_not_read(
        self, where: str, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """*_BASE_URL steers promptfoo's generation providers: the judge goes to its public API, never there."""
        variables = {
            "ANTHROPIC_BASE_URL": judge_server.url,
            "OPENAI_BASE_URL": f"{judge_server.url}/v1",
            "GOOGLE_BASE_URL": judge_server.url,
        }
        if where == "process":  # make_client's default env is os.environ
            for name, value in {**self.ALL_KEYS, **variables}.items():
                monkeypatch.setenv(name, value)
        env = {**self.ALL_KEYS, **variables} if where == "env" else None
        for provider_id, base in self.PUBLIC_BASES.items():
            client = make_client(provider_id, env=env)
            assert isinstance(client, HttpJudgeClient)
            assert client.base_url == base
        assert judge_server.count == 0

    def test_base_url_option_is_the_judges_server(self, judge_server: JudgeServer) -> None:
        """base_url (e.g. an OpenAI-compatible server) is where the judge is asked; a trailing / is dropped."""
        case = wire_cases(judge_server.url)["openai"]
        judge_server.script(Scripted(body=case.ok("local")))
        client = make_client(case.provider_id, env=case.env, base_url=f"{judge_server.url}/compat/v1/")
        assert isinstance(client, HttpJudgeClient)
        assert client.base_url == f"{judge_server.url}/compat/v1"
        assert client.complete(PROMPT).text == "local"
        assert judge_server.requests[0].path == "/compat/v1/chat/completions"

    def test_building_opens_nothing(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """No request and no session until the first call (promptfoo builds clients it may not use)."""
        client = _client(wire_case)
        assert isinstance(client, HttpJudgeClient)
        assert client._session is None
        assert judge_server.count == 0

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"temperature": -0.1}, "temperature must be between 0 and 1"),
            ({"temperature": 1.5}, "temperature must be between 0 and 1"),  # Anthropic's range
            ({"temperature": math.nan}, "temperature"),
            ({"temperature": "0"}, "temperature"),
            ({"max_tokens": 0}, "max_tokens must be a positive integer"),
            ({"max_tokens": 1.5}, "max_tokens"),
            ({"max_tokens": True}, "max_tokens"),
            ({"timeout": 0}, "timeout must be a positive number"),
            ({"timeout": math.inf}, "timeout"),
            ({"max_retries": -1}, "max_retries"),
            ({"backoff_base": -1}, "backoff_base"),
            ({"backoff_max": math.nan}, "backoff_max"),
            ({"base_url": "ftp://example.org"}, "is not an http(s) URL"),
            ({"base_url": "api.example.org/v1"}, "is not an http(s) URL"),
            ({"base_url": "http://127.0.0.1:99999"}, "is not an http(s) URL"),
            ({"base_url": "https://user:secret@example.org"}, "must not carry credentials"),
            ({"base_url": "https://example.org/v1?key=x"}, "has a query or fragment"),
        ],
    )
    def test_bad_options(self, options: dict[str, Any], message: str) -> None:
        """An impossible option is a JudgeConfigError naming the provider, before any call."""
        with pytest.raises(JudgeConfigError) as info:
            make_client("anthropic:messages:m", env=self.ALL_KEYS, **options)
        assert message in str(info.value)
        assert "anthropic:messages:m" in str(info.value)

    def test_openai_and_gemini_allow_temperature_up_to_2(self) -> None:
        """Their APIs accept 0–2; only Anthropic stops at 1."""
        make_client("openai:chat:m", env=self.ALL_KEYS, temperature=1.5)
        make_client("google:m", env=self.ALL_KEYS, temperature=2)
        with pytest.raises(JudgeConfigError):
            make_client("openai:chat:m", env=self.ALL_KEYS, temperature=2.5)

    def test_cache_dir_that_is_a_file(self, tmp_path: Path) -> None:
        """A cache path that cannot be a directory fails at build time."""
        blocker = tmp_path / "cache"
        blocker.write_text("", encoding="utf-8")
        with pytest.raises(JudgeConfigError, match="cannot use cache directory"):
            make_client("openai:chat:m", env=self.ALL_KEYS, cache_dir=blocker)

    def test_env_defaults_to_the_process_environment(self) -> None:
        """Without env=, keys come from os.environ (read here, never modified)."""
        if os.environ.get("OPENAI_API_KEY"):
            assert isinstance(make_client("openai:chat:m"), HttpJudgeClient)
        else:
            with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY"):
                make_client("openai:chat:m")


class TestAnswerSha256:
    """The one definition of which answer a recording judged: SHA-256 of the exact UTF-8 text."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            pytest.param("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id="empty"),
            pytest.param("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", id="abc"),
        ],
    )
    def test_known_vectors(self, text: str, expected: str) -> None:
        """FIPS 180-2 test vectors."""
        assert answer_sha256(text) == expected

    def test_utf8_and_no_normalization(self) -> None:
        """Non-ASCII text is hashed as UTF-8; whitespace and case are significant."""
        assert answer_sha256("café") == hashlib.sha256("café".encode()).hexdigest()
        assert len({answer_sha256(t) for t in ("a b", "a  b", "a b\n", "A b", "a\u00a0b")}) == 5

    def test_lone_surrogate_has_a_hash(self) -> None:
        """JSON-decoded output may hold a lone surrogate; it still hashes instead of raising."""
        assert len(answer_sha256("x\ud800y")) == 64


class TestReplay:
    """Recorded judge replies (fixtures), served in order per key."""

    def test_successive_calls_return_successive_replies(self) -> None:
        """Malformed first, valid on the retry — as recorded; then the key is used up."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        first = client.complete("any prompt", fixture_key="q001/C1/v4")
        second = client.complete("any prompt", fixture_key="q001/C1/v4")
        assert first.text.startswith("Sure!")
        assert second.text.startswith('{"criteria"')
        assert (
            second.provider,
            second.model,
            second.cached,
            second.attempts,
            second.raw,
            second.request_id,
        ) == (
            "replay",
            str(FIX / "replay.yaml"),
            False,
            0,
            None,
            None,
        )
        with pytest.raises(JudgeError) as info:
            client.complete("any prompt", fixture_key="q001/C1/v4")
        assert str(info.value) == (
            f"{FIX / 'replay.yaml'}: replay judge: key 'q001/C1/v4' has 2 recorded replies, asked for reply 3"
        )

    def test_keys_are_independent_and_position_is_per_instance(self) -> None:
        """Another key has its own position; a new client starts again from the first reply."""
        path = f"replay:{FIX / 'replay.yaml'}"
        client = make_client(path)
        client.complete("p", fixture_key="q001/C1/v4")
        assert client.complete("p", fixture_key="q002/C0/v4").text.endswith('"fail"}')
        assert make_client(path).complete("p", fixture_key="q001/C1/v4").text.startswith("Sure!")

    def test_unknown_key(self) -> None:
        """A key the file does not record → JudgeError naming the file and the key."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        with pytest.raises(JudgeError) as info:
            client.complete("p", fixture_key="q999/C1/v4")
        assert (
            str(info.value)
            == f"{FIX / 'replay.yaml'}: replay judge has no recorded replies for key 'q999/C1/v4'"
        )

    def test_missing_fixture_key(self) -> None:
        """Replay cannot guess which recording is meant."""
        with pytest.raises(JudgeError, match="replay judge needs a fixture_key"):
            make_client(f"replay:{FIX / 'replay.yaml'}").complete("p")

    def test_never_cached(self, tmp_path: Path) -> None:
        """cache_dir is ignored for replay: a recording is already a record."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}", cache_dir=tmp_path / "cache")
        client.complete("p", fixture_key="q002/C0/v4")
        assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())

    def test_base_url_is_refused(self) -> None:
        """A base URL for a recording is a configuration mistake."""
        with pytest.raises(JudgeConfigError, match="base_url does not apply to replay"):
            make_client(f"replay:{FIX / 'replay.yaml'}", base_url="http://127.0.0.1:1")

    def test_answer_hash_is_loaded(self) -> None:
        """An entry's answer_sha256 is kept; an entry without one has None."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        assert client._fixtures["q003/C0/v4"].answer_sha256 == answer_sha256("Recorded answer for q003.")
        assert client._fixtures["q002/C0/v4"].answer_sha256 is None

    @pytest.mark.parametrize(
        ("key", "answer", "recorded_answer", "status", "allowed"),
        [
            pytest.param("q003/C0/v4", "Recorded answer for q003.", False, "match", True, id="same-text"),
            pytest.param(
                "q003/C0/v4", "Recorded answer for q003.", True, "match", True, id="same-text-recorded"
            ),
            pytest.param("q003/C0/v4", "A live model's answer.", False, "mismatch", False, id="other-text"),
            pytest.param("q003/C0/v4", "Recorded answer for q003.\n", True, "mismatch", False, id="edited"),
            pytest.param(
                "q002/C0/v4", "Anything.", True, "unhashed_recorded_answer", True, id="old-both-recorded"
            ),
            pytest.param("q002/C0/v4", "Anything.", False, "unhashed", False, id="old-live-answer"),
        ],
    )
    def test_check_answer(
        self, key: str, answer: str, recorded_answer: bool, status: str, allowed: bool
    ) -> None:
        """Which answers a recording may grade: its own text; or, without a hash, another recording only."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        check = client.check_answer(key, answer, answer_is_recorded=recorded_answer)
        assert (check.key, check.status, check.allowed) == (key, status, allowed)
        assert check.answer_sha256 == answer_sha256(answer)
        assert check.recorded_sha256 == client._fixtures[key].answer_sha256
        assert client._served == {}  # checking serves nothing

    def test_check_answer_messages(self) -> None:
        """The refusal names the key and both hashes (12 digits each); acceptance of an old one says why."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        live = answer_sha256("Live.")
        assert client.check_answer("q003/C0/v4", "Live.", answer_is_recorded=False).detail == (
            f"recorded judge reply q003/C0/v4 was recorded for answer sha256 0e026422adc2… but this answer "
            f"is sha256 {live[:12]}…"
        )
        assert client.check_answer("q002/C0/v4", "Live.", answer_is_recorded=False).detail == (
            f"recorded judge reply q002/C0/v4 has no answer hash and this answer (sha256 {live[:12]}…) is "
            "not a recorded fixture, so nothing shows the reply judged this text"
        )
        assert client.check_answer("q002/C0/v4", "Live.", answer_is_recorded=True).detail == (
            "recorded reply without an answer hash, accepted because the answer is a recorded fixture too"
        )
        assert (
            client.check_answer("q003/C0/v4", "Recorded answer for q003.", answer_is_recorded=False).detail
            == ""
        )

    def test_check_answer_unknown_key(self) -> None:
        """A key the file does not record → the same JudgeError as complete() gives."""
        client = make_client(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        with pytest.raises(JudgeError, match="has no recorded replies for key 'q999/C1/v4'"):
            client.check_answer("q999/C1/v4", "x", answer_is_recorded=True)
        with pytest.raises(JudgeError, match="needs a fixture_key"):
            client.check_answer(None, "x", answer_is_recorded=True)

    @pytest.mark.parametrize(
        ("name", "problem"),
        [
            ("not_a_list.yaml", "expected a non-empty YAML list"),
            ("empty.yaml", "expected a non-empty YAML list"),
            ("bad_yaml.yaml", "malformed YAML at line"),
            ("empty_replies.yaml", "entry 1 (q001): field 'replies' must be a non-empty list of text"),
            ("reply_not_text.yaml", "entry 1 (q001): field 'replies' must be a non-empty list of text"),
            ("missing_key.yaml", "entry 1: field 'key' is required and must be text"),
            ("duplicate_key.yaml", "entry 2: a second entry for key 'q001'"),
            ("unknown_field.yaml", "entry 1: unknown field(s) reply"),
            (
                "sha256_uppercase.yaml",
                "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits",
            ),
            (
                "sha256_short.yaml",
                "field 'answer_sha256' must be 64 lowercase hex digits (the SHA-256 of the "
                "judged answer), got '0e026422adc2d398'",
            ),
            (
                "sha256_not_text.yaml",
                "field 'answer_sha256' must be 64 lowercase hex digits (the SHA-256 of the "
                "judged answer), got 12345",
            ),
            ("sha256_prefixed.yaml", "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits"),
            ("sha256_newline.yaml", "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits"),
            ("no_such_file.yaml", "file not found"),
        ],
    )
    def test_malformed_fixture_file(self, name: str, problem: str) -> None:
        """A bad fixture file is one DataError line naming the file, raised when the client is built."""
        path = FIX / "replay_bad" / name
        with pytest.raises(DataError) as info:
            make_client(f"replay:{path}")
        assert str(info.value).startswith(f"{path}: ")
        assert problem in str(info.value)
        assert "\n" not in str(info.value)


_LIVE = {
    "anthropic": ("ANTHROPIC_API_KEY", "anthropic:messages:claude-sonnet-4-5-20250929"),
    "openai": ("OPENAI_API_KEY", "openai:chat:gpt-4o-mini"),
    "google": ("GOOGLE_API_KEY", "google:gemini-2.5-flash"),
}


@pytest.mark.live
@pytest.mark.parametrize("kind", sorted(_LIVE))
def test_live_round_trip(kind: str) -> None:
    """Against the real API (only with its key set): a one-word reply comes back."""
    variable, provider_id = _LIVE[kind]
    if not os.environ.get(variable) and not (kind == "google" and os.environ.get("GEMINI_API_KEY")):
        pytest.skip(f"{variable} is not set")
    reply = make_client(provider_id, max_tokens=1024, max_retries=2).complete(
        "Reply with the single word OK."
    )
    assert "OK" in reply.text.upper()
    assert reply.attempts >= 1
