"""Decide whether a URL outside the allowlist is a real page (LIVE), a made-up one (DEAD), or unknown.

A URL that is not in the allowlist may still be a real page; asking the web is the only way to tell a
hallucinated link from an unlisted one. That question has to be answered carefully:

* **Never guess.** Only HTTP 404 and 410, and a DNS "no such domain" (NXDOMAIN) for the host, mean
  DEAD. A missing network, a DNS timeout, SERVFAIL or REFUSED, a name with no address, a connection
  failure, bot blocking (401/403/429) and server errors are UNKNOWN — an evaluation run offline must
  not turn every link into a "hallucination".
* **Ask DNS itself.** Before any HTTP request, a live check asks a DNS resolver for the host's A (then
  AAAA) record with dnspython. ``socket.getaddrinfo`` cannot do this job: its "name not known" is also
  what a machine without any DNS answers, while an NXDOMAIN response is a resolver's statement that the
  name does not exist. The resolver is the system's (``/etc/resolv.conf``), one nameserver given as
  ``host:port`` (``dns_server`` in the configuration), or any object with a ``resolve(host)`` method
  (:class:`DnsResolver`); without a readable configuration the answer is UNKNOWN, never DEAD. IP
  literals, ``localhost`` names and ``allow_hosts`` are not asked about. dnspython is imported only by
  a live check. Known limit: a filtering resolver (a blocklist answering NXDOMAIN) makes a blocked
  site DEAD; point ``dns_server`` at an unfiltered resolver for a live round.
* **Never be a proxy into the local network.** Answers are untrusted text; a URL such as
  ``http://169.254.169.254/`` must not make the grader fetch cloud metadata. Every hop's host is
  resolved first and private, loopback, link-local, reserved, multicast and unspecified addresses are
  refused unless the host is explicitly allowed (tests allow ``127.0.0.1``). Allowing an address
  does not allow names that resolve to it: anyone can point a DNS name at an internal address.
  Redirects are followed by hand so each target is checked. Proxy settings from the environment are
  ignored for the same reason: through a proxy, the address check would check the wrong machine.
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
from typing import TYPE_CHECKING, Final, Protocol, TypeVar
from urllib.parse import urljoin

from grounding_eval.errors import DataError
from grounding_eval.verifier.urls import is_address_host, is_localhost_name, normalize_url, url_host

if TYPE_CHECKING:  # requests (~150 ms) and dnspython (~70 ms) are imported by a live check only
    import dns.resolver
    import requests

__all__ = [
    "USER_AGENT",
    "DnsOutcome",
    "DnsResolver",
    "DnsVerdict",
    "DnspythonResolver",
    "Liveness",
    "LivenessChecker",
    "LivenessResult",
    "parse_nameserver",
]

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
            ``"offline mode"``, ``"DNS: no such domain (NXDOMAIN) help.example.org"``,
            ``"DNS: server failure (SERVFAIL)"``, ``"snapshot 2026-11-30: HTTP 200"``.
        http_status: The final HTTP status, when there was one.
    """

    status: Liveness
    detail: str
    http_status: int | None


class DnsVerdict(enum.Enum):
    """What DNS said about a host name."""

    EXISTS = "EXISTS"  # it has an A or AAAA record
    NO_SUCH_DOMAIN = "NO_SUCH_DOMAIN"  # NXDOMAIN: the name does not exist
    UNKNOWN = "UNKNOWN"  # timeout, SERVFAIL, REFUSED, no address record, no resolver


@dataclass(frozen=True)
class DnsOutcome:
    """One DNS answer about a host.

    Attributes:
        verdict: EXISTS, NO_SUCH_DOMAIN or UNKNOWN.
        detail: Why, for a human: ``"DNS: no such domain (NXDOMAIN) help.example.org"``,
            ``"DNS: server failure (SERVFAIL)"``, ``"no DNS resolver configured"``.
    """

    verdict: DnsVerdict
    detail: str


class DnsResolver(Protocol):
    """Anything that can say whether a host name exists (tests inject their own)."""

    def resolve(self, host: str) -> DnsOutcome:
        """Return what DNS says about ``host`` (lower-case ASCII, no trailing dot); never raise."""
        ...


