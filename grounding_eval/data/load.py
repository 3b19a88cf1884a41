"""Load and validate dataset files: queries, High-Risk items and the content index.

Each format is JSON Lines (``.jsonl``, one object a line), CSV (``.csv``, a header row; list fields
``;``-separated) or a YAML/JSON list (``.yaml``, ``.yml``, ``.json``, for small hand-written files).
Every problem is one :class:`DataError` line naming the file, the record and the field, e.g.
``queries.jsonl: line 7 (id 'il-007'): field 'jurisdiction': unknown state code 'ZZ'``; a value is
quoted at most 40 characters long (:func:`~grounding_eval.errors.clip`). The field rules are the
models of :mod:`grounding_eval.data.models` (one per format), from which the JSON Schemas in
``datasets/schemas/`` are generated.

Files are read through :mod:`grounding_eval.files`: regular files of at most 64 MiB, read whole.
Refused rather than read silently: a key written twice in one record (JSON, YAML), a CSV header naming
a column twice, a CSV quote that is never closed (it would swallow the rest of the file into one cell)
or any other malformed quoting, and a CSV cell over 131,072 characters (Python's ``csv`` limit, left
as it is: no field of these formats comes near it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grounding_eval.data.records import HighRiskItem, IndexRecord, Query
from grounding_eval.errors import DataError, clip
from grounding_eval.files import JsonProblem, parse_json, read_json, read_text, read_yaml

__all__ = [
    "iter_rows",
    "load_high_risk",
    "load_index",
    "load_queries",
    "raise_or_collect",
]


def iter_rows(
    path: str | Path, *, inside: str | Path | None = None, problems: list[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, row)`` for each record: ``where`` is ``line N`` (JSONL; CSV: the line the record
    starts on) or ``record N`` (YAML, JSON).

    Args:
        path: The file; its suffix names the format.
        inside: When given, the file (symlinks resolved) must lie within this folder.
        problems: When given, a malformed JSON line or record is added to it as one line and skipped
            (the file's other problems still raise).

    Raises:
        DataError: the file is missing, unreadable or not a regular file, a record is malformed (see the
            module docstring), or the format is unknown.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv", ".yaml", ".yml", ".json"):
        raise DataError(path, "unknown format: use .jsonl, .csv, .yaml, .yml or .json")
    if suffix in (".yaml", ".yml", ".json"):
        # Not JSON through the YAML parser: JSON escapes astral characters as surrogate pairs, which
        # YAML rejects.
        data = read_json(path, inside=inside) if suffix == ".json" else read_yaml(path, inside=inside)
        if not isinstance(data, list):
            raise DataError(path, "expected a list of records")
        for i, row in enumerate(data, 1):
            if not isinstance(row, dict):
                raise_or_collect([DataError(path, f"record {i}: expected a mapping of fields")], problems)
                continue
            yield f"record {i}", row
        return
    text = read_text(path, inside=inside)
    if suffix == ".csv":
        yield from _csv_rows(path, text)
        return
    # newline="": lines end at \n, \r\n or \r only (a JSON string may hold a raw U+2028).
    for number, line in enumerate(io.StringIO(text, newline=""), 1):
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except JsonProblem as exc:
            raise_or_collect([DataError(path, f"line {number}: {exc.problem}")], problems)
            continue
        if not isinstance(row, dict):
            raise_or_collect([DataError(path, f"line {number}: expected a JSON object")], problems)
            continue
        yield f"line {number}", row


def raise_or_collect(errors: list[DataError], problems: list[str] | None) -> None:
    """Raise the first of ``errors``, or (``problems`` given) add every one to it as one line."""
    if problems is None:
        raise errors[0]
    problems += [error.one_line() for error in errors]


def _csv_rows(path: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    # strict: a quote that is never closed, or text after a closing quote, is an error instead of being
    # read as one long cell holding the rest of the file.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1  # the line the record being read starts on
    try:
        header = next(reader, None)
        if header is None:
            return
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise DataError(path, f"line 1: the header names column {clip(name)} twice")
            if name:  # trailing unnamed columns, as spreadsheets write, may repeat
                seen.add(name)
        start = reader.line_num + 1
        for cells in reader:
            where = f"line {start}"
            start = reader.line_num + 1
            if not cells:  # a blank line
                continue
            if len(cells) > len(header):
                raise DataError(path, f"{where}: more cells than header columns")
            yield where, {name: cell for name, cell in zip(header, cells, strict=False) if cell != ""}
    except csv.Error as exc:
        raise DataError(path, f"line {start}: {_csv_problem(exc)}") from None


def _csv_problem(exc: csv.Error) -> str:
    message = str(exc)
    if message == "unexpected end of data":
        return 'a quoted cell is never closed (its opening " has no closing " before the end of the file)'
    if message.startswith("field larger than field limit"):
        return f"a cell is longer than {csv.field_size_limit():,} characters"
    return f"not valid CSV ({message})"


def _parse_rows(
    path: str | Path, kind: str, inside: str | Path | None, problems: list[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each valid record of ``kind`` (queries, high_risk, index) as ``(label, fields)``; a problem raises,
    or (``problems`` given) is added to it as one line and its record skipped."""
    # Imported here, not with the module: the verifier's assertion imports the dataset module for its
    # file finders, and a cold process should not pay for building the models it never uses.
    from grounding_eval.data import models

    model: type[models.QueryRecord] | type[models.IndexRow] = models.IndexRow
    if kind != "index":
        model = models.HighRiskRecord if kind == "high_risk" else models.QueryRecord
    seen: dict[str, str] = {}
    for where, row in iter_rows(path, inside=inside, problems=problems):
        ident = row.get("id")
        label = f"{where} (id {clip(ident)})" if isinstance(ident, str) and ident.strip() else where
        record, found = models.validate(model, row)
        # The field values as a dict (dict(record) would first ask the model for .keys(), 12 µs a record).
        fields: dict[str, Any] = record.__dict__.copy() if record is not None else {}
        if fields.get("id") in seen:
            found = [f"field 'id' duplicates {seen[fields['id']]}"]
        if found:
            raise_or_collect([DataError(path, f"{label}: {problem}") for problem in found], problems)
            continue
        seen[fields["id"]] = where
        yield label, fields


def load_queries(
    path: str | Path, *, inside: str | Path | None = None, problems: list[str] | None = None
) -> list[Query]:
    """Load LHSQ-style queries (``inside``: the folder the file must resolve within, if any; ``problems``:
    collect every problem there, one line each, instead of raising the first)."""
    return [Query(**row) for _, row in _parse_rows(path, "queries", inside, problems)]


def load_high_risk(
    path: str | Path, *, inside: str | Path | None = None, problems: list[str] | None = None
) -> list[HighRiskItem]:
    """Load High-Risk Challenge items (``inside``, ``problems`` as above)."""
    return [HighRiskItem(**row) for _, row in _parse_rows(path, "high_risk", inside, problems)]


def load_index(
    path: str | Path, *, inside: str | Path | None = None, problems: list[str] | None = None
) -> dict[str, IndexRecord]:
    """Load a JKB-style content index, keyed by record id, in file order (``inside``, ``problems`` as
    above)."""
    return {row["id"]: IndexRecord(**row) for _, row in _parse_rows(path, "index", inside, problems)}
