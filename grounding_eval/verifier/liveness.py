"""Decide whether a URL outside the allowlist is a real page (LIVE), a made-up one (DEAD), or unknown.

A URL that is not in the allowlist may still be a real page; asking the web is the only way to tell a
hallucinated link from an unlisted one. That question has to be answered carefully:

* **Never guess.** Only HTTP 404 and 410 mean DEAD. A missing network, a DNS failure, a timeout, bot
  blocking (401/403/429) and server errors are UNKNOWN — an evaluation run offline must not turn every
  link into a "hallucination".
* **Never be a proxy into the local network.** Answers are untrusted text; a URL such as
  ``http://169.254.169.254/`` must not make the grader fetch cloud metadata. Every hop's host is
  resolved first and private, loopback, link-local, reserved, multicast and unspecified addresses are
  refused unless the host is explicitly allowed (tests allow ``127.0.0.1``). Redirects are followed by
  hand so each target is checked. Proxy settings from the environment are ignored for the same reason:
  through a proxy, the address check would check the wrong machine.
* **Be reproducible.** A snapshot CSV (``url,status,http_status,checked_at``) of recorded results is
  consulted first, online or offline, so a run can be repeated years later; an on-disk SQLite cache
  avoids asking the same question twice, and is shared safely by promptfoo's parallel worker processes.
  Offline mode reads only the snapshot, never the cache: an offline result must not depend on what
  happened to be fetched on this machine before.

A GET is sent whenever HEAD does not answer 2xx or a redirect, not only on 405/501: many servers answer
HEAD wrongly (403, 404, 500), and a DEAD verdict — which the report calls a hallucination — should rest
on the response a browser would get. Response bodies are never read.

Known limit: the host is resolved once for the check and again by ``requests`` for the request, so a DNS
answer that changes in between (DNS rebinding) is not caught.
"""

from __future__ import annotations

import csv
import datetime as dt
import enum
import ipaddress
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar
from urllib.parse import urljoin

from grounding_eval.errors import DataError
from grounding_eval.verifier.urls import normalize_url, url_host

if TYPE_CHECKING:  # requests costs ~150 ms to import: only a live check needs it
    import requests

__all__ = ["USER_AGENT", "Liveness", "LivenessChecker", "LivenessResult"]

USER_AGENT: Final = "grounding-eval-linkcheck/0.1"
"""Sent with every request, so site owners can see what is asking."""

_REDIRECT_CODES: Final = frozenset({301, 302, 303, 307, 308})
_DEAD_CODES: Final = frozenset({404, 410})
_SNAPSHOT_COLUMNS: Final = ("url", "status", "http_status", "checked_at")
_SQLITE_TIMEOUT: Final = 30.0  # seconds to wait for another process's write lock
_SQLITE_RETRIES: Final = 5
_T = TypeVar("_T")


class Liveness(enum.Enum):
    """What is known about a URL on the web."""

    LIVE = "LIVE"
    DEAD = "DEAD"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class LivenessResult:
    """The answer for one URL.

    Attributes:
        status: LIVE, DEAD or UNKNOWN.
        detail: Why, for a human: ``"HTTP 404"``, ``"refused: loopback address 127.0.0.1"``,
            ``"offline mode"``, ``"DNS lookup failed"``, ``"snapshot 2026-11-30: HTTP 200"``.
        http_status: The final HTTP status, when there was one.
    """

    status: Liveness
    detail: str
    http_status: int | None


