"""What a person sees: promptfoo's viewer, in a real headless Chromium, shows our scores and findings.

Reads the session's offline run of the verifier demo (its own promptfoo database), serves it with
``promptfoo view -n`` on a free 127.0.0.1 port, and reads the rendered table through playwright-core
driving Debian's Chromium.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.browser.viewer import REPO, browse, require_chromium, served_viewer
from tests.promptfoo_runs import EvalRun, shared_group


@pytest.mark.xdist_group(shared_group("configs/verifier_demo.yaml"))
def test_viewer_shows_named_scores_and_findings(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    require_chromium()
    run = shared_eval("configs/verifier_demo.yaml")
    assert run.returncode == 100, run.tail()
    shot = tmp_path / "viewer.png"
    with served_viewer(run.env) as base:
        seen = browse(REPO / "tests" / "browser" / "viewer_check.mjs", f"{base}/eval", shot)
    text = "\n".join(seen["cells"])
    assert "Verifier demo: every deterministic-verifier outcome" in seen["body"]
    # The chips and the reasons a reviewer reads, in the first question's row.
    for expected in ("deterministic_verifier_score", "phone_org_score", "url_allowlist_score",
                     "hallucinated URL https://www.legalaidchicago.org/5-day-notice-defense-kit"):  # fmt: skip
        assert expected in text, expected
    assert shot.stat().st_size > 10_000
