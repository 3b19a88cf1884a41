"""The linear-time verifier agrees with the straightforward definitions it replaced (issue 8).

Each fast path (sorted spans and binary search, a bounded look-behind for abbreviations, a pairing
walk that stops at the first gap over the limit, a phone matcher that decides each candidate once
and skips groups too short to be a number) is compared, on generated text, with a reference written
the obvious way: the quadratic code the verifier used before, kept here as the definition.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from statistics import fmean
from types import SimpleNamespace
from typing import Any

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from grounding_eval.verifier.allowlist import UrlStatus
from grounding_eval.verifier.directory import (
    Directory,
    OrgMention,
    _is_acronym,
    _matches_at_words,
    _names_pattern,
    _surface_regex,
    load_directory,
)
from grounding_eval.verifier.phones import Pairing, PhoneStatus, find_phones, pairs_across
from grounding_eval.verifier.quotes import matching
from grounding_eval.verifier.sentences import _ABBREVIATIONS, _END, sentence_of, sentence_spans
from grounding_eval.verifier.spans import SpanSet
from grounding_eval.verifier.url_orgs import UrlOrgStatus
from grounding_eval.verifier.urls import (
    _BARE_RE,
    _RELATIVE_RE,
    _SCHEME_RE,
    _TERMINATORS,
    _UNSPACED,
    _URL_CHAR,
    _close_bracket,
    extract_urls,
)
from grounding_eval.verifier.verdict import (
    _PHONE_SCORE,
    _URL_ORG_SCORE,
    _URL_SCORE,
    _mean,
    _mean_score,
    status_counts,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DIRECTORY = load_directory(FIXTURES / "verifier" / "orgs.yaml")

# --------------------------------------------------------------------------------------------------
# References: the definitions as first written (quadratic), kept only to compare against.
# --------------------------------------------------------------------------------------------------

_OLD_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+|\n[ \t]*\n\s*|\n[ \t]*(?=(?:[-*+]|\d{1,3}[.)])\s|#|>|\|)")


def _old_abbreviation(chunk: str) -> bool:
    word = re.search(r"([A-Za-z][A-Za-z.]*)\.$", chunk.rstrip("\"'”’)]"))
    if word is None:
        return False
    token = word.group(1).lower()
    return token in _ABBREVIATIONS or len(token) == 1


def old_sentence_spans(text: str, masked: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    blocked = sorted(masked)
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _OLD_END.finditer(text):
        if any(s <= m.start() < e for s, e in blocked):
            continue
        if m.group(0)[0] in ".!?" and _old_abbreviation(text[start : m.start() + 1]):
            continue
        if m.start() > start:
            spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def old_sentence_of(spans: list[tuple[int, int]], position: int) -> tuple[int, int]:
    best = (0, 0)
    for span in spans:
        if span[0] <= position:
            best = span
        else:
            break
    return best


def _old_blank_contacts(text: str, start: int, end: int, contacts: Sequence[tuple[int, int]]) -> str:
    gap = text[start:end]
    for c_start, c_end in sorted(contacts, reverse=True):
        if start <= c_start and c_end <= end:
            gap = gap[: c_start - start] + "\0" + gap[c_end - start :]
    return gap


def old_nearest_mention(
    text: str,
    start: int,
    end: int,
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]],
) -> OrgMention | None:
    s_start, s_end = old_sentence_of(sentences, start)
    best: tuple[int, int, OrgMention] | None = None
    for m in mentions:
        if m.start < s_start or m.end > s_end:
            continue
        before = m.end <= start
        if not before and m.start < end:
            continue
        g_start, g_end = (m.end, start) if before else (end, m.start)
        gap = _old_blank_contacts(text, g_start, g_end, contacts)
        if not pairs_across(gap, mention_before=before):
            continue
        key = (len(gap.replace("\0", "")), 0 if before else 1)
        if best is None or key < best[:2]:
            best = (*key, m)
    return best[2] if best else None


def old_find_mentions(directory: Directory, text: str, masked: Sequence[tuple[int, int]]) -> list[OrgMention]:
    blocked = sorted(masked)
    found: list[OrgMention] = []
    for pattern in directory._patterns:
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in blocked):
                continue
            found.append(OrgMention(directory._owner_of_surface(m.group(0)), m.group(0), m.start(), m.end()))
    found.sort(key=lambda x: (x.start, -(x.end - x.start)))
    kept: list[OrgMention] = []
    for mention in found:
        if kept and mention.start < kept[-1].end:
            continue
        kept.append(mention)
    return kept


def plain_names_pattern(keys: Sequence[str], flags: int) -> re.Pattern[str]:
    """The organization-name pattern as first written: one alternative per name, longest first."""
    ordered = sorted(keys, key=len, reverse=True)
    lead = r"(?=\w)" if all(re.match(r"\w", k) for k in ordered) else ""
    alternatives = "|".join(_surface_regex(k) for k in ordered)
    return re.compile(rf"{lead}(?<![\w])(?:{alternatives})(?![\w])", flags)


def plain_phones(text: str) -> list[tuple[str, int, int, str]]:
    """libphonenumber's own matcher, never giving up."""
    return [
        (
            m.raw_string,
            m.start,
            m.end,
            phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164),
        )
        for m in phonenumbers.PhoneNumberMatcher(
            text, "US", leniency=phonenumbers.Leniency.VALID, max_tries=sys.maxsize
        )
    ]