class LivenessChecker:
    """Checks URLs against a snapshot, a cache and (unless offline) the web.

    The snapshot is read and validated when the checker is built, so a bad file fails before a run
    starts rather than halfway through it.
    """

    def __init__(
        self,
        *,
        offline: bool,
        cache_path: Path | None,
        snapshot_path: Path | None = None,
        allow_hosts: Iterable[str] = (),
        timeout: float = 5.0,
        max_redirects: int = 3,
    ) -> None:
        """Build a checker.

        Args:
            offline: Never touch the network; URLs not in the snapshot are UNKNOWN.
            cache_path: SQLite file for LIVE/DEAD results (created if missing), or ``None`` for no cache.
            snapshot_path: Recorded results (CSV ``url,status,http_status,checked_at``) consulted first.
            allow_hosts: Hosts or IP literals exempt from the private-address refusal.
            timeout: Seconds allowed to connect, and to wait for each read.
            max_redirects: Redirects followed before giving up (UNKNOWN).

        Raises:
            DataError: The snapshot is missing or malformed, or the cache is not a usable SQLite file.
        """
        self._offline = offline
        self._cache_path = cache_path
        self._allow_hosts = frozenset(_canonical_allowed(h) for h in allow_hosts)
        self._timeout = timeout
        self._max_redirects = max_redirects
        self._snapshot = _load_snapshot(snapshot_path) if snapshot_path is not None else {}
        self._session: requests.Session | None = None
        if cache_path is not None:
            self._init_cache(cache_path)

    def check(self, url: str) -> LivenessResult:
        """Return what is known about ``url``: snapshot first, then the cache, then the web.

        Args:
            url: An absolute http(s) URL (a :class:`~grounding_eval.verifier.urls.UrlMention` ``url``).

        Returns:
            The result; UNKNOWN whenever the answer is not certain.
        """
        key = normalize_url(url)
        recorded = self._snapshot.get(key)
        if recorded is not None:
            return recorded
        if self._offline:
            return LivenessResult(Liveness.UNKNOWN, "offline mode", None)
        cached = self._cache_get(key)
        if cached is not None:
            return cached
        result = self._fetch(url)
        if result.status is not Liveness.UNKNOWN:  # an UNKNOWN may be fine tomorrow; never remember it
            self._cache_put(key, result)
        return result

    # --- network ---------------------------------------------------------------------------------------

    def _fetch(self, url: str) -> LivenessResult:
        import requests

        if self._session is None:
            self._session = requests.Session()
            self._session.trust_env = False  # no proxies from the environment: see module docstring
            self._session.headers["User-Agent"] = USER_AGENT
        current = url
        for hop in range(self._max_redirects + 1):
            if not current.lower().startswith(("http://", "https://")):
                return LivenessResult(Liveness.UNKNOWN, f"not an http(s) URL: {current}", None)
            refusal = self._refusal(current)
            if refusal is not None:
                return refusal
            try:
                code, location = self._request(current)
            except (requests.RequestException, ValueError) as exc:
                return LivenessResult(Liveness.UNKNOWN, f"connection failed: {type(exc).__name__}", None)
            after = f" after {hop} redirect{'s' if hop != 1 else ''}" if hop else ""
            if code in _REDIRECT_CODES:
                if not location:
                    return LivenessResult(Liveness.UNKNOWN, f"HTTP {code} without Location", code)
                try:
                    current = urljoin(current, location)
                except ValueError:
                    return LivenessResult(Liveness.UNKNOWN, f"HTTP {code} with a malformed Location", code)
                continue
            if 200 <= code < 300:
                return LivenessResult(Liveness.LIVE, f"HTTP {code}{after}", code)
            if code in _DEAD_CODES:
                return LivenessResult(Liveness.DEAD, f"HTTP {code}{after}", code)
            return LivenessResult(Liveness.UNKNOWN, f"HTTP {code}{after}", code)
        return LivenessResult(Liveness.UNKNOWN, f"more than {self._max_redirects} redirects", None)

    def _request(self, url: str) -> tuple[int, str | None]:
        """HEAD, then GET unless HEAD gave 2xx or a redirect; return (status, Location)."""
        assert self._session is not None
        with self._session.head(url, allow_redirects=False, timeout=self._timeout) as response:
            code, location = response.status_code, response.headers.get("Location")
        if 200 <= code < 300 or code in _REDIRECT_CODES:
            return code, location
        # stream=True: the body is never downloaded; closing the response drops the connection.
        with self._session.get(url, allow_redirects=False, timeout=self._timeout, stream=True) as response:
            return response.status_code, response.headers.get("Location")

    def _refusal(self, url: str) -> LivenessResult | None:
        """Return an UNKNOWN result if ``url``'s host must not be contacted, else ``None``."""
        host = url_host(url)
        if host is None:
            return LivenessResult(Liveness.UNKNOWN, "refused: unparsable host", None)
        if host in self._allow_hosts:
            return None
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return LivenessResult(Liveness.UNKNOWN, "DNS lookup failed", None)
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
            kind = _forbidden_kind(address)
            if kind is not None:
                return LivenessResult(Liveness.UNKNOWN, f"refused: {kind} address {address}", None)
        return None

    # --- cache -----------------------------------------------------------------------------------------

    def _init_cache(self, path: Path) -> None:
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

    def _cache_get(self, key: str) -> LivenessResult | None:
        if self._cache_path is None:
            return None

        def read(db: sqlite3.Connection) -> tuple[str, int | None, str, str] | None:
            row = db.execute(
                "SELECT status, http_status, detail, checked_at FROM liveness WHERE url = ?", (key,)
            ).fetchone()
            return None if row is None else (str(row[0]), row[1], str(row[2]), str(row[3]))

        row = _with_db(self._cache_path, read)
        if row is None or row[0] not in (Liveness.LIVE.value, Liveness.DEAD.value):
            return None
        status, http_status, detail, checked_at = row
        return LivenessResult(Liveness(status), f"cached {checked_at}: {detail}", http_status)

    def _cache_put(self, key: str, result: LivenessResult) -> None:
        if self._cache_path is None:
            return
        checked_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO liveness (url, status, http_status, detail, checked_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, result.status.value, result.http_status, result.detail, checked_at),
            )

        _with_db(self._cache_path, write)


def _with_db(path: Path, action: Callable[[sqlite3.Connection], _T]) -> _T:
    """Run ``action`` in its own short transaction, retrying while another process holds the lock.

    A connection per call (not one per checker) keeps the checker safe to use from several threads and
    keeps no file handle open between checks.
    """
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


def _canonical_allowed(host: str) -> str:
    """Spell an allowed host the way :func:`url_host` does ("LOCALHOST." → "localhost", "[::1]" → "::1")."""
    host = host.strip()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return url_host(f"http://{host}/") or host.lower()


def _forbidden_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Name the kind of non-public address (``"loopback"``, ``"private"`` ...), or ``None`` if public."""
    # Most specific first: Python counts loopback, link-local and reserved ranges as private too.
    for kind, flag in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    ):
        if flag:
            return kind
    return None if address.is_global else "non-global"  # e.g. 100.64.0.0/10 shared address space


def _load_snapshot(path: Path) -> dict[str, LivenessResult]:
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
