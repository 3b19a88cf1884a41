"""The rules that decide a found citation's status (issue 38), beyond the golden rows: a range's order is
its code's numbering, a short cite read by inference is never a hard failure, a labelled comparison is
still another state's law (its label read in its own sentence only), a bad index entry is one DataError
line, and nothing raises out of the check. Real eyecite/citeurl throughout; no network."""

from __future__ import annotations

import importlib
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.errors import DataError
from grounding_eval.verifier.citations import (
    _CONTRAST,
    _CUE_WORDS,
    MAX_CITATIONS,
    CitationIndex,
    CitationMention,
    CitationStatus,
    check_citations,
    cover_gaps,
    find_citations,
    load_citation_index,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
S = CitationStatus
SETTINGS = settings(max_examples=80, deadline=None)
HARD = {S.UNKNOWN, S.WRONG_JURISDICTION}


def _index(tmp_path: Path, body: dict[str, Any]) -> CitationIndex:
    path = tmp_path / "citations.yaml"
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return load_citation_index(path)


def _key(text: str) -> tuple[str, ...]:
    (m,) = find_citations(text).mentions
    assert m.key is not None
    return m.key


class TestRangeOrder:
    """A range holds a section exactly when the code's numbering puts it between the ends."""

    @SETTINGS
    @given(
        ends=st.lists(st.integers(1, 99), min_size=2, max_size=2, unique=True),
        x=st.integers(1, 9999),
        widths=st.tuples(st.integers(3, 4), st.integers(3, 4), st.integers(3, 4)),
    )
    def test_texas_decimals(self, ends: list[int], x: int, widths: tuple[int, int, int]) -> None:
        """Texas writes its sections with a leading zero (92.051, 92.0563): a range of them is read as
        decimals, so whole-number order never decides (92.103 is not inside 92.051–92.0563)."""
        lo, hi = sorted(
            (f"0{n:0{w - 1}d}" for n, w in zip(ends, widths[:2], strict=True)),
            key=lambda d: Decimal(f"0.{d}"),
        )
        if Decimal(f"0.{lo}") == Decimal(f"0.{hi}"):
            return
        section = f"{x:0{widths[2]}d}"[-widths[2] :]
        cover = _cover(f"Tex. Prop. Code §§ 92.{lo}–92.{hi}")
        inside = Decimal(f"0.{lo}") <= Decimal(f"0.{section}") <= Decimal(f"0.{hi}")
        event("inside" if inside else "outside")
        event("orders differ" if inside != (int(lo) <= int(section) <= int(hi)) else "orders agree")
        assert cover.holds(_key(f"Tex. Prop. Code § 92.{section}")) is inside

    @SETTINGS
    @given(ends=st.lists(st.integers(1, 9999), min_size=2, max_size=2, unique=True), x=st.integers(1, 99999))
    def test_no_leading_zero_needs_both_readings(self, ends: list[int], x: int) -> None:
        """Michigan writes whole numbers (456.10 follows 456.9): without a leading zero to show decimal
        numbering, a range holds a section only when it lies inside as whole numbers and as decimals."""
        lo, hi = sorted(ends)
        cover = _cover(f"Mich. Comp. Laws §§ 554.{lo}–554.{hi}")
        whole = lo <= x <= hi
        decimal = Decimal(f"0.{lo}") <= Decimal(f"0.{x}") <= Decimal(f"0.{hi}")
        event(f"whole {whole}, decimal {decimal}")
        assert cover.holds(_key(f"MCL 554.{x}")) is (whole and decimal)

    def test_the_issue_case(self, tmp_path: Path) -> None:
        """The four real sections the issue saw fail under §§ 92.051–92.0563 are outside it."""
        index = _index(tmp_path, {"covers": ["Tex. Prop. Code §§ 92.051–92.0563"], "citations": []})
        for section in ("92.0081", "92.103", "92.109", "92.331"):
            assert index.covering(_key(f"Tex. Prop. Code § {section}")) is None, section
        for section in ("92.051", "92.052", "92.056", "92.0561", "92.0563"):
            assert index.covering(_key(f"Tex. Prop. Code § {section}")) is not None, section


def _cover(written: str) -> Any:
    from grounding_eval.verifier.citations import _read_cover

    cover = _read_cover(written)
    assert not isinstance(cover, str), cover
    return cover


_CODES = [
    ("Tex. Prop. Code § 92.052", "§ 92.{n}", "Tex. Prop. Code"),
    ("MCL 554.602", "§ 554.{n}", "MCL 554"),
    ("R.C. 5321.04", "Sec. 5321.{n}", "Ohio Rev. Code Chapter 5321"),
    ("ORS 90.320", "section 90.{n}", "ORS chapter 90"),
    ("765 ILCS 705/1", "Sec. {n}", "765 ILCS 705"),
]


class TestInferredShortCites:
    """A bare section or an Id. read as an earlier code's section is never a hard failure."""

    @SETTINGS
    @given(
        code=st.sampled_from(_CODES),
        n=st.integers(1, 99999),
        user=st.sampled_from(["TX", "MI", "OH", "OR", "IL", "WV"]),
        form=st.sampled_from(["bare", "id"]),
    )
    def test_never_hard(self, code: tuple[str, str, str], n: int, user: str, form: str) -> None:
        full, short, cover = code
        short_text = short.format(n=n) if form == "bare" else f"Id. {short.format(n=n).split()[-1]}"
        if form == "id":
            short_text = f"Id. § {short_text.split()[-1]}"
        text = f"{full} applies. Then {short_text} says more."
        index = _INDEXES[cover]
        findings = check_citations(find_citations(text).mentions, user, index, [])
        shorts = [f for f in findings if f.mention.inferred]
        event(f"{form}: {len(shorts)} inferred")
        for f in shorts:
            event(f.status.value)
            assert f.status not in HARD, f.why
            if f.status is S.UNCHECKED:
                assert "by inference; not a hard failure" in f.why
        # the full citation keeps its own status: a leak is still a leak
        assert findings[0].mention.inferred is False
        if findings[0].mention.jurisdiction != user:
            assert findings[0].status is S.WRONG_JURISDICTION


def _load(cover: str) -> CitationIndex:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="cite-index-"))
    path = folder / "citations.yaml"
    path.write_text(yaml.safe_dump({"covers": [cover], "citations": []}), encoding="utf-8")
    return load_citation_index(path)


