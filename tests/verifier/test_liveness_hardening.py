"""Issue 8's hardening of live URL checks: IDNA, the address connected to, tunnels, deadlines, caps.

Every server here listens on 127.0.0.1. Name resolution is faked twice over: the DNS existence question
by an injected resolver, the addresses by a patched ``socket.getaddrinfo``; and an autouse guard refuses
(and records) any connection to an address other than 127.0.0.1, so a test that goes wrong fails
instead of reaching the internet. The real DNS client against a DNS stub is in ``test_dns.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import certifi
import pytest

from grounding_eval.errors import DataError
from grounding_eval.verifier import liveness
from grounding_eval.verifier.liveness import (
    DnsOutcome,
    DnsVerdict,
    Liveness,
    LivenessChecker,
    LivenessResult,
)
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources, verify
from tests.loopback import refuse_system_dns, serving

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TLS = FIXTURES / "tls"
PUBLIC = "93.184.215.14"  # a global address: only ever "connected to" through the guard below
_REAL_GETADDRINFO = socket.getaddrinfo
_REAL_CONNECT = socket.socket.connect
# Elapsed-time bounds are this many times the deadline: they catch a check that waits for the slow party,
# not a loaded machine (the outcome's detail is what says the deadline ended it).
GENEROUS = 5


# --- servers ---------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    """Records every request as (method, path, Host header, Cookie header)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log: list[tuple[str, str, str, str]] = []
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up at its deadline is expected here

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._handle()

    do_GET = do_HEAD

    def _send(self, code: int, *headers: tuple[str, str]) -> None:
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _handle(self) -> None:
        with self.server.lock:
            self.server.log.append(
                (self.command, self.path, self.headers.get("Host", ""), self.headers.get("Cookie", ""))
            )
        path = self.path.split("?", 1)[0]
        if path == "/ok":
            self._send(200)
        elif path.startswith("/slowhop/"):  # each hop well within the read timeout, all of them not
            time.sleep(0.3)
            n = int(path.rsplit("/", 1)[1])
            self._send(302, ("Location", f"/slowhop/{n - 1}")) if n > 0 else self._send(200)
        elif path == "/set-cookie":
            self._send(302, ("Set-Cookie", "session=1; Path=/"), ("Location", "/needs-cookie"))
        elif path == "/needs-cookie":  # a cookie check: without the cookie, round and round
            has_cookie = "session=1" in self.headers.get("Cookie", "")
            self._send(200) if has_cookie else self._send(302, ("Location", "/set-cookie"))
        elif path == "/early-hints":
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
            self._send(200)
        elif path == "/utf8-location":
            self.wfile.write(b"HTTP/1.1 302 Found\r\nLocation: /caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n")
        elif path == "/caf%C3%A9":
            self._send(200)
        else:
            self._send(404)


@pytest.fixture
def server() -> Iterator[_Server]:
    with serving(srv := _Server()):
        yield srv


class _TrickleServer:
    """Answers ``200 OK`` and then one header line every ``interval`` seconds, ``lines`` times."""

    def __init__(self, interval: float, lines: int) -> None:
        self.interval, self.lines = interval, lines
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.lines_sent = 0
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                for i in range(self.lines):
                    if self._stop.wait(self.interval):
                        return
                    conn.sendall(b"X-Trickle-%d: 1\r\n" % i)
                    self.lines_sent += 1
                conn.sendall(b"Content-Length: 0\r\n\r\n")
            except OSError:
                pass  # the client hung up, as it should


@pytest.fixture
def trickle() -> Iterator[_TrickleServer]:
    srv = _TrickleServer(interval=0.2, lines=40)  # 8 s of headers, each line well within a read timeout
    try:
        yield srv
    finally:
        srv.close()


