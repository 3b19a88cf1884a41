"""Liveness end to end: the CLI, the real liveness check and a real HTTP server on 127.0.0.1.

200 → REAL_NOT_IN_ALLOWLIST, 404 → HALLUCINATED_URL, a loopback target not explicitly allowed →
UNCHECKED (refused), and URLs past the per-answer limit → UNCHECKED without a request. No other
network is touched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.loopback import serving

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "verifier"


class _Handler(BaseHTTPRequestHandler):
    requests: list[str]  # set on the class by the fixture

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self.requests.append(self.path)
        self.send_response({"/guide": 200, "/missing": 404}.get(self.path.split("?")[0], 500))
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD


@pytest.fixture
def requests_seen() -> list[str]:
    return []


@pytest.fixture
def base(requests_seen: list[str], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(_Handler, "requests", requests_seen, raising=False)
    with serving(server := ThreadingHTTPServer(("127.0.0.1", 0), _Handler)):
        yield f"http://127.0.0.1:{server.server_address[1]}"


def _run(tmp_path: Path, text: str, *extra: str) -> list[dict[str, str]]:
    answer = tmp_path / "answer.txt"
    answer.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "grounding_eval", "verify", str(answer), "--json",
         "--allowlist", str(FIX / "allowlist.txt"), "--orgs", str(FIX / "orgs.yaml"),
         "--liveness-cache", str(tmp_path / "cache.sqlite"), *extra],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    urls: list[dict[str, str]] = json.loads(result.stdout)["urls"]
    return urls


def _verify(tmp_path: Path, text: str, *extra: str) -> dict[str, str]:
    return {u["url"]: u["status"] for u in _run(tmp_path, text, *extra)}


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


def test_per_answer_limit(base: str, tmp_path: Path, requests_seen: list[str]) -> None:
    """60 live URLs in one answer: the first 50 are checked (the default limit), the rest are not asked."""
    text = " ".join(f"{base}/guide?n={i}" for i in range(60))
    statuses = [u["status"] for u in _run(tmp_path, text, "--allow-host", "127.0.0.1")]
    assert statuses == ["REAL_NOT_IN_ALLOWLIST"] * 50 + ["UNCHECKED"] * 10
    assert len(requests_seen) == 50
