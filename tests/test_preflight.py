"""The configuration check (grounding_eval/promptfoo/preflight.py): each assertion run as its rows would run
it, up to its first model call or verdict, and never past it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge import clients
from grounding_eval.judge.host import hosting
from grounding_eval.promptfoo.preflight import preflight

REPO = Path(__file__).resolve().parents[1]
VARS = {"query_id": "hr-il-lockout-01", "jurisdiction": "IL", "question": "Locked out?"}


class NeverAsk:
    """A promptfoo that must not be asked: the check stops before any model call."""

    def ask(self, request: Any) -> Any:
        raise AssertionError(f"a model was asked during the configuration check: {request}")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROUNDING_EVAL_JUDGE_PROVIDER", raising=False)
    clients.forget_clients()


def _context(config: dict[str, Any]) -> dict[str, Any]:
    # No judges resolved for it: the check asks assertions/judges.cjs, as a type: python entry does.
    return {
        "prompt": "",
        "vars": VARS,
        "config": config,
        "test": {"metadata": {"dataset": "datasets/sample"}},
    }


def test_a_live_judge_is_resolved_and_not_asked(tmp_path: Path) -> None:
    config = {"rubric": "v3", "provider": {"id": "bedrock:claude", "config": {"region": "us-east-1"}},
              "cache_dir": str(tmp_path)}  # fmt: skip
    with hosting(NeverAsk()):
        checked = preflight("judge", _context(config), REPO)
    assert checked == {"ok": True}


def test_a_recorded_judge_file_is_read(tmp_path: Path) -> None:
    good = preflight(
        "judge",
        _context({"rubric": "v3", "provider": "replay:{dataset}/judge_replies/v3.yaml"}),
        REPO,
    )
    assert good == {"ok": True}
    missing = preflight(
        "judge", _context({"rubric": "v3", "provider": f"replay:{tmp_path / 'none.yaml'}"}), REPO
    )
    assert missing["ok"] is False and "none.yaml" in missing["error"]


@pytest.mark.parametrize(
    ("call", "config", "said"),
    [
        ("judge", {"rubric": "no-such-rubric", "provider": "replay:x.yaml"}, "no-such-rubric"),
        ("judge", {"rubric": "v3"}, "no judge provider"),
        ("verifier", {"orgs": "no/such/organizations.yaml"}, "no/such/organizations.yaml"),
        ("verifier", {"liveness": "offline", "nonsense": 1}, "unknown assertion config key(s): nonsense"),
        ("factuality", {"provider": "replay:x.yaml", "rubric": "no/such/rubric.yaml"}, "no/such/rubric.yaml"),
        ("docs_qa", {"provider": "replay:x.yaml"}, "docs"),
        ("nope", {}, "unknown grounding-eval call 'nope'"),
    ],
)  # fmt: skip
def test_what_every_row_would_refuse_is_the_error(call: str, config: dict[str, Any], said: str) -> None:
    with hosting(NeverAsk()):
        checked = preflight(call, _context(config), REPO)
    assert checked["ok"] is False and said in checked["error"]


def test_a_sound_verifier_stops_before_its_verdict() -> None:
    assert preflight("verifier", _context({"liveness": "offline"}), REPO) == {"ok": True}


def test_a_python_entry_is_checked_as_a_javascript_one(tmp_path: Path) -> None:
    """Both resolve their judges in assertions/judges.cjs: any provider promptfoo knows, either way."""
    config = {"rubric": "v3", "provider": "ollama:chat:m", "cache_dir": str(tmp_path)}
    with hosting(NeverAsk()):
        javascript = preflight("judge", _context(config), REPO)
        python = preflight("judge", _context(config), REPO, python_entry=True)
    assert javascript == python == {"ok": True}