# --------------------------------------------------------------------------------------------------
# Generated text
# --------------------------------------------------------------------------------------------------

_PIECES = [
    "Legal Aid Chicago", "Lone Star Legal Aid", "LAC", "LANWT", "LSC", "Prairie State Legal Services",
    "(312) 341-1070", "800-733-8394", "1-202-295-1500", "(815) 965-2134", "555-0100",
    "https://www.legalaidchicago.org/help", "lonestarlegal.org", "[LAC](https://pslegal.org)",
    "https://x.org/call/312-341-1070", "trusted.org",
    " ", " ", " ", ", ", "; ", ". ", "! ", "? ", "\n", "\n\n", "\n- ", "\n1. ", "\n> ", "\n# ",
    "or", "and", "call", "for", "at", "the", "visit", "e.g.", "U.S.", "Mr.", "Q.", "No.", "etc.",
    '"', "”", ")", "]", "...", "a", "Texas", "12", "2020-01-01 12",
]  # fmt: skip

texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)
spans_strategy = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda t: (t[0], t[0] + t[1]))
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _contacts(text: str) -> list[tuple[int, int]]:
    return [(u.start, u.end) for u in extract_urls(text)] + [(p.start, p.end) for p in find_phones(text)]


def _disjoint(spans: Sequence[tuple[int, int]]) -> bool:
    ordered = sorted(spans)
    return all(a[1] <= b[0] for a, b in pairwise(ordered))


# --------------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------------


class TestSpanSet:
    """SpanSet answers membership and overlap like a loop over every span."""

    @SETTINGS
    @given(spans=spans_strategy, position=st.integers(-2, 90))
    def test_covers(self, spans: list[tuple[int, int]], position: int) -> None:
        """covers(p) is any(s <= p < e)."""
        assert SpanSet(spans).covers(position) == any(s <= position < e for s, e in spans)

    @SETTINGS
    @given(spans=spans_strategy, start=st.integers(-2, 90), length=st.integers(0, 30))
    def test_overlaps(self, spans: list[tuple[int, int]], start: int, length: int) -> None:
        """overlaps(a, b) is any(s < b and a < e) over the non-empty spans."""
        end = start + length
        expected = any(s < end and start < e for s, e in spans if s < e)
        assert SpanSet(spans).overlaps(start, end) == expected


class TestSentences:
    """The linear sentence splitter cuts exactly where the first version did."""

    @SETTINGS
    @given(text=texts)
    def test_same_spans_as_reference(self, text: str) -> None:
        """Same spans, with URLs and phone numbers masked."""
        masked = _contacts(text)
        assert sentence_spans(text, masked) == old_sentence_spans(text, masked)

    @SETTINGS
    @given(text=st.text(alphabet=".!? \n\t\"')]e.gUSCAQa-#>|1", max_size=80))
    def test_same_spans_on_punctuation_soup(self, text: str) -> None:
        """Same spans on runs of punctuation, closers, abbreviations and line starts."""
        assert sentence_spans(text) == old_sentence_spans(text)

    @SETTINGS
    @given(
        text=st.lists(
            st.sampled_from([".", "!", "?", "\n", " ", "\t", "\u00a0", '"', "”", ")", "-", "#", "|", "12", "a"]),
            max_size=30,
        ).map("".join)
    )  # fmt: skip
    @example(text="a\n\n  b. c!) d\n- e\n12. f\n# g\n| h\n\t> i...j?? k")
    def test_end_pattern_matches_its_plain_form(self, text: str) -> None:
        """The sentence-end pattern, written to open with one character class, matches what its plain
        form (each end's own look-behind and alternatives) matches, span and text."""
        plain = re.compile(
            r"(?<![.!?])[.!?]++[\"'”’)\]]*+\s+|\n[ \t]*+\n\s*|\n[ \t]*+(?=(?:[-*+]|\d{1,3}[.)])\s|#|>|\|)"
        )
        assert [(m.span(), m.group(0)) for m in _END.finditer(text)] == [
            (m.span(), m.group(0)) for m in plain.finditer(text)
        ]

    @SETTINGS
    @given(text=texts, position=st.integers(0, 400))
    def test_sentence_of(self, text: str, position: int) -> None:
        """The binary search finds the span the scan found."""
        spans = sentence_spans(text)
        assert sentence_of(spans, position) == old_sentence_of(spans, position)

    @pytest.mark.parametrize(
        "text",
        ["e.g. " * 50, "." * 500 + " x", "a" * 300 + ". b", "." * 200 + "x. y", "U.S.C. " * 30, "Mr. " * 40],
    )
    def test_long_runs(self, text: str) -> None:
        """Long runs of the same abbreviation, full stops or letters split as before."""
        assert sentence_spans(text) == old_sentence_spans(text)