_INDEXES = {cover: _load(cover) for _, _, cover in _CODES}


def _language(items: list[Any]) -> set[str]:
    """The strings a finite pattern (literals, alternatives, groups, optional parts, ``\\b``) matches."""
    c: Any = importlib.import_module("re._constants")
    out = {""}
    for op, av in items:
        if op is c.LITERAL:
            part = {chr(av)}
        elif op is c.BRANCH:
            part = set().union(*(_language(list(branch)) for branch in av[1]))
        elif op is c.SUBPATTERN:
            part = _language(list(av[3]))
        elif op is c.MAX_REPEAT and (av[0], av[1]) == (0, 1):
            part = {""} | _language(list(av[2]))
        elif op is c.IN and all(kind is c.LITERAL for kind, _ in av):
            part = {chr(value) for _, value in av}
        elif op is c.AT:
            continue
        else:
            raise AssertionError(f"not a finite pattern: {op}")
        out = {a + b for a in out for b in part}
    return out


_NEIGHBOURS = st.lists(
    st.sampled_from(
        [
            "By contrast, Indiana is different.",
            "Unlike Illinois, Ohio has an escrow law.",
            "Compared with Oregon, this is short.",
            "Whereas Michigan lets tenants sue, the rest differs.",
            "In contrast, the deposit is due in 30 days.",
            "Call the court first.",
        ]
    ),
    max_size=3,
)


