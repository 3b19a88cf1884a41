"""libphonenumber's matcher, made linear and cheaper on long runs of numbers, with the same results.

:func:`find_numbers` is ``phonenumbers.PhoneNumberMatcher(text, "US", leniency=VALID)`` that never gives
up, and finds exactly what it finds (``tests/verifier/test_linear_equivalence.py`` compares the two on
generated text, ``tests/verifier/test_phones_nanp_suffix.py`` checks the premise of the NANP shortcut
against the pinned metadata). What differs is only the work done to decide a candidate:

* each candidate is decided from a bounded window of text, once per distinct window (:class:`_Matcher`);
* digit groups too short or too long to be a valid number are rejected without being parsed, and a
  plain NANP number is decided once per shape, neighbours and first digits (:class:`_Window`);
* libphonenumber's searches for a slash (a second number after ``/ x``, a date like ``3/10/2011``, an
  inner number after ``/``) and for a time stamp at the candidate's end are skipped when the candidate
  has no slash, or does not end the way a time stamp ends, because those patterns cannot match there.
  A run of distinct numbers ("(312) 200-0000 (415) 200-0001 …") makes libphonenumber propose, for
  each number, a candidate spanning the next seven, so each skipped search was a scan of some hundred
  characters per number.

This module imports phonenumbers (some 20 ms in a fresh process); :func:`~grounding_eval.verifier.phones.
find_phones` imports it only for a text with a digit. Relies on private methods and patterns of the
pinned phonenumbers release (``_find``, ``_extract_match``, ``_extract_inner_match``,
``_parse_and_verify``), which the equivalence tests check on every run.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator
from itertools import islice
from typing import cast

import phonenumbers
from phonenumbers import phonenumbermatcher as _lib
from phonenumbers import phonenumberutil as _util

__all__ = ["find_numbers"]


def find_numbers(text: str) -> Iterator[_Found]:
    """Every valid US-region number in ``text``: ``(as written, E.164, start, end)``, in order."""
    matcher = _Matcher(text)
    # libphonenumber's iteration (has_next/next) without its state machine: each search starts where
    # the last match ended.
    found = matcher._find(0)
    while found is not None:
        yield found
        found = matcher._find(found[3])


_Found = tuple[str, str, int, int]  # a number: as written, E.164, start, end


def _found(match: phonenumbers.PhoneNumberMatch, shift: int = 0) -> _Found:
    """libphonenumber's match as :func:`find_numbers` gives it, moved ``shift`` characters on."""
    e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
    return match.raw_string, e164, match.start + shift, match.end + shift


_UNLIMITED_TRIES = sys.maxsize
# Characters after a candidate that libphonenumber reads: a time stamp's ":ss" suffix.
_AFTER_CANDIDATE = 3


