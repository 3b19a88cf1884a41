"""Allowlist loading (both formats, every error as one exact line) and URL classification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.errors import DataError
from grounding_eval.verifier.allowlist import Allowlist, UrlStatus, classify_url, load_allowlist
from grounding_eval.verifier.liveness import Liveness, LivenessChecker, LivenessResult
from grounding_eval.verifier.urls import UrlMention, extract_urls

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "urls"
REPO = TESTS.parent


class _FakeLiveness(LivenessChecker):
    """Answers from a table and records every URL it was asked about."""

    def __init__(self, answers: dict[str, LivenessResult]) -> None:
        super().__init__(offline=True, cache_path=None)
        self.answers = answers
        self.asked: list[str] = []

    def check(self, url: str) -> LivenessResult:
        self.asked.append(url)
        return self.answers[url]


def _mention(url: str) -> UrlMention:
    return UrlMention(url, url, 0, len(url), None)


class TestLoadAllowlist:
    """load_allowlist reads text or CSV into normalized URLs and rejects bad files with one line."""

    def test_text_fixture(self) -> None:
        """Comments, blank lines, bare domains, parentheses and fragments are handled."""
        allowlist = load_allowlist(FIXTURES / "allowlist.txt")
        assert allowlist.urls == {
            "https://lawhelp.org",
            "https://illinoislegalaid.org/legal-information/eviction",
            "https://trusted.org",
            "https://en.wikipedia.org/wiki/Foo_(bar)",
            "https://example.org/page",
        }
        assert len(allowlist) == 5
        assert allowlist.path == str(FIXTURES / "allowlist.txt")

    def test_csv_fixture(self) -> None:
        """A CSV's url column is read; other columns (with quoted commas) are ignored."""
        allowlist = load_allowlist(str(FIXTURES / "allowlist.csv"))
        assert allowlist.urls == {
            "https://lawhelp.org",
            "https://illinoislegalaid.org/legal-information/eviction",
        }

    def test_shipped_sample_loads(self) -> None:
        """The sample allowlist shipped with the pack (edited elsewhere, so no count is pinned) is valid."""
        allowlist = load_allowlist(REPO / "datasets" / "sample" / "allowlist.txt")
        assert len(allowlist) > 0
        assert all(url.startswith("https://") for url in allowlist.urls)

    def test_contains_normalizes(self) -> None:
        """Membership ignores cosmetic differences but not different pages."""
        allowlist = load_allowlist(FIXTURES / "allowlist.txt")
        assert "HTTP://www.LawHelp.org/?utm_source=x#top" in allowlist
        assert "https://lawhelp.org/other" not in allowlist
        assert "https://trusted.org@evil.test/" not in allowlist

    def test_fragment_is_not_a_comment(self, tmp_path: Path) -> None:
        """'#' glued to a URL is its fragment; ' # ' starts a comment."""
        file = tmp_path / "a.txt"
        file.write_text("https://a.org/x#part # note\n", encoding="utf-8")
        assert load_allowlist(file).urls == {"https://a.org/x"}

    def test_duplicates_collapse(self, tmp_path: Path) -> None:
        """Two spellings of one page count once."""
        file = tmp_path / "a.txt"
        file.write_text("https://www.a.org/\nhttp://a.org\n", encoding="utf-8")
        assert len(load_allowlist(file)) == 1

    def test_is_frozen(self) -> None:
        """An Allowlist cannot be changed after loading."""
        allowlist = Allowlist(path="x", urls=frozenset({"https://a.org"}))
        with pytest.raises(AttributeError):
            allowlist.urls = frozenset()  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("name", "content", "problem"),
        [
            pytest.param(
                "a.txt", "https://a.org\nxyz\n", "line 2: not an http(s) URL: 'xyz'", id="not-a-url"
            ),
            pytest.param(
                "a.txt", "# c\n\nftp://a.org/f\n", "line 3: not an http(s) URL: 'ftp://a.org/f'", id="ftp"
            ),
            pytest.param(
                "a.txt", "mailto:help@a.org\n", "line 1: not an http(s) URL: 'mailto:help@a.org'", id="mailto"
            ),
            pytest.param("a.txt", "help@a.org\n", "line 1: not an http(s) URL: 'help@a.org'", id="email"),
            pytest.param(
                "a.txt",
                "https://a.org https://b.org\n",
                "line 1: not an http(s) URL: 'https://a.org https://b.org'",
                id="two-urls",
            ),
            pytest.param(
                "a.txt",
                "https://a.org/x.\n",
                "line 1: not an http(s) URL: 'https://a.org/x.'",
                id="trailing-punctuation",
            ),
            pytest.param(
                "a.txt",
                "[a](https://a.org)\n",
                "line 1: not an http(s) URL: '[a](https://a.org)'",
                id="markdown",
            ),
            pytest.param("a.txt", "# only comments\n\n", "no URLs", id="empty"),
            pytest.param("a.txt", "", "no URLs", id="empty-file"),
            pytest.param(
                "a.csv", "link,org\nhttps://a.org,A\n", "CSV has no 'url' column", id="csv-no-url-column"
            ),
            pytest.param("a.csv", "", "CSV has no 'url' column", id="csv-empty"),
            pytest.param("a.csv", "url,org\n", "no URLs", id="csv-no-rows"),
            pytest.param(
                "a.csv",
                "url,org\nhttps://a.org,A\nnope,B\n",
                "line 3: not an http(s) URL: 'nope'",
                id="csv-bad-row",
            ),
            pytest.param("a.csv", "url,org\n,A\n", "line 2: not an http(s) URL: ''", id="csv-empty-cell"),
        ],
    )
    def test_errors(self, tmp_path: Path, name: str, content: str, problem: str) -> None:
        """Each problem is reported as '<file>: <problem>' on one line."""
        file = tmp_path / name
        file.write_text(content, encoding="utf-8")
        with pytest.raises(DataError) as raised:
            load_allowlist(file)
        assert str(raised.value) == f"{file}: {problem}"

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing file says so."""
        with pytest.raises(DataError) as raised:
            load_allowlist(tmp_path / "nope.txt")
        assert str(raised.value) == f"{tmp_path / 'nope.txt'}: file not found"

    def test_not_utf8(self, tmp_path: Path) -> None:
        """Undecodable bytes are a DataError, not a traceback."""
        file = tmp_path / "a.txt"
        file.write_bytes(b"https://a.org/\xff\n")
        with pytest.raises(DataError, match=r"a\.txt: not UTF-8 text \(byte 14\)$"):
            load_allowlist(file)


def _classify_cases() -> list[Any]:
    cases: list[dict[str, Any]] = yaml.safe_load(
        (TESTS / "golden" / "urls_classify.yaml").read_text(encoding="utf-8")
    )
    return [pytest.param(c["input"], c["expected"], id=c["id"]) for c in cases]


class TestClassifyUrl:
    """classify_url: allowlist, then the public-suffix rule, then liveness; UNKNOWN is UNCHECKED."""

    @pytest.mark.parametrize(("text", "expected"), _classify_cases())
    def test_golden(self, text: str, expected: dict[str, str]) -> None:
        """Each golden answer's single link gets the expected status and detail (offline + snapshot)."""
        allowlist = load_allowlist(FIXTURES / "allowlist.txt")
        liveness = LivenessChecker(offline=True, cache_path=None, snapshot_path=FIXTURES / "snapshot.csv")
        (mention,) = extract_urls(text)
        finding = classify_url(mention, allowlist, liveness)
        assert {"status": finding.status.value, "detail": finding.detail} == expected
        assert finding.mention is mention

    def test_allowlist_hit_never_checks_liveness(self) -> None:
        """An allowlisted URL costs no liveness call."""
        fake = _FakeLiveness({})
        allowlist = load_allowlist(FIXTURES / "allowlist.txt")
        finding = classify_url(_mention("http://www.lawhelp.org/"), allowlist, fake)
        assert (finding.status, finding.normalized, fake.asked) == (
            UrlStatus.IN_ALLOWLIST,
            "https://lawhelp.org",
            [],
        )

    @pytest.mark.parametrize(
        ("result", "status", "detail"),
        [
            pytest.param(
                LivenessResult(Liveness.LIVE, "HTTP 200", 200),
                UrlStatus.REAL_NOT_IN_ALLOWLIST,
                "not in allowlist; live: HTTP 200",
                id="live",
            ),
            pytest.param(
                LivenessResult(Liveness.DEAD, "HTTP 404", 404),
                UrlStatus.HALLUCINATED_URL,
                "not in allowlist; HTTP 404",
                id="dead",
            ),
            pytest.param(
                LivenessResult(Liveness.UNKNOWN, "offline mode", None),
                UrlStatus.UNCHECKED,
                "not in allowlist; liveness unchecked: offline mode",
                id="offline",
            ),
            pytest.param(
                LivenessResult(Liveness.UNKNOWN, "HTTP 403", 403),
                UrlStatus.UNCHECKED,
                "not in allowlist; liveness unchecked: HTTP 403",
                id="blocked",
            ),
        ],
    )
    def test_liveness_maps_to_status(self, result: LivenessResult, status: UrlStatus, detail: str) -> None:
        """LIVE → REAL_NOT_IN_ALLOWLIST, DEAD → HALLUCINATED_URL, UNKNOWN → UNCHECKED; the URL as written."""
        url = "http://Other.example.org/x?utm_source=a"
        fake = _FakeLiveness({url: result})
        finding = classify_url(_mention(url), load_allowlist(FIXTURES / "allowlist.txt"), fake)
        assert (finding.status, finding.detail) == (status, detail)
        assert finding.normalized == "https://other.example.org/x"
        assert fake.asked == [url]

    def test_invalid_suffix_never_checks_liveness(self, tmp_path: Path) -> None:
        """A host that cannot exist is HALLUCINATED_URL without asking liveness, even a snapshot."""
        url = "https://help.illinois-legal-aid/eviction"
        snapshot = tmp_path / "snap.csv"
        snapshot.write_text(
            f"url,status,http_status,checked_at\n{url},LIVE,200,2026-11-30\n", encoding="utf-8"
        )
        fake = _FakeLiveness({})
        allowlist = load_allowlist(FIXTURES / "allowlist.txt")
        finding = classify_url(_mention(url), allowlist, fake)
        recorded = LivenessChecker(offline=True, cache_path=None, snapshot_path=snapshot)
        assert (finding.status, finding.detail, fake.asked) == (
            UrlStatus.HALLUCINATED_URL,
            'not in allowlist; not a real public suffix: ".illinois-legal-aid"',
            [],
        )
        assert classify_url(_mention(url), allowlist, recorded).status is UrlStatus.HALLUCINATED_URL

    def test_allowlist_beats_the_suffix_rule(self, tmp_path: Path) -> None:
        """A page the team vetted is IN_ALLOWLIST even on a host with no public suffix."""
        file = tmp_path / "a.txt"
        file.write_text("http://intranet.local/forms\nhttp://legalaid/\n", encoding="utf-8")
        allowlist = load_allowlist(file)
        for url in ("https://intranet.local/forms/", "http://legalaid"):
            assert classify_url(_mention(url), allowlist, _FakeLiveness({})).status is UrlStatus.IN_ALLOWLIST

    @pytest.mark.parametrize(
        "url",
        [
            pytest.param("http://192.0.2.1/", id="ip-literal"),
            pytest.param("http://localhost:8080/", id="localhost"),
            pytest.param("https://example.legal/", id="real-suffix"),
        ],
    )
    def test_not_this_rule_goes_to_liveness(self, url: str) -> None:
        """IP literals, localhost and real suffixes are asked about as before."""
        fake = _FakeLiveness({url: LivenessResult(Liveness.DEAD, "HTTP 404", 404)})
        finding = classify_url(_mention(url), load_allowlist(FIXTURES / "allowlist.txt"), fake)
        assert (finding.status, finding.detail, fake.asked) == (
            UrlStatus.HALLUCINATED_URL,
            "not in allowlist; HTTP 404",
            [url],
        )

    def test_status_values(self) -> None:
        """Enum values are their names (they appear in reports and JSON)."""
        assert [s.value for s in UrlStatus] == [
            "IN_ALLOWLIST",
            "REAL_NOT_IN_ALLOWLIST",
            "HALLUCINATED_URL",
            "UNCHECKED",
        ]
