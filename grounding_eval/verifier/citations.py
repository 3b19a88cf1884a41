"""Legal citations in an answer: found with citeurl and eyecite, each given one offline status.

**Finding them.** Statutes, regulations and court rules are read with citeurl's templates (citeurl
12.0.4: every state's code and constitution, the U.S. Code, the C.F.R., the Federal Register, the federal
rules), with additions as data in ``citation_templates.yaml`` (the six states' short forms ``MCL 554.601``,
``ORS 90.427``, ``R.C. 5321.04``, ILCS sections with dashes; reversed forms "Section 92.056 of the Texas
Property Code"; the six states' court rules, kind ``rule``; West Virginia's constitution, which citeurl's
file names "Washington Constitution" a second time: the loader keeps the first of two equal keys).
Cases, and the laws and journals eyecite knows, are read with eyecite (every reporter of reporters-db,
public-domain forms ``2011 IL 111127``, Westlaw and Lexis numbers, slip cites ``576 U.S. ___``); a law a
template already read keeps the template's reading. Neither library's own driver runs on the whole answer
(citeurl's ``Citator.list_cites`` is quadratic on hostile text: 26 s for 40 kB of ``42 U.S.C. § 3604``):
a pre-scan derived from the libraries' own data (:mod:`.citation_scan`: each template's literal factors,
eyecite's prefilter strings) finds the sentences a citation can be in, and the libraries read each such
sentence whole, so a citation's reading never depends on text outside its sentence. The pre-scan never
misses what the libraries find: tests/verifier/test_citation_superset.py checks it on a corpus generated
from their data. Ranges (``§§ 3601-3619``, ``§§ 3601–3619``, ``§§ 92.051 to 92.0563``) are their two ends,
the code's section grammar deciding what a dash is (``735 ILCS 5/9-209`` is one section). A template is
checked when built (a failing one is not used, with its reason); an exception while reading a place lists
that place with its ``error`` (UNCHECKED), never raises. At most :data:`MAX_CITATIONS` citations are read
per text; the rest are counted (``capped``), never guessed.

**Short cites** (written here: neither library states a rule that can be checked):

* ``Id.`` (``Ibid.``, ``Id. § 24.006``, ``Id. at (b)``) continues the citation just before it, but only when that
  citation stood alone in its sentence.
* A bare ``§ 24.006`` (``Sec. 554.602``, ``section 90.427``) continues a code only when every earlier full
  citation is of that one code, or exactly one earlier code has a section in the same chapter (``24`` of
  ``24.006``), and only when the number is written as that code's sections are (:data:`_SECTION_FORM`:
  ``§ 92.0561`` after ``765 ILCS 705/1`` continues nothing). ``section`` spelled out needs a dotted or
  dashed number ("Section 8 housing" is no cite).
* Any other short cite is *ambiguous*: listed with no jurisdiction and no normalized form, UNCHECKED.
* A bare short cite whose words say it names something else is no section of the code before it: a
  whole number followed by a programme's noun ("Sec. 8 vouchers"), a possessive ("Sec. 8's"), the
  programme's name in brackets or apposition, after a verb said of a programme ("qualify for Sec. 8"),
  or followed by "of" and a private document ("Sec. 3 of the lease") is no citation (and never counted
  toward :data:`MAX_CITATIONS`); followed by "of" and a named act ("Sec. 504 of the
  Rehabilitation Act") it is ambiguous. Followed by "of" and a code's name ("Sec. 5321.07 of the Ohio
  Revised Code") it is a citation of that code, not inferred. A dotted or dashed number is a section
  whatever words follow it ("§ 5321.07 of the escrow procedure").
* A short cite resolved by these rules is ``inferred``: never a hard failure (below).

**Statuses** (:func:`check_citations`), in this order:

* ``WRONG_JURISDICTION``: the law of a state other than the user's (federal law and the user's own state
  are fine) — a hard failure (``jurisdiction_correct``), even when its own sentence names that state,
  outside any citation, next to a contrast cue ("In Illinois, by contrast, 765 ILCS 710/1 …", "Unlike
  Texas (Tex. Prop. Code § 92.056), …"): a reader can act on another state's statute whatever the
  wording, so such a *labelled comparison* stays a leak, its reason quoting the label for a reviewer;
* ``IN_SOURCES``: the section is cited in the item's reference text (the same texts the quotation check
  uses, identical in every condition);
* ``KNOWN``: listed in the dataset's citation index (``citations.yaml``);
* ``UNKNOWN``: not listed, in a code the index declares it lists completely (``covers``; a range is
  ordered as its code numbers sections: :class:`Cover`) — a hard failure (``hallucinated_citation``);
* ``UNCHECKED``: nothing covers it offline. The snapshot's record of a live run, or in live mode the
  section's official page (:mod:`~grounding_eval.verifier.citation_pages`), decides it instead.

An ``inferred`` short cite that would be ``UNKNOWN`` or ``WRONG_JURISDICTION`` is ``UNCHECKED`` and says
so. Any exception deciding one citation makes it ``UNCHECKED`` with the reason.

A citation is compared at section level: ``Tex. Prop. Code § 24.005(b)`` is ``§ 24.005``.
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from itertools import islice, pairwise
from pathlib import Path
from typing import Any, TypeVar

from grounding_eval.errors import DataError
from grounding_eval.verifier.citation_scan import Scan, Scanner, factors, library_data, needs_digit, units
from grounding_eval.verifier.sentences import sentence_of, sentence_spans

__all__ = [
    "MAX_CITATIONS",
    "CitationFinding",
    "CitationIndex",
    "CitationMention",
    "CitationStatus",
    "check_citations",
    "find_citations",
    "load_citation_index",
]

_T = TypeVar("_T")

MAX_CITATIONS = 200
"""Most citations read in one text; past it the rest are counted in ``capped`` and not checked."""
MAX_PLACES = 4 * MAX_CITATIONS
"""Most pre-scan places (a section sign, a code's name, a reporter shape) the libraries read around:
past them (1 MB of code names with no section, say) the rest are counted in ``capped``, not read."""

_TEMPLATES = Path(__file__).with_name("citation_templates.yaml")
# citeurl's template files read here: the state codes and federal statutes and regulations.
_CITEURL_FILES = ("general federal law", "state law")


class CitationStatus(enum.Enum):
    """What the offline check says of one citation."""

    IN_SOURCES = "IN_SOURCES"
    KNOWN = "KNOWN"
    UNKNOWN = "UNKNOWN"
    WRONG_JURISDICTION = "WRONG_JURISDICTION"
    UNCHECKED = "UNCHECKED"


@dataclass(frozen=True, slots=True)
class CitationMention:
    """One citation as written, what it cites, and where.

    ``key`` identifies the cited section: ``(template, token, …)`` for a statute or regulation (for
    ``765 ILCS 705/1``: ``("Illinois Compiled Statutes", "765", "705", "1")``), ``("case", reporter,
    volume, page)`` for a case; None for an ambiguous short cite.
    """

    raw: str
    start: int
    end: int
    kind: str  # statute | regulation | rule | case | journal
    jurisdiction: str | None  # two-letter state, or US
    normalized: str | None
    key: tuple[str, ...] | None
    url: str | None = None  # the section's official page (citeurl's), where there is one
    # The code a short cite continues (the key without the section as written: ``("Texas Codes",
    # "Prop.")`` for ``Tex. Prop. Code § 24.005``), and that section as written (``24.005``).
    code: tuple[str, ...] | None = None
    section: str | None = None
    # A short cite (a bare ``§ 92.9``, an ``Id.``) read as a section of an earlier code by the module's
    # rule: an inference, so never a hard failure.
    inferred: bool = False
    # For another state's law: the words of its sentence that label it a comparison ("In Illinois, by
    # contrast"), quoted in its finding's reason (it stays WRONG_JURISDICTION), or None.
    contrast: str | None = None
    # Why this place could not be read (a library's exception): listed, UNCHECKED with this reason.
    error: str | None = None
    # Other states whose law the citation may equally be (reporters-db lists several for some
    # public-domain forms: "1972 PA 348" is Pennsylvania's form and a Michigan Public Act): a user in
    # one of them is never told it is another state's law.
    also: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CitationFinding:
    """One citation and its status, with a sentence a person can act on."""

    mention: CitationMention
    status: CitationStatus
    why: str = ""

    @property
    def detail(self) -> str:
        """``"765 ILCS 705/9 (765 Ill. Comp. Stat. 705/9): not in the citation index, which lists 765
        ILCS completely"``."""
        m = self.mention
        written = m.raw if m.normalized in (None, m.raw) else f"{m.raw} ({m.normalized})"
        return f"{written}: {self.why}" if self.why else written


@dataclass(frozen=True)
class CitationsFound:
    """Every citation of one text, and how many citation-like places were past the cap."""

    mentions: tuple[CitationMention, ...]
    capped: int = 0


# -- finding ------------------------------------------------------------------------------------------

_SHORT = re.compile(
    r"(?<!\w)(?:(?P<id>[Ii](?:bi)?d\.)(?:,? at)?(?:,? ?(?:§§?|[Ss]ec(?:tions?|t?s?\.)))? ?(?P<sec1>\d[\w.-]*\w|\d)?"
    r"|(?:§§?|&sect;) ?(?P<sec2>\d[\w.-]*\w|\d)"
    r"|[Ss]ect?s?\. ?(?P<sec4>\d[\w.-]*\w|\d)"  # abbreviated: "Sec. 3" is a short cite
    r"|[Ss]ec(?:tions?|t?s?) ?(?P<sec3>\d+[.-][\w.-]*\w))"  # spelled out: "Section 8" is not
)
_PIN = re.compile(r" ?(\((?:[A-Za-z]{1,5}|\d{1,3})\))+")
_SHORT_AT = re.compile(r"(?=[IiSs§&])" + _SHORT.pattern)  # (the same matches, tried where one can start)


def find_citations(text: str) -> CitationsFound:
    """Every statute, regulation, rule and case citation in ``text``, in order of appearance.

    Never raises: a place the libraries fail to read is listed as a citation with its ``error`` (the
    check leaves it UNCHECKED with that reason), and a failure of this code as one such citation.

    Budget: one pre-scan (two Aho–Corasick passes, see :mod:`.citation_scan`); then the libraries on
    each sentence holding a place found, in order, and no further once :data:`MAX_CITATIONS` citations
    (full and short) or :data:`MAX_PLACES` places lie before the next sentence; short cites are resolved
    with one sentence split of the part read and a bisection each. Past the cap, ``capped`` counts the
    pre-scan places (a code's factor, a reporter string, a short cite's signal) after the last citation
    kept: places, not citations, never read (past :data:`MAX_PLACES` × 4 places found, those further on
    are counted up to eight times as many again).
    """
    try:
        return _find(text)
    except Exception as error:  # a failure of our own: the text is listed as not read, never raised
        return CitationsFound((_unread(text, 0, min(len(text), 80), error),))


def _find(text: str) -> CitationsFound:
    original = text
    if "\n" in text or "\r" in text or "\t" in text:
        # A citation wrapped at a line break ("Ohio Rev. Code §" / "5321.04") reads as on one line: the
        # patterns see each break as a space (same length, so every position holds); sentences and
        # each citation's raw text come from the text as written.
        text = text.replace("\n", " ").replace("\r", " ").replace("\t", " ")
    scan = _scanner().scan(text, 4 * MAX_PLACES)
    if scan.statutes or scan.cases:
        scan = _outside_urls(text, scan)
    places = scan.places
    # The short cites' places, as far as they can matter to the cap (the pattern tried only where one of
    # its alternatives can start: 1 MB of "Id. " is 0.3 s, not 1.5 s).
    short_starts = [m.start() for m in islice(_short_cites(text), 4 * MAX_CITATIONS)] if scan.short else []
    if not places and not short_starts:
        return CitationsFound(())
    full, stop = _full_citations(text, original, scan, places, short_starts)
    if stop is None:
        stop = scan.stop
    shorts: list[re.Match[str]] = []
    room = MAX_CITATIONS
    starts = [m.start for m in full]
    for match in _short_cites(text, stop) if scan.short else ():
        k = bisect_right(starts, match.start()) - 1
        if k >= 0 and match.start() < full[k].end:
            continue  # inside a full citation
        if len(shorts) + bisect_right(starts, match.start()) >= room:
            break
        shorts.append(match)
    kept = _in_order(full, shorts)[:MAX_CITATIONS]
    found = _resolved(text, kept, original)
    capped = 0
    if len(kept) == MAX_CITATIONS or stop is not None:
        last = found[-1].end if len(kept) == MAX_CITATIONS else stop or 0
        capped = len(places) - bisect_left(places, last) + (scan.past if scan.stop is not None else 0)
        capped += sum(text.count(signal, last) for signal in ("§", "&sect;", "Id.", "id.", "Sec", "sec"))
    if original is not text:
        found = [
            m if m.raw == original[m.start : m.end] else replace(m, raw=original[m.start : m.end])
            for m in found
        ]
    return CitationsFound(tuple(found), capped)


def _unread(text: str, start: int, end: int, error: BaseException) -> CitationMention:
    """A place the libraries could not read, listed with the error (UNCHECKED, never a failure)."""
    why = f"{type(error).__name__}: {error}"[:200]
    return CitationMention(text[start:end], start, end, "statute", None, None, None, error=why)


# A URL's run of characters ("…/Laws/MCL?objectName=…"): its text is never a citation, and reading
# around it would cost the libraries' time for nothing.
_URLISH = re.compile(r"(?<![\w.])(?:[Hh][Tt][Tt][Pp][Ss]?://|www\.)[^\s<>()\[\]\"'`]+")


def _outside_urls(text: str, scan: Scan) -> Scan:
    """``scan`` without the places inside a URL (each place's run of URL characters looked at: no pass
    over the whole text)."""
    if "://" not in text and "www." not in text:
        return scan
    return Scan(
        [s for s in scan.statutes if not _in_url(text, s[0])],
        [c for c in scan.cases if not _in_url(text, c[0])],
        scan.short, scan.stop, scan.past,
    )  # fmt: skip


_URL_STOPS = re.compile(r"[\s<>()\[\]\"'`]")


def _in_url(text: str, at: int) -> bool:
    """Whether ``at`` lies in a URL (``_URLISH``) of ``text``: the run of URL characters around it starts
    one."""
    start = at
    while start > 0 and not _URL_STOPS.match(text, start - 1):
        start -= 1
        if at - start > 2000:  # (a run that long is no URL a reader follows; read it as text)
            return False
    while start < at:
        url = _URLISH.match(text, start)
        if url is not None:
            return url.end() > at
        start += 1
    return False


def _full_citations(
    text: str, original: str, scan: Scan, places: list[int], short_starts: list[int]
) -> tuple[list[CitationMention], int | None]:
    """The full citations of the sentences holding a place found, in order, without overlaps, read
    sentence by sentence until :data:`MAX_CITATIONS` citations (these and the short cites outside them)
    or :data:`MAX_PLACES` places lie before a sentence; and where reading stopped (None: the whole
    text)."""
    scanner = _scanner()
    sentences = units(original, places, scanner.abbreviations)
    statute_at = [at for at, _ in scan.statutes]
    case_at = [at for at, _ in scan.cases]
    kept: list[CitationMention] = []
    inside: list[int] = []  # short-cite places inside each kept citation
    for lo, hi in sentences:
        estimate = len(kept) + bisect_left(short_starts, lo) - sum(inside)
        if estimate >= MAX_CITATIONS or bisect_left(places, lo) >= MAX_PLACES:
            return kept, lo
        names: set[str] = set()
        for _, selected in scan.statutes[bisect_left(statute_at, lo) : bisect_left(statute_at, hi)]:
            names.update(selected)
        cases = scan.cases[bisect_left(case_at, lo) : bisect_left(case_at, hi)]
        indexes = frozenset(index for _, selected in cases for index in selected)
        first_case = cases[0][0] - lo if cases else -1
        read = _sentence(text[lo:hi], frozenset(names), indexes, first_case)
        for m in read:
            m = replace(m, start=m.start + lo, end=m.end + lo)
            within = bisect_left(short_starts, m.end) - bisect_left(short_starts, m.start)
            if kept and m.start < kept[-1].end:
                if m.end - m.start > kept[-1].end - kept[-1].start:
                    kept[-1], inside[-1] = m, within
                continue
            kept.append(m)
            inside.append(within)
    return kept, None


_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=1024)
def _sentence(
    sentence: str, names: frozenset[str], indexes: frozenset[int], first_case: int
) -> tuple[CitationMention, ...]:
    """The full citations of one sentence (positions in it), read with the templates ``names`` and,
    where eyecite's extractors ``indexes`` (selected at ``first_case``) can match, eyecite; sorted by
    start, longest first. Remembered: a function of the sentence and what the pre-scan found in it, so
    a sentence repeated in another answer (the same advice in every condition) is read once, and a
    citation's reading still depends on its sentence alone."""
    if names and not _DIGIT.search(sentence):
        names &= _scanner().digitless  # (a section number is a digit: only constitutions' articles lack one)
    found = _statutes(_library(), sentence, 0, len(sentence), set(names)) if names else []
    if indexes:
        found += _cases(sentence, 0, len(sentence), [(first_case, tuple(sorted(indexes)))], found)
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    return tuple(found)


