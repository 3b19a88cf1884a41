"""``demo_check``: promptfoo's exit 100 is success only for a complete run, of any config.

A killed promptfoo writes the rows it has, with errors on the rest, and still exits 100; the demo must
then fail. The expected rows come from the config the results file records. The checker is tested on
real promptfoo runs — shipped configs (each generator its own: the docs-QA one is not the rounds') and a
hand-written config with inline tests, var lists, CSV / JSONL / YAML-glob files, a per-test repeat, two
providers and ``--repeat`` — whose row count promptfoo itself decides; on results shaped like promptfoo's
for the failures it cannot be made to produce on demand; and ``scripts/demo`` with a stand-in ``npx``
that writes such a file and exits 100.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.demo_check import main, problems
from tests.promptfoo_runs import EvalRun, run_eval, shared_group

REPO = Path(__file__).resolve().parents[1]
MAIN_TESTS = [
    {
        "path": "file://datasets/generate.py:generate_tests",
        "config": {"dataset": "datasets/sample", "round": "3"},
    }
]


def _results(rows: int = 24, *, error_rows: int = 0, stats_errors: int = 0) -> dict[str, Any]:
    cells = [(t, p) for t in range(8) for p in range(3)][:rows]
    out = []
    for i, (t, p) in enumerate(cells):
        failed = i < error_rows
        reason = 2 if failed else i % 2
        out.append({"testIdx": t, "promptIdx": p, "failureReason": reason, "success": reason == 0,
                    "error": "Error: Python worker exited" if failed else None})  # fmt: skip
    return {
        "config": {
            "tests": copy.deepcopy(MAIN_TESTS),
            "providers": [{"id": "file://providers/replay.py:call_api"}],
        },
        "results": {
            "prompts": [{"label": c, "provider": "recorded"} for c in ("C0", "C1", "C1.5")],
            "results": out,
            "stats": {"successes": 12, "failures": 12, "errors": stats_errors},
        },
    }


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the configs' dataset paths are relative to the repository root
    monkeypatch.delenv("GROUNDING_EVAL_DATASET", raising=False)


class TestProblems:
    def test_a_complete_run_has_none(self) -> None:
        assert problems(_results(), config_dir=REPO) == []

    def test_missing_rows(self) -> None:
        assert problems(_results(rows=20), config_dir=REPO) == [
            "20 row(s) written, expected 24 (8 tests × 3 prompts)"
        ]

    def test_rows_that_ended_in_an_error(self) -> None:
        found = problems(_results(error_rows=3, stats_errors=3), config_dir=REPO)
        assert found[0] == "promptfoo counted 3 error(s)"
        assert found[1].startswith("3 row(s) ended in an error, e.g. 'Error: Python worker exited'")

    def test_a_duplicated_row_is_not_a_complete_one(self) -> None:
        results = _results()
        results["results"]["results"][-1] = dict(results["results"]["results"][0])
        assert problems(results, config_dir=REPO)

    @pytest.mark.parametrize(
        ("tests", "why"),
        [
            ([{"path": "file://tests.js:make"}], "tests from file://tests.js:make (a JavaScript generator)"),
            (["file://sheet.xlsx"], "tests from file://sheet.xlsx (.xlsx files are not read here)"),
            ("https://example.org/tests.csv", "tests from https://example.org/tests.csv (remote)"),
            ([{"vars": {"a": "1"}, "providers": ["echo"]}], "a test limits its providers or prompts"),
        ],
        ids=["js-generator", "spreadsheet", "remote", "provider-filter"],
    )
    def test_tests_it_cannot_count_are_a_problem_not_an_assumption(self, tests: Any, why: str) -> None:
        results = _results()
        results["config"]["tests"] = tests
        assert problems(results, config_dir=REPO) == [f"cannot count the expected rows: {why}"]

    def test_relative_test_files_need_the_configs_folder(self) -> None:
        assert problems(_results(), config_dir=None) == [
            "cannot count the expected rows: tests file://datasets/generate.py:generate_tests is relative "
            "to the config's folder: pass --config CONFIG"
        ]

    def test_a_generator_that_fails_now_is_a_problem(self) -> None:
        results = _results()
        results["config"]["tests"][0]["config"]["dataset"] = "datasets/no-such-dataset"
        (found,) = problems(results, config_dir=REPO)
        assert found.startswith("cannot count the expected rows: DataError: ")

    def test_cli_exit_codes(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        good, bad, junk = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "junk.json"
        good.write_text(json.dumps(_results()), encoding="utf-8")
        bad.write_text(json.dumps(_results(rows=3)), encoding="utf-8")
        junk.write_text("{", encoding="utf-8")
        config = ["--config", "promptfooconfig.yaml"]
        assert main([*config, str(good)]) == 0
        assert main([*config, str(bad)]) == 1
        assert main([*config, str(junk)]) == 2
        assert main(["--config", "configs/round2.yaml", str(good)]) == 1
        err = capsys.readouterr().err.splitlines()
        assert err[0] == f"{bad}: incomplete run: 3 row(s) written, expected 24 (8 tests × 3 prompts)"
        assert err[1].startswith(f"{junk}: cannot read: JSONDecodeError")
        assert err[2] == f"{good}: configs/round2.yaml is not this run's config (its tests differ)"

    def test_summary(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        good = tmp_path / "good.json"
        good.write_text(json.dumps(_results()), encoding="utf-8")
        assert main(["--config", "promptfooconfig.yaml", "--summary", str(good)]) == 0
        assert capsys.readouterr().out == (
            f"24 rows (8 tests × 3 prompts): 12 passed, 12 failed, 0 errors; results in {good}\n"
        )


# The shipped configs' runs, shared with the other tests that read them: each is counted from the config
# its results file records, with its own generator.
SHIPPED = ["promptfooconfig.yaml", "configs/verifier_demo.yaml", "configs/docs_qa.yaml",
           "configs/factual_accuracy.yaml"]  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize(
    "config", [pytest.param(c, marks=pytest.mark.xdist_group(shared_group(c))) for c in SHIPPED]
)
def test_shipped_configs_runs_are_complete(
    config: str, shared_eval: Callable[[str], EvalRun], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = shared_eval(config)
    assert run.returncode in (0, 100), run.tail()
    rows = run.rows()
    passed = sum(1 for r in rows if r["success"])
    assert main(["--config", config, "--summary", str(run.out)]) == 0, capsys.readouterr().err
    summary = capsys.readouterr().out
    assert summary.startswith(f"{len(rows)} rows (")
    assert f": {passed} passed, {len(rows) - passed} failed, 0 errors; results in {run.out}\n" in summary
    # The same run with its last row lost, as a killed run loses it.
    cut = json.loads(run.out.read_text(encoding="utf-8"))
    cut["results"]["results"].pop()
    short = tmp_path / "cut.json"
    short.write_text(json.dumps(cut), encoding="utf-8")
    assert main(["--config", config, str(short)]) == 1
    assert f"{len(rows) - 1} row(s) written, expected {len(rows)} (" in capsys.readouterr().err


HAND_CONFIG = """\
prompts:
  - "Say {{word}} to {{who}}"
