"""The organization directory: who owns which names, domains and phone numbers, and where they serve.

Three of the five checks (phone–org, URL–org, jurisdiction leak) ask the same questions of it: which
organization does this number, this domain or this name belong to? Loading validates the whole file up
front, including the cross-entry conflicts (a phone or domain listed under two organizations) that made
the public LSC grantee list unsafe as ground truth, so that no check ever has to guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import phonenumbers

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.states import NATIONAL, parse_state

__all__ = ["Directory", "OrgMention", "Organization", "load_directory", "phone_to_e164"]

_FIELDS = {"name", "aliases", "domains", "phones", "states", "source", "unverified", "note"}
_DOMAIN = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def phone_to_e164(raw: str, region: str = "US") -> str | None:
    """Return the E.164 form of a written phone number, or None if it is not a possible number."""
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


@dataclass(frozen=True)
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

        Matching is on whole labels, so ``trusted.org.evil.test`` and ``eviltrusted.org`` belong to
        nobody even when ``trusted.org`` is in the directory.
        """
        labels = host.lower().rstrip(".").split(".")
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
        """
        blocked = sorted(masked)
        found: list[OrgMention] = []
        for pattern in self._patterns:
            for m in pattern.finditer(text):
                if any(s < m.end() and m.start() < e for s, e in blocked):
                    continue
                surface = " ".join(m.group(0).split())
                org = self._surface_owner[surface if _is_acronym(surface) else surface.casefold()]
                found.append(OrgMention(org, m.group(0), m.start(), m.end()))
        found.sort(key=lambda x: (x.start, -(x.end - x.start)))
        kept: list[OrgMention] = []
        for mention in found:
            if kept and mention.start < kept[-1].end:
                continue  # an overlapping shorter (or later) surface: the longest wins
            kept.append(mention)
        return kept

    @cached_property
    def _surface_owner(self) -> dict[str, Organization]:
        owner: dict[str, Organization] = {}
        for org in self.organizations:
            for surface in (org.name, *org.aliases):
                key = surface if _is_acronym(surface) else surface.casefold()
                owner.setdefault(key, org)
        return owner

    @cached_property
    def _patterns(self) -> tuple[re.Pattern[str], ...]:
        exact = sorted({k for k in self._surface_owner if _is_acronym(k)}, key=len, reverse=True)
        folded = sorted({k for k in self._surface_owner if not _is_acronym(k)}, key=len, reverse=True)
        patterns = []
        for keys, flags in ((folded, re.IGNORECASE), (exact, 0)):
            if keys:
                alternatives = "|".join(_surface_regex(k) for k in keys)
                patterns.append(re.compile(rf"(?<![\w]){'(?:' + alternatives + ')'}(?![\w])", flags))
        return tuple(patterns)


def _is_acronym(surface: str) -> bool:
    letters = [c for c in surface if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters) and " " not in surface.strip()


def _surface_regex(surface: str) -> str:
    # Any run of white space in a name matches any run in the text (names break across lines).
    return r"\s+".join(re.escape(part) for part in surface.split())


def load_directory(path: str | Path) -> Directory:
    """Load and validate an organization directory YAML file (a list of entries).

    Raises:
        DataError: one line naming the file, the entry and the problem.
    """
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, list) or not data:
        raise DataError(path, "expected a non-empty YAML list of organizations")
    return Directory.from_organizations([_parse_entry(path, i, e) for i, e in enumerate(data, 1)], str(path))


def _parse_entry(path: Path, index: int, entry: Any) -> Organization:
    if not isinstance(entry, dict):
        raise DataError(path, f"entry {index}: expected a mapping with at least name and states")
    name = entry.get("name")
    where = f"entry {index} ({name!r})" if isinstance(name, str) else f"entry {index}"
    unknown = set(entry) - _FIELDS
    if unknown:
        raise DataError(path, f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
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
    domains = []
    for domain in strings("domains"):
        d = domain.lower().removeprefix("www.")
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
        aliases=strings("aliases"),
        domains=tuple(domains),
        phones=phones,
        phones_e164=tuple(e164),
        source=entry.get("source"),
        unverified=strings("unverified"),
        note=entry.get("note"),
    )
