"""Where a legal citation can be in a text, derived from the citation libraries' own data, and the
sentences the libraries then read.

The pre-scan must never miss what eyecite or citeurl would find (issue 38), so it is built from them:

* **Statutes, regulations, rules** (citeurl's templates and ours): each template's compiled regexes are
  read (Python's own regex parser) for the literal strings one of which every match must contain — the
  template's *factors* (``U.S. Code``: ``U.S.C.``, ``USC``, ``U. S. C.``, …; Michigan's: ``MCL``,
  ``Mich``, …). A template is run only in a sentence holding one of its factors.
* **Cases, laws and journals** (eyecite): eyecite's own prefilter strings (its tokenizer runs an
  extractor only where one of them occurs in the text with white space removed), kept where a digit or a
  blank page (``_``) is near (every eyecite citation has a volume, page or section number beside its
  reporter), and the factors of eyecite's few extractors that have no strings.
* **Short cites**: ``§``, ``Id.``, ``Ibid.``, ``Sec``/``sec``.

One Aho–Corasick pass (pyahocorasick, eyecite's own dependency) finds them all: a text with none is
done in one pass. The data (factors of every template, eyecite's strings, the abbreviations its reporters
and codes use) are built once from the installed libraries (building every template and importing eyecite
take about 2 s) and kept as JSON under the user's cache folder, keyed by the libraries' files and this
code and sealed with the user's secret (:mod:`grounding_eval.user_cache`): an entry that is not sealed
for its key or does not have its shape is rebuilt, never trusted.

**Sentences.** The libraries read whole sentences (:func:`units`), so a citation's reading never depends
on text outside its sentence. A sentence ends at ``.``/``!``/``?`` and white space, at a blank line or a
list item, except after an abbreviation (the splitter's own list, a single letter, or any abbreviation a
reporter, law or code name of the libraries uses: ``Prop.``, ``Supp.``, ``Civ.``) or before what
continues a citation and never starts a sentence (a number, ``(``, ``§``, ``&``, a lower-case word):
decided from the two words beside the full stop, so a sentence's ends are the same alone and among
others. A sentence is read whole up to :data:`MAX_UNIT` characters; a longer one (degenerate input) is
read in pieces of that size, cut after a list's separator or at white space.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import count, islice, pairwise
from pathlib import Path
from typing import Any

from grounding_eval.verifier.sentences import _END, _ends_with_abbreviation

__all__ = ["MAX_UNIT", "LibraryData", "Scan", "Scanner", "factors", "library_data", "needs_digit", "units"]

MAX_UNIT = 1000
"""Most characters of one sentence read at once; a longer sentence is read in pieces."""

_FORMAT = 3  # 3: sealed entries (grounding_eval.user_cache)
_CAP = 64  # most strings a factor set holds


# -- factors: literal strings every match of a regex contains --------------------------------------------


def factors(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Literal strings one of which every match of ``pattern`` contains, or None when no such set of
    non-empty strings (at most 64) can be read from it (a case-insensitive pattern, ``\\w+`` alone)."""
    parser: Any = importlib.import_module("re._parser")  # (Python's own parser of these patterns)

    if flags & re.IGNORECASE:
        return None
    tree = parser.parse(pattern, flags)
    if tree.state.flags & re.IGNORECASE:
        return None
    exact, best, _ = _sequence(list(tree))
    best = _better(exact, best)
    return frozenset(best) if best and "" not in best else None


# (every string the part matches, or None; its factors; the strings every match of it starts with, or None)
_Info = tuple[set[str] | None, set[str] | None, set[str] | None]


def _score(strings: set[str]) -> tuple[bool, int, int]:
    """Distinctive first (each string holds a capital, a digit or a sign: " of " is in every answer), then
    the shortest string's length, then fewer strings."""
    distinctive = bool(strings) and all(_DISTINCT.search(s) for s in strings)
    return (distinctive, min(map(len, strings)) if strings else 0, -len(strings))


_DISTINCT = re.compile(r"[A-Z0-9§&]")


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    if a is None or b is None:
        return b if a is None else a
    return a if _score(a) >= _score(b) else b


def _product(a: set[str], b: set[str]) -> set[str] | None:
    return {x + y for x in a for y in b} if len(a) * len(b) <= _CAP else None