def _statutes(library: _Library, text: str, lo: int, hi: int, names: set[str]) -> list[CitationMention]:
    """The statutes, regulations and rules of the templates ``names`` in the sentence ``text[lo:hi]``,
    each with the pin subsection attached to it and, after a ``§§`` or in a range, each later member."""
    sentence = text[lo:hi]
    out: list[CitationMention] = []
    for name in sorted(names):
        template = library.template(name)
        if template is None:
            continue
        for regex in template.regexes:
            at = 0
            while (match := regex.search(sentence, at)) is not None:
                at = max(match.end(), match.start() + 1)
                try:
                    mention = library.mention(match, template)
                    if mention is None:
                        # Rejected by a token's edits: the search resumes inside the match, not after
                        # it ("Texas law: Tex. Prop. Code § 92.0559": Texas's pattern first reads "law:
                        # Tex. Prop." as the code's name; the citation starts inside that match).
                        at = match.start() + 1
                        continue
                    pin = _PIN.match(sentence, mention.end)
                    if pin:
                        mention = replace(mention, raw=sentence[mention.start : pin.end()], end=pin.end())
                    out += _members(library, sentence, mention, library.section_token(match, template))
                except Exception as error:  # a template that fails on this text: this place is unread
                    out.append(_unread(sentence, match.start(), match.end(), error))
    return [replace(m, start=m.start + lo, end=m.end + lo) for m in out]


_MEMBER = re.compile(
    r"(?:,? (?:and|or|&)|,|(?P<to> ?[-‑–—] ?| (?:to|through|thru) ))"
    r" ?(?:§§? ?)?(?P<section>\d[\w.\-‑–]*\w|\d)(?![\w/])"
)
_DASHES = re.compile(r"[-‑–—]")
_PLURAL = re.compile(r"§§|&sect;&sect;|\b[Ss]ections\b|\b[Ss]ecs\.")  # several sections: a list or range


