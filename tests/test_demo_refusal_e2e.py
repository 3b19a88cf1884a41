"""``scripts/demo`` stopped by the pack's configuration check (``grounding.cjs:beforeAll``), with real
promptfoo, offline: the pack's message is the last thing on the screen (issue 42: it arrived buried in 53
lines of promptfoo's output, then under the demo's own error line), and a problem every test shares is
one line, not one per test.

The demo runs from a copy of the pack whose ``scripts/install`` does nothing: the real one is run by CI
itself, and here it could install into the shared environment from the copy.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEADER = "grounding-eval: the configuration has 1 problem(s); no model was called:"


def _demo(tmp_path: Path, **env: str) -> tuple[int, list[str], Path]:
    """Run the demo from a copy of the pack; its exit status, its lines (standard output and error as a
    terminal interleaves them), and the results file it would write."""
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("node_modules is missing: run scripts/install (npm ci) first")
    root = tmp_path / "pack"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "demo").write_text((REPO / "scripts" / "demo").read_text(encoding="utf-8"))
    (root / "scripts" / "install").write_text("exit 0\n")
    for name in (".venv", "node_modules", ".env", "datasets", "prompts", "providers", "assertions",
                 "promptfooconfig.yaml"):  # fmt: skip
        (root / name).symlink_to(REPO / name)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDING_EVAL_", "OPENAI_"))}
    done = subprocess.run(
        ["bash", str(root / "scripts" / "demo")],
        cwd=root, env={**clean, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "TMPDIR": str(tmp_path), **env},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, check=False,
    )  # fmt: skip
    return done.returncode, [line for line in done.stdout.splitlines() if line.strip()], root


def test_a_missing_key_is_the_last_line(tmp_path: Path) -> None:
    status, lines, root = _demo(tmp_path, GROUNDING_EVAL_JUDGE_PROVIDER="openai:chat:gpt-4o-mini")
    assert status == 1, lines
    assert lines[-2:] == [
        HEADER,
        "  - judge: judge provider openai:chat:gpt-4o-mini ($GROUNDING_EVAL_JUDGE_PROVIDER): its API key is not set",
    ], lines
    assert not any(line.startswith("demo: error") for line in lines), lines
    assert not (root / "results" / "sample.json").exists()
    assert list(tmp_path.glob("grounding-eval-refusal.*")) == []  # the demo's note of the refusal is gone


def test_a_mistyped_judge_is_one_line_naming_the_tests(tmp_path: Path) -> None:
    """The judge is set once for the suite: its problem is found in each of the sample's 8 tests."""
    status, lines, _ = _demo(tmp_path, GROUNDING_EVAL_JUDGE_PROVIDER="opnai:gpt-4o")
    assert status == 1, lines
    assert lines[-2] == HEADER, lines
    last = lines[-1]
    assert last.startswith("  - judge (8 tests: hr-"), last
    assert ", …): judge provider opnai:gpt-4o ($GROUNDING_EVAL_JUDGE_PROVIDER): " in last
    assert "Could not identify provider: opnai:gpt-4o" in last