def parse_nameserver(text: str) -> tuple[str, int]:
    """Read ``"127.0.0.1:5353"``, ``"[::1]:5353"``, ``"::1"`` or ``"10.0.0.1"`` (port 53) as (address, port).

    Args:
        text: An IP address with an optional port; a host name is not accepted (a nameserver is what
            resolves names).

    Returns:
        The address as written by :mod:`ipaddress` and the port.

    Raises:
        ValueError: Not an IP address with an optional port 1-65535.
    """
    raw = text.strip()
    if raw.startswith("["):
        address, close, rest = raw[1:].partition("]")
        if not close or (rest and not rest.startswith(":")):
            address, rest = "", ""
        port_text = rest[1:] if rest else None
    elif raw.count(":") == 1:
        address, _, port_text = raw.partition(":")
    else:
        address, port_text = raw, None  # bare IPv4, or bare IPv6 (several colons)
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(
            f"must be an IP address with an optional port, e.g. 127.0.0.1:5353, not {text!r}"
        ) from None
    if port_text is None:
        return str(parsed), 53
    if not (port_text.isascii() and port_text.isdigit() and 1 <= int(port_text) <= 65535):
        raise ValueError(f"port must be 1-65535, not {port_text!r}")
    return str(parsed), int(port_text)


class DnspythonResolver:
    """Asks one nameserver, or the system's configured ones, with dnspython.

    Nothing is read or imported until the first question: an offline run never pays for dnspython and
    never needs a resolver configuration.
    """

    def __init__(
        self,
        nameserver: str | None = None,
        *,
        lifetime: float = 5.0,
        resolv_conf: str | Path = "/etc/resolv.conf",
    ) -> None:
        """Describe the resolver.

        Args:
            nameserver: ``"address[:port]"`` of the one nameserver to ask (see :func:`parse_nameserver`),
                or ``None`` for the system configuration.
            lifetime: Seconds allowed for the whole question, A and AAAA together.
            resolv_conf: Where the system configuration is read from (POSIX; Windows uses its registry).

        Raises:
            ValueError: ``nameserver`` is not an IP address with an optional port.
        """
        self._nameserver = parse_nameserver(nameserver) if nameserver is not None else None
        self._lifetime = lifetime
        self._resolv_conf = str(resolv_conf)
        self._resolver: dns.resolver.Resolver | None = None
        self._configured: bool | None = None  # None: not tried yet

    def resolve(self, host: str) -> DnsOutcome:
        """Ask for A, then AAAA if the name has no A record; map the answer to a verdict."""
        import dns.exception
        import dns.name
        import dns.resolver

        resolver = self._get_resolver()
        if resolver is None:
            return DnsOutcome(DnsVerdict.UNKNOWN, "no DNS resolver configured")
        deadline = time.monotonic() + self._lifetime
        try:
            name = dns.name.from_text(host)  # absolute: no search domains are ever appended
            for rdtype in ("A", "AAAA"):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return self._timed_out()
                try:
                    resolver.resolve(name, rdtype, search=False, lifetime=remaining)
                except dns.resolver.NoAnswer:
                    continue
                return DnsOutcome(DnsVerdict.EXISTS, f"DNS: {host} has an {rdtype} record")
        except dns.resolver.NXDOMAIN:
            return DnsOutcome(DnsVerdict.NO_SUCH_DOMAIN, f"DNS: no such domain (NXDOMAIN) {host}")
        except dns.exception.Timeout:
            return self._timed_out()
        except dns.resolver.NoNameservers as exc:
            return DnsOutcome(DnsVerdict.UNKNOWN, "DNS: " + _nameserver_failures(exc))
        except (dns.exception.DNSException, OSError, ValueError) as exc:
            return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: query failed ({type(exc).__name__})")
        return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: {host} exists but has no address (no A or AAAA record)")

    def _timed_out(self) -> DnsOutcome:
        return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: no answer within {self._lifetime:g} s (timeout)")

    def _get_resolver(self) -> dns.resolver.Resolver | None:
        if self._configured is None:
            import dns.resolver

            try:
                if self._nameserver is None:
                    self._resolver = dns.resolver.Resolver(filename=self._resolv_conf)
                else:
                    self._resolver = dns.resolver.Resolver(configure=False)
                    self._resolver.nameservers = [self._nameserver[0]]
                    self._resolver.port = self._nameserver[1]
            except (dns.resolver.NoResolverConfiguration, OSError, ValueError):
                self._resolver = None
            self._configured = self._resolver is not None
        return self._resolver