def _members(
    library: _Library, text: str, first: CitationMention, token: str | None
) -> list[CitationMention]:
    """``first`` and, after a ``§§``, each later member of its list (``92.109`` in ``Tex. Prop. Code §§
    92.103 and 92.109``), and the two ends of a range (``§§ 3601-3619``, ``§ 92.051 to 92.0563``), each
    a citation of the first's code; never one invented section ``3601-3619``.

    The code's grammar decides what a dash is: within the section token a template read (``token``)
    after a ``§§``, a dash between two numbers of the same shape in ascending order is a range (``§§
    3601-3619``; not ``§ 2000e-2`` nor ILCS's ``5/9-209``); a dash between two tokens of the template
    (``Haw. Rev. Stat. § 521-44``) is never one. After the section, "to", "through" or a dash starts
    the range's second end (a hyphen only after a ``§§``).
    """
    out = [first]
    plural = _PLURAL.search(first.raw) is not None
    ends = (
        _range_ends(token) if plural and token and first.section and first.section.endswith(token) else None
    )
    if ends is not None and first.section is not None:  # the whole range read as one section: split it
        low, high = first.section[: -len(token or "")] + ends[0], ends[1]
        head = first.raw[: first.raw.rfind(first.section)]
        low_mention = library.continued(first, low, text, first.start, first.start + len(head) + len(low))
        at = first.start + len(head) + len(first.section) - len(high)
        high_mention = library.continued(first, high, text, at, at + len(high))
        if low_mention is None or high_mention is None:
            return out
        out = [low_mention, high_mention]
        first = low_mention
    at = out[-1].end
    while (member := _MEMBER.match(text, at)) is not None:
        separator = member.group("to")
        if separator is None and not plural:
            break
        hyphen_alone = separator is not None and separator.strip() == "-" and not plural
        if separator is not None and (
            hyphen_alone or not _ascending(out[-1].section or "", member.group("section"))
        ):
            break
        start, end = member.span("section")
        pin = _PIN.match(text, end)
        end = pin.end() if pin else end
        continued = library.continued(first, member.group("section"), text, start, end)
        if continued is None:
            break
        out.append(continued)
        at = end
    return out


def _range_ends(section: str) -> tuple[str, str] | None:
    """The two ends of ``section`` read as a range ("3601-3619", "37-6-1-37-6-30"), or None: it is a
    range when a dash cuts it into two numbers of the same shape, the second after the first (so
    "2000e-2", "1320a-7b" and "9-209" stay one section)."""
    for dash in _DASHES.finditer(section):
        low, high = section[: dash.start()], section[dash.end() :]
        if low and high and _shape(low) == _shape(high) and _ascending(low, high):
            return low, high
    return None


def _shape(section: str) -> str:
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", _DASHES.sub("-", section)))


def _ascending(low: str, high: str) -> bool:
    """``high`` comes after ``low``: each number part compared as a decimal fraction after a dot (92.0563
    after 92.051) and as a whole number otherwise."""

    def parts(section: str) -> list[tuple[int, float | int, str]]:
        out = []
        for piece in re.finditer(r"([.\-‑–—/]?)(\d+)([A-Za-z]*)", section):
            dot, digits, letters = piece.groups()
            out.append((0, float("0." + digits) if dot == "." else int(digits), letters))
        return out

    return parts(high) > parts(low) if _shape(low) == _shape(high) else False


def _in_order(
    full: list[CitationMention], shorts: list[re.Match[str]]
) -> list[CitationMention | re.Match[str]]:
    out: list[CitationMention | re.Match[str]] = []
    k = 0
    for match in shorts:
        while k < len(full) and full[k].start < match.start():
            out.append(full[k])
            k += 1
        out.append(match)
    return out + full[k:]


def _resolved(
    text: str, kept: list[CitationMention | re.Match[str]], original: str | None = None
) -> list[CitationMention]:
    """The full citations as they are, each short cite resolved by the module's rule (sentences are
    those of ``original``, the text as written, when ``text`` is its one-line copy), and each citation of
    a state's law labelled when its sentence makes it a comparison."""
    if all(isinstance(item, CitationMention) for item in kept):
        return _labelled(original or text, [item for item in kept if isinstance(item, CitationMention)])

    spans = [(i.start, i.end) if isinstance(i, CitationMention) else i.span() for i in kept]
    bound = spans[-1][1]
    sentence_starts = [s for s, _ in sentence_spans((original or text)[:bound], spans)]

    def sentence_of(pos: int) -> int:
        return bisect_right(sentence_starts, pos) - 1

    per_sentence: dict[int, int] = {}  # citations per sentence, short cites included
    for start, _ in spans:
        per_sentence[sentence_of(start)] = per_sentence.get(sentence_of(start), 0) + 1
    library = _library()
    out: list[CitationMention] = []
    origins: list[CitationMention | None] = []  # the full citation each one is, or continues
    fulls: list[CitationMention] = []  # the full citations before the short cite being read
    for item in kept:
        if isinstance(item, CitationMention):
            out.append(item)
            origins.append(item)
            fulls.append(item)
            continue
        previous = out[-1] if out else None
        mention, origin = _short_cite(
            library, text, item, previous, origins[-1] if origins else None, fulls, per_sentence, sentence_of
        )
        out.append(mention)
        origins.append(origin)
    return _labelled(original or text, out)


# What follows a bare short cite when its number is not a section of the code before it (written here:
# no library reads it). A noun that makes a whole number a programme's name: "Sec. 8 vouchers", "§ 8
# housing", "Sec. 8 tenants" (never "§ 92.056 tenants …": a dotted or dashed number is a section).
_NOUNS = (
    r"(?:vouchers?|housing|program(?:me)?s?|tenants?|tenancy|landlords?|units?|apartments?|rentals?"
    r"|subsid(?:y|ies)|assistance|certificates?|participants?|holders?|residents?|buildings?|properties"
    r"|applicants?|inspections?|payments?|waiting list)\b"
)
_NAME_NOUN = re.compile(r"\s?-?\s?" + _NOUNS, re.IGNORECASE)
# "of" and what the number is a part of: "Sec. 3 of the lease", "Sec. 504 of the Rehabilitation Act".
_PART_OF = re.compile(
    r",?\s+of\s+(?:(?:the|this|that|these|your|my|our|their|his|her|its|a|an|each|every|any)\s+)?"
    r"(?P<what>[A-Za-z][\w'’-]*)"
)
# A part of the law itself ("§ 9-210 of this Article", "Sec. 3 of the Act"): the usual rule reads it.
_LAW_PART = re.compile(
    r"(?:code|chapter|act|article|title|subtitle|statutes?|subchapter|part|division|law|section|subsection)s?",
    re.IGNORECASE,
)
# Other words beside a whole number that make it a thing named, not a provision cited: a possessive ("Sec.
# 8's voucher program"), the programme's name in brackets or in apposition ("Sec. 8 (Housing Choice
# Voucher)", "Sec. 8, the voucher program,"), and before it a verb one says of a programme, never of a
# section ("qualify for Sec. 8", "apply for § 8", "accepts Sec. 8"). ("under § 9" is how a section is
# invoked: not here.)
_NAMED_AFTER = re.compile(
    r"['’]s\b|\s?\([^()]{0,60}?" + _NOUNS + r"[^()]{0,60}\)"
    r"|,\s+(?:the|a|an|our|your)\s+[^,.;()]{0,40}?" + _NOUNS,
    re.IGNORECASE,
)
_NAMED_BEFORE = re.compile(
    r"\b(?:(?:qualif(?:y|ies|ied|ying)|appl(?:y|ies|ied|ying)|eligib(?:le|ility)|sign(?:s|ed|ing)? up|wait(?:ing)?"
    r"(?: list)?|approved|accepted) for|accept(?:s|ed|ing)?|receiv(?:e|es|ed|ing)|enrolled in)\s+$",
    re.IGNORECASE,
)
# A private document or a programme a whole number can be a part of: "Sec. 3 of the lease".
_DOCUMENT = re.compile(
    r"(?:(?:rental |lease |tenancy )?agreements?|leases?|contracts?|addend(?:um|a)|applications?|polic(?:y|ies)"
    r"|handbooks?|(?:house )?rules|bylaws|forms?|notices?|deeds?|mortgages?|program(?:me)?s?|vouchers?)\b",
    re.IGNORECASE,
)
# "of the Texas Property Code": a named code, read with the number as that code's section.
_NAMED_CODE = re.compile(r",?\s+of\s+(?:the\s+)?(?P<name>(?:[A-Z][\w.'’-]*\s+){1,4}(?:Code|Statutes|Laws)\b)")


def _short_cites(text: str, stop: int | None = None) -> Iterator[re.Match[str]]:
    """The short cites in ``text`` (before ``stop``), without the programme names and document parts
    that look like them: those are no citation, and never count toward :data:`MAX_CITATIONS`."""
    for match in _SHORT_AT.finditer(text, 0, len(text) if stop is None else stop):
        if _short_cite_kind(text, match) != "no citation":
            yield match


def _short_cite_kind(text: str, match: re.Match[str]) -> str:
    """What a short cite is, read from the words after it: ``"named code"`` (followed by "of" and a
    code's name: "Sec. 5321.07 of the Ohio Revised Code"), ``"no citation"`` (a whole number followed
    by a programme's noun or "of" and a private document: "Sec. 8 vouchers", "Sec. 3 of the lease"),
    ``"named act"`` (a whole number followed by "of" and an act that is not the code before it: "Sec.
    504 of the Rehabilitation Act"), or ``"section"`` (read by the usual rule: a dotted or dashed number
    is a section whatever follows). An ``Id.`` is always a section."""
    if match.group("id"):
        return "section"
    end = match.end()
    number = match.group("sec2") or match.group("sec3") or match.group("sec4") or ""
    if _NAMED_CODE.match(text, end):
        return "named code"
    whole = number.isdigit()  # (a programme's or a document's number is a whole number)
    if whole and (
        _NAME_NOUN.match(text, end)
        or _NAMED_AFTER.match(text, end)
        or _NAMED_BEFORE.search(text, max(0, match.start() - 40), match.start())
    ):
        return "no citation"
    part = _PART_OF.match(text, end)
    if part is None or not whole or _LAW_PART.fullmatch(part.group("what")):
        return "section"
    if _DOCUMENT.match(text, part.start("what")):
        return "no citation"
    return "named act" if part.group("what")[0].isupper() else "section"


