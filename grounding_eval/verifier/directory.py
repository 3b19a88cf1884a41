"""The organization directory: who owns which names, domains and phone numbers, and where they serve.

Three of the five checks (phone–org, URL–org, jurisdiction leak) ask the same questions of it: which
organization does this number, this domain or this name belong to? Loading validates the whole file up
front, including the cross-entry conflicts (a phone or domain listed under two organizations) that made
the public LSC grantee list unsafe as ground truth, so that no check ever has to guess.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.states import NATIONAL, parse_state
from grounding_eval.verifier.records import quick_init
from grounding_eval.verifier.spans import SpanSet
from grounding_eval.verifier.urls import registered_domain, url_host

__all__ = ["Directory", "OrgMention", "Organization", "is_public_suffix", "load_directory", "phone_to_e164"]

_FIELDS = {"name", "aliases", "domains", "phones", "states", "source", "unverified", "note"}
_NOT_IN_HOST = re.compile(r"[/?#@\\:%\t\r\n]")
_DOMAIN = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def phone_to_e164(raw: str, region: str = "US") -> str | None:
    """Return the E.164 form of a written phone number, or None if it is not a possible number."""
    import phonenumbers  # (imported when a directory is parsed, not when a cached one is loaded)

    try:
        number = phonenumbers.parse(raw, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@dataclass(frozen=True)
class Organization:
    """One directory entry. ``states`` holds two-letter codes; ``US`` means it serves the whole nation."""

    name: str
    states: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    phones: tuple[str, ...] = ()
    phones_e164: tuple[str, ...] = ()
    source: str | None = None
    unverified: tuple[str, ...] = ()
    note: str | None = None

    @property
    def national(self) -> bool:
        """True when the organization serves every state."""
        return NATIONAL in self.states

    def serves(self, state: str) -> bool:
        """True when a user in ``state`` is within this organization's service area."""
        return self.national or state in self.states


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class OrgMention:
    """An organization named in text by its name or one of its aliases."""

    org: Organization
    surface: str
    start: int
    end: int


