"""``scripts/demo`` treats promptfoo's exit 100 as success only for a complete run.

A killed promptfoo writes the rows it has, with errors on the rest, and still exits 100; the demo must
then fail. The checker is tested on results shaped like promptfoo's, and the script itself with a stand-in
``npx`` that writes such a file (the real promptfoo runs in the end-to-end tests).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.demo_check import main, problems

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
        out.append({"testIdx": t, "promptIdx": p, "failureReason": 2 if failed else i % 2,
                    "error": "Error: Python worker exited" if failed else None})  # fmt: skip
    return {
        "config": {"tests": MAIN_TESTS},
        "results": {
            "prompts": [{"label": c} for c in ("C0", "C1", "C1.5")],
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
        assert problems(_results(), pack_root=REPO) == []

    def test_missing_rows(self) -> None:
        assert problems(_results(rows=20), pack_root=REPO) == [
            "20 row(s) written, expected 24 (8 tests × 3 prompts)"
        ]

    def test_rows_that_ended_in_an_error(self) -> None:
        found = problems(_results(error_rows=3, stats_errors=3), pack_root=REPO)
        assert found[0] == "promptfoo counted 3 error(s)"
        assert found[1].startswith("3 row(s) ended in an error, e.g. 'Error: Python worker exited'")

    def test_a_duplicated_row_is_not_a_complete_one(self) -> None:
        results = _results()
        results["results"]["results"][-1] = dict(results["results"]["results"][0])
        assert problems(results, pack_root=REPO)

    def test_tests_it_cannot_count_are_a_problem_not_an_assumption(self) -> None:
        results = _results()
        results["config"]["tests"] = [{"path": "file://tests.csv"}]
        assert problems(results, pack_root=REPO) == [
            "cannot count the expected rows: ValueError: tests from file://tests.csv cannot be counted"
        ]

    def test_cli_exit_codes(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        good, bad, junk = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "junk.json"
        good.write_text(json.dumps(_results()), encoding="utf-8")
        bad.write_text(json.dumps(_results(rows=3)), encoding="utf-8")
        junk.write_text("{", encoding="utf-8")
        assert main([str(good)]) == 0
        assert main([str(bad)]) == 1
        assert main([str(junk)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0] == f"{bad}: incomplete run: 3 row(s) written, expected 24 (8 tests × 3 prompts)"
        assert err[1].startswith(f"{junk}: cannot read results: JSONDecodeError")


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
    for name in (".venv", "datasets", "prompts", "providers", "assertions"):
        (root / name).symlink_to(REPO / name)
    canned = tmp_path / "canned.json"
    canned.write_text(json.dumps(results), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(
        "#!/usr/bin/env bash\n"
        'while [ "$#" -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done\n'
        f'cp "{canned}" "$out"\nexit 100\n'
    )
    npx.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("GROUNDING_EVAL_DATASET", None)
    run = subprocess.run(
        ["bash", str(root / "scripts" / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == expected_status, run.stdout + run.stderr
    if expected_status:
        assert "incomplete run: promptfoo counted 10 error(s)" in run.stderr
        assert "promptfoo exited 100 but results/sample.json is incomplete" in run.stderr
    else:
        assert "fail on purpose" in run.stdout
