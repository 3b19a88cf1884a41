"""The citations check: extraction against the golden table, statuses, the citation index, live mode.

The golden table (tests/golden/citations.yaml, rules in citations_README.md) was written from legal
knowledge before and apart from the extractor. Live mode asks a real HTTP server on 127.0.0.1 through
the real LivenessChecker; no other network is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.errors import DataError
from grounding_eval.verifier.citations import (
    MAX_CITATIONS,
    CitationIndex,
    CitationMention,
    CitationStatus,
    check_citations,
    find_citations,
    load_citation_index,
)

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "citations.yaml"
SAMPLE_INDEX = REPO / "datasets" / "sample" / "citations.yaml"
S = CitationStatus
SETTINGS = settings(max_examples=60, deadline=None)


def _rows() -> list[Any]:
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    return [pytest.param(r, id=r["id"]) for r in rows]


def _extracted(text: str, expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The extraction in the golden table's terms. A statute of a state other than the six (and
    California) has ``normalized: null`` in the table: only its kind and jurisdiction are checked
    (citations_README.md)."""
    got = []
    for n, m in enumerate(find_citations(text).mentions):
        row = {"citation": m.raw, "kind": m.kind, "jurisdiction": m.jurisdiction, "normalized": m.normalized}
        want = expected[n] if n < len(expected) else {}
        if want.get("normalized") is None and want.get("jurisdiction") is not None and m.kind != "case":
            row["normalized"] = None
        got.append(row)
    return got


class TestGoldenCitations:
    """Every row of the citation golden table holds."""

    @pytest.mark.parametrize("row", _rows())
    def test_row(self, row: dict[str, Any]) -> None:
        """Each citation a careful legal reader finds, in order, with kind, jurisdiction and normal form."""
        assert _extracted(row["text"], row["expected"]) == row["expected"], row["note"]

    def test_raw_is_the_text(self) -> None:
        """Every extracted citation is the text between its start and end, in every row."""
        for param in _rows():
            text = param.values[0]["text"]
            for m in find_citations(text).mentions:
                assert text[m.start : m.end] == m.raw

    def test_table_is_large_enough(self) -> None:
        """The acceptance asks for at least 40 rows, look-alikes (no citation) among them."""
        rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
        assert len(rows) >= 40
        assert any(r["expected"] == [] for r in rows)
        assert {e["kind"] for r in rows for e in r["expected"]} == {"statute", "regulation", "rule", "case"}


def _one(text: str) -> CitationMention:
    (m,) = find_citations(text).mentions
    return m


def _index(tmp_path: Path, body: dict[str, Any] | str) -> CitationIndex:
    path = tmp_path / "citations.yaml"
    path.write_text(body if isinstance(body, str) else yaml.safe_dump(body), encoding="utf-8")
    return load_citation_index(path)


def _statuses(text: str, user: str | None, index: CitationIndex | None, sources: list[str]) -> list[S]:
    return [f.status for f in check_citations(find_citations(text).mentions, user, index, sources)]


