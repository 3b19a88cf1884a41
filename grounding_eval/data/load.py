"""Load and validate dataset files: queries, High-Risk items and the content index.

Each format is JSON Lines (``.jsonl``, streamed line by line), CSV (``.csv``, streamed; list fields
``;``-separated) or a YAML/JSON list (``.yaml``, ``.yml``, ``.json``, for small hand-written files).
Every problem is one :class:`DataError` line naming the file, the record and the field, e.g.
``queries.jsonl: line 7 (id 'il-007'): field 'jurisdiction': unknown state code 'ZZ'``.
The field rules live in one table per format (:data:`QUERY_FIELDS` …), mirrored by the JSON Schemas in
``datasets/schemas/`` (a test keeps the two in agreement).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grounding_eval.data.records import RISK_TIERS, HighRiskItem, IndexRecord, Query
from grounding_eval.errors import DataError
from grounding_eval.files import read_text, read_yaml
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
        raise _FieldError(f"{text!r} is not an id (no spaces or slashes)")
    return text


def _state(value: Any) -> str:
    try:
        return parse_state(value)
    except ValueError as exc:
        raise _FieldError(str(exc)) from None


def _state_or_us(value: Any) -> str:
    try:
        return parse_state(value, allow_national=True)
    except ValueError as exc:
        raise _FieldError(str(exc)) from None


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
        raise _FieldError(f"{text!r} is not an http(s) URL")
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
        raise _FieldError(f"{value!r} is not one of {', '.join(RISK_TIERS)}")
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


def iter_rows(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, row)`` for each record: ``where`` is ``line N`` (JSONL, CSV) or ``record N``.

    Raises:
        DataError: the file is missing or unreadable, a line is not a JSON object, or the format is unknown.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml", ".json"):
        data = _read_json(path) if suffix == ".json" else read_yaml(path)
        if not isinstance(data, list):
            raise DataError(path, "expected a list of records")
        for i, row in enumerate(data, 1):
            if not isinstance(row, dict):
                raise DataError(path, f"record {i}: expected a mapping of fields")
            yield f"record {i}", row
        return
    if suffix not in (".jsonl", ".csv"):
        raise DataError(path, "unknown format: use .jsonl, .csv, .yaml, .yml or .json")
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror}") from None
    with handle:
        try:
            if suffix == ".csv":
                reader = csv.DictReader(handle)
                for row in reader:
                    if None in row:
                        raise DataError(path, f"line {reader.line_num}: more cells than header columns")
                    yield f"line {reader.line_num}", {k: v for k, v in row.items() if v not in (None, "")}
                return
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(path, f"line {number}: not valid JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise DataError(path, f"line {number}: expected a JSON object")
                yield f"line {number}", row
        except UnicodeDecodeError as exc:
            raise DataError(path, f"not UTF-8 text (byte {exc.start})") from None


def _read_json(path: Path) -> Any:
    # Not through the YAML parser: JSON escapes astral characters as surrogate pairs, which YAML rejects.
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON at line {exc.lineno} ({exc.msg})") from None


def _parse_rows(path: str | Path, fields: Mapping[str, _Field]) -> Iterator[tuple[str, dict[str, Any]]]:
    seen: dict[str, str] = {}
    for where, row in iter_rows(path):
        ident = row.get("id")
        label = f"{where} (id {ident!r})" if isinstance(ident, str) and ident.strip() else where
        unknown = sorted(set(row) - set(fields))
        if unknown:
            raise DataError(path, f"{label}: unknown field(s) {', '.join(map(str, unknown))}")
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


def load_queries(path: str | Path) -> list[Query]:
    """Load LHSQ-style queries."""
    return [Query(**row) for _, row in _parse_rows(path, QUERY_FIELDS)]


def load_high_risk(path: str | Path) -> list[HighRiskItem]:
    """Load High-Risk Challenge items."""
    return [HighRiskItem(**row) for _, row in _parse_rows(path, HIGH_RISK_FIELDS)]


def load_index(path: str | Path) -> dict[str, IndexRecord]:
    """Load a JKB-style content index, keyed by record id (in file order)."""
    return {row["id"]: IndexRecord(**row) for _, row in _parse_rows(path, INDEX_FIELDS)}
