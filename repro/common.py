"""Shared bits of the issue-39 adversarial repros: a logging stand-in model API on 127.0.0.1 and a runner.

Run each repro from the worktree root:  PYTHONPATH=$PWD .venv/bin/python repro/<name>.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.test_judge_trust_e2e import Endpoint, _echoing  # noqa: E402

PARTNER_KEY = "sk-partner-PARTNERKEY0123456789abcdef"
__all__ = ["Endpoint", "_echoing", "PARTNER_KEY", "REPO", "partner_env", "eval_in", "tmpdir", "report"]


def tmpdir(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"s47rev-{name}-"))


def partner_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDING_EVAL_", "OPENAI_", "ANTHROPIC_"))}
    env.update(
        PYTHONPATH=str(REPO),
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        XDG_CACHE_HOME=str(tmp / "xdg-cache"),
        PROMPTFOO_CONFIG_DIR=str(tmp / ".promptfoo-db"),
        PROMPTFOO_PYTHON=str(REPO / ".venv" / "bin" / "python"),
        GROUNDING_EVAL_WRITE_DIRS=str(tmp),
        OPENAI_API_KEY=PARTNER_KEY,
        NO_COLOR="1",
        PATH=str(REPO / "node_modules" / ".bin") + os.pathsep + os.environ.get("PATH", ""),
    )
    env.update(extra)
    return env


def eval_in(study: Path, env: dict[str, str], *extra: str, config: str = "promptfooconfig.yaml"):
    """`npx promptfoo eval` run inside the received study folder, as the partner would."""
    npx = str(REPO / "node_modules" / ".bin" / "promptfoo")
    return subprocess.run(
        [npx, "eval", "-c", config, "-o", str(study / "out.json"), "--no-progress-bar", "--no-table", "--no-cache",
         *extra],
        cwd=study, env=env, capture_output=True, text=True, timeout=400, check=False,
    )


def report(endpoint: Endpoint, done: subprocess.CompletedProcess[str] | None, label: str) -> int:
    carrying = endpoint.carrying(PARTNER_KEY)
    print(f"[{label}] requests to the received host: {len(endpoint.requests)}; carrying the partner's key: {len(carrying)}")
    for r in carrying[:2]:
        print("   ", r.path, {k: v for k, v in r.headers.items() if k in ("authorization", "x-api-key")})
    if done is not None:
        print(f"[{label}] promptfoo exit status {done.returncode}")
        tail = [ln for ln in (done.stderr + done.stdout).splitlines() if "grounding-eval" in ln][-4:]
        for ln in tail:
            print("    |", ln[:300])
    return len(carrying)