@dataclass(frozen=True)
class Directory:
    """A validated set of organizations with the lookups the checks need."""

    path: str
    organizations: tuple[Organization, ...]
    _by_phone: Mapping[str, Organization] = field(repr=False)
    _by_domain: Mapping[str, Organization] = field(repr=False)

    @classmethod
    def from_organizations(cls, organizations: Sequence[Organization], path: str = "<memory>") -> Directory:
        """Build a directory, rejecting a phone or domain claimed by two organizations."""
        by_phone: dict[str, Organization] = {}
        by_domain: dict[str, Organization] = {}
        names: set[str] = set()
        for org in organizations:
            if org.name.casefold() in names:
                raise DataError(path, f"organization {org.name!r} is listed twice")
            names.add(org.name.casefold())
            for domain in org.domains:
                if is_public_suffix(domain):
                    raise DataError(
                        path,
                        f"organization {org.name!r}: domain {domain} is a public suffix, so it would own "
                        f"every site under it; list the organization's own domain (e.g. name.{domain})",
                    )
            for e164, raw in zip(org.phones_e164, org.phones, strict=True):
                other = by_phone.setdefault(e164, org)
                if other is not org:
                    raise DataError(path, f"phone {raw} is listed for both {other.name!r} and {org.name!r}")
            for domain in org.domains:
                other = by_domain.setdefault(domain, org)
                if other is not org:
                    raise DataError(
                        path, f"domain {domain} is listed for both {other.name!r} and {org.name!r}"
                    )
        return cls(path, tuple(organizations), by_phone, by_domain)

    def owner_of_phone(self, e164: str) -> Organization | None:
        """Return the organization that publishes this number, if any."""
        return self._by_phone.get(e164)

    def owner_of_host(self, host: str) -> Organization | None:
        """Return the organization owning ``host``: the longest directory domain it equals or ends with.

        The rule is :func:`~grounding_eval.verifier.urls.host_matches_domain`'s: the host is read the way
        :func:`~grounding_eval.verifier.urls.url_host` reads one (case, trailing dot, IDNA; an unreadable
        host belongs to nobody), matching is on whole labels, so ``trusted.org.evil.test`` and
        ``eviltrusted.org`` belong to nobody even when ``trusted.org`` is in the directory, and no
        directory domain is a public suffix (:meth:`from_organizations` refuses one), so ``github.io``
        never owns ``someone.github.io``.

        Budget: O(labels) dictionary lookups.
        """
        # url_host reads a bare host as host_matches_domain does, once the characters that would make it
        # a URL (a path, userinfo, a port, escapes) are refused as they are there.
        host = host.strip()
        canonical = None if _NOT_IN_HOST.search(host) else url_host(host)
        if canonical is None:
            return None
        labels = canonical.split(".")
        for i in range(len(labels) - 1):
            owner = self._by_domain.get(".".join(labels[i:]))
            if owner is not None:
                return owner
        return None

    def by_name(self, name: str) -> Organization | None:
        """Return the organization with this exact name (case-insensitive)."""
        wanted = name.casefold()
        return next((o for o in self.organizations if o.name.casefold() == wanted), None)

    def find_mentions(self, text: str, *, masked: Iterable[tuple[int, int]] = ()) -> list[OrgMention]:
        """Find organizations named in ``text``, longest name first, never overlapping.

        Names and mixed-case aliases match case-insensitively; all-capitals aliases (acronyms such as
        ``LAF``) match only in capitals, so the word "laf" or "Lone" in prose is not an organization.
        Spans in ``masked`` (URLs, phone numbers) are skipped so a domain never counts as a name.

        Budget: one pass of each of two compiled alternations over the text (a run of punctuation or
        spaces is skipped by a one-character look-ahead), one binary search per match against the
        masked spans, one sort of the matches: O(n + k log k) for k matches.
        """
        blocked = SpanSet(masked)
        found: list[OrgMention] = []
        owners: dict[str, Organization] = {}  # each distinct written form is resolved once
        for pattern, words in zip(self._patterns, self._first_words, strict=True):
            for m in pattern.finditer(text) if words is None else _matches_at_words(pattern, text, words):
                start, end = m.span()
                if blocked.overlaps(start, end):
                    continue
                written = m.group(0)
                org = owners.get(written)
                if org is None:
                    org = owners[written] = self._owner_of_surface(written)
                found.append(OrgMention(org, written, start, end))
        found.sort(key=lambda x: (x.start, -(x.end - x.start)))
        kept: list[OrgMention] = []
        for mention in found:
            if kept and mention.start < kept[-1].end:
                continue  # an overlapping shorter (or later) surface: the longest wins
            kept.append(mention)
        return kept

    def _owner_of_surface(self, written: str) -> Organization:
        """The organization a matched name or alias belongs to.

        An all-capitals match is an acronym's when one is listed; otherwise (a name written in
        capitals, "LAWHELP") it is the case-insensitive name's.
        """
        surface = " ".join(written.split())
        owner = self._surface_owner
        if _is_acronym(surface) and surface in owner:
            return owner[surface]
        if surface.casefold() in owner:
            return owner[surface.casefold()]
        # Case-insensitive matching and case folding can disagree on rare characters: ask each name.
        return next(
            org
            for key, org in owner.items()
            if re.fullmatch(_surface_regex(key), surface, 0 if _is_acronym(key) else re.IGNORECASE)
        )

    @cached_property
    def _surface_owner(self) -> dict[str, Organization]:
        owner: dict[str, Organization] = {}
        for org in self.organizations:
            for surface in (org.name, *org.aliases):
                surface = " ".join(surface.split())
                key = surface if _is_acronym(surface) else surface.casefold()
                owner.setdefault(key, org)
        return owner

    @cached_property
    def _patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(_names_pattern(keys, flags), flags) for keys, flags in self._name_keys)

    @cached_property
    def _name_keys(self) -> tuple[tuple[list[str], int], ...]:
        """The case-insensitive names (case-folded) and the acronyms, each longest first, with the flags
        each is matched with (only the kinds there are)."""
        exact = sorted({k for k in self._surface_owner if _is_acronym(k)}, key=len, reverse=True)
        folded = sorted({k for k in self._surface_owner if not _is_acronym(k)}, key=len, reverse=True)
        return tuple((keys, flags) for keys, flags in ((folded, re.IGNORECASE), (exact, 0)) if keys)

    @cached_property
    def _first_words(self) -> tuple[tuple[str, ...] | None, ...]:
        """For each of :attr:`_patterns`: the first words of its names, where :func:`_matches_at_words`
        finds its matches (case-insensitive ASCII names, each opening with a word character, of at most
        :data:`_MOST_FIRST_WORDS` first words); else None (the pattern's own search)."""
        out: list[tuple[str, ...] | None] = []
        for keys, flags in self._name_keys:
            words = {_FIRST_WORD.match(k) for k in keys}
            fits = flags & re.IGNORECASE and all(k.isascii() for k in keys) and None not in words
            found = sorted({w.group(0) for w in words if w is not None})
            out.append(tuple(found) if fits and len(found) <= _MOST_FIRST_WORDS else None)
        return tuple(out)


