"""End to end: the pinned promptfoo runs our provider and assertion, and its JSON output is checked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.promptfoo_runs import EvalRun, run_eval, shared_group
from tests.scores import query_id, row_scores, sample_round_record

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.e2e


# Every sample round's rows as graded by the Python entry files (assertions/verifier.py, judge.py,
# composite.py: a fresh Python per call), recorded before the shipped configs moved to the warm workers
# of assertions/grounding.cjs. The shipped configs must give every row the same pass, score and named
# scores. The file is the judge of "no verdict change", so it changes only on purpose: re-record it with
# scripts/record_sample_scores.py (--check lists what moved) and say in the commit which rows moved and why.
BEFORE_WORKERS = REPO / "tests" / "fixtures" / "sample_rounds" / "named_scores.json"
RERECORD = "a deliberate change? re-record with scripts/record_sample_scores.py and say why in the commit"


def _polarity(rubric: str) -> dict[str, str]:
    """The mark each criterion's line carries, read from the rubric files themselves (and the rubric each
    one extends): a negative criterion "No = good", a safety check "Yes = safe"."""
    marks: dict[str, str] = {}
    while rubric:
        document = yaml.safe_load((REPO / "rubrics" / f"{rubric}.yaml").read_text(encoding="utf-8"))
        for c in document.get("criteria") or ():
            if c.get("kind") == "safety":
                marks.setdefault(c["id"], "Yes = safe")
            elif c.get("polarity") == "negative":
                marks.setdefault(c["id"], "No = good")
        rubric = document.get("extends") or ""
    return marks


def _same_verdicts_as_before(config: str, rows: list[dict[str, Any]]) -> None:
    recorded = json.loads(BEFORE_WORKERS.read_text(encoding="utf-8"))[config]
    now = sample_round_record(rows)
    assert len(now) == len(recorded), RERECORD
    assert max(len(r["namedScores"]) for r in rows) <= 8, config  # the reviewer's chips, at most 8
    for before, after in zip(recorded, now, strict=True):
        assert after == before, (config, before["item_id"], before["condition"], RERECORD)


def test_small_config(tmp_path: Path) -> None:
    """A passing row, a failing row and a missing recording: exit 100, each row as promptfoo reports it."""
    run = run_eval(REPO / "tests" / "fixtures" / "e2e" / "promptfooconfig.yaml", tmp_path)
    assert run.returncode == 100, run.tail()
    rows = {query_id(row): row for row in run.rows()}
    passing, failing, missing = rows["e2e-pass"], rows["e2e-fail"], rows["e2e-missing"]

    assert passing["success"] is True
    assert row_scores(passing)["deterministic_verifier_score"] == 1.0
    assert row_scores(passing)["phone_org_score"] == 1.0
    assert passing["response"]["metadata"]["recorded_fixture"] == "tests/fixtures/e2e/answers.yaml"

    assert failing["success"] is False
    assert row_scores(failing)["deterministic_verifier_score"] == 0.0
    reason = "\n".join(c["reason"] for c in failing["gradingResult"]["componentResults"])
    assert (
        "(888) 529-5277 is given for Lone Star Legal Aid but belongs to Legal Aid of NorthWest Texas"
        in reason
    )
    assert "HALLUCINATED_URL https://www.legalaidchicago.org/no-such-page" in reason
    # Each check is a component (its line in the details), and not a chip of its own.
    checks = {c.get("assertion", {}).get("value") for c in failing["gradingResult"]["componentResults"]}
    assert {f"grounding_eval verifier: {c}" for c in ("url_allowlist", "phone_org", "jurisdiction")} <= checks
    assert set(failing["namedScores"]) == {"deterministic_verifier_score"}

    assert missing["success"] is False and missing["failureReason"] == 2
    assert "no recorded answer for query 'e2e-missing' under 'C0'" in (missing.get("error") or "")


@pytest.mark.xdist_group(shared_group("configs/verifier_demo.yaml"))
def test_verifier_demo_every_row_has_verifier_scores(shared_eval: Callable[[str], EvalRun]) -> None:
    """The verifier demo: 6 sample questions × C0/C1/C1.5, every row graded with named scores."""
    if shutil.which("npx") is None:
        pytest.fail("npx is not on PATH")
    run = shared_eval("configs/verifier_demo.yaml")
    assert run.returncode == 100, run.tail()
    rows = run.rows()
    assert len(rows) == 18
    assert {row["prompt"]["label"].split(":")[0] for row in rows} == {"C0", "C1", "C1.5"}
    for row in rows:
        # promptfoo's failureReason: 0 none, 1 an assertion failed, 2 an error (e.g. from the provider).
        assert row["failureReason"] in (0, 1), row.get("error")
        assert row["response"]["metadata"]["recorded_fixture"] == "datasets/sample/recorded_answers.yaml"
        assert "deterministic_verifier_score" in row_scores(row), query_id(row)
        assert "jurisdiction_score" in row_scores(row)
    assert any(row["success"] for row in rows) and not all(row["success"] for row in rows)
    _same_verdicts_as_before("configs/verifier_demo.yaml", rows)


def test_swapping_the_dataset_needs_no_code_change(tmp_path: Path) -> None:
    """The main config on a second tiny dataset, chosen by $GROUNDING_EVAL_DATASET alone."""
    from grounding_eval.data.conditions import render_prompt
    from grounding_eval.data.dataset import load_dataset

    tiny = "tests/fixtures/data/tiny"
    run = run_eval("configs/verifier_demo.yaml", tmp_path, {"GROUNDING_EVAL_DATASET": tiny})
    assert run.returncode in (0, 100), run.tail()
    rows = run.rows()
    assert sorted((query_id(r), r["prompt"]["label"].split(":")[0]) for r in rows) == [
        (q, c) for q in ("tiny-oh-01", "tiny-wv-01") for c in ("C0", "C1", "C1.5")
    ]
    dataset = load_dataset(REPO / tiny)
    for row in rows:
        assert row["failureReason"] in (0, 1), row.get("error")
        assert row["response"]["metadata"]["recorded_fixture"] == f"{tiny}/recorded_answers.yaml"
        condition = row["prompt"]["label"].split(":")[0]
        # promptfoo rendered exactly the prompt our own renderer (and the snapshots) show.
        assert row["prompt"]["raw"] == render_prompt(condition, dataset.item(query_id(row)), dataset)
    c15 = next(r for r in rows if query_id(r) == "tiny-oh-01" and r["prompt"]["label"].startswith("C1.5"))
    assert row_scores(c15)["quotation_score"] == 1.0
    # The verifier follows the dataset too: the tiny dataset has no allowlist file, so one is built
    # from its index, and the reason says so; it has no directory, so the pack's directory of every state
    # is named.
    for row in rows:
        verifier = next(
            c
            for c in row["gradingResult"]["componentResults"]
            if "verifier_inputs" in (c.get("metadata") or {})
        )
        inputs = verifier["metadata"]["verifier_inputs"]
        assert inputs["allowlist"] == {"path": f"{tiny}/jkb_index.csv (built from the index)", "urls": 3}
        assert inputs["directory"]["path"].endswith("datasets/directory/organizations.yaml")


ROUNDS = {  # config → (rubric, items, conditions)
    "configs/round1a.yaml": ("v3", 5, 2),
    "configs/round1b.yaml": ("v3", 12, 2),
    "configs/round2.yaml": ("v3", 5, 3),
    "configs/round2b.yaml": ("v4", 5, 3),
    "configs/round3.yaml": ("round3", 8, 3),
    "promptfooconfig.yaml": ("round3", 8, 3),
}


@pytest.mark.parametrize(
    "config", [pytest.param(config, marks=pytest.mark.xdist_group(shared_group(config))) for config in ROUNDS]
)
def test_round_config_offline(config: str, shared_eval: Callable[[str], EvalRun]) -> None:
    """Each round runs offline end to end: every row has the judge's per-criterion scores, the verifier's
    scores and the round's composite."""
    rubric, items, conditions = ROUNDS[config]
    run = shared_eval(config)
    assert run.returncode in (0, 100), run.tail()
    rows = run.rows()
    out = run.out
    assert len(rows) == items * conditions
    _same_verdicts_as_before(config, rows)
    for row in rows:
        named = row_scores(row)
        where = f"{query_id(row)} {row['prompt']['label'].split(':')[0]}"
        assert row["failureReason"] in (0, 1), (where, row.get("error"))
        assert f"{rubric}.llm_judge_score" in named, where
        assert sum(k.startswith(f"{rubric}.") and ".dimension." not in k for k in named) >= 19, where
        assert "deterministic_verifier_score" in named and "composite" in named, where
        # The row's reason is the deciding line; the composite's component adds its formula below it.
        reason, _, formula = row["gradingResult"]["componentResults"][0]["reason"].partition("\n")
        assert row["gradingResult"]["reason"] == reason, where
        assert reason.startswith(("PASS: composite ", "FAIL: ", "UNSAFE (")), reason
        assert formula.startswith(("v3 composite:", "v4 composite:", "Round 3:")), formula
        judge = next(
            c for c in row["gradingResult"]["componentResults"] if (c.get("metadata") or {}).get("judge")
        )
        assert judge["metadata"]["judge"]["provider"].startswith(
            "replay:datasets/sample/judge_replies/"
        )  # via {dataset}
        # Stored once: each criterion's verdict is one line of one component of the row (a safety check's
        # own, or its dimension's), none nested inside the judge's.
        components = row["gradingResult"]["componentResults"]
        assert not any(c.get("componentResults") for c in components), where
        criteria = [
            c
            for c in components
            if str((c.get("assertion") or {}).get("value")).startswith(f"judge {rubric}:")
        ]
        verdicts = judge["metadata"]["judge"]["verdicts"]
        lines = [ln.partition(" — ")[0] for c in criteria for ln in c["reason"].splitlines()]
        marked = [re.sub(r" \((?:No = good|Yes = safe)\)(?=: )", "", ln) for ln in lines]  # polarity marks
        assert sorted(ln for ln in marked if ln.partition(": ")[0] in verdicts) == sorted(
            f"{cid}: {word}" for cid, word in verdicts.items()
        ), where
        polarity = _polarity(rubric)
        assert [ln.partition(": ")[0] for ln in lines if " (" in ln.partition(": ")[0]] == [
            f"{ln.partition(': ')[0]} ({polarity[ln.partition(': ')[0]]})"
            for ln in marked
            if ln.partition(": ")[0] in polarity
        ], where
        # A passing judgment shows no red criterion; the safety checks come first.
        if judge["pass"]:
            assert all(c["pass"] for c in criteria), where
        if rubric == "round3":
            first = [c["assertion"]["value"].rpartition(": ")[2] for c in criteria[:3]]
            assert first == ["hallucinated_citation", "jurisdiction_correct", "org_attribution_correct"], (
                where
            )
    # The report reads the same file: one group per condition, nothing unscored, passes as promptfoo counted.
    from grounding_eval.analysis.summary import load_rows, summarize

    groups = summarize(load_rows(out), ["condition"])
    assert [g.rows for g in groups] == [items] * conditions
    assert sum(g.passed for g in groups) == sum(bool(r["success"]) for r in rows)
    assert all(g.unscored == 0 and len(g.composites) == items for g in groups)


