"""grounding-eval report --effects: paired condition effects, Wilson pass rates, verdict shares (hand tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.effects import criterion_shares, paired_effects, pass_rates
from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES, row, write

# Four items under C0, C1, C1.5. i3's C1 row is unscored (judge reply unscorable: its composite must not be
# used), i4 has no C1.5 row. By hand (to − from, per item):
#   C1 − C0:   i1 +0.4, i2 −0.1, i4 +0.6 (i3 unscored)        n 3, mean 0.3,    missing 0, unscored 1
#   C1.5 − C1: i1 +0.2, i2 +0.6 (i3 unscored, i4 missing)      n 2, mean 0.4,    missing 1, unscored 1
#   C1.5 − C0: i1 +0.6, i2 +0.5, i3 +0.5 (i4 missing)          n 3, mean 1.6/3,  missing 1, unscored 0
# Sign-flip p (exact): [0.4, −0.1, 0.6] 4/8; [0.2, 0.6] 2/4; [0.6, 0.5, 0.5] 2/8.
# 95 % interval (the one the sign-flip test inverts): with 2 or 3 items no sign pattern is rare enough to
# reject any shift at 5 % (the least p is 2/8), so the interval is unbounded: None.
SCORES = {
    ("i1", "C0"): 0.2, ("i1", "C1"): 0.6, ("i1", "C1.5"): 0.8,
    ("i2", "C0"): 0.5, ("i2", "C1"): 0.4, ("i2", "C1.5"): 1.0,
    ("i3", "C0"): 0.0, ("i3", "C1"): 0.9, ("i3", "C1.5"): 0.5,
    ("i4", "C0"): 0.3, ("i4", "C1"): 0.9,
}  # fmt: skip
EXPECTED = [
    ("C0", "C1", 3, 0.3, None, None, 0.5, 0, 1),
    ("C1", "C1.5", 2, 0.4, None, None, 0.5, 1, 1),
    ("C0", "C1.5", 3, 1.6 / 3, None, None, 0.25, 1, 0),
]
C0_VERDICTS = {"i1": "Yes", "i2": "Partial", "i3": "No", "i4": "No"}


def _rows() -> list[dict[str, Any]]:
    out = []
    for (item, condition), value in SCORES.items():
        unscored = (item, condition) == ("i3", "C1")
        out.append(row(item, condition, composite=value, success=value >= 0.5,
                       verdicts={"clear_next_steps": C0_VERDICTS[item] if condition == "C0" else "Yes"},
                       judge_status="unscored" if unscored else "scored"))  # fmt: skip
    return out


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write(tmp_path / "results.json", _rows())


def test_paired_effects_hand_table(results: Path) -> None:
    effects = [e for e in paired_effects(load_rows(results)) if e.metric == "composite"]
    got = [
        (e.from_, e.to, e.n, e.mean_diff, e.ci_low, e.ci_high, e.p_value, e.n_missing, e.n_unscored)
        for e in effects
    ]
    assert len(got) == len(EXPECTED)
    for g, want in zip(got, EXPECTED, strict=True):
        assert g[:3] == want[:3] and g[7:] == want[7:] and g[4:6] == want[4:6]
        assert (g[3], g[6]) == pytest.approx((want[3], want[6]), abs=1e-6)


def test_cli_json_list(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results), "--effects", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert isinstance(entries, list) and entries
    for key in ("provider", "from", "to", "metric", "n", "mean_diff", "ci_low", "ci_high", "p_value"):
        assert all(key in e for e in entries), key
    first = entries[0]
    assert (first["provider"], first["from"], first["to"], first["metric"], first["n"]) == (
        "model-a",
        "C0",
        "C1",
        "composite",
        3,
    )
    assert first["mean_diff"] == pytest.approx(0.3)


def test_the_plain_json_report_carries_the_statistics(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --json`` (issue 41): the hand table's effects with raw and Holm-adjusted p, the paired
    pass-rate test, and the pass rates, without a second command."""
    assert main(["report", str(results), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["statistics"]
    assert stats["status"] == "computed" and stats["primary"] is None
    composite = [e for e in stats["effects"] if e["metric"] == "composite"]
    assert [(e["from"], e["to"], e["n"]) for e in composite] == [w[:3] for w in EXPECTED]
    # Holm over the family's three p (0.5, 0.5, 0.25): 0.25·3 = 0.75, then max(0.75, 0.5·2) = 1.0 twice.
    assert [e["p_value"] for e in composite] == pytest.approx([0.5, 0.5, 0.25])
    assert [e["p_holm"] for e in composite] == pytest.approx([1.0, 1.0, 0.75])
    assert {e["family"] for e in composite} == {composite[0]["family"]}
    assert {(e["from"], e["to"]) for e in stats["effects"] if e["metric"] == "pass"} == {
        (w[0], w[1]) for w in EXPECTED
    }
    c0 = next(r for r in stats["pass_rates"] if r["condition"] == "C0")
    assert (c0["items"], c0["passed"]) == (4, 1)  # i1 0.2, i2 0.5, i3 0.0, i4 0.3: only i2 reaches 0.5


def test_cli_text(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results), "--effects"]) == 0
    out = capsys.readouterr().out
    assert "C1 − C0    composite  3  +0.300     unbounded  0.5          1" in out  # p, then Holm over 3
    assert "never imputed" in out