_FIRST_WORD = re.compile(r"\w+")
_MOST_FIRST_WORDS = 64  # (one str.find pass each: past this many, the pattern's own search is quicker)
# The characters outside ASCII that match an ASCII letter case-insensitively (İ ı: i; ſ: s; K: k), the
# only ones (tests/verifier/test_directory.py checks every code point).
_ASCII_LOOKALIKES = re.compile("[\u0130\u0131\u017f\u212a]")


def _matches_at_words(pattern: re.Pattern[str], text: str, words: Sequence[str]) -> Iterator[re.Match[str]]:
    """What ``pattern.finditer(text)`` yields, for a case-insensitive pattern of ASCII names each opening
    with a word character (:func:`_names_pattern`: a match starts where no word character precedes).

    A match starts where one of the names' first words (``words``, lower case) is written, in any
    case: each word is looked for with ``str.find`` in the lower-cased text, and the pattern is matched
    at each such place not glued to a word character before it, in order, from the end of the last
    match on (as ``finditer`` goes on). The regex engine's own search tried the pattern at every
    position (most of find_mentions' time: 225 -> 150 us on verifier_speed's answer). Exact when
    lower-casing keeps every character in its place and no character outside ASCII matches an ASCII
    letter case-insensitively: otherwise (a text with ``İ`` or ``K``) the pattern's own search.

    Budget: one ``str.find`` pass per word, one match per place found; past ``len(text) / 16`` places
    (a text made of the names' first words), the pattern's own search instead.
    """
    lowered = text.lower()
    if len(lowered) != len(text) or (not text.isascii() and _ASCII_LOOKALIKES.search(text)):
        yield from pattern.finditer(text)
        return
    starts: set[int] = set()
    budget = len(text) // 16 + 256  # places looked at, past which the pattern's own search is quicker
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            budget -= 1
            if budget < 0:  # (a text made of a name's first word: 1 MB of "u u u" 0.46 s this way, 0.12 s)
                yield from pattern.finditer(text)
                return
            if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):  # (what \w is in a pattern)
                starts.add(at)
            at = lowered.find(word, at + len(word))  # (a place inside this word follows a word character)
    end = 0
    for at in sorted(starts):
        if at >= end and (match := pattern.match(text, at)) is not None:
            end = match.end()
            yield match


def is_public_suffix(domain: str) -> bool:
    """True when ``domain`` is itself a suffix of the public suffix list, ICANN or private section.

    ``com``, ``co.uk``, ``github.io`` and ``s3.amazonaws.com`` are suffixes: under each, sites belong to
    different people, so no organization owns the suffix. The list is the snapshot bundled with the
    pinned ``tldextract`` (never downloaded).

    A domain can only be a suffix when it is a rule of the list, or its parent has a wildcard rule
    (``*.kawasaki.jp``). Those two lines are looked up in the snapshot read as text (about 6 ms, once per
    process); only a domain that passes that test is handed to ``tldextract`` for the verdict
    (exceptions such as ``!city.kawasaki.jp``), so loading a directory of ordinary domains does not
    import it (~100 ms in each fresh process promptfoo starts).

    Args:
        domain: A lower-case ASCII domain name, as the directory stores it.

    Returns:
        ``True`` for a public suffix.
    """
    rules = _suffix_rules()
    if rules is not None:
        unicode_form = ".".join(_decode_label(label) for label in domain.split("."))
        parent = unicode_form.partition(".")[2]
        if unicode_form not in rules and f"*.{parent}" not in rules:
            return False
    # Under a known suffix, the registered domain is empty exactly when the domain is the suffix.
    return registered_domain(domain) is None


