"""No request leaves for promptfoo's telemetry while ``PROMPTFOO_DISABLE_TELEMETRY`` is set (issue 39).

promptfoo 0.123.1 posts one "telemetry disabled" event to ``https://r.promptfoo.app/`` in every run even
with telemetry disabled (promptfoo/promptfoo#9968); the repository's ``.npmrc`` gives the Node that
``npx promptfoo`` starts a preload refusing it. Seen here as a partner would see it: every HTTP(S)
request of the real ``npx promptfoo eval`` is sent through a proxy on 127.0.0.1 that records it and
forwards nothing. A control run whose provider is a web endpoint shows that the proxy does see
promptfoo's requests, so an empty record means none was made.
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.promptfoo_runs import run_eval

PROMPTFOO_HOSTS = ("promptfoo.app", "promptfoo.dev")


class _Recorder(socketserver.ThreadingTCPServer):
    """A proxy that records each request's first line (``CONNECT host:443 HTTP/1.1``, or ``GET http://…``)
    and refuses it."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _Refuse)


class _Refuse(socketserver.StreamRequestHandler):
    server: _Recorder

    def handle(self) -> None:
        self.connection.settimeout(10)
        line = self.rfile.readline(8192).decode("latin-1").strip()
        if line:
            self.server.seen.append(line)
        self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


@pytest.fixture
def proxy() -> Iterator[tuple[_Recorder, dict[str, str]]]:
    """The recorder, and the environment that sends every request of promptfoo's fetch through it
    (both spellings: promptfoo's proxy-from-env reads the lower-case one first; no exemptions)."""
    recorder = _Recorder()
    thread = threading.Thread(target=recorder.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{recorder.server_address[1]}"
    env = {
        name: url
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    }
    env |= {"NO_PROXY": "", "no_proxy": "", "PROMPTFOO_DISABLE_TELEMETRY": "1"}
    try:
        yield recorder, env
    finally:
        recorder.shutdown()
        recorder.server_close()


def _to_promptfoo(seen: list[str]) -> list[str]:
    return [line for line in seen if any(host in line for host in PROMPTFOO_HOSTS)]


@pytest.mark.e2e
def test_an_offline_eval_makes_no_request_at_all(
    tmp_path: Path, proxy: tuple[_Recorder, dict[str, str]]
) -> None:
    """The main job (its first test: three rows) through the proxy: nothing is sent anywhere."""
    recorder, env = proxy
    run = run_eval("promptfooconfig.yaml", tmp_path, env, ["--filter-first-n", "1"])
    assert run.returncode in (0, 100), run.tail()
    assert len(run.rows()) == 3
    assert recorder.seen == []


@pytest.mark.e2e
def test_the_proxy_sees_promptfoos_requests_but_no_telemetry(
    tmp_path: Path, proxy: tuple[_Recorder, dict[str, str]]
) -> None:
    """The control: a provider on a web endpoint is asked through the proxy (so the proxy is where
    promptfoo's requests go), and still nothing goes to promptfoo's own hosts."""
    recorder, env = proxy
    config = tmp_path / "control.yaml"
    config.write_text(
        "prompts: ['Say {{ word }}']\n"
        "providers:\n"
        "  - id: https://control.grounding-eval.invalid/v1/generate\n"
        "    config: {method: POST, body: {prompt: '{{ prompt }}'}, transformResponse: json.text, maxRetries: 0}\n"
        "tests: [{vars: {word: hello}}]\n",
        encoding="utf-8",
    )
    run = run_eval(config, tmp_path, env)
    assert len(run.rows()) == 1, run.tail()
    assert any(line.startswith("CONNECT control.grounding-eval.invalid:443 ") for line in recorder.seen), (
        recorder.seen
    )
    assert _to_promptfoo(recorder.seen) == []