providers:
  - id: echo
    label: echo-a
  - id: echo
    label: echo-b
defaultTest:
  vars:
    who: you
  assert:
    - type: icontains
      value: "h"
tests:
  - vars:
      word: [hello, bonjour, hola]
  - vars:
      word: ciao
    options:
      repeat: 3
  - file://words.csv
  - file://more.jsonl
  - file://cases/*.yaml
"""


@pytest.mark.e2e
def test_a_hand_written_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Inline tests (a var list is 3 rows), CSV, JSONL and a YAML glob, a test repeating 3 times, two
    providers, run with --repeat 2: promptfoo writes 46 rows, and demo_check expects exactly those."""
    folder = tmp_path / "study"
    (folder / "cases").mkdir(parents=True)
    config = folder / "config.yaml"
    config.write_text(HAND_CONFIG, encoding="utf-8")
    (folder / "words.csv").write_text("word,who\nyes,me\nnah,them\n", encoding="utf-8")
    (folder / "more.jsonl").write_text('{"vars": {"word": "salut"}}\n{"vars": {"word": "hey"}}\n')
    (folder / "cases" / "a.yaml").write_text("- vars: {word: one}\n", encoding="utf-8")
    (folder / "cases" / "b.yaml").write_text("- vars: {word: two}\n- vars: {word: three}\n", encoding="utf-8")
    run = run_eval(config, tmp_path / "run", extra_args=["--repeat", "2"])
    assert run.returncode == 100, run.tail()  # words without an h fail
    rows = run.rows()
    # (3 + 2 CSV rows + 2 JSONL lines + 3 YAML tests) x 2 repeats + ciao x 3, each under both providers.
    assert len(rows) == ((3 + 2 + 2 + 3) * 2 + 3) * 2 == 46
    passed = sum(1 for r in rows if r["success"])
    assert 0 < passed < len(rows)
    assert main(["--config", str(config), "--summary", str(run.out)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == (
        f"46 rows (11 tests (23 with their repeats) × 1 prompt × 2 providers): {passed} passed, "
        f"{46 - passed} failed, 0 errors; results in {run.out}\n"
    )
    (folder / "more.jsonl").write_text('{"vars": {"word": "salut"}}\n')  # the tests changed since the run
    assert main(["--config", str(config), str(run.out)]) == 1
    assert "46 row(s) written, expected 42 (" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("results", "expected_status"),
    [(_results(), 0), (_results(rows=10, error_rows=10, stats_errors=10), 1)],
    ids=["complete-run-exit-100-is-success", "killed-run-exit-100-is-failure"],
)
def test_demo_script(tmp_path: Path, results: dict[str, Any], expected_status: int) -> None:
    """scripts/demo, with a stand-in npx that writes ``results`` and exits 100 as promptfoo would."""
    root = tmp_path / "pack"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "demo").write_text((REPO / "scripts" / "demo").read_text(encoding="utf-8"))
    (root / "scripts" / "install").write_text("exit 0\n")  # the real one is tested by CI itself
    for name in (".venv", "datasets", "prompts", "providers", "assertions", "promptfooconfig.yaml"):
        (root / name).symlink_to(REPO / name)
    canned = tmp_path / "canned.json"
    canned.write_text(json.dumps(results), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(
        "#!/usr/bin/env bash\n"
        'echo "NODE_OPTIONS=$NODE_OPTIONS LOG_LEVEL=$LOG_LEVEL args=$*" > "$(dirname "$0")/called"\n'
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        f'cp "{canned}" "$out"\nexit 100\n'
    )
    npx.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for key in ("GROUNDING_EVAL_DATASET", "NODE_OPTIONS", "LOG_LEVEL"):
        env.pop(key, None)
    run = subprocess.run(
        ["bash", str(root / "scripts" / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == expected_status, run.stdout + run.stderr
    assert (bin_dir / "called").read_text() == (
        "NODE_OPTIONS=--disable-warning=ExperimentalWarning LOG_LEVEL=warn "
        "args=promptfoo eval -c promptfooconfig.yaml -o results/sample.json --no-table\n"
    )
    if expected_status:
        assert "incomplete run: promptfoo counted 10 error(s)" in run.stderr
        assert "promptfoo exited 100 but results/sample.json is incomplete" in run.stderr
        assert run.stdout == ""
    else:
        assert run.stdout.splitlines() == [
            "demo: 24 rows (8 tests × 3 prompts): 12 passed, 12 failed, 0 errors; results in results/sample.json",
            "demo: the failures are by design: some sample answers fail on purpose (promptfoo exits 100 then)",
            "demo: open the results side by side in promptfoo's viewer: npx promptfoo view -n   (port 15500)",
        ]
