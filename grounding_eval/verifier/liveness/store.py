"""The SQLite cache of LIVE/DEAD results and the snapshot reader: what a check consults before the network."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

from grounding_eval.errors import DataError
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult
from grounding_eval.verifier.urls import normalize_url, url_host

if TYPE_CHECKING:
    import sqlite3  # live checks only

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (see record_page)
    fcntl = None  # type: ignore[assignment]

_SNAPSHOT_COLUMNS: Final = ("url", "status", "http_status", "checked_at")
# Optional: the citation whose section page the row records (empty for a URL's row).
_CITATION_COLUMN: Final = "citation"
_SQLITE_TIMEOUT: Final = 30.0  # seconds to wait for another process's write lock
_SQLITE_RETRIES: Final = 5
_T = TypeVar("_T")


class Cache:
    """LIVE/DEAD results by normalized URL in one SQLite file, shared by promptfoo's worker processes.

    Each row is sealed with this user's secret (:mod:`grounding_eval.user_cache`): a row this user's
    processes did not write — a planted file a config names, a copy from another machine — is a miss,
    so a cache can never make a URL nobody checked here LIVE. Without a secret nothing is kept.
    """

    def __init__(self, path: Path) -> None:
        """Create the file and its table if missing; raise DataError if it is not a usable SQLite file."""
        self._path = path
        import sqlite3

        try:
            path.parent.mkdir(parents=True, exist_ok=True)

            def create(db: sqlite3.Connection) -> None:
                # WAL lets readers proceed while another process writes; the setting is stored in the file.
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("CREATE TABLE IF NOT EXISTS sealed (url TEXT PRIMARY KEY, entry TEXT NOT NULL)")

            _with_db(path, create)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise DataError(path, f"cannot use as liveness cache: {exc}") from exc

    def get(self, key: str) -> LivenessResult | None:
        from grounding_eval.user_cache import unseal

        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT entry FROM sealed WHERE url = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        entry = _with_db(self._path, read)
        row = None if entry is None else unseal("liveness", key, entry)
        if not (
            isinstance(row, list)
            and len(row) == 4
            and row[0] in (Liveness.LIVE.value, Liveness.DEAD.value)
            and (row[1] is None or isinstance(row[1], int))
            and all(isinstance(v, str) for v in row[2:])
        ):
            return None
        status, http_status, detail, checked_at = row
        return LivenessResult(Liveness(status), f"cached {checked_at}: {detail}", http_status)

    def put(self, key: str, result: LivenessResult) -> None:
        import datetime as dt

        from grounding_eval.user_cache import seal

        checked_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        entry = seal("liveness", key, [result.status.value, result.http_status, result.detail, checked_at])
        if entry is None:
            return  # no secret: nothing is kept (a check costs a request again, never a wrong result)

        def write(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO sealed (url, entry) VALUES (?, ?)", (key, entry))

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
    """Read a snapshot CSV into {normalized URL: result}; raise DataError naming the line on a problem.

    Rows with a ``citation`` (a section's page, recorded by a live citation check: see
    :func:`load_page_snapshot`) are not URL results and are left out.
    """
    return _read_snapshot(path)[0]


def load_page_snapshot(path: Path) -> dict[tuple[str, str], LivenessResult]:
    """The snapshot's section-page rows: {(normalized URL, citation): result}, LIVE meaning the page was
    that section's page and DEAD that it does not exist (what a live citation check decided)."""
    return _read_snapshot(path)[1]


def _read_snapshot(path: Path) -> tuple[dict[str, LivenessResult], dict[tuple[str, str], LivenessResult]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in _SNAPSHOT_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise DataError(path, f"missing column(s): {', '.join(missing)}")
            urls: dict[str, LivenessResult] = {}
            pages: dict[tuple[str, str], LivenessResult] = {}
            first_line: dict[object, int] = {}
            for row in reader:
                line = reader.line_num
                result = _snapshot_row(path, line, row)
                citation = " ".join((row.get(_CITATION_COLUMN) or "").split())
                key = normalize_url(row["url"])
                seen: dict[Any, LivenessResult] = pages if citation else urls
                entry: object = (key, citation) if citation else key
                if entry in seen and seen[entry].status is not result.status:
                    raise DataError(
                        path, f"line {line}: {row['url']!r} contradicts line {first_line[entry]} (same page)"
                    )
                seen.setdefault(entry, result)
                first_line.setdefault(entry, line)
            return urls, pages
    except FileNotFoundError as exc:
        raise DataError(path, "file not found") from exc
    except UnicodeDecodeError as exc:
        raise DataError(path, "not UTF-8 text") from exc
    except csv.Error as exc:
        raise DataError(path, f"not valid CSV: {exc}") from exc


def record_page(path: Path, url: str, citation: str, result: LivenessResult) -> None:
    """Append a section-page row (``citation`` set) to the snapshot at ``path``, unless that page and
    citation are recorded already; create the file, or add the ``citation`` column to its header, as
    needed. LIVE and DEAD only (an UNKNOWN may be fine tomorrow: never recorded).

    promptfoo runs assertions in parallel processes: the read and the write happen under an exclusive
    ``flock`` on the file (skipped where ``fcntl`` does not exist, as for the review queue), so a page is
    recorded once and rows never interleave.

    Raises:
        OSError: the file cannot be written (the caller says so in the finding's reason).
    """
    import datetime as dt

    if result.status is Liveness.UNKNOWN:
        return
    checked_at = dt.datetime.now(dt.UTC).date().isoformat()
    code = "" if result.http_status is None else str(result.http_status)
    new = {"url": url, "status": result.status.value, "http_status": code, "checked_at": checked_at,
           _CITATION_COLUMN: citation}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+", encoding="utf-8", newline="") as handle:
        _lock(handle)
        try:
            handle.seek(0)
            text = handle.read()
            rows = list(csv.DictReader(io.StringIO(text))) if text.strip() else []
            header = next(csv.reader(io.StringIO(text)), []) if text.strip() else []
            key = normalize_url(url)
            for row in rows:
                if (
                    normalize_url(row.get("url") or "") == key
                    and (row.get(_CITATION_COLUMN) or "") == citation
                ):
                    return
            if _CITATION_COLUMN not in header:
                columns = [*(header or _SNAPSHOT_COLUMNS), _CITATION_COLUMN]
                out = io.StringIO()
                writer = csv.DictWriter(out, columns, lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)
                handle.seek(0)
                handle.truncate()
                handle.write(out.getvalue())
            else:
                columns = header
                if text and not text.endswith("\n"):
                    handle.write("\n")
            line = io.StringIO()
            csv.DictWriter(line, columns, lineterminator="\n", extrasaction="ignore").writerow(new)
            handle.write(line.getvalue())
            handle.flush()
        finally:
            _unlock(handle)


def _lock(handle: IO[str]) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def _unlock(handle: IO[str]) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


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
