"""The network side of a liveness check: DNS questions, the private-address refusal, and one hop's
requests to exactly the checked address under the URL's deadline (the why: the package docstring)."""

from __future__ import annotations

import enum
import ipaddress
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, cast
from urllib.parse import quote, urlsplit

from grounding_eval.verifier.liveness.result import Liveness, LivenessResult
from grounding_eval.verifier.urls import is_address_host, is_localhost_name, url_host

if TYPE_CHECKING:  # dnspython (~70 ms), sockets, threads, TLS and HTTP are imported by a live check only
    import http.client
    import http.cookiejar
    import ssl

    import dns.resolver
    import urllib3
    from urllib3 import HTTPHeaderDict as Headers

USER_AGENT: Final = "grounding-eval-linkcheck/0.1"
"""Sent with every request, so site owners can see what is asking."""

REDIRECT_CODES: Final = frozenset({301, 302, 303, 307, 308})
_MAX_HEADER_BYTES: Final = 64 * 1024  # http.client's limit on one header line; a body is read only for a
# citation's page (Transport.page), and only up to the cap its caller gives
_BAD_PERCENT_RE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Characters sent as they are in a request target; everything else is percent-encoded as UTF-8.
_PATH_SAFE: Final = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE: Final = _PATH_SAFE + "?"
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix: IPv4 in the last 32 bits
_T = TypeVar("_T")


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


class Stop(Exception):
    """Ends one URL's check early with its result (a refusal, a failure, a deadline)."""

    def __init__(self, result: LivenessResult) -> None:
        super().__init__(result.detail)
        self.result = result


def unknown(detail: str) -> Stop:
    return Stop(LivenessResult(Liveness.UNKNOWN, detail, None))


@dataclass(frozen=True)
class Clock:
    """One URL's deadline, and what to say when it passes."""

    end: float  # a value of ``now``
    detail: str
    now: Callable[[], float] = time.monotonic  # the clock (tests inject their own)

    def left(self) -> float:
        """Seconds left; raise :class:`Stop` with the deadline's detail when none are."""
        left = self.end - self.now()
        if left <= 0:
            raise unknown(self.detail)
        return left

    def expired(self) -> bool:
        """Whether the deadline has passed (within 10 ms: another clock may have measured it)."""
        return self.now() >= self.end - 0.01


@dataclass(frozen=True)
class Target:
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


