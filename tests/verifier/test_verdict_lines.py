"""The verdict as a person first reads it: tests/golden/verdict_lines.yaml (first line, score, what was
not checked), the neutral citation rule, and a check that raises leaving only its own findings undecided."""

from __future__ import annotations

import dataclasses
import enum
import gc
import json
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from grounding_eval.verifier import verdict
from grounding_eval.verifier.explain import check_lines, summary_line
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources, verify

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
CASES = yaml.safe_load((REPO / "tests" / "golden" / "verdict_lines.yaml").read_text(encoding="utf-8"))[
    "cases"
]


@cache
def _resources(index: str | None, tmp: Path) -> VerifierResources:
    """The sample's data offline, as ``grounding-eval verify --offline`` reads it by default."""
    citations = SAMPLE / "citations.yaml"
    if index is not None:
        citations = tmp / f"citations-{abs(hash(index))}.yaml"
        citations.write_text(index, encoding="utf-8")
    return load_resources(
        allowlist=SAMPLE / "allowlist.txt",
        orgs=SAMPLE / "organizations.yaml",
        citations=citations,
        liveness="offline",
        snapshot=None,
        cache_path=None,
    )


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("indexes")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_golden_verdict_line(case: dict[str, Any], tmp: Path) -> None:
    report = verify(
        case["answer"] * case.get("repeat", 1),
        jurisdiction=case["jurisdiction"],
        sources=[],
        resources=_resources(case.get("index"), tmp),
        citation_check=case.get("citation_check", "information"),
    )
    line = summary_line(report)
    if "first_line" in case:
        assert line == case["first_line"]
    else:
        assert line.startswith(case["first_line_starts"]), line
    assert (report.passed, report.score) == (case["pass"], pytest.approx(case["score"]))
    assert report.citation_score == case.get("citation_score")
    undecided = report.to_json()["undecided"]
    expected = case["undecided"]
    assert undecided["count"] == expected["count"] == sum(i["n"] for i in undecided["items"])
    assert undecided["kinds"] == expected["kinds"]
    assert [{"kind": i["kind"], "what": i["what"]} for i in undecided["items"]] == expected["items"]
    assert all(isinstance(i["why"], str) and i["why"].strip() for i in undecided["items"])
    lines = check_lines(report)
    for check, text in (case.get("lines") or {}).items():
        assert lines[check] == text


def test_the_table_reaches_every_rule() -> None:
    """Both citation rules, PASS and FAIL lines, and every undecided kind a sample answer can give."""
    kinds = {k for c in CASES for k in c["undecided"]["kinds"]}
    assert kinds == {"statute", "case", "URL", "quote", "check", "capped"}
    assert {c.get("citation_check", "information") for c in CASES} == {"hard", "information"}
    assert {c["pass"] for c in CASES if c["undecided"]["count"]} == {True, False}


class TestNeutralCitations:
    """A citation never raises a score, under either rule; a decided one only lowers the verdict (to 0,
    a hard failure) under the hard rule."""

    ANSWER = "Under MCL 554.602 you get your deposit back. Call (217) 555-0123."
    PLAIN = "You get your deposit back. Call (217) 555-0123."

    @pytest.mark.parametrize("rule", ["hard", "information"])
    def test_known_citation_changes_no_score(self, rule: str, tmp: Path) -> None:
        resources = _resources(None, tmp)
        cited = verify(self.ANSWER, jurisdiction="MI", sources=[], resources=resources, citation_check=rule)
        plain = verify(self.PLAIN, jurisdiction="MI", sources=[], resources=resources, citation_check=rule)
        assert [c.status.value for c in cited.citations] == ["KNOWN"]
        assert cited.score == plain.score == pytest.approx(0.75)
        assert cited.check_scores == plain.check_scores
        assert cited.check_scores["citations"] is None

    def test_in_sources_changes_no_score(self, tmp: Path) -> None:
        source = "42 U.S.C. § 3604 makes it unlawful to refuse to rent because of familial status."
        report = verify(
            "42 U.S.C. § 3604 protects families. Call (217) 555-0123.",
            jurisdiction="IL",
            sources=[source],
            resources=_resources(None, tmp),
        )
        assert [c.status.value for c in report.citations] == ["IN_SOURCES"]
        assert report.score == pytest.approx(0.75) and report.citation_score == 1.0

    def test_unknown_status_is_information(self, tmp: Path) -> None:
        """A status outside the score table (a later check's) is neither scored nor a failure."""
        report = verify(
            "Under MCL 554.602 you may.", jurisdiction="MI", sources=[], resources=_resources(None, tmp)
        )
        (finding,) = report.citations
        other = dataclasses.replace(report, citations=(dataclasses.replace(finding, status=_Other.LATER),))
        assert other.citation_score is None and other.hard_failures == [] and other.undecided.count == 0

    def test_a_bad_rule_is_refused(self, tmp: Path) -> None:
        with pytest.raises(ValueError, match="citation_check must be hard or information"):
            verify(
                "text", jurisdiction="MI", sources=[], resources=_resources(None, tmp), citation_check="soft"
            )


