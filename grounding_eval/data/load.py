"""Load and validate dataset files: queries, High-Risk items and the content index.

Each format is JSON Lines (``.jsonl``, one object a line), CSV (``.csv``, a header row; list fields
``;``-separated) or a YAML/JSON list (``.yaml``, ``.yml``, ``.json``, for small hand-written files).
Every problem is one :class:`DataError` line naming the file, the record and the field, e.g.
``queries.jsonl: line 7 (id 'il-007'): field 'jurisdiction': unknown state code 'ZZ'``; a value is
quoted at most 40 characters long (:func:`~grounding_eval.errors.clip`). The field rules live in one
table per format (:data:`QUERY_FIELDS` …), mirrored by the JSON Schemas in ``datasets/schemas/`` (a
test keeps the two in agreement).

Files are read through :mod:`grounding_eval.files`: regular files of at most 64 MiB, read whole.
Refused rather than read silently: a key written twice in one record (JSON, YAML), a CSV header naming
a column twice, a CSV quote that is never closed (it would swallow the rest of the file into one cell)
or any other malformed quoting, and a CSV cell over 131,072 characters (Python's ``csv`` limit, left
as it is: no field of these formats comes near it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grounding_eval.data.records import RISK_TIERS, HighRiskItem, IndexRecord, Query
from grounding_eval.errors import DataError, clip
from grounding_eval.files import JsonProblem, parse_json, read_json, read_text, read_yaml
from grounding_eval.states import parse_state

__all__ = [
    "HIGH_RISK_FIELDS",
    "INDEX_FIELDS",
    "MAX_DESCRIPTION_CHARS",
    "QUERY_FIELDS",
    "iter_rows",
    "load_high_risk",
    "load_index",
    "load_queries",
]

MAX_DESCRIPTION_CHARS = 400
"""The directory format expects about 200 characters; anything past 400 is not a description."""


class _FieldError(ValueError):
    """A problem with one field's value (the caller adds file, record and field)."""


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _FieldError("must be non-empty text")
    return " ".join(value.split()) if "\n" not in value else value.strip()


def _ident(value: Any) -> str:
    text = _text(value)
    if any(c.isspace() for c in text) or "/" in text:
        raise _FieldError(f"{clip(text)} is not an id (no spaces or slashes)")
    return text


def _state(value: Any) -> str:
    _short_state(value)
    try:
        return parse_state(value)
    except ValueError as exc:
        raise _FieldError(str(exc)) from None


def _state_or_us(value: Any) -> str:
    _short_state(value)
    try:
        return parse_state(value, allow_national=True)
    except ValueError as exc:
        raise _FieldError(str(exc)) from None


def _short_state(value: Any) -> None:
    # The longest state name is 20 characters; a longer value is not one, and is not quoted in full.
    if isinstance(value, str) and len(value.strip()) > 40:
        raise _FieldError(f"unknown state code {clip(value.strip())}")