class Transport:
    """Asks DNS, resolves and checks addresses, and sends one hop's requests; shared by a checker's views."""

    def __init__(self, *, timeout: float, allow_hosts: Iterable[str], dns: DnsResolver) -> None:
        """Hold the settings (see :class:`~grounding_eval.verifier.liveness.LivenessChecker`)."""
        self.dns = dns
        self._timeout = timeout
        self._allow_hosts = frozenset(canonical_allowed(h) for h in allow_hosts)
        self._tls: ssl.SSLContext | None = None  # built on first use

    def dns_check(self, host: str, after: str, clock: Clock) -> None:
        """Stop with DEAD for NXDOMAIN or UNKNOWN when DNS cannot tell; return when the name exists.

        Not asked: allowed hosts (the operator vouches for them; they may live in ``/etc/hosts`` only),
        addresses, and ``localhost`` names, which are never looked up in DNS.
        """
        if host in self._allow_hosts or is_address_host(host) or is_localhost_name(host):
            return
        left = clock.left()
        outcome = _run_within(clock, lambda: self.dns.resolve(host, lifetime=left))
        if outcome.verdict is DnsVerdict.EXISTS:
            return
        if outcome.verdict is DnsVerdict.UNKNOWN and clock.expired():
            raise unknown(clock.detail)  # the deadline, not the resolver's shortened lifetime, is why
        status = Liveness.DEAD if outcome.verdict is DnsVerdict.NO_SUCH_DOMAIN else Liveness.UNKNOWN
        raise Stop(LivenessResult(status, outcome.detail + after, None))

    def addresses(self, target: Target, clock: Clock) -> list[tuple[int, tuple[Any, ...]]]:
        """Resolve the host once and check every address; return (family, socket address) to connect to.

        These are the only addresses the request may use: see "Connect to exactly what was checked".
        """
        import socket

        try:
            infos = _run_within(clock, lambda: socket.getaddrinfo(target.host, None, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError):
            raise unknown("DNS lookup failed") from None
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
                    raise unknown(f"refused: {reason}")
            entry = (int(family), (text, target.port, *sockaddr[2:]))
            if entry not in addresses:
                addresses.append(entry)
        if not addresses:
            raise unknown("DNS lookup failed")
        return addresses

    def exchange(
        self,
        target: Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        clock: Clock,
        jar: http.cookiejar.CookieJar | None,
    ) -> tuple[int, Headers, http.cookiejar.CookieJar | None]:
        """HEAD, then GET unless HEAD gave 2xx or a redirect; return (status, headers, cookies)."""
        code, headers, jar, _ = self._ask("HEAD", target, addresses, clock, jar)
        if 200 <= code < 300 or code in REDIRECT_CODES:
            return code, headers, jar
        return self._ask("GET", target, addresses, clock, jar)[:3]

    def page(
        self,
        target: Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        clock: Clock,
        jar: http.cookiejar.CookieJar | None,
        limit: int,
    ) -> tuple[int, Headers, http.cookiejar.CookieJar | None, bytes]:
        """GET, and read at most ``limit`` bytes of a 2xx answer's body (decoded), within the deadline:
        return (status, headers, cookies, the body read)."""
        return self._ask("GET", target, addresses, clock, jar, limit)

    def _ask(
        self,
        method: str,
        target: Target,
        addresses: list[tuple[int, tuple[Any, ...]]],
        clock: Clock,
        jar: http.cookiejar.CookieJar | None,
        limit: int = 0,
    ) -> tuple[int, Headers, http.cookiejar.CookieJar | None, bytes]:
        """Send one request on a new connection to the first checked address that answers; read the
        status and headers, and no body but the first ``limit`` bytes of a 2xx answer's."""
        headers = {"Host": target.authority, "User-Agent": USER_AGENT, "Accept": "*/*", "Connection": "close"}
        cookie = _cookie_header(jar, target)
        if cookie is not None:
            headers["Cookie"] = cookie
        failure: OSError | None = None
        for address in addresses:
            wait = min(self._timeout, clock.left())
            try:
                response, body = self._send(method, target, address, headers, wait, clock, limit)
            except _NextAddress as next_address:
                failure = next_address.cause
                continue  # the next checked address, as a browser would
            try:
                code, received = response.status, response.headers
                if received.get_all("Set-Cookie"):
                    jar = _remember_cookies(jar, target, response)
            finally:
                response.close()  # without reading the rest: the server may see a reset, which is fine
            return code, received, jar, body
        assert failure is not None  # addresses() never returns an empty list
        raise unknown(f"connection failed: {type(failure).__name__}")

    def _send(
        self,
        method: str,
        target: Target,
        address: tuple[int, tuple[Any, ...]],
        headers: dict[str, str],
        wait: float,
        clock: Clock,
        limit: int = 0,
    ) -> tuple[urllib3.BaseHTTPResponse, bytes]:
        """One request to ``address`` under urllib3, its failures read into UNKNOWN details; and, with a
        ``limit``, that much of a 2xx answer's body, read while its connection is open."""
        import urllib3

        from grounding_eval.verifier.liveness import pinned

        ip = str(address[1][0])
        options: dict[str, Any] = {
            "timeout": urllib3.Timeout(connect=wait, read=wait),
            "retries": False,
            "maxsize": 1,
            "address": address,
            "end": clock.end,
            "read_timeout": self._timeout,
        }
        pool: urllib3.HTTPConnectionPool
        if target.scheme == "https":
            # No assert_hostname: it would swap OpenSSL's check of server_hostname (in the handshake,
            # as requests has it) for urllib3's own matcher, which logs the certificate on a mismatch.
            pool = pinned.PinnedHTTPSConnectionPool(
                ip,
                target.port,
                server_hostname=target.host,
                ssl_context=self._tls_context(),
                **options,
            )
        else:
            pool = pinned.PinnedHTTPConnectionPool(ip, target.port, **options)
        try:
            try:
                response = pool.urlopen(
                    method,
                    target.target,
                    headers=headers,
                    redirect=False,
                    assert_same_host=False,
                    preload_content=False,
                    decode_content=False,
                )
            except Exception as exc:  # urllib3 wraps what failed; the innermost error says why
                cause = _innermost(exc)
                if isinstance(cause, pinned.ConnectFailed):
                    if isinstance(cause.cause, TimeoutError) and wait < self._timeout:
                        raise unknown(clock.detail) from None
                    raise _NextAddress(cause.cause) from None
                if clock.expired():  # a read the deadline shortened, or no time left for one
                    raise unknown(clock.detail) from None
                raise unknown(_failure(cause, self._timeout)) from None
            if not limit or not 200 <= response.status < 300:
                return response, b""
            try:  # the body is read before the pool (and with it the connection) is closed
                return response, _read_body(response, limit, clock, self._timeout)
            except Stop:
                response.close()
                raise
        finally:
            pool.close()

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            import ssl

            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
            context.set_alpn_protocols(["http/1.1"])
            self._tls = context
        return self._tls


def _read_body(response: urllib3.BaseHTTPResponse, limit: int, clock: Clock, timeout: float) -> bytes:
    """At most ``limit`` bytes of the body, decoded as its Content-Encoding says; stop with UNKNOWN when
    the deadline passes or the connection fails while reading."""
    try:
        data: bytes = response.read(amt=limit, decode_content=True)
    except Exception as exc:  # urllib3 wraps what failed; the innermost error says why
        if clock.expired():
            raise unknown(clock.detail) from None
        raise unknown(
            _failure(_innermost(exc), timeout).replace("failed", "failed reading the page")
        ) from None
    return data[:limit]


def target(url: str) -> Target:
    """Read a hop's URL into the request to send; stop with UNKNOWN if it must not be requested.

    The host is :func:`url_host`'s; the port, path and query come from the same split of the URL, and
    the host found there must be the same one, or the request could go somewhere the check did not look.
    """
    if not url.lower().startswith(("http://", "https://")):
        raise unknown(f"not an http(s) URL: {url}")
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
        raise unknown("refused: unparsable host")
    if not raw_host.isascii():
        uts46 = _uts46(raw_host)
        if uts46 != host:
            raise unknown(
                "refused: host has different IDNA 2003 and UTS-46 encodings "
                f"({host} vs {uts46 or 'not encodable'})"
            )
    scheme = scheme.lower()
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    target = quote(_BAD_PERCENT_RE.sub("%25", parts.path or "/"), safe=_PATH_SAFE)
    if parts.query:
        target += "?" + quote(_BAD_PERCENT_RE.sub("%25", parts.query), safe=_QUERY_SAFE)
    return Target(scheme, host, port, target)


def _uts46(host: str) -> str | None:
    """The host's ASCII form under UTS-46 (IDNA 2008 with mapping), as browsers and ``requests`` use."""
    import idna

    name = host[:-1] if host.endswith(".") else host
    try:
        return idna.encode(name, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError):
        return None


def _run_within(clock: Clock, work: Callable[[], _T]) -> _T:
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
        raise unknown(clock.detail)
    succeeded, value = box[0]
    if not succeeded:
        raise value
    return cast("_T", value)


class _NextAddress(Exception):
    """The connection to one checked address failed; the next one may answer."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _innermost(exc: BaseException) -> BaseException:
    """The error under urllib3's wrappers (``ProtocolError``, ``SSLError``, ``ReadTimeoutError`` ...)."""
    import urllib3.exceptions

    for _ in range(8):
        if not isinstance(exc, urllib3.exceptions.HTTPError):
            break
        inner = next((a for a in exc.args if isinstance(a, BaseException)), None)
        inner = inner or exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def _failure(cause: BaseException, timeout: float) -> str:
    """The detail of a request that failed after its connection was made."""
    import http.client

    from grounding_eval.verifier.liveness import pinned

    if isinstance(cause, TimeoutError):
        return f"connection failed: no data for {timeout:g} s (timeout)"
    if isinstance(cause, pinned.HeadersCutShort | http.client.RemoteDisconnected):
        return "connection failed: closed before the response headers ended"
    if isinstance(cause, http.client.LineTooLong):
        return f"connection failed: response headers over {_MAX_HEADER_BYTES // 1024} KiB"
    if isinstance(cause, http.client.BadStatusLine):
        return "connection failed: not an HTTP response"
    if isinstance(cause, http.client.HTTPException):
        return "connection failed: malformed response headers"
    return f"connection failed: {type(cause).__name__}"


def utf8_header(value: str) -> str:
    """Undo the Latin-1 reading of a header sent in UTF-8 (a Location with ``é`` in it), as requests does."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _remember_cookies(
    jar: http.cookiejar.CookieJar | None, target: Target, response: urllib3.BaseHTTPResponse
) -> http.cookiejar.CookieJar:
    import http.cookiejar
    import urllib.request

    jar = jar if jar is not None else http.cookiejar.CookieJar()
    # The jar reads only the response's info(), which urllib3's response has.
    jar.extract_cookies(cast("http.client.HTTPResponse", response), urllib.request.Request(target.url))
    return jar


def _cookie_header(jar: http.cookiejar.CookieJar | None, target: Target) -> str | None:
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


def canonical_allowed(host: str) -> str:
    """Spell an allowed host the way :func:`url_host` does ("LOCALHOST." → "localhost", "[::1]" → "::1")."""
    host = host.strip()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return url_host(f"http://{host}/") or host.lower()


def _refusal_reason(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Say why ``address`` must not be contacted (``"loopback address 127.0.0.1"``), or ``None``.

    An IPv6 address that carries an IPv4 address (6to4, Teredo, NAT64) leads to that IPv4 address
    through a relay or gateway, so the IPv4 address is judged too. A NAT64 or 6to4 address of a public
    IPv4 address is allowed: on an IPv6-only network it is how every IPv4-only site is reached. Its prefix
    is not judged itself: Python 3.13 (and the 3.11 and 3.12 patch releases with the CVE-2024-4032 fix)
    follows IANA's registry, where 6to4 (2002::/16) is not global, so ``is_private`` holds for every 6to4
    address there and for none on 3.11.7: the verdict would depend on the Python (issue 42).
    """
    if isinstance(address, ipaddress.IPv6Address):
        for label, inner in _embedded_ipv4(address):
            kind = _forbidden_kind(inner)
            if kind is not None:
                return f"{label} address {address} embeds {kind} address {inner}"
        if address in _NAT64 or address.sixtofour is not None:
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