class TestStatuses:
    """check_citations gives each citation one status, in the documented order."""

    def test_in_sources(self) -> None:
        """A section cited in the reference text is IN_SOURCES, in any form the extractor reads."""
        source = "Sec. 2 of the act: see Mich. Comp. Laws § 554.602 (limits on deposits)."
        assert _statuses("MCL 554.602 caps the deposit.", "MI", None, [source]) == [S.IN_SOURCES]

    def test_known(self, tmp_path: Path) -> None:
        """A section listed in the index, not in the sources, is KNOWN."""
        index = _index(tmp_path, {"citations": ["765 ILCS 705/1"]})
        assert _statuses("See 765 ILCS 705/1.", "IL", index, []) == [S.KNOWN]

    def test_unknown_under_code_cover(self, tmp_path: Path) -> None:
        """A section not listed, in a code the index covers, is UNKNOWN (a hallucinated citation)."""
        index = _index(tmp_path, {"covers": ["765 ILCS"], "citations": ["765 ILCS 705/1"]})
        findings = check_citations(find_citations("See 765 ILCS 705/9.").mentions, "IL", index, [])
        assert [f.status for f in findings] == [S.UNKNOWN]
        assert "765 ILCS" in findings[0].why

    def test_section_range_cover(self) -> None:
        """The sample's cover §§ 554.601–554.616 holds 554.613, 554.601a and 554.609a (UNKNOWN: not
        listed), not 554.617 nor 554.5 nor 554.6015 (numbers, not strings: 6015 is past 616)."""
        index = load_citation_index(SAMPLE_INDEX)
        text = (
            "MCL 554.613, MCL 554.601a, MCL 554.609a, MCL 554.617, MCL 554.5, MCL 554.6015 and MCL 600.5714."
        )
        assert _statuses(text, "MI", index, []) == [S.KNOWN, S.KNOWN, S.UNKNOWN] + [S.UNCHECKED] * 4

    def test_wrong_jurisdiction(self) -> None:
        """Texas law for an Illinois user is WRONG_JURISDICTION; federal and Illinois law never are."""
        text = "Tex. Prop. Code § 24.005 does not apply; 42 U.S.C. § 3604 and 735 ILCS 5/9-209 do."
        assert _statuses(text, "IL", None, []) == [S.WRONG_JURISDICTION, S.UNCHECKED, S.UNCHECKED]

    def test_state_name_before_a_code_hides_nothing(self, tmp_path: Path) -> None:
        """ "Texas … Tex. Prop. Code § N": the citation is read (Texas law for an Ohio user; an invented
        section under a Texas cover for a Texas user), not left as an ambiguous bare section."""
        text = "Texas tenants have rights under Tex. Prop. Code § 92.0561."
        assert _statuses(text, "OH", None, []) == [S.WRONG_JURISDICTION]
        index = _index(tmp_path, {"covers": ["Tex. Prop. Code"], "citations": ["Tex. Prop. Code § 92.056"]})
        assert _statuses("Texas law: Tex. Prop. Code § 92.0559", "TX", index, []) == [S.UNKNOWN]

    def test_wrong_jurisdiction_before_in_sources(self) -> None:
        """Another state's law stays a leak even when the sources cite it."""
        text = "Tex. Prop. Code § 24.005 applies."
        assert _statuses(text, "IL", None, [text]) == [S.WRONG_JURISDICTION]
        assert _statuses(text, "TX", None, [text]) == [S.IN_SOURCES]

    def test_no_user_state_no_leak(self) -> None:
        """Without a user state nothing is WRONG_JURISDICTION."""
        assert _statuses("Tex. Prop. Code § 24.005.", None, None, []) == [S.UNCHECKED]

    def test_unchecked_without_index(self) -> None:
        """Nothing covering it offline: UNCHECKED, with the reason."""
        (finding,) = check_citations(find_citations("ORS 90.427.").mentions, "OR", None, [])
        assert finding.status is S.UNCHECKED and finding.why

    def test_ambiguous_short_cite_never_fails(self, tmp_path: Path) -> None:
        """A short cite whose code is ambiguous is UNCHECKED, even under covers of both codes."""
        index = _index(tmp_path, {"covers": ["765 ILCS", "W. Va. Code"], "citations": []})
        text = "Compare W. Va. Code § 37-6A-2 with 765 ILCS 710/1. Sec. 3 adds a penalty. Id."
        findings = check_citations(find_citations(text).mentions, "IL", index, [])
        ambiguous = [f for f in findings if f.mention.key is None]
        assert ambiguous and all(f.status is S.UNCHECKED for f in ambiguous)

    def test_reference_order_does_not_matter(self, tmp_path: Path) -> None:
        """The same answer gets the same statuses whatever the order of the reference texts."""
        index = load_citation_index(SAMPLE_INDEX)
        answer = "MCL 554.602, Tex. Prop. Code § 92.103, 42 U.S.C. § 3604 and MCL 554.699. Id."
        sources = ["Tex. Prop. Code § 92.103 applies.", "See MCL 554.699.", "Nothing here.", ""]
        first = _statuses(answer, "MI", index, sources)
        assert first == _statuses(answer, "MI", index, list(reversed(sources)))
        assert first == _statuses(answer, "MI", index, sources[1:] + sources[:1])


class TestSampleIndex:
    """datasets/sample/citations.yaml loads and covers what its comments say."""

    def test_loads(self) -> None:
        """Every listed section reads as a citation; two covers (the two Michigan acts)."""
        index = load_citation_index(SAMPLE_INDEX)
        assert index.entries == len(index.keys) and len(index.covers) == 2

    @pytest.mark.parametrize(
        ("text", "status"),
        [
            ("15 U.S.C. § 9058", S.KNOWN),
            ("42 U.S.C. § 3604(b)", S.KNOWN),
            ("Mich. Comp. Laws § 554.631", S.KNOWN),
            ("MCL 554.641", S.KNOWN),
            ("MCL 554.640a", S.UNKNOWN),  # inside the Truth in Renting Act's range, not listed
            ("MCL 554.642", S.UNCHECKED),  # past it
            ("MCL 554.620", S.UNCHECKED),  # between the two acts: covered by neither
            ("15 U.S.C. § 9059", S.UNCHECKED),  # the U.S. Code is not covered
        ],
    )
    def test_covers(self, text: str, status: S) -> None:
        """Listed sections are KNOWN; unlisted ones inside a covered act UNKNOWN; the rest UNCHECKED."""
        assert _statuses(text, "MI", load_citation_index(SAMPLE_INDEX), []) == [status]


