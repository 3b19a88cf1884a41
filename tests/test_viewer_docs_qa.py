"""What a person sees of the docs-QA evaluation: promptfoo's viewer, in a real headless Chromium, shows the
four criterion chips, the two helper chips, and the reasons (a missed point, an invented citation).

Runs ``configs/docs_qa.yaml`` (offline) into a private promptfoo database, serves it with ``promptfoo view
-n`` on a free 127.0.0.1 port, and reads the rendered table through playwright-core driving Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.test_viewer_browser import _free_port

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.e2e


def test_viewer_shows_docs_qa_chips_and_reasons(tmp_path: Path) -> None:
    if shutil.which("chromium") is None and not os.environ.get("CHROMIUM"):
        pytest.fail("chromium is not installed: run scripts/install --browser")
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    run = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", "configs/docs_qa.yaml", "--no-progress-bar", "--no-table", "--no-cache"],
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
        script = REPO / "tests" / "docs_qa" / "viewer_check_docs_qa.mjs"
        check = subprocess.run(
            ["node", str(script), f"http://127.0.0.1:{port}/eval", str(shot)],
            cwd=REPO, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stderr[-3000:]
        seen = json.loads(check.stdout.strip().splitlines()[-1])
        text = "\n".join(seen["cells"])
        assert "Docs-QA — four pass/fail criteria" in seen["body"]
        for chip in ("docs_qa.correct", "docs_qa.grounded", "docs_qa.complete", "docs_qa.honest_about_gaps",
                     "docs_qa.must_include_coverage", "docs_qa.citation_validity", "docs_qa.score",
                     "docs_qa.applicable"):  # fmt: skip
            assert chip in text, chip
        for reason in ("2/3 applicable, Fail (direct-lookup)",  # Q04, complete but wrong
                       "0/3 applicable, Fail (out-of-scope)",  # Q22, invented out-of-scope answer
                       "invalid citation(s): tenant-rights.md#security-deposits"):  # fmt: skip
            assert reason in text, reason
        assert shot.stat().st_size > 10_000
    finally:
        os.killpg(viewer.pid, 15)
        viewer.wait(timeout=30)