def _sequence(items: list[Any]) -> _Info:
    """A sequence's strings, factors and prefixes. A run of parts with small languages is a factor set,
    and so is a run followed by the prefixes of the part that ends it (Python's parser factors common
    prefixes out of alternatives: ``Haw…|HI`` is ``H(?:aw…|I)``)."""
    exact: set[str] | None = {""}
    run: set[str] = {""}  # the strings of the latest run of parts with a small language
    prefix: set[str] | None = {""}  # the sequence's prefixes so far (None: no longer growing)
    growing = True
    best: set[str] | None = None
    for op, av in items:
        part, part_best, part_prefix = _node(op, av)
        best = _better(best, part_best)
        exact = _product(exact, part) if exact is not None and part is not None else None
        if growing and prefix is not None:
            extended = _product(prefix, part if part is not None else part_prefix or {""})
            growing = part is not None and extended is not None
            prefix = extended if extended is not None and (part is not None or part_prefix) else prefix
        joined = _product(run, part) if part is not None else None
        if joined is None:
            ahead = _product(run, part_prefix) if part is None and part_prefix else None
            best = _better(_better(best, run), ahead)
            run = set(part) if part is not None else {""}
        else:
            run = joined
    return exact, _better(best, run), exact if exact is not None else prefix


def _node(op: Any, av: Any) -> _Info:
    c: Any = importlib.import_module("re._constants")

    if op is c.LITERAL:
        return {chr(av)}, None, {chr(av)}
    if op is c.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is c.LITERAL:
                chars.add(chr(value))
            elif kind is c.RANGE and value[1] - value[0] < 8:
                chars |= {chr(n) for n in range(value[0], value[1] + 1)}
            else:
                return None, None, None
        return (chars, None, chars) if len(chars) <= 8 else (None, None, None)
    if op is c.SUBPATTERN:
        _, add_flags, _, inner = av
        return (None, None, None) if add_flags & re.IGNORECASE else _sequence(list(inner))
    if op is c.ATOMIC_GROUP:
        return _sequence(list(av))
    if op is c.BRANCH:
        alternatives = [_sequence(list(p)) for p in av[1]]
        exact: set[str] | None = set()
        best: set[str] | None = set()
        prefix: set[str] | None = set()
        for alt_exact, alt_best, alt_prefix in alternatives:
            exact = exact | alt_exact if exact is not None and alt_exact is not None else None
            pick = _better(alt_exact, alt_best)
            best = best | pick if best is not None and pick is not None else None
            prefix = prefix | alt_prefix if prefix is not None and alt_prefix is not None else None
        if prefix is not None and len(prefix) > _CAP:
            prefix = None
        return (exact if exact is not None and len(exact) <= _CAP else None), best, prefix
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        low, high, inner = av
        sub_exact, sub_best, sub_prefix = _sequence(list(inner))
        if low == 0:
            optional = {""} | sub_exact if high == 1 and sub_exact is not None else None
            return optional, None, optional
        if low == high and sub_exact is not None and len(sub_exact) ** low <= _CAP:
            out: set[str] | None = {""}
            for _ in range(low):
                out = _product(out, sub_exact) if out is not None else None
            return out, _better(sub_exact, sub_best), out if out is not None else sub_exact
        return None, _better(sub_exact, sub_best), sub_prefix
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return {""}, None, {""}
    return None, None, None


def needs_digit(pattern: str, flags: int = 0) -> bool:
    """Whether every match of ``pattern`` holds a digit (a section number: a sentence without a digit
    is not read with such a template)."""
    parser: Any = importlib.import_module("re._parser")
    return _digit_in(list(parser.parse(pattern, flags)))


def _digit_in(items: list[Any]) -> bool:
    c: Any = importlib.import_module("re._constants")
    for op, av in items:
        if op is c.LITERAL and chr(av).isdigit():
            return True
        if (
            op is c.IN
            and av
            and all(
                (kind is c.CATEGORY and value is c.CATEGORY_DIGIT)
                or (kind is c.LITERAL and chr(value) in "0123456789")
                or (kind is c.RANGE and 48 <= value[0] <= value[1] <= 57)
                for kind, value in av
            )
        ):
            return True
        if op is c.SUBPATTERN and _digit_in(list(av[3])):
            return True
        if op is c.ATOMIC_GROUP and _digit_in(list(av)):
            return True
        if op is c.BRANCH and all(_digit_in(list(p)) for p in av[1]):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1 and _digit_in(list(av[2])):
            return True
    return False


