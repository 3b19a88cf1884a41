"""The report's design fact: per item, where the records its C1 directory and its C1.5 articles gave differ.

Read from the rows' own test metadata (``directory_ids``, ``full_content_ids``: the record ids the test
generator built the blocks from, and ``directory: matched`` when C1 was built from the C1.5 articles), and
compared by :func:`~grounding_eval.data.design.record_difference`, the function ``data validate`` uses. An
item is counted when the results hold a row of it under C1 and one under C1.5 (a C1.5 − C1 effect is made
of such items). Each record is named by its organisation as the rows record it
(``metadata.grounding_organizations``; its URL, ``grounding_urls``, goes in ``--json`` and the HTML title),
so the report reads the rows alone and a redacted results file (which keeps the organisations, not the
URLs) prints the same text; rows written before that are named by id, and a note says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from grounding_eval.data.design import RecordDifference, differences_summary, record_difference
from grounding_eval.data.records import IndexRecord

if TYPE_CHECKING:
    from grounding_eval.analysis.report_row import ReportRow

__all__ = ["grounding_records", "grounding_records_lines"]

_CONDITIONS = ("C1", "C1.5")


def grounding_records(rows: Sequence[ReportRow]) -> dict[str, Any]:
    """``{items, differ, summary, per_item, notes}``: per item with rows under both C1 and C1.5, the
    records each condition gave and where they differ (``per_item``: each
    :meth:`~grounding_eval.data.design.RecordDifference.as_dict` with its ``dataset`` and ``directory``
    mode); ``notes``: what could not be read. ``items`` 0 (``summary`` None) when no item has both."""
    compared, notes = _compared(rows)
    differences = [d for d, _, _ in compared]
    return {
        "items": len(differences),
        "differ": sum(d.differs for d in differences),
        "summary": differences_summary(differences) if differences else None,
        "per_item": [{**d.as_dict(), "dataset": dataset, "directory": mode} for d, dataset, mode in compared],
        "notes": notes,
    }


def grounding_records_lines(rows: Sequence[ReportRow]) -> list[str]:
    """The text report's section: the summary, one line per item whose records differ, then the notes
    (nothing when no item has rows under both C1 and C1.5)."""
    compared, notes = _compared(rows)
    if not compared and not notes:
        return []
    lines = [
        "C1 and C1.5 records (per item: what each condition gave the model, from the rows' test metadata)"
    ]
    if compared:
        lines.append(f"  {differences_summary([d for d, _, _ in compared])}")
    matched = sum(mode == "matched" for _, _, mode in compared)
    if matched:
        lines.append(
            f"  {matched} item(s) ran with directory: matched (C1 built from the C1.5 articles' records)"
        )
    lines += [f"  {d.text(urls=False)}" for d, _, _ in compared if d.differs]
    return lines + [f"  note: {note}" for note in notes]


def _compared(rows: Sequence[ReportRow]) -> tuple[list[tuple[RecordDifference, str, str]], list[str]]:
    """Per item (dataset, query id) with rows under C1 and C1.5, in the rows' order: its record difference, its
    dataset and its directory mode; and the notes on what could not be read."""
    conditions: dict[tuple[str, str], set[str]] = defaultdict(set)
    ids: dict[tuple[str, str], set[tuple[tuple[str, ...], tuple[str, ...], str]]] = defaultdict(set)
    named: dict[tuple[str, str], dict[str, IndexRecord]] = {}
    for row in rows:
        condition = row.keys.get("condition")
        if condition not in _CONDITIONS:
            continue
        key = (row.dataset, row.query_id)
        conditions[key].add(condition)
        meta = row.test_metadata
        c1, c15 = _ids(meta.get("directory_ids")), _ids(meta.get("full_content_ids"))
        if c1 is not None and c15 is not None:
            ids[key].add((c1, c15, str(meta.get("directory") or "seed")))
        records = _records(meta.get("grounding_organizations"), meta.get("grounding_urls"))
        if records is not None:
            named.setdefault(key, records)
    notes: list[str] = []
    compared: list[tuple[RecordDifference, str, str]] = []
    unrecorded: list[str] = []
    unnamed: list[str] = []
    for key in [k for k, found in conditions.items() if found == set(_CONDITIONS)]:  # rows' order
        dataset, item = key
        built = sorted(ids.get(key, ()))
        if not built:
            unrecorded.append(item)
            continue
        if len(built) > 1:
            notes.append(f"{item}: its rows record {len(built)} different sets of records (results of "
                         "different dataset versions or directory modes): the first is shown")  # fmt: skip
        c1, c15, mode = built[0]
        names = named.get(key)
        if names is None:
            unnamed.append(item)
        compared.append((record_difference(item, c1, c15, names), dataset, mode))
    if unrecorded:
        notes.append(
            f"{len(unrecorded)} item(s) with rows under C1 and C1.5 record no directory_ids / full_content_ids "
            f"({_shown(unrecorded)}: tests not generated from a dataset, or trimmed): their records are not "
            "compared"
        )
    if unnamed:
        notes.append(
            f"{len(unnamed)} item(s) record no grounding_organizations ({_shown(unnamed)}: written before it): their "
            "records are named by id alone"
        )
    return compared, notes


def _shown(items: list[str]) -> str:
    return ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")


def _records(organizations: Any, urls: Any) -> dict[str, IndexRecord] | None:
    """A row's ``metadata.grounding_organizations`` (id → organisation) and ``grounding_urls`` (id → URL;
    absent from a redacted file) as index records carrying those fields, or None when the organisations
    are absent or not of that shape."""
    if not isinstance(organizations, dict) or not all(isinstance(v, str) for v in organizations.values()):
        return None
    urls = urls if isinstance(urls, dict) else {}
    return {
        str(i): IndexRecord(str(i), "", "", u if isinstance(u := urls.get(i), str) else "", "", organization)
        for i, organization in organizations.items()
    }


def _ids(value: Any) -> tuple[str, ...] | None:
    """A list of record ids from a results file, or None when it is not one."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None