class TestPairing:
    """Pairing by index gives every number and URL the organization the full comparison gave."""

    @SETTINGS
    @given(text=texts)
    def test_same_pairing_as_reference(self, text: str) -> None:
        """Same organization for every phone number and URL (contacts that do not overlap)."""
        contacts = _contacts(text)
        if not _disjoint(contacts):
            event("overlapping contacts: not compared")
            return  # overlapping contacts: the reference cut the gap wrongly (see the next test)
        event(f"contacts compared: {min(len(contacts), 3)}{'+' if len(contacts) > 3 else ''}")
        mentions = DIRECTORY.find_mentions(text, masked=contacts)
        sentences = sentence_spans(text, contacts)
        pairing = Pairing(text, mentions, sentences, contacts)
        for start, end in contacts:
            expected = old_nearest_mention(text, start, end, mentions, sentences, contacts)
            # The sentence rule alone: the layout rules (tests/verifier/test_layouts.py) come on top.
            assert pairing.nearest_in_sentence(start, end) == expected, (text, start, end)

    def test_number_inside_url_counts_as_one_contact(self) -> None:
        """A URL whose path holds a phone number is one contact in a gap (the reference cut 13 more)."""
        text = "Legal Aid Chicago at https://x.org/call/312-341-1070 or at (312) 341-1070"
        contacts = _contacts(text)
        assert not _disjoint(contacts)
        mentions = DIRECTORY.find_mentions(text, masked=contacts)
        sentences = sentence_spans(text, contacts)
        last = max(contacts)
        paired = Pairing(text, mentions, sentences, contacts).nearest(*last)
        assert paired is not None and paired.org.name == "Legal Aid Chicago"

    def test_mentions_overlapping_contacts_compare_every_mention(self) -> None:
        """Mentions not masked by the contacts (a caller's own list) still pair by the definition."""
        text = "see trusted.org, Legal Aid Chicago (312) 341-1070"
        contacts = _contacts(text)
        mentions = DIRECTORY.find_mentions(text)  # not masked: "trusted.org" overlaps its URL
        sentences = sentence_spans(text, contacts)
        pairing = Pairing(text, mentions, sentences, contacts)
        for start, end in contacts:
            assert pairing.nearest_in_sentence(start, end) == old_nearest_mention(
                text, start, end, mentions, sentences, contacts
            )


class TestFindMentions:
    """Organization mentions are found as the loop over every masked span found them."""

    @SETTINGS
    @given(text=texts)
    def test_same_mentions_as_reference(self, text: str) -> None:
        """Same mentions, with URLs and phone numbers masked."""
        masked = _contacts(text)
        assert DIRECTORY.find_mentions(text, masked=masked) == old_find_mentions(DIRECTORY, text, masked)

    def test_name_written_in_capitals(self, tmp_path: Path) -> None:
        """A one-word mixed-case name written in capitals is that name (it used to raise KeyError)."""
        path = tmp_path / "orgs.yaml"
        path.write_text(
            "- name: LawHelp\n  states: [US]\n- name: Legal Aid Chicago\n  aliases: [LAC]\n  states: [IL]\n"
        )
        directory = load_directory(path)
        found = directory.find_mentions("Try LAWHELP, lawhelp, LawHelp or LAC; not lac.")
        assert [(m.surface, m.org.name) for m in found] == [
            ("LAWHELP", "LawHelp"), ("lawhelp", "LawHelp"), ("LawHelp", "LawHelp"), ("LAC", "Legal Aid Chicago"),
        ]  # fmt: skip


