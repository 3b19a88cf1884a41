"""``grounding-eval rubric show``: a rubric printed with the provenance of every text, exit codes, and
one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.judge.rubric import RUBRICS_DIR, load_rubric

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "tests" / "fixtures" / "rubrics" / "mini.yaml"


def _show(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, str, str]:
    code = main(["rubric", "show", name])
    out, err = capsys.readouterr()
    return code, out, err


class TestRubricShow:
    """Exit 0 and the rubric on stdout, every text behind its mark."""

    def test_exact_output(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The small fixture rubric, line for line."""
        code, out, err = _show(capsys, str(MINI))
        assert (code, err) == (0, "")
        assert out == (
            f"rubric mini 1.0.0 (prompt mini-p1)\n"
            f"file: {MINI}\n"
            "source: tests only\n"
            "rounds: test\n"
            "marks: [methods-document] verbatim from the methods document (Guide 2: Methods and Materials)\n"
            "       [grounding-eval] grounding-eval's wording\n"
            "\n"
            "[grounding-eval] title: Mini rubric for tests\n"
            "\n"
            "guidance\n"
            "  1. [grounding-eval] principle: be brief\n"
            "     [grounding-eval] instruction: Prefer the shorter of two equally good answers.\n"
            "\n"
            "dimensions\n"
            "  [grounding-eval] id: Quality\n"
            "    [grounding-eval] description: Is it good?\n"
            "  [grounding-eval] id: Safety\n"
            "    [grounding-eval] description: Is it safe?\n"
            "\n"
            "criteria\n"
            "  alpha (positive, criterion, dimension Quality)\n"
            "    [grounding-eval] id: alpha\n"
            "    [grounding-eval] question: Is it helpful?\n"
            "    [grounding-eval] yes: Fully helpful.\n"
            "    [grounding-eval] partial: Somewhat helpful.\n"
            "    [grounding-eval] no: Not helpful.\n"
            "  beta (negative, criterion, dimension Safety)\n"
            "    [grounding-eval] id: beta\n"
            "    [grounding-eval] question: Does it contain invented facts?\n"
            "    [grounding-eval] yes: At least one invented fact.\n"
            "    [grounding-eval] partial: A doubtful fact.\n"
            "    [grounding-eval] no: Nothing invented.\n"
            "  gamma (positive, criterion, dimension Safety)\n"
            "    [grounding-eval] id: gamma\n"
            "    [grounding-eval] question: Does it warn about risks?\n"
            "    [grounding-eval] yes: Clear warnings.\n"
            "    [grounding-eval] partial: Vague warnings.\n"
            "    [grounding-eval] no: No warnings.\n"
            "\n"
            "scoring\n"
            "  aggregation: over criteria, negatives invert, weights none\n"
        )

    def test_round3_marks(self, capsys: pytest.CaptureFixture[str]) -> None:
        """round3 by id: the document's ids, principles, v4 definitions and Safety marked as its words."""
        code, out, _ = _show(capsys, "round3")
        assert code == 0
        lines = out.splitlines()
        assert lines[0] == "rubric round3 3.0.0 (prompt round3-p1, extends v4)"
        assert "  1. [methods-document] principle: actionability outranks accuracy" in lines
        assert "     [grounding-eval] instruction:" in lines
        assert "  [methods-document] id: Safety" in lines and "  [grounding-eval] id: Accuracy" in lines
        at = lines.index("  source_fidelity (positive, criterion, dimension Accuracy)")
        assert lines[at + 1 : at + 4] == [
            "    [methods-document] id: source_fidelity",
            "    [grounding-eval] question:",
            "        Is every specific claim in the answer grounded in the provided source content (the JKB",
        ]
        assert "    [methods-document] yes:" in lines[at + 4 :][:4]
        assert "  [grounding-eval] core:" in out
        assert "  source_fidelity_gate: fail_row true, penalty 0" in lines

    @pytest.mark.parametrize("name", ["v3", "v4", "round3"])
    def test_every_text_marked(self, capsys: pytest.CaptureFixture[str], name: str) -> None:
        """Every criterion id and guidance principle appears behind the mark the file gives it."""
        rubric = load_rubric(RUBRICS_DIR / f"{name}.yaml")
        code, out, _ = _show(capsys, name)
        assert code == 0
        for c in rubric.criteria:
            assert f"    [{c.provenance['id']}] id: {c.id}\n" in out
        for n, g in enumerate(rubric.guidance, 1):
            assert f"  {n}. [{g.provenance['principle']}] principle: {g.principle}\n" in out
        assert all(len(line) <= 100 for line in out.splitlines() if not line.startswith("file: ")), out

    def test_module_entry_point(self) -> None:
        """``python -m grounding_eval rubric show v4`` from another directory."""
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rubric", "show", "v4"],
            capture_output=True, text=True, cwd=REPO / "tests", check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("rubric v4 4.0.0 (prompt v4-p1, extends v3)\n")


class TestRubricShowErrors:
    """Exit 2, nothing on stdout, one line on stderr."""

    def test_unknown_rubric(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Neither an id nor a file."""
        code, out, err = _show(capsys, "v9")
        assert (code, out) == (2, "")
        assert err.startswith("grounding-eval: error: unknown rubric 'v9': neither a rubric id (")
        assert err.endswith(") nor a rubric file\n") and err.count("\n") == 1

    def test_invalid_rubric_file(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        """A file that fails validation is named, with its problem."""
        path = tmp_path / "bad.yaml"
        path.write_text(MINI.read_text(encoding="utf-8").replace("polarity: negative", "polarity: sideways"))
        code, out, err = _show(capsys, str(path))
        assert (code, out) == (2, "")
        assert err == (
            f"grounding-eval: error: {path}: criterion 'beta': polarity must be positive or negative "
            "(got 'sideways')\n"
        )

    def test_missing_argument(self, capsys: pytest.CaptureFixture[str]) -> None:
        """No rubric named: argparse's one line, exit 2."""
        with pytest.raises(SystemExit) as info:
            main(["rubric", "show"])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "RUBRIC_ID_OR_PATH" in err


@pytest.mark.parametrize(
    ("name", "marks"),
    [("docs_qa", ("[seed]", "[grounding-eval]")), ("factual_accuracy", ("[seed]", "[grounding-eval]"))],
)
def test_the_other_rubric_formats_are_shown_with_their_marks(
    capsys: pytest.CaptureFixture[str], name: str, marks: tuple[str, ...]
) -> None:
    """docs_qa (pass/fail/n-a) and factual_accuracy (claim verdicts) have loaders of their own."""
    code, out, err = _show(capsys, name)
    assert (code, err) == (0, "")
    assert name in out.splitlines()[0] or name in out[:300]
    for mark in marks:
        assert mark in out, mark