class _Other(enum.Enum):
    """Stands for a citation status the score table does not list (another check's, added later)."""

    LATER = "LATER"


class TestUndecided:
    def test_a_wrapped_citation_keeps_the_line_whole(self, tmp: Path) -> None:
        """A citation wrapped in the answer is listed on one line: the first line stays the first line."""
        report = verify(
            "Under ORS\n90.9999 you may stay.", jurisdiction="OR", sources=[], resources=_resources(None, tmp)
        )
        assert [i.what for i in report.undecided.items] == ["ORS 90.9999"]
        assert (
            summary_line(report)
            == "PASS deterministic verifier 1.00 — 1 not checked: 1 statute (ORS 90.9999)"
        )
        assert "\n" not in check_lines(report)["citations"]

    def test_an_ambiguous_short_cite_is_a_citation(self, tmp: Path) -> None:
        report = verify(
            "R.C. 5321.04 and MCL 554.601 apply.\n\nId. at (b)",
            jurisdiction="OH",
            sources=[],
            resources=_resources(None, tmp),
        )
        kinds = report.undecided.kinds
        assert kinds.get("citation") == 1, report.undecided
        assert ("citation", "Id. at (b)") in {(i.kind, i.what) for i in report.undecided.items}


class TestACheckThatRaises:
    """An exception inside one check leaves that check undecided, with the exception as the reason; the
    other checks still decide, and their hard failures stand."""

    ANSWER = "Call Lone Star Legal Aid at (888) 529-5277. Under MCL 554.602 you may stay."

    def test_other_checks_still_decide(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(*_args: Any) -> Any:
            raise IndexError("tuple index out of range\nin a template")

        monkeypatch.setattr(verdict, "check_citations", broken)
        report = verify(self.ANSWER, jurisdiction="MI", sources=[], resources=_resources(None, tmp))
        assert report.check_errors == (("citations", "IndexError: tuple index out of range in a template"),)
        assert report.citations == () and report.check_scores["citations"] is None
        # the phone mismatch and the leak (a Texas organization, a Michigan user) are still decided
        assert {(h.check, h.safety_check) for h in report.hard_failures} == {
            ("phone_org", "org_attribution_correct"),
            ("jurisdiction", "jurisdiction_correct"),
        }
        assert report.score == 0.0 and not report.passed
        assert report.to_json()["undecided"] == {
            "count": 1,
            "kinds": {"check": 1},
            "items": [
                {
                    "kind": "check",
                    "what": "citations",
                    "why": "IndexError: tuple index out of range in a template",
                    "n": 1,
                    "live": False,
                }
            ],
        }
        line = summary_line(report)
        assert line.startswith(
            f"FAIL deterministic verifier 0.00: {len(report.hard_failures)} hard failure(s): "
        )
        assert line.endswith(
            " — 1 not checked: 1 check (citations: IndexError: tuple index out of range in a template)"
        )
        assert check_lines(report)["citations"] == (
            "citations: n/a (not checked: the check raised IndexError: tuple index out of range in a template)"
        )

    def test_a_shared_step_fails_the_checks_that_read_it(
        self, tmp: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Finding phone numbers serves the phone–org, URL–org and jurisdiction checks: all three are
        undecided; the URL allowlist and the citations still decide."""

        def broken(_answer: str) -> Any:
            raise RuntimeError("phone parser")

        monkeypatch.setattr(verdict, "find_phones", broken)
        report = verify(
            self.ANSWER + " See https://legal-aid.example/x.",
            jurisdiction="MI",
            sources=[],
            resources=_resources(None, tmp),
            citation_check="hard",
        )
        assert [c for c, _ in report.check_errors] == ["phone_org", "url_org", "jurisdiction"]
        assert [h.check for h in report.hard_failures] == ["url_allowlist"]  # a host with no real suffix
        assert [c.status.value for c in report.citations] == ["KNOWN"]
        assert report.undecided.kinds == {"check": 3}

    def _context(self) -> dict[str, Any]:
        config = {
            "allowlist": str(SAMPLE / "allowlist.txt"),
            "orgs": str(SAMPLE / "organizations.yaml"),
            "citations": str(SAMPLE / "citations.yaml"),
            "liveness": "offline",
            "citation_check": "hard",
        }
        return {
            "vars": {"jurisdiction": "MI", "jkb_full_content": ""},
            "prompt": "q",
            "config": config,
            "test": {},
        }

    def test_the_promptfoo_result_is_no_error_row(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The assertion grades the row: the decided safety failures fail it, the reason's first line and
        metadata.verifier say which check was not run and why."""
        from tests.entry_points import load_entry_point

        def broken(*_args: Any) -> Any:
            raise IndexError("tuple index out of range")

        monkeypatch.setattr(verdict, "check_citations", broken)
        result = load_entry_point("verifier")(self.ANSWER, self._context())
        assert result["metadata"]["outcome"] == "fail" and result["pass"] is False
        first = result["reason"].splitlines()[0]
        assert first.startswith("FAIL deterministic verifier 0.00: ")
        assert first.endswith(" — 1 not checked: 1 check (citations: IndexError: tuple index out of range)")
        assert result["namedScores"] == {"deterministic_verifier_score": 0.0}
        meta = result["metadata"]["verifier"]
        assert {h["safety_check"] for h in meta["hard_failures"]} == {
            "org_attribution_correct",
            "jurisdiction_correct",
        }
        assert meta["undecided"]["kinds"] == {"check": 1}

    def test_nothing_decided_is_unscored_not_an_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The jurisdiction check raised and nothing else applied: no score to give, so the row is
        unscored (counted apart), its first line naming the check that raised, never a quiet pass."""
        from tests.entry_points import load_entry_point

        def broken(*_args: Any) -> Any:
            raise KeyError("MI")

        monkeypatch.setattr(verdict, "check_jurisdiction", broken)
        result = load_entry_point("verifier")("Ask a lawyer about it.", self._context())
        assert result["metadata"]["outcome"] == "unscored" and result["pass"] is False
        lines = result["reason"].splitlines()
        assert lines[0] == (
            "UNSCORED (verifier): no check decided a score: jurisdiction raised — 1 not checked: 1 check "
            "(jurisdiction: KeyError: 'MI')"
        )
        assert not any(line.startswith("PASS") for line in lines)
        meta = result["metadata"]
        assert meta["verifier"]["undecided"]["count"] == 1
        assert {"unchecked_urls", "citation_check", "quotation_scored", "liveness_mode"} <= meta.keys()

    def test_the_cli_says_unscored_and_exits_3(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        from grounding_eval.cli import main

        def broken(*_args: Any) -> Any:
            raise KeyError("MI")

        monkeypatch.setattr(verdict, "check_jurisdiction", broken)
        answer = tmp_path / "a.txt"
        answer.write_text("Ask a lawyer about it.", encoding="utf-8")
        argv = ["verify", str(answer), "--jurisdiction", "MI", "--offline"]
        assert main(argv) == 3
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith(
            "UNSCORED deterministic verifier: no check decided a score: jurisdiction raised"
        )
        assert main([*argv, "--json"]) == 3
        out = json.loads(capsys.readouterr().out)
        assert (out["pass"], out["score"], out["undecided"]["kinds"]) == (False, None, {"check": 1})

    def test_a_citation_leak_stands_when_the_org_part_raised(
        self, tmp: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Another state's law is a decided jurisdiction failure even when the organization part of the
        check raised: the check scores 0, and its line says both."""

        def broken(*_args: Any) -> Any:
            raise IndexError("boom")

        monkeypatch.setattr(verdict, "check_jurisdiction", broken)
        report = verify(
            "Under Tex. Prop. Code § 92.0081 you may stay.",
            jurisdiction="IL",
            sources=[],
            resources=_resources(None, tmp),
            citation_check="hard",
        )
        assert [h.check for h in report.hard_failures] == ["jurisdiction"]
        assert report.check_scores["jurisdiction"] == 0.0
        assert check_lines(report)["jurisdiction"] == (
            "jurisdiction: 0.00 user in IL; LEAK Tex. Prop. Code § 92.0081 is TX law; organizations not "
            "checked: the check raised IndexError: boom"
        )

    REVIEW = (
        "Visit https://www.usa.gov/legal-aid and https://invented.example.com/x. Call the Legal Services "
        "Corporation at 1-877-424-3838. Under Tex. Prop. Code § 92.0081 you may stay."
    )
    # Each check and each step several checks share, and the checks its exception leaves undecided.
    RAISES: ClassVar[dict[str, set[str]]] = {
        "extract_urls": {"url_allowlist", "phone_org", "url_org", "jurisdiction"},
        "find_phones": {"phone_org", "url_org", "jurisdiction"},
        "_org_context": {"phone_org", "url_org", "jurisdiction"},
        "_classify_urls": {"url_allowlist"},
        "check_phones": {"phone_org"},
        "check_url_orgs": {"url_org"},
        "check_jurisdiction": {"jurisdiction"},
        "_check_quotes": {"quotation"},
        "find_citations": {"citations"},
        "check_citations": {"citations"},
    }

    @pytest.mark.parametrize("name", sorted(RAISES))
    def test_any_subset_raising_keeps_the_rest(
        self, name: str, tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:  # fmt: skip
        """Whatever raised, the JSON is whole, the row is no error, the other checks' hard failures stay,
        and ``verify --json`` exits as its verdict says."""
        from grounding_eval.cli import main
        from tests.entry_points import load_entry_point

        resources = _resources(None, tmp)
        whole = verify(self.REVIEW, jurisdiction="IL", sources=[], resources=resources, citation_check="hard")
        assert {h.check for h in whole.hard_failures} == {"phone_org", "jurisdiction"}

        def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise IndexError("boom")

        monkeypatch.setattr(verdict, name, broken)
        report = verify(
            self.REVIEW, jurisdiction="IL", sources=[], resources=resources, citation_check="hard"
        )
        raised = self.RAISES[name]
        assert set(report.failed_checks) == raised
        # the jurisdiction failure here is another state's law: the citations decide it, whether or not
        # the organization part raised
        kept = [
            h
            for h in whole.hard_failures
            if ("citations" if h.check == "jurisdiction" else h.check) not in raised
        ]
        assert [h for h in report.hard_failures if h in kept] == kept and kept
        out = report.to_json()
        assert out["undecided"]["kinds"]["check"] == len(raised)
        assert set(check_lines(report)) == set(verdict.CHECKS)
        context = self._context()
        context["vars"]["jurisdiction"] = "IL"
        result = load_entry_point("verifier")(self.REVIEW, context)
        assert not result["reason"].startswith("ERROR"), result["reason"]
        assert result["metadata"]["outcome"] == "fail"
        details = {h["detail"] for h in result["metadata"]["verifier"]["hard_failures"]}
        assert {h.detail for h in kept} <= details
        components = {c["assertion"]["value"].rsplit(" ", 1)[-1] for c in result["componentResults"]}
        assert {h.check for h in report.hard_failures} <= components
        answer = tmp_path / "a.txt"
        answer.write_text(self.REVIEW, encoding="utf-8")
        assert main(["verify", str(answer), "--jurisdiction", "IL", "--offline", "--json"]) == 1
        assert json.loads(capsys.readouterr().out)["pass"] is False

    def test_a_repeated_unchecked_url_is_one_everywhere(self) -> None:
        from tests.entry_points import load_entry_point

        answer = "Read https://example.org/x, then https://example.org/x again."
        result = load_entry_point("verifier")(answer, self._context())
        meta = result["metadata"]
        assert meta["unchecked_urls"] == meta["verifier"]["undecided"]["kinds"]["URL"] == 1

    @pytest.mark.parametrize(
        "key", ["citation_check", "quotation", "meaning_change", "chips", "quote_sources"]
    )
    @pytest.mark.parametrize("value", [False, "", None, "HARD", True, 0])
    def test_a_bad_enum_value_is_an_error_naming_the_key(self, key: str, value: Any) -> None:
        from tests.entry_points import load_entry_point

        context = self._context()
        context["config"][key] = value
        result = load_entry_point("verifier")("Ask a lawyer.", context)
        assert result["reason"].startswith("ERROR (verifier not run)"), result["reason"]
        assert f"'{key}'" in result["reason"]

    def test_a_bad_metadata_value_is_an_error_too(self) -> None:
        from tests.entry_points import load_entry_point

        context = self._context()
        del context["config"]["citation_check"]
        context["test"] = {"metadata": {"citation_check": False}}
        result = load_entry_point("verifier")("Ask a lawyer.", context)
        assert (
            result["reason"].startswith("ERROR (verifier not run)") and "'citation_check'" in result["reason"]
        )


class TestCollectorPaused:
    """The checks run with CPython's cyclic collector paused (a hostile answer's 10^5 findings are not
    walked over and over) and leave it as they found it, a check that raises included."""

    ANSWER = "Call Lone Star Legal Aid at (888) 529-5277 or see https://www.lsc.gov."

    @pytest.mark.parametrize("enabled", [True, False])
    def test_paused_during_the_checks_and_restored(
        self, enabled: bool, tmp: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        seen: list[bool] = []
        real = verdict.check_phones

        def watched(*args: Any) -> Any:
            seen.append(gc.isenabled())
            return real(*args)

        monkeypatch.setattr(verdict, "check_phones", watched)
        (gc.enable if enabled else gc.disable)()
        try:
            report = verify(self.ANSWER, jurisdiction="TX", sources=[], resources=_resources(None, tmp))
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
        assert seen == [False] and len(report.phones) == 1

    def test_nests_inside_a_callers_pause(self, tmp: Path) -> None:
        """A caller that reads the report (its JSON, its lines) pauses the collector around verify: the
        collector stays paused when verify returns, and runs again when the caller's pause ends."""
        assert gc.isenabled()
        with verdict.collector_paused():
            report = verify(self.ANSWER, jurisdiction="TX", sources=[], resources=_resources(None, tmp))
            assert not gc.isenabled()
            assert report.to_json()["phones"][0]["status"] == report.phones[0].status.value
        assert gc.isenabled()

    def test_restored_when_a_check_raises(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(*_args: Any) -> Any:
            raise RuntimeError("phone check")

        monkeypatch.setattr(verdict, "check_phones", broken)
        assert gc.isenabled()
        report = verify(self.ANSWER, jurisdiction="TX", sources=[], resources=_resources(None, tmp))
        assert gc.isenabled()
        assert [c for c, _ in report.check_errors] == ["phone_org"]


def test_round_3_and_only_round_3_decides_citations_hard() -> None:
    """The rule reaches every config that should set it: each generated test's metadata, the shipped
    Round 3 configs and the init scaffold's Round 3 study; every other round keeps the default."""
    from grounding_eval.promptfoo.round_tests import generate_tests
    from grounding_eval.share.scaffold import STUDIES, _config

    for round_id, rule in (("1a", "information"), ("1b", "information"), ("2", "information"),
                           ("2b", "information"), ("3", "hard")):  # fmt: skip
        tests = generate_tests({"dataset": str(SAMPLE), "round": round_id}, pack_root=REPO)
        assert {t["metadata"]["citation_check"] for t in tests} == {rule}, round_id
        scaffold = yaml.safe_load(_config(round_id, STUDIES[round_id], None))
        verifier = scaffold["defaultTest"]["assert"][0]["config"]
        assert verifier.get("citation_check", "information") == rule, round_id
    for config in ("configs/round3.yaml", "promptfooconfig.yaml"):
        shipped = yaml.safe_load((REPO / config).read_text(encoding="utf-8"))
        assert shipped["defaultTest"]["assert"][0]["config"]["citation_check"] == "hard", config
    for config in (
        "configs/round1a.yaml",
        "configs/round1b.yaml",
        "configs/round2.yaml",
        "configs/round2b.yaml",
    ):
        shipped = yaml.safe_load((REPO / config).read_text(encoding="utf-8"))
        assert "citation_check" not in shipped["defaultTest"]["assert"][0]["config"], config
