"""The report reads a results file of the layout before the reviewer's chips exactly as it reads today's.

Before issue 21 every criterion, dimension and verifier check was a named score (42 per Round 3 row);
now a row has at most 8, and the rest are in each result's metadata (``scores``). The fixture
``tests/fixtures/report/main_job_before_chips.json.gz`` is the main job (``promptfooconfig.yaml``) as
promptfoo 0.121.20 wrote it with grounding-eval at e9c5a04, the last commit of the old layout (local
paths in promptfoo's header replaced). Its rows must read, field for field, as a fresh run of the same
job does — scores, verdicts, safety findings and their reasons, pass, composite — and give the same
report, effects and criteria tables.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from tests.promptfoo_runs import REPO, EvalRun, shared_group

BEFORE = REPO / "tests" / "fixtures" / "report" / "main_job_before_chips.json.gz"
# Differ by design: each run's own row ids, and the judges' calls (named without a local path since).
_NOT_COMPARED = {"result_id", "judge_calls"}


def _before(tmp_path: Path) -> Path:
    path = tmp_path / "before.json"
    path.write_bytes(gzip.decompress(BEFORE.read_bytes()))
    return path


def _fields(row: ReportRow) -> dict[str, object]:
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.name not in _NOT_COMPARED}


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_both_layouts_read_alike(tmp_path: Path, shared_eval: Callable[[str], EvalRun]) -> None:
    run = shared_eval("promptfooconfig.yaml")
    before = _before(tmp_path)
    old_rows = json.loads(before.read_text(encoding="utf-8"))["results"]["results"]
    new_rows = run.rows()
    assert (
        min(len(r["namedScores"]) for r in old_rows) == 42
        and max(len(r["namedScores"]) for r in new_rows) <= 8
    )
    key = lambda r: (r.query_id, r.keys["condition"])  # noqa: E731
    old = {key(r): _fields(r) for r in load_rows(before)}
    new = {key(r): _fields(r) for r in load_rows(run.out)}
    assert old.keys() == new.keys() and len(old) == 24
    for k in old:
        # The new file keeps the prompt, not the source vars (lifted by the beforeAll hook): a source is
        # the prompt the model was shown, which holds the old file's source texts.
        was, now = old[k].pop("sources"), new[k].pop("sources")
        assert all(text in dict(now).get("prompt shown to the model", "") for _, text in was), k
        assert bool(was) == bool(now), k  # C0: no source either way
        assert new[k]["test_metadata"].pop("source_vars") == [
            "jkb_directory",
            "jkb_full_content",
            "jurisdiction",
        ]
        # Round 3's citation rule (issue 38) is carried in the test's metadata since the old file.
        assert new[k]["test_metadata"].pop("citation_check") == "hard"
        # So are whose the chosen records are and their URLs (issue 41): one entry per record id shown.
        meta = new[k]["test_metadata"]
        shown = {*meta["directory_ids"], *meta["full_content_ids"]}
        assert set(meta.pop("grounding_organizations")) == set(meta.pop("grounding_urls")) == shown, k
        # The citations check (issue 22) came after the old file was written: its score and findings
        # are new.
        if "citation_score" not in old[k]["scores"]:
            new[k]["scores"] = {n: v for n, v in new[k]["scores"].items() if n != "citation_score"}
        if not any(f.check == "citations" for f in old[k]["findings"]):
            new[k]["findings"] = tuple(f for f in new[k]["findings"] if f.check != "citations")
        # ... so the old file records no citations (None: "not recorded", never 0 — issue 38), and the
        # undecided findings derived for it (it predates them too) miss its citations; the new file
        # records its undecided findings (not derived), whose URLs are the old file's.
        if old[k]["citations"] is None:
            assert new[k].pop("citations") is not None and old[k].pop("citations") is None, k
            assert old[k].pop("undecided_derived") and not new[k].pop("undecided_derived"), k
            kinds = ("URL",)
            assert {n: c for n, c in new[k].pop("undecided").items() if n in kinds} == old[k].pop(
                "undecided"
            ), k
        # The old file's judge metadata did not list the negative criteria yet (the report reads their
        # polarity from the rubric then).
        if not old[k]["negative"]:
            new[k]["negative"] = frozenset()
        # Round 3's three safety.<check> chips are one `safety` chip since issue 42: their least.
        scores: dict[str, float] = dict(old[k]["scores"])
        checks = [n for n in scores if n.startswith("safety.") and n != "safety.source_fidelity"]
        assert len(checks) == 3, k
        old[k]["scores"] = {n: v for n, v in scores.items() if n not in checks} | {
            "safety": min(scores[n] for n in checks)
        }
        assert new[k] == old[k], k


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
@pytest.mark.parametrize("view", [[], ["--effects"], ["--criteria"], ["--rates"]])
def test_the_same_report_from_either_layout(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun], capsys: pytest.CaptureFixture[str], view: list[str]
) -> None:
    run = shared_eval("promptfooconfig.yaml")
    before = _before(tmp_path)
    texts = []
    for path in (before, run.out):
        assert main(["report", str(path), *view]) == 0
        text = capsys.readouterr().out.replace(str(path), "RESULTS")
        text = text.split("\nJudge calls, tokens and cost")[0]  # the judges' table names them anew
        # The C1 and C1.5 records (issue 41) are named by organisation only in files written since.
        texts.append(text.split("\nC1 and C1.5 records")[0])
    # The citation check (issue 22) came after the old file: its citations are "not recorded" there, and
    # so are the undecided ones: the findings table (issue 38) is left out of the comparison.
    first, second = (_without_findings(text) for text in texts)
    assert first == second


def _without_findings(text: str) -> str:
    """The report without the findings table (its title to the next blank line)."""
    out, inside = [], False
    for line in text.splitlines():
        inside = line.startswith("Undecided findings and legal citations") or (inside and bool(line.strip()))
        if not inside:
            out.append(line)
    return "\n".join(out)
