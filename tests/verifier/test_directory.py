"""The organization directory loader: the golden file loads; every invalid file fails with one exact line."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.verifier.directory import Directory, load_directory

REPO = Path(__file__).resolve().parents[2]

INVALID = [
    ("not-a-list", "name: x\n", "expected a non-empty YAML list of organizations"),
    ("empty", "[]\n", "expected a non-empty YAML list of organizations"),
    ("malformed", "- name: [unclosed\n", "malformed YAML at line 2: did not find expected ',' or ']'"),
    ("entry-not-mapping", "- just text\n", "entry 1: expected a mapping with at least name and states"),
    ("missing-name", "- states: [IL]\n", "entry 1: field 'name' is required and must be text"),
    ("missing-states", "- name: A\n", "entry 1 ('A'): field 'states' is required (two-letter codes, US for national)"),
    ("unknown-state", "- name: A\n  states: [ZZ]\n", "entry 1 ('A'): field 'states': unknown state code 'ZZ'"),
    ("unknown-field", "- name: A\n  states: [IL]\n  website: x\n", "entry 1 ('A'): unknown field(s) website"),
    ("bad-phone", "- name: A\n  states: [IL]\n  phones: ['12']\n", "entry 1 ('A'): field 'phones': '12' is not a US phone number"),
    ("bad-domain", "- name: A\n  states: [IL]\n  domains: ['https://a.org/x']\n",
     "entry 1 ('A'): field 'domains': 'https://a.org/x' is not a bare domain like example.org"),
    ("duplicate-name", "- name: A\n  states: [IL]\n- name: a\n  states: [TX]\n", "organization 'a' is listed twice"),
    ("shared-phone", "- name: A\n  states: [MI]\n  phones: ['(800) 872-8432']\n- name: B\n  states: [MN]\n  phones: ['800-872-8432']\n",
     "phone 800-872-8432 is listed for both 'A' and 'B'"),
    ("shared-domain", "- name: A\n  states: [MI]\n  domains: [lsnm.org]\n- name: B\n  states: [MN]\n  domains: [www.lsnm.org]\n",
     "domain lsnm.org is listed for both 'A' and 'B'"),
]  # fmt: skip


class TestLoadDirectory:
    """load_directory validates the whole file before any answer is checked."""

    def test_shipped_sample_directory_loads(self) -> None:
        """The sample directory shipped with the sample dataset is valid and covers the six states and US."""
        directory = load_directory(REPO / "datasets" / "sample" / "organizations.yaml")
        states = {s for org in directory.organizations for s in org.states}
        assert {"IL", "TX", "MI", "OH", "OR", "WV", "US"} <= states

    @pytest.mark.parametrize(("text", "message"), [pytest.param(t, m, id=i) for i, t, m in INVALID])
    def test_invalid_file_is_one_line_naming_file(self, tmp_path: Path, text: str, message: str) -> None:
        """Each invalid directory fails with exactly ``<file>: <problem>``."""
        path = tmp_path / "orgs.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DataError) as info:
            load_directory(path)
        assert str(info.value) == f"{path}: {message}"
        assert "\n" not in str(info.value)

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing file is named."""
        with pytest.raises(DataError, match=r"nope\.yaml: file not found$"):
            load_directory(tmp_path / "nope.yaml")


class TestDirectoryLookups:
    """Ownership lookups match whole labels and names match as words."""

    @pytest.mark.parametrize(
        ("host", "owner"),
        [
            ("legalaidchicago.org", "Legal Aid Chicago"),
            ("www.legalaidchicago.org", "Legal Aid Chicago"),
            ("help.legalaidchicago.org", "Legal Aid Chicago"),
            ("LEGALAIDCHICAGO.ORG", "Legal Aid Chicago"),
            ("legalaidchicago.org.evil.test", None),
            ("evillegalaidchicago.org", None),
            ("evil.test", None),
        ],
    )
    def test_owner_of_host(self, directory: Directory, host: str, owner: str | None) -> None:
        """Hosts belong to the org owning the domain or a parent of it, never a look-alike."""
        found = directory.owner_of_host(host)
        assert (found.name if found else None) == owner

    @pytest.mark.parametrize(
        ("text", "names"),
        [
            ("Call legal aid chicago today", ["Legal Aid Chicago"]),
            ("LAC and LANWT", ["Legal Aid Chicago", "Legal Aid of NorthWest Texas"]),
            ("the lac of detail", []),
            ("Legal Aid Chicagoland", []),
            ("Legal\nAid Chicago", ["Legal Aid Chicago"]),
        ],
    )
    def test_find_mentions(self, directory: Directory, text: str, names: list[str]) -> None:
        """Names match case-insensitively as whole words; acronyms only in capitals."""
        assert [m.org.name for m in directory.find_mentions(text)] == names

    def test_masked_spans_are_skipped(self, directory: Directory) -> None:
        """A name inside a masked span (a URL) is not a mention."""
        text = "see https://x.org/Legal-Aid-Chicago and LAC"
        assert [m.surface for m in directory.find_mentions(text, masked=[(4, 35)])] == ["LAC"]