def _named_code(library: _Library, text: str, match: re.Match[str], section: str) -> CitationMention | None:
    """ "Sec. 5321.07 of the Ohio Revised Code" read as a citation of the code it names (its raw text
    running to the code's name), or None when no template reads that name."""
    named = _NAMED_CODE.match(text, match.end())
    if named is None:
        return None
    for written in (f"{named.group('name')} § {section}", f"{named.group('name')} Section {section}"):
        for found, template in library.exact(written):
            mention = library.mention(found, template)
            if mention is not None and mention.key is not None:
                start, end = match.start(), named.end()
                return replace(mention, raw=text[start:end], start=start, end=end)
    return None


def _short_cite(
    library: _Library,
    text: str,
    match: re.Match[str],
    previous: CitationMention | None,
    previous_origin: CitationMention | None,
    fulls: Sequence[CitationMention],
    per_sentence: dict[int, int],
    sentence_of: Callable[[int], int],
) -> tuple[CitationMention, CitationMention | None]:
    """One short cite, resolved by the module's rule (with the full citation it continues, and marked
    ``inferred``), or listed as ambiguous (with None)."""
    start, end = match.start(), match.end()
    pin = _PIN.match(text, end)
    end = pin.end() if pin else end
    base: CitationMention | None
    mention: CitationMention | None = None
    if match.group("id"):
        section = match.group("sec1")
        # Alone: the only citation of its sentence but for this Id. itself.
        own = previous is not None and sentence_of(previous.start) == sentence_of(start)
        alone = previous is not None and per_sentence.get(sentence_of(previous.start), 0) == 1 + own
        base = previous_origin if alone and previous is not None and previous.key else None
        if base is not None and previous is not None and (section is None or base.kind == "case"):
            # The citation before it, section and all (a resolved Id. counts as what it resolved to).
            mention = replace(previous, raw=text[start:end], start=start, end=end, contrast=None)
        elif base is not None:
            mention = library.continued(base, section, text, start, end)
    elif (kind := _short_cite_kind(text, match)) == "named act":
        base = None
    else:
        section = match.group("sec2") or match.group("sec3") or match.group("sec4")
        named = _named_code(library, text, match, section) if kind == "named code" else None
        if named is not None:  # the code is named: no inference
            return named, named
        base = _code_continued(fulls, section)
        mention = library.continued(base, section, text, start, end) if base is not None else None
    if mention is None:
        return CitationMention(text[start:end], start, end, "statute", None, None, None), None
    return replace(mention, inferred=True), base


# How each code's sections are written (written here: citeurl's templates read far looser numbers, so
# "765 ILCS 705/92.0561" reads as a section). A short cite continues a code only in its code's form;
# a code not listed takes any number its template reads.
_SECTION_FORM = {
    # An act's sections: "1", "1.4", "0.01", "356z"; in articles "9-209", "2-3.170", "11-501.01".
    "Illinois Compiled Statutes": re.compile(
        r"\d{1,4}[a-z]?(?:\.\d{1,2}[a-z]?)?|\d{1,4}[a-z]?(?:-\d{1,5}[a-z]?)+(?:\.\d{1,3}[a-z]?)?"
    ),
    "Texas Codes": re.compile(r"\d{1,3}[A-Z]?\.\d{1,4}[A-Z]?"),  # chapter.section: "92.0561", "24.005"
    "Ohio Revised Code": re.compile(r"\d{1,4}\.\d{2,3}"),  # "5321.04", "1.42", "2950.031"
    "Oregon Revised Statutes": re.compile(r"\d{1,3}[A-Z]?\.\d{3}"),  # "90.320", "105.105"
    "Michigan Compiled Laws": re.compile(r"\d{1,3}\.\d{1,4}[a-z]{0,2}", re.IGNORECASE),  # "554.601a"
    "West Virginia Code": re.compile(
        r"\d{1,2}[A-Z]?-\d{1,2}[A-Z]?-\d{1,3}[a-z]?", re.IGNORECASE
    ),  # "55-3A-1"
    "U.S. Code": re.compile(r"\d{1,5}[a-z]{0,2}(?:-\d{1,2}[a-z]?)?"),  # "3604", "3608a", "3614-1"
}


def _fits(code: tuple[str, ...], section: str) -> bool:
    """Whether ``section`` is written as ``code``'s sections are."""
    form = _SECTION_FORM.get(code[0])
    return form is None or form.fullmatch(section) is not None


def _code_continued(fulls: Sequence[CitationMention], section: str) -> CitationMention | None:
    """The latest full citation of the one code a bare ``§ section`` continues, or None (ambiguous): of
    the codes cited before it, the one code, or the one with a citation in the same chapter, and only
    when its sections are written as ``section`` is (the form never picks a code, it only refuses one)."""
    base = _one_code(fulls, section)
    return base if base is not None and base.code is not None and _fits(base.code, section) else None


def _one_code(fulls: Sequence[CitationMention], section: str) -> CitationMention | None:
    codes: dict[tuple[str, ...], CitationMention] = {}
    for m in fulls:
        if m.code is not None:
            codes[m.code] = m
    if len(codes) == 1 and len(codes) == len({m.code for m in fulls}):
        return next(iter(codes.values()))
    chapter = _chapter(section)
    same = {m.code: m for m in fulls if m.code is not None and m.section and _chapter(m.section) == chapter}
    return codes[next(iter(same))] if len(same) == 1 else None


def _chapter(section: str) -> str:
    return re.split(r"[.-]", section, maxsplit=1)[0]


# -- labelled comparisons -----------------------------------------------------------------------------

# Words that contrast one state's law with another's (written here: no library reads them).
_CONTRAST = re.compile(
    r"\b(?:unlike|by contrast|in contrast|contrast(?:s|ed|ing)? (?:with|to)|whereas|compared (?:with|to)"
    r"|in comparison|for comparison|by comparison|as opposed to|differs? from|different from)\b",
    re.IGNORECASE,
)
# A word every cue holds (lower case): a text holding none of them has no cue, and no search for one is
# run (five searches of 600 characters each cost a quarter of a millisecond; tests/verifier/test_citations.py
# checks every phrase _CONTRAST matches holds one).
_CUE_WORDS = ("unlike", "contrast", "whereas", "compar", "opposed", "differ")
# The characters outside ASCII that match an ASCII letter case-insensitively (the directory's list): in a
# text holding one, the cue words are not looked for in its lower-case copy.
_ASCII_LOOKALIKES = re.compile("[\u0130\u0131\u017f\u212a]")
_LABEL_GAP = 40  # characters at most between a state's name and the contrast cue that labels it
_LABEL_REACH = 300  # characters of its sentence read on each side of a citation for its label


@cache
def _state_name_pattern() -> re.Pattern[str]:
    from grounding_eval.states import STATE_NAMES

    names = sorted(STATE_NAMES.values(), key=len, reverse=True)  # "West Virginia" before "Virginia"
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")


def _labelled(text: str, found: list[CitationMention]) -> list[CitationMention]:
    """``found`` with ``contrast`` set on each citation of a state's law whose own sentence names that
    state (outside any citation) within :data:`_LABEL_GAP` characters of a contrast cue, both within
    :data:`_LABEL_REACH` characters of the citation.

    Budget: a look for the cues' words (:data:`_CUE_WORDS`) in the text; where one is, per citation of a
    state's law, one cue scan of ``2 * _LABEL_REACH`` characters around it; where there is a cue, a
    sentence split and a state-name scan of those characters.
    """
    from grounding_eval.states import STATE_NAMES

    lowered = text.lower()
    if (text.isascii() or not _ASCII_LOOKALIKES.search(text)) and not any(w in lowered for w in _CUE_WORDS):
        return found
    starts = [m.start for m in found]
    labels: dict[int, str] = {}
    for m in found:
        name = STATE_NAMES.get(str(m.jurisdiction)) if m.jurisdiction not in (None, "US") else None
        lo, hi = max(0, m.start - _LABEL_REACH), min(len(text), m.end + _LABEL_REACH)
        if name is None or _CONTRAST.search(text, lo, hi) is None:
            continue
        near = found[bisect_left(starts, lo - 2 * _LABEL_REACH) : bisect_right(starts, hi)]
        cited = [(max(c.start, lo) - lo, min(c.end, hi) - lo) for c in near if c.end > lo and c.start < hi]
        s_lo, s_hi = sentence_of(sentence_spans(text[lo:hi], cited), m.start - lo)
        lo, hi = lo + s_lo, lo + s_hi
        names = [
            n.span() for n in _state_name_pattern().finditer(text, lo, hi)
            if n.group(0) == name and not any(c.start <= n.start() < c.end for c in near)
        ]  # fmt: skip
        cues = [c.span() for c in _CONTRAST.finditer(text, lo, hi)]
        for n_lo, n_hi in names:
            close = [(c_lo, c_hi) for c_lo, c_hi in cues if max(c_lo - n_hi, n_lo - c_hi) <= _LABEL_GAP]
            if close:
                c_lo, c_hi = close[0]
                labels[m.start] = " ".join(text[min(n_lo, c_lo) : max(n_hi, c_hi)].split())
                break
    if not labels:
        return found
    return [replace(m, contrast=labels[m.start]) if m.start in labels else m for m in found]


_WHOLE_READINGS = 4096  # most remembered readings of a whole short cite (see _Library._whole)


