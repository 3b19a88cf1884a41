"""Golden tables for the directory-based checks: phone–org, URL–org and jurisdiction leak."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.states import parse_state
from grounding_eval.verifier.verdict import VerifierResources, verify

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _cases(name: str) -> list[Any]:
    cases = yaml.safe_load((GOLDEN / name).read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["id"]) for c in cases]


@pytest.mark.parametrize("case", _cases("phones.yaml"))
def test_phone_org(case: dict[str, Any], resources: VerifierResources) -> None:
    """Each number is paired with the nearest org in its sentence and checked against the directory."""
    report = verify(case["text"], jurisdiction=None, sources=[], resources=resources).to_json()
    got = [{k: p[k] for k in ("raw", "paired_org", "owner", "status")} for p in report["phones"]]
    assert got == case["expected"], case["note"]


@pytest.mark.parametrize("case", _cases("url_orgs.yaml"))
def test_url_org(case: dict[str, Any], resources: VerifierResources) -> None:
    """Each URL's attributed org is compared with the owner of its host."""
    report = verify(case["text"], jurisdiction=None, sources=[], resources=resources).to_json()
    assert report["url_orgs"] == case["expected"], case["note"]


@pytest.mark.parametrize("case", _cases("jurisdiction.yaml"))
def test_jurisdiction_leak(case: dict[str, Any], resources: VerifierResources) -> None:
    """Organizations recognised by name, domain or phone that do not serve the user's state leak."""
    state = parse_state(case["jurisdiction"])
    report = verify(case["text"], jurisdiction=state, sources=[], resources=resources).to_json()
    assert report["jurisdiction"]["leaks"] == case["expected"], case["note"]
    assert report["jurisdiction"]["user"] == state