@pytest.mark.parametrize("config", ["promptfooconfig.yaml", "configs/round1a.yaml"])
def test_live_switch_names_every_missing_key(config: str, tmp_path: Path) -> None:
    """`-r file://providers/live.yaml` swaps in the three live models; with no keys promptfoo stops
    before any call, naming each missing variable (no network is touched)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")}  # fmt: skip
    result = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", config, "-r", "file://providers/live.yaml", "--filter-first-n", "1",
         "--no-progress-bar", "--no-table", "--no-cache"],
        cwd=REPO, env={**env, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode != 0
    for line in (
        "Missing ANTHROPIC_API_KEY (claude-sonnet-4.5 (anthropic:messages:claude-sonnet-4-5-20250929))",
        "Missing GOOGLE_API_KEY (gemini-2.5-pro (google:gemini-2.5-pro))",
        "Missing OPENAI_API_KEY (gpt-4o-mini (openai:chat:gpt-4o-mini))",
    ):
        assert line in output, output[-2000:]


def test_main_job_on_a_swapped_dataset(tmp_path: Path) -> None:
    """promptfooconfig.yaml on the tiny dataset, chosen by $GROUNDING_EVAL_DATASET alone: its items, its
    recorded answers and its recorded judge replies, with no change to code or config."""
    tiny = "tests/fixtures/data/tiny"
    run = run_eval("promptfooconfig.yaml", tmp_path, {"GROUNDING_EVAL_DATASET": tiny})
    assert run.returncode in (0, 100), run.tail()
    rows = run.rows()
    assert sorted(r["prompt"]["label"].split(":")[0] for r in rows) == ["C0", "C1", "C1.5"]
    for row in rows:
        assert query_id(row) == "tiny-hr-wv-01"
        assert row["failureReason"] in (0, 1), row.get("error")
        assert "round3.core_mean" in row_scores(row) and "composite" in row_scores(row)
        judge = next(
            c for c in row["gradingResult"]["componentResults"] if (c.get("metadata") or {}).get("judge")
        )
        assert judge["metadata"]["judge"]["provider"] == f"replay:{tiny}/judge_replies/round3.yaml"
    c15 = next(r for r in rows if r["prompt"]["label"].startswith("C1.5"))
    assert (
        "Tiny Handbook: notices before a hearing" in c15["prompt"]["raw"]
    )  # the dataset's own article, shown
    assert row_scores(c15)["quotation_score"] == 1.0
