"""Every shipped config grades, rescores and reports exactly as recorded in tests/fixtures/record/ (issue 40, step 0).

The record (what it holds and what is normalised: ``tests/record.py``) is the judge of "no verdict, score
or report moved" for every structural change: it changes only on purpose, re-recorded with
``scripts/record_sample_scores.py`` (``--check`` lists what moved), and the commit says which rows moved
and why. Each config's test reads the session's one offline run of it (``shared_eval``), which the other
tests of that config read too; the studies ``grounding-eval init`` writes are checked by the script alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests import record
from tests.promptfoo_runs import REPO, EvalRun, shared_group

RERECORD = "a deliberate change? re-record with scripts/record_sample_scores.py and say why in the commit"


def _compare(name: str, recorded: object, now: object) -> None:
    moved = record.differences(name, recorded, now)
    assert moved == [], "\n".join([*moved[:40], f"({len(moved)} differences)", RERECORD])


@pytest.mark.e2e
@pytest.mark.parametrize(
    "config", [pytest.param(c, marks=pytest.mark.xdist_group(shared_group(c))) for c in record.SHIPPED]
)
def test_a_shipped_config_grades_rescores_and_reports_as_recorded(
    config: str, shared_eval: Callable[[str], EvalRun]
) -> None:
    run = shared_eval(config)
    assert run.returncode in (0, 100), run.tail()
    now = record.config_record(run.returncode, run.out, {str(REPO): "<repo>", str(run.out.parent): "<tmp>"})
    path = record.record_file(config)
    assert path.exists(), f"{path} is missing: {RERECORD}"
    _compare(config, json.loads(path.read_text(encoding="utf-8")), now)
    assert now["eval"]["rows"] and not any(r["failureReason"] == 2 for r in now["eval"]["rows"].values())


def test_the_fixtures_reports_and_the_generated_schemas_are_as_recorded() -> None:
    folder = record.RECORD_DIR
    _compare(
        "fixture_reports.json",
        json.loads((folder / "fixture_reports.json").read_text()),
        record.fixture_reports(),
    )
    _compare("schemas.json", json.loads((folder / "schemas.json").read_text()), record.schemas_record())


def test_every_shipped_config_and_init_study_has_its_record() -> None:
    from grounding_eval.share.scaffold import STUDIES

    names = [*record.SHIPPED, *(f"{record.INIT_PREFIX}{s}" for s in STUDIES)]
    files = {record.record_file(n) for n in names} | {
        record.RECORD_DIR / "fixture_reports.json",
        record.RECORD_DIR / "schemas.json",
    }
    assert sorted(p.name for p in files if not p.exists()) == [], RERECORD
    assert sorted(p.name for p in record.RECORD_DIR.glob("*.json") if p not in files) == []


def test_unlike_and_differences_keep_json_types_apart() -> None:
    """Byte for byte: ``1`` is not ``1.0`` nor ``true``; a rescore's difference from its eval gives it back."""
    eval_rows = {"a C0": {"score": 1, "pass": True, "reason": "ok", "gone": 2, "list": [1, 2]}}
    rescored = {"a C0": {"score": 1.0, "pass": True, "reason": "ok", "new": 3, "list": [1, 2, 3]}}
    moved = record.unlike(eval_rows, rescored)
    assert moved == {"/a C0/gone": record.ABSENT, "/a C0/list": [1, 2, 3], "/a C0/new": 3, "/a C0/score": 1.0}
    assert record.differences("f", eval_rows, rescored) == [
        "f /a C0/gone: dropped",
        "f /a C0/list: [1, 2] -> [1, 2, 3]",
        "f /a C0/new: added",
        "f /a C0/score: 1 -> 1.0",
    ]
    assert record.differences("f", {"x": [True]}, {"x": [1]}) == ["f /x[0]: true -> 1"]
    assert record.differences("f", rescored, json.loads(record.to_text(rescored))) == []


def test_normalised_replaces_paths_and_wall_clock_only() -> None:
    value = {"timestamp": "2026-01-01T00:00:00+00:00", "path": "/r/x/datasets/a", "/r/x/k": ["/r/x/y/z", 1]}
    assert record.normalised(value, {"/r/x": "<repo>", "/r/x/y": "<tmp>"}) == {
        "timestamp": "<time>",
        "path": "<repo>/datasets/a",
        "<repo>/k": ["<tmp>/z", 1],
    }
    assert record.normalised({"timestamp": None}, {}) == {"timestamp": None}


def test_only_the_path_hashed_ids_are_masked() -> None:
    """An init study's audit and review ids hash the checkout's absolute path: masked, and nothing else."""
    value = {"judge": {"audit_id": "ab" * 32, "review_entry_id": None, "score": 4, "reason": "audit_id ab"},
             "rows": [{"human_entry_id": "cd", "entry_id": "ef", "audit_file": "results/audit/x.json"}]}  # fmt: skip
    assert record.without_path_hashes(value) == {
        "judge": {"audit_id": "<hash>", "review_entry_id": None, "score": 4, "reason": "audit_id ab"},
        "rows": [{"human_entry_id": "<hash>", "entry_id": "<hash>", "audit_file": "<hash>"}],
    }
