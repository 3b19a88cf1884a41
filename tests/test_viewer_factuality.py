"""What a person sees of the factual-accuracy judge: promptfoo's viewer, in a real headless Chromium.

Runs the shipped offline config (``configs/factual_accuracy.yaml``) into a private promptfoo database,
serves it with ``promptfoo view -n`` on a free 127.0.0.1 port, and opens every result cell's details
dialog through playwright-core driving Debian's Chromium: each cell lists one component per claim, with its
verdict, severity, quote and evidence check, and the chips include ``factual_accuracy``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.browser.viewer import REPO, browse, private_env, require_chromium, served_viewer
from tests.factuality.test_promptfoo_e2e import run_config

pytestmark = pytest.mark.e2e


def test_viewer_lists_one_component_per_claim(tmp_path: Path) -> None:
    require_chromium()
    out = tmp_path / "out.json"
    run = run_config(tmp_path, out)
    assert run.returncode == 100, run.stdout[-2000:] + run.stderr[-2000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    claims_per_row = Counter(
        sum(c["reason"].startswith("claim ") for c in row["gradingResult"]["componentResults"])
        for row in rows
    )
    shot = tmp_path / "viewer.png"
    with served_viewer(private_env(tmp_path)) as base:
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