class _TlsServer(ThreadingHTTPServer):
    """HTTPS on 127.0.0.1 with the test CA's certificate for real.example.org; records SNI and Host."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _TlsHandler)
        self.server_names: list[str | None] = []
        self.hosts: list[str] = []
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(TLS / "real.example.org.pem")
        context.sni_callback = lambda sslsock, name, ctx: self.server_names.append(name)
        self.socket = context.wrap_socket(self.socket, server_side=True)


class _TlsHandler(BaseHTTPRequestHandler):
    server: _TlsServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self.server.hosts.append(self.headers.get("Host", ""))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def tls_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[_TlsServer]:
    """The HTTPS server, with the test CA as the only one the checker trusts."""
    monkeypatch.setattr(certifi, "where", lambda: str(TLS / "ca.pem"))
    with serving(srv := _TlsServer()):
        yield srv


# --- name resolution and the connection guard --------------------------------------------------------------


class _Dns:
    """An injected DNS resolver: one verdict for every name, optionally after a delay; records names."""

    def __init__(
        self, verdict: DnsVerdict = DnsVerdict.EXISTS, delay: float = 0.0, *, honours_lifetime: bool = True
    ) -> None:
        self.verdict, self.delay, self.honours_lifetime = verdict, delay, honours_lifetime
        self.asked: list[str] = []

    def resolve(self, host: str, *, lifetime: float = math.inf) -> DnsOutcome:
        self.asked.append(host)
        if self.honours_lifetime and self.delay >= lifetime:
            time.sleep(lifetime)
            return DnsOutcome(DnsVerdict.UNKNOWN, f"DNS: no answer within {lifetime:g} s (timeout)")
        time.sleep(self.delay)
        return DnsOutcome(self.verdict, f"DNS: {self.verdict.value} {host}")


def _resolve_as(monkeypatch: pytest.MonkeyPatch, table: dict[str, str | list[str]]) -> list[str]:
    """Make ``socket.getaddrinfo`` answer from ``table`` (a list: one answer per call, as DNS rebinding
    would); names not in it fail. Return the names looked up."""
    looked_up: list[str] = []

    def getaddrinfo(host: str, port: Any = None, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answer = table[host]
        address = answer.pop(0) if isinstance(answer, list) and len(answer) > 1 else answer
        address = address[0] if isinstance(address, list) else address
        return _REAL_GETADDRINFO(address, port, type=socket.SOCK_STREAM)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


@pytest.fixture(autouse=True)
def outside(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse every connection to an address other than 127.0.0.1, and record the address tried."""
    tried: list[str] = []

    def connect(self: socket.socket, address: Any) -> None:
        if address[0] != "127.0.0.1":
            tried.append(str(address[0]))
            raise ConnectionRefusedError(f"test guard: {address[0]} is not 127.0.0.1")
        _REAL_CONNECT(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return tried


@pytest.fixture(autouse=True)
def _no_system_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_system_dns(monkeypatch)


def _public_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let 127.0.0.1 stand in for a public server (the refusal has its own tests)."""
    monkeypatch.setattr(liveness.network, "_refusal_reason", lambda address: None)


def _checker(dns: _Dns | None = None, **kwargs: Any) -> LivenessChecker:
    options: dict[str, Any] = {"offline": False, "cache_path": None, "timeout": 0.5}
    return LivenessChecker(dns_resolver=dns or _Dns(), **(options | kwargs))


def _timed(action: Callable[[], LivenessResult]) -> tuple[LivenessResult, float]:
    started = time.monotonic()
    result = action()
    return result, time.monotonic() - started


# --- the tests -------------------------------------------------------------------------------------------


class TestIdna:
    """A host whose IDNA 2003 and UTS-46 forms differ is refused; the ASCII form checked is the one used."""

    def test_differential_host_is_refused(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch, outside: list[str]
    ) -> None:
        """evilstraße: the check would look at evilstrasse, a browser (and requests) opens xn--evilstrae-n1a.

        Before the fix the address check passed for the first while the request went to the second, here
        127.0.0.1, and the URL came back LIVE. Now nothing is asked or contacted.
        """
        looked_up = _resolve_as(
            monkeypatch, {"evilstrasse.example": PUBLIC, "xn--evilstrae-n1a.example": "127.0.0.1"}
        )
        dns = _Dns()
        result = _checker(dns).check(f"http://evilstraße.example:{server.port}/ok")
        assert result == LivenessResult(
            Liveness.UNKNOWN,
            "refused: host has different IDNA 2003 and UTS-46 encodings "
            "(evilstrasse.example vs xn--evilstrae-n1a.example)",
            None,
        )
        assert server.log == []
        assert dns.asked == looked_up == outside == []

    @pytest.mark.parametrize(
        ("host", "ascii_forms"),
        [
            pytest.param("faß.de", "fass.de vs xn--fa-hia.de", id="sharp-s"),
            pytest.param("ς.example.org", "xn--4xa.example.org vs xn--3xa.example.org", id="final-sigma"),
            pytest.param("\u200dx.example.org", "x.example.org vs not encodable", id="zero-width-joiner"),
        ],
    )
    def test_differences_table(self, host: str, ascii_forms: str) -> None:
        """Each character IDNA 2003 maps away (or UTS-46 rejects) makes the host ambiguous: refused."""
        dns = _Dns()
        result = _checker(dns).check(f"https://{host}/page")
        assert result.detail == f"refused: host has different IDNA 2003 and UTS-46 encodings ({ascii_forms})"
        assert dns.asked == []

    def test_agreeing_unicode_host_is_checked_as_ascii(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """bücher: both encodings agree; DNS, the address lookup and the Host header all use the ASCII form."""
        _public_loopback(monkeypatch)
        looked_up = _resolve_as(monkeypatch, {"xn--bcher-kva.example.org": "127.0.0.1"})
        dns = _Dns()
        result = _checker(dns).check(f"http://BÜCHER.example.org:{server.port}/ok")
        assert result == LivenessResult(Liveness.LIVE, "HTTP 200", 200)
        assert dns.asked == looked_up == ["xn--bcher-kva.example.org"]
        assert server.log == [("HEAD", "/ok", f"xn--bcher-kva.example.org:{server.port}", "")]


class TestConnectsToCheckedAddress:
    """The connection goes to the very address that was checked: no second lookup, no second parser."""

    def test_dns_rebinding_reaches_nothing(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch, outside: list[str]
    ) -> None:
        """A name that is public when checked and 127.0.0.1 a moment later is never fetched from 127.0.0.1.

        Before the fix ``requests`` looked the name up again and sent its HEAD to the local server.
        """
        looked_up = _resolve_as(monkeypatch, {"rebind.example.org": [PUBLIC, "127.0.0.1", "127.0.0.1"]})
        result = _checker().check(f"http://rebind.example.org:{server.port}/ok")
        assert result == LivenessResult(Liveness.UNKNOWN, "connection failed: ConnectionRefusedError", None)
        assert server.log == []
        assert looked_up == ["rebind.example.org"]
        assert outside == [PUBLIC]

    def test_every_checked_address_is_tried_and_no_other(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch, outside: list[str]
    ) -> None:
        """With two public addresses the second is tried when the first refuses, as a browser would."""
        _public_loopback(monkeypatch)

        def getaddrinfo(host: str, port: Any = None, *args: Any, **kwargs: Any) -> Any:
            return _REAL_GETADDRINFO(PUBLIC, port, type=socket.SOCK_STREAM) + _REAL_GETADDRINFO(
                "127.0.0.1", port, type=socket.SOCK_STREAM
            )

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        assert _checker().check(f"http://two.example.org:{server.port}/ok").status is Liveness.LIVE
        assert outside == [PUBLIC]
        assert [host for _, _, host, _ in server.log] == [f"two.example.org:{server.port}"]

    def test_backslash_userinfo_goes_where_it_was_checked(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch, outside: list[str]
    ) -> None:
        r"""``http://evil.example.org\@127.0.0.1/``: host evil.example.org for the check and the request."""
        _resolve_as(monkeypatch, {"evil.example.org": PUBLIC})
        dns = _Dns()
        result = _checker(dns, allow_hosts=["127.0.0.1"]).check(
            f"http://evil.example.org\\@127.0.0.1:{server.port}/ok"
        )
        assert result.detail == "connection failed: ConnectionRefusedError"
        assert dns.asked == ["evil.example.org"]
        assert outside == [PUBLIC]
        assert server.log == []

    def test_https_keeps_the_host_name(self, tls_server: _TlsServer, monkeypatch: pytest.MonkeyPatch) -> None:
        """Connected to 127.0.0.1, TLS still sends the name (SNI), checks the certificate against it, and
        the Host header carries it."""
        _public_loopback(monkeypatch)
        _resolve_as(monkeypatch, {"real.example.org": "127.0.0.1"})
        port = tls_server.server_address[1]
        result = _checker().check(f"https://real.example.org:{port}/")
        assert result == LivenessResult(Liveness.LIVE, "HTTP 200", 200)
        assert tls_server.server_names == ["real.example.org"]
        assert tls_server.hosts == [f"real.example.org:{port}"]

    def test_https_certificate_for_another_name_fails(
        self, tls_server: _TlsServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A certificate that does not name the host is a failed connection (UNKNOWN), not a page."""
        _public_loopback(monkeypatch)
        _resolve_as(monkeypatch, {"other.example.org": "127.0.0.1"})
        port = tls_server.server_address[1]
        result = _checker().check(f"https://other.example.org:{port}/")
        assert result == LivenessResult(Liveness.UNKNOWN, "connection failed: SSLCertVerificationError", None)
        assert tls_server.hosts == []


class TestEmbeddedIpv4:
    """IPv6 addresses that lead to an IPv4 address (6to4, Teredo, NAT64) are judged by that address."""

    @pytest.mark.parametrize(
        ("address", "detail"),
        [
            pytest.param(
                "2002:7f00:1::1",
                "refused: 6to4 address 2002:7f00:1::1 embeds loopback address 127.0.0.1",
                id="6to4-loopback",
            ),
            pytest.param(
                "2002:a9fe:a9fe::",
                "refused: 6to4 address 2002:a9fe:a9fe:: embeds link-local address 169.254.169.254",
                id="6to4-cloud-metadata",
            ),
            pytest.param(
                "2002:c0a8:101::1",
                "refused: 6to4 address 2002:c0a8:101::1 embeds private address 192.168.1.1",
                id="6to4-private",
            ),
            pytest.param(
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                "refused: Teredo address 2001:0:4136:e378:8000:63bf:80ff:fffe embeds loopback address "
                "127.0.0.1",
                id="teredo-client-loopback",
            ),
            pytest.param(
                "2001:0:a00:1:8000:63bf:a2ff:fffe",
                "refused: Teredo address 2001:0:a00:1:8000:63bf:a2ff:fffe embeds private address 10.0.0.1",
                id="teredo-server-private",
            ),
            pytest.param(
                "64:ff9b::a9fe:a9fe",
                "refused: NAT64 address 64:ff9b::a9fe:a9fe embeds link-local address 169.254.169.254",
                id="nat64-cloud-metadata",
            ),
        ],
    )
    def test_private_ipv4_inside_is_refused(
        self, monkeypatch: pytest.MonkeyPatch, outside: list[str], address: str, detail: str
    ) -> None:
        """The detail names the tunnel and the IPv4 address inside it; nothing is contacted."""
        _resolve_as(monkeypatch, {"tunnel.example.org": address})
        assert _checker().check("http://tunnel.example.org/") == LivenessResult(
            Liveness.UNKNOWN, detail, None
        )
        assert outside == []

    @pytest.mark.parametrize(
        "address",
        [
            pytest.param("2002:5db8:d70e::1", id="6to4-public"),
            pytest.param("64:ff9b::5db8:d70e", id="nat64-public"),
        ],
    )
    def test_public_ipv4_inside_is_contacted(
        self, monkeypatch: pytest.MonkeyPatch, outside: list[str], address: str
    ) -> None:
        """6to4 and NAT64 forms of a public address are how IPv6-only networks reach IPv4 sites: allowed."""
        _resolve_as(monkeypatch, {"tunnel.example.org": address})
        assert (
            _checker().check("http://tunnel.example.org/").detail
            == "connection failed: ConnectionRefusedError"
        )
        assert outside == [address]


@pytest.mark.e2e  # real sockets and resolvers against the wall clock: lane e2e, not unit
class TestDeadlines:
    """One wall-clock deadline per URL covers DNS, the address lookup and every read of every hop."""

    def test_trickling_headers_stop_at_the_deadline(self, trickle: _TrickleServer) -> None:
        """A header line every 0.2 s beats a 0.5 s read timeout forever; the 1 s deadline stops it.

        Before the fix such a server held one check for as long as it kept trickling (measured: 140 s).
        """
        checker = _checker(allow_hosts=["127.0.0.1"], url_deadline=1.0)
        result, elapsed = _timed(lambda: checker.check(f"http://127.0.0.1:{trickle.port}/"))
        assert result == LivenessResult(
            Liveness.UNKNOWN, "no complete answer within 1 s (per-URL deadline)", None
        )
        assert 0.9 <= elapsed < GENEROUS * 1.0
        assert trickle.lines_sent < 10

    def test_deadline_spans_redirects(self, server: _Server) -> None:
        """Four hops of 0.3 s each: every one is within the read timeout, together they pass 1 s."""
        checker = _checker(allow_hosts=["127.0.0.1"], url_deadline=1.0)
        result, elapsed = _timed(lambda: checker.check(server.base + "/slowhop/3"))
        assert result.detail == "no complete answer within 1 s (per-URL deadline)"
        assert elapsed < GENEROUS * 1.0
        assert len(server.log) == 4  # the fourth hop was asked, not waited for

    def test_slow_dns_counts(self) -> None:
        """The resolver is given what is left of the deadline, and the deadline is what the detail names."""
        dns = _Dns(delay=5.0)
        result, elapsed = _timed(lambda: _checker(dns, timeout=5.0, url_deadline=0.4).check("https://a.org/"))
        assert result.detail == "no complete answer within 0.4 s (per-URL deadline)"
        assert elapsed < GENEROUS * 0.4  # and short of the resolver's 5 s

    def test_resolver_ignoring_its_lifetime_gets_no_extension(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A resolver that overruns its lifetime is not waited for past the deadline: no lookup, no request."""
        looked_up = _resolve_as(monkeypatch, {"late.example.org": "127.0.0.1"})
        dns = _Dns(delay=3.0, honours_lifetime=False)
        checker = _checker(dns, url_deadline=0.3)
        result, elapsed = _timed(lambda: checker.check("http://late.example.org/"))
        assert result.detail == "no complete answer within 0.3 s (per-URL deadline)"
        assert elapsed < GENEROUS * 0.3  # and short of the resolver's 3 s
        assert looked_up == []

    def test_slow_address_lookup_counts(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``getaddrinfo`` has no timeout of its own; the deadline bounds it all the same."""

        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(3)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

        monkeypatch.setattr(socket, "getaddrinfo", slow)
        result, elapsed = _timed(lambda: _checker(url_deadline=0.4).check("http://slow.example.org/"))
        assert result.detail == "no complete answer within 0.4 s (per-URL deadline)"
        assert elapsed < GENEROUS * 0.4  # and short of the lookup's 3 s


def _resources(resources: VerifierResources, checker: LivenessChecker) -> VerifierResources:
    return dataclasses.replace(resources, liveness=checker, liveness_mode="live")


class TestPerAnswerLimits:
    """verify() checks at most max_urls_checked URLs per answer within answer_budget seconds."""

    def test_cap_on_urls_checked(self, server: _Server, resources: VerifierResources) -> None:
        """1,000 URLs in one answer: 50 requests (the default), the rest UNCHECKED with the reason.

        Before the fix the answer made 1,000 HEAD requests.
        """
        answer = " ".join(f"See {server.base}/ok?n={i} ." for i in range(1000))
        checker = _checker(allow_hosts=["127.0.0.1"])
        report = verify(answer, jurisdiction=None, sources=[], resources=_resources(resources, checker))
        assert [f.status.value for f in report.urls] == ["REAL_NOT_IN_ALLOWLIST"] * 50 + ["UNCHECKED"] * 950
        assert {f.detail for f in report.urls[50:]} == {
            "not in allowlist; liveness unchecked: over the per-answer limit (50 URLs checked)"
        }
        assert len(server.log) == 50

    @pytest.mark.e2e  # a real silent resolver against the wall clock: lane e2e, not unit
    def test_budget_spent(self, resources: VerifierResources) -> None:
        """DNS taking 0.2 s a name and a 0.5 s budget: three names asked, the third cut short, then none."""
        dns = _Dns(verdict=DnsVerdict.UNKNOWN, delay=0.2)
        answer = " ".join(f"See https://h{i}.legal-aid-example.org/ ." for i in range(100))
        resources = _resources(resources, _checker(dns, answer_budget=0.5))
        started = time.monotonic()
        report = verify(answer, jurisdiction=None, sources=[], resources=resources)
        assert time.monotonic() - started < GENEROUS * 0.5  # the budget itself is pinned by the names asked
        assert len(dns.asked) == 3
        details = [f.detail.removeprefix("not in allowlist; liveness unchecked: ") for f in report.urls]
        assert details[:2] == [
            "DNS: UNKNOWN h0.legal-aid-example.org",
            "DNS: UNKNOWN h1.legal-aid-example.org",
        ]
        assert set(details[2:]) == {"liveness budget for this answer spent (0.5 s)"}

    def test_snapshot_cache_and_repeats_are_free(
        self, server: _Server, resources: VerifierResources, tmp_path: Path
    ) -> None:
        """Only network checks count: recorded, cached and repeated URLs leave the one allowed check free."""
        snapshot = tmp_path / "snapshot.csv"
        snapshot.write_text(
            "url,status,http_status,checked_at\n"
            + "".join(f"https://recorded{i}.example.org/,LIVE,200,2026-11-30\n" for i in range(5)),
            encoding="utf-8",
        )
        cache = tmp_path / "cache.sqlite"
        _checker(allow_hosts=["127.0.0.1"], cache_path=cache).check(server.base + "/ok?cached")
        answer = " ".join(
            [f"https://recorded{i}.example.org/" for i in range(5)]
            + [f"{server.base}/ok?cached", f"{server.base}/ok?new", f"{server.base}/ok?new#again"]
            + [f"{server.base}/ok?over"]
        )
        checker = _checker(
            allow_hosts=["127.0.0.1"], cache_path=cache, snapshot_path=snapshot, max_urls_checked=1
        )
        report = verify(answer, jurisdiction=None, sources=[], resources=_resources(resources, checker))
        assert [f.status.value for f in report.urls] == ["REAL_NOT_IN_ALLOWLIST"] * 8 + ["UNCHECKED"]
        assert report.urls[-1].detail.endswith("over the per-answer limit (1 URL checked)")
        assert [path for _, path, _, _ in server.log] == ["/ok?cached", "/ok?new"]

    def test_each_answer_has_its_own_allowance(self, server: _Server, resources: VerifierResources) -> None:
        """The limits are per answer: the next answer starts afresh with the same resources."""
        checker = _checker(allow_hosts=["127.0.0.1"], max_urls_checked=2)
        both = _resources(resources, checker)
        answer = " ".join(f"{server.base}/ok?n={i}" for i in range(3))
        for _ in range(2):
            report = verify(answer, jurisdiction=None, sources=[], resources=both)
            assert report.unchecked_urls == 1
        assert len(server.log) == 4

    def test_checker_alone_has_no_cap(self, server: _Server) -> None:
        """check() on the checker itself is not limited in number (only for_answer() views are)."""
        checker = _checker(allow_hosts=["127.0.0.1"], max_urls_checked=1)
        assert [checker.check(f"{server.base}/ok?n={i}").status for i in range(3)] == [Liveness.LIVE] * 3


class TestLimitsAreValidated:
    """url_deadline, answer_budget and max_urls_checked fail with one line when the resources are built."""

    @pytest.mark.parametrize(
        ("option", "value", "message"),
        [
            ("url_deadline", 0, "url_deadline: must be a number of seconds greater than 0, not 0"),
            ("url_deadline", -1.5, "url_deadline: must be a number of seconds greater than 0, not -1.5"),
            ("url_deadline", math.inf, "url_deadline: must be a number of seconds greater than 0, not inf"),
            ("answer_budget", math.nan, "answer_budget: must be a number of seconds greater than 0, not nan"),
            ("answer_budget", "30", "answer_budget: must be a number of seconds greater than 0, not '30'"),
            ("answer_budget", True, "answer_budget: must be a number of seconds greater than 0, not True"),
            ("max_urls_checked", 0, "max_urls_checked: must be a whole number, at least 1, not 0"),
            ("max_urls_checked", 2.5, "max_urls_checked: must be a whole number, at least 1, not 2.5"),
            ("max_urls_checked", False, "max_urls_checked: must be a whole number, at least 1, not False"),
        ],
    )
    def test_bad_value(self, option: str, value: Any, message: str) -> None:
        """Offline too: a config error should not wait for the first live run to show."""
        with pytest.raises(DataError) as raised:
            load_resources(
                allowlist=FIXTURES / "verifier" / "allowlist.txt",
                orgs=FIXTURES / "verifier" / "orgs.yaml",
                **{option: value},
            )
        assert raised.value.one_line() == message

    def test_values_reach_the_checker(self) -> None:
        """max_urls_checked given to load_resources is the one verify() applies."""
        resources = load_resources(
            allowlist=FIXTURES / "verifier" / "allowlist.txt",
            orgs=FIXTURES / "verifier" / "orgs.yaml",
            liveness="live",
            max_urls_checked=1,
            url_deadline=2,
            answer_budget=3,
        )
        dns = _Dns(verdict=DnsVerdict.NO_SUCH_DOMAIN)
        resources.liveness._transport.dns = dns  # the system resolver is never asked in these tests
        report = verify("https://a.example.org/ https://b.example.org/", jurisdiction=None, sources=[],
                        resources=resources)  # fmt: skip
        assert [f.status.value for f in report.urls] == ["HALLUCINATED_URL", "UNCHECKED"]
        assert dns.asked == ["a.example.org"]


class TestHttpClient:
    """What requests' Session did for us and the client of our own still does."""

    def test_cookies_follow_the_redirects_of_one_check(self, server: _Server) -> None:
        """A cookie-check redirect (set a cookie, come back) is followed as a browser would."""
        checker = _checker(allow_hosts=["127.0.0.1"])
        assert checker.check(server.base + "/set-cookie").detail == "HTTP 200 after 1 redirect"
        assert [cookie for _, _, _, cookie in server.log] == ["", "session=1"]

    def test_cookies_are_not_kept_between_urls(self, server: _Server) -> None:
        """Nothing set while checking one URL is sent while checking the next."""
        checker = _checker(allow_hosts=["127.0.0.1"])
        checker.check(server.base + "/set-cookie")
        checker.check(server.base + "/ok")
        assert server.log[-1] == ("HEAD", "/ok", f"127.0.0.1:{server.port}", "")

    def test_interim_response_is_skipped(self, server: _Server) -> None:
        """A 103 Early Hints before the real answer is not the answer."""
        checker = _checker(allow_hosts=["127.0.0.1"])
        assert checker.check(server.base + "/early-hints") == LivenessResult(Liveness.LIVE, "HTTP 200", 200)

    def test_utf8_location(self, server: _Server) -> None:
        """A Location sent in UTF-8 is followed to the page it names, percent-encoded."""
        checker = _checker(allow_hosts=["127.0.0.1"])
        assert checker.check(server.base + "/utf8-location").detail == "HTTP 200 after 1 redirect"
        assert server.log[-1][1] == "/caf%C3%A9"

    @pytest.mark.parametrize(
        ("path", "sent"),
        [
            pytest.param("/a b", "/a%20b", id="space"),
            pytest.param("/é", "/%C3%A9", id="non-ascii"),
            pytest.param("/100%", "/100%25", id="stray-percent"),
            pytest.param("/ok?q=a%20b&r=é", "/ok?q=a%20b&r=%C3%A9", id="query"),
            pytest.param("/x\r\nX-Injected: 1", "/xX-Injected:%201", id="no-header-injection"),
        ],
    )
    def test_request_target_is_encoded(self, server: _Server, path: str, sent: str) -> None:
        """The path and query go out percent-encoded: no raw space, byte above 127 or line break."""
        _checker(allow_hosts=["127.0.0.1"]).check(server.base + path)
        assert server.log[0][1] == sent

    @pytest.mark.parametrize(
        ("reply", "detail"),
        [
            pytest.param(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "connection failed: not an HTTP response", id="not-http"),
            pytest.param(b"HTTP/1.1 200 OK\r\nX: 1\r\n", "connection failed: closed before the response headers ended",
                         id="truncated"),
            pytest.param(b"HTTP/1.1 200 OK\r\n" + b"X-Big: " + b"x" * 70000,
                         "connection failed: response headers over 64 KiB", id="huge-headers"),
        ],
    )  # fmt: skip
    def test_broken_replies_are_unknown(self, reply: bytes, detail: str) -> None:
        """Whatever comes back that is not an HTTP head is UNKNOWN with the reason, never a crash."""
        listener = socket.create_server(("127.0.0.1", 0))

        def answer_once() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                with contextlib.suppress(OSError):  # the client may stop reading at its limit
                    conn.sendall(reply)

        thread = threading.Thread(target=answer_once, daemon=True)
        thread.start()
        try:
            port = listener.getsockname()[1]
            result = _checker(allow_hosts=["127.0.0.1"]).check(f"http://127.0.0.1:{port}/")
        finally:
            thread.join(2)
            listener.close()
        assert result == LivenessResult(Liveness.UNKNOWN, detail, None)
