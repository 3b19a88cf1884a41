"""What a person sees of the factual-accuracy judge: promptfoo's viewer, in a real headless Chromium.

Reads the session's offline run of the shipped config (``configs/factual_accuracy.yaml``, its own database),
serves it with ``promptfoo view -n`` on a free 127.0.0.1 port, and opens every result cell's details
dialog through playwright-core driving Debian's Chromium: each cell lists one component per claim, with its
verdict, severity, quote and evidence check, and the chips include ``factual_accuracy``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.browser.viewer import REPO, browse, require_chromium, served_viewer
from tests.promptfoo_runs import EvalRun, shared_group


@pytest.mark.xdist_group(shared_group("configs/factual_accuracy.yaml"))
def test_viewer_lists_one_component_per_claim(tmp_path: Path, shared_eval: Callable[[str], EvalRun]) -> None:
    require_chromium()
    run = shared_eval("configs/factual_accuracy.yaml")
    assert run.returncode == 100, run.tail()
    rows = run.rows()
    claims_per_row = Counter(
        sum(c["reason"].startswith("claim ") for c in row["gradingResult"]["componentResults"])
        for row in rows
    )
    shot = tmp_path / "viewer.png"
    with served_viewer(run.env) as base:
        script = REPO / "tests" / "factuality" / "viewer_factuality.mjs"
        seen = browse(script, f"{base}/eval", shot, timeout=240)
    cells = "\n".join(seen["cells"])
    for chip in ("factual_accuracy", "factuality.ungrounded_verdicts", "factuality.severity.major"):
        assert chip in cells or chip in seen["body"], chip
    assert len(seen["details"]) == len(rows) == 5
    shown = Counter(len(re.findall(r"^claim c\d+: ", text, re.MULTILINE)) for text in seen["details"])
    assert shown == claims_per_row
    details = "\n".join(seen["details"])
    assert "NEEDS_HUMAN_VERIFICATION: risk level high and c2 (Major)" in details
    assert (
        "claim c4: Supported (not scored)" in details
        and "UNGROUNDED_VERDICT: scored as Unverifiable" in details
    )
    assert "claim c3: Partially Supported [Minor] (score 0.5)" in details
    assert "(FOUND in us-50usc3951#" in details
    assert shot.stat().st_size > 10_000