# -- the libraries' data, built once and cached --------------------------------------------------------


@dataclass(frozen=True)
class LibraryData:
    """What the pre-scan needs of the libraries: each template's factors, eyecite's strings (white space
    removed) with the kinds of extractor each selects, the factors of eyecite's extractors without
    strings, eyecite's law extractors (to tell whether a law citation is one citeurl already read), and
    the abbreviations their names use."""

    templates: dict[str, list[str]]
    digitless: list[str]  # the templates a match of which can hold no digit (constitutions' articles)
    rejected: dict[str, str]  # template -> why it is not loaded
    case_strings: dict[str, list[int]]  # string -> indexes into ``extractors``
    extractors: list[tuple[str, str]]  # (kind: case | law | journal, eyecite's regex: its flags are none)
    unfiltered: list[list[Any]]  # [index into extractors, its factors or None] of those without strings
    abbreviations: list[str]


def library_data(
    build_templates: Callable[[], tuple[dict[str, list[str]], list[str], dict[str, str], list[str]]],
) -> LibraryData:
    """The cached data, or built (with ``build_templates`` for the templates' part) and stored."""
    from grounding_eval.user_cache import cache_root, read_sealed, write_sealed

    key = _key()
    entry = cache_root() / f"citation-scan-{key[:40]}.json"
    try:
        stored = read_sealed(entry, "citation-scan", key)  # None: none, or not this user's processes'
        if stored is not None:
            return _data_from_json(stored)
    except Exception:
        pass  # an entry of another shape: build it
    templates, digitless, rejected, words = build_templates()
    data = _build_eyecite(templates, digitless, rejected, words)
    write_sealed(entry, "citation-scan", key, data.__dict__)
    return data


def _data_from_json(value: Any) -> LibraryData:
    data = LibraryData(**value)
    checks = (
        isinstance(data.templates, dict) and all(isinstance(v, list) and v for v in data.templates.values()),
        isinstance(data.case_strings, dict) and isinstance(data.extractors, list),
        isinstance(data.unfiltered, list) and isinstance(data.abbreviations, list),
        isinstance(data.digitless, list) and set(data.digitless) <= set(data.templates),
        all(
            isinstance(i, int) and 0 <= i < len(data.extractors)
            for v in data.case_strings.values()
            for i in v
        ),
        all(isinstance(u[0], int) and 0 <= u[0] < len(data.extractors) for u in data.unfiltered),
    )
    if not all(checks):
        raise ValueError("not the pre-scan's data")
    return data


def _build_eyecite(
    templates: dict[str, list[str]], digitless: list[str], rejected: dict[str, str], written: list[str]
) -> LibraryData:
    from grounding_eval._vendor.eyecite.tokenizers import EXTRACTORS, _strip_ws  # (eyecite import paid here)

    case_strings: dict[str, list[int]] = {}
    extractors: list[tuple[str, str]] = []
    unfiltered: list[list[Any]] = []
    words: set[str] = set(written)
    kinds = {"reporters": "case", "laws": "law", "journals": "journal"}
    for extractor in EXTRACTORS:
        editions = extractor.extra.get("exact_editions", []) + extractor.extra.get("variation_editions", [])
        if not editions or extractor.flags & re.IGNORECASE or extractor.extra.get("short"):
            continue  # Id., supra, stop words, paragraphs, short forms ("5 U.S. at 7"): no full citation
        kind = kinds.get(editions[0].reporter.source, "case")
        if not extractor.strings:
            found = factors(extractor.regex, extractor.flags)
            extractors.append((kind, extractor.regex))
            unfiltered.append([len(extractors) - 1, sorted(found) if found else None])
            continue
        extractors.append((kind, extractor.regex))
        for string in extractor.strings:
            case_strings.setdefault(_strip_ws(string), []).append(len(extractors) - 1)
            words |= {w for w in re.split(r"\s+|(?<=\.)(?=\w)", string) if re.fullmatch(r"[A-Z][\w'&]*\.", w)}
    for strings in templates.values():
        for string in strings:
            words |= {w for w in re.split(r"\s+|(?<=\.)(?=\w)", string) if re.fullmatch(r"[A-Z][\w'&]*\.", w)}
    return LibraryData(templates, digitless, rejected, case_strings, extractors, unfiltered, sorted(words))


