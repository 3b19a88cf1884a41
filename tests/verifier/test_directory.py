"""The organization directory loader: the golden file loads; every invalid file fails with one exact line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.verifier.directory import (
    _ASCII_LOOKALIKES,
    Directory,
    Organization,
    _suffix_rules,
    is_public_suffix,
    load_directory,
)
from grounding_eval.verifier.urls import _extractor, host_matches_domain

REPO = Path(__file__).resolve().parents[2]

INVALID = [
    ("not-a-list", "name: x\n", "expected a non-empty YAML list of organizations"),
    ("empty", "[]\n", "expected a non-empty YAML list of organizations"),
    ("malformed", "- name: [unclosed\n", "malformed YAML at line 2: did not find expected ',' or ']'"),
    ("entry-not-mapping", "- just text\n", "entry 1: expected a mapping with at least name and states"),
    ("missing-name", "- states: [IL]\n", "entry 1: field 'name' is required and must be text"),
    ("missing-states", "- name: A\n", "entry 1 ('A'): field 'states' is required (two-letter codes, US for national)"),
    ("unknown-state", "- name: A\n  states: [ZZ]\n", "entry 1 ('A'): field 'states': unknown state code 'ZZ'"),
    ("unknown-field", "- name: A\n  states: [IL]\n  website: x\n", "entry 1 ('A'): unknown field(s) website (allowed: aliases, domains, name, note, phones, source, states, unverified)"),
    ("bad-phone", "- name: A\n  states: [IL]\n  phones: ['12']\n", "entry 1 ('A'): field 'phones': '12' is not a US phone number"),
    ("bad-domain", "- name: A\n  states: [IL]\n  domains: ['https://a.org/x']\n",
     "entry 1 ('A'): field 'domains': 'https://a.org/x' is not a bare domain like example.org"),
    ("duplicate-name", "- name: A\n  states: [IL]\n- name: a\n  states: [TX]\n", "organization 'a' is listed twice"),
    ("shared-phone", "- name: A\n  states: [MI]\n  phones: ['(800) 872-8432']\n- name: B\n  states: [MN]\n  phones: ['800-872-8432']\n",
     "phone 800-872-8432 is listed for both 'A' and 'B'"),
    ("shared-domain", "- name: A\n  states: [MI]\n  domains: [lsnm.org]\n- name: B\n  states: [MN]\n  domains: [www.lsnm.org]\n",
     "domain lsnm.org is listed for both 'A' and 'B'"),
    ("private-suffix-domain", "- name: Pages\n  states: [IL]\n  domains: [github.io]\n",
     "organization 'Pages': domain github.io is a public suffix, so it would own every site under it; "
     "list the organization's own domain (e.g. name.github.io)"),
    ("icann-suffix-domain", "- name: A\n  states: [IL]\n  domains: [www.co.uk]\n",
     "organization 'A': domain co.uk is a public suffix, so it would own every site under it; "
     "list the organization's own domain (e.g. name.co.uk)"),
    ("wildcard-suffix-domain", "- name: A\n  states: [IL]\n  domains: [x.kawasaki.jp]\n",
     "organization 'A': domain x.kawasaki.jp is a public suffix, so it would own every site under it; "
     "list the organization's own domain (e.g. name.x.kawasaki.jp)"),
    ("digits-alias", "- name: A\n  aliases: [Legal A, 211]\n  states: [US]\n",
     "entry 1 ('A'): field 'aliases': '211' has no letter (an alias of digits and punctuation would match "
     "numbers in the answer: section numbers, parts of phone numbers)"),
    ("punctuation-alias", "- name: A\n  aliases: ['1-800']\n  states: [US]\n",
     "entry 1 ('A'): field 'aliases': '1-800' has no letter (an alias of digits and punctuation would match "
     "numbers in the answer: section numbers, parts of phone numbers)"),
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

    def test_digit_name_and_dotted_alias_load(self, tmp_path: Path) -> None:
        """The letter rule is for aliases: a name of digits ("211", the helpline) and "211.org" load."""
        path = tmp_path / "orgs.yaml"
        path.write_text('- name: "211"\n  aliases: ["211.org"]\n  domains: [211.org]\n  states: [US]\n')
        assert load_directory(path).organizations[0].aliases == ("211.org",)

    def test_domain_under_a_suffix_or_a_wildcard_exception_loads(self, tmp_path: Path) -> None:
        """A site under a private suffix, and a wildcard's exception (city.kawasaki.jp), are domains."""
        path = tmp_path / "orgs.yaml"
        path.write_text(
            "- name: A\n  states: [IL]\n  domains: [someorg.github.io, city.kawasaki.jp, www.org]\n"
        )
        assert load_directory(path).organizations[0].domains == (
            "someorg.github.io",
            "city.kawasaki.jp",
            "www.org",
        )

    def test_loading_does_not_import_tldextract(self) -> None:
        """Loading a directory of ordinary domains reads the suffix list without importing tldextract.

        promptfoo starts a fresh Python for every assertion call; tldextract costs ~100 ms there.
        """
        code = (
            "import sys\n"
            "from grounding_eval.verifier.directory import load_directory\n"
            f"load_directory({str(REPO / 'datasets' / 'sample' / 'organizations.yaml')!r})\n"
            f"load_directory({str(REPO / 'tests' / 'fixtures' / 'verifier' / 'orgs.yaml')!r})\n"
            "print('tldextract' in sys.modules)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "False"

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
            ("legalaidchicago.org.", "Legal Aid Chicago"),
            ("www.www.legalaidchicago.org", "Legal Aid Chicago"),
            ("legalaidchicago.org@evil.test", None),
            ("evil.test:80", None),
            ("a_b.legalaidchicago.org", "Legal Aid Chicago"),  # an underscore in a subdomain (issue 38)
            ("legal_aidchicago.org", None),  # but never in the registered name
            ("legal%61idchicago.org", None),
            ("", None),
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

    def test_names_with_characters_case_insensitive_matching_treats_specially(
        self, directory: Directory
    ) -> None:
        """A Kelvin sign or a dotless i matches a name's k or i as the pattern matches it (the search from
        the names' first words steps aside for such a text)."""
        text = "Pra\u0131rie State Legal Services; LONE \u017fTAR LEGAL AID; Tru\u017fted Legal Help \u212a"
        assert [m.org.name for m in directory.find_mentions(text)] == [
            "Prairie State Legal Services", "Lone Star Legal Aid", "Trusted Legal Help",
        ]  # fmt: skip

    def test_ascii_lookalikes_are_every_character_matching_ascii_case_insensitively(self) -> None:
        """Every character outside ASCII that a case-insensitive pattern matches to an ASCII letter, digit
        or underscore is one of the four the search from the names' first words steps aside for."""
        every = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF)
        found = set(re.findall(r"[A-Za-z0-9_]", every, re.IGNORECASE))
        assert found == set(_ASCII_LOOKALIKES.pattern.strip("[]"))


