"""Liveness checking against a real HTTP server on 127.0.0.1; no other network is used.

Name resolution for anything but 127.0.0.1/localhost is faked with a patched ``socket.getaddrinfo``,
and the DNS question a live check asks first is answered by an injected resolver (the real DNS client
is tested against a local DNS stub in ``test_dns.py``); asking the system's resolver fails the test.
"""

from __future__ import annotations

import multiprocessing
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.verifier.liveness import (
    USER_AGENT,
    DnsOutcome,
    DnsVerdict,
    Liveness,
    LivenessChecker,
    LivenessResult,
)
from tests.loopback import refuse_system_dns, serving

SLOW_SECONDS = 1.5


class _Server(ThreadingHTTPServer):
    """Records every request as (method, path, user agent)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log: list[tuple[str, str, str]] = []
        self.body_bytes_sent = 0
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # silence stderr
        pass

    def do_HEAD(self) -> None:
        self._handle(head=True)

    def do_GET(self) -> None:
        self._handle(head=False)

    def _send(self, code: int, location: str | None = None) -> None:
        self.send_response(code)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _handle(self, *, head: bool) -> None:
        with self.server.lock:
            self.server.log.append((self.command, self.path, self.headers.get("User-Agent", "")))
        path = self.path.split("?", 1)[0]
        port = self.server.server_address[1]
        simple = {"/ok": 200, "/missing": 404, "/gone": 410, "/error": 500, "/forbidden": 403, "/busy": 429}
        if path in simple:
            self._send(simple[path])
        elif path == "/redirect":
            self._send(302, "/ok")
        elif path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, f"/chain/{n - 1}") if n > 0 else self._send(200)
        elif path == "/loop":
            self._send(302, "/loop")
        elif path == "/redirect-no-location":
            self._send(302)
        elif path == "/to-localhost":
            self._send(302, f"http://localhost:{port}/ok")
        elif path == "/to-ftp":
            self._send(301, "ftp://127.0.0.1/file")
        elif path == "/bad-location":
            self._send(302, "http://[broken/")
        elif path == "/to-missing":
            self._send(301, "/missing")
        elif path == "/head405":
            self._send(405 if head else 200)
        elif path == "/head404":
            self._send(404 if head else 200)
        elif path == "/slow":
            time.sleep(SLOW_SECONDS)
            self._send(200)
        elif path == "/huge" and not head:
            self._huge_body()
        elif path == "/huge":
            self._send(405)
        else:
            self._send(404)

    def _huge_body(self) -> None:
        chunk = b"x" * 65536
        self.send_response(200)
        self.send_header("Content-Length", str(len(chunk) * 4096))  # 256 MiB
        self.end_headers()
        try:
            for _ in range(4096):
                self.wfile.write(chunk)
                with self.server.lock:
                    self.server.body_bytes_sent += len(chunk)
        except OSError:
            pass  # the client hung up, as it should


class _ExistsDns:
    """Says every name exists, and records the names asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def resolve(self, host: str, *, lifetime: float) -> DnsOutcome:
        self.asked.append(host)
        return DnsOutcome(DnsVerdict.EXISTS, f"DNS: {host} has an A record")


@pytest.fixture(autouse=True)
def _no_system_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_system_dns(monkeypatch)


@pytest.fixture
def server() -> Iterator[_Server]:
    with serving(srv := _Server()):
        yield srv


@pytest.fixture
def checker(tmp_path: Path) -> LivenessChecker:
    """Online, 127.0.0.1 allowed, with a cache."""
    return LivenessChecker(
        offline=False, cache_path=tmp_path / "cache.sqlite", allow_hosts=["127.0.0.1"], timeout=0.5
    )


_REAL_GETADDRINFO = socket.getaddrinfo