class _Decider(phonenumbers.PhoneNumberMatcher):
    """libphonenumber's matcher (region US, VALID leniency, never giving up), skipping groups too short
    to be valid and remembering what a plain NANP number's validity depends on.

    A candidate that fails as a whole is tried group by group ("12 34 56 78" as "12", "34", ...),
    each parse costing tens of microseconds. Read in region US without a plus sign or the international
    prefix 011, a number is a NANP number, and a valid one has ten digits after the optional national
    prefix 1 (letters of a vanity number count as digits). So a group with fewer than ten digits and
    letters, no plus sign, no RFC 3966 ``tel:``/``;`` syntax and not starting 011 cannot pass VALID
    leniency, and is rejected without being parsed.
    ``tests/verifier/test_linear_equivalence.py`` compares the result with libphonenumber's own matcher.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text, "US", leniency=phonenumbers.Leniency.VALID, max_tries=_UNLIMITED_TRIES)

    def _first_of_run(self, candidate: str, offset: int) -> _Found | None:
        """The number :meth:`_extract_match` finds first in a candidate for which
        :func:`_opens_long_plain_run` holds, or None when that first try fails (then the caller asks
        :meth:`_extract_match`).

        For such a candidate libphonenumber's steps before that try cannot match: no slash (no date
        or slash break), no time-stamp ending, and the whole is too long a plain run to parse (see
        :func:`_too_long_plain`). Its first inner match is then the break before each ``(``: the part
        before the first one is empty, and the next is the first parenthesised number, trimmed of its
        trailing separators (``_UNWANTED_END_CHAR_PATTERN`` removes exactly those ``( ) . -`` and
        spaces at the end of a plain run). A run of distinct numbers costs one small parse per number,
        not the whole of libphonenumber's procedure on the hundred characters after each.
        """
        close = candidate.find("(", 1)
        group = candidate[: close if close > 0 else None].rstrip("() .-")
        if _PLAIN_NANP.fullmatch(group) is None:
            match = self._parse_and_verify(group, offset)
            return None if match is None else _found(match)
        country, national = self._plain_nanp(group, offset)
        return None if country is None else (group, f"+{country}{national}", offset, offset + len(group))

    def _parse_and_verify(self, candidate: str, offset: int) -> phonenumbers.PhoneNumberMatch | None:
        if not candidate:
            return None  # (the group before a first inner match is often empty)
        if _PLAIN_NANP.fullmatch(candidate) is None:  # (a plain candidate has ten digits or more)
            if _too_short_for_nanp(candidate) or _too_long_plain(candidate):
                return None
            return super()._parse_and_verify(candidate, offset)
        country, national = self._plain_nanp(candidate, offset)
        if country is None:
            return None
        number = phonenumbers.PhoneNumber(country_code=country, national_number=national)
        return phonenumbers.PhoneNumberMatch(offset, candidate, number)

    def _plain_nanp(self, candidate: str, offset: int) -> tuple[int | None, int]:
        """The country code of the valid number a ``_PLAIN_NANP`` candidate is, or None, and its
        national number.

        A plain all-digit NANP candidate is decided by its shape, its neighbours and its digits except
        the last three: every NANP validity pattern is "a prefix of at most seven digits, then any
        three or more" (tests/verifier/test_phones_nanp_suffix.py checks this against the pinned
        metadata), and nothing else libphonenumber checks here reads the last digits. So a decision
        is remembered under that key, for the whole process, and the thousand distinct numbers of one
        exchange block cost one parse. (Its E.164 form is ``+`` country code national number: a NANP
        number has no Italian leading zero.)
        """
        end = offset + len(candidate)
        digits = candidate.translate(_SEPARATORS_DROPPED)
        key = (
            candidate.translate(_DIGITS_AS_D),
            self.text[offset - 1 : offset],
            self.text[end : end + 1],
            digits[:-_FREE_TAIL_DIGITS],
        )
        known = _PLAIN_DECISIONS.get(key, _UNDECIDED)
        if known is _UNDECIDED:
            match = super()._parse_and_verify(candidate, offset)
            known = None if match is None else match.number.country_code
            if len(_PLAIN_DECISIONS) < _MAX_REMEMBERED:
                _PLAIN_DECISIONS[key] = known
        return cast(int | None, known), int(digits[1:] if len(digits) == _NANP_DIGITS + 1 else digits)


class _Matcher(_Decider):
    """libphonenumber's matcher (region US, VALID leniency) deciding each candidate once.

    Whether a candidate span is a number depends only on the span, the character before it and the
    three after it (libphonenumber's :meth:`_extract_match` reads nothing else), so the decision is
    taken on that window alone and kept for the rest of the text. Reading the window instead of the
    rest of the text also avoids libphonenumber's copy of everything after a time-stamp-like
    candidate, which was quadratic over a run of them. Relies on the private ``_extract_match`` of the
    pinned phonenumbers release; ``tests/verifier/test_linear_equivalence.py`` checks it against the plain
    matcher.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._decided: dict[tuple[str, int, int], _Found | None] = {}  # positions in the window's terms
        # One window matcher, pointed at each window in turn: it keeps no state between candidates but
        # its text (and a count of tries that starts at sys.maxsize), so building one per candidate
        # was pure overhead.
        self._window = _Window("")

    def _find(self, index: int) -> _Found | None:  # type: ignore[override]
        # libphonenumber's _find, with the trim at a second number ("/ x", _SECOND_NUMBER_START_PATTERN
        # '[\\/] *x') searched for only in a candidate holding a slash or a backslash.
        match = _lib._PATTERN.search(self.text, index)
        while self._max_tries > 0 and match is not None:
            start = match.start()
            candidate = self.text[start : match.end()]
            if "/" in candidate or "\\" in candidate:
                candidate = self._trim_after_first_match(_util._SECOND_NUMBER_START_PATTERN, candidate)
            candidate_len = len(candidate)
            if candidate_len >= self._min_candidate_length:
                found = self._extract_match(candidate, start)
                if found is not None:
                    return found
                self._max_tries -= 1
            index = start + candidate_len
            match = _lib._PATTERN.search(self.text, index)
        return None

    def _extract_match(self, candidate: str, offset: int) -> _Found | None:  # type: ignore[override]
        lead = 1 if offset > 0 else 0
        window = self.text[offset - lead : offset + len(candidate) + _AFTER_CANDIDATE]
        key = (window, lead, len(candidate))
        if key not in self._decided:
            # A run of numbers opening with "(" is decided by its first number alone (_first_of_run),
            # read in place; any other candidate, or a first number that fails, by the window.
            first = self._first_of_run(candidate, offset) if _opens_long_plain_run(candidate) else None
            if first is not None:
                raw, e164, start, end = first
                self._decided[key] = (raw, e164, start - offset, end - offset)
                return first
            self._window.text = window
            match = self._window._extract_match(candidate, lead)
            self._decided[key] = None if match is None else _found(match, -lead)
        decided = self._decided[key]
        if decided is None:
            return None
        raw, e164, start, end = decided
        return raw, e164, offset + start, offset + end


class _Window(_Decider):
    """libphonenumber's matcher over one candidate's window (the candidate, the character before it and
    the three after it), deciding the candidate as libphonenumber does, with fewer searches."""

    def _extract_match(self, candidate: str, offset: int) -> phonenumbers.PhoneNumberMatch | None:
        # libphonenumber's _extract_match, with the slash-date search ('…/…/…') only when the candidate
        # has a slash, and the time-stamp search ('… +[0-2]\\d$') only when it ends like one.
        if "/" in candidate and _lib._SLASH_SEPARATED_DATES.search(candidate):
            return None
        if _may_end_in_time_stamp(candidate) and _lib._TIME_STAMPS.search(candidate):
            following_text = self.text[offset + len(candidate) :]
            if _lib._TIME_STAMPS_SUFFIX.match(following_text):
                return None
        match = self._parse_and_verify(candidate, offset)
        if match is not None:
            return match
        return self._extract_inner_match(candidate, offset)

    def _extract_inner_match(self, candidate: str, offset: int) -> phonenumbers.PhoneNumberMatch | None:
        # libphonenumber's _extract_inner_match, without the break on a slash ('/+(.*)') when the
        # candidate has none (the pattern cannot match: nothing to try).
        for inner in _lib._INNER_MATCHES:
            if inner is _SLASH_BREAK and "/" not in candidate:
                continue
            group_match = inner.search(candidate)
            is_first_match = True
            while group_match and self._max_tries > 0:
                if is_first_match:
                    group = self._trim_after_first_match(
                        _util._UNWANTED_END_CHAR_PATTERN, candidate[: group_match.start()]
                    )
                    match = self._parse_and_verify(group, offset)
                    if match is not None:
                        return match
                    self._max_tries -= 1
                    is_first_match = False
                group = self._trim_after_first_match(_util._UNWANTED_END_CHAR_PATTERN, group_match.group(1))
                match = self._parse_and_verify(group, offset + group_match.start(1))
                if match is not None:
                    return match
                self._max_tries -= 1
                group_match = inner.search(candidate, group_match.start() + 1)
        return None


def _too_short_for_nanp(candidate: str) -> bool:
    # isalnum counts digits, letters and a few other numerals: counting more only skips less.
    if len(candidate) >= _NANP_DIGITS and _at_least(_NANP_DIGITS, filter(str.isalnum, candidate)):
        return False
    if _NOT_PLAIN_NATIONAL.search(candidate):
        return False
    digits = _DIGITS.findall(candidate)
    if not digits:
        return False  # not a number at all: libphonenumber says so
    if unicodedata.digit(digits[0], 0) == 0:
        # "011" is the international prefix: then libphonenumber decides.
        return "".join(str(unicodedata.digit(c, 0)) for c in digits[:3]) != "011"
    return True


def _too_long_plain(candidate: str) -> bool:
    """A run like "(312) 200-0000 (415) 200-0001": only ASCII digits and ``( ) - .`` and spaces, no plus
    sign and no extension marker, with more digits than any national number holds (libphonenumber's
    limit is 17), so parsing it can only fail (too long, or not a valid NANP length)."""
    return _LONG_PLAIN_RUN.fullmatch(candidate) is not None


def _opens_long_plain_run(candidate: str) -> bool:
    """A candidate :meth:`_Window._first_of_run` decides: a plain run too long to parse
    (:func:`_too_long_plain`) that starts with ``(`` and does not end the way a time stamp ends."""
    return candidate[:1] == "(" and _too_long_plain(candidate) and not _may_end_in_time_stamp(candidate)


def _at_least(n: int, items: Iterator[str]) -> bool:
    """Whether ``items`` yields ``n`` or more items; stops reading at the ``n``-th (a count of digits
    in a candidate of a hundred characters is decided in its first twenty)."""
    return next(islice(items, n - 1, None), None) is not None


_MAX_NSN_DIGITS = 17  # phonenumbers' MAX_LENGTH_FOR_NSN; one more for a national prefix 1
# Only ASCII digits, ( ) . - and spaces, with at least _MAX_NSN_DIGITS + 2 digits (possessive: the
# separators and digits never overlap, so nothing is worth trying again).
_LONG_PLAIN_RUN = re.compile(rf"[() .-]*+(?:[0-9][() .-]*+){{{_MAX_NSN_DIGITS + 2},}}+")
_NANP_DIGITS = 10
# "(312) 341-1070", "312-341-1070", "1 312 341 1070", "3123411070": ASCII digits, one optional leading
# 1, and only the separators a US number is written with.
_PLAIN_NANP = re.compile(r"(?:1[ .-]?)?\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-]?[0-9]{4}")
_SEPARATORS_DROPPED = str.maketrans("", "", "() .-")  # (what _PLAIN_NANP allows besides ASCII digits)
_DIGITS_AS_D = str.maketrans("0123456789", "d" * 10)
_FREE_TAIL_DIGITS = 3  # the shortest run of free final digits in any NANP validity pattern
_UNDECIDED = object()
_PLAIN_DECISIONS: dict[tuple[str, str, str, str], object] = {}
_MAX_REMEMBERED = 200_000  # about 40 MB at most; past it, decisions are simply not remembered
_NOT_PLAIN_NATIONAL = re.compile("[+\uff0b;:]")
_DIGITS = re.compile(r"\d")


_SLASH_BREAK = _lib._INNER_MATCHES[0]
assert _SLASH_BREAK.pattern == "/+(.*)", "phonenumbers changed its inner-match patterns: review this module"


def _may_end_in_time_stamp(candidate: str) -> bool:
    """False when libphonenumber's time-stamp pattern, which ends ``' +[0-2]\\d$'``, cannot match.

    ``$`` also matches before a final line break, so a candidate ending in one is always searched.
    """
    return candidate.endswith("\n") or (
        len(candidate) >= 3 and candidate[-3] == " " and candidate[-2] in "012"
    )
