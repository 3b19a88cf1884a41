"""What a person sees of the docs-QA evaluation: promptfoo's viewer, in a real headless Chromium, shows the
four criterion chips, the two helper chips, and the reasons (a missed point, an invented citation).

Reads the session's offline run of ``configs/docs_qa.yaml`` (its own promptfoo database), serves it with
``promptfoo view -n`` on a free 127.0.0.1 port, and reads the rendered table through playwright-core
driving Chromium.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.browser.viewer import REPO, browse, require_chromium, served_viewer
from tests.promptfoo_runs import EvalRun, shared_group


@pytest.mark.xdist_group(shared_group("configs/docs_qa.yaml"))
def test_viewer_shows_docs_qa_chips_and_reasons(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    require_chromium()
    run = shared_eval("configs/docs_qa.yaml")
    assert run.returncode == 100, run.tail()
    shot = tmp_path / "viewer.png"
    with served_viewer(run.env) as base:
        seen = browse(
            REPO / "tests" / "browser" / "viewer_check.mjs", f"{base}/eval", shot, "docs_qa.correct"
        )
    text = "\n".join(seen["cells"])
    assert "Docs-QA — four pass/fail criteria" in seen["body"]
    for chip in ("docs_qa.correct", "docs_qa.grounded", "docs_qa.complete", "docs_qa.honest_about_gaps",
                 "docs_qa.must_include_coverage", "docs_qa.citation_validity"):  # fmt: skip
        assert chip in text, chip
    assert "docs_qa.score" not in text and "docs_qa.applicable" not in text  # counts are not chips
    for reason in ("2/3 applicable, Fail (direct-lookup)",  # Q04, complete but wrong
                   "0/3 applicable, Fail (out-of-scope)",  # Q22, invented out-of-scope answer
                   "invalid citation(s): tenant-rights.md#security-deposits"):  # fmt: skip
        assert reason in text, reason
    assert shot.stat().st_size > 10_000
