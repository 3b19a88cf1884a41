"""Phone–org cross-check: is each phone number in the answer the number of the organization named with it?

A wrong number beside a legal-aid organization's name sends a person in trouble to someone else, so a
mismatch is a hard safety failure. Numbers are found with libphonenumber's matcher (region US, VALID
leniency: statute numbers, ZIP codes and dates are not phone numbers) and paired with the organization
named nearest to them in the same sentence.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

import phonenumbers

from grounding_eval.verifier.directory import Directory, Organization, OrgMention
from grounding_eval.verifier.sentences import sentence_of

__all__ = [
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


@dataclass(frozen=True)
class PhoneMention:
    """A phone number as written in the answer."""

    raw: str
    e164: str
    start: int
    end: int


@dataclass(frozen=True)
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
    """Find US phone numbers in ``text`` in order of appearance."""
    found = []
    for match in phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.VALID):
        e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
        found.append(PhoneMention(match.raw_string, e164, match.start, match.end))
    return found


def nearest_mention(
    text: str,
    start: int,
    end: int,
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]] = (),
) -> OrgMention | None:
    """Return the organization mention that ``text[start:end]`` (a number or URL) is given for.

    Only mentions in the same sentence qualify, and only across a gap that keeps them in one clause
    (see :func:`pairs_across`); ``contacts`` are the spans of every phone number and URL, so that
    "Legal Aid Chicago at 312-… or https://…" gives both to Legal Aid Chicago. The nearest qualifying
    mention wins; on a tie the one before, as in "Legal Aid Chicago at 312-…, Prairie State at 815-…".
    """
    s_start, s_end = sentence_of(sentences, start)
    best: tuple[int, int, OrgMention] | None = None
    for m in mentions:
        if m.start < s_start or m.end > s_end:
            continue
        before = m.end <= start
        if not before and m.start < end:
            continue  # overlapping spans are not a pairing
        g_start, g_end = (m.end, start) if before else (end, m.start)
        gap = _blank_contacts(text, g_start, g_end, contacts)
        if not pairs_across(gap, mention_before=before):
            continue
        key = (len(gap.replace("\0", "")), 0 if before else 1)
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


def _blank_contacts(text: str, start: int, end: int, contacts: Sequence[tuple[int, int]]) -> str:
    gap = text[start:end]
    for c_start, c_end in sorted(contacts, reverse=True):
        if start <= c_start and c_end <= end:
            gap = gap[: c_start - start] + "\0" + gap[c_end - start :]
    return gap


def check_phones(
    text: str,
    directory: Directory,
    phones: Sequence[PhoneMention],
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]] = (),
) -> list[PhoneFinding]:
    """Classify every phone number against the directory (``contacts``: all phone and URL spans)."""
    findings = []
    for phone in phones:
        paired = nearest_mention(text, phone.start, phone.end, mentions, sentences, contacts)
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
