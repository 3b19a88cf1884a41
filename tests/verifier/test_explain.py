"""The reason lines: every finding counted, at most 50 listed per check, long findings cut."""

from __future__ import annotations

import dataclasses

import pytest

from grounding_eval.verifier.directory import Directory, Organization
from grounding_eval.verifier.explain import MAX_ITEM_CHARS, check_lines, summary_line
from grounding_eval.verifier.limits import MAX_LISTED_FINDINGS
from grounding_eval.verifier.verdict import VerifierResources, verify

MORE = "… and {} more (see metadata)"


@pytest.fixture(scope="module")
def report_lines(resources: VerifierResources) -> tuple[str, dict[str, str], dict[str, object]]:
    """60 numbers given for the wrong organization and 70 URLs credited to the wrong one, for a Texan."""
    answer = "Prairie State Legal Services (312) 341-1070. " * 60
    answer += "[Legal Aid Chicago](https://www.pslegal.org/p{}). " * 70
    answer = answer.format(*range(70))
    report = verify(answer, jurisdiction="TX", sources=[], resources=resources)
    return summary_line(report), check_lines(report), report.to_json()


class TestListedFindings:
    """A check line lists the first findings in order, then how many more the metadata holds."""

    def test_phone_line_lists_fifty(
        self, report_lines: tuple[str, dict[str, str], dict[str, object]]
    ) -> None:
        """60 mismatched numbers: all counted in the tally, 50 listed, 10 announced."""
        _, lines, data = report_lines
        line = lines["phone_org"]
        assert line.startswith("phone_org: 0.00 [60 MISMATCH] ")
        assert line.count("(312) 341-1070 is given for Prairie State Legal Services") == MAX_LISTED_FINDINGS
        assert line.endswith("; " + MORE.format(10))
        assert len(data["phones"]) == 60  # type: ignore[arg-type]

    def test_url_lines_list_fifty(self, report_lines: tuple[str, dict[str, str], dict[str, object]]) -> None:
        """70 misattributed URLs: the first 50 in order (p0 … p49), 20 announced, on both URL lines."""
        _, lines, _ = report_lines
        for check in ("url_allowlist", "url_org"):
            line = lines[check]
            assert "https://www.pslegal.org/p49" in line and "https://www.pslegal.org/p50" not in line
            assert line.endswith("; " + MORE.format(20))
        assert "[70 MISATTRIBUTED]" in lines["url_org"]

    def test_summary_lists_fifty_hard_failures(
        self, report_lines: tuple[str, dict[str, str], dict[str, object]]
    ) -> None:
        """130 hard failures plus the leak: the count is whole, the list stops at 50."""
        summary, _, data = report_lines
        failures = len(data["hard_failures"])  # type: ignore[arg-type]
        assert failures == 60 + 70 + 2  # mismatches, misattributions, two leaks (Illinois orgs, Texan user)
        assert summary.startswith(f"FAIL deterministic verifier 0.00: {failures} hard failure(s): ")
        assert summary.count("[phone_org → org_attribution_correct No]") == MAX_LISTED_FINDINGS
        listed, undecided = summary.split(" — ")
        assert listed.endswith("; " + MORE.format(failures - MAX_LISTED_FINDINGS))
        # the 70 URLs are in no allowlist, offline: what was not checked, counted whole, listed to 50
        assert undecided.startswith("70 not checked offline: 70 URLs (https://www.pslegal.org/p0; ")
        assert undecided.endswith("https://www.pslegal.org/p49; " + MORE.format(20) + ")")

    def test_few_findings_listed_whole(self, resources: VerifierResources) -> None:
        """Under the cap nothing is announced; a finding needing no look (MATCH) is counted, not listed."""
        answer = "Call Legal Aid Chicago at (312) 341-1070. Or Legal Aid Chicago at (815) 965-2134."
        report = verify(answer, jurisdiction="IL", sources=[], resources=resources)
        assert check_lines(report)["phone_org"] == (
            "phone_org: 0.50 [1 MATCH, 1 MISMATCH] MISMATCH (815) 965-2134 is given for Legal Aid Chicago "
            "but belongs to Prairie State Legal Services"
        )
        assert "more (see metadata)" not in summary_line(report)
        alone = verify(
            "Call Legal Aid Chicago at (312) 341-1070.", jurisdiction="IL", sources=[], resources=resources
        )
        assert check_lines(alone)["phone_org"] == "phone_org: 1.00 [1 MATCH]"


class TestLongFindings:
    """A finding longer than MAX_ITEM_CHARS is cut with an ellipsis; the metadata keeps it whole."""

    def test_huge_url_is_cut(self, resources: VerifierResources) -> None:
        """A 100 kB URL costs the reason 500 characters per listing."""
        url = "https://example.org/" + "a" * 100_000
        report = verify(f"See {url} now.", jurisdiction=None, sources=[], resources=resources)
        line = check_lines(report)["url_allowlist"]
        listed = line.split("] ", 1)[1]
        assert len(listed) == MAX_ITEM_CHARS and listed.endswith("…")
        assert report.to_json()["urls"][0]["url"] == url
        reason = "\n".join([summary_line(report), *check_lines(report).values()])
        assert len(reason) < 5 * MAX_ITEM_CHARS


class TestListedLeaks:
    """The jurisdiction line lists at most 50 leaks too."""

    def test_fifty_five_leaks(self, resources: VerifierResources) -> None:
        """55 Illinois organizations named to a Texan: 50 listed, then how many more."""
        orgs = [
            Organization(name=f"Clinic {chr(65 + i // 26)}{chr(65 + i % 26)}", states=("IL",))
            for i in range(55)
        ]
        local = dataclasses.replace(resources, directory=Directory.from_organizations(orgs))
        answer = " ".join(f"{org.name}." for org in orgs)
        line = check_lines(verify(answer, jurisdiction="TX", sources=[], resources=local))["jurisdiction"]
        assert line.startswith(
            "jurisdiction: 0.00 user in TX; LEAK Clinic AA serves IL only (named 'Clinic AA')"
        )
        assert line.count("; LEAK ") == MAX_LISTED_FINDINGS  # the first follows "user in TX"
        assert line.endswith("; LEAK Clinic BX serves IL only (named 'Clinic BX'); " + MORE.format(5))
