"""A received study's ``.env`` cannot choose where the partner's judge sends their key (issue 39).

promptfoo reads ``.env`` from the folder it runs in (and ``--env-file``); a study's ``.env`` setting
``OPENAI_BASE_URL`` would send every keyed judge request to the sender's host while the partner believes
``$GROUNDING_EVAL_JUDGE_PROVIDER`` decides the judge. Real ``promptfoo eval`` and ``grounding-eval
rescore`` runs in a study folder, a stand-in model API on 127.0.0.1 (tests/model_standin.py) as the host
the file names: it must see no request, and the run must say, in one line, which file and variable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.model_standin import ModelStandin
from tests.promptfoo_runs import REPO
from tests.test_judge_providers_e2e import _config
from tests.test_judge_trust_e2e import PARTNER_KEY, _env

SWITCH = "openai:chat:gpt-4o-mini"


def _never(prompt: str) -> str:
    return "this host was never to be asked"


def _study(tmp: Path, env_line: str) -> Path:
    """A study folder as the partner extracts it: the config, the installed packages, and the sender's .env."""
    study = tmp / "study"
    study.mkdir()
    for name in ("node_modules", "datasets", "rubrics", "prompts"):
        (study / name).symlink_to(REPO / name)
    _config("promptfooconfig.yaml", study)
    (study / ".env").write_text(f"PROMPTFOO_DISABLE_TELEMETRY=1\n{env_line}\n", encoding="utf-8")
    return study


def _eval_in(study: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npx", "promptfoo", "eval", "-c", "promptfooconfig.yaml", "-o", "out.json", "--no-progress-bar",
         "--no-table", "--no-cache", "--filter-first-n", "1"],
        cwd=study, env=env, capture_output=True, text=True, timeout=500, check=False,
    )  # fmt: skip


def test_a_studys_env_cannot_move_the_switched_judge(tmp_path: Path) -> None:
    """The .env's OPENAI_BASE_URL is refused before any call, naming the file and the variable."""
    sender = ModelStandin(_never)
    with sender.running():
        study = _study(tmp_path, f"OPENAI_BASE_URL={sender.url}/v1")
        result = _eval_in(
            study, _env(tmp_path, OPENAI_API_KEY=PARTNER_KEY, GROUNDING_EVAL_JUDGE_PROVIDER=SWITCH)
        )
    said = result.stdout + result.stderr
    assert sender.served == [], f"{len(sender.served)} keyed request(s) reached the .env's host"
    assert f"{study / '.env'} sets OPENAI_BASE_URL" in said, said[-3000:]
    assert result.returncode not in (0, 100)  # stopped in beforeAll: no model was called


def test_the_partners_own_endpoint_variable_is_theirs(tmp_path: Path) -> None:
    """The control: the same variable in the partner's own environment (the .env sets another one) is
    used, so the test above would have seen the .env's host called had it not been refused."""
    own = ModelStandin(_never)
    with own.running():
        study = _study(tmp_path, "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
        env = _env(tmp_path, OPENAI_API_KEY=PARTNER_KEY, GROUNDING_EVAL_JUDGE_PROVIDER=SWITCH,
                   OPENAI_BASE_URL=f"{own.url}/v1")  # fmt: skip
        result = _eval_in(study, env)
    assert own.served, (result.stdout + result.stderr)[-3000:]
    assert "sets OPENAI_BASE_URL" not in result.stdout + result.stderr


def test_rescore_in_a_study_with_an_env_endpoint_sends_nothing(
    tmp_path: Path, shared_eval: Callable[[str], Any]
) -> None:
    """grounding-eval rescore starts the Node judges host in the study folder: the .env is refused there too."""
    run = shared_eval("promptfooconfig.yaml")
    sender = ModelStandin(_never)
    with sender.running():
        study = _study(tmp_path, f"ANTHROPIC_BASE_URL={sender.url}")
        env = _env(tmp_path, ANTHROPIC_API_KEY=PARTNER_KEY,
                   GROUNDING_EVAL_JUDGE_PROVIDER="anthropic:messages:claude-sonnet-4-5-20250929",
                   PYTHONPATH=str(REPO))  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rescore", str(run.out), "-o", str(tmp_path / "new.json")],
            cwd=study, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert sender.served == []
    said = done.stdout + done.stderr
    if (tmp_path / "new.json").exists():
        rows = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))["results"]["results"]
        said += json.dumps(rows)
    assert f"{study / '.env'} sets ANTHROPIC_BASE_URL" in said, said[-3000:]
