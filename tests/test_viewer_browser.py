"""What a person sees: promptfoo's viewer, in a real headless Chromium, shows our scores and findings.

Runs the verifier demo into a private promptfoo database, serves it with ``promptfoo view -n`` on a free
127.0.0.1 port, and reads the rendered table through playwright-core driving Debian's Chromium.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.browser.viewer import REPO, browse, private_env, require_chromium, served_viewer

pytestmark = pytest.mark.e2e


def test_viewer_shows_named_scores_and_findings(tmp_path: Path) -> None:
    require_chromium()
    env = private_env(tmp_path)
    run = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", "configs/verifier_demo.yaml", "--no-progress-bar", "--no-table"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 100, run.stdout[-2000:] + run.stderr[-2000:]
    shot = tmp_path / "viewer.png"
    with served_viewer(env) as base:
        seen = browse(REPO / "tests" / "browser" / "viewer_check.mjs", f"{base}/eval", shot)
    text = "\n".join(seen["cells"])
    assert "Verifier demo: every deterministic-verifier outcome" in seen["body"]
    # The chips and the reasons a reviewer reads, in the first question's row.
    for expected in ("deterministic_verifier_score", "phone_org_score", "url_allowlist_score",
                     "HALLUCINATED_URL https://www.legalaidchicago.org/5-day-notice-defense-kit",
                     "MATCH (312) 341-1070 is Legal Aid Chicago's number"):  # fmt: skip
        assert expected in text, expected
    assert shot.stat().st_size > 10_000