class TestIndexErrors:
    """A malformed citation index is one DataError line naming the file."""

    @pytest.mark.parametrize(
        "body",
        [
            "- 765 ILCS 705/1\n",
            "just text\n",
            "covers: []\ncitations: []\nextra: 1\n",
            "citations: 765 ILCS 705/1\n",
            "citations:\n  - the landlord must return the deposit\n",
            "citations:\n  - {note: no citation key}\n",
            "citations:\n  - ''\n",
            "covers:\n  - the whole of Illinois law\n",
            "covers:\n  - 3\n",
            "covers: {765 ILCS: yes}\n",
            "covers: [\n",
        ],
    )
    def test_malformed(self, tmp_path: Path, body: str) -> None:
        """Not a mapping, an unknown key, an entry that is not a citation, a bad cover, bad YAML."""
        path = tmp_path / "citations.yaml"
        path.write_text(body, encoding="utf-8")
        with pytest.raises(DataError) as caught:
            load_citation_index(path)
        message = str(caught.value)
        assert str(path) in message and "\n" not in message

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing index is a DataError naming it."""
        with pytest.raises(DataError, match=r"nope\.yaml"):
            load_citation_index(tmp_path / "nope.yaml")


# -- live mode: tests/verifier/test_citation_pages.py ---------------------------------------------------


class TestShortCiteSection:
    def test_resolved_short_cite_carries_its_section(self) -> None:
        """A short cite resolved to a code has its own section, so live mode can ask for its page."""
        text = "Tex. Prop. Code § 92.103. Id. § 92.104. Id."
        found = find_citations(text).mentions
        assert [m.section for m in found] == ["92.103", "92.104", "92.104"]
        assert [m.normalized for m in found][-1] == "Tex. Prop. Code § 92.104"
        assert [m.inferred for m in found] == [False, True, True]


# -- properties ---------------------------------------------------------------------------------------

_NO_TRIGGER = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="§&SsICULMORFPTdD0123456789",
    ),
    max_size=300,
)
_WORDS = st.lists(
    st.sampled_from(["the", "landlord", "must", "a", "notice", "tenant", "for", "in"]), max_size=12
)
_FULL = st.sampled_from(
    [
        "765 ILCS 705/1",
        "735 ILCS 5/9-209",
        "Tex. Prop. Code § 24.005",
        "MCL 554.601",
        "Mich. Comp. Laws § 554.602",
        "ORS 90.427",
        "R.C. 5321.04",
        "W. Va. Code § 37-6-30",
        "42 U.S.C. § 3604",
        "24 C.F.R. § 982.310",
    ]
)


class TestProperties:
    """Properties that wrong code can fail."""

    @SETTINGS
    @given(text=_NO_TRIGGER)
    def test_no_trigger_no_citation(self, text: str) -> None:
        """Text with no digit and no character a citation's code can start with holds no citation."""
        found = find_citations(text)
        event("empty" if not text.strip() else "some text")
        assert found.mentions == () and found.capped == 0

    @SETTINGS
    @given(cite=_FULL, before=_WORDS, between=_WORDS)
    def test_prose_does_not_change_a_full_citation(
        self, cite: str, before: list[str], between: list[str]
    ) -> None:
        """Unrelated sentences before a full citation do not change what it is read as."""
        alone = _one(f"See {cite}.")
        prose = " ".join(before).capitalize()
        text = f"{prose + '. ' if prose else ''}{' '.join(between)} See {cite}."
        found = find_citations(text).mentions
        event(f"{len(before) + len(between)} words of prose")
        assert [(m.raw, m.normalized, m.key) for m in found] == [(alone.raw, alone.normalized, alone.key)]
        assert text[found[0].start : found[0].end] == cite

    @SETTINGS
    @given(
        cites=st.lists(_FULL, min_size=1, max_size=8), sep=st.sampled_from([", ", "; ", " and ", ". See "])
    )
    def test_raw_is_text_slice(self, cites: list[str], sep: str) -> None:
        """Every citation's raw is text[start:end], in order, and each full citation is found once."""
        text = "See " + sep.join(cites) + "."
        found = find_citations(text).mentions
        event(f"{len(cites)} citations")
        assert [m.raw for m in found] == cites
        assert all(text[m.start : m.end] == m.raw for m in found)
        assert [m.start for m in found] == sorted(m.start for m in found)

    @SETTINGS
    @given(n=st.integers(1, 3 * MAX_CITATIONS), short=st.booleans())
    def test_cap(self, n: int, short: bool) -> None:
        """At most MAX_CITATIONS are read, the first ones in order; past it some are counted."""
        unit = "§ 24.006. " if short else "MCL 554.601; "
        text = "Tex. Prop. Code § 24.005. " + unit * n
        found = find_citations(text)
        total = n + 1
        event("over the cap" if total > MAX_CITATIONS else "under the cap")
        assert len(found.mentions) == min(total, MAX_CITATIONS)
        assert (found.capped > 0) == (total > MAX_CITATIONS)
        assert found.mentions[0].raw == "Tex. Prop. Code § 24.005"
