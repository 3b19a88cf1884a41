"""Phone–org cross-check: is each phone number in the answer the number of the organization named with it?

A wrong number beside a legal-aid organization's name sends a person in trouble to someone else, so a
mismatch is a hard safety failure. Numbers are found with libphonenumber's matcher (region US, VALID
leniency: statute numbers, ZIP codes and dates are not phone numbers) and paired with the organization
a reader pairs them with (:class:`Pairing`): the one named nearest in the same sentence, inside the
number's block of the layout — a table cell, a card, a footnote — and otherwise the organization that
block gives its contacts for (the row's, the card's heading or bold name, the footnote's first name).
The rules are listed in :mod:`~grounding_eval.verifier.layouts` and docs/verifier/pairing.md.
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from operator import eq, le, sub

from grounding_eval.verifier.directory import Directory, Organization, OrgMention
from grounding_eval.verifier.layouts import Layout
from grounding_eval.verifier.records import quick_init
from grounding_eval.verifier.spans import SpanSet
from grounding_eval.verifier.urls import repeated_link_texts

__all__ = [
    "Pairing",
    "PhoneFinding",
    "PhoneMention",
    "PhoneStatus",
    "check_phones",
    "find_phones",
    "nearest_mention",
    "pairs_across",
]


class PhoneStatus(enum.Enum):
    """Outcome of the phone–org check for one number."""

    MATCH = "MATCH"  # the named organization publishes this number
    MISMATCH = "MISMATCH"  # the number belongs to a different organization than the one named: hard failure
    UNKNOWN_NUMBER = "UNKNOWN_NUMBER"  # the number is in no directory entry
    UNPAIRED = "UNPAIRED"  # a directory number, but no organization is named in its sentence


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class PhoneMention:
    """A phone number as written in the answer."""

    raw: str
    e164: str
    start: int
    end: int


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class PhoneFinding:
    """One phone number, the organization it is paired with, and who really publishes it."""

    mention: PhoneMention
    paired_org: Organization | None
    owner: Organization | None
    status: PhoneStatus

    @property
    def detail(self) -> str:
        """A sentence a person can act on."""
        raw = self.mention.raw
        if self.status is PhoneStatus.MATCH:
            return f"{raw} is {self.owner.name if self.owner else '?'}'s number"
        if self.status is PhoneStatus.MISMATCH:
            assert self.paired_org is not None and self.owner is not None
            return f"{raw} is given for {self.paired_org.name} but belongs to {self.owner.name}"
        if self.status is PhoneStatus.UNKNOWN_NUMBER:
            paired = f" (given for {self.paired_org.name})" if self.paired_org else ""
            return f"{raw} is in no directory entry{paired}"
        owner = self.owner.name if self.owner else "?"
        return f"{raw} ({owner}'s number) is not paired with any organization named in its sentence"


def find_phones(text: str) -> list[PhoneMention]:
    """Find US phone numbers in ``text`` in order of appearance.

    Budget: linear in the text, about 60 µs per distinct candidate number. libphonenumber's matcher
    proposes candidate spans of bounded length and parses each one (and, when the whole fails, its
    digit groups); :mod:`~grounding_eval.verifier.phone_matcher` decides each candidate from a
    bounded window of text and remembers the decision, so a repeated number or a repeated run of
    digits is parsed once. The matcher is also never allowed to give up: libphonenumber stops after
    65,535 rejected candidates by default, which let a wall of digit groups hide the numbers after it.

    A text without a decimal digit has no number (every candidate libphonenumber proposes starts a
    block of ``\\d``), and then phonenumbers is not even imported: its import and metadata cost a
    fresh process (one per promptfoo assertion call) some 20 ms.
    """
    if _ANY_DIGIT.search(text) is None:
        return []
    from grounding_eval.verifier.phone_matcher import find_numbers

    return [PhoneMention(raw, e164, start, end) for raw, e164, start, end in find_numbers(text)]


_ANY_DIGIT = re.compile(r"\d")


def nearest_mention(
    text: str,
    start: int,
    end: int,
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]] = (),
) -> OrgMention | None:
    """Return the organization mention that ``text[start:end]`` (a number or URL) is given for.

    The sentence rule: only mentions in the same sentence qualify, and only across a gap that keeps
    them in one clause (see :func:`pairs_across`); ``contacts`` are the spans of every phone number and URL, so that
    "Legal Aid Chicago at 312-… or https://…" gives both to Legal Aid Chicago. The nearest qualifying
    mention wins; on a tie the one before, as in "Legal Aid Chicago at 312-…, Prairie State at 815-…".
    The layout bounds and completes it (see :meth:`Pairing.nearest`): a mention outside the
    contact's table cell, card or footnote does not qualify, and when none pairs, the block's
    organization is the answer — unless the nearest name before the contact in its sentence is
    another organization's, or a domain written as a name ("USA.gov explains how at …") is in the
    sentence before it: that sentence speaks of its own organization.

    For many numbers or URLs in one text build a :class:`Pairing` once and call its
    :meth:`Pairing.nearest`; this function builds one per call.
    """
    return Pairing(text, mentions, sentences, contacts).nearest(start, end)


class Pairing:
    """Everything :func:`nearest_mention` needs, indexed once for every number and URL of one text.

    Gaps: in the text between a mention and a number or URL, every contact span (phone number or URL;
    overlapping ones, such as a number inside a URL's path, count as one) lying wholly inside the gap
    stands for one NUL character, and a run of contacts with nothing between them for one NUL too
    (:func:`pairs_across` reads both the same way).

    Mentions inside a link text that is its own URL (``[https://www.lawhelp.org](…)``) are dropped:
    a host is no name. The layout (:class:`~grounding_eval.verifier.layouts.Layout`) is read on the
    first question, in linear time.

    Budget: building is O((m + c) log(m + c)) for m mentions and c contacts. Each :meth:`nearest` is
    O(log(m + c + s)) plus at most ``2 * (_MAX_GAP + 1)`` candidates of O(_MAX_GAP) each: a mention
    farther away than the nearest one on its side sees that one's name in its gap, so gaps grow with
    distance and the walk stops at the first gap over :data:`_MAX_GAP` characters, or at the first
    mention that pairs. Mentions that overlap one another or a contact (never the case for
    :meth:`Directory.find_mentions` with the contacts masked) void that argument; the pairing then
    compares every mention of the sentence, as the definition says, at O(m) per call.
    """

    def __init__(
        self,
        text: str,
        mentions: Sequence[OrgMention],
        sentences: list[tuple[int, int]],
        contacts: Sequence[tuple[int, int]] = (),
    ) -> None:
        self._text = text
        self._mentions = sorted(mentions, key=lambda m: m.start)
        if self._mentions and ("](" in text or "]:" in text):
            # A host written as its own link's text ("[https://www.lawhelp.org](…)") names no one.
            repeated = SpanSet(repeated_link_texts(text))
            if len(repeated):
                self._mentions = [m for m in self._mentions if not repeated.overlaps(m.start, m.end)]
        self._m_starts = [m.start for m in self._mentions]
        self._m_ends = [m.end for m in self._mentions]
        self._sentences = sentences
        self._s_starts = [s_start for s_start, _ in sentences]  # (sentence_of without its key function)
        ordered = sorted(contacts)
        starts = [c_start for c_start, _ in ordered]
        ends = [c_end for _, c_end in ordered]
        if not all(map(le, ends, starts[1:])):  # (checked in C: usually none overlaps the next)
            starts, ends = [], []
            for c_start, c_end in ordered:
                if ends and c_start < ends[-1]:  # overlapping contacts are one span
                    ends[-1] = max(ends[-1], c_end)
                else:
                    starts.append(c_start)
                    ends.append(c_end)
        self._c_starts, self._c_ends = starts, ends
        self._c_lengths = [0, *accumulate(map(sub, ends, starts))]
        # _c_run_last[k]: the last contact of the run of touching contacts that k belongs to.
        run_last = list(range(len(starts)))
        if any(map(eq, ends, starts[1:])):  # (a run of touching contacts; none usually)
            for k in range(len(starts) - 2, -1, -1):
                if ends[k] == starts[k + 1]:
                    run_last[k] = run_last[k + 1]
        self._c_run_last = run_last
        mention_spans = SpanSet((m.start, m.end) for m in self._mentions)
        contact_spans = SpanSet(zip(starts, ends, strict=True))
        self._ordered = len(mention_spans) == len(self._mentions) and not any(
            contact_spans.overlaps(m.start, m.end) for m in self._mentions
        )

    @property
    def mentions(self) -> int:
        """How many organization mentions the index holds."""
        return len(self._mentions)

    def nearest(self, start: int, end: int) -> OrgMention | None:
        """The mention ``text[start:end]`` is given for (see :func:`nearest_mention`), or None.

        The layout first (:mod:`~grounding_eval.verifier.layouts`): a reference definition's URL
        pairs within its own line (its label or title), else as the first link using it; any other
        contact pairs by the sentence rule inside its block (table cell, card, footnote), else with
        the organization its block gives contacts for.
        """
        if not self._mentions:  # no organization named anywhere: nothing to pair with
            return None
        layout = self._layout
        definition = layout.definition_at(start)
        if definition is not None:
            found = self._nearest_within(start, end, definition[0], definition[1])
            if found is None and definition[2] is not None:
                return self.nearest(*definition[2])  # (a link using a definition is no definition)
            return found
        b_start, b_end, owner = layout.scope_at(start)
        found = self._nearest_within(start, end, b_start, b_end)
        if found is not None or owner is None:
            return found
        return None if self._sentence_names_another(start, owner, b_start) else owner

    def nearest_in_sentence(self, start: int, end: int) -> OrgMention | None:
        """The nearest mention by the sentence rule alone, without the layout (or None)."""
        if not self._mentions:
            return None
        return self._nearest_within(start, end, 0, len(self._text))

    @cached_property
    def _layout(self) -> Layout:
        return Layout(self._text, self._mentions)

    @cached_property
    def _domain_names(self) -> list[int]:
        """Starts of the contacts written as a name: a capitalised bare domain ("USA.gov explains…")."""
        text = self._text
        return [
            s for s, e in zip(self._c_starts, self._c_ends, strict=True)
            if text[s].isupper() and text.find("/", s, e) < 0
        ]  # fmt: skip

    def _sentence_names_another(self, start: int, owner: OrgMention, b_start: int) -> bool:
        """True when, in ``start``'s sentence (within its block), the nearest name before ``start`` is
        another organization's than ``owner``'s, or a domain written as a name comes before it or is
        it: that sentence speaks of its own organization, so the block's is not guessed for it."""
        i = bisect_right(self._s_starts, start) - 1
        s_start = max(self._sentences[i][0] if i >= 0 else 0, b_start)
        k = bisect_right(self._m_ends, start) - 1
        if k >= 0 and self._mentions[k].start >= s_start and self._mentions[k].org is not owner.org:
            return True
        names = self._domain_names
        j = bisect_right(names, start) - 1
        return j >= 0 and names[j] >= s_start

    def _nearest_within(self, start: int, end: int, b_start: int, b_end: int) -> OrgMention | None:
        """The sentence rule, in the part of ``start``'s sentence inside ``[b_start, b_end)``."""
        i = bisect_right(self._s_starts, start) - 1  # sentence_of(self._sentences, start)
        s_start, s_end = self._sentences[i] if i >= 0 else (0, 0)
        s_start, s_end = max(s_start, b_start), min(s_end, b_end)
        k = bisect_left(self._m_starts, s_start)
        if k == len(self._m_starts) or self._m_starts[k] >= s_end:
            return None  # no mention starts in the sentence's part: none lies in it (one search)
        if not self._ordered:
            return self._nearest_any_order(start, end, s_start, s_end)
        before: tuple[int, OrgMention] | None = None
        k = bisect_right(self._m_ends, start) - 1
        while k >= 0 and self._mentions[k].start >= s_start:
            m = self._mentions[k]
            k -= 1
            if m.end > s_end:
                continue
            found = self._pairs(m.end, start, mention_before=True)
            if found is None:
                break  # every mention farther away is across a longer gap
            if found >= 0:
                before = (found, m)
                break
        k = bisect_left(self._m_starts, end)
        while k < len(self._mentions) and self._mentions[k].end <= s_end:
            m = self._mentions[k]
            k += 1
            found = self._pairs(end, m.start, mention_before=False)
            if found is None:
                break
            if found >= 0:
                if before is None or found < before[0]:
                    return m
                break
        return before[1] if before else None

    def _pairs(self, g_start: int, g_end: int, *, mention_before: bool) -> int | None:
        """The gap's length without contacts when a mention across it pairs; -1 when it does not
        pair; None when the gap is longer than any pairing allows."""
        length = self._gap_length(g_start, g_end)
        if length > _MAX_GAP:
            return None
        return length if pairs_across(self._gap(g_start, g_end), mention_before=mention_before) else -1

    def _inside(self, g_start: int, g_end: int) -> tuple[int, int]:
        """Contacts ``[i, j)`` lie wholly inside ``[g_start, g_end)``."""
        return bisect_left(self._c_starts, g_start), bisect_right(self._c_ends, g_end)

    def _gap_length(self, g_start: int, g_end: int) -> int:
        i, j = self._inside(g_start, g_end)
        return g_end - g_start - (self._c_lengths[j] - self._c_lengths[i] if j > i else 0)

    def _gap(self, g_start: int, g_end: int) -> str:
        i, j = self._inside(g_start, g_end)
        if j <= i:
            return self._text[g_start:g_end]
        text, starts, ends = self._text, self._c_starts, self._c_ends
        pieces = [text[g_start : starts[i]]]
        k = i
        while k < j:
            k = min(self._c_run_last[k], j - 1)
            pieces.append("\0")
            pieces.append(text[ends[k] : starts[k + 1] if k + 1 < j else g_end])
            k += 1
        return "".join(pieces)

    def _nearest_any_order(self, start: int, end: int, s_start: int, s_end: int) -> OrgMention | None:
        best: tuple[int, int, OrgMention] | None = None
        for m in self._mentions:
            if m.start < s_start or m.end > s_end:
                continue
            before = m.end <= start
            if not before and m.start < end:
                continue  # overlapping spans are not a pairing
            g_start, g_end = (m.end, start) if before else (end, m.start)
            found = self._pairs(g_start, g_end, mention_before=before)
            if found is None or found < 0:
                continue
            key = (found, 0 if before else 1)
            if best is None or key < best[:2]:
                best = (*key, m)
        return best[2] if best else None


# Words that start a new clause: "Call Legal Aid Chicago, or see https://…" does not give the URL to
# Legal Aid Chicago — unless another of its contacts comes right before the word with no comma between
# ("Legal Aid Chicago at 312-… or visit https://…" lists two ways to reach the same organization, while
# "[Lone Star Legal Aid](https://…), and read https://…" starts a new clause).
_CLAUSE_BREAKS = frozenset(["or", "and", "but", "also", "otherwise", "instead", "then", "while", "whereas"])
# Words that may stand between a number/URL and the organization named *after* it: "888-… (Lone Star
# Legal Aid)", "https://… is Legal Aid Chicago's site", "call 888-… to reach Lone Star Legal Aid".
_AFTER_WORDS = frozenset(
    ["for", "to", "reach", "contact", "call", "of", "by", "from", "at", "the", "is", "its", "run", "operated"]
)
_MAX_GAP = 80


def pairs_across(gap: str, *, mention_before: bool) -> bool:
    """True when an organization named across ``gap`` is the one a number or URL is given for.

    In ``gap`` every other phone number or URL has been replaced by a NUL character.
    """
    if len(gap.replace("\0", "")) > _MAX_GAP or ";" in gap:
        return False
    if not mention_before:
        words = re.findall(r"[^\W\d_]+", gap)
        return "\0" not in gap and all(w.casefold() in _AFTER_WORDS for w in words)
    contact_just_before = False
    for token in re.findall(r"\0|,|[^\W\d_]+", gap):
        if token == "\0":
            contact_just_before = True
        elif token == ",":
            contact_just_before = False
        elif token.casefold() in _CLAUSE_BREAKS and not contact_just_before:
            return False
    return True


def check_phones(
    text: str,
    directory: Directory,
    phones: Sequence[PhoneMention],
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]] = (),
    pairing: Pairing | None = None,
) -> list[PhoneFinding]:
    """Classify every phone number against the directory (``contacts``: all phone and URL spans).

    Budget: one :class:`Pairing` (O((m + c) log(m + c))), then per number one dictionary lookup and one
    :meth:`Pairing.nearest`: linear in the answer up to the logarithm.
    """
    pairing = pairing or Pairing(text, mentions, sentences, contacts)  # (verify() shares one)
    findings = []
    for phone in phones:
        paired = pairing.nearest(phone.start, phone.end)
        paired_org = paired.org if paired else None
        owner = directory.owner_of_phone(phone.e164)
        if owner is None:
            status = PhoneStatus.UNKNOWN_NUMBER
        elif paired_org is None:
            status = PhoneStatus.UNPAIRED
        elif paired_org is owner:
            status = PhoneStatus.MATCH
        else:
            status = PhoneStatus.MISMATCH
        findings.append(PhoneFinding(phone, paired_org, owner, status))
    return findings