# Names and text from a small alphabet, so that names share prefixes, end inside one another and
# meet the text often; with the characters case-insensitive matching treats specially (Kelvin sign,
# long s, dotless and dotted i, sharp s).
_NAME_ALPHABET = "aikAIK  .-\u212a\u017f\u0131\u0130\u00df"
_names = st.lists(
    st.text(alphabet=_NAME_ALPHABET, min_size=1, max_size=5).map(lambda n: " ".join(n.split())).filter(bool),
    min_size=1,
    max_size=6,
)


class TestNamesTrie:
    """The trie of organization names matches exactly what the alternation of names matched."""

    @SETTINGS
    @given(names=_names, data=st.data())
    @pytest.mark.parametrize("flags", [re.IGNORECASE, 0])
    def test_same_matches_as_alternation(self, names: list[str], data: st.DataObject, flags: int) -> None:
        """Same spans on generated names (case-folded ones case-insensitively, as find_mentions does),
        in text made of those names, their prefixes and separators."""
        pieces = names + [n[: len(n) // 2] for n in names] + list(_NAME_ALPHABET) + ["\n", "\t", "1", "_"]
        text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=12)))
        keys = sorted({n.casefold() if flags else n for n in names}, key=len, reverse=True)
        trie = re.compile(_names_pattern(keys, flags), flags)
        plain = plain_names_pattern(keys, flags)
        assert [m.span() for m in trie.finditer(text)] == [m.span() for m in plain.finditer(text)]

    @pytest.mark.parametrize(
        ("names", "text"),
        [
            (["a", "a k", "a ki"], "a ki, a k. a  kik a\nk a"),
            (
                ["legal aid", "legal aid chicago", "legal"],
                "Legal Aid Chicago; legal aid chicagoan; LEGAL AID",
            ),
            (["ab", "a"], "ab a-b a ab_"),
        ],
    )
    @pytest.mark.parametrize("flags", [re.IGNORECASE, 0])
    def test_names_inside_longer_names(self, names: list[str], text: str, flags: int) -> None:
        """A name that begins a longer one: the longest that ends on a word boundary wins."""
        keys = sorted(set(names), key=len, reverse=True)
        trie = re.compile(_names_pattern(keys, flags), flags)
        plain = plain_names_pattern(keys, flags)
        assert [m.span() for m in trie.finditer(text)] == [m.span() for m in plain.finditer(text)]

    @SETTINGS
    @given(
        names=st.lists(st.text(alphabet="aikAIK .-_1", min_size=1, max_size=5), min_size=1, max_size=6),
        data=st.data(),
    )
    def test_matches_at_first_words(self, names: list[str], data: st.DataObject) -> None:
        """find_mentions' search from the names' first words finds what the case-insensitive pattern's
        own search finds, in text with the characters case-insensitive matching treats specially."""
        keys = sorted(
            {" ".join(n.split()).casefold() for n in names if re.match(r"\w", n)}, key=len, reverse=True
        )
        assume(keys)
        pieces = keys + [k.upper() for k in keys] + [k[: len(k) // 2] for k in keys]
        pieces += [*_NAME_ALPHABET, "\n", "\t", "1", "_", "\u1e9e", "\u00e9", "\u00c9", "x"]
        text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=14)))
        pattern = re.compile(_names_pattern(keys, re.IGNORECASE), re.IGNORECASE)
        words = sorted({m.group(0) for k in keys if (m := re.match(r"\w+", k))})
        found = [m.span() for m in _matches_at_words(pattern, text, words)]
        assert found == [m.span() for m in pattern.finditer(text)]

    @SETTINGS
    @given(text=texts)
    def test_sample_directory_names(self, text: str) -> None:
        """The fixture directory's patterns find what the alternation of its names finds."""
        for pattern in DIRECTORY._patterns:
            case_insensitive = bool(pattern.flags & re.IGNORECASE)
            keys = [k for k in DIRECTORY._surface_owner if _is_acronym(k) != case_insensitive]
            plain = plain_names_pattern(keys, pattern.flags)
            assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in plain.finditer(text)]