HOSTS = [
    "legalaidchicago.org", "www.legalaidchicago.org", "help.legalaidchicago.org", "LEGALAIDCHICAGO.ORG",
    "legalaidchicago.org.", "legalaidchicago.org.evil.test", "evillegalaidchicago.org", "evil.test",
    "lanwt.org", "x.legalaidtx.org", "lsc.gov", "trusted.org", "sub.trusted.org", "trusted.org@evil.test",
    "evil.test:443", "a_b.trusted.org", "trusted%2Eorg", "trusted.org/x", "www.org", "org", "",
    " trusted.org ", "trusted.org\t", "xn--bcher-kva.org", "bücher.org", "[::1]", "10.0.0.1",
]  # fmt: skip


class TestOwnerOfHostRule:
    """owner_of_host applies host_matches_domain's rule, and no public suffix owns its sites."""

    @pytest.mark.parametrize("host", HOSTS)
    def test_same_rule_as_host_matches_domain(self, directory: Directory, host: str) -> None:
        """The owner is the organization of the longest directory domain that host_matches_domain accepts."""
        matching = [
            (len(d), o) for o in directory.organizations for d in o.domains if host_matches_domain(host, d)
        ]
        expected = max(matching, key=lambda pair: pair[0])[1] if matching else None
        assert directory.owner_of_host(host) is expected

    def test_public_suffix_domains_refused_when_built(self) -> None:
        """A directory built in memory refuses a suffix domain too (it would own every github.io site)."""
        org = Organization(name="Pages", states=("IL",), domains=("github.io",))
        with pytest.raises(
            DataError, match=r"^<memory>: organization 'Pages': domain github.io is a public suffix"
        ):
            Directory.from_organizations([org])
        own = Organization(name="Pages", states=("IL",), domains=("pages.github.io",))
        directory = Directory.from_organizations([own])
        assert directory.owner_of_host("pages.github.io") is own
        assert directory.owner_of_host("other.github.io") is None


class TestIsPublicSuffix:
    """is_public_suffix agrees with tldextract (private section included) on every rule of the snapshot."""

    def test_snapshot_is_found(self) -> None:
        """The pinned tldextract ships the snapshot where the cheap test reads it (else: slower, not wrong)."""
        rules = _suffix_rules()
        assert rules is not None and "github.io" in rules and "com" in rules and "*.kawasaki.jp" in rules

    def test_agrees_with_tldextract_on_every_rule(self) -> None:
        """For each rule, the domain itself, a name under it, and a wildcard's or exception's neighbours."""
        rules = _suffix_rules()
        assert rules is not None
        candidates: set[str] = set()
        for rule in rules:
            bare = rule.lstrip("!").removeprefix("*.")
            for name in (bare, "name." + bare, "x.name." + bare):
                try:
                    candidates.add(name.encode("idna").decode("ascii").lower())
                except UnicodeError:
                    continue
        extractor = _extractor()
        disagree = [
            d for d in sorted(candidates)
            if is_public_suffix(d) != (not extractor.extract_str(d, include_psl_private_domains=True).domain)
        ]  # fmt: skip
        assert disagree == []