def test_models_are_compared_apart_and_across_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path / "a.json", [row("i1", "C0", composite=0.0), row("i1", "C1", composite=1.0)])
    b = write(tmp_path / "b.json", [row("i1", "C0", composite=0.5, provider="model-b"),
                                     row("i1", "C1", composite=0.25, provider="model-b")])  # fmt: skip
    assert main(["report", str(a), str(b), "--effects", "--json"]) == 0
    entries = {(e["provider"], e["metric"]): e for e in json.loads(capsys.readouterr().out)}
    assert entries[("model-a", "composite")]["mean_diff"] == 1.0
    assert entries[("model-b", "composite")]["mean_diff"] == -0.25


def test_repeats_are_averaged(tmp_path: Path) -> None:
    rows = [row("i1", "C0", composite=0.0), row("i1", "C0", composite=0.5), row("i1", "C1", composite=1.0)]
    (effect,) = [
        e for e in paired_effects(load_rows(write(tmp_path / "r.json", rows))) if e.metric == "composite"
    ]
    assert (effect.n, effect.mean_diff) == (1, 0.75)


def test_every_verifier_check_and_judge_score_is_compared(tmp_path: Path) -> None:
    scores = {"round3.llm_judge_score": 0.5, "deterministic_verifier_score": 1.0, "url_allowlist_score": 1.0,
              "round3.dimension.Safety": 0.5, "round3.clear_next_steps": 1.0}  # fmt: skip
    rows = [
        row("i1", "C0", composite=0.1, scores=scores),
        row("i1", "C1", composite=0.2, scores={**scores, "url_allowlist_score": 0.5}),
    ]
    metrics = [e.metric for e in paired_effects(load_rows(write(tmp_path / "r.json", rows)))]
    # Per-criterion scores are read as verdict shares (--criteria), not as effects; the pass-rate
    # difference follows the composite (issue 41).
    assert metrics == [
        "composite",
        "pass",
        "round3.llm_judge_score",
        "round3.dimension.Safety",
        "deterministic_verifier_score",
        "url_allowlist_score",
    ]


def test_pass_rates_with_wilson(results: Path) -> None:
    rates = {r["condition"]: r for r in pass_rates(load_rows(results))}
    # C0: 0.2, 0.5, 0.0, 0.3 → 1 of 4 passed. C1: i3 unscored → 3 scored, 2 passed (0.6, 0.9; 0.4 fails).
    assert (rates["C0"]["n"], rates["C0"]["passed"], rates["C0"]["unscored"]) == (4, 1, 0)
    assert (rates["C1"]["n"], rates["C1"]["passed"], rates["C1"]["unscored"]) == (3, 2, 1)
    # Wilson by hand for 1/4: centre (0.25 + z²/8)/(1 + z²/4), statsmodels 0.15.0: (0.0455872608097006, 0.6993581574175982)
    assert (rates["C0"]["ci_low"], rates["C0"]["ci_high"]) == (
        pytest.approx(0.0455872608097006, abs=1e-9),
        pytest.approx(0.6993581574175982, abs=1e-9),
    )
    assert list(rates) == ["C0", "C1", "C1.5"]