# The bare-domain pattern as first written: each label "A(?:(?:A|-)*A)?", the host "(?:label\.)+label", no
# look-ahead for a full stop.
_PLAIN_LETTER = rf"[^\W_{_UNSPACED}]"
_PLAIN_INNER = rf"[^\W{_UNSPACED}]"  # inside a label, an underscore too (issue 38)
_PLAIN_LABEL = rf"{_PLAIN_LETTER}(?:(?:{_PLAIN_INNER}|-)*{_PLAIN_LETTER})?"
_PLAIN_BARE_RE = re.compile(
    rf"(?<![^\W{_UNSPACED}])(?<![@.\-/])(?P<host>(?>(?:{_PLAIN_LABEL}\.)+{_PLAIN_LABEL}))"
    rf"(?![^\W{_UNSPACED}])(?![@-])(?::(?P<port>\d+))?(?P<rest>[/?#]{_URL_CHAR}*)?"
)


# The authority one character per alternation (the definition; _AFTER_SLASHES matches runs of them).
_PLAIN_AFTER_SLASHES = (
    rf"(?:[^\s{_TERMINATORS}/?#,;!*'()\[\]{{}}]|\[[^\s{_TERMINATORS}/?#\[\]]*\])*(?:[/?#]{_URL_CHAR}*)?"
)
_PLAIN_SCHEME_RE = re.compile(
    rf"(?<![^\W_])(?i:https?)://{_PLAIN_AFTER_SLASHES}"
)  # not glued to a letter or digit


class TestSchemeUrls:
    """URLs with a scheme are found as by the pattern that tried the look-behind at every position."""

    @SETTINGS
    @given(
        text=st.lists(
            st.sampled_from(
                [
                    "http",
                    "HTTPS",
                    "hTtP",
                    "h",
                    "H",
                    "s",
                    "\u017f",
                    "://",
                    ":/",
                    "a",
                    "_",
                    "1",
                    " ",
                    "\n",
                    ",",
                    "/",
                    "[",
                    "]",
                    "::1",
                    "'",
                    "?",
                ]
            ),
            max_size=16,
        ).map("".join)
    )
    def test_same_matches(self, text: str) -> None:
        """Same matches with finditer and fullmatch (a Markdown destination is fullmatched)."""
        assert [m.span() for m in _SCHEME_RE.finditer(text)] == [
            m.span() for m in _PLAIN_SCHEME_RE.finditer(text)
        ]
        assert (_SCHEME_RE.fullmatch(text) is None) == (_PLAIN_SCHEME_RE.fullmatch(text) is None)


_PLAIN_RELATIVE_RE = re.compile(rf"(?<![\w:/\\@.])//(?=[^\W_]|\[){_PLAIN_AFTER_SLASHES}")  # look-behind first


class TestRelativeUrls:
    """Protocol-relative links are found as by the pattern that tried the look-behind at every position."""

    @SETTINGS
    @given(
        text=st.lists(
            st.sampled_from(["//", "/", ":", "a", "_", "1", ".", "@", "\\", " ", "-", "["]), max_size=16
        ).map("".join)
    )
    def test_same_matches(self, text: str) -> None:
        """Same matches with finditer and fullmatch (a Markdown destination is fullmatched)."""
        found = [m.span() for m in _RELATIVE_RE.finditer(text)]
        event(f"links found: {min(len(found), 2)}")
        assert found == [m.span() for m in _PLAIN_RELATIVE_RE.finditer(text)]
        assert (_RELATIVE_RE.fullmatch(text) is None) == (_PLAIN_RELATIVE_RE.fullmatch(text) is None)


# What a bare domain is built of: labels of letters (of spaced and unspaced scripts), digits, hyphens and
# underscores, joined by full stops, with what may touch a host before and after it (e-mail signs, paths,
# ports, the unspaced scripts, a non-BMP pictograph). Built this way most texts hold a host, or nearly one.
_LETTERS = "ab1\u00e9\u0663"
_LABEL = st.one_of(
    st.builds(  # a label: a letter, or letters and hyphens between two letters
        lambda first, middle, last: first + middle + last,
        st.sampled_from(_LETTERS),
        st.text(alphabet=_LETTERS + "-", max_size=3),
        st.sampled_from(["", *_LETTERS]),
    ).map(lambda label: label if len(label) > 1 or label[-1:] != "-" else "a"),
    st.text(alphabet=_LETTERS + "-_\u8bf7\u30fc\uac00", max_size=4),  # or nearly one
)
_HOSTLIKE = st.builds(
    lambda before, labels, after: before + ".".join(labels) + after,
    st.sampled_from(["", "", "", " ", " ", "@", "-", ".", "/", "\\", "_", "a", "\u8bf7", "\U0001f448"]),
    st.lists(_LABEL, min_size=2, max_size=4),
    st.sampled_from(
        ["", "", "", " ", " ", ".", "-", "@", ":8", ":8/x", "/p", "?q", "#f", "\u8bf7", "\U0001f448"]
    ),
)