def _key() -> str:
    """The installed libraries' files (path, size, time) and this code's sources."""
    from grounding_eval.built_cache import library_file

    here = Path(__file__).resolve().parent
    files = [here / "citation_scan.py", here / "citations.py", here / "citation_templates.yaml"]
    digest = hashlib.sha256(str(_FORMAT).encode())
    for file in files:
        digest.update(file.read_bytes() if file.exists() else b"missing")
    for package, name in (
        ("citeurl", "templates/state law.yaml"), ("citeurl", "templates/general federal law.yaml"),
        ("citeurl", "template.py"), ("grounding_eval._vendor.eyecite", "tokenizers.py"),
        ("grounding_eval._vendor.eyecite", "regexes.py"),
        ("reporters_db", "data/reporters.json"), ("reporters_db", "data/laws.json"),
        ("reporters_db", "data/journals.json"), ("reporters_db", "data/regexes.json"),
    ):  # fmt: skip
        path = library_file(package, name)
        try:
            stat = path.stat()
            digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"missing {path}".encode())
    return digest.hexdigest()


# -- the scan ------------------------------------------------------------------------------------------

_ID = re.compile(r"(?<!\w)[Ii](?:bi)?d\.")  # "Id.", "Ibid." (the short cites' own form)
_SEC = re.compile(r"(?<!\w)[Ss]ec(?:tions?|t?s?)(?:\.| ?\d)")  # "Sec. 3", "section 90.360" (not "security")
_NEAR = 10  # characters (white space removed) within which an eyecite citation's number lies
_AFTER = 80  # characters after a factor of an extractor without strings ("Cal. … Code § 1") to its number
_NUMBER = re.compile(r"[\d_]")
_WORD = re.compile(r"\S+")
_CASE_FLAG = 2
_COUNTED = 8  # past the places read, the strings found are counted up to this many times as many


@dataclass(frozen=True)
class Scan:
    """The places a citation can start near, in order: ``statutes`` as (start, the templates its factor
    selects), ``cases`` as (start, the eyecite extractors its string selects; none for a factor of an
    extractor without strings); ``short``: whether a short-cite signal occurs."""

    statutes: list[tuple[int, tuple[str, ...]]]
    cases: list[tuple[int, tuple[int, ...]]]  # (start, indexes into LibraryData.extractors)
    short: bool
    stop: int | None = None  # past ``limit`` places: where the places kept end (reading stops there)
    past: int = 0  # the library strings found after ``stop`` (counted up to 8 × ``limit``), not read

    @property
    def places(self) -> list[int]:
        return sorted({at for at, _ in self.statutes} | {at for at, _ in self.cases})