class _Library:
    """citeurl's templates and ours, loaded once, each built (and validated) the first time a sentence
    holds one of its factors, and found by name.

    citeurl's ``state law`` file names two templates ``Washington Constitution`` (the second is West
    Virginia's); YAML keeps the last of two equal keys, so West Virginia's constitution was read as
    Washington's. Here the first is kept and every dropped duplicate is listed in ``duplicates``; ours
    defines ``West Virginia Constitution`` (``citation_templates.yaml``).
    """

    def __init__(self) -> None:
        import citeurl
        import yaml

        folder = Path(citeurl.__file__).parent / "templates"
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        self._raw: dict[str, Any] = {}  # citeurl's templates as data, built only when a sentence needs one
        self._federal: set[str] = set()
        self.duplicates: list[str] = []
        for name in _CITEURL_FILES:
            data, duplicates = _first_keys((folder / f"{name}.yaml").read_text(encoding="utf-8"), loader)
            self._raw.update(data)
            self.duplicates += duplicates
            if "federal" in name:
                self._federal |= set(data)
        self._ours: dict[str, Any] = yaml.load(_TEMPLATES.read_text(encoding="utf-8"), Loader=loader)
        self._built: dict[str, Any] = {}  # citeurl's, by name
        self._checked: dict[str, Any] = {}  # every template built and checked, by name
        self.rejected: dict[str, str] = {}  # a template that fails its checks: why, and it is not used
        self._state = {name: _template_state(name) for name in self.names()}
        self._readings: dict[tuple[str, str], CitationMention | None] = {}  # see _whole

    def names(self) -> list[str]:
        """Every template the pack loads: citeurl's (ours replacing those of the same name) and ours."""
        return [*self._raw, *(name for name in self._ours if name not in self._raw)]

    def _citeurl_template(self, name: str) -> Any:
        built = self._built.get(name)
        if built is None:
            from citeurl import Template  # (citeurl imports markdown for its Markdown extension)

            parent = self._raw[name].get("inherit")
            if parent:
                self._citeurl_template(parent)
            built = self._built[name] = Template.from_dict(name, self._raw[name], inheritables=self._built)
        return built

    def template(self, name: str) -> Any | None:
        """The template ``name`` (ours where we have one, built over citeurl's, else citeurl's), or None
        when it cannot be built or fails its checks (the reason is in ``rejected``)."""
        if name in self.rejected:
            return None
        checked = self._checked.get(name)
        if checked is not None:
            return checked
        try:
            if name not in self._ours:
                built = self._citeurl_template(name)
            else:
                from citeurl import Template

                parent = self._ours[name].get("inherit")
                inheritables = {parent: self._citeurl_template(parent)} if parent else {}
                built = Template.from_dict(name, self._ours[name], inheritables=inheritables)
            checked = self._checked[name] = _checked(built)
            return checked
        except Exception as error:  # a template that cannot be built or fails its checks is not used
            self.rejected[name] = f"{type(error).__name__}: {error}"[:200]
            return None

    def all_factors(self) -> tuple[dict[str, list[str]], list[str], dict[str, str], list[str]]:
        """Every template's factors (built and checked, about 2 s), those a match of which can hold no
        digit, the templates rejected, and the abbreviations the templates write (their names, name
        builders and lookup tables: ``Prac.``)."""
        out: dict[str, list[str]] = {}
        digitless: list[str] = []
        for name in self.names():
            template = self.template(name)
            if template is None:
                continue
            strings: set[str] = set()
            for regex in template.regexes:
                found = factors(regex.pattern, regex.flags)
                strings |= found if found is not None else set("0123456789")  # (none: every digit)
            out[name] = sorted(strings)
            if not all(needs_digit(regex.pattern, regex.flags) for regex in template.regexes):
                digitless.append(name)
        words: set[str] = set()
        for data in (self._raw, self._ours):
            for value in _literals(data):
                words |= set(re.findall(r"(?<![\w.])[A-Z][\w'&]*\.", value))
        return out, digitless, dict(self.rejected), sorted(words)

    def section_token(self, match: re.Match[str], template: Any) -> str | None:
        """The text of the last section token ``match`` holds (``3601-3619`` of ``§§ 3601-3619``)."""
        groups = match.re.groupindex
        for name in reversed(list(template.tokens)):
            if not template.tokens[name].severable and name in groups and match.group(name) is not None:
                return str(match.group(name))
        return None

    def mention(self, match: re.Match[str], template: Any) -> CitationMention | None:
        """The citation ``match`` of ``template`` reads, or None when a token's edits reject it.

        The tokens are normalized as citeurl's ``Citation`` does (``TokenType.normalize``), without
        building the short-form patterns a ``Citation`` compiles for its own driver. A token the regex
        does not hold takes its default (the Delaware General Corporation Law's title 8).
        """
        groups = match.re.groupindex
        tokens: dict[str, Any] = {}
        try:
            for name, token_type in template.tokens.items():
                tokens[name] = token_type.normalize(match.group(name) if name in groups else None)
        except SyntaxError:  # a token its template's edits reject (an unknown Texas code)
            return None
        severable = {k for k, t in template.tokens.items() if t.severable}
        section = {k: v for k, v in tokens.items() if k not in severable}
        values = tuple(str(v) for v in section.values() if v is not None)
        name = template.name_builder(section) if template.name_builder else None
        try:
            url = template.URL_builder(section) if template.URL_builder else None
        except Exception:  # a URL citeurl cannot build: no page, not a failure
            url = None
        raw = match.group(0)
        written, offset = _section_span(raw)
        lo, hi = match.start() + offset, match.start() + offset + len(written)
        code = tuple(
            str(tokens[k]) for k in section
            if tokens[k] is not None and k in groups and match.group(k) is not None
            and not lo <= match.start(k) < hi
        )  # fmt: skip
        return CitationMention(
            raw, match.start(), match.end(), _kind(template.name), self._jurisdiction(template.name), name,
            (template.name, *values), url.replace(" ", "%20") if url else None, (template.name, *code), written,
        )  # fmt: skip

    def _jurisdiction(self, name: str) -> str | None:
        return "US" if name in self._federal else self._state.get(name)

    def exact(self, text: str) -> list[tuple[re.Match[str], Any]]:
        """Every template reading the whole of ``text`` as one citation, with its match."""
        out = []
        names = {n for _, selected in _scanner().scan(text, 4 * MAX_PLACES).statutes for n in selected}
        for name in sorted(names):
            template = self.template(name)
            for regex in template.regexes if template is not None else ():
                match = regex.fullmatch(text)
                if match is not None:
                    out.append((match, template))
        return out

    def continued(
        self, base: CitationMention, section: str | None, text: str, start: int, end: int
    ) -> CitationMention | None:
        """The short cite ``text[start:end]`` as a citation of ``base``'s code (at ``section``, or at
        ``base``'s own section), or None when the code's template does not read that section."""
        if base.kind == "case" or section is None:
            return replace(base, raw=text[start:end], start=start, end=end)
        template = self.template(base.key[0]) if base.key else None
        if template is None or not base.section:
            return None
        # The base as written with the new section (a reversed form keeps its code name after it); a
        # base that is itself a list member or a range's end ("92.109") is written from its normal form.
        head, _, tail = base.raw.rpartition(base.section)
        tail = "" if not tail.strip() or _PIN.fullmatch(tail) else tail
        written = [f"{head}{section}{tail}"]
        if base.normalized:
            number, at = _section_span(base.normalized)
            written.append(f"{base.normalized[:at]}{section}{base.normalized[at + len(number) :]}")
        for candidate in written:
            mention = self._whole(template, candidate)
            if mention is not None:
                return replace(mention, raw=text[start:end], start=start, end=end, code=base.code)
        return None

    def _whole(self, template: Any, written: str) -> CitationMention | None:
        """The citation ``template`` reads in the whole of ``written`` (its first regex that does), or None.

        Remembered (up to :data:`_WHOLE_READINGS` of them): a function of the template and the text, so
        a short cite continuing the same section in another answer ("Id. § 554.610" in every condition)
        is read once, as :func:`_sentence` reads a repeated sentence once."""
        key = (template.name, written)
        if key in self._readings:
            return self._readings[key]
        found = None
        for regex in template.regexes:
            match = regex.fullmatch(written)
            found = self.mention(match, template) if match is not None else None
            if found is not None:
                break
        if len(self._readings) >= _WHOLE_READINGS:
            self._readings.clear()
        self._readings[key] = found
        return found


def _literals(data: Any, literal: bool = False) -> Iterable[str]:
    """The literal strings of templates' data: lookup values, names, abbreviations, name-builder parts."""
    if isinstance(data, dict):
        for key, value in data.items():  # (a lookup's keys are regexes: only its values are read)
            yield from _literals(value, literal or key in ("lookup", "abbreviation", "name", "parts"))
    elif isinstance(data, list):
        for value in data:
            yield from _literals(value, literal)
    elif literal and isinstance(data, str):
        yield data


def _first_keys(text: str, loader: Any) -> tuple[dict[str, Any], list[str]]:
    """A YAML file's mapping keeping the first of equal top-level keys, and the keys dropped."""
    import yaml

    reader = loader(text)
    try:
        root = reader.get_single_node()
        dropped = []
        if isinstance(root, yaml.MappingNode):
            seen: set[Any] = set()
            pairs = []
            for key, value in root.value:
                if isinstance(key, yaml.ScalarNode) and key.value in seen:
                    dropped.append(key.value)
                    continue
                seen.add(key.value)
                pairs.append((key, value))
            root.value = pairs
        data = reader.construct_document(root) if root is not None else {}
    finally:
        reader.dispose()
    return dict(data), dropped