def test_criterion_shares(results: Path) -> None:
    shares = {(s["criterion"], s["condition"]): s for s in criterion_shares(load_rows(results))}
    c0 = shares[("clear_next_steps", "C0")]
    assert c0["counts"] == {"Yes": 1, "Partial": 1, "No": 2}
    assert c0["shares"] == {"Yes": 0.25, "Partial": 0.25, "No": 0.5}
    # The unscored C1 row has no verdicts to count.
    assert shares[("clear_next_steps", "C1")]["rows"] == 3


def test_real_round3_with_errors_and_unscored_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """A real configs/round3.yaml run (pinned promptfoo) with a provider error, a judge ERROR and an unscorable reply."""
    path = FIXTURES / "round3_errors.json"
    rows = load_rows(path)
    # hr-il-voucher-01 C0 (no judge reply, a hallucinated URL) is a scored failure as unsafe (issue 38),
    # with no composite: 2 rows unscored.
    assert sum(r.unscored for r in rows) == 2
    assert [(r.query_id, r.passed, r.composite) for r in rows if r.judge_missing and not r.unscored] == [
        ("hr-il-voucher-01", False, None)
    ]
    assert main(["report", str(path), "--effects", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    composite = {(e["from"], e["to"]): e for e in entries if e["metric"] == "composite"}
    # hr-wv-military-01 has no C1.5 answer (provider error); hr-il-voucher-01 C0 has no judge reply;
    # hr-mi-deposit-01 C1's judge reply is unscorable.
    assert (
        composite[("C0", "C1")]["n"]
        + composite[("C0", "C1")]["n_unscored"]
        + composite[("C0", "C1")]["n_missing"]
        == 8
    )
    assert composite[("C0", "C1")]["n"] == 6
    assert composite[("C1", "C1.5")]["n"] == 6
    assert composite[("C0", "C1.5")]["n"] == 6
    for e in composite.values():
        assert e["ci_low"] <= e["mean_diff"] <= e["ci_high"] and 0 < e["p_value"] <= 1


def test_the_parser_and_plain_report_stay_light(tmp_path: Path) -> None:
    """NumPy and SciPy are imported by the commands that need them, never when the parser is built."""
    import subprocess
    import sys

    path = write(tmp_path / "r.json", [row("i1", "C0", composite=0.5)])
    code = (
        "import sys; from grounding_eval.cli import main; main(['report', sys.argv[1]]); "
        "assert 'numpy' not in sys.modules and 'scipy' not in sys.modules, 'heavy import'"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_without_the_analysis_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = write(tmp_path / "r.json", [row("i1", "C0", composite=0.5)])
    code = "import sys; sys.modules['scipy'] = None; from grounding_eval.cli import main; sys.exit(main(['report', sys.argv[1], '--effects']))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stderr == (
        "grounding-eval: error: report --effects needs the analysis extra (scipy is not installed): "
        "pip install 'grounding-eval[analysis]'\n"
    )


def test_rates_and_criteria_commands(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results), "--rates", "--json"]) == 0
    rates = json.loads(capsys.readouterr().out)
    assert [(r["condition"], r["n"], r["passed"], r["unscored"]) for r in rates] == [
        ("C0", 4, 1, 0),
        ("C1", 3, 2, 1),
        ("C1.5", 3, 3, 0),
    ]
    assert main(["report", str(results), "--criteria"]) == 0
    out = capsys.readouterr().out
    assert "clear_next_steps  C0         4     Yes 1 (25%)  Partial 1 (25%)  No 2 (50%)" in out
