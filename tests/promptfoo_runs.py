"""Shipped configs run once per test session by the pinned promptfoo, offline, for every test that reads them.

Several tests read the same offline run: its JSON output (``-o``), or its eval in promptfoo's database as
the viewer serves it. ``shared_eval(config)`` (a session fixture, ``tests/conftest.py``) runs
``npx promptfoo eval -c CONFIG -o OUT --no-progress-bar --no-table --no-cache`` from the repository root the
first time a test asks for ``CONFIG``, with its own database (``PROMPTFOO_CONFIG_DIR``) and none of the
caller's ``GROUNDING_EVAL_*`` variables (the shipped config as a fresh checkout runs it), and hands every
later test the same run. Tests read it and never change the output file; a test may add to its own eval
in the database (ratings), which no other test reads.

Under pytest-xdist each worker has its own session: the tests sharing a config carry
``pytest.mark.xdist_group(shared_group(CONFIG))`` so that ``--dist loadgroup`` (``scripts/test``) sends
them to one worker, which runs the config once.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class EvalRun:
    """One finished ``promptfoo eval``: its exit code and output, its results file and its environment."""

    config: str
    returncode: int
    stdout: str
    stderr: str
    out: Path
    env: dict[str, str]  # with PROMPTFOO_CONFIG_DIR: serve or export this run's database with it

    def rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = json.loads(self.out.read_text(encoding="utf-8"))["results"]["results"]
        return rows

    def tail(self) -> str:
        """The end of promptfoo's output, for an assertion message."""
        return self.stdout[-3000:] + self.stderr[-3000:]


def shared_group(config: str) -> str:
    """The xdist group of the tests that read ``config``'s shared run."""
    return f"promptfoo-eval:{config}"


def offline_env(database: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of an offline run with its own promptfoo database under ``database``: none of the
    caller's ``GROUNDING_EVAL_*`` variables, only those in ``extra_env``."""
    # (but the folders the test session lets configs write into: tests/conftest.py)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GROUNDING_EVAL_") or k == "GROUNDING_EVAL_WRITE_DIRS"
    }
    return {**env, "PROMPTFOO_CONFIG_DIR": str(database / ".promptfoo"), "NO_COLOR": "1", **(extra_env or {})}


def run_eval(
    config: str | Path,
    folder: Path,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    cwd: Path = REPO,
) -> EvalRun:
    """``promptfoo eval`` of ``config`` (absolute, or relative to ``cwd``) into ``folder``, run from ``cwd``
    (the repository root; a study ``grounding-eval init`` wrote runs from its own folder)."""
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("node_modules is missing: run scripts/install (npm ci) first")
    out = folder / "out.json"
    env = offline_env(folder, extra_env)
    done = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(config), "-o", str(out), "--no-progress-bar", "--no-table", "--no-cache",
         *extra_args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return EvalRun(str(config), done.returncode, done.stdout, done.stderr, out, env)