class TestLabelledComparisons:
    """The label is read in the citation's own sentence only."""

    @SETTINGS
    @given(
        sentence=st.sampled_from(
            [
                ("In Illinois, by contrast, 765 ILCS 710/1 gives 45 days.", "Illinois, by contrast"),
                ("Unlike Texas (Tex. Prop. Code § 92.056), you must give notice.", "Unlike Texas"),
                ("Tex. Prop. Code § 92.056 lets you repair and deduct.", None),
                ("Under ORS 90.427 a landlord gives 90 days.", None),
            ]
        ),
        before=_NEIGHBOURS,
        after=_NEIGHBOURS,
    )
    def test_neighbours_do_not_label(
        self, sentence: tuple[str, str | None], before: list[str], after: list[str]
    ) -> None:
        """Labelled or not, another state's law is WRONG_JURISDICTION; the label is its own sentence's."""
        text, label = sentence
        joined = " ".join([*before, text, *after])
        findings = check_citations(find_citations(joined).mentions, "OH", None, [])
        event(f"{len(before) + len(after)} neighbours")
        assert [f.status for f in findings] == [S.WRONG_JURISDICTION]
        assert [f.mention.contrast for f in findings] == [label]
        assert ("labelled as a comparison" in findings[0].why) is (label is not None)

    def test_the_reason_quotes_the_label(self) -> None:
        (finding,) = check_citations(
            find_citations("In Illinois, by contrast, 765 ILCS 710/1 gives 45 days.").mentions, "OH", None, []
        )
        assert finding.status is S.WRONG_JURISDICTION
        assert "labelled as a comparison ('Illinois, by contrast'); still another state's law" in finding.why
        assert "the user is in OH" in finding.why

    def test_every_cue_holds_a_cue_word(self) -> None:
        """Every phrase the contrast pattern matches holds one of the words looked for first (a text with
        none of them is labelled without a search): the pattern's language, expanded, is finite."""
        parser: Any = importlib.import_module("re._parser")
        phrases = _language(list(parser.parse(_CONTRAST.pattern)))
        assert len(phrases) > 20 and {"unlike", "by contrast", "as opposed to", "different from"} <= phrases
        assert [p for p in phrases if not any(w in p for w in _CUE_WORDS)] == []

    @pytest.mark.parametrize(
        "text",
        [
            "In Illinois, BY CONTRAST, 765 ILCS 710/1 gives 45 days.",
            "In Illinois, by contra\u017ft, 765 ILCS 710/1 gives 45 days.",  # (long s: an s to the pattern)
            "Unl\u0131ke Illinois (765 ILCS 710/1), Ohio has an escrow law.",  # (dotless i)
        ],
    )
    def test_cue_in_capitals_or_with_a_lookalike(self, text: str) -> None:
        """A cue the pattern matches case-insensitively labels the citation, whatever its letters."""
        (finding,) = check_citations(find_citations(text).mentions, "OH", None, [])
        assert finding.mention.contrast is not None

    def test_own_state_is_never_a_comparison(self) -> None:
        """The user's own law in a contrast sentence is checked as usual."""
        text = "Unlike Texas, Ohio lets you escrow rent under R.C. 5321.07."
        assert [f.status for f in check_citations(find_citations(text).mentions, "OH", None, [])] == [
            S.UNCHECKED
        ]


# Index entries a citeurl template fails on today (a Delaware General Corporation Law name near "Del.":
# IndexError inside citeurl); whether or not the finder reads them, loading never raises anything else.
_TRIPPING = ["Del. Gen. Corp. Law § 102", "Under 8 Del. C. § 220, DGCL § 220 applies."]


class TestNothingRaises:
    @pytest.mark.parametrize("entry", _TRIPPING)
    @pytest.mark.parametrize("where", ["citations", "covers"])
    def test_an_index_entry_is_a_data_error(self, tmp_path: Path, entry: str, where: str) -> None:
        """An entry a library fails on is one DataError line naming the file and the entry."""
        path = tmp_path / "citations.yaml"
        body = {
            "citations": [entry] if where == "citations" else [],
            "covers": [entry] if where == "covers" else [],
        }
        path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
        try:
            load_citation_index(path)
        except DataError as exc:
            message = str(exc)
            assert str(path) in message and f"{where}[0]" in message and "\n" not in message

    def test_a_failing_lookup_leaves_that_citation_unchecked(self) -> None:
        """An exception deciding one citation makes it UNCHECKED with the reason; the others keep theirs."""
        mentions = find_citations("ORS 90.427 and Tex. Prop. Code § 24.005 apply.").mentions

        def lookup(mention: CitationMention) -> tuple[S, str] | None:
            if mention.jurisdiction == "OR":
                raise RuntimeError("the page parser broke")
            return None

        findings = check_citations(mentions, None, None, [], lookup)
        assert [f.status for f in findings] == [S.UNCHECKED, S.UNCHECKED]
        assert "RuntimeError: the page parser broke" in findings[0].why
        assert findings[1].why == "no citation index covers it"

    @pytest.mark.parametrize("reference", _TRIPPING)
    def test_an_unreadable_reference_never_makes_unknown_silently(
        self, tmp_path: Path, reference: str
    ) -> None:
        """A reference text a library fails on cannot place a citation IN_SOURCES: what would be UNKNOWN
        is UNCHECKED and says why; nothing raises."""
        index = _index(tmp_path, {"covers": ["765 ILCS 705"], "citations": ["765 ILCS 705/1"]})
        findings = check_citations(
            find_citations("765 ILCS 705/9 and 765 ILCS 705/1.").mentions, "IL", index, [reference]
        )
        assert findings[1].status is S.KNOWN
        if findings[0].status is S.UNCHECKED:
            assert "reference text could not be read" in findings[0].why
        else:
            assert findings[0].status is S.UNKNOWN