def _checked(template: Any) -> Any:
    """``template``, once it holds a regex and each regex reads a section token of its own."""
    tokens = [k for k, t in template.tokens.items() if not t.severable]
    if not template.regexes or not tokens:
        raise ValueError("a template without a pattern or a section token")
    for regex in template.regexes:
        if not set(tokens) & set(regex.groupindex):
            raise ValueError(f"a pattern that reads no token: {regex.pattern[:80]}")
    return template


def _section_span(raw: str) -> tuple[str, int]:
    """The section as written in a citation (before a pin subsection; in a reversed form, "Section
    92.056 of the Texas Property Code", the number after the signal), and where it starts in ``raw``."""
    bare = re.sub(r"(\s*(?:sub\w*\.?\s*)?(\((?:[A-Za-z]{1,5}|\d{1,3})\))+)$", "", raw)
    match = re.search(r"\d[\w.\-‑–]*$", bare) or re.search(r"\d[\w.\-‑–]*\w|\d", bare)
    return (match.group(0), match.start()) if match else (raw, 0)


def _kind(template_name: str) -> str:
    """``rule`` for court rules, ``regulation`` for regulations and registers, else ``statute``."""
    if re.search(r"Regulations|Register|Admin", template_name):
        return "regulation"
    return "rule" if re.search(r"\bRules\b", template_name) else "statute"


def _template_state(name: str) -> str | None:
    """The state a template's name names (``Virgin Islands Code``: VI), longest name first."""
    from grounding_eval.states import ALL_NAMES

    for state, code in ALL_NAMES:
        if name.startswith(state) or f" {state}" in name:
            return code
    return None


@cache
def _library() -> _Library:
    return _Library()


@cache
def _scanner() -> Scanner:
    """The pre-scan's automata, from the libraries' data (cached on disk, see :mod:`.citation_scan`)."""
    return Scanner(library_data(lambda: _library().all_factors()))


def _cases(
    text: str, lo: int, hi: int, places: list[tuple[int, tuple[int, ...]]], statutes: list[CitationMention]
) -> list[CitationMention]:
    """The case, law and journal citations eyecite reads in the sentence ``text[lo:hi]``; a law citation
    a template already read is left to it (citeurl's reading has the pack's normalized form).

    eyecite runs only when one of the extractors the places select matches in the sentence (their own
    regexes, from the cached data): a full citation is always one such match, so a sentence where none
    matches ("34 U.S.C. § 12491": the ``U.S.`` reporter needs a page after it) is spared eyecite's
    import and time, and a law match a template already read is not one.
    """
    scanner = _scanner()
    sentence = text[lo:hi]
    if not _eyecite_needed(scanner, sentence, lo, places, statutes):
        return []
    try:
        from grounding_eval._vendor.eyecite import get_citations

        cites: list[Any] = get_citations(sentence, tokenizer=_tokenizer())  # (no annotations in eyecite)
    except Exception as error:  # eyecite fails on this sentence: its places are listed, not read
        at = places[0][0]
        return [_unread(text, at, min(hi, at + 40), error)]
    out: list[CitationMention] = []
    for cite in cites:
        try:
            mention = _eyecite_mention(cite, sentence)
        except Exception as error:
            start, end = cite.span()
            mention = _unread(sentence, start, end, error)
        if mention is None:
            continue
        mention = replace(mention, start=mention.start + lo, end=mention.end + lo)
        if mention.kind != "case" and any(m.start < mention.end and mention.start < m.end for m in statutes):
            continue
        out.append(mention)
    return out


def _eyecite_needed(
    scanner: Scanner,
    sentence: str,
    lo: int,
    places: list[tuple[int, tuple[int, ...]]],
    statutes: list[CitationMention],
) -> bool:
    """Whether an extractor selected by ``places`` matches in the sentence: a case or journal match, or
    a law match no template's citation overlaps."""
    selected = {index for _, indexes in places for index in indexes}
    for index in sorted(selected):
        kind, pattern = scanner.data.extractors[index]
        for match in _compiled(pattern).finditer(sentence):
            if kind != "law":
                return True
            start, end = match.span(1) if match.re.groups else match.span()
            if not any(m.start < lo + end and lo + start < m.end for m in statutes):
                return True
    return False


@cache
def _tokenizer() -> Any:
    """eyecite's own tokenizer, selecting the extractors to run exactly as its default one does (the
    extractors whose strings occur in the text without white space, and those without strings), but
    gathering them by identity: eyecite's set hashes each extractor through its ``repr``, half of a
    sentence's reading time."""
    from grounding_eval._vendor.eyecite.tokenizers import Tokenizer, _strip_ws, default_tokenizer

    class _Selecting(Tokenizer):
        def get_extractors(self, text: str) -> list[Any]:
            stripped = _strip_ws(text)
            found: dict[int, Any] = {id(e): e for e in default_tokenizer.unfiltered_extractors}
            groups = {
                id(group): group
                for automaton, haystack in (
                    (default_tokenizer.case_sensitive_filter, stripped),
                    (default_tokenizer.case_insensitive_filter, stripped.lower()),
                )
                for _, group in automaton.iter(haystack)
            }
            for group in groups.values():
                for extractor in group:
                    found[id(extractor)] = extractor
            return list(found.values())

    return _Selecting(extractors=[])


def _eyecite_mention(found: Any, sentence: str) -> CitationMention | None:
    """One of eyecite's full citations as a citation of the pack (None: not a full citation)."""
    from grounding_eval._vendor.eyecite.models import FullCaseCitation, FullJournalCitation, FullLawCitation

    cite: Any = found  # (eyecite's methods carry no annotations)
    if not isinstance(found, (FullCaseCitation, FullLawCitation, FullJournalCitation)):
        return None
    start, end = cite.span()
    groups = cite.groups
    normalized = str(cite.corrected_citation())
    raw = sentence[start:end]
    if isinstance(found, FullCaseCitation):
        key = ("case", str(cite.corrected_reporter()), str(groups.get("volume")), str(groups.get("page")))
        where = _case_jurisdiction(cite, sentence, end)
        reporter = cite.all_editions[0].reporter if cite.all_editions else None
        also = (
            _reporter_states(reporter.short_name)[1:]
            if reporter is not None and reporter.cite_type == "neutral" and where is not None
            else ()
        )
        return CitationMention(raw, start, end, "case", where, normalized, key, also=also)
    reporter = cite.all_editions[0].reporter if cite.all_editions else None
    short_name = reporter.short_name if reporter is not None else str(groups.get("reporter"))
    if isinstance(found, FullJournalCitation):
        key = ("journal", short_name, str(groups.get("volume")), str(groups.get("page")))
        return CitationMention(raw, start, end, "journal", None, normalized, key)
    kind = "regulation" if reporter is not None and reporter.cite_type.startswith("admin") else "statute"
    parts = tuple(str(v) for k, v in groups.items() if k != "reporter" and v is not None)
    return CitationMention(
        raw, start, end, kind, _law_jurisdiction(short_name), normalized, ("law", short_name, *parts)
    )


@lru_cache(maxsize=2048)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@lru_cache(maxsize=512)
def _law_jurisdiction(short_name: str) -> str | None:
    import reporters_db

    from grounding_eval.states import state_of_name

    for entry in reporters_db.LAWS.get(short_name, ()):
        where = str(entry.get("jurisdiction"))
        return "US" if where == "United States" else state_of_name(where)
    return None


# The parenthetical after a case citation (past a pin page): "(Tex. App.—Dallas 2003, no pet.)".
_PAREN = re.compile(r"(?:,\s?\d[\d\-–, ]{0,20})?\s?\((?P<court>[^()\d]{1,60}?)[\s—–,]*(?:\d{4}|[—–])")


def _case_jurisdiction(cite: Any, text: str, end: int) -> str | None:
    """US for a federal court or reporter; a state for a state court, or a state's own reporter.

    The court is eyecite's, or read from the parenthetical after the citation up to its year or a dash
    (eyecite reads no court in "(Tex. App.—Dallas 2003, no pet.)"). A state reporter is the state its
    reporters-db entry names first (``Or.`` also lists Oklahoma, ``Ohio St.`` an Oklahoma court too).

    A state's own reporter outweighs a court of another state: eyecite reads the court "(V.I. 2003)" as
    the Virginia Beach circuit court and "(P.R. 1990)" as Prince William's, so "45 V.I. 123 (V.I. 2003)"
    would be Virginia law; the Virgin Islands Reports print no Virginia case.
    """
    reporter = cite.all_editions[0].reporter if cite.all_editions else None
    own = (
        _reporter_states(reporter.short_name)
        if reporter and reporter.cite_type in ("state", "neutral")
        else ()
    )
    court = getattr(cite.metadata, "court", None)
    if not court:
        paren = _PAREN.match(text, end)
        if paren:
            from grounding_eval._vendor.eyecite.helpers import get_court_by_paren

            court = get_court_by_paren(paren.group("court").strip())
    if court:
        where = _court_state(str(court))
        if where is not None and (where == "US" or not own or where in own):
            return where
    if reporter is None:
        return None
    if reporter.cite_type == "federal":
        return "US"
    if reporter.cite_type in ("state", "neutral"):  # (a state's own reporter, or its public-domain form)
        return _reporter_state(reporter.short_name)
    return None


@lru_cache(maxsize=512)
def _court_state(court_id: str) -> str | None:
    from courts_db import courts

    from grounding_eval.states import state_of_name

    for court in courts:
        if court.get("id") == court_id:
            if court.get("system") == "federal":
                return "US"
            return state_of_name(str(court.get("location")))
    return None


def _reporter_state(short_name: str) -> str | None:
    states = _reporter_states(short_name)
    return states[0] if states else None


@lru_cache(maxsize=512)
def _reporter_states(short_name: str) -> tuple[str, ...]:
    """The states a reporter's reporters-db entries name, in order, each once."""
    import reporters_db

    states: dict[str, None] = {}
    for entry in reporters_db.REPORTERS.get(short_name, ()):
        for place in entry.get("mlz_jurisdiction") or ():
            match = re.match(r"us:([a-z]{2});", place)
            if match:
                states[match.group(1).upper()] = None
    return tuple(states)


