"""grounding-eval report --figures DIR (issue 23): every figure as SVG and PDF, titled, reproducible byte
for byte, good always the same colour, hostile labels drawn as text; --html and --print."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grounding_eval.analysis.figures import BAD, GOOD, PARTIAL
from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES, REPO, row, write

SVG = "{http://www.w3.org/2000/svg}"
ROUND3 = FIXTURES / "round3.json"
# The figures of the Round 3 fixture (one model, C0 / C1 / C1.5), each as .svg and .pdf.
NAMES = ["pass-rate", "mean-composite", "condition-effects", "verdicts-round-3-recorded-sample-answers-judge"]


def _figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *results: Path, folder: str = "figs"
) -> Path:
    """Run ``report RESULTS… --figures DIR``: it prints one line per file it wrote, each file in DIR."""
    out = tmp_path / folder
    assert main(["report", *map(str, results), "--figures", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted(f"wrote figure {path}" for path in out.iterdir())
    return out


def _texts(svg: Path) -> list[str]:
    """Every text drawn in the SVG (parsed as XML: a label that broke out of its element fails here)."""
    root = ET.parse(svg).getroot()
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _fill(svg: Path, gid: str) -> str | None:
    """The fill colour of the mark whose gid is ``gid`` (None when no such mark is drawn); a hatched mark
    is filled with a pattern, whose background rectangle has the colour."""
    root = ET.parse(svg).getroot()
    for g in root.iter(f"{SVG}g"):
        if g.get("id") == gid:
            (path,) = g.iter(f"{SVG}path")
            style = dict(p.split(": ", 1) for p in path.get("style", "").split("; ") if p)
            fill = style["fill"]
            if fill.startswith("url(#"):
                (pattern,) = (p for p in root.iter(f"{SVG}pattern") if p.get("id") == fill[5:-1])
                fill = pattern.find(f"{SVG}rect").get("fill")  # type: ignore[union-attr]
            return fill
    return None


class TestFiguresFolder:
    """``--figures DIR``: SVG and PDF per figure, stable names, titles and axis titles."""

    def test_every_figure_as_svg_and_pdf(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        out = _figures(tmp_path, capsys, ROUND3)
        assert sorted(p.name for p in out.iterdir()) == sorted(
            f"{n}.{s}" for n in NAMES for s in ("svg", "pdf")
        )
        for name in NAMES:
            assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF-")
            assert ET.parse(out / f"{name}.svg").getroot().tag == f"{SVG}svg"
        rates = _texts(out / "pass-rate.svg")
        for text in ("Pass rate by round, model and condition", "Pass rate (share of scored rows)",
                     "Condition, grouped by round and model", "C0", "C1", "C1.5"):  # fmt: skip
            assert text in rates, text
        assert "recorded-sample-answers" in "".join(rates)  # the model, whole (wrapped in lines, never cut)
        effects = _texts(out / "condition-effects.svg")
        assert any(t.startswith("Paired condition effects") for t in effects)
        assert any(t.startswith("Mean paired difference per item") for t in effects)
        verdicts = _texts(out / "verdicts-round-3-recorded-sample-answers-judge.svg")
        assert "share of rows (n = 8)" in verdicts and "hateful_language (No = good)" in verdicts
        assert any(t.startswith("Verdicts per criterion: round 3") for t in verdicts)

    def test_the_same_data_give_the_same_bytes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        first = _figures(tmp_path, capsys, ROUND3, folder="a")
        second = _figures(tmp_path, capsys, ROUND3, folder="b")
        for path in first.iterdir():
            assert path.read_bytes() == (second / path.name).read_bytes(), path.name
        svg = (first / "pass-rate.svg").read_text(encoding="utf-8")
        assert "<dc:date>" not in svg and b"CreationDate" not in (first / "pass-rate.pdf").read_bytes()

    def test_a_folder_that_cannot_be_made_is_one_line(self, tmp_path: Path) -> None:
        blocker = tmp_path / "file"
        blocker.write_text("x", encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "report", str(ROUND3), "--figures", str(blocker / "figs")],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines() == [
            f"grounding-eval: error: {blocker / 'figs'}: cannot make the figures folder (Not a directory)"
        ]


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        # hateful_language is a negative criterion (its good answer is No): No is drawn good.
        (
            {"hateful_language": "No", "clear_next_steps": "Yes"},
            {"hateful_language": "good", "clear_next_steps": "good"},
        ),
        (
            {"hateful_language": "Yes", "clear_next_steps": "No"},
            {"hateful_language": "bad", "clear_next_steps": "bad"},
        ),
        (
            {"hateful_language": "Partial", "clear_next_steps": "Partial"},
            {"hateful_language": "partial", "clear_next_steps": "partial"},
        ),
    ],
    ids=["no-is-good", "yes-is-bad", "partial"],
)
def test_good_is_always_the_same_colour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], verdicts: dict[str, str], expected: dict[str, str]
) -> None:
    """Each criterion's whole bar is one segment: its colour is the good, partial or bad colour as its
    polarity says, read from the SVG's fill (the segment ids are criterion index, panel, kind)."""
    rows = [row(f"i{i}", c, composite=0.5, verdicts=verdicts) for i in range(3) for c in ("C0", "C1")]
    out = _figures(tmp_path, capsys, write(tmp_path / "r.json", rows))
    svg = out / "verdicts-round-3-model-a-judge.svg"
    colours = {"good": GOOD, "partial": PARTIAL, "bad": BAD}
    for index, criterion in enumerate(sorted(verdicts)):  # the criteria are drawn in name order
        for panel in (0, 1):
            for kind, colour in colours.items():
                fill = _fill(svg, f"mark-share-{index}-{panel}-{kind}")
                assert fill == (colour if kind == expected[criterion] else None), (
                    criterion,
                    panel,
                    kind,
                    fill,
                )
    assert "hateful_language (No = good)" in _texts(svg) and "clear_next_steps" in _texts(svg)


