"""Liveness end to end: the CLI, the real liveness check and a real HTTP server on 127.0.0.1.

200 → REAL_NOT_IN_ALLOWLIST, 404 → HALLUCINATED_URL, and a loopback target not explicitly allowed →
UNCHECKED (refused). No other network is touched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "verifier"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self.send_response({"/guide": 200, "/missing": 404}.get(self.path, 500))
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD


@pytest.fixture
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _verify(tmp_path: Path, text: str, *extra: str) -> dict[str, str]:
    answer = tmp_path / "answer.txt"
    answer.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "grounding_eval", "verify", str(answer), "--json",
         "--allowlist", str(FIX / "allowlist.txt"), "--orgs", str(FIX / "orgs.yaml"),
         "--liveness-cache", str(tmp_path / "cache.sqlite"), *extra],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return {u["url"]: u["status"] for u in json.loads(result.stdout)["urls"]}


def test_live_statuses_with_allowed_host(base: str, tmp_path: Path) -> None:
    """With 127.0.0.1 allowed, a 200 is real and a 404 is hallucinated."""
    text = f"See {base}/guide and {base}/missing and https://www.lsc.gov/ ."
    statuses = _verify(tmp_path, text, "--allow-host", "127.0.0.1")
    assert statuses == {
        f"{base}/guide": "REAL_NOT_IN_ALLOWLIST",
        f"{base}/missing": "HALLUCINATED_URL",
        "https://www.lsc.gov/": "IN_ALLOWLIST",
    }


def test_loopback_refused_without_allow_host(base: str, tmp_path: Path) -> None:
    """Without --allow-host the loopback target is refused: UNCHECKED, never hallucinated."""
    statuses = _verify(tmp_path, f"See {base}/guide and {base}/missing.")
    assert statuses == {f"{base}/guide": "UNCHECKED", f"{base}/missing": "UNCHECKED"}


def test_offline_never_touches_the_server(base: str, tmp_path: Path) -> None:
    """--offline leaves a dead link UNCHECKED: a missing network must never become HALLUCINATED_URL."""
    statuses = _verify(tmp_path, f"See {base}/missing.", "--allow-host", "127.0.0.1", "--offline")
    assert statuses == {f"{base}/missing": "UNCHECKED"}