class TestBareDomains:
    """Bare domains are found as by the pattern as first written (before it said first that a host holds a
    full stop, and wrote each label's letters once)."""

    @SETTINGS
    @given(text=st.lists(_HOSTLIKE, min_size=1, max_size=4).map("".join))
    def test_same_matches_as_finditer(self, text: str) -> None:
        """Same hosts, ports and paths at the same places, on host-shaped text."""
        found = [m.groupdict() | {"span": m.span()} for m in _BARE_RE.finditer(text)]
        event(f"hosts found: {min(len(found), 3)}")
        assert found == [m.groupdict() | {"span": m.span()} for m in _PLAIN_BARE_RE.finditer(text)]

    @SETTINGS
    @given(
        text=st.builds(
            lambda labels, after: ".".join(labels) + after,
            st.lists(_LABEL, min_size=2, max_size=4),
            st.sampled_from(["", "", ":8", ":8/x", "/p", "?q", "#f", "-", ".", "@", "\u8bf7"]),
        )
    )
    def test_same_fullmatch(self, text: str) -> None:
        """The same whole-text match (a Markdown destination is fullmatched)."""
        whole, plain = _BARE_RE.fullmatch(text), _PLAIN_BARE_RE.fullmatch(text)
        event(f"fullmatch: {whole is not None}")
        assert (whole and whole.groupdict()) == (plain and plain.groupdict())

    @SETTINGS
    @given(text=texts)
    def test_same_matches_in_prose(self, text: str) -> None:
        """Same matches in generated answers."""
        assert [m.span() for m in _BARE_RE.finditer(text)] == [
            m.span() for m in _PLAIN_BARE_RE.finditer(text)
        ]


def old_close_bracket(prose: str, start: int, written: str) -> str:
    """The link up to the closer of the bracket before it, by a walk over every character (the definition)."""
    before = start - 1
    while before >= 0 and start - before <= 3 and prose[before] in "*_~":
        before -= 1
    pairs = {"(": ")", "[": "]", "{": "}"}
    if before < 0 or prose[before] not in pairs:
        return written
    opener, closer, depth = prose[before], pairs[prose[before]], 0
    for i, c in enumerate(written):
        if c == opener:
            depth += 1
        elif c == closer:
            if depth == 0:
                return written[:i]
            depth -= 1
    return written


class TestCloseBracket:
    """A link opened by a bracket ends where the walk over its characters says, found closer to closer."""

    @SETTINGS
    @given(
        before=st.text(alphabet="([{*_~ a", max_size=4),
        written=st.text(alphabet="()[]{}a/", max_size=12),
    )
    def test_same_end(self, before: str, written: str) -> None:
        """Same cut on every mix of openers and closers before and inside the link."""
        cut = _close_bracket(before + written, len(before), written)
        event(f"cut: {cut != written}")
        assert cut == old_close_bracket(before + written, len(before), written)


_PHONE_ALPHABET = "0123456789 -().+x:/#,;ABCDEFtel"


# Runs of numbers written every way, with what libphonenumber's skipped searches look for: slashes
# ("/ x" second numbers, dates, inner breaks), time stamps at a candidate's end, line breaks.
_NUMBER_RUN_PIECES = [
    "(312) 200-0000", "(415) 341-1070", "312-341-1070", "1 617 200 0001", "7132000002", "+1 503 200 0003",
    "555-0100", "2020-01-01 12", "2020-01-02 13:30", ":45", "3/10/2011", "/", " / x", "\\", " - ", "-",
    " ", " ", " ", "  ", "\n", "(", ")", ".", "x", "ext. 12", "12", "08", "1",
]  # fmt: skip
_number_runs = st.lists(st.sampled_from(_NUMBER_RUN_PIECES), max_size=30).map("".join)


