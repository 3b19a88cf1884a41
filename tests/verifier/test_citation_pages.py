"""Live mode for citations: a section's official page asked for and read through the real
LivenessChecker, over HTTPS on 127.0.0.1 only (the test CA's certificate for real.example.org), and the
decision recorded in the liveness snapshot for offline runs. No other network is used."""

from __future__ import annotations

import contextlib
import csv
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import certifi
import pytest

from grounding_eval.verifier.citation_pages import PAGE_BYTES, page_lookup
from grounding_eval.verifier.citations import (
    CitationMention,
    CitationStatus,
    check_citations,
    find_citations,
    load_citation_index,
)
from grounding_eval.verifier.liveness import LivenessChecker
from tests.loopback import refuse_system_dns, serving

REPO = Path(__file__).resolve().parents[2]
TLS = REPO / "tests" / "fixtures" / "tls"
SAMPLE_INDEX = REPO / "datasets" / "sample" / "citations.yaml"
HOST = "real.example.org"
S = CitationStatus
_REAL_GETADDRINFO = socket.getaddrinfo

SECTION_PAGE = b"<html><head><title>MCL - Section 554.601</title></head><body><h1>Section 554.601</h1>"
SECTION_PAGE += (
    b"<p>Sec. 1. As used in this act: (a) &quot;Security deposit&quot; means a deposit.</p></body></html>"
)


class _Pages(BaseHTTPRequestHandler):
    """Official pages, as statute sites answer: the section's page, a chapter's, soft and hard 404s."""

    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.log.append(self.path)
        path, _, query = self.path.partition("?")
        if path.startswith("/redirect-to-"):  # /redirect-to-<where>/… : 302 to <where>
            where = path[len("/redirect-to-") :].split("/", 1)[0]
            target = {"missing": "/missing/mcl-554-601", "notfound": "/not-found", "home": "/",
                      "section": "/doc.aspx?mcl-554-601", "search": "/search?q=554.699",
                      "searchhit": "/search?q=554.601", "mcl": "/Laws/MCL?objectName=mcl-554-601",
                      "ecfr": "/current/title-24/part-982/section-982.404"}[where]  # fmt: skip
            self._send(302, b"", location=target)
        elif path == "/search":  # a site's search page, which echoes what was asked
            hits = b"returned 0 documents" if query.endswith("699") else b"returned 1 document"
            self._send(200, b"<html><head><title>Michigan Legislature - Search</title></head><body>"
                       b"<nav>Home</nav><p>Your search for " + query[2:].encode() + b" " + hits + b".</p>")  # fmt: skip
        elif path.startswith("/echo"):  # a soft 404 echoing the number asked for in its title
            self._send(200, b"<html><head><title>MCL - Section 554.699</title></head><body>"
                       b"<h2>The document you requested is not available.</h2></body></html>")  # fmt: skip
        elif path == "/Laws/MCL":  # Michigan's real redirect target: statute text with "does not exist"
            self._send(200, SECTION_PAGE.replace(b"</p>", b" A judgment for possession does not exist "
                                                 b"until the court enters it.</p>"))  # fmt: skip
        elif path.startswith("/uscode/text/42/404"):
            self._send(200, b"<html><head><title>42 U.S. Code \xc2\xa7 404 - Overpayments and underpayments</title>"
                       b"</head><body><h1>42 U.S. Code \xc2\xa7 404</h1><p>\xc2\xa7 404. (a) text</p></body>")  # fmt: skip
        elif path.startswith("/current/title-24"):
            self._send(200, b"<html><head><title>Maintenance: Owner and family responsibility</title></head>"
                       b"<body><h1>\xc2\xa7 982.404 Maintenance</h1><p>(a) Owner obligation.</p></body>")  # fmt: skip
        elif path == "/fulltext.asp":
            self._send(200, b"<html><head><title>735 ILCS 5/2-404</title></head><body><h1>735 ILCS 5/2-404</h1>"
                       b"<p>(735 ILCS 5/2-404) Joinder of plaintiffs. (a) All persons may join.</p></body>")  # fmt: skip
        elif path.startswith(("/missing", "/gone", "/error")):
            self._send({"/missing": 404, "/gone": 410, "/error": 500}["/" + path.split("/")[1]], b"")
        elif path == "/not-found":
            self._send(200, b"<html><title>Page Not Found</title><body>Sorry.</body></html>")
        elif path.startswith("/soft404"):
            self._send(200, b"<html><head><title>Error</title></head><body><h1>404 - not found</h1></body>")
        elif path == "/":
            self._send(200, b"<html><title>Michigan Legislature</title><body>Welcome</body></html>")
        elif path == "/doc.aspx" and query == "mcl-554-6011":
            self._send(200, b"<html><title>Error</title><body>Section 554.6011 is not a section.</body>")
        elif path == "/doc.aspx" or path.startswith("/laws/"):
            self._send(200, SECTION_PAGE)
        elif path.startswith("/chapter554"):
            self._send(200, b"<html><body>Chapter 554: 554.601, 554.602, 554.603</body></html>")
        elif path.startswith("/nosection"):
            self._send(200, b"<html><body>The Landlord and Tenant Relationships Act.</body></html>")
        elif path.startswith("/pdf"):
            self._send(200, b"%PDF-1.4 554.601", kind="application/pdf")
        elif path.startswith("/late"):  # the section's number only after a megabyte of text
            self._send(200, b"<html><body>" + b"x" * (1 << 20) + b" 554.601</body></html>")
        else:
            self._send(404, b"")

    def _send(self, code: int, body: bytes, *, location: str | None = None, kind: str = "text/html") -> None:
        self.send_response(code)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.wfile.write(body)  # (the client may hang up once it has read what it wanted)


