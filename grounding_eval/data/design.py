"""Where the records C1 and C1.5 give the model differ, per item: a design fact of every C1.5 − C1 effect.

C1's directory lists the top-ranked index records (:data:`~grounding_eval.data.select.DIRECTORY_K`);
C1.5 shows the full text of the top-ranked records *that have a cached article*. A record without an
article (on the sample, each state's legal-aid organisation: its home page is in the index, not in the
article cache) is in C1 and not in C1.5, and a lower-ranked record with an article takes its place in
C1.5. So for such an item C1.5 − C1 compares content as well as format: a different set of organisations
and URLs, not the same records shown in full.

:func:`record_difference` is the one place this is computed, from an item's own record ids (the ids the
conditions were built from: :class:`~grounding_eval.data.conditions.ConditionVars` in ``data validate``,
a results row's ``metadata.directory_ids`` / ``full_content_ids`` in ``report``). Each record is named by
its index entry (organisation and URL) when the index is at hand. The index has no phone field: a phone
the model is given is in an article's text (C1.5) or a description, never a record of its own, so phones
are not compared here.

``directory: matched`` (:data:`DIRECTORY_MODES`) builds C1's directory from the C1.5 articles' own
records instead, so the two conditions give the same records and differ only in format.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from grounding_eval.data.records import IndexRecord

__all__ = [
    "DIRECTORY_MODES",
    "GivenRecord",
    "RecordDifference",
    "differences_summary",
    "record_difference",
]

DIRECTORY_MODES: Final = ("seed", "matched")
"""How C1's directory is built: ``seed`` (the methods document's: the top-ranked index records, whether
or not they have an article; the default) or ``matched`` (exactly the records of the item's C1.5
articles, in their order: a matched comparison of format alone)."""


@dataclass(frozen=True)
class GivenRecord:
    """One index record a condition gives the model: its id, and its organisation and URL when the index
    was at hand (None otherwise)."""

    id: str
    organization: str | None = None
    url: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "organization": self.organization, "url": self.url}

    def text(self, *, url: bool = True) -> str:
        """``id (organisation, URL)`` (without the URL when not ``url``), or the id alone when the record
        was not named."""
        named = [v for v in (self.organization, self.url if url else None) if v]
        return f"{self.id} ({', '.join(named)})" if named else self.id


@dataclass(frozen=True)
class RecordDifference:
    """The records one item's C1 directory and C1.5 articles give, and where they differ."""

    item: str
    c1: tuple[str, ...]
    """The record ids of C1's directory, in its order."""
    c1_5: tuple[str, ...]
    """The record ids of C1.5's articles, in their order."""
    c1_only: tuple[GivenRecord, ...]
    """Records C1 gives and C1.5 does not, in C1's order."""
    c1_5_only: tuple[GivenRecord, ...]
    """Records C1.5 gives and C1 does not, in C1.5's order."""
    organizations_c1_only: tuple[str, ...]
    """Organisations of C1's records that no C1.5 record is of (empty when the records were not named)."""
    organizations_c1_5_only: tuple[str, ...]
    """Organisations of C1.5's records that no C1 record is of (empty when the records were not named)."""
    named: bool
    """Whether the records were looked up in the index (organisation and URL)."""

    @property
    def differs(self) -> bool:
        """Whether C1 and C1.5 give different sets of records."""
        return bool(self.c1_only or self.c1_5_only)

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "differs": self.differs,
            "c1": list(self.c1),
            "c1_5": list(self.c1_5),
            "c1_only": [r.as_dict() for r in self.c1_only],
            "c1_5_only": [r.as_dict() for r in self.c1_5_only],
            "organizations_c1_only": list(self.organizations_c1_only),
            "organizations_c1_5_only": list(self.organizations_c1_5_only),
        }

    def text(self, *, urls: bool = True) -> str:
        """One line: the item, then the records only C1 gives and those only C1.5 gives (each with its URL
        unless not ``urls``)."""
        only_c1 = "; ".join(r.text(url=urls) for r in self.c1_only) or "none"
        only_c15 = "; ".join(r.text(url=urls) for r in self.c1_5_only) or "none"
        return f"{self.item}: only in C1: {only_c1} · only in C1.5: {only_c15}"


def record_difference(
    item: str,
    c1: Iterable[str],
    c1_5: Iterable[str],
    index: Mapping[str, IndexRecord] | None = None,
) -> RecordDifference:
    """Where the records of ``item``'s C1 directory (ids ``c1``) and C1.5 articles (ids ``c1_5``) differ.

    A record is compared by its index id. With ``index``, each differing record is named by its
    organisation and URL, and the organisations one condition's records are of and the other's are not
    are listed too (an id missing from ``index`` is named by its id alone).
    """
    c1_ids = tuple(dict.fromkeys(c1))
    c15_ids = tuple(dict.fromkeys(c1_5))

    def given(ids: Sequence[str]) -> tuple[GivenRecord, ...]:
        if index is None:
            return tuple(GivenRecord(i) for i in ids)
        return tuple(
            GivenRecord(i, index[i].organization, index[i].url or None) if i in index else GivenRecord(i)
            for i in ids
        )

    def organizations(ids: Sequence[str]) -> list[str]:
        if index is None:
            return []
        return list(dict.fromkeys(index[i].organization for i in ids if i in index))

    orgs_c1, orgs_c15 = organizations(c1_ids), organizations(c15_ids)
    return RecordDifference(
        item=item,
        c1=c1_ids,
        c1_5=c15_ids,
        c1_only=given([i for i in c1_ids if i not in c15_ids]),
        c1_5_only=given([i for i in c15_ids if i not in c1_ids]),
        organizations_c1_only=tuple(o for o in orgs_c1 if o not in orgs_c15),
        organizations_c1_5_only=tuple(o for o in orgs_c15 if o not in orgs_c1),
        named=index is not None,
    )


def differences_summary(differences: Sequence[RecordDifference]) -> str:
    """One line: how many of the items give different records under C1 and C1.5, and what that means."""
    n = sum(d.differs for d in differences)
    items = "item" if len(differences) == 1 else "items"
    if not n:
        return f"C1 and C1.5 give the same records for all {len(differences)} {items}"
    return (
        f"C1 and C1.5 give different records for {n} of {len(differences)} {items}: for those, C1.5 − C1 "
        "compares content as well as format (directory: matched builds C1 from the C1.5 articles' records)"
    )
