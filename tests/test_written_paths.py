"""A received config cannot have the pack write outside the folder you run in (issue 39).

``audit_dir``, ``review_queue``, ``human_queue``, ``cache_dir`` and ``liveness_cache`` name files the pack
writes; a study's config (or a results file's rows, re-graded by ``rescore``) pointing them at any folder
on the partner's disk is refused in one line naming the setting, before anything is written
(grounding_eval/promptfoo/written_paths.py). Real promptfoo and ``rescore`` runs, then the rule's cases.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.errors import DataError
from grounding_eval.promptfoo.written_paths import WRITE_DIRS_ENV, written_path
from tests.promptfoo_runs import REPO, offline_env
from tests.test_judge_providers_e2e import _config, _eval

KEYS = {"audit_dir": "audit", "review_queue": "queue.jsonl", "cache_dir": "cache"}


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_a_received_config_cannot_write_outside_the_run_folder(tmp_path: Path) -> None:
    """The main job with its judge's audit, queue and cache pointed at another folder: the eval stops before
    any model call, naming the setting, and nothing is written there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def edit(config: dict[str, Any]) -> None:
        for assertion in config["defaultTest"]["assert"]:
            if str(assertion.get("value", "")).endswith("grounding.cjs:judge"):
                assertion["config"].update({k: str(elsewhere / v) for k, v in KEYS.items()})

    study = tmp_path / "study"
    study.mkdir()
    env = offline_env(tmp_path, {WRITE_DIRS_ENV: ""})  # the partner granted no folder
    result = _eval(
        _config("promptfooconfig.yaml", study, edit), study / "out.json", env, "--filter-first-n", "2"
    )
    assert _files(elsewhere) == []
    said = result.stdout + result.stderr
    # (a long path is clipped in the message, so only its start is compared)
    assert re.search(rf"config\.audit_dir: '{re.escape(str(elsewhere)[:40])}[^']*' is outside the folder you "
                     rf"run in \({re.escape(str(REPO))}\)", said), said[-3000:]  # fmt: skip
    assert "no model was called" in said and result.returncode not in (0, 100)


def test_rescore_of_a_received_results_file_writes_nowhere_else(
    tmp_path: Path, shared_eval: Callable[[str], Any]
) -> None:
    """A results file is someone else's too: its rows' judge configs naming a folder outside are refused."""
    run = shared_eval("promptfooconfig.yaml")
    data = json.loads(run.out.read_text(encoding="utf-8"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for row in data["results"]["results"]:
        for assertion in row["testCase"]["assert"]:
            if str(assertion.get("value", "")).endswith("grounding.cjs:judge"):
                assertion["config"]["review_queue"] = str(elsewhere / "queue.jsonl")
                assertion["config"]["audit_dir"] = "../" * 12 + str(elsewhere / "audit").lstrip("/")
    given = tmp_path / "received.json"
    given.write_text(json.dumps(data), encoding="utf-8")
    env = {**offline_env(tmp_path, {WRITE_DIRS_ENV: ""}), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "grounding_eval", "rescore", str(given), "-o", str(tmp_path / "new.json"), "-j", "2"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert _files(elsewhere) == []
    rows = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))["results"]["results"]
    reasons = [c["reason"] for r in rows for c in r["gradingResult"]["componentResults"]]
    assert sum("config.audit_dir" in r and "is outside the folder you run in" in r for r in reasons) == len(
        rows
    )


class TestTheRule:
    """written_path: inside the folder you run in, your cache folder or a folder you grant; nothing else."""

    @pytest.fixture(autouse=True)
    def _here(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "run").mkdir()
        (tmp_path / "outside").mkdir()
        monkeypatch.chdir(tmp_path / "run")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        monkeypatch.delenv(WRITE_DIRS_ENV, raising=False)

    @pytest.mark.parametrize("value", ["results/audit", "./a/../b", "", None])
    def test_inside_the_run_folder(self, value: str | None) -> None:
        assert written_path({"audit_dir": value}, "audit_dir", "results/audit") == Path(
            value or "results/audit"
        )

    def test_the_user_cache_folder(self, tmp_path: Path) -> None:
        path = tmp_path / "xdg" / "grounding-eval" / "judge"
        assert written_path({"cache_dir": str(path)}, "cache_dir", "x") == path

    @pytest.mark.parametrize(
        "value",
        ["../outside/audit", "/etc/grounding", "~/.ssh/queue.jsonl", "a/../../outside", "linked/audit"],
    )
    def test_anywhere_else_is_refused_naming_the_setting(self, tmp_path: Path, value: str) -> None:
        (tmp_path / "run" / "linked").symlink_to(tmp_path / "outside")  # a folder of the study linked out
        with pytest.raises(DataError) as raised:
            written_path({"review_queue": value}, "review_queue", "results/q.jsonl")
        line = raised.value.one_line()
        assert line.startswith(
            f"config.review_queue: '{value}' is outside the folder you run in ({Path.cwd()})"
        )
        assert WRITE_DIRS_ENV in line and "\n" not in line

    def test_a_folder_the_user_grants(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(WRITE_DIRS_ENV, os.pathsep.join(["relative/ignored", str(tmp_path / "outside")]))
        path = tmp_path / "outside" / "audit"
        assert written_path({"audit_dir": str(path)}, "audit_dir", "x") == path
        with pytest.raises(DataError):
            written_path({"audit_dir": "/etc/x"}, "audit_dir", "x")
