"""Decide whether a URL outside the allowlist is a real page (LIVE), a made-up one (DEAD), or unknown.

A URL that is not in the allowlist may still be a real page; asking the web is the only way to tell a
hallucinated link from an unlisted one. That question has to be answered carefully:

* **Never guess.** Only HTTP 404 and 410, and a DNS "no such domain" (NXDOMAIN) for the host, mean
  DEAD. A missing network, a DNS timeout, SERVFAIL or REFUSED, a name with no address, a connection
  failure, bot blocking (401/403/429), server errors and a check cut short by a deadline are UNKNOWN —
  an evaluation run offline must not turn every link into a "hallucination".
* **Ask DNS itself.** Before any HTTP request, a live check asks a DNS resolver for the host's A (then
  AAAA) record with dnspython. ``socket.getaddrinfo`` cannot do this job: its "name not known" is also
  what a machine without any DNS answers, while an NXDOMAIN response is a resolver's statement that the
  name does not exist. The resolver is the system's (``/etc/resolv.conf``), one nameserver given as
  ``host:port`` (``dns_server`` in the configuration), or any object with a ``resolve(host, lifetime=)``
  method (:class:`DnsResolver`); without a readable configuration the answer is UNKNOWN, never DEAD. IP
  literals, ``localhost`` names and ``allow_hosts`` are not asked about. dnspython is imported only by
  a live check. Known limit: a filtering resolver (a blocklist answering NXDOMAIN) makes a blocked
  site DEAD; point ``dns_server`` at an unfiltered resolver for a live round.
* **Never be a proxy into the local network.** Answers are untrusted text; a URL such as
  ``http://169.254.169.254/`` must not make the grader fetch cloud metadata. Every hop's host is
  resolved first and private, loopback, link-local, reserved, multicast and unspecified addresses are
  refused unless the host is explicitly allowed (tests allow ``127.0.0.1``); so are IPv6 addresses that
  carry such an IPv4 address inside them (6to4 ``2002::/16``, Teredo ``2001::/32``, NAT64
  ``64:ff9b::/96``). Allowing an address does not allow names that resolve to it: anyone can point a
  DNS name at an internal address. Redirects are followed by hand so each target is checked. Proxy
  settings from the environment are ignored for the same reason: through a proxy, the address check
  would check the wrong machine.
* **Connect to exactly what was checked.** The host is read once, in the ASCII form the rest of the
  verifier uses; the addresses it resolves to are checked and the connection goes to those very
  addresses, with the host name kept in the ``Host`` header, the TLS server name (SNI) and the
  certificate check. Nothing resolves the name a second time, so a DNS answer that changes between the
  check and the request (DNS rebinding) reaches nothing, and no second URL parser can pick a different
  host. A host written in Unicode whose IDNA 2003 form (what the allowlist, the URL normalizer and the
  DNS question use: ``evilstraße.example`` → ``evilstrasse.example``) differs from its UTS-46 form (what
  browsers, ``requests`` and urllib3 use: ``xn--evilstrae-n1a.example``) is refused: the two name
  different sites, and a check of one says nothing about the link a reader would open.
* **Stay within a budget.** A server that trickles its headers one line at a time defeats every
  per-read timeout, so each URL has one wall-clock deadline (``url_deadline``, default 10 s) covering
  its DNS questions, address lookups, connections, TLS handshakes and response headers over every hop;
  each read waits at most what is left of it. :meth:`LivenessChecker.for_answer` gives one answer at
  most ``max_urls_checked`` network checks (default 50) and ``answer_budget`` seconds of them (default
  30 s); the rest are UNKNOWN ("over the per-answer limit (50 URLs checked)", "liveness budget for this
  answer spent (30 s)"). Snapshot and cache hits, and a URL repeated in the same answer, cost nothing
  and count against neither.
* **Be reproducible.** A snapshot CSV (``url,status,http_status,checked_at``) of recorded results is
  consulted first, online or offline, so a run can be repeated years later; an on-disk SQLite cache
  avoids asking the same question twice, and is shared safely by promptfoo's parallel worker processes.
  Offline mode reads only the snapshot, never the cache: an offline result must not depend on what
  happened to be fetched on this machine before.

A GET is sent whenever HEAD does not answer 2xx or a redirect, not only on 405/501: many servers answer
HEAD wrongly (403, 404, 500), and a DEAD verdict — which the report calls a hallucination — should rest
on the response a browser would get. Only the status line and headers are read, never a body. The
requests are plain HTTP/1.1 over the standard library's sockets and TLS (certificates checked against
``certifi``'s bundle, as ``requests`` does): a client of our own is what lets the connection go to the
checked address and every read be held to the deadline. Cookies set during one URL's redirects are sent
on its later hops, as a browser would; nothing is kept from one URL to the next.

Complexity per answer: at most ``max_urls_checked`` checks, each at most ``max_redirects + 1`` hops of
two requests, all within ``answer_budget`` seconds (plus one socket operation's overrun, under 10 ms
in practice); response headers are capped at 64 KiB.
"""

