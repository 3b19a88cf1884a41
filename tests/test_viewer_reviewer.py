"""promptfoo's viewer as a legal-aid reviewer reads it (issue 21), in a real Chromium at 1920×1080.

For the main job (Round 3), factual accuracy and docs-QA, served by promptfoo's own viewer from the
session's offline runs: no chip is hidden behind "Show more" (at most 8 per row); a passing cell shows no
FAIL line; a failing cell's first reason line is its verdict — for Round 3 the composite's, saying what
decided the row (``UNSAFE (<check>): <finding>`` or ``FAIL: …``). Each test writes its screenshot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser.viewer import REPO, browse, require_chromium, served_viewer
from tests.promptfoo_runs import EvalRun, shared_group

SCRIPT = REPO / "tests" / "browser" / "reviewer_cells.mjs"
PAGER = re.compile(r"^\d+/\d+$")  # promptfoo's "1/4" before a failing cell's reasons


def _cells(run: EvalRun, shot: Path, wait_for: str) -> tuple[list[str], int]:
    with served_viewer(run.env) as base:
        seen = browse(SCRIPT, f"{base}/eval", shot, wait_for, timeout=240)
    assert shot.stat().st_size > 10_000
    # The first output column is wholly in view on first load: no long source var pushes it off screen.
    first = seen["firstOutput"]
    assert first is not None and first["viewport"] == 1920, first
    assert first["x"] >= 0 and first["x"] + first["width"] <= 1920, first
    return seen["cells"], seen["showMore"]


def _first_reason(cell: str) -> str:
    """The first line after the pager: the first reason promptfoo shows in a failing cell."""
    lines = [line.strip() for line in cell.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if PAGER.match(line)), None)
    assert at is not None, f"no failure reason shown: {cell[:900]}"
    return lines[at + 1]


CASES = [
    pytest.param("promptfooconfig.yaml", "deterministic_verifier_score", ("UNSAFE (", "FAIL: ", "Round 3: "),
                 id="round3", marks=pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))),
    pytest.param("configs/factual_accuracy.yaml", "factual_accuracy", ("FAIL ", "NEEDS_HUMAN_VERIFICATION", "ERROR"),
                 id="factual-accuracy", marks=pytest.mark.xdist_group(shared_group("configs/factual_accuracy.yaml"))),
    pytest.param("configs/docs_qa.yaml", "docs_qa.correct", ("FAIL docs_qa",), id="docs-qa",
                 marks=pytest.mark.xdist_group(shared_group("configs/docs_qa.yaml"))),
]  # fmt: skip


@pytest.mark.parametrize(("config", "wait_for", "verdict_starts"), CASES)
def test_the_verdict_first_and_every_chip_in_view(
    config: str, wait_for: str, verdict_starts: tuple[str, ...], tmp_path: Path,
    shared_eval: Callable[[str], EvalRun],
) -> None:  # fmt: skip
    require_chromium()
    run = shared_eval(config)
    assert run.returncode in (0, 100), run.tail()
    cells, show_more = _cells(run, tmp_path / f"{Path(config).stem}.png", wait_for)
    assert show_more == 0  # no chip hidden
    passing = [c for c in cells if re.match(r"^\d+ PASS", c.strip())]
    failing = [c for c in cells if re.match(r"^\d+ FAIL", c.strip())]
    assert passing and failing, (len(passing), len(failing))
    for cell in passing:
        assert not PAGER.search(cell) and "FAIL" not in cell.split("\n", 1)[1], cell[:300]
    for cell in failing:
        assert _first_reason(cell).startswith(verdict_starts), cell[:900]


LAYOUT = REPO / "tests" / "browser" / "reviewer_layout.mjs"
# "Render Markdown" (Table Settings), the one choice docs/tutorial.md suggests: promptfoo keeps it in the
# browser (localStorage "eval-settings"); no config key sets it. Nothing else is needed at 1920×1080.
MARKDOWN = {"renderMarkdown": True}


def _layout(run: EvalRun, folder: Path, settings: dict[str, object] | None) -> dict[str, Any]:
    args = [folder / "details.png", "deterministic_verifier_score"]
    with served_viewer(run.env) as base:
        seen: dict[str, Any] = browse(
            LAYOUT, f"{base}/eval", folder / "table.png", *map(str, args),
            *([json.dumps(settings)] if settings else []), timeout=240,
        )  # fmt: skip
    assert (folder / "table.png").stat().st_size > 10_000 and (folder / "details.png").stat().st_size > 10_000
    assert seen["viewport"] == [1920, 1080], seen
    return seen


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_reviewer_reads_the_three_conditions_and_the_first_reason_at_1920(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    """Issue 42, with promptfoo's default settings (nothing chosen in the viewer): the one variable column
    is the question (the jurisdiction is in the prompt and the metadata, not a column: with it C1.5 ended
    56 px past the screen); C0, C1 and C1.5 sit side by side within 0..1920, header and first row alike;
    the first row's verdict reason is drawn above 1080 (it was at 1094: a three-line prompt label atop each
    column, one chip per safety check), and it says what decided the row. The details dialog shows the
    prompt as the model got it, the state in it."""
    require_chromium()
    run = shared_eval("promptfooconfig.yaml")
    assert run.returncode == 100, run.tail()
    (tmp_path / "default").mkdir()
    seen = _layout(run, tmp_path / "default", None)
    assert len(seen["cells"]) == 3 and all(0 <= left < right <= 1920 for left, right in seen["cells"]), seen[
        "cells"
    ]
    assert [h["label"] for h in seen["headers"]] == ["recorded-sample-answers"] * 3, seen["headers"]
    # Each condition's label on one line (promptfoo appends a text file's whole template to it: cut).
    prompts = [(h["prompt"] or "").strip() for h in seen["headers"]]
    assert prompts == ["C0: prompts/c0.txt", "C1: prompts/c1.txt", "C1.5: prompts/c1_5.txt"], prompts
    assert [h["x"] for h in seen["headers"]] == seen["cells"], seen
    reason = seen["firstReason"]
    assert reason is not None and reason["y"] < 1080 and reason["drawn"], reason
    assert reason["text"].split("\n")[1].startswith(("UNSAFE (", "FAIL: ")), reason
    assert [c["name"] for c in seen["varColumns"]] == ["question"], seen["varColumns"]
    assert "helping someone in IL." in seen["details"], seen.get("details", "")[:600]
    assert seen["answerAsterisks"]  # promptfoo's default shows the answer's Markdown raw
    (tmp_path / "markdown").mkdir()
    rendered = _layout(run, tmp_path / "markdown", MARKDOWN)
    assert rendered["cells"] == seen["cells"] and rendered["firstReason"]["y"] < 1080, rendered
    assert rendered["answerBold"] and not rendered["answerAsterisks"], rendered