class Scanner:
    """The automata built from :class:`LibraryData`, once a process."""

    def __init__(self, data: LibraryData) -> None:
        import ahocorasick

        self.data = data
        entries: dict[str, tuple[set[str], int, set[int]]] = {}
        for name, strings in data.templates.items():
            for string in strings:
                entries.setdefault(string, (set(), 0, set()))[0].add(name)
        # eyecite's extractors without strings: their factors, or every number when one has none.
        self.every_number: tuple[int, ...] = ()
        for index, found in data.unfiltered:
            if not found:
                self.every_number += (index,)
            for string in found or ():
                names, flag, indexes = entries.get(string, (set(), 0, set()))
                entries[string] = (names, flag | _CASE_FLAG, indexes | {index})
        self.text_automaton = ahocorasick.Automaton()
        for string, (names, flag, indexes) in entries.items():
            value = (len(string), tuple(sorted(names)), flag, tuple(sorted(indexes)))
            self.text_automaton.add_word(string, value)
        self.text_automaton.make_automaton()
        self.case_automaton = ahocorasick.Automaton()
        for string, selected in data.case_strings.items():
            self.case_automaton.add_word(string, (len(string), tuple(selected)))
        self.case_automaton.make_automaton()
        self.abbreviations = frozenset(data.abbreviations)
        self.digitless = frozenset(data.digitless)

    def scan(self, text: str, limit: int) -> Scan:
        """One pass over ``text`` and one over it without white space (linear in the text); past
        ``limit`` strings found in a pass, the rest are only counted (``past``) and ``stop`` is where the
        places kept end."""
        statutes: list[tuple[int, tuple[str, ...]]] = []
        cases: list[tuple[int, tuple[int, ...]]] = []
        short = "§" in text or "&sect;" in text or _has_id(text) or _has_section_word(text)
        stops: list[int] = []
        found = self.text_automaton.iter(text)
        for end, (length, names, flag, indexes) in islice(found, limit):
            start = end - length + 1
            if names:
                statutes.append((start, names))
            if flag & _CASE_FLAG and _NUMBER.search(text, max(0, start - _NEAR), end + 1 + _AFTER):
                cases.append((start, indexes))
        for end, (length, _, _, _) in islice(found, 1):
            stops.append(end - length + 1)
        past = _count(islice(found, _COUNTED * limit)) + len(stops)
        if self.every_number:
            cases += [(m.start(), self.every_number) for m in islice(re.finditer(r"\d+", text), limit)]
        stripped = "".join(text.split())
        hits = []
        in_stripped = self.case_automaton.iter(stripped)
        for end, (length, indexes) in islice(in_stripped, limit):
            start = end - length + 1
            if _NUMBER.search(stripped, max(0, start - _NEAR), end + 1 + _NEAR):
                hits.append((start, end, indexes))
        for end, (length, _) in islice(in_stripped, 1):
            hits.append((end - length + 1, end, (-1,)))  # (where the places kept end, in the text)
        past += _count(islice(in_stripped, _COUNTED * limit))
        if hits:
            cases += _unstripped(text, hits)
            if cases and cases[-1][1] == (-1,):
                stops.append(cases.pop()[0])
                past += 1
        stop = min(stops) if stops else None
        statutes = sorted((s for s in statutes if stop is None or s[0] < stop), key=lambda s: s[0])
        cases = sorted((c for c in cases if stop is None or c[0] < stop), key=lambda c: c[0])
        return Scan(statutes, cases, short, stop, past)

    def kinds(self, indexes: Iterable[int]) -> set[str]:
        """The kinds (case, law, journal) of the eyecite extractors ``indexes``."""
        return {self.data.extractors[i][0] for i in indexes}


def _has_id(text: str) -> bool:
    """Whether "Id." or "Ibid." stands as a word (each "id."/"Id." found with str.find, then matched where
    it or its "Ibid." starts: "paid." is no short cite, and a pass of the pattern costs a whole scan)."""
    for literal in ("id.", "Id."):
        at = text.find(literal)
        while at >= 0:
            if _ID.match(text, at) or (at >= 2 and _ID.match(text, at - 2)):
                return True
            at = text.find(literal, at + 3)
    return False


def _has_section_word(text: str) -> bool:
    """Whether "Sec. 3", "section 90.360" or the like occurs (each "Sec"/"sec" found with str.find, then
    matched: a pass of the pattern itself costs as much as the rest of the scan)."""
    for literal in ("Sec", "sec"):
        at = text.find(literal)
        while at >= 0:
            if _SEC.match(text, at):
                return True
            at = text.find(literal, at + 3)
    return False


def _count(items: Iterator[Any]) -> int:
    """How many items are left (counted in C: a deque of the last (index, item) pair)."""
    last = deque(zip(count(1), items), maxlen=1)
    return last[0][0] if last else 0


