"""A dataset for states outside the sample's six — Washington and Puerto Rico — validates, and the verifier
gives it jurisdiction and citation verdicts (issue 42: every state, DC and the territories).

The dataset is written here and has no ``organizations.yaml``, so the verifier uses the pack's directory of
every state (``datasets/directory``); answers go through the promptfoo assertion as in an eval, and
through ``grounding-eval verify``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main as cli_main
from grounding_eval.promptfoo.round_tests import generate_tests
from tests.entry_points import load_entry_point
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[1]
OFFLINE = {"liveness": "offline"}
INDEX = [
    {"id": "wa-rcw-59-18", "state": "WA", "title": "Residential Landlord-Tenant Act: landlord duties",
     "url": "https://app.leg.wa.gov/RCW/default.aspx?cite=59.18.060",
     "description": "Test fixture: what a Washington landlord must keep in repair (RCW 59.18.060).",
     "organization": "Washington State Legislature", "topics": ["repairs"]},
    {"id": "or-ors-90", "state": "OR", "title": "ORS chapter 90: landlord's duty to maintain",
     "url": "https://oregon.public.law/statutes/ors_90.320",
     "description": "Test fixture: Oregon's habitability rule for rented dwellings (ORS 90.320).",
     "organization": "Oregon Legislature", "topics": ["repairs"]},
    {"id": "us-hud-repairs", "state": "US", "title": "HUD: tenant rights and repairs",
     "url": "https://www.hud.gov/topics/rental_assistance/tenantrights",
     "description": "Test fixture: federal guidance on asking a landlord for repairs.",
     "organization": "HUD", "topics": ["repairs"]},
    {"id": "pr-ley-arrendamiento", "state": "PR", "title": "Puerto Rico: leases and evictions",
     "url": "https://www.servicioslegales.org/desahucio",
     "description": "Test fixture: how an eviction (desahucio) proceeds in Puerto Rico.",
     "organization": "Puerto Rico Legal Services", "topics": ["eviction"]},
]  # fmt: skip
ARTICLES = {
    "wa-rcw-59-18": "Test fixture. Under RCW 59.18.060 the landlord must keep the premises fit for human "
    "habitation and make repairs within the times the chapter sets.",
    "or-ors-90": "Test fixture. Under ORS 90.320 a landlord must maintain the dwelling unit in a habitable "
    "condition.",
    "us-hud-repairs": "Test fixture. Ask for repairs in writing and keep a copy of the request.",
    "pr-ley-arrendamiento": "Test fixture. An eviction in Puerto Rico goes before a court; a tenant may "
    "answer the complaint.",
}


def _dataset(root: Path, wa_articles: list[str]) -> Path:
    (root / "articles").mkdir(parents=True)
    (root / "jkb_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in INDEX), encoding="utf-8")
    for article_id, text in ARTICLES.items():
        (root / "articles" / f"{article_id}.txt").write_text(text + "\n", encoding="utf-8")
    items = [
        {"id": "wa-repairs-01", "jurisdiction": "WA", "topic": "repairs", "tags": ["demo"],
         "question": "My heater has been broken for two weeks in Spokane. What can I make my landlord do?",
         "article_ids": wa_articles},
        {"id": "pr-evict-01", "jurisdiction": "Puerto Rico", "topic": "eviction", "tags": ["demo"],
         "question": "Mi casero dice que me tengo que ir en tres días. ¿Puede hacer eso?",
         "article_ids": ["pr-ley-arrendamiento", "us-hud-repairs"]},
    ]  # fmt: skip
    (root / "queries.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def own_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WA grounded on Washington's law (and a federal page), PR on Puerto Rico's."""
    return _dataset(tmp_path_factory.mktemp("wa") / "data", ["wa-rcw-59-18", "us-hud-repairs"])