@functools.cache
def _suffix_rules() -> frozenset[str] | None:
    """The rules of tldextract's bundled public suffix snapshot, or None if the file cannot be found."""
    spec = importlib.util.find_spec("tldextract")  # finds the package without importing it
    folders = spec.submodule_search_locations if spec else None
    if not folders:
        return None
    try:
        text = (Path(next(iter(folders))) / ".tld_set_snapshot").read_text(encoding="utf-8")
    except OSError:
        return None
    return frozenset(line for line in text.splitlines() if line and not line.startswith("//"))


def _decode_label(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:
        return label.encode("ascii").decode("idna")
    except UnicodeError:
        return label


def _is_acronym(surface: str) -> bool:
    letters = [c for c in surface if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters) and " " not in surface.strip()


def _surface_regex(surface: str) -> str:
    # Any run of white space in a name matches any run in the text (names break across lines).
    return r"\s+".join(re.escape(part) for part in surface.split())


_END_OF_NAME = ""  # the trie's mark for "a name ends here" (never a character of a name)


def _names_pattern(keys: Sequence[str], flags: int) -> str:
    """The pattern of a mention of any of ``keys``: a name not glued to a word character either side.

    When every name starts with a word character, that is said first (``(?=\\w)``), so a run of
    punctuation or spaces is passed over without trying each name at each position. Matched
    case-sensitively (acronyms), the names' first characters go first instead, each followed by the
    look-behind "the character before this one is not a word character" (``L(?<![\\w]L)``: the same
    test as ``(?<![\\w])`` before it), so that the regex engine can skip, in C, every position whose
    character begins no name.
    """
    if not flags & re.IGNORECASE and all(re.match(r"\w", k) for k in keys):
        return rf"{_names_regex(keys, flags, first_looks_back=True)}(?![\w])"
    lead = r"(?=\w)" if all(re.match(r"\w", k) for k in keys) else ""
    return rf"{lead}(?<![\w]){_names_regex(keys, flags)}(?![\w])"


def _names_regex(keys: Sequence[str], flags: int, *, first_looks_back: bool = False) -> str:
    """A group matching what ``(?:k1|k2|...)`` matches (``keys`` longest first), as a trie of names.

    The plain alternation tries every name at every word start (most of find_mentions' time); here
    names share their prefixes: ``legal\\s+aid(?:\\s+chicago|)`` instead of
    ``legal\\s+aid\\s+chicago|legal\\s+aid``.

    Equivalence. A mention is the text a name spans (its owner is looked up from the written text, not
    from the alternative that matched). The alternation, longest name first with the ``(?![\\w])`` after
    it backtracking into the group, yields at each position the longest span any name matches there
    with no word character after it: spans of two names matching at one position are nested, and the
    longer span belongs to the longer name (each name character matches one text character, each space
    of a name one run of white space). The trie yields the same span: at each node it tries going on
    before the name that ends there, and at most one edge of a node can match a given text character —
    edges are distinct characters, or white space against a character that is not, and two distinct
    ASCII characters never match one text character, even case-insensitively. Outside ASCII,
    case-insensitive matching has equivalences that case folding keeps apart (``ı`` matches ``i``), so
    case-insensitive names with such characters keep the plain alternation.
    ``tests/verifier/test_linear_equivalence.py`` compares the two on generated names and text.
    """
    if flags & re.IGNORECASE and not all(k.isascii() for k in keys):
        return "(?:" + "|".join(_surface_regex(k) for k in keys) + ")"
    trie: dict[str, Any] = {}
    for key in keys:
        node = trie
        for i, part in enumerate(key.split()):
            for token in [" "] * (i > 0) + list(part):  # " " stands for a run of white space
                node = node.setdefault(token, {})
        node[_END_OF_NAME] = {}
    return _trie_regex(trie, first_looks_back)


def _trie_regex(node: dict[str, Any], looks_back: bool = False) -> str:
    alternatives = [
        (r"\s+" if token == " " else re.escape(token))
        + (rf"(?<![\w]{re.escape(token)})" if looks_back else "")
        + _trie_regex(child)
        for token, child in node.items()
        if token != _END_OF_NAME
    ]
    if _END_OF_NAME in node:
        if not alternatives:
            return ""
        alternatives.append("")  # the name that ends here, tried last: a longer one wins
    elif len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


def load_directory(path: str | Path) -> Directory:
    """Load and validate an organization directory YAML file (a list of entries).

    Raises:
        DataError: one line naming the file, the entry and the problem.
    """
    from grounding_eval.files import read_yaml

    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, list) or not data:
        raise DataError(path, "expected a non-empty YAML list of organizations")
    return Directory.from_organizations([_parse_entry(path, i, e) for i, e in enumerate(data, 1)], str(path))