def _nameserver_failures(exc: Exception) -> str:
    """Say why every nameserver failed, e.g. ``"server failure (SERVFAIL)"``."""
    names = {"SERVFAIL": "server failure (SERVFAIL)", "REFUSED": "query refused (REFUSED)"}
    texts: list[str] = []
    errors = getattr(exc, "kwargs", {}).get("errors") or []
    for error in errors:
        # dnspython records (server, tcp, port, rcode text or exception, response) per attempt.
        cause = error[3] if len(error) > 3 else None
        text = names.get(cause, cause) if isinstance(cause, str) else f"query failed ({type(cause).__name__})"
        if text not in texts:
            texts.append(text)
    return "; ".join(texts) or "no nameserver answered"


class LivenessChecker:
    """Checks URLs against a snapshot, a cache and (unless offline) DNS and the web.

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
        dns_resolver: str | DnsResolver | None = None,
    ) -> None:
        """Build a checker.

        Args:
            offline: Never touch the network; URLs not in the snapshot are UNKNOWN.
            cache_path: SQLite file for LIVE/DEAD results (created if missing), or ``None`` for no cache.
            snapshot_path: Recorded results (CSV ``url,status,http_status,checked_at``) consulted first.
            allow_hosts: Hosts or IP literals exempt from the private-address refusal and from the DNS
                question (the operator vouches for them; they may exist only in ``/etc/hosts``). An
                allowed address is allowed as a literal in the URL only, not as a name's address.
            timeout: Seconds allowed to connect, to wait for each read, and for each DNS question.
            max_redirects: Redirects followed before giving up (UNKNOWN).
            dns_resolver: Who answers DNS questions in live mode: ``None`` for the system configuration,
                ``"address[:port]"`` of one nameserver, or a :class:`DnsResolver`.

        Raises:
            DataError: The snapshot is missing or malformed, the cache is not a usable SQLite file, or
                ``dns_resolver`` is a string that is not an IP address with an optional port.
        """
        self._offline = offline
        self._cache_path = cache_path
        self._allow_hosts = frozenset(_canonical_allowed(h) for h in allow_hosts)
        self._timeout = timeout
        if dns_resolver is None or isinstance(dns_resolver, str):
            try:
                self._dns: DnsResolver = DnspythonResolver(dns_resolver, lifetime=timeout)
            except ValueError as exc:
                raise DataError("dns_server", str(exc)) from None
        else:
            self._dns = dns_resolver
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
            after = f" after {hop} redirect{'s' if hop != 1 else ''}" if hop else ""
            host = url_host(current)
            if host is None:
                return LivenessResult(Liveness.UNKNOWN, "refused: unparsable host", None)
            # Every hop, like the address check: a redirect into a name that does not exist leads the
            # reader nowhere, just as a redirect to a 404 does.
            unresolved = self._dns_check(host, after)
            if unresolved is not None:
                return unresolved
            refusal = self._refusal(host)
            if refusal is not None:
                return refusal
            try:
                code, location = self._request(current)
            except (requests.RequestException, ValueError) as exc:
                return LivenessResult(Liveness.UNKNOWN, f"connection failed: {type(exc).__name__}", None)
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

    def _dns_check(self, host: str, after: str) -> LivenessResult | None:
        """Return DEAD for NXDOMAIN, UNKNOWN when DNS cannot tell, ``None`` when the name exists.

        Not asked: allowed hosts (the operator vouches for them; they may live in ``/etc/hosts`` only),
        addresses, and ``localhost`` names, which are never looked up in DNS.
        """
        if host in self._allow_hosts or is_address_host(host) or is_localhost_name(host):
            return None
        outcome = self._dns.resolve(host)
        if outcome.verdict is DnsVerdict.EXISTS:
            return None
        status = Liveness.DEAD if outcome.verdict is DnsVerdict.NO_SUCH_DOMAIN else Liveness.UNKNOWN
        return LivenessResult(status, outcome.detail + after, None)

    def _refusal(self, host: str) -> LivenessResult | None:
        """Return an UNKNOWN result if ``host`` must not be contacted, else ``None``."""
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