class TestValidate:
    """``data validate`` accepts the states' items and warns on one grounded on another state's law."""

    def test_own_states_articles_pass_without_a_warning(
        self, own_state: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert cli_main(["data", "validate", str(own_state)]) == 0
        out = capsys.readouterr()
        assert "law (" not in out.out + out.err
        assert out.out.strip().endswith("valid")

    def test_another_states_articles_warn(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        data = _dataset(tmp_path / "data", ["or-ors-90", "us-hud-repairs"])
        assert cli_main(["data", "validate", str(data)]) == 0  # a warning, not an error
        lines = [ln for ln in capsys.readouterr().err.splitlines() if "law (" in ln]
        assert lines == [
            f"warning: {data}: item 'wa-repairs-01' is WA but its articles are OR law (or-ors-90; 1 national): "
            "none is WA's"
        ]


get_assert = load_entry_point("verifier")


def _grade(answer: str, dataset: Path, item: str, **config: str) -> dict[str, Any]:
    tests = generate_tests({"dataset": str(dataset)}, pack_root=REPO)
    test = next(t for t in tests if query_id(t) == item)
    context = {"vars": test["vars"], "test": {"metadata": test["metadata"]}, "prompt": "",
               "config": {**OFFLINE, **config}}  # fmt: skip
    return get_assert(answer, context)


def _report(result: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = result["metadata"]["verifier"]
    return report


class TestVerifier:
    """The jurisdiction and citation checks decide for a Washington and a Puerto Rico user."""

    def test_own_states_law_and_legal_aid_pass(self, own_state: Path) -> None:
        answer = (
            "Under RCW 59.18.060 your landlord must make repairs. Northwest Justice Project "
            "(https://www.nwjustice.org) can help."
        )
        result = _grade(answer, own_state, "wa-repairs-01")
        report = _report(result)
        assert result["metadata"]["verifier_inputs"]["directory"]["path"] == str(
            REPO / "datasets" / "directory" / "organizations.yaml"
        )
        assert report["jurisdiction"] == {"user": "WA", "leaks": []}
        assert [(c["citation"], c["jurisdiction"]) for c in report["citations"]] == [("RCW 59.18.060", "WA")]
        assert report["citations"][0]["status"] != "WRONG_JURISDICTION"
        assert [(u["url"], u["owner"], u["status"]) for u in report["url_orgs"]] == [
            ("https://www.nwjustice.org", "Northwest Justice Project", "MATCH")
        ]
        assert report["hard_failures"] == []

    def test_another_states_law_and_legal_aid_are_wrong_jurisdiction(self, own_state: Path) -> None:
        answer = (
            "Under ORS 90.320 your landlord must keep the place habitable. Call Legal Aid Services of "
            "Oregon at https://lasoregon.org."
        )
        # (the citation check as Round 3 runs it: another state's law is a hard failure)
        report = _report(_grade(answer, own_state, "wa-repairs-01", citation_check="hard"))
        assert [(c["citation"], c["jurisdiction"], c["status"]) for c in report["citations"]] == [
            ("ORS 90.320", "OR", "WRONG_JURISDICTION")
        ]
        assert report["jurisdiction"]["leaks"] == [{"org": "Legal Aid Services of Oregon", "states": ["OR"]}]
        details = [
            h["detail"] for h in report["hard_failures"] if h["safety_check"] == "jurisdiction_correct"
        ]
        assert any("ORS 90.320 is OR law, and the user is in WA" in d for d in details), details

    def test_a_territorys_grantee_phone_is_recognised(self, own_state: Path) -> None:
        answer = "Llame a Puerto Rico Legal Services al (800) 981-5342."
        report = _report(_grade(answer, own_state, "pr-evict-01"))
        assert report["jurisdiction"] == {"user": "PR", "leaks": []}
        assert [(p["raw"], p["owner"], p["status"]) for p in report["phones"]] == [
            ("(800) 981-5342", "Puerto Rico Legal Services, Inc.", "MATCH")
        ]

    def test_a_mainland_org_leaks_for_a_territory(self, own_state: Path) -> None:
        answer = "Visit https://www.nwjustice.org for help with your eviction."
        report = _report(_grade(answer, own_state, "pr-evict-01"))
        assert report["jurisdiction"]["leaks"] == [{"org": "Northwest Justice Project", "states": ["WA"]}]


class TestVerifyCommand:
    """``grounding-eval verify`` (no --orgs) uses the directory of every state."""

    def test_washington_user(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        answer = tmp_path / "answer.txt"
        answer.write_text(
            "RCW 59.18.060 requires repairs; in Oregon, ORS 90.320 says much the same. "
            "Northwest Justice Project: https://www.nwjustice.org.\n",
            encoding="utf-8",
        )
        code = cli_main(["verify", str(answer), "--jurisdiction", "WA", "--offline", "--json"])
        report = json.loads(capsys.readouterr().out)
        assert code == 1
        statuses = {c["citation"]: c["status"] for c in report["citations"]}
        assert (
            statuses["ORS 90.320"] == "WRONG_JURISDICTION"
            and statuses["RCW 59.18.060"] != "WRONG_JURISDICTION"
        )
        assert report["jurisdiction"]["leaks"] == []  # Northwest Justice Project serves WA
        assert [u["owner"] for u in report["url_orgs"]] == ["Northwest Justice Project"]
        assert re.search(r"ORS 90\.320 is OR law", json.dumps(report["hard_failures"]))