class _Server(ThreadingHTTPServer):
    def __init__(self, tls: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Pages)
        self.log: list[str] = []
        self.lock = threading.Lock()
        if tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(TLS / "real.example.org.pem")
            self.socket = context.wrap_socket(self.socket, server_side=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """real.example.org is 127.0.0.1, trusted through the test CA; every other name fails."""
    refuse_system_dns(monkeypatch)
    monkeypatch.setattr(certifi, "where", lambda: str(TLS / "ca.pem"))

    def getaddrinfo(host: str, port: Any = None, *args: Any, **kwargs: Any) -> Any:
        if host != HOST:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return _REAL_GETADDRINFO("127.0.0.1", port, type=socket.SOCK_STREAM)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def site() -> Iterator[_Server]:
    with serving(server := _Server(tls=True)):
        yield server


def _checker(*, offline: bool = False, snapshot: Path | None = None, timeout: float = 2.0) -> LivenessChecker:
    return LivenessChecker(
        offline=offline, cache_path=None, snapshot_path=snapshot, allow_hosts=[HOST], timeout=timeout,
        url_deadline=timeout,
    )  # fmt: skip


def _at(url: str, section: str = "554.601") -> CitationMention:
    key = ("Michigan Compiled Laws", *section.split("."))
    return CitationMention(
        f"MCL {section}", 0, 4 + len(section), "statute", "MI", f"Mich. Comp. Laws § {section}", key, url,
        ("Michigan Compiled Laws",), section,
    )  # fmt: skip


def _ask(checker: LivenessChecker, url: str, section: str = "554.601") -> tuple[S, str]:
    asked = page_lookup(checker.for_answer())(_at(url, section))
    assert asked is not None
    return asked


def _cited(text: str, url: str) -> CitationMention:
    """``text``'s one citation as the finder reads it, its official page at ``url``."""
    (mention,) = find_citations(text).mentions
    return CitationMention(
        mention.raw, mention.start, mention.end, mention.kind, mention.jurisdiction, mention.normalized,
        mention.key, url, mention.code, mention.section,
    )  # fmt: skip


class TestPageReached:
    """KNOWN only for the section's own page, after redirects; a not-found page never is."""

    @pytest.mark.parametrize(
        ("path", "status", "says"),
        [
            ("/doc.aspx?mcl-554-601", S.KNOWN, "shows 554.601"),
            ("/laws/554.601.html", S.KNOWN, "shows 554.601"),
            ("/redirect-to-section/old-address", S.KNOWN, "redirected to"),
            ("/missing/mcl-554-601", S.UNKNOWN, "does not exist (HTTP 404)"),
            ("/gone/mcl-554-601", S.UNKNOWN, "does not exist (HTTP 410)"),
            ("/redirect-to-missing/mcl-554-601", S.UNKNOWN, "HTTP 404 after 1 redirect"),
            ("/redirect-to-notfound/mcl-554-601", S.UNKNOWN, "not-found page"),
            ("/soft404/mcl-554-601", S.UNKNOWN, "not-found page"),
            ("/redirect-to-home/mcl-554-601", S.UNCHECKED, "not the section's page"),
            ("/chapter554.htm#554.601", S.UNCHECKED, "the chapter's page"),
            ("/doc.aspx?mcl-554-6011", S.UNCHECKED, "the chapter's page"),
            ("/nosection/mcl-554-601", S.UNCHECKED, "does not show 554.601"),
            ("/pdf/mcl-554-601", S.UNCHECKED, "not a text page"),
            ("/late/mcl-554-601", S.UNCHECKED, f"first {PAGE_BYTES // 1024} kB"),
            ("/error/mcl-554-601", S.UNCHECKED, "HTTP 500"),
        ],
    )
    def test_status(self, site: _Server, path: str, status: S, says: str) -> None:
        got, why = _ask(_checker(), f"https://{HOST}:{site.port}{path}")
        assert got is status and says in why, why

    @pytest.mark.parametrize(
        ("citation", "path"),
        [
            ("42 U.S.C. § 404", "/uscode/text/42/404"),
            ("24 C.F.R. § 982.404", "/redirect-to-ecfr/cfr-reference?reference=24%20CFR%20982.404"),
            ("735 ILCS 5/2-404", "/fulltext.asp?DocName=073500050K2-404"),
        ],
    )
    def test_a_section_numbered_404_is_its_page(self, site: _Server, citation: str, path: str) -> None:
        """A section's own number is never read as a not-found page's 404 (address, title or heading)."""
        mention = _cited(citation, f"https://{HOST}:{site.port}{path}")
        asked = page_lookup(_checker().for_answer())(mention)
        assert asked is not None and asked[0] is S.KNOWN, asked

    @pytest.mark.parametrize(
        ("path", "section", "status", "says"),
        [
            ("/redirect-to-search/mcl-554-699", "554.699", S.UNKNOWN, "not-found page"),
            ("/redirect-to-searchhit/mcl-554-601", "554.601", S.UNCHECKED, "search page"),
            ("/echo/doc.aspx?mcl-554-699", "554.699", S.UNKNOWN, "not-found page"),
            ("/redirect-to-mcl/doc.aspx?mcl-554-601", "554.601", S.KNOWN, "shows 554.601"),
        ],
    )
    def test_a_page_echoing_the_number_is_not_the_section(
        self, site: _Server, path: str, section: str, status: S, says: str
    ) -> None:
        """A search page or an error page that repeats the number asked for is not the section's page;
        not-found words in its title or headings win over the number; statute text saying "does not
        exist" on the section's own page (reached by the site's redirect) does not make it one."""
        got, why = _ask(_checker(), f"https://{HOST}:{site.port}{path}", section)
        assert got is status and says in why, why

    def test_a_slow_page_is_unchecked(self) -> None:
        """A server that never answers leaves the citation UNCHECKED with the reason."""
        with socket.socket() as quiet:
            quiet.bind(("127.0.0.1", 0))
            quiet.listen()
            got, why = _ask(
                _checker(timeout=0.3), f"https://{HOST}:{quiet.getsockname()[1]}/doc.aspx?mcl-554-601"
            )
        assert got is S.UNCHECKED and "not confirmed" in why

    def test_reading_counts_against_the_answer_budget(self, site: _Server) -> None:
        """Time spent reading a page is the answer's: once it has used its budget, no page is asked."""
        view = LivenessChecker(
            offline=False,
            cache_path=None,
            allow_hosts=[HOST],
            timeout=2.0,
            url_deadline=2.0,
            answer_budget=5.0,
        ).for_answer()
        view.spend(5.0)
        asked = page_lookup(view)(_at(f"https://{HOST}:{site.port}/doc.aspx?mcl-554-601"))
        assert asked is not None and asked[0] is S.UNCHECKED and "budget" in asked[1], asked
        assert site.log == []

    def test_no_official_url_is_not_asked(self) -> None:
        assert page_lookup(_checker().for_answer())(_at("")) is None

    def test_only_uncovered_citations_are_asked(self, site: _Server) -> None:
        """A listed section is KNOWN from the index without any request."""
        index = load_citation_index(SAMPLE_INDEX)
        known = _at(f"https://{HOST}:{site.port}/missing/mcl-554-602", "554.602")
        asked = _at(f"https://{HOST}:{site.port}/missing/mcl-600-5714", "600.5714")
        findings = check_citations([known, asked], "MI", index, [], page_lookup(_checker().for_answer()))
        assert [f.status for f in findings] == [S.KNOWN, S.UNKNOWN]
        assert site.log == ["/missing/mcl-600-5714"]


class TestPlainHttp:
    """citeurl's plain-http official addresses are asked over https only."""

    def test_upgraded(self, site: _Server) -> None:
        got, why = _ask(_checker(), f"http://{HOST}:{site.port}/doc.aspx?mcl-554-601")
        assert got is S.KNOWN and "asked over https" in why

    def test_a_host_without_tls_is_unchecked(self) -> None:
        """A server that speaks only plain HTTP gets no clear-text request: the citation is UNCHECKED."""
        with serving(plain := _Server(tls=False)):
            got, why = _ask(_checker(), f"http://{HOST}:{plain.port}/doc.aspx?mcl-554-601")
        assert got is S.UNCHECKED and "asked over https" in why
        assert plain.log == []

    def test_citeurl_builds_four_http_addresses(self) -> None:
        """The four http:// builders the docstring names are what citeurl still builds."""
        texts = ["Ala. Code § 35-9A-201", "Alaska Stat. § 34.03.020", "R.I. Gen. Stat. § 34-18-15",
                 "W. Va. Code § 37-6-30"]  # fmt: skip
        urls = [m.url for t in texts for m in find_citations(t).mentions]
        assert len(urls) == 4 and all(u and u.startswith("http://") for u in urls), urls


class TestSnapshot:
    """A live run records its decisions; a later offline run decides the same citations the same way."""

    def test_recorded_then_replayed_offline(self, site: _Server, tmp_path: Path) -> None:
        snapshot = tmp_path / "snapshot.csv"
        snapshot.write_text(
            "url,status,http_status,checked_at\n"
            f"https://{HOST}:{site.port}/chapter554.htm,LIVE,200,2026-11-30\n",
            encoding="utf-8",
        )
        known = f"https://{HOST}:{site.port}/doc.aspx?mcl-554-601"
        invented = f"https://{HOST}:{site.port}/soft404/mcl-554-699"
        chapter = f"https://{HOST}:{site.port}/chapter554.htm"
        live = _checker(snapshot=snapshot)
        assert _ask(live, known)[0] is S.KNOWN
        assert _ask(live, invented, "554.699")[0] is S.UNKNOWN
        assert _ask(live, chapter)[0] is S.UNCHECKED  # undecided: not recorded
        assert _ask(live, known)[0] is S.KNOWN  # recorded once
        rows = list(csv.DictReader(snapshot.open(encoding="utf-8")))
        assert [(r["url"], r["status"], r["citation"]) for r in rows] == [
            (chapter, "LIVE", ""),
            (known, "LIVE", "Mich. Comp. Laws § 554.601"),
            (invented, "DEAD", "Mich. Comp. Laws § 554.699"),
        ]
        requests = len(site.log)
        offline = _checker(offline=True, snapshot=snapshot)
        got = [_ask(offline, known), _ask(offline, invented, "554.699")]
        assert [s for s, _ in got] == [S.KNOWN, S.UNKNOWN]
        assert all("snapshot" in why for _, why in got)
        # a URL's row (no citation) says only that the address answered: never a section's page
        assert page_lookup(offline.for_answer())(_at(chapter)) is None
        assert len(site.log) == requests

    def test_a_snapshot_that_cannot_be_written_says_so(self, site: _Server, tmp_path: Path) -> None:
        """The decision stands; its reason says it was not recorded, and why."""
        snapshot = tmp_path / "snapshot.csv"
        snapshot.write_text("url,status,http_status,checked_at\n", encoding="utf-8")
        checker = _checker(snapshot=snapshot)
        snapshot.unlink()
        snapshot.mkdir()  # (a file that cannot be opened for writing, whoever runs the test)
        got, why = _ask(checker, f"https://{HOST}:{site.port}/doc.aspx?mcl-554-601")
        assert got is S.KNOWN and "not recorded in the snapshot" in why and "IsADirectoryError" in why

    def test_the_same_page_for_another_citation_is_another_row(self, site: _Server, tmp_path: Path) -> None:
        """A row records a citation's page: another citation at the same address is asked for itself."""
        snapshot = tmp_path / "snapshot.csv"
        snapshot.write_text("url,status,http_status,checked_at\n", encoding="utf-8")
        url = f"https://{HOST}:{site.port}/doc.aspx?mcl-554-601"
        assert _ask(_checker(snapshot=snapshot), url)[0] is S.KNOWN
        offline = _checker(offline=True, snapshot=snapshot)
        assert page_lookup(offline.for_answer())(_at(url, "554.602")) is None
