"""The judge's audit log: the full rendered prompt and raw replies of each judgment, kept on disk.

A results row keeps what a reader needs to see and to join on (ids, hashes, verdicts); the bulky
evidence of how a verdict came about — the exact prompt the judge saw and every reply it gave — is
written here, one JSON file per record, named by the SHA-256 of the record's content (without its
timestamp). The row's ``audit_id`` is that name, so a record can be found from a row and checked
against it, the same judgment is stored once however often it is graded, and concurrent graders never
write the same file differently.

Retrieve a record with ``grounding-eval audit AUDIT_ID`` or ``grounding-eval audit --results
RESULTS.json ROW`` (see :mod:`grounding_eval.judge.audit_cli`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.files import read_text, write_text_atomic

__all__ = ["DEFAULT_AUDIT_DIR", "audit_id", "audit_path", "read_audit", "write_audit"]

# Beside the results it explains, not in .cache/: the only copy of each prompt and reply a judge saw.
DEFAULT_AUDIT_DIR = Path("results/audit")
_NOT_HASHED = ("timestamp",)  # when a judgment was made does not make it a different judgment


def audit_id(record: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of ``record``'s canonical JSON, without its timestamp."""
    body = {k: v for k, v in record.items() if k not in _NOT_HASHED}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()


def audit_path(directory: Path, record_id: str) -> Path:
    """Where the record ``record_id`` is (or would be) stored under ``directory``."""
    return _path(directory, record_id)


def _path(directory: Path, record_id: str) -> Path:
    if len(record_id) != 64 or any(c not in "0123456789abcdef" for c in record_id):
        raise DataError(str(directory), f"not an audit id (64 hex digits): {record_id!r}")
    return directory / record_id[:2] / f"{record_id}.json"


def write_audit(directory: Path, record: Mapping[str, Any]) -> str:
    """Store ``record`` under its :func:`audit_id` (once) and return the id.

    Raises:
        OSError: The directory or file cannot be written (the caller says so on the row).
    """
    from grounding_eval.encodable import utf8_encodable

    record = utf8_encodable(dict(record))  # a lone surrogate in an answer is written as U+FFFD, as on the row
    record_id = audit_id(record)
    path = _path(directory, record_id)
    if path.exists():
        return record_id
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"audit_id": record_id, **record}, ensure_ascii=False, indent=1, default=str)
    write_text_atomic(path, text + "\n")
    return record_id


def read_audit(directory: Path, record_id: str) -> dict[str, Any]:
    """The record stored under ``record_id``, checked against its id.

    Raises:
        DataError: No such record, unreadable, not a record, or its content no longer has that id.
    """

    path = _path(directory, record_id.strip().lower())
    if not path.is_file():
        raise DataError(path, f"no audit record {record_id} in {directory}")
    try:
        data = json.loads(read_text(path))
    except ValueError as exc:
        raise DataError(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("audit_id") != path.stem:
        raise DataError(path, "not an audit record (no matching audit_id)")
    body = {k: v for k, v in data.items() if k != "audit_id"}
    if audit_id(body) != path.stem:
        raise DataError(
            path, "the record was changed after it was written (its content no longer hashes to its id)"
        )
    return data