def _unstripped(text: str, hits: list[tuple[int, int, tuple[int, ...]]]) -> list[tuple[int, tuple[int, ...]]]:
    """Each hit's position in ``text`` (hits give start and end in ``text`` without white space), kept
    where no letter is glued to it in ``text``, as eyecite's extractors require: "Mich" in "Michigan" is
    no reporter. A digit may be (a public-domain form's volume and number written without spaces,
    ``2021COA112``, ``22CO7``: eyecite's boundaries wrap the whole citation, not its reporter)."""
    where: dict[tuple[str, int], int] = {}
    if text.isprintable():  # (only " " is white space: a character's place is its own plus the spaces before)
        for name, order in (("start", sorted((h[0], n) for n, h in enumerate(hits))),
                            ("end", sorted((h[1], n) for n, h in enumerate(hits)))):  # fmt: skip
            at = kept = 0  # kept: characters of text[:at] that are not spaces
            for k, n in order:
                while kept <= k:  # (each step reads the spaces of the stretch it skips: linear in all)
                    step = k - kept + 1
                    kept += step - text.count(" ", at, at + step)
                    at += step
                where[(name, n)] = at - 1
    ends = sorted((end, n) for n, (_, end, _) in enumerate(hits))
    starts = sorted((start, n) for n, (start, _, _) in enumerate(hits))
    for name, order in (("start", starts), ("end", ends)) if not where else ():
        k = i = 0  # k: characters of text without white space before the word
        for word in _WORD.finditer(text):
            size = word.end() - word.start()
            while i < len(order) and order[i][0] < k + size:
                where[(name, order[i][1])] = word.start() + order[i][0] - k
                i += 1
            if i == len(order):
                break
            k += size
    out = []
    for n, (_, _, indexes) in enumerate(hits):
        start, end = where[("start", n)], where[("end", n)]
        if indexes == (-1,) or (
            (start == 0 or not text[start - 1].isalpha())
            and (end + 1 >= len(text) or not text[end + 1].isalpha() or text[end] == ".")
        ):
            out.append((start, indexes))
    return out


# -- sentences ------------------------------------------------------------------------------------------

# A sentence ends at terminal punctuation (and any closing marks) followed by white space, at a blank line,
# or at a line break that starts a list item, heading, block quote or table row: sentences.py's pattern.
_BREAK = _END
_BEFORE = re.compile(r"[\w.'&]+$")
# What continues a citation and never starts a sentence: a number ("123 Pac. (2d). 456"), a parenthesis,
# a section sign, an ampersand, a lower-case word ("Tit. 1 of the …").
_CONTINUES = re.compile(r"[\d(§&a-z]")


def units(
    text: str, anchors: list[int], abbreviations: frozenset[str], reach: int = MAX_UNIT
) -> list[tuple[int, int]]:
    """The sentences of ``text`` holding an anchor, in order, each at most :data:`MAX_UNIT` long.

    Budget: the text within ``reach`` characters of an anchor is split once (one regex pass, a look at
    the word before each full stop); linear in the text.
    """

    regions: list[list[int]] = []
    for at in anchors:
        lo, hi = max(0, at - reach), min(len(text), at + reach)
        if regions and lo <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], hi)
        else:
            regions.append([lo, hi])
    out: list[tuple[int, int]] = []
    for lo, hi in regions:
        starts = [lo]
        for m in _BREAK.finditer(text, lo, hi):
            if text[m.start()] == "." and (
                _ends_with_abbreviation(text, max(starts[-1], m.start() - 40), m.start())
                or _legal_abbreviation(text, m.start(), abbreviations)
                or (m.end() < len(text) and _CONTINUES.match(text, m.end()) is not None)
            ):
                continue
            if m.end() < hi:
                starts.append(m.end())
        starts.append(hi)
        for a, b in pairwise(starts):
            k = bisect_left(anchors, a)
            if k < len(anchors) and anchors[k] < b:
                out += _pieces(text, a, b)
    return out


def _legal_abbreviation(text: str, dot: int, abbreviations: frozenset[str]) -> bool:
    """Whether the word ending at the full stop ``text[dot]`` is an abbreviation of the libraries' names
    (``Prop.``, ``Supp.``) or ends in an initial (``S.D.N.Y.``)."""
    word = _BEFORE.search(text, max(0, dot - 30), dot + 1)
    if word is None:
        return False
    token = word.group(0)
    last = token[:-1].rsplit(".", 1)[-1] + "."
    return token in abbreviations or last in abbreviations or (len(last) == 2 and last[0].isalpha())


def _pieces(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` in pieces of at most :data:`MAX_UNIT` characters, cut after a list's separator
    ("; ", ", ") where there is one in the piece's second half, else at white space."""
    out = []
    while hi - lo > MAX_UNIT:
        cut = lo + MAX_UNIT
        for separator in ("; ", ", ", " "):
            at = text.rfind(separator, lo + MAX_UNIT // 2, lo + MAX_UNIT)
            if at >= 0:
                cut = at + len(separator)
                break
        out.append((lo, cut))
        lo = cut
    out.append((lo, hi))
    return out
