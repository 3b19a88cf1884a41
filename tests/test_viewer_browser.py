"""What a person sees: promptfoo's viewer, in a real headless Chromium, shows our scores and findings.

Runs the verifier demo into a private promptfoo database, serves it with ``promptfoo view -n`` on a free
127.0.0.1 port, and reads the rendered table through playwright-core driving Debian's Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_viewer_shows_named_scores_and_findings(tmp_path: Path) -> None:
    if shutil.which("chromium") is None and not os.environ.get("CHROMIUM"):
        pytest.fail("chromium is not installed: run scripts/install --browser")
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    run = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", "configs/verifier_demo.yaml", "--no-progress-bar", "--no-table"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 100, run.stdout[-2000:] + run.stderr[-2000:]
    port = _free_port()
    viewer = subprocess.Popen(
        ["npx", "promptfoo", "view", "-n", "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("promptfoo view did not start within 60 s")
                time.sleep(0.5)
        shot = tmp_path / "viewer.png"
        check = subprocess.run(
            ["node", str(REPO / "tests" / "browser" / "viewer_check.mjs"), f"http://127.0.0.1:{port}/eval", str(shot)],
            cwd=REPO, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stderr[-3000:]
        seen = json.loads(check.stdout.strip().splitlines()[-1])
        text = "\n".join(seen["cells"])
        assert "Verifier demo: every deterministic-verifier outcome" in seen["body"]
        # The chips and the reasons a reviewer reads, in the first question's row.
        for expected in ("deterministic_verifier_score", "phone_org_score", "url_allowlist_score",
                         "HALLUCINATED_URL https://www.legalaidchicago.org/5-day-notice-defense-kit",
                         "MATCH (312) 341-1070 is Legal Aid Chicago's number"):  # fmt: skip
            assert expected in text, expected
        assert shot.stat().st_size > 10_000
    finally:
        os.killpg(viewer.pid, 15)
        viewer.wait(timeout=30)