def _text_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # CSV cells hold lists as "a; b; c"
        value = [part for part in value.split(";") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _FieldError("must be a list of non-empty text values")
    return tuple(v.strip() for v in value)


def _nonempty_list(value: Any) -> tuple[str, ...]:
    items = _text_list(value)
    if not items:
        raise _FieldError("must list at least one value")
    return items


def _id_list(value: Any) -> tuple[str, ...]:
    return tuple(_ident(v) for v in _text_list(value))


def _url(value: Any) -> str:
    text = _text(value)
    if not text.lower().startswith(("http://", "https://")) or " " in text:
        raise _FieldError(f"{clip(text)} is not an http(s) URL")
    return text


def _description(value: Any) -> str:
    text = _text(value)
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise _FieldError(
            f"is {len(text)} characters; a directory description is about 200 "
            f"(at most {MAX_DESCRIPTION_CHARS})"
        )
    return text


def _tier(value: Any) -> str:
    text = _text(value).lower()
    if text not in RISK_TIERS:
        raise _FieldError(f"{clip(value)} is not one of {', '.join(RISK_TIERS)}")
    return text


@dataclass(frozen=True)
class _Field:
    parse: Callable[[Any], Any]
    required: bool = True


QUERY_FIELDS: Mapping[str, _Field] = {
    "id": _Field(_ident),
    "jurisdiction": _Field(_state),
    "topic": _Field(_text),
    "question": _Field(_text),
    "tags": _Field(_text_list, required=False),
    "article_ids": _Field(_id_list, required=False),
}
HIGH_RISK_FIELDS: Mapping[str, _Field] = {
    **QUERY_FIELDS,
    "required_clarifying_questions": _Field(_nonempty_list),
    "failure_modes": _Field(_nonempty_list),
    "risk_tier": _Field(_tier),
    "sme_variables": _Field(_nonempty_list),
}
INDEX_FIELDS: Mapping[str, _Field] = {
    "id": _Field(_ident),
    "state": _Field(_state_or_us),
    "title": _Field(_text),
    "url": _Field(_url),
    "description": _Field(_description),
    "organization": _Field(_text),
    "topics": _Field(_text_list, required=False),
    "source": _Field(_text, required=False),
}


def iter_rows(path: str | Path, *, inside: str | Path | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, row)`` for each record: ``where`` is ``line N`` (JSONL; CSV: the line the record
    starts on) or ``record N`` (YAML, JSON).

    Args:
        path: The file; its suffix names the format.
        inside: When given, the file (symlinks resolved) must lie within this folder.

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
                raise DataError(path, f"record {i}: expected a mapping of fields")
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
            raise DataError(path, f"line {number}: {exc.problem}") from None
        if not isinstance(row, dict):
            raise DataError(path, f"line {number}: expected a JSON object")
        yield f"line {number}", row


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


def _names(names: Iterable[Any], most: int = 5) -> str:
    """Field names for a message: plain when short and printable, else clipped; at most ``most``."""
    shown = [n if len(n) <= 40 and n.isprintable() else clip(n) for n in sorted(map(str, names))]
    more = f" and {len(shown) - most} more" if len(shown) > most else ""
    return ", ".join(shown[:most]) + more


def _parse_rows(
    path: str | Path, fields: Mapping[str, _Field], inside: str | Path | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    seen: dict[str, str] = {}
    for where, row in iter_rows(path, inside=inside):
        ident = row.get("id")
        label = f"{where} (id {clip(ident)})" if isinstance(ident, str) and ident.strip() else where
        unknown = set(row) - set(fields)
        if unknown:
            raise DataError(path, f"{label}: unknown field(s) {_names(unknown)}")
        parsed: dict[str, Any] = {}
        for name, spec in fields.items():
            if name not in row or row[name] is None:
                if spec.required:
                    raise DataError(path, f"{label}: field {name!r} is missing")
                continue
            try:
                parsed[name] = spec.parse(row[name])
            except _FieldError as exc:
                raise DataError(path, f"{label}: field {name!r}: {exc}") from None
        if parsed["id"] in seen:
            raise DataError(path, f"{label}: field 'id' duplicates {seen[parsed['id']]}")
        seen[parsed["id"]] = where
        yield label, parsed


def load_queries(path: str | Path, *, inside: str | Path | None = None) -> list[Query]:
    """Load LHSQ-style queries (``inside``: the folder the file must resolve within, if any)."""
    return [Query(**row) for _, row in _parse_rows(path, QUERY_FIELDS, inside)]


def load_high_risk(path: str | Path, *, inside: str | Path | None = None) -> list[HighRiskItem]:
    """Load High-Risk Challenge items (``inside``: the folder the file must resolve within, if any)."""
    return [HighRiskItem(**row) for _, row in _parse_rows(path, HIGH_RISK_FIELDS, inside)]


def load_index(path: str | Path, *, inside: str | Path | None = None) -> dict[str, IndexRecord]:
    """Load a JKB-style content index, keyed by record id, in file order (``inside`` as above)."""
    return {row["id"]: IndexRecord(**row) for _, row in _parse_rows(path, INDEX_FIELDS, inside)}
