"""The SQLite cache of LIVE/DEAD results and the snapshot reader: what a check consults before the network."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from grounding_eval.errors import DataError
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult
from grounding_eval.verifier.urls import normalize_url, url_host

if TYPE_CHECKING:
    import sqlite3  # live checks only

_SNAPSHOT_COLUMNS: Final = ("url", "status", "http_status", "checked_at")
_SQLITE_TIMEOUT: Final = 30.0  # seconds to wait for another process's write lock
_SQLITE_RETRIES: Final = 5
_T = TypeVar("_T")


class Cache:
    """LIVE/DEAD results by normalized URL in one SQLite file, shared by promptfoo's worker processes."""

    def __init__(self, path: Path) -> None:
        """Create the file and its table if missing; raise DataError if it is not a usable SQLite file."""
        self._path = path
        import sqlite3

        try:
            path.parent.mkdir(parents=True, exist_ok=True)

            def create(db: sqlite3.Connection) -> None:
                # WAL lets readers proceed while another process writes; the setting is stored in the file.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS liveness (url TEXT PRIMARY KEY, status TEXT NOT NULL, "
                    "http_status INTEGER, detail TEXT NOT NULL, checked_at TEXT NOT NULL)"
                )

            _with_db(path, create)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise DataError(path, f"cannot use as liveness cache: {exc}") from exc

    def get(self, key: str) -> LivenessResult | None:

        def read(db: sqlite3.Connection) -> tuple[str, int | None, str, str] | None:
            row = db.execute(
                "SELECT status, http_status, detail, checked_at FROM liveness WHERE url = ?", (key,)
            ).fetchone()
            return None if row is None else (str(row[0]), row[1], str(row[2]), str(row[3]))

        row = _with_db(self._path, read)
        if row is None or row[0] not in (Liveness.LIVE.value, Liveness.DEAD.value):
            return None
        status, http_status, detail, checked_at = row
        return LivenessResult(Liveness(status), f"cached {checked_at}: {detail}", http_status)

    def put(self, key: str, result: LivenessResult) -> None:
        import datetime as dt

        checked_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO liveness (url, status, http_status, detail, checked_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, result.status.value, result.http_status, result.detail, checked_at),
            )

        _with_db(self._path, write)


def _with_db(path: Path, action: Callable[[sqlite3.Connection], _T]) -> _T:
    """Run ``action`` in its own short transaction, retrying while another process holds the lock.

    A connection per call (not one per checker) keeps the checker safe to use from several threads and
    keeps no file handle open between checks.
    """
    import sqlite3

    for attempt in range(_SQLITE_RETRIES):
        try:
            db = sqlite3.connect(path, timeout=_SQLITE_TIMEOUT)
            try:
                with db:
                    return action(db)
            finally:
                db.close()
        except sqlite3.OperationalError as exc:
            # The busy timeout covers most contention; switching to WAL needs an exclusive lock that
            # sqlite does not wait for, so a brief retry covers two processes creating the cache at once.
            if "locked" not in str(exc) or attempt == _SQLITE_RETRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def load_snapshot(path: Path) -> dict[str, LivenessResult]:
    """Read a snapshot CSV into {normalized URL: result}; raise DataError naming the line on a problem."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in _SNAPSHOT_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise DataError(path, f"missing column(s): {', '.join(missing)}")
            snapshot: dict[str, LivenessResult] = {}
            first_line: dict[str, int] = {}
            for row in reader:
                line = reader.line_num
                result = _snapshot_row(path, line, row)
                key = normalize_url(row["url"])
                if key in snapshot and snapshot[key].status is not result.status:
                    raise DataError(
                        path, f"line {line}: {row['url']!r} contradicts line {first_line[key]} (same page)"
                    )
                snapshot.setdefault(key, result)
                first_line.setdefault(key, line)
            return snapshot
    except FileNotFoundError as exc:
        raise DataError(path, "file not found") from exc
    except UnicodeDecodeError as exc:
        raise DataError(path, "not UTF-8 text") from exc
    except csv.Error as exc:
        raise DataError(path, f"not valid CSV: {exc}") from exc


def _snapshot_row(path: Path, line: int, row: dict[str, str | None]) -> LivenessResult:
    url = (row.get("url") or "").strip()
    status = (row.get("status") or "").strip().upper()
    code_text = (row.get("http_status") or "").strip()
    checked_at = (row.get("checked_at") or "").strip()
    if url_host(url) is None or not url.lower().startswith(("http://", "https://")):
        raise DataError(path, f"line {line}: not an http(s) URL: {url!r}")
    if status not in (Liveness.LIVE.value, Liveness.DEAD.value):
        raise DataError(path, f"line {line}: status must be LIVE or DEAD, not {status!r}")
    if code_text and not (code_text.isascii() and code_text.isdigit() and 100 <= int(code_text) <= 599):
        raise DataError(path, f"line {line}: http_status must be empty or 100-599, not {code_text!r}")
    if not checked_at:
        raise DataError(path, f"line {line}: checked_at is empty")
    code = int(code_text) if code_text else None
    detail = f"snapshot {checked_at}: " + (f"HTTP {code}" if code is not None else status)
    return LivenessResult(Liveness(status), detail, code)