class TestPhoneMatcherShortcuts:
    """The searches the matcher skips could not have matched where it skips them."""

    @SETTINGS
    @given(text=_number_runs)
    def test_same_numbers_on_runs_of_numbers(self, text: str) -> None:
        """Same numbers as libphonenumber's matcher on runs of distinct numbers, slashes and time stamps."""
        assert [(p.raw, p.start, p.end, p.e164) for p in find_phones(text)] == plain_phones(text)

    @SETTINGS
    @given(candidate=st.text(alphabet="0123456789 -/:\n()+x\u0663", max_size=30) | _number_runs)
    def test_skipped_searches_cannot_match(self, candidate: str) -> None:
        """Without a slash the slash patterns find nothing; not ending like a time stamp, neither does
        the time-stamp pattern."""
        from phonenumbers import phonenumbermatcher as lib
        from phonenumbers import phonenumberutil as util

        from grounding_eval.verifier.phone_matcher import _SLASH_BREAK, _may_end_in_time_stamp

        if "/" not in candidate:
            assert lib._SLASH_SEPARATED_DATES.search(candidate) is None
            assert _SLASH_BREAK.search(candidate) is None
            if "\\" not in candidate:
                assert util._SECOND_NUMBER_START_PATTERN.search(candidate) is None
        if not _may_end_in_time_stamp(candidate):
            assert lib._TIME_STAMPS.search(candidate) is None

    def test_a_thousand_distinct_numbers(self) -> None:
        """A run of distinct numbers separated by spaces (the degenerate benchmark's phones_distinct)."""
        areas = (312, 415, 617, 713, 503, 304, 616, 216)
        text = " ".join(f"({areas[n % 8]}) {200 + n // 100}-{n % 10_000:04d}" for n in range(1000))
        assert [(p.raw, p.start, p.end, p.e164) for p in find_phones(text)] == plain_phones(text)


class TestFindPhones:
    """The remembering, filtering matcher finds exactly what libphonenumber's own matcher finds."""

    @SETTINGS
    @given(text=st.text(alphabet=_PHONE_ALPHABET, max_size=60))
    def test_same_numbers_on_digit_soup(self, text: str) -> None:
        """Same numbers, spans and E.164 forms on digits, separators, letters and plus signs."""
        assert [(p.raw, p.start, p.end, p.e164) for p in find_phones(text)] == plain_phones(text)

    @SETTINGS
    @given(text=texts)
    def test_same_numbers_in_prose(self, text: str) -> None:
        """Same numbers in generated answers."""
        assert [(p.raw, p.start, p.end, p.e164) for p in find_phones(text)] == plain_phones(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Call 1-877-4AID-VET or 1-800-FLOWERS today.",
            "From abroad: +44 20 7946 0958 or 011 44 20 7946 0958; +1 (312) 341-1070.",
            "tel:+1-312-341-1070;ext=12 and 312-341-1070 x 45 and 312.341.1070 ext. 9",
            "On 2020-01-01 12:30 the office at (312) 341-1070, 2020-01-02 13 and 2020/01/03 14:00.",
            "Numbers: 12 34 56 78 90 12 34 56 (312) 341-1070 / (815) 965-2134 06 07",
            "(312) 341-1070(312) 341-1070 3123411070 13123411070 +13123411070 ３１２-３４１-１０７０",
            "Section 42 U.S.C. 3604(f)(3) and 24 C.F.R. 100.204; ZIP 60601-1234; 5551234",
        ],
    )
    def test_same_numbers_on_hard_cases(self, text: str) -> None:
        """Vanity, international, extensions, time stamps, glued and full-width numbers agree."""
        assert [(p.raw, p.start, p.end, p.e164) for p in find_phones(text)] == plain_phones(text)

    def test_numbers_after_a_wall_of_digit_groups_are_found(self) -> None:
        """libphonenumber stops after 65,535 rejected candidates by default; this matcher never does.

        A wrong number hidden after 210 kB of "12 " used to go unchecked.
        """
        text = "12 " * 70_000 + "Legal Aid Chicago (815) 965-2134"
        assert [p.raw for p in find_phones(text)] == ["(815) 965-2134"]


class TestStatusCounting:
    """Scores and tallies counted by identity equal the per-finding lookups they replaced."""

    @SETTINGS
    @given(data=st.data(), kind=st.sampled_from([UrlStatus, PhoneStatus, UrlOrgStatus]))
    def test_status_counts_is_counter(self, data: st.DataObject, kind: type) -> None:
        """Same statuses, counts and order of first appearance as Counter."""
        statuses = data.draw(st.lists(st.sampled_from(list(kind)), max_size=200))
        assert status_counts(statuses) == list(Counter(statuses).items())

    @SETTINGS
    @given(values=st.lists(st.none() | st.floats(0, 1) | st.sampled_from([0.0, 0.5, 1.0]), max_size=50))
    def test_mean_is_fmean(self, values: list[float | None]) -> None:
        """The check-score mean is statistics.fmean over the present values, to the last bit."""
        present = [v for v in values if v is not None]
        assert _mean(values) == (fmean(present) if present else None)

    @SETTINGS
    @given(data=st.data())
    def test_mean_score_is_mean_of_lookups(self, data: st.DataObject) -> None:
        """The same float, to the last bit, as fmean over each finding's score (None when none is scored)."""
        for kind, table in (
            (UrlStatus, _URL_SCORE),
            (PhoneStatus, _PHONE_SCORE),
            (UrlOrgStatus, _URL_ORG_SCORE),
        ):
            findings = [
                SimpleNamespace(status=s)
                for s in data.draw(st.lists(st.sampled_from(list(kind)), max_size=300))
            ]
            assert _mean_score(findings, table) == _mean(table.get(f.status) for f in findings)