def test_polarity_comes_from_the_judge_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rubric not shipped here: the rows' ``metadata.judge.negative`` says which criteria are No-is-good."""
    rows = [row(f"i{i}", c, composite=0.5, verdicts={"bad_thing": "No", "good_thing": "No"}) for i in range(2)
            for c in ("C0", "C1")]  # fmt: skip
    for r in rows:
        judge = r["gradingResult"]["componentResults"][0]["metadata"]["judge"]
        judge["rubric_id"], judge["negative"] = "our_own_rubric", ["bad_thing"]
    out = _figures(tmp_path, capsys, write(tmp_path / "r.json", rows))
    svg = out / "verdicts-round-3-model-a-judge.svg"
    assert _fill(svg, "mark-share-0-0-good") == GOOD and _fill(svg, "mark-share-0-0-bad") is None  # bad_thing
    assert _fill(svg, "mark-share-1-0-bad") == BAD and _fill(svg, "mark-share-1-0-good") is None  # good_thing
    assert "bad_thing (No = good)" in _texts(svg) and "good_thing" in _texts(svg)


HOSTILE = "<script>alert(1)</script></svg>$x^2$ \"q\" & 'a'"


def test_hostile_labels_are_drawn_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model, condition and criterion holding markup, quotes and mathtext: each SVG still parses, its
    text is the label as written (no mathtext), and the HTML page carries no markup from it."""
    rows = [
        row(f"i{i}", c, composite=0.25 * (i + 1), provider=HOSTILE, verdicts={HOSTILE[:30]: "Yes", "clear_next_steps": "No"})
        for i in range(3) for c in ("C0", HOSTILE[:20])
    ]  # fmt: skip
    results = write(tmp_path / "r.json", rows)
    out = _figures(tmp_path, capsys, results)
    drawn = " ".join(t for svg in out.glob("*.svg") for t in _texts(svg))
    assert "$x^2$" in drawn and "<script>alert(1)</script></svg>" in drawn  # as written, whole
    page_path = tmp_path / "report.html"
    assert main(["report", str(results), "--html", str(page_path)]) == 0
    capsys.readouterr()
    page = page_path.read_text(encoding="utf-8")
    assert "<script" not in page and '"q"' not in page
    assert page.count("<svg ") == page.count("</svg>") == page.count("<figure>")  # no label closed an svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/svg&gt;$x^2$" in page


class TestPrinted:
    """What ``report`` prints: with ``--html`` one line naming the file; the report only with ``--print``."""

    def test_html_prints_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        html = tmp_path / "report.html"
        assert main(["report", str(ROUND3), "--html", str(html)]) == 0
        assert capsys.readouterr().out == f"wrote report to {html}\n"
        assert html.read_text(encoding="utf-8").startswith("<!doctype html>")

    def test_print_adds_the_text_report(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["report", str(ROUND3)]) == 0
        text = capsys.readouterr().out
        html = tmp_path / "report.html"
        assert main(["report", str(ROUND3), "--html", str(html), "--print"]) == 0
        assert capsys.readouterr().out == text + f"wrote report to {html}\n"

    def test_nothing_to_draw_says_so(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        figs = tmp_path / "figs"
        assert main(["report", str(write(tmp_path / "r.json", [])), "--figures", str(figs)]) == 0
        assert capsys.readouterr().out == f"wrote no figure to {figs}: these results hold nothing to draw\n"
        assert list(figs.iterdir()) == []

    def test_json_stays_one_document(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """``--json --print``: stdout is the JSON report alone; the line naming the page goes to stderr."""
        html = tmp_path / "report.html"
        assert main(["report", str(ROUND3), "--json", "--print", "--html", str(html)]) == 0
        printed = capsys.readouterr()
        assert isinstance(json.loads(printed.out), dict) and printed.err == f"wrote report to {html}\n"

    def test_figures_and_html_together(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        html, figs = tmp_path / "report.html", tmp_path / "figs"
        assert main(["report", str(ROUND3), "--html", str(html), "--figures", str(figs)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[-1] == f"wrote report to {html}" and len(lines) == 2 * len(NAMES) + 1
        # The page embeds the same drawings the folder holds (ids prefixed, prolog dropped).
        page = html.read_text(encoding="utf-8")
        for name in NAMES:
            svg = (figs / f"{name}.svg").read_text(encoding="utf-8")
            assert svg.split("<svg", 1)[1][:300].split(">", 1)[0] in page


def test_the_assertion_path_never_imports_matplotlib() -> None:
    """Every module of the promptfoo boundary, the verifier, the judge and the scoring, imported in a fresh
    process: matplotlib (and the figures module) are not among the modules loaded."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import grounding_eval.promptfoo, grounding_eval.verifier, grounding_eval.judge, grounding_eval.scoring\n"
        "names = []\n"
        "for pkg in (grounding_eval.promptfoo, grounding_eval.verifier, grounding_eval.judge, grounding_eval.scoring):\n"
        "    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(info.name); names.append(info.name)\n"
        "assert len(names) > 30, names\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib' or m.endswith('.figures')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