# -- the citation index -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CitationIndex:
    """A dataset's ``citations.yaml``: the sections it lists, and the codes it lists completely."""

    path: str
    keys: frozenset[tuple[str, ...]]
    covers: tuple[Cover, ...]
    entries: int = 0

    def covering(self, key: tuple[str, ...]) -> str | None:
        """The ``covers`` entry (as written) that declares it lists ``key``'s code, or None."""
        for cover in self.covers:
            if cover.holds(key):
                return cover.written
        return None


@dataclass(frozen=True)
class Cover:
    """A `covers` entry: a code, title or chapter (a key prefix), or a section range of one.

    A range's order is its code's numbering. Each part is read as whole numbers (``9-209`` after
    ``9-21``), except the part after a chapter's dot (the template's token after ``{chapter}\\.``: Texas,
    Ohio, Oregon, Michigan, Washington…), which some codes number as decimals (Texas ``92.0081`` lies
    between ``92.008`` and ``92.009``; Ohio's ``5321.031`` would follow ``5321.03``) and others as whole
    numbers (Michigan: ``456.10`` is the tenth section of its act, after ``456.9``). The template cannot
    say which, so the numbers written do: a leading zero after the dot (``92.051``, ``5321.01``) exists
    only in decimal numbering, and then the range is read as decimals; otherwise a section is inside
    only when it is inside in both readings — a range never holds, and so never fails, a section that
    lies outside it in its code's own numbering.
    """

    written: str
    prefix: tuple[str, ...]  # the key's leading parts: template and the tokens above the section
    low: tuple[str, ...] | None = None  # a section range "§§ 554.601–554.616": its ends, inclusive
    high: tuple[str, ...] | None = None

    def holds(self, key: tuple[str, ...]) -> bool:
        if key[: len(self.prefix)] != self.prefix:
            return False
        if self.low is None or self.high is None:
            return True
        return self._inside(key[len(self.prefix) :])

    def _inside(self, rest: tuple[str, ...]) -> bool:
        low, high = self.low or (), self.high or ()
        offset = len(self.prefix) - 1  # the key's parts after the template's name, from the prefix's end
        decimal = frozenset(p - offset for p in _after_dot(self.prefix[0]) if p >= offset)
        whole = _order(low) <= _order(rest) <= _order(high)
        if not decimal:
            return whole
        as_decimals = _order(low, decimal) <= _order(rest, decimal) <= _order(high, decimal)
        leading_zero = any(
            n in decimal and len(part) > 1 and part[0] == "0" for parts in (low, high, rest)
            for n, part in enumerate(parts)
        )  # fmt: skip
        return as_decimals if leading_zero else whole and as_decimals

    def order(self, key: tuple[str, ...]) -> tuple[Any, ...]:
        """The sort key of a section this range holds (decimal where the range reads decimals)."""
        offset = len(self.prefix) - 1
        decimal = frozenset(p - offset for p in _after_dot(self.prefix[0]) if p >= offset)
        return _order(key[len(self.prefix) :], decimal)


_Piece = tuple[int, str] | tuple[str, str, str]


def _order(parts: tuple[str, ...], decimal: frozenset[int] = frozenset()) -> tuple[tuple[_Piece, ...], ...]:
    """A section's parts in numeric order: 554.616 after 554.61, 9-209 after 9-21; the parts at the
    positions in ``decimal`` compared as decimal fractions (``0081`` before ``051``)."""
    out = []
    for n, part in enumerate(parts):
        pieces: list[_Piece] = []
        for k, piece in enumerate(re.split(r"[.\-‑–/]", part)):
            digits = re.match(r"\d+", piece)
            number, rest = (digits.group(0), piece[digits.end() :]) if digits else ("", piece)
            if n in decimal and k == 0:
                pieces.append(("d", number.rstrip("0"), rest))
            else:
                pieces.append((int(number), rest) if number else (-1, rest))
        out.append(tuple(pieces))
    return tuple(out)


@lru_cache(maxsize=256)
def _after_dot(template_name: str) -> frozenset[int]:
    """The positions in a key (after the template's name) of the tokens its template writes right after
    a chapter's dot (``{chapter}\\.{section}``): ``{1}`` for Michigan's ``("554", "601")``."""
    try:
        template = _library().template(template_name)
    except KeyError:  # not a template the pack loads (an index cached by an older version)
        return frozenset()
    if template is None:  # a template that failed its checks when built: no section reads after a dot
        return frozenset()
    names = [k for k, t in template.tokens.items() if not t.severable]
    after = {k for regex in template.regexes for k in re.findall(r"\\\.\(\?P<(\w+)>", regex.pattern)}
    return frozenset(n for n, k in enumerate(names) if k in after)


# Sections appended to a cover ("765 ILCS", "Tex. Prop. Code") to read it as a citation of its code.
_COVER_SUFFIXES = (" 1/1", " § 1.1", "/1", ".1", " § 1", " 1", " § 1-1-1", "-1", "-1-1", " § 1.1.1")
# "ch. 92", "chapter 90", "Chapter 5321", "chs. 90": the word before a chapter's number in a cover.
_CHAPTER_WORD = re.compile(r",?\s*\b(?:[Cc]hapters?|CHAPTERS?|[Cc]haps?\.|[Cc]hs?\.)\s*(?=\d)")


def load_citation_index(path: str | Path, *, inside: Path | None = None) -> CitationIndex:
    """Read a citation index (``citations.yaml``, described by ``datasets/schemas/citations.schema.json``).

    Every entry must read as a citation: an entry no template reads is an error naming it, so a typo
    never silently lists nothing; an entry a library fails on is an error naming it too, never another
    exception.

    Raises:
        DataError: the file cannot be read, is not the documented shape, or holds an entry that is not
            a citation.
    """
    from grounding_eval.files import read_yaml

    data = read_yaml(Path(path), inside=inside)
    if not isinstance(data, dict):
        raise DataError(path, "a citation index is a mapping with 'citations' and optional 'covers'")
    unknown = set(data) - {"covers", "citations"}
    if unknown:
        raise DataError(
            path, f"unknown key(s) {', '.join(sorted(map(str, unknown)))}; expected covers, citations"
        )
    covers = data.get("covers") or []
    citations = data.get("citations") or []
    if not isinstance(covers, list) or not isinstance(citations, list):
        raise DataError(path, "'covers' and 'citations' must be lists")
    keys = set()
    for n, entry in enumerate(citations):
        written = entry.get("citation") if isinstance(entry, dict) else entry
        if not isinstance(written, str) or not written.strip():
            raise DataError(path, f"citations[{n}]: a citation is a string or a mapping with 'citation'")
        sections = _guarded(path, f"citations[{n}]", written, _read_section)
        if not sections:
            raise DataError(path, f"citations[{n}]: {written[:80]!r} does not read as a citation")
        keys |= {m.key for m in sections if m.key}
    parsed = []
    for n, written in enumerate(covers):
        if not isinstance(written, str) or not written.strip():
            raise DataError(path, f"covers[{n}]: a cover is a code or chapter written as a citation")
        cover = _guarded(path, f"covers[{n}]", written, lambda w: _read_cover(w.strip()))
        if isinstance(cover, str):
            raise DataError(path, f"covers[{n}]: {written[:80]!r} {cover}")
        parsed.append(cover)
    return CitationIndex(str(path), frozenset(keys), tuple(parsed), len(citations))


def _guarded(path: str | Path, where: str, written: str, read: Callable[[str], _T]) -> _T:
    """``read(written)``, any exception a library raises on it made one DataError line naming it."""
    try:
        return read(written)
    except DataError:
        raise
    except Exception as exc:  # a citeurl template failing on this entry (IndexError, re.error, …)
        why = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise DataError(path, f"{where}: {written[:80]!r} cannot be read as a citation ({why})") from None


def _read_section(written: str) -> list[CitationMention]:
    """The sections ``written`` cites; a range ``§§ A–B`` gives its first section only."""
    return [m for m in find_citations(written).mentions if m.key]


_RANGE = re.compile(r"^(?P<head>.*?)(?P<low>\d[\w.\-]*)\s*(?:–|‑|-{1,2}|to|through)\s*(?P<high>\d[\w.\-]*)$")


def _read_cover(written: str) -> Cover | str:
    """The cover ``written`` declares, or why it is none (to follow its text in a DataError)."""
    ranged = _RANGE.match(written.replace("§§", "§"))
    if ranged and (ranged.group("head").strip().endswith("§") or " " in ranged.group("head")):
        low = _read_section(ranged.group("head") + ranged.group("low"))
        high = _read_section(ranged.group("head") + ranged.group("high"))
        # (A range's ends are sections of one citeurl template, whose section grammar orders them: a
        # law eyecite reads by name, as "W. Va. Code § 37" of the chapter "§ 37-6", has none.)
        if (
            low and high and low[0].key and high[0].key and low[0].key[:-1] == high[0].key[:-1]
            and low[0].key[0] != "law"
        ):  # fmt: skip
            prefix = low[0].key[:-1]
            return Cover(written, prefix, low[0].key[len(prefix) :], high[0].key[len(prefix) :])
    # A chapter word ("ORS chapter 90", "Tex. Prop. Code ch. 92") names the chapter the code's own
    # sections begin with: read without the word, its number must be the template's chapter token.
    word = _CHAPTER_WORD.search(written)
    plain = written if word is None else f"{written[: word.start()]} {written[word.end() :]}"
    number_at = None if word is None else word.start() + 1
    library = _library()
    for suffix in _COVER_SUFFIXES:
        for match, template in library.exact(plain + suffix):
            mention = library.mention(match, template)
            if mention is None or mention.key is None:
                continue
            # The cover is the template and the tokens written before the appended section; a token
            # the appended section runs into ("45" of "42 U.S.C. 45.1") is no cover.
            severable = {k for k, t in template.tokens.items() if t.severable}
            written_tokens = [
                k for k in template.tokens
                if k not in severable and match.group(k) is not None and match.start(k) < len(plain)
            ]  # fmt: skip
            if any(match.end(k) > len(plain) for k in written_tokens):
                continue
            if number_at is not None and not any(
                match.start(k) == number_at and k == "chapter" for k in written_tokens
            ):
                continue
            return Cover(written, mention.key[: 1 + len(written_tokens)])
    if word is not None:
        return (
            "names a chapter its code does not write in its sections' citations (a U.S. Code section does "
            "not carry its chapter): write the chapter's section range, e.g. '42 U.S.C. §§ 3601–3631'"
        )
    return "does not read as a code, chapter or range"