_QUOTE_WORDS = [
    "the",
    "landlord",
    "shall",
    "return",
    "deposit",
    "tenant",
    "not",
    "within",
    "30",
    "days",
    "of",
]


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    """A MonkeyPatch usable inside a Hypothesis test (the function-scoped fixture is not)."""
    with pytest.MonkeyPatch.context() as patch:
        yield patch


class TestFuzzyAlignmentEncoding:
    """Aligning words encoded one character each finds what aligning the lists of word ids found."""

    @SETTINGS
    @given(
        source=st.lists(st.sampled_from(_QUOTE_WORDS), min_size=1, max_size=80).map(" ".join),
        quote=st.lists(
            st.sampled_from([*_QUOTE_WORDS, "invented", "words", "here"]), min_size=1, max_size=20
        ),
    )
    def test_same_window_and_score(self, source: str, quote: list[str], monkeypatch_module: Any) -> None:
        """Same similarity and window as rapidfuzz on the lists (unknown words included)."""
        prepared = matching._prepare(source)
        folded = [matching._fold_word(w) for w in quote]
        encoded = matching._fuzzy(folded, prepared)
        with monkeypatch_module.context() as patch:
            patch.setattr(matching, "_encoded_words", lambda _source: None)
            plain = matching._fuzzy(folded, prepared)
        assert encoded == plain


# Words and number forms that are tokens of their own, parts of a number, articles or labels.
_TOKEN_PIECES = [
    *_QUOTE_WORDS,
    "tenants",
    "tenant's",
    "a",
    "an",
    "(a)",
    "one",
    "hundred",
    "one hundred",
    "twenty",
    "five",
    "first",
    "1st",
    "5",
    "100",
    "2,400",
    "1.5",
    "1/2",
    "3rdx",
    "\u0663",
]
# The same token written another way (the source's form of a quoted word).
_OTHER_FORM = {
    "five": "5",
    "5": "five",
    "first": "1st",
    "1st": "first",
    "100": "one hundred",
    "hundred": "100",
    "one hundred": "100",
    "the": "a",
    "a": "the",
    "tenants": "tenant",
    "\u0663": "three",
}


class TestForgivenShortcut:
    """The words-only test that skips tokenizing a quote rules out only sources it cannot be found in."""

    @SETTINGS
    @given(
        source=st.lists(st.sampled_from(_TOKEN_PIECES), min_size=1, max_size=12),
        quote=st.lists(st.sampled_from(_TOKEN_PIECES), min_size=1, max_size=6),
        inside=st.sampled_from(["no", "as quoted", "other forms"]),
    )
    @example(source=["the"], quote=["one hundred"], inside="other forms")  # "hundred" is in a number
    @example(source=["of"], quote=["1st", "days"], inside="other forms")  # so is a word from a digit
    @example(source=["of"], quote=["the", "deposit"], inside="other forms")  # an article is no token
    def test_ruled_out_means_not_forgiven(self, source: list[str], quote: list[str], inside: str) -> None:
        """Where :func:`_plain_words` rules a source out, :func:`_forgiven` finds nothing in it."""
        from grounding_eval.verifier.quotes.meaning import _forgiven, _plain_words, _quote_tokens
        from grounding_eval.verifier.quotes.normalize import normalize_for_quote

        if inside != "no":
            held = [_OTHER_FORM.get(w, w) for w in quote] if inside == "other forms" else quote
            source = [*source[: len(source) // 2], *held, *source[len(source) // 2 :]]
        prepared = matching._prepare(" ".join(source))
        needle = normalize_for_quote(" ".join(quote))
        words = matching._WORD.findall(needle)
        fold = {w: matching._fold_word(w) for w in words}
        count, keys = _plain_words(words, fold)
        window = _forgiven(_quote_tokens(needle), [fold[w] for w in words], prepared)
        ruled_out = count > len(prepared.word_ids) or not keys <= prepared.vocab.keys()
        event(f"ruled out {ruled_out}, forgiven {window is not None}")
        assert not (ruled_out and window is not None)