def directory_problems(path: str | Path) -> list[str]:
    """Every problem of a directory file, one line each (``data validate``): each entry is read as
    :func:`load_directory` reads it, then, when every entry is valid, the directory as a whole (a name,
    domain or phone listed for two organizations). Empty when the file loads."""
    from grounding_eval.files import read_yaml

    path = Path(path)
    try:
        data = read_yaml(path)
    except DataError as exc:
        return [exc.one_line()]
    if not isinstance(data, list) or not data:
        return [DataError(path, "expected a non-empty YAML list of organizations").one_line()]
    problems: list[str] = []
    organizations = []
    for i, entry in enumerate(data, 1):
        try:
            organizations.append(_parse_entry(path, i, entry))
        except DataError as exc:
            problems.append(exc.one_line())
    if not problems:
        try:
            Directory.from_organizations(organizations, str(path))
        except DataError as exc:
            problems.append(exc.one_line())
    return problems


def _parse_entry(path: Path, index: int, entry: Any) -> Organization:
    if not isinstance(entry, dict):
        raise DataError(path, f"entry {index}: expected a mapping with at least name and states")
    name = entry.get("name")
    where = f"entry {index} ({name!r})" if isinstance(name, str) else f"entry {index}"
    unknown = set(entry) - _FIELDS
    if unknown:
        raise DataError(
            path,
            f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))} (allowed: {', '.join(sorted(_FIELDS))})",
        )
    if not isinstance(name, str) or not name.strip():
        raise DataError(path, f"{where}: field 'name' is required and must be text")

    def strings(key: str) -> tuple[str, ...]:
        value = entry.get(key) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
            raise DataError(path, f"{where}: field {key!r} must be a list of text values")
        return tuple(str(v).strip() for v in value if str(v).strip())

    states: list[str] = []
    for raw in strings("states"):
        try:
            states.append(parse_state(raw, allow_national=True))
        except ValueError as exc:
            raise DataError(path, f"{where}: field 'states': {exc}") from None
    if not states:
        raise DataError(path, f"{where}: field 'states' is required (two-letter codes, US for national)")
    aliases = strings("aliases")
    for alias in aliases:
        if not any(c.isalpha() for c in alias):
            raise DataError(
                path,
                f"{where}: field 'aliases': {alias!r} has no letter (an alias of digits and punctuation "
                "would match numbers in the answer: section numbers, parts of phone numbers)",
            )
    domains = []
    for domain in strings("domains"):
        d = domain.lower()
        while d.startswith("www.") and "." in d[4:]:  # as host_matches_domain strips www. labels
            d = d[4:]
        if not _DOMAIN.match(d):
            raise DataError(
                path, f"{where}: field 'domains': {domain!r} is not a bare domain like example.org"
            )
        domains.append(d)
    phones = strings("phones")
    e164 = []
    for raw in phones:
        number = phone_to_e164(raw)
        if number is None:
            raise DataError(path, f"{where}: field 'phones': {raw!r} is not a US phone number")
        e164.append(number)
    for key in ("source", "note"):
        if key in entry and not isinstance(entry[key], str):
            raise DataError(path, f"{where}: field {key!r} must be text")
    return Organization(
        name=" ".join(name.split()),
        states=tuple(dict.fromkeys(states)),
        aliases=aliases,
        domains=tuple(domains),
        phones=phones,
        phones_e164=tuple(e164),
        source=entry.get("source"),
        unverified=strings("unverified"),
        note=entry.get("note"),
    )