from __future__ import annotations

import copy
import csv
import enum
import functools
import io
import ipaddress
import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, cast
from urllib.parse import quote, urljoin, urlsplit

from grounding_eval.errors import DataError
from grounding_eval.verifier.urls import is_address_host, is_localhost_name, normalize_url, url_host

if TYPE_CHECKING:  # dnspython (~70 ms), sockets, threads, TLS and HTTP are imported by a live check only
    import http.client
    import http.cookiejar
    import socket
    import sqlite3  # (the cache: live checks only)
    import ssl

    import dns.resolver

__all__ = [
    "DEFAULT_ANSWER_BUDGET",
    "DEFAULT_MAX_URLS_CHECKED",
    "DEFAULT_URL_DEADLINE",
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

DEFAULT_URL_DEADLINE: Final = 10.0
"""Seconds one URL may take in all: DNS, addresses, connections, TLS and headers over every hop."""
DEFAULT_ANSWER_BUDGET: Final = 30.0
"""Seconds of network checks one answer may spend (see :meth:`LivenessChecker.for_answer`)."""
DEFAULT_MAX_URLS_CHECKED: Final = 50
"""Network checks one answer may make; further URLs are UNKNOWN (see :meth:`LivenessChecker.for_answer`)."""

_REDIRECT_CODES: Final = frozenset({301, 302, 303, 307, 308})
_DEAD_CODES: Final = frozenset({404, 410})
_SNAPSHOT_COLUMNS: Final = ("url", "status", "http_status", "checked_at")
_SQLITE_TIMEOUT: Final = 30.0  # seconds to wait for another process's write lock
_SQLITE_RETRIES: Final = 5
_MAX_HEADER_BYTES: Final = 64 * 1024  # status line and headers; a body is never read
_HEAD_END_RE: Final = re.compile(rb"\r?\n\r?\n")  # the blank line after the headers (bare LF tolerated)
_STATUS_LINE_RE: Final = re.compile(rb"HTTP/\d\.\d +(\d{3})(?:[ \t][^\r\n]*)?\r?")
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Characters sent as they are in a request target; everything else is percent-encoded as UTF-8.
_PATH_SAFE: Final = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE: Final = _PATH_SAFE + "?"
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix: IPv4 in the last 32 bits
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

    def resolve(self, host: str, *, lifetime: float) -> DnsOutcome:
        """Return what DNS says about ``host`` (lower-case ASCII, no trailing dot); never raise.

        ``lifetime`` is what is left of the URL's deadline in seconds: an answer later than that is
        not waited for (the checker stops the URL at its deadline whatever the resolver does).
        """
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

    def resolve(self, host: str, *, lifetime: float | None = None) -> DnsOutcome:
        """Ask for A, then AAAA if the name has no A record; map the answer to a verdict.

        Args:
            host: Lower-case ASCII host name without a trailing dot.
            lifetime: Seconds left for this question, if less than the resolver's own lifetime.
        """
        import dns.exception
        import dns.name
        import dns.resolver

        resolver = self._get_resolver()
        if resolver is None:
            return DnsOutcome(DnsVerdict.UNKNOWN, "no DNS resolver configured")
        allowed = self._lifetime if lifetime is None else min(self._lifetime, lifetime)
        deadline = time.monotonic() + allowed
        try:
            name = dns.name.from_text(host)  # absolute: no search domains are ever appended
            for rdtype in ("A", "AAAA"):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return _timed_out(allowed)
                try:
                    resolver.resolve(name, rdtype, search=False, lifetime=remaining)
                except dns.resolver.NoAnswer:
                    continue
                return DnsOutcome(DnsVerdict.EXISTS, f"DNS: {host} has an {rdtype} record")
        except dns.resolver.NXDOMAIN:
            return DnsOutcome(DnsVerdict.NO_SUCH_DOMAIN, f"DNS: no such domain (NXDOMAIN) {host}")
        except dns.exception.Timeout:
            return _timed_out(allowed)
        except dns.resolver.NoNameservers as exc:
            return DnsOutcome(DnsVerdict.UNKNOWN, "DNS: " + _nameserver_failures(exc))
        except (dns.exception.DNSException, OSError, ValueError) as exc:
            return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: query failed ({type(exc).__name__})")
        return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: {host} exists but has no address (no A or AAAA record)")

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


def _timed_out(seconds: float) -> DnsOutcome:
    return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: no answer within {seconds:g} s (timeout)")


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


class _Stop(Exception):
    """Ends one URL's check early with its result (a refusal, a failure, a deadline)."""

    def __init__(self, result: LivenessResult) -> None:
        super().__init__(result.detail)
        self.result = result


def _unknown(detail: str) -> _Stop:
    return _Stop(LivenessResult(Liveness.UNKNOWN, detail, None))


@dataclass(frozen=True)
class _Clock:
    """One URL's deadline, and what to say when it passes."""

    end: float  # time.monotonic() value
    detail: str

    def left(self) -> float:
        """Seconds left; raise :class:`_Stop` with the deadline's detail when none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise _unknown(self.detail)
        return left

    def expired(self) -> bool:
        """Whether the deadline has passed (within 10 ms: another clock may have measured it)."""
        return time.monotonic() >= self.end - 0.01


@dataclass
class _AnswerBudget:
    """What one answer has used of its network checks (see :meth:`LivenessChecker.for_answer`)."""

    max_urls: int
    seconds: float
    checked: int = 0
    spent: float = 0.0
    results: dict[str, LivenessResult] = field(default_factory=dict)  # by normalized URL


class _Shared:
    """What a checker shares with its per-answer views (built on first use)."""

    def __init__(self) -> None:
        self.tls: ssl.SSLContext | None = None


@dataclass(frozen=True)
class _Target:
    """One hop's request, read once from its URL: every later step uses these values, never the URL."""

    scheme: str  # "http" or "https"
    host: str  # lower-case ASCII (IDNA 2003, as url_host spells it); IPv6 without brackets
    port: int
    target: str  # request target: percent-encoded path and query, ASCII

    @property
    def authority(self) -> str:
        """The ``Host`` header: the host, bracketed if IPv6, with the port unless it is the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.authority}{self.target}"


class LivenessChecker:
    """Checks URLs against a snapshot, a cache and (unless offline) DNS and the web.

    The snapshot and the limits are validated when the checker is built, so a bad file or option fails
    before a run starts rather than halfway through it. Use :meth:`for_answer` for the URLs of one
    answer: the checker itself limits each URL's time but not how many URLs it is asked about.
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
        url_deadline: float = DEFAULT_URL_DEADLINE,
        answer_budget: float = DEFAULT_ANSWER_BUDGET,
        max_urls_checked: int = DEFAULT_MAX_URLS_CHECKED,
    ) -> None:
        """Build a checker.

        Args:
            offline: Never touch the network; URLs not in the snapshot are UNKNOWN.
            cache_path: SQLite file for LIVE/DEAD results (created if missing), or ``None`` for no cache.
                Offline, it is not opened at all (an offline result never depends on it), which also
                spares each of promptfoo's fresh processes opening a database.
            snapshot_path: Recorded results (CSV ``url,status,http_status,checked_at``) consulted first.
            allow_hosts: Hosts or IP literals exempt from the private-address refusal and from the DNS
                question (the operator vouches for them; they may exist only in ``/etc/hosts``). An
                allowed address is allowed as a literal in the URL only, not as a name's address.
            timeout: Seconds allowed to connect, for a TLS handshake, to wait for each read, and for
                each DNS question (each also within the URL's deadline).
            max_redirects: Redirects followed before giving up (UNKNOWN).
            dns_resolver: Who answers DNS questions in live mode: ``None`` for the system configuration,
                ``"address[:port]"`` of one nameserver, or a :class:`DnsResolver`.
            url_deadline: Seconds one URL may take in all, over every hop (> 0).
            answer_budget: Seconds of network checks one answer may spend, via :meth:`for_answer` (> 0).
            max_urls_checked: Network checks one answer may make, via :meth:`for_answer` (≥ 1).

        Raises:
            DataError: The snapshot is missing or malformed, the cache is not a usable SQLite file (live),
                ``dns_resolver`` is a string that is not an IP address with an optional port, or a
                limit is out of range (one line naming the option).
        """
        self._url_deadline = _positive_seconds("url_deadline", url_deadline)
        self._answer_budget = _positive_seconds("answer_budget", answer_budget)
        self._max_urls_checked = _positive_count("max_urls_checked", max_urls_checked)
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
        self._shared = _Shared()
        self._answer: _AnswerBudget | None = None
        if cache_path is not None and not offline:  # (offline never reads or writes the cache)
            self._init_cache(cache_path)

    def for_answer(self) -> LivenessChecker:
        """Return a view of this checker for the URLs of one answer, with the answer's own limits.

        The view shares the snapshot, the cache and the settings. It makes at most
        ``max_urls_checked`` network checks and spends at most ``answer_budget`` seconds on them; a URL
        past either limit is UNKNOWN without any network traffic ("over the per-answer limit (50 URLs
        checked)", "liveness budget for this answer spent (30 s)"), and a check in progress when the
        budget runs out stops there. Snapshot and cache hits and repeats of a URL already checked for
        this answer (same normalized URL, same result) are free. Not for sharing between threads.
        """
        view = copy.copy(self)
        view._answer = _AnswerBudget(self._max_urls_checked, self._answer_budget)
        return view

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
        answer = self._answer
        if answer is not None:
            earlier = answer.results.get(key)
            if earlier is not None:
                return earlier
            if answer.checked >= answer.max_urls:
                urls = f"{answer.max_urls} URL{'s' if answer.max_urls != 1 else ''}"
                return LivenessResult(Liveness.UNKNOWN, f"over the per-answer limit ({urls} checked)", None)
            if answer.spent >= answer.seconds:
                return LivenessResult(Liveness.UNKNOWN, _budget_spent(answer), None)
            answer.checked += 1
        started = time.monotonic()
        try:
            result = self._fetch(url, self._clock(started))
        finally:
            if answer is not None:
                answer.spent += time.monotonic() - started
        if answer is not None:
            answer.results[key] = result
        if result.status is not Liveness.UNKNOWN:  # an UNKNOWN may be fine tomorrow; never remember it
            self._cache_put(key, result)
        return result

    def _clock(self, now: float) -> _Clock:
        """The deadline of a check starting ``now``: the URL's own, or the answer's budget if sooner."""
        answer = self._answer
        if answer is not None and answer.seconds - answer.spent < self._url_deadline:
            return _Clock(now + answer.seconds - answer.spent, _budget_spent(answer))
        return _Clock(
            now + self._url_deadline, f"no complete answer within {self._url_deadline:g} s (per-URL deadline)"
        )

    # --- network ---------------------------------------------------------------------------------------

    def _fetch(self, url: str, clock: _Clock) -> LivenessResult:
        current = url
        jar: http.cookiejar.CookieJar | None = None
        for hop in range(self._max_redirects + 1):
            after = f" after {hop} redirect{'s' if hop != 1 else ''}" if hop else ""
            try:
                target = _target(current)
                # Every hop, like the address check: a redirect into a name that does not exist leads
                # the reader nowhere, just as a redirect to a 404 does.
                self._dns_check(target.host, after, clock)
                addresses = self._addresses(target, clock)
                code, headers, jar = self._exchange(target, addresses, clock, jar)
            except _Stop as stop:
                return stop.result
            if code in _REDIRECT_CODES:
                location = headers.get("Location")
                if not location:
                    return LivenessResult(Liveness.UNKNOWN, f"HTTP {code} without Location", code)
                try:
                    current = urljoin(current, _utf8_header(location.strip()))
                except ValueError:
                    return LivenessResult(Liveness.UNKNOWN, f"HTTP {code} with a malformed Location", code)
                continue
            if 200 <= code < 300:
                return LivenessResult(Liveness.LIVE, f"HTTP {code}{after}", code)
            if code in _DEAD_CODES:
                return LivenessResult(Liveness.DEAD, f"HTTP {code}{after}", code)
            return LivenessResult(Liveness.UNKNOWN, f"HTTP {code}{after}", code)
        return LivenessResult(Liveness.UNKNOWN, f"more than {self._max_redirects} redirects", None)

    def _dns_check(self, host: str, after: str, clock: _Clock) -> None:
        """Stop with DEAD for NXDOMAIN or UNKNOWN when DNS cannot tell; return when the name exists.

        Not asked: allowed hosts (the operator vouches for them; they may live in ``/etc/hosts`` only),
        addresses, and ``localhost`` names, which are never looked up in DNS.
        """
        if host in self._allow_hosts or is_address_host(host) or is_localhost_name(host):
            return
        left = clock.left()
        outcome = _run_within(clock, lambda: self._dns.resolve(host, lifetime=left))
        if outcome.verdict is DnsVerdict.EXISTS:
            return
        if outcome.verdict is DnsVerdict.UNKNOWN and clock.expired():
            raise _unknown(clock.detail)  # the deadline, not the resolver's shortened lifetime, is why
        status = Liveness.DEAD if outcome.verdict is DnsVerdict.NO_SUCH_DOMAIN else Liveness.UNKNOWN
        raise _Stop(LivenessResult(status, outcome.detail + after, None))

    def _addresses(self, target: _Target, clock: _Clock) -> list[tuple[int, tuple[Any, ...]]]:
        """Resolve the host once and check every address; return (family, socket address) to connect to.

        These are the only addresses the request may use: see "Connect to exactly what was checked".
        """
        import socket

        try:
            infos = _run_within(clock, lambda: socket.getaddrinfo(target.host, None, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError):
            raise _unknown("DNS lookup failed") from None
        allowed = target.host in self._allow_hosts
        addresses: list[tuple[int, tuple[Any, ...]]] = []
        for family, _, _, _, sockaddr in infos:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            text = str(sockaddr[0])
            if not allowed:
                address = ipaddress.ip_address(text.split("%", 1)[0])
                if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                    address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
                reason = _refusal_reason(address)
                if reason is not None:
                    raise _unknown(f"refused: {reason}")
            entry = (int(family), (text, target.port, *sockaddr[2:]))
            if entry not in addresses:
                addresses.append(entry)
        if not addresses:
            raise _unknown("DNS lookup failed")
        return addresses

    def _exchange(
        self,
        target: _Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        clock: _Clock,
        jar: http.cookiejar.CookieJar | None,
    ) -> tuple[int, http.client.HTTPMessage, http.cookiejar.CookieJar | None]:
        """HEAD, then GET unless HEAD gave 2xx or a redirect; return (status, headers, cookies)."""
        code, headers, jar = self._ask("HEAD", target, addresses, clock, jar)
        if 200 <= code < 300 or code in _REDIRECT_CODES:
            return code, headers, jar
        return self._ask("GET", target, addresses, clock, jar)

    def _ask(
        self,
        method: str,
        target: _Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        clock: _Clock,
        jar: http.cookiejar.CookieJar | None,
    ) -> tuple[int, http.client.HTTPMessage, http.cookiejar.CookieJar | None]:
        """Send one request on a new connection and read the status line and headers, never the body."""
        lines = [
            f"{method} {target.target} HTTP/1.1",
            f"Host: {target.authority}",
            f"User-Agent: {USER_AGENT}",
            "Accept: */*",
            "Connection: close",
        ]
        cookie = _cookie_header(jar, target)
        if cookie is not None:
            lines.append(f"Cookie: {cookie}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        sock = self._connect(target, addresses, clock)
        try:
            self._within(sock, clock, lambda: sock.sendall(request))
            code, headers = self._read_head(sock, clock)
        finally:
            sock.close()  # without reading the body: the server may see a reset, which is fine
        if headers.get_all("Set-Cookie"):
            jar = _remember_cookies(jar, target, headers)
        return code, headers, jar

    def _connect(
        self, target: _Target, addresses: list[tuple[int, tuple[Any, ...]]], clock: _Clock
    ) -> socket.socket:
        """Connect to the first checked address that answers; for https, complete the TLS handshake.

        The TLS server name and the certificate check use the host name, not the address.
        """
        import socket

        failure: OSError | None = None
        for family, sockaddr in addresses:
            wait = self._wait(clock)
            try:
                sock = socket.socket(family, socket.SOCK_STREAM)
            except OSError as exc:  # e.g. no IPv6 on this machine
                failure = exc
                continue
            try:
                sock.settimeout(wait)
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                if isinstance(exc, TimeoutError) and wait < self._timeout:
                    raise _unknown(clock.detail) from None
                failure = exc
                continue  # the next checked address, as a browser would
            except BaseException:
                sock.close()
                raise
            if target.scheme == "http":
                return sock
            context = self._tls_context()
            try:
                # The socket timeout bounds the whole handshake, not each of its reads.
                handshake = functools.partial(context.wrap_socket, sock, server_hostname=target.host)
                return self._within(sock, clock, handshake)
            except BaseException:
                sock.close()
                raise
        assert failure is not None  # _addresses never returns an empty list
        raise _unknown(f"connection failed: {type(failure).__name__}")

    def _read_head(self, sock: socket.socket, clock: _Clock) -> tuple[int, http.client.HTTPMessage]:
        """Read up to the end of the final response's headers (interim 1xx responses are skipped).

        Each read waits at most what is left of the deadline, so a server that sends a byte at a time
        cannot hold the check past it.
        """
        buffer = b""
        while True:
            end = _HEAD_END_RE.search(buffer)
            if end is not None:
                code, headers = _parse_head(buffer[: end.start()])
                buffer = buffer[end.end() :]
                if 100 <= code < 200 and code != 101:
                    continue  # 100 Continue, 103 Early Hints: the real answer follows
                return code, headers
            if len(buffer) > _MAX_HEADER_BYTES:
                raise _unknown(f"connection failed: response headers over {_MAX_HEADER_BYTES // 1024} KiB")
            chunk = self._within(sock, clock, lambda: sock.recv(16384))
            if not chunk:
                raise _unknown("connection failed: closed before the response headers ended")
            buffer += chunk

    def _wait(self, clock: _Clock) -> float:
        """How long one socket operation may block: the timeout, or less if the deadline is nearer."""
        return min(self._timeout, clock.left())

    def _within(self, sock: socket.socket, clock: _Clock, operation: Callable[[], _T]) -> _T:
        """Run one blocking socket operation within the deadline; turn a failure into an UNKNOWN."""
        wait = self._wait(clock)
        sock.settimeout(wait)
        try:
            return operation()
        except TimeoutError:
            if wait < self._timeout:  # cut short by the deadline, not by the server's silence
                raise _unknown(clock.detail) from None
            raise _unknown(f"connection failed: no data for {self._timeout:g} s (timeout)") from None
        except (OSError, ValueError) as exc:  # ssl.SSLError (a failed certificate check too) is an OSError
            raise _unknown(f"connection failed: {type(exc).__name__}") from None

    def _tls_context(self) -> ssl.SSLContext:
        if self._shared.tls is None:
            import ssl

            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
            context.set_alpn_protocols(["http/1.1"])
            self._shared.tls = context
        return self._shared.tls

    # --- cache -----------------------------------------------------------------------------------------

    def _init_cache(self, path: Path) -> None:
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
        import datetime as dt

        checked_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO liveness (url, status, http_status, detail, checked_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, result.status.value, result.http_status, result.detail, checked_at),
            )

        _with_db(self._cache_path, write)


def _target(url: str) -> _Target:
    """Read a hop's URL into the request to send; stop with UNKNOWN if it must not be requested.

    The host is :func:`url_host`'s; the port, path and query come from the same split of the URL, and
    the host found there must be the same one, or the request could go somewhere the check did not look.
    """
    if not url.lower().startswith(("http://", "https://")):
        raise _unknown(f"not an http(s) URL: {url}")
    host = url_host(url)
    text = re.sub(r"[\t\r\n]", "", url.strip())  # as url_host reads it, and browsers
    scheme, _, rest = text.partition("://")
    before_query, mark, after = rest.partition("?")
    rest = before_query.replace("\\", "/") + mark + after  # "\" is "/" before the query, as url_host reads it
    try:
        parts = urlsplit("http://" + rest)
    except ValueError:
        parts = None
    hostport = parts.netloc.rpartition("@")[2] if parts is not None else ""
    if hostport.startswith("["):
        raw_host, _, tail = hostport.partition("]")
        raw_host += "]"
        port_text = tail[1:] if tail.startswith(":") else tail
    else:
        raw_host, _, port_text = hostport.partition(":")
    if (
        host is None
        or parts is None
        or url_host(f"http://{raw_host}/") != host
        or not (port_text == "" or (port_text.isascii() and port_text.isdigit()))
    ):
        raise _unknown("refused: unparsable host")
    if not raw_host.isascii():
        uts46 = _uts46(raw_host)
        if uts46 != host:
            raise _unknown(
                "refused: host has different IDNA 2003 and UTS-46 encodings "
                f"({host} vs {uts46 or 'not encodable'})"
            )
    scheme = scheme.lower()
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    target = quote(_BAD_PERCENT_RE.sub("%25", parts.path or "/"), safe=_PATH_SAFE)
    if parts.query:
        target += "?" + quote(_BAD_PERCENT_RE.sub("%25", parts.query), safe=_QUERY_SAFE)
    return _Target(scheme, host, port, target)


def _uts46(host: str) -> str | None:
    """The host's ASCII form under UTS-46 (IDNA 2008 with mapping), as browsers and ``requests`` use."""
    import idna

    name = host[:-1] if host.endswith(".") else host
    try:
        return idna.encode(name, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError):
        return None


def _run_within(clock: _Clock, work: Callable[[], _T]) -> _T:
    """Run a blocking call that cannot be trusted to end on time, and give up on it at the deadline.

    ``socket.getaddrinfo`` has no timeout at all, and dnspython sleeps its retry back-off (up to 2 s)
    before it looks at its lifetime. The call runs in a daemon thread; past the deadline the check
    stops and the thread is left to end on its own (their own timeouts bound it). An exception is
    raised again here.
    """
    import threading

    box: list[tuple[bool, Any]] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append((True, work()))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="grounding-eval-lookup", daemon=True).start()
    if not done.wait(clock.left()):
        raise _unknown(clock.detail)
    succeeded, value = box[0]
    if not succeeded:
        raise value
    return cast("_T", value)