def cover_gaps(index: CitationIndex, articles: Iterable[str] = ()) -> list[str]:
    """Advice to the index's author, one line per cover that may not be complete as listed (each
    unlisted section it holds is a citation the check calls UNKNOWN): ``data validate`` warns, never
    refuses.

    * A cover listing fewer than two of its sections.
    * Unlisted sections between two listed neighbours (they differ only in their last number, written
      with as many digits): the numbers between them.
    * Sections the dataset's ``articles`` cite, held by the cover and not listed.
    * Sections a code inserts between listed ones: in a code numbered as decimals after the chapter's
      dot (Texas: 92.0081 between 92.008 and 92.009) a range is never complete by whole numbers; in one
      numbered by whole numbers there (Michigan), a lettered section (554.601a) can stand between any
      two, so a cover listing none is advised unless the articles show which sections exist.
    """
    cited: set[tuple[str, ...]] = set()
    for text in articles:
        cited |= _reference_keys(text)
    out = []
    for cover in index.covers:
        listed = sorted((k for k in index.keys if cover.holds(k)), key=cover.order)
        said = []
        if len(listed) < 2:
            kind = "a range" if cover.low is not None else "a chapter" if len(cover.prefix) > 2 else "a code"
            said.append(f"covers {kind} but lists {len(listed)} of its sections")
        missing: list[tuple[str, ...]] = []
        for a, b in pairwise(listed):
            missing += _between(a, b)
        if missing:
            said.append(f"holds {len(missing)} unlisted section(s) between listed ones ({_names(missing)})")
        unlisted = sorted((k for k in cited if cover.holds(k) and k not in index.keys), key=cover.order)
        if unlisted:
            said.append(f"does not list {_names(unlisted)}, cited in the dataset's articles")
        inserted = _inserted(cover, listed, index.keys, any(cover.holds(k) for k in cited))
        if inserted:
            said.append(inserted)
        if said:
            out.append(
                f"{index.path}: covers {cover.written!r} {'; '.join(said)}: a citation of an unlisted section "
                "it holds is UNKNOWN; list every section it holds, or narrow it"
            )
    return out


def _names(keys: Sequence[tuple[str, ...]]) -> str:
    return ", ".join(_section_name(k) for k in keys[:3]) + (", …" if len(keys) > 3 else "")


def _inserted(
    cover: Cover, listed: Sequence[tuple[str, ...]], keys: frozenset[tuple[str, ...]], evidence: bool
) -> str:
    """The advice on sections inserted between ``listed`` ones, or "" (see :func:`cover_gaps`)."""
    if len(listed) < 2 or len(listed[0]) - 2 not in _after_dot(listed[0][0]):
        return ""
    lasts = [k[-1] for k in listed] + [p[-1] for p in (cover.low, cover.high) if p]
    if any(len(last) > 1 and last[0] == "0" for last in lasts):  # (decimal numbering: see Cover)
        for a, b in pairwise(listed):
            candidate = (*a[:-1], f"{a[-1]}1")
            if candidate not in keys and a[:-1] == b[:-1]:
                return (
                    f"numbers its sections as decimals, so a section inserted between listed ones (such as "
                    f"{_section_name(candidate)}) may exist unlisted"
                )
        return ""
    if evidence or any(not last.isdigit() for last in lasts):
        return ""
    example = (*listed[0][:-1], f"{listed[0][-1]}a")
    return (
        f"lists no lettered section, and its code inserts them between whole numbers (such as "
        f"{_section_name(example)})"
    )


def _between(a: tuple[str, ...], b: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The keys between neighbours ``a`` and ``b`` (at most 1,000), or none when they are not neighbours."""
    if len(a) != len(b) or a[:-1] != b[:-1]:
        return []
    match_a, match_b = re.fullmatch(r"(.*?)(\d+)", a[-1]), re.fullmatch(r"(.*?)(\d+)", b[-1])
    if match_a is None or match_b is None or match_a.group(1) != match_b.group(1):
        return []
    low, high = match_a.group(2), match_b.group(2)
    if len(low) != len(high) or int(high) - int(low) < 2:
        return []
    width = len(low)
    return [
        (*a[:-1], f"{match_a.group(1)}{n:0{width}d}")
        for n in range(int(low) + 1, min(int(high), int(low) + 1001))
    ]


def _section_name(key: tuple[str, ...]) -> str:
    """A key as its template names it ("Tex. Prop. Code § 92.053"), else its parts."""
    try:
        template = _library().template(key[0])
        if template is None:
            return " ".join(key[1:])
        names = [k for k, t in template.tokens.items() if not t.severable]
        if template.name_builder is not None and len(names) == len(key) - 1:
            return str(template.name_builder(dict(zip(names, key[1:], strict=True))))
    except Exception:  # a template that cannot name it: the parts say as much
        pass
    return " ".join(key[1:])


# -- the check ----------------------------------------------------------------------------------------

Lookup = Callable[[CitationMention], tuple[CitationStatus, str] | None]
"""A look-up of one citation's official page (live, or recorded in the snapshot): its status and why,
or None (not asked)."""


def check_citations(
    mentions: Sequence[CitationMention],
    user_state: str | None,
    index: CitationIndex | None,
    reference: Iterable[str],
    live: Lookup | None = None,
) -> list[CitationFinding]:
    """Give each citation its status (see the module docstring); ``reference`` are the item's texts.

    Never raises for a citation: any exception deciding one (a library's, a look-up's) makes that one
    UNCHECKED with the reason; a reference text that cannot be read makes what it could have placed IN
    SOURCES UNCHECKED instead of UNKNOWN.

    Budget: one extraction per distinct reference text (remembered), and only when a citation names a
    section to look for there; then a set look-up per citation.
    """
    user_state = user_state.strip().upper() if user_state else None  # ("il" is IL, never another state)
    in_sources: set[tuple[str, ...]] = set()
    unread = ""
    if any(m.key is not None for m in mentions):  # (an answer without citations reads no reference)
        for text in reference:
            try:
                in_sources |= _reference_keys(text)
            except Exception as exc:  # a library failing on the reference: said on what it could change
                unread = f"the item's reference text could not be read ({_failure(exc)})"
    out = []
    for m in mentions:
        try:
            out.append(_status(m, user_state, index, in_sources, live, unread))
        except Exception as exc:  # never an error row: this citation is not checked, and says why
            out.append(CitationFinding(m, CitationStatus.UNCHECKED, f"not checked: {_failure(exc)}"))
    return out


def _failure(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:200]


def _status(
    m: CitationMention,
    user_state: str | None,
    index: CitationIndex | None,
    in_sources: set[tuple[str, ...]],
    live: Lookup | None,
    unread: str = "",
) -> CitationFinding:
    if m.error is not None:
        return CitationFinding(m, CitationStatus.UNCHECKED, f"could not be read ({m.error})")
    if m.key is None:
        return CitationFinding(m, CitationStatus.UNCHECKED, "a short cite whose code is ambiguous")
    if user_state and m.jurisdiction not in (None, "US", user_state) and user_state not in m.also:
        why = f"{m.jurisdiction} law, and the user is in {user_state}"
        if m.contrast:  # still a leak: shown, so a reviewer can overrule it
            why += f"; labelled as a comparison ('{m.contrast}'); still another state's law"
        return _unless_inferred(m, CitationStatus.WRONG_JURISDICTION, why)
    if m.key in in_sources:
        return CitationFinding(m, CitationStatus.IN_SOURCES, "cited in the item's reference text")
    if index is not None and m.key in index.keys:
        return CitationFinding(m, CitationStatus.KNOWN, "in the citation index")
    covering = index.covering(m.key) if index is not None else None
    if covering is not None:
        why = f"not in the citation index, which lists {covering} completely"
        if unread:
            return CitationFinding(m, CitationStatus.UNCHECKED, f"{why}, but {unread}")
        return _unless_inferred(m, CitationStatus.UNKNOWN, why)
    if live is not None:
        asked = live(m)
        if asked is not None:
            return _unless_inferred(m, *asked)
    return CitationFinding(m, CitationStatus.UNCHECKED, "no citation index covers it")


def _unless_inferred(m: CitationMention, status: CitationStatus, why: str) -> CitationFinding:
    """A hard failure (UNKNOWN, WRONG_JURISDICTION) of a short cite read by inference is UNCHECKED."""
    if m.inferred and status in (CitationStatus.UNKNOWN, CitationStatus.WRONG_JURISDICTION):
        read = m.normalized or m.raw
        return CitationFinding(
            m,
            CitationStatus.UNCHECKED,
            f"read as {read} by inference; not a hard failure ({status.value}: {why})",
        )
    return CitationFinding(m, status, why)


@lru_cache(maxsize=64)
def _reference_keys(text: str) -> frozenset[tuple[str, ...]]:
    return frozenset(m.key for m in find_citations(text).mentions if m.key)