class TestCoverGaps:
    def test_a_gap_is_named(self, tmp_path: Path) -> None:
        """Listed 554.602 and 554.605 under a range: 554.603 and 554.604 are held but not listed."""
        index = _index(
            tmp_path,
            {"covers": ["Mich. Comp. Laws §§ 554.601–554.616"],
             "citations": ["MCL 554.601", "MCL 554.602", "MCL 554.605", "MCL 554.601a"]},
        )  # fmt: skip
        (line,) = cover_gaps(index)
        assert "2 unlisted section(s)" in line and "Mich. Comp. Laws § 554.603" in line
        assert "554.604" in line and str(index.path) in line

    def test_texas_decimal_gap(self, tmp_path: Path) -> None:
        """Neighbours are read in the range's order: 92.054 to 92.056 lacks 92.055; 92.056 to 92.0561
        (an inserted section) is no gap."""
        index = _index(
            tmp_path,
            {"covers": ["Tex. Prop. Code §§ 92.051–92.0563"],
             "citations": [f"Tex. Prop. Code § 92.{s}" for s in ("051", "052", "053", "054", "056", "0561")]},
        )  # fmt: skip
        (line,) = cover_gaps(index)
        assert "1 unlisted section(s)" in line and "Tex. Prop. Code § 92.055" in line
        assert "inserted" in line  # (and any decimal between listed ones)

    def test_no_gap_no_warning(self) -> None:
        """The sample lists both acts whole, lettered sections included, as its articles cite them."""
        articles = [p.read_text(encoding="utf-8") for p in (SAMPLE / "articles").glob("mi-*.txt")]
        assert len(articles) == 2
        assert cover_gaps(load_citation_index(SAMPLE / "citations.yaml"), articles) == []

    def test_decimal_code_is_never_complete_by_whole_numbers(self, tmp_path: Path) -> None:
        """Every whole-number section of §§ 92.001–92.026 listed: 92.0081 (real) can still lie between."""
        index = _index(
            tmp_path,
            {"covers": ["Tex. Prop. Code §§ 92.001–92.026"],
             "citations": [f"Tex. Prop. Code § 92.{n:03d}" for n in range(1, 27)]},
        )  # fmt: skip
        (line,) = cover_gaps(index)
        assert "Tex. Prop. Code § 92.0011" in line and "inserted" in line, line

    def test_lettered_sections_between_whole_numbers(self, tmp_path: Path) -> None:
        """Every whole number of §§ 554.601–554.616 listed, no lettered one: 554.601a/b exist."""
        index = _index(
            tmp_path,
            {"covers": ["Mich. Comp. Laws §§ 554.601–554.616"],
             "citations": [f"MCL 554.{n}" for n in range(601, 617)]},
        )  # fmt: skip
        (line,) = cover_gaps(index)
        assert "554.601a" in line and "lettered" in line, line
        cited = "Sec. 1a. Mich. Comp. Laws § 554.601a defines the terms; MCL 554.602 caps deposits."
        (line,) = cover_gaps(index, [cited])
        assert "mich. comp. laws § 554.601a" in line.lower() and "cited in the dataset's articles" in line, (
            line
        )

    @pytest.mark.parametrize(
        ("cover", "citations", "says"),
        [
            ("Tex. Prop. Code §§ 92.051–92.0563", ["Tex. Prop. Code § 92.052"], "covers a range but lists 1"),
            ("MCL §§ 554.631–554.641", [], "covers a range but lists 0"),
            ("W. Va. Code § 37-6", ["W. Va. Code § 37-6-30"], "covers a chapter but lists 1"),
            ("W. Va. Code § 37-6", ["W. Va. Code § 37-6-1", "W. Va. Code § 37-6-5"], "W. Va. Code § 37-6-2"),
        ],
    )
    def test_few_listed_or_gaps(self, tmp_path: Path, cover: str, citations: list[str], says: str) -> None:
        """A cover that lists almost nothing, or a chapter whose listed numbers skip some, is advised."""
        lines = cover_gaps(_index(tmp_path, {"covers": [cover], "citations": citations}))
        assert any(says in line for line in lines), lines

    def test_data_validate_warns(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from grounding_eval.cli import main

        root = tmp_path / "ds"
        shutil.copytree(SAMPLE, root)
        index = root / "citations.yaml"
        index.write_text(
            index.read_text(encoding="utf-8").replace("  - Mich. Comp. Laws § 554.612\n", ""),
            encoding="utf-8",
        )
        assert main(["data", "validate", str(root)]) == 0
        err = capsys.readouterr().err
        assert "warning:" in err and "Mich. Comp. Laws § 554.612" in err and "unlisted" in err


REALISTIC = REPO / "tests" / "fixtures" / "verifier" / "citations_realistic.yaml"
# Real sections, cited as answers cite them (short cites, lists, programme names), for users of each
# state; none is invented.
_CORRECT = [
    ("TX", "Tex. Prop. Code § 92.0081 bars lockouts; Tex. Prop. Code § 92.331 bars retaliation; Tex. Prop. "
           "Code § 92.0131 covers fees."),
    ("TX", "Tex. Prop. Code § 92.052 requires repairs, and § 92.056 lists the steps; § 92.0561 sets the "
           "remedies. Id. § 92.0563."),
    ("TX", "Tex. Prop. Code §§ 92.103 and 92.109 govern deposits, with § 92.1041 on the burden of proof."),
    ("TX", "Tex. Prop. Code § 92.3515 governs screening; Tex. Prop. Code § 24.005 governs notice to vacate."),
    ("IL", "Under 765 ILCS 705/1 the clause is void. Sec. 8 vouchers may help, and Sec. 3 of the lease does "
           "not change that."),
    ("IL", "765 ILCS 710/1 sets 45 days; 735 ILCS 5/9-209 sets the five-day notice; see also section 9-210."),
    ("MI", "MCL 554.602 caps the deposit; MCL 554.613 sets the 30-day return; MCL 554.139 covers repairs; "
           "MCL 600.5720 bars retaliation."),
    ("OH", "R.C. 5321.04 lists duties, R.C. 5321.07 sets rent escrow, and R.C. 5321.16 covers deposits."),
    ("WV", "W. Va. Code § 37-6-30 requires fit premises; W. Va. Code § 55-3A-1 is summary relief."),
    ("OR", "ORS 90.320 lists habitability duties and ORS 90.427 the notice periods; section 90.360 gives remedies."),
    ("IL", "42 U.S.C. § 3604 bars discrimination and 42 U.S.C. § 3617 retaliation; Section 504 of the "
           "Rehabilitation Act applies too."),
    ("IL", "42 U.S.C. § 3601 states the policy, 42 U.S.C. § 3602 the definitions, 42 U.S.C. § 3613 lets you "
           "sue, and 42 U.S.C. § 3631 makes threats a crime; 42 U.S.C. § 3614-1 and § 3608a exist too."),
    ("IL", "765 ILCS 705/0.01 names the Landlord and Tenant Act; Sec. 8 (Housing Choice Voucher) and Sec. 8's "
           "voucher program are not part of it. You may qualify for Sec. 8."),
    ("WV", "W. Va. Code § 37-6-5 governs notice to end a tenancy; W. Va. Code § 37-6-30 requires fit premises."),
    ("MI", "The Truth in Renting Act, MCLA 554.633, bars some lease clauses; Mich Comp Laws 554.634 requires "
           "the notice, and MCL §§ 554.636-554.637 set the remedies."),
]  # fmt: skip
_INVENTED = [
    ("TX", "Tex. Prop. Code § 92.0545 lets you withhold rent."),
    ("IL", "765 ILCS 705/99 requires a refund."),
    ("MI", "MCL 554.608a sets a penalty."),
    ("OH", "R.C. 5321.031 sets another duty."),
    ("WV", "W. Va. Code § 37-6-30a lets you break the lease."),
    ("IL", "42 U.S.C. § 3625 sets damages."),
]
_OTHER_STATE = [
    ("OH", "Tex. Prop. Code § 92.056 lets you repair and deduct."),
    ("TX", "765 ILCS 710/1 gives you 45 days."),
    ("MI", "R.C. 5321.07 lets you escrow rent."),
    ("IL", "MCL 554.613 requires a refund within 30 days."),
    ("OH", "In Illinois, by contrast, 765 ILCS 710/1 gives 45 days."),
]


class TestRealisticIndex:
    """With a realistic index of the sample dataset's codes: correct citations of real sections are never
    a hard failure; invented sections and other states' law still are."""

    def _statuses(self, rows: list[tuple[str, str]]) -> list[tuple[str, S]]:
        index = load_citation_index(REALISTIC)
        return [
            (f.mention.raw, f.status)
            for state, text in rows
            for f in check_citations(find_citations(text).mentions, state, index, [])
        ]

    def test_correct_citations_never_fail(self) -> None:
        got = self._statuses(_CORRECT)
        assert len(got) >= 30
        assert [g for g in got if g[1] in HARD] == []
        assert {s for _, s in got} >= {S.KNOWN, S.UNCHECKED}

    def test_invented_sections_fail(self) -> None:
        assert [s for _, s in self._statuses(_INVENTED)] == [S.UNKNOWN] * len(_INVENTED)

    def test_other_states_law_fails(self) -> None:
        assert [s for _, s in self._statuses(_OTHER_STATE)] == [S.WRONG_JURISDICTION] * len(_OTHER_STATE)

    def test_real_sections_listed(self) -> None:
        """The realistic index lists the real sections its covers hold (a cover listing only some would make
        the others UNKNOWN: a hard failure for a correct citation)."""
        rows = [
            (
                "IL",
                "42 U.S.C. § 3601, 42 U.S.C. § 3602, 42 U.S.C. § 3613, 42 U.S.C. § 3631, 42 U.S.C. § 3614-1.",
            ),
            ("IL", "765 ILCS 705/0.01 is the short title."),
            ("WV", "W. Va. Code § 37-6-5 governs notice."),
        ]
        got = self._statuses(rows)
        assert len(got) == 7 and {s for _, s in got} == {S.KNOWN}, got


# Programme names written with a whole number, as answers write them: none is a citation of the code before.
_PROGRAMMES = [
    "Sec. 8 vouchers help.",
    "Sec. 8 (Housing Choice Voucher) helps.",
    "Sec. 8's voucher program helps.",
    "Sec. 8, the voucher program, helps.",
    "You may qualify for Sec. 8.",
    "Apply for § 8 at the housing authority.",
]


class TestProgrammeNames:
    """A whole-number short cite that names a programme is dropped before anything counts it."""

    @pytest.mark.parametrize("sentence", _PROGRAMMES)
    def test_not_read_as_the_code_before(self, sentence: str) -> None:
        found = find_citations(f"Under 765 ILCS 705/1 the clause is void. {sentence}")
        assert [m.raw for m in found.mentions] == ["765 ILCS 705/1"], found.mentions

    @pytest.mark.parametrize("sentence", _PROGRAMMES)
    def test_not_counted_toward_the_cap(self, sentence: str) -> None:
        """MAX_CITATIONS programme names before a citation leave it read, and nothing capped."""
        text = (
            "R.C. 5321.04 lists duties. "
            + f"{sentence} " * MAX_CITATIONS
            + "Tex. Prop. Code § 92.0561 applies."
        )
        found = find_citations(text)
        assert [m.raw for m in found.mentions] == ["R.C. 5321.04", "Tex. Prop. Code § 92.0561"], found.capped
        assert found.capped == 0

    @SETTINGS
    @given(forms=st.lists(st.sampled_from(_PROGRAMMES), min_size=1, max_size=8), real=st.booleans())
    def test_real_short_cite_among_them_still_read(self, forms: list[str], real: bool) -> None:
        """A real short cite ("§ 92.056") among programme names is read as the code before it, whatever
        the programme names around it."""
        tail = " Tenants may also use § 92.056." if real else ""
        found = find_citations("Tex. Prop. Code § 92.052 requires repairs. " + " ".join(forms) + tail)
        event("with a real short cite" if real else "programme names only")
        keys = [m.key for m in found.mentions]
        assert keys[0] == ("Texas Codes", "Prop.", "92", "052")
        assert keys[1:] == ([("Texas Codes", "Prop.", "92", "056")] if real else [])