def _parse_head(block: bytes) -> tuple[int, http.client.HTTPMessage]:
    """Read a status line and headers (without the blank line that ends them)."""
    import http.client

    status_line, _, rest = block.partition(b"\n")
    match = _STATUS_LINE_RE.fullmatch(status_line)
    if match is None:
        raise _unknown("connection failed: not an HTTP response")
    try:
        headers = http.client.parse_headers(io.BytesIO(rest + b"\r\n\r\n"))
    except http.client.HTTPException:
        raise _unknown("connection failed: malformed response headers") from None
    return int(match.group(1)), headers


def _utf8_header(value: str) -> str:
    """Undo the Latin-1 reading of a header sent in UTF-8 (a Location with ``é`` in it), as requests does."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


class _CookieResponse:
    """The one method of a response :class:`http.cookiejar.CookieJar` reads."""

    def __init__(self, headers: http.client.HTTPMessage) -> None:
        self._headers = headers

    def info(self) -> http.client.HTTPMessage:
        return self._headers


def _remember_cookies(
    jar: http.cookiejar.CookieJar | None, target: _Target, headers: http.client.HTTPMessage
) -> http.cookiejar.CookieJar:
    import http.cookiejar
    import urllib.request

    jar = jar if jar is not None else http.cookiejar.CookieJar()
    jar.extract_cookies(
        cast("http.client.HTTPResponse", _CookieResponse(headers)), urllib.request.Request(target.url)
    )
    return jar


def _cookie_header(jar: http.cookiejar.CookieJar | None, target: _Target) -> str | None:
    """The Cookie header a browser would send to ``target`` from cookies set earlier in this check."""
    if jar is None:
        return None
    import urllib.request

    request = urllib.request.Request(target.url)
    jar.add_cookie_header(request)
    value = request.get_header("Cookie")
    if not value or any(c in value for c in "\r\n\0") or not value.isascii():
        return None
    return value


def _budget_spent(answer: _AnswerBudget) -> str:
    return f"liveness budget for this answer spent ({answer.seconds:g} s)"


def _positive_seconds(option: str, value: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise DataError(option, f"must be a number of seconds greater than 0, not {value!r}")
    return float(value)


def _positive_count(option: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(option, f"must be a whole number, at least 1, not {value!r}")
    return value


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


def _canonical_allowed(host: str) -> str:
    """Spell an allowed host the way :func:`url_host` does ("LOCALHOST." → "localhost", "[::1]" → "::1")."""
    host = host.strip()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return url_host(f"http://{host}/") or host.lower()


def _refusal_reason(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Say why ``address`` must not be contacted (``"loopback address 127.0.0.1"``), or ``None``.

    An IPv6 address that carries an IPv4 address (6to4, Teredo, NAT64) leads to that IPv4 address
    through a relay or gateway, so the IPv4 address is judged too. A NAT64 address of a public IPv4
    address is allowed: on an IPv6-only network it is how every IPv4-only site is reached.
    """
    if isinstance(address, ipaddress.IPv6Address):
        for label, inner in _embedded_ipv4(address):
            kind = _forbidden_kind(inner)
            if kind is not None:
                return f"{label} address {address} embeds {kind} address {inner}"
        if address in _NAT64:
            return None
    kind = _forbidden_kind(address)
    return None if kind is None else f"{kind} address {address}"


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses an IPv6 address leads to: 6to4 (bits 16-48), Teredo, NAT64 (last 32 bits)."""
    found: list[tuple[str, ipaddress.IPv4Address]] = []
    if address.sixtofour is not None:  # 2002::/16
        found.append(("6to4", address.sixtofour))
    if address.teredo is not None:  # 2001::/32: (server, client); Python undoes the client's XOR
        server, client = address.teredo
        found += [("Teredo", client), ("Teredo", server)]
    if address in _NAT64:
        found.append(("NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)))
    return found


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