def _fake_dns(monkeypatch: pytest.MonkeyPatch, address: str) -> list[str]:
    """Make every name resolve to ``address``; return the list of names looked up."""
    looked_up: list[str] = []
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    def getaddrinfo(host: str, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        looked_up.append(host)
        return [(family, socket.SOCK_STREAM, 6, "", (address, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


class TestHttpOutcomes:
    """HTTP answers map to LIVE/DEAD/UNKNOWN; only 404 and 410 are DEAD."""

    @pytest.mark.parametrize(
        ("path", "status", "detail"),
        [
            pytest.param("/ok", Liveness.LIVE, "HTTP 200", id="200"),
            pytest.param("/missing", Liveness.DEAD, "HTTP 404", id="404"),
            pytest.param("/gone", Liveness.DEAD, "HTTP 410", id="410"),
            pytest.param("/error", Liveness.UNKNOWN, "HTTP 500", id="500"),
            pytest.param("/forbidden", Liveness.UNKNOWN, "HTTP 403", id="403-bot-blocking"),
            pytest.param("/busy", Liveness.UNKNOWN, "HTTP 429", id="429"),
            pytest.param("/redirect", Liveness.LIVE, "HTTP 200 after 1 redirect", id="302-then-200"),
            pytest.param("/chain/3", Liveness.LIVE, "HTTP 200 after 3 redirects", id="chain-at-limit"),
            pytest.param("/to-missing", Liveness.DEAD, "HTTP 404 after 1 redirect", id="redirect-to-404"),
            pytest.param("/head405", Liveness.LIVE, "HTTP 200", id="head-405-then-get"),
            pytest.param("/head404", Liveness.LIVE, "HTTP 200", id="head-404-confirmed-by-get"),
        ],
    )
    def test_outcome(
        self, server: _Server, checker: LivenessChecker, path: str, status: Liveness, detail: str
    ) -> None:
        """The final response decides the verdict and the detail names it."""
        result = checker.check(server.base + path)
        assert (result.status, result.detail) == (status, detail)

    def test_http_status_recorded(self, server: _Server, checker: LivenessChecker) -> None:
        """The final status code is kept in the result."""
        assert checker.check(server.base + "/gone") == LivenessResult(Liveness.DEAD, "HTTP 410", 410)

    def test_head_first_get_only_when_needed(self, server: _Server, checker: LivenessChecker) -> None:
        """A 2xx HEAD needs no GET; a 405 HEAD is followed by one GET."""
        checker.check(server.base + "/ok")
        checker.check(server.base + "/head405")
        assert [(m, p) for m, p, _ in server.log] == [
            ("HEAD", "/ok"),
            ("HEAD", "/head405"),
            ("GET", "/head405"),
        ]

    def test_dead_is_confirmed_with_get(self, server: _Server, checker: LivenessChecker) -> None:
        """A 404 verdict rests on a GET, the response a browser would get."""
        checker.check(server.base + "/missing")
        assert [m for m, _, _ in server.log] == ["HEAD", "GET"]

    def test_user_agent(self, server: _Server, checker: LivenessChecker) -> None:
        """Every request says who is asking."""
        checker.check(server.base + "/head405")
        assert {ua for _, _, ua in server.log} == {USER_AGENT}

    def test_body_is_not_downloaded(self, server: _Server, checker: LivenessChecker) -> None:
        """A 256 MiB body is not read: the server is cut off after a fraction of it."""
        result = checker.check(server.base + "/huge")
        assert result.status is Liveness.LIVE
        time.sleep(0.2)
        assert server.body_bytes_sent < 64 * 1024 * 1024

    @pytest.mark.e2e  # a real slow server against the wall clock: lane e2e, not unit
    def test_slow_server_times_out(self, server: _Server, checker: LivenessChecker) -> None:
        """A server slower than the timeout gives UNKNOWN: the timeout, not the server's answer, ends it."""
        started = time.monotonic()
        result = checker.check(server.base + "/slow")
        assert result == LivenessResult(
            Liveness.UNKNOWN, "connection failed: no data for 0.5 s (timeout)", None
        )
        assert time.monotonic() - started < 5 * 0.5  # generous: a loaded machine, not the client, is slow

    def test_connection_refused(self, checker: LivenessChecker) -> None:
        """Nothing listening is UNKNOWN, never DEAD."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        result = checker.check(f"http://127.0.0.1:{port}/")
        assert (result.status, result.detail) == (
            Liveness.UNKNOWN,
            "connection failed: ConnectionRefusedError",
        )

    @pytest.mark.parametrize("scheme", ["http", "https"])
    def test_environment_proxy_ignored(
        self, server: _Server, checker: LivenessChecker, monkeypatch: pytest.MonkeyPatch, scheme: str
    ) -> None:
        """A proxy in the environment is not used (through it, the address check would check the wrong
        machine): the request goes to the checked address, and the proxy sees no connection."""
        with socket.create_server(("127.0.0.1", 0)) as proxy:
            proxy_url = f"{scheme}://127.0.0.1:{proxy.getsockname()[1]}"
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
                monkeypatch.setenv(name, proxy_url)
                monkeypatch.setenv(name.lower(), proxy_url)
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            assert checker.check(server.base + "/ok") == LivenessResult(Liveness.LIVE, "HTTP 200", 200)
            assert [(m, p) for m, p, _ in server.log] == [("HEAD", "/ok")]
            proxy.setblocking(False)
            with pytest.raises(BlockingIOError):  # the kernel accepts a connection for us: none is waiting
                proxy.accept()


class TestRedirects:
    """Redirects are followed by hand, up to max_redirects, and every hop is checked."""

    def test_loop_beyond_limit(self, server: _Server, checker: LivenessChecker) -> None:
        """A redirect loop stops after max_redirects + 1 requests."""
        result = checker.check(server.base + "/loop")
        assert result == LivenessResult(Liveness.UNKNOWN, "more than 3 redirects", None)
        assert len(server.log) == 4

    def test_chain_beyond_limit(self, server: _Server, checker: LivenessChecker) -> None:
        """Four redirects with a limit of three is UNKNOWN, even though the chain would end."""
        assert checker.check(server.base + "/chain/4").status is Liveness.UNKNOWN

    def test_custom_limit(self, server: _Server, tmp_path: Path) -> None:
        """max_redirects=0 follows nothing."""
        strict = LivenessChecker(offline=False, cache_path=None, allow_hosts=["127.0.0.1"], max_redirects=0)
        assert strict.check(server.base + "/redirect").detail == "more than 0 redirects"

    def test_redirect_to_refused_host(self, server: _Server, checker: LivenessChecker) -> None:
        """A hop to a host that is not allowed (localhost) is refused, not fetched."""
        result = checker.check(server.base + "/to-localhost")
        assert result.status is Liveness.UNKNOWN
        assert result.detail.startswith("refused: loopback address ")
        assert [p for _, p, _ in server.log] == ["/to-localhost"]

    def test_redirect_to_other_scheme(self, server: _Server, checker: LivenessChecker) -> None:
        """A redirect away from http(s) is UNKNOWN."""
        result = checker.check(server.base + "/to-ftp")
        assert (result.status, result.detail) == (
            Liveness.UNKNOWN,
            "not an http(s) URL: ftp://127.0.0.1/file",
        )

    def test_redirect_to_malformed_location(self, server: _Server, checker: LivenessChecker) -> None:
        """A Location that is not a URL is UNKNOWN, not a crash."""
        assert checker.check(server.base + "/bad-location").status is Liveness.UNKNOWN

    def test_redirect_without_location(self, server: _Server, checker: LivenessChecker) -> None:
        """A 3xx without Location is UNKNOWN with its code."""
        assert checker.check(server.base + "/redirect-no-location") == LivenessResult(
            Liveness.UNKNOWN, "HTTP 302 without Location", 302
        )


class TestRefusal:
    """Private, loopback, link-local, reserved, multicast and unspecified targets are never contacted."""

    def test_loopback_without_allow_hosts(self, server: _Server) -> None:
        """127.0.0.1 is refused unless allowed, and the server sees nothing."""
        plain = LivenessChecker(offline=False, cache_path=None)
        result = plain.check(server.base + "/ok")
        assert result == LivenessResult(Liveness.UNKNOWN, "refused: loopback address 127.0.0.1", None)
        assert server.log == []

    @pytest.mark.parametrize(
        ("address", "detail"),
        [
            pytest.param("10.0.0.5", "refused: private address 10.0.0.5", id="private-10"),
            pytest.param("192.168.1.1", "refused: private address 192.168.1.1", id="private-192"),
            pytest.param(
                "169.254.169.254", "refused: link-local address 169.254.169.254", id="cloud-metadata"
            ),
            pytest.param("0.0.0.0", "refused: unspecified address 0.0.0.0", id="unspecified"),
            pytest.param("224.0.0.1", "refused: multicast address 224.0.0.1", id="multicast"),
            pytest.param("240.0.0.1", "refused: reserved address 240.0.0.1", id="reserved"),
            pytest.param("100.64.0.1", "refused: non-global address 100.64.0.1", id="shared-cgnat"),
            pytest.param("::1", "refused: loopback address ::1", id="ipv6-loopback"),
            pytest.param("fe80::1", "refused: link-local address fe80::1", id="ipv6-link-local"),
            pytest.param("::ffff:127.0.0.1", "refused: loopback address 127.0.0.1", id="ipv4-mapped"),
        ],
    )
    def test_resolved_address_refused(
        self, monkeypatch: pytest.MonkeyPatch, address: str, detail: str
    ) -> None:
        """A public-looking name that resolves to a non-public address is refused."""
        looked_up = _fake_dns(monkeypatch, address)
        monkeypatch.setattr(socket.socket, "connect", _no_connect)
        dns = _ExistsDns()
        plain = LivenessChecker(offline=False, cache_path=None, dns_resolver=dns)
        assert plain.check("https://innocent.example.org/") == LivenessResult(Liveness.UNKNOWN, detail, None)
        assert looked_up == dns.asked == ["innocent.example.org"]

    def test_ip_literal_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """An IP literal in the URL is checked too."""
        monkeypatch.setattr(socket.socket, "connect", _no_connect)
        plain = LivenessChecker(offline=False, cache_path=None)
        assert plain.check("http://169.254.169.254/latest/meta-data/").detail == (
            "refused: link-local address 169.254.169.254"
        )

    def test_dns_failure_is_unknown_not_dead(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """getaddrinfo's "name not known" (also what a machine without DNS says) is UNKNOWN, not cached."""

        def fail(*args: object, **kwargs: object) -> None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

        monkeypatch.setattr(socket, "getaddrinfo", fail)
        cache = tmp_path / "cache.sqlite"
        plain = LivenessChecker(offline=False, cache_path=cache, dns_resolver=_ExistsDns())
        assert plain.check("https://no-such-host.example.org/") == LivenessResult(
            Liveness.UNKNOWN, "DNS lookup failed", None
        )
        monkeypatch.setattr(socket, "getaddrinfo", _REAL_GETADDRINFO)
        second = LivenessChecker(offline=False, cache_path=cache, dns_resolver=_ExistsDns())
        _fake_dns(monkeypatch, "10.0.0.1")  # a second look must ask again, not read a cached verdict
        assert second.check("https://no-such-host.example.org/").detail.startswith("refused")

    def test_allowed_address_is_not_allowed_by_name(
        self, server: _Server, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Allowing 127.0.0.1 allows that literal only: a name resolving to it is still refused."""
        _fake_dns(monkeypatch, "127.0.0.1")
        allowed = LivenessChecker(
            offline=False, cache_path=None, allow_hosts=["127.0.0.1"], dns_resolver=_ExistsDns()
        )
        port = server.server_address[1]
        assert allowed.check(f"http://rebound.example.org:{port}/ok").detail == (
            "refused: loopback address 127.0.0.1"
        )
        assert server.log == []

    @pytest.mark.parametrize(
        "url",
        [
            pytest.param("http://127.0.0.1:{port}/ok", id="ipv4-literal"),
            pytest.param("http://2130706433:{port}/ok", id="numeric-host"),
            pytest.param("http://localhost:{port}/ok", id="localhost"),
            pytest.param("http://allowed-name.example.org:{port}/ok", id="allowed-host"),
        ],
    )
    def test_no_dns_question(self, server: _Server, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
        """Addresses, localhost names and allowed hosts are never asked about in DNS."""
        _fake_dns(monkeypatch, "127.0.0.1")
        dns = _ExistsDns()
        checker = LivenessChecker(
            offline=False,
            cache_path=None,
            allow_hosts=["127.0.0.1", "allowed-name.example.org"],
            dns_resolver=dns,
        )
        checker.check(url.format(port=server.server_address[1]))
        assert dns.asked == []


class TestCache:
    """LIVE/DEAD answers are cached on disk by normalized URL; UNKNOWN never is."""

    def test_cache_hit_makes_no_request(
        self, server: _Server, checker: LivenessChecker, tmp_path: Path
    ) -> None:
        """A second check, even by a new checker on the same file, sends nothing."""
        first = checker.check(server.base + "/ok")
        requests_after_first = len(server.log)
        again = checker.check(server.base + "/ok/")  # same page once normalized
        other = LivenessChecker(
            offline=False, cache_path=tmp_path / "cache.sqlite", allow_hosts=["127.0.0.1"]
        )
        third = other.check(server.base.replace("http://", "https://") + "/ok")
        assert first.detail == "HTTP 200"
        assert again.status is third.status is Liveness.LIVE
        assert again.detail.startswith("cached ") and again.detail.endswith(": HTTP 200")
        assert again.http_status == 200
        assert len(server.log) == requests_after_first

    def test_dead_is_cached(self, server: _Server, checker: LivenessChecker) -> None:
        """DEAD is remembered."""
        checker.check(server.base + "/gone")
        count = len(server.log)
        assert checker.check(server.base + "/gone").status is Liveness.DEAD
        assert len(server.log) == count

    def test_unknown_is_not_cached(self, server: _Server, checker: LivenessChecker) -> None:
        """A 500 is asked again next time."""
        checker.check(server.base + "/error")
        count = len(server.log)
        checker.check(server.base + "/error")
        assert len(server.log) == 2 * count

    def test_no_cache_path(self, server: _Server) -> None:
        """cache_path=None caches nothing."""
        plain = LivenessChecker(offline=False, cache_path=None, allow_hosts=["127.0.0.1"])
        plain.check(server.base + "/ok")
        plain.check(server.base + "/ok")
        assert len(server.log) == 2

    def test_cache_dir_created(self, tmp_path: Path) -> None:
        """A missing cache directory is created."""
        LivenessChecker(offline=False, cache_path=tmp_path / "a" / "b" / "cache.sqlite")
        assert (tmp_path / "a" / "b" / "cache.sqlite").is_file()

    def test_corrupt_cache_is_data_error(self, tmp_path: Path) -> None:
        """A file that is not SQLite fails when the checker is built, naming the file."""
        bad = tmp_path / "cache.sqlite"
        bad.write_bytes(b"this is not a database" * 100)
        with pytest.raises(DataError, match=r"cache\.sqlite: cannot use as liveness cache: "):
            LivenessChecker(offline=False, cache_path=bad)

    def test_parallel_processes_share_the_cache(self, server: _Server, tmp_path: Path) -> None:
        """Several processes write one cache at once without errors or lost rows."""
        cache = tmp_path / "cache.sqlite"
        urls = [[f"{server.base}/ok?worker={w}&n={n}" for n in range(5)] for w in range(4)]
        context = multiprocessing.get_context("fork")
        with context.Pool(4) as pool:
            results = pool.starmap(_check_in_process, [(cache, batch) for batch in urls])
        assert results == [["LIVE"] * 5] * 4
        count = len(server.log)
        reader = LivenessChecker(offline=False, cache_path=cache, allow_hosts=["127.0.0.1"])
        assert all(reader.check(u).detail.startswith("cached ") for batch in urls for u in batch)
        assert len(server.log) == count


def _check_in_process(cache: Path, urls: list[str]) -> list[str]:
    checker = LivenessChecker(offline=False, cache_path=cache, allow_hosts=["127.0.0.1"])
    return [checker.check(u).status.value for u in urls]


def _no_connect(*args: object, **kwargs: object) -> None:
    raise AssertionError("a refused target was contacted")


class TestOffline:
    """Offline mode never touches the network."""

    def test_offline_is_unknown_and_silent(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """No DNS, no socket: UNKNOWN 'offline mode'."""

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("network access in offline mode")

        monkeypatch.setattr(socket, "getaddrinfo", refuse)
        monkeypatch.setattr(socket.socket, "connect", refuse)
        offline = LivenessChecker(offline=True, cache_path=tmp_path / "cache.sqlite")
        assert offline.check("https://www.lawhelp.org/") == LivenessResult(
            Liveness.UNKNOWN, "offline mode", None
        )

    def test_offline_ignores_cache(self, server: _Server, checker: LivenessChecker, tmp_path: Path) -> None:
        """Offline results depend on the shareable snapshot only, not on a local cache."""
        checker.check(server.base + "/ok")
        offline = LivenessChecker(offline=True, cache_path=tmp_path / "cache.sqlite")
        assert offline.check(server.base + "/ok").status is Liveness.UNKNOWN


SNAPSHOT_HEADER = "url,status,http_status,checked_at\n"


class TestSnapshot:
    """A recorded snapshot is consulted first, online and offline, and is validated when loaded."""

    def test_snapshot_wins_online(self, server: _Server, tmp_path: Path) -> None:
        """A recorded DEAD beats a live server, and no request is sent."""
        snap = tmp_path / "snap.csv"
        snap.write_text(SNAPSHOT_HEADER + f"{server.base}/ok/,DEAD,404,2026-11-30\n", encoding="utf-8")
        online = LivenessChecker(
            offline=False, cache_path=None, snapshot_path=snap, allow_hosts=["127.0.0.1"]
        )
        assert online.check(server.base + "/ok") == LivenessResult(
            Liveness.DEAD, "snapshot 2026-11-30: HTTP 404", 404
        )
        assert server.log == []

    def test_snapshot_offline(self) -> None:
        """The shipped test snapshot answers offline, keyed by normalized URL."""
        snap = Path(__file__).resolve().parents[1] / "fixtures" / "urls" / "snapshot.csv"
        offline = LivenessChecker(offline=True, cache_path=None, snapshot_path=snap)
        assert offline.check("http://www.real.example.org/page?utm_source=x") == LivenessResult(
            Liveness.LIVE, "snapshot 2026-11-30: HTTP 200", 200
        )
        assert offline.check("https://recorded.example.org/").detail == "snapshot 2026-11-28: LIVE"

    @pytest.mark.parametrize(
        ("content", "problem"),
        [
            pytest.param(
                "url,status\nhttps://a.org,LIVE\n", "missing column(s): http_status, checked_at", id="columns"
            ),
            pytest.param(
                SNAPSHOT_HEADER + "https://a.org,LIVE,200,2026-11-30\nnot a url,LIVE,200,2026-11-30\n",
                "line 3: not an http(s) URL: 'not a url'",
                id="bad-url",
            ),
            pytest.param(
                SNAPSHOT_HEADER + "ftp://a.org/x,LIVE,200,2026-11-30\n",
                "line 2: not an http(s) URL: 'ftp://a.org/x'",
                id="ftp-url",
            ),
            pytest.param(
                SNAPSHOT_HEADER + "https://a.org,UNKNOWN,,2026-11-30\n",
                "line 2: status must be LIVE or DEAD, not 'UNKNOWN'",
                id="bad-status",
            ),
            pytest.param(
                SNAPSHOT_HEADER + "https://a.org,LIVE,OK,2026-11-30\n",
                "line 2: http_status must be empty or 100-599, not 'OK'",
                id="bad-code",
            ),
            pytest.param(
                SNAPSHOT_HEADER + "https://a.org,LIVE,200,\n", "line 2: checked_at is empty", id="no-date"
            ),
            pytest.param(
                SNAPSHOT_HEADER + "https://a.org,LIVE,200,d1\nhttp://www.a.org/,DEAD,404,d2\n",
                "line 3: 'http://www.a.org/' contradicts line 2 (same page)",
                id="contradiction",
            ),
        ],
    )
    def test_malformed_snapshot(self, tmp_path: Path, content: str, problem: str) -> None:
        """Each problem is one line naming the file and the line."""
        snap = tmp_path / "snap.csv"
        snap.write_text(content, encoding="utf-8")
        with pytest.raises(DataError) as raised:
            LivenessChecker(offline=True, cache_path=None, snapshot_path=snap)
        assert str(raised.value) == f"{snap}: {problem}"

    def test_missing_snapshot(self, tmp_path: Path) -> None:
        """A missing snapshot is reported when the checker is built."""
        with pytest.raises(DataError) as raised:
            LivenessChecker(offline=True, cache_path=None, snapshot_path=tmp_path / "none.csv")
        assert str(raised.value) == f"{tmp_path / 'none.csv'}: file not found"

    def test_agreeing_duplicates_allowed(self, tmp_path: Path) -> None:
        """The same page recorded twice with the same status is fine; the first line wins."""
        snap = tmp_path / "snap.csv"
        snap.write_text(SNAPSHOT_HEADER + "https://a.org,LIVE,200,d1\nhttps://www.a.org/,LIVE,301,d2\n")
        offline = LivenessChecker(offline=True, cache_path=None, snapshot_path=snap)
        assert offline.check("https://a.org").detail == "snapshot d1: HTTP 200"
