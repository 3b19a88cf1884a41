"""URL extraction, normalization and domain helpers: golden tables, properties and the security cases."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.verifier import urls
from grounding_eval.verifier.urls import (
    UrlMention,
    extract_urls,
    host_matches_domain,
    is_address_host,
    is_localhost_name,
    normalize_url,
    registered_domain,
    suffix_problem,
    url_host,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _cases(name: str) -> list[Any]:
    cases: list[dict[str, Any]] = yaml.safe_load((GOLDEN / name).read_text(encoding="utf-8"))
    return [pytest.param(c["input"], c["expected"], id=c["id"]) for c in cases]


# --- strategies ---------------------------------------------------------------------------------------

_label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_hosts = st.one_of(
    st.builds(
        lambda ls, tld: ".".join([*ls, tld]),
        st.lists(_label, min_size=1, max_size=3),
        st.sampled_from(["org", "com", "gov", "co.uk", "рф", "ORG"]),
    ),
    st.sampled_from(
        ["www.lawhelp.org", "WWW.WWW.x.org", "127.0.0.1", "[::1]", "президент.рф", "lawhelp.org."]
    ),
)
_path_text = st.lists(
    st.sampled_from([*"abcXYZ019-._~%/!$&'()*+,;=:@ é✪", "%2f", "%7E", "%41", "..", "/./", "/../"]),
    max_size=12,
).map("".join)
_query_text = st.lists(
    st.tuples(
        st.sampled_from(["q", "utm_source", "UTM_x", "fbclid", "ref", "a", "b", "%7E", ""]),
        st.sampled_from(["", "=", "=1", "=a%2fb", "=x=y", "=é", "=%"]),
    ),
    max_size=4,
).map(lambda pairs: "&".join(k + v for k, v in pairs))
_urls = st.builds(
    lambda scheme, userinfo, host, port, path, query, fragment: (
        f"{scheme}{userinfo}{host}{port}/{path}{'?' + query if query else ''}{fragment}"
    ),
    st.sampled_from(["https://", "http://", "HTTP://", "HtTpS://", ""]),
    st.sampled_from(["", "user@", "user:pw@", "trusted.org@"]),
    _hosts,
    st.sampled_from(["", ":80", ":443", ":8080", ":"]),
    _path_text,
    _query_text,
    st.sampled_from(["", "#", "#frag", "#a/b?c"]),
)

_BRACED_HOSTS = ("lawhelp.org", "www.lawhelp.org", "WWW.LAWHELP.ORG", "a.b.lawhelp.org", "files_1.lawhelp.org",
                 "LawHelp.Org", "xn--mnchen-3ya.de", "lawhelp.co.uk")  # fmt: skip
_BRACED_TAILS = ("", "/", "/il", "/a/b-c", "/ends-in-", "?q", "?a=1&b-2=2", "#top", "/p?q#f", "/wiki/X_(law)",
                 "'s", "'s/page")  # fmt: skip


class TestExtractUrls:
    """extract_urls finds every http(s) link a reader would see, and nothing else."""

    @pytest.mark.parametrize(("text", "expected"), [*_cases("urls_extract.yaml"), *_cases("urls_prose.yaml")])
    def test_golden(self, text: str, expected: list[str | dict[str, Any]]) -> None:
        """Each golden answer yields exactly the expected mentions, in order."""
        mentions = extract_urls(text)
        assert [m.raw for m in mentions] == [e if isinstance(e, str) else e["raw"] for e in expected]
        for mention, want in zip(mentions, expected, strict=True):
            if isinstance(want, dict):
                assert {k: getattr(mention, k) for k in want} == want

    def test_offsets_and_url(self) -> None:
        """start/end locate raw in the text; url adds https:// only to bare domains (https: to //host)."""
        text = "A: lawhelp.org/il. B: [x](https://b.org/y). C: <http://c.org>"
        assert extract_urls(text) == [
            UrlMention("lawhelp.org/il", "https://lawhelp.org/il", 3, 17, None),
            UrlMention("https://b.org/y", "https://b.org/y", 26, 41, "x"),
            UrlMention("http://c.org", "http://c.org", 48, 60, None),
        ]

    @given(st.lists(st.one_of(st.text(max_size=20), _urls, _hosts), max_size=8).map(" ".join))
    @settings(deadline=None)  # the first call loads the public suffix list
    def test_mentions_are_consistent_on_any_text(self, text: str) -> None:
        """On any text, mentions are in order, raw is the text at its offsets, and the host parses."""
        # Random text with URLs and bare hosts among it (random text alone holds a URL almost never).
        mentions = extract_urls(text)
        event(f"mentions: {min(len(mentions), 3)}{'+' if len(mentions) > 3 else ''}")
        assert [m.start for m in mentions] == sorted(m.start for m in mentions)
        for m in mentions:
            assert text[m.start : m.end] == m.raw
            assert url_host(m.url) is not None

    @given(_urls.filter(lambda u: u.lower().startswith("http") and " " not in u and '"' not in u))
    def test_url_between_spaces_is_found_whole(self, url: str) -> None:
        """A generated URL standing alone between spaces is found, and ends at a trimmed character."""
        mentions = extract_urls(f"See {url} today")
        assert mentions, url
        assert url.startswith(mentions[0].raw)
        assert mentions[0].start == 4

    @settings(max_examples=400, deadline=None)
    @given(
        scheme=st.sampled_from(["", "https://", "HTTP://", "//"]),
        host=st.sampled_from(_BRACED_HOSTS),
        port=st.sampled_from(["", ":8080"]),
        tail=st.sampled_from(_BRACED_TAILS),
        brace=st.sampled_from(["", "()", "[]", "{}", "**", "<>", '""']),
        punct=st.sampled_from(["", "?", "!", ":", ",", ".", ";", "..."]),
        context=st.sampled_from(["{}", "{} is the page", "See {} for help", "Go to {}", "word{}word"]),
    )
    def test_link_in_any_brace_and_punctuation_is_found_exactly(
        self, scheme: str, host: str, port: str, tail: str, brace: str, punct: str, context: str
    ) -> None:
        """A link wrapped in a bracket, emphasis or quotes and followed by punctuation, alone or in a
        sentence (glued to words when bracketed), is found exactly: the brackets, the punctuation and a
        possessive 's (with what follows it) are prose."""
        if context == "word{}word" and brace in ("", "**"):
            context = "{}"  # glued to words only inside brackets or quotes
        link = scheme + host + port + ("" if tail.startswith("'s") else tail)
        written = brace[:1] + scheme + host + port + tail + punct + brace[1:]
        mentions = extract_urls(context.format(written))
        event(f"scheme {scheme or 'none'}, brace {brace or 'none'}")
        assert [m.raw for m in mentions] == [link]

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("[a](" * 25_000, id="unclosed-markdown-links"),
            pytest.param("[a](" + "x" * 200_000, id="endless-destination"),
            pytest.param("https://x.org/" + ")" * 200_000, id="closing-parens"),
            pytest.param("https://x.org" + "." * 200_000, id="trailing-dots"),
            pytest.param("a." * 100_000 + "org", id="many-labels"),
            pytest.param("a@b.org " * 25_000, id="many-emails"),
            pytest.param("(https://x.org/" + "(" * 200_000, id="openers-after-an-opened-link"),
            pytest.param("(https://x.org/" + "()" * 100_000, id="balanced-pairs-after-an-opened-link"),
            pytest.param("(" * 100_000 + "a.org/" + ")" * 100_000, id="nested-openers-around-a-domain"),
            pytest.param("//a.org" * 30_000, id="protocol-relative-run"),
            pytest.param("\\a.org" * 30_000, id="backslash-run"),
            pytest.param("https://" + "a:" * 100_000, id="colons-in-an-authority"),
            pytest.param("Tex.Gov't " * 20_000, id="contractions"),
        ],
    )
    def test_hostile_input_is_fast(self, text: str) -> None:
        """Model output is untrusted: pathological text takes linear time, not minutes.

        The bound only tells a linear scan (at most 0.6 s here on a loaded machine) from a backtracking
        one; benchmarks/url_extract.py reports the figures and their growth.
        """
        started = time.process_time()
        extract_urls(text)
        assert time.process_time() - started < 10

    def test_no_network_when_suffix_list_is_first_loaded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The public suffix list comes from the bundled snapshot: no socket is ever opened."""

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("network access attempted")

        monkeypatch.setattr(socket, "socket", refuse)
        monkeypatch.setattr(socket, "create_connection", refuse)
        monkeypatch.setattr(socket, "getaddrinfo", refuse)
        urls._extractor.cache_clear()
        try:
            assert [m.raw for m in extract_urls("see lawhelp.org and example.invalid")] == ["lawhelp.org"]
            assert registered_domain("a.b.illinoislegalaid.org") == "illinoislegalaid.org"
        finally:
            urls._extractor.cache_clear()

    def test_extractor_is_lazy_and_shared(self) -> None:
        """The tldextract instance is created once, on first use, with no download URLs."""
        urls._extractor.cache_clear()
        first = urls._extractor()
        assert urls._extractor() is first
        assert tuple(first.suffix_list_urls) == ()


class TestNormalizeUrl:
    """normalize_url removes cosmetic differences only, and is idempotent."""

    @pytest.mark.parametrize(("url", "expected"), _cases("urls_normalize.yaml"))
    def test_golden(self, url: str, expected: str) -> None:
        """Each golden URL normalizes to the expected key."""
        assert normalize_url(url) == expected

    @given(_urls)
    def test_idempotent_on_generated_urls(self, url: str) -> None:
        """Normalizing twice changes nothing."""
        once = normalize_url(url)
        assert normalize_url(once) == once

    @given(st.text(max_size=80))
    def test_idempotent_and_total_on_any_text(self, text: str) -> None:
        """Any string normalizes without error, and twice is the same as once."""
        once = normalize_url(text)
        assert normalize_url(once) == once

    @given(_urls.filter(lambda u: url_host(u) is not None))
    @settings(deadline=None)  # the first call may load the public suffix list (0.3 s on a loaded machine)
    def test_result_is_https_with_same_host(self, url: str) -> None:
        """A parsable URL becomes https:// on the same host, minus leading www."""
        out = normalize_url(url)
        host = url_host(url)
        assert host is not None
        assert out.startswith("https://")
        assert host_matches_domain(url_host(out) or "", host)

    def test_different_pages_stay_different(self) -> None:
        """Path case, content parameters and non-default ports are never folded away."""
        keys = {
            normalize_url(u)
            for u in ("https://x.org/A", "https://x.org/a", "https://x.org/a?id=1", "https://x.org:8080/a")
        }
        assert len(keys) == 4

    def test_tracking_params_constant_is_used(self) -> None:
        """Every exact name in TRACKING_PARAMS is removed."""
        exact = [p for p in urls.TRACKING_PARAMS if not p.endswith("*")]
        query = "&".join(f"{p}=1" for p in exact)
        assert normalize_url(f"https://x.org/a?{query}&keep=1") == "https://x.org/a?keep=1"


class TestUrlHost:
    """url_host returns the host a browser would contact."""

    @pytest.mark.parametrize(
        ("url", "host"),
        [
            pytest.param("https://www.LawHelp.org:8443/x", "www.lawhelp.org", id="case-port"),
            pytest.param("https://trusted.org@evil.test/", "evil.test", id="userinfo-trick"),
            pytest.param("https://a:b@trusted.org@evil.test/", "evil.test", id="double-at"),
            pytest.param("https://evil.test\\@trusted.org/", "evil.test", id="backslash-trick"),
            pytest.param("https://trusted.org.evil.test/", "trusted.org.evil.test", id="lookalike"),
            pytest.param("https://президент.рф/", "xn--d1abbgf6aiiy.xn--p1ai", id="idn"),
            pytest.param("http://[::1]:8080/", "::1", id="ipv6"),
            pytest.param("lawhelp.org/x", "lawhelp.org", id="bare"),
            pytest.param("https://lawhelp.org./x", "lawhelp.org", id="trailing-dot"),
        ],
    )
    def test_host(self, url: str, host: str) -> None:
        """The host is lower-case ASCII, without userinfo or port."""
        assert url_host(url) == host

    @pytest.mark.parametrize(
        "url",
        [
            pytest.param("https://", id="empty"),
            pytest.param("https://x.org:99999/", id="bad-port"),
            pytest.param("https://trusted.org%40evil.test/", id="percent-host"),
            pytest.param("https://exa mple.org/", id="space"),
            pytest.param("https://-x.org/", id="leading-hyphen"),
            pytest.param("ftp://x.org/", id="ftp"),
            pytest.param("mailto:help@x.org", id="mailto"),
            pytest.param("https://[::zz]/", id="bad-ipv6"),
        ],
    )
    def test_unparsable(self, url: str) -> None:
        """Anything that is not a clean http(s) host is None, never a guess."""
        assert url_host(url) is None


class TestRegisteredDomain:
    """registered_domain names the domain an organization would own."""

    @pytest.mark.parametrize(
        ("host", "expected"),
        [
            pytest.param("www.illinoislegalaid.org", "illinoislegalaid.org", id="www"),
            pytest.param("WWW.IllinoisLegalAid.ORG", "illinoislegalaid.org", id="case"),
            pytest.param("a.b.legalaid.org.uk", "legalaid.org.uk", id="multi-label-suffix"),
            pytest.param("someorg.github.io", "someorg.github.io", id="private-suffix"),
            pytest.param("президент.рф", "xn--d1abbgf6aiiy.xn--p1ai", id="idn"),
            pytest.param("org", None, id="bare-suffix"),
            pytest.param("localhost", None, id="no-suffix"),
            pytest.param("127.0.0.1", None, id="ip"),
            pytest.param("", None, id="empty"),
        ],
    )
    def test_registered_domain(self, host: str, expected: str | None) -> None:
        """The domain under the public suffix, or None."""
        assert registered_domain(host) == expected


class TestHostMatchesDomain:
    """host_matches_domain is a label-boundary suffix match that cannot be fooled by look-alikes."""

    @pytest.mark.parametrize(
        ("host", "domain", "expected"),
        [
            pytest.param("trusted.org", "trusted.org", True, id="same"),
            pytest.param("sub.trusted.org", "trusted.org", True, id="subdomain"),
            pytest.param("a.b.trusted.org", "trusted.org", True, id="deep-subdomain"),
            pytest.param("WWW.Trusted.ORG", "trusted.org", True, id="case-and-www"),
            pytest.param("trusted.org", "www.trusted.org", True, id="www-on-domain"),
            pytest.param("trusted.org.", "trusted.org", True, id="trailing-dot"),
            pytest.param("trusted.org.evil.test", "trusted.org", False, id="lookalike-prefix"),
            pytest.param("evil-trusted.org", "trusted.org", False, id="hyphen-lookalike"),
            pytest.param("eviltrusted.org", "trusted.org", False, id="no-label-boundary"),
            pytest.param("trusted.org", "sub.trusted.org", False, id="parent-is-not-child"),
            pytest.param("evil.org", "org", False, id="bare-suffix-domain"),
            pytest.param("a.co.uk", "co.uk", False, id="bare-multi-label-suffix"),
            pytest.param("10.0.0.1", "10.0.0.1", True, id="ip-equal"),
            pytest.param("1.10.0.0.1", "10.0.0.1", False, id="ip-no-suffix-match"),
            pytest.param("", "trusted.org", False, id="empty-host"),
        ],
    )
    def test_match(self, host: str, domain: str, expected: bool) -> None:
        """Only the domain itself and its subdomains match."""
        assert host_matches_domain(host, domain) is expected

    @pytest.mark.parametrize(
        "url",
        [
            pytest.param("https://trusted.org@evil.test/", id="userinfo"),
            pytest.param("https://trusted.org.evil.test/", id="lookalike"),
            pytest.param("https://evil-trusted.org/", id="hyphen"),
            pytest.param("https://evil.test\\@trusted.org/", id="backslash"),
        ],
    )
    def test_url_tricks_never_match(self, url: str) -> None:
        """Through url_host, no trick URL is credited to trusted.org."""
        assert not host_matches_domain(url_host(url) or "", "trusted.org")

    def test_sub_domain_url_matches(self) -> None:
        """A real subdomain URL is credited to its domain."""
        assert host_matches_domain(url_host("https://sub.trusted.org/x") or "", "trusted.org")


class TestSuffixProblem:
    """suffix_problem flags hosts whose last label is no real top-level domain, offline."""

    @pytest.mark.parametrize(
        ("host", "expected"),
        [
            pytest.param(
                "help.illinois-legal-aid", 'not a real public suffix: ".illinois-legal-aid"', id="invented"
            ),
            pytest.param(
                "Help.Illinois-Legal-Aid.", 'not a real public suffix: ".illinois-legal-aid"', id="case-dot"
            ),
            pytest.param(
                "legalaid", 'not a real public suffix: single-label host "legalaid"', id="single-label"
            ),
            pytest.param("evil.test", 'not a real public suffix: ".test"', id="rfc2606-test"),
            pytest.param("x.invalid", 'not a real public suffix: ".invalid"', id="rfc2606-invalid"),
            pytest.param("printer.local", 'not a real public suffix: ".local"', id="mdns"),
            pytest.param("intranet.internal", 'not a real public suffix: ".internal"', id="internal"),
            pytest.param("пример.тест", 'not a real public suffix: ".xn--e1aybc"', id="idn-invented"),
            pytest.param("example.legal", None, id="new-gtld"),
            pytest.param("foo.co.uk", None, id="two-level-suffix"),
            pytest.param("пример.рф", None, id="idn-real"),
            pytest.param("xn--e1afmkfd.xn--p1ai", None, id="punycode-real"),
            pytest.param("lawhelp.ORG", None, id="established-tld"),
            pytest.param("someone.github.io", None, id="private-suffix-host"),
            pytest.param("org", None, id="bare-tld"),
            pytest.param("co.uk", None, id="bare-suffix"),
            pytest.param("ck", None, id="wildcard-only-tld"),
            pytest.param("x.onion", None, id="onion-listed"),
            pytest.param("localhost", None, id="localhost"),
            pytest.param("app.localhost", None, id="under-localhost"),
            pytest.param("192.0.2.1", None, id="ipv4"),
            pytest.param("[2001:db8::1]", None, id="ipv6"),
            pytest.param("2130706433", None, id="decimal-ipv4"),
            pytest.param("0x7f.0x1", None, id="hex-ipv4"),
            pytest.param("", None, id="empty"),
            pytest.param("exa mple", None, id="unparsable"),
        ],
    )
    def test_suffix_problem(self, host: str, expected: str | None) -> None:
        """The detail names the missing suffix; addresses, localhost and real suffixes are not this rule."""
        assert suffix_problem(host) == expected

    def test_established_tlds_are_in_the_snapshot(self) -> None:
        """The shortcut set only holds ICANN top-level domains the bundled snapshot knows."""
        for tld in urls._ESTABLISHED_TLDS:
            assert urls._extractor().extract_str(f"x.{tld}", include_psl_private_domains=False).suffix == tld

    def test_single_rule_tlds_have_no_other_icann_rule(self) -> None:
        """The bare-domain shortcut's premise, on the bundled snapshot: each of these top-level domains
        is its own only ICANN rule, and no ICANN top-level domain is one character or a number."""
        rules = _icann_rules()
        for tld in urls._SINGLE_RULE_TLDS:
            assert [r for r in rules if r == tld or r.endswith("." + tld)] == [tld]
        last_labels = {r.rsplit(".", 1)[-1] for r in rules}
        assert not [t for t in last_labels if len(t) == 1 or t.isdigit()]

    @pytest.mark.parametrize(
        "host",
        ["lawhelp.org", "LAWHELP.ORG", "LawHelp.Org", "www.x.gov", "a.b.c.net", "e.g", "U.S.C", "Sec.5", "x.1",
         "a.us", "k12.ak.us", "x.github.io", "Cal.App", "a.b", "x.co.uk", "\u00e9cole.org", "a.info", "x.MIL",
         "U.S.Gov", "www.X.Co.Uk", "Pa.St", "Ab.Mil", "a.or", "Mr.Smith", "x.xn--p1ai", "a.ORG", "x.Ck", "x.zz"],
    )  # fmt: skip
    def test_bare_suffix_shortcuts_agree_with_the_list(self, host: str) -> None:
        """Deciding without the suffix list gives what asking it gave."""
        urls._bare_suffix.cache_clear()
        assert urls._bare_suffix(host) == _bare_suffix_from_the_list(host)

    def test_top_level_labels_are_the_lists_own(self) -> None:
        """The labels a bare host's last label is refused by (no rule ends in it) are read from the
        snapshot as tldextract's own parser reads its rules, private section included."""
        import tldextract
        from tldextract.suffix_list import PUBLIC_SUFFIX_RE

        text = (Path(tldextract.__file__).parent / ".tld_set_snapshot").read_text(encoding="utf-8")
        rules = [m.group("suffix") for m in PUBLIC_SUFFIX_RE.finditer(text)]
        assert len(rules) > 5000
        assert urls._top_level_labels() == {r.rpartition(".")[2] for r in rules}

    @settings(max_examples=300, deadline=None)
    @given(labels=st.lists(st.sampled_from(["a", "B", "x1", "9", "org", "ORG", "Org", "gov", "us", "io", "uk", "co",
                                            "github", "ck", "com", "\u00e9", "or", "Smith", "zz", "xn--p1ai"]),
                           min_size=2, max_size=4))  # fmt: skip
    def test_bare_suffix_shortcuts_on_generated_hosts(self, labels: list[str]) -> None:
        """The same on generated hosts."""
        host = ".".join(labels)
        urls._bare_suffix.cache_clear()
        assert urls._bare_suffix(host) == _bare_suffix_from_the_list(host)

    def test_no_network(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Deciding needs no socket: the bundled snapshot only."""

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("network access attempted")

        monkeypatch.setattr(socket, "socket", refuse)
        monkeypatch.setattr(socket, "getaddrinfo", refuse)
        urls._extractor.cache_clear()
        try:
            assert suffix_problem("help.illinois-legal-aid") is not None
            assert suffix_problem("example.legal") is None
        finally:
            urls._extractor.cache_clear()

    @given(
        st.builds(
            lambda ls, tld: ".".join([*ls, tld]),
            st.lists(_label, min_size=1, max_size=3),
            st.sampled_from(["org", "com", "gov", "co.uk", "рф", "legal", "ORG"]),
        )
    )
    def test_hosts_with_real_suffixes_pass(self, host: str) -> None:
        """A generated host under a real suffix is never flagged."""
        assert suffix_problem(host) is None


class TestHostKinds:
    """is_address_host and is_localhost_name tell addresses and local names from domain names."""

    @pytest.mark.parametrize(
        ("host", "expected"),
        [
            pytest.param("192.0.2.1", True, id="ipv4"),
            pytest.param("::1", True, id="ipv6"),
            pytest.param("[::1]", True, id="ipv6-brackets"),
            pytest.param("2130706433", True, id="decimal"),
            pytest.param("0x7f.1", True, id="hex-and-decimal"),
            pytest.param("a.0X7F", True, id="hex-last-label"),
            pytest.param("1.2.3.300", True, id="invalid-ipv4-still-numeric"),
            pytest.param("x.0xg", False, id="not-hex"),
            pytest.param("1.2.3.example", False, id="name"),
            pytest.param("lawhelp.org", False, id="domain"),
            pytest.param("", False, id="empty"),
        ],
    )
    def test_is_address_host(self, host: str, expected: bool) -> None:
        """IP literals and numeric last labels (WHATWG: IPv4) are addresses."""
        assert is_address_host(host) is expected

    @pytest.mark.parametrize(
        ("host", "expected"),
        [
            pytest.param("localhost", True, id="localhost"),
            pytest.param("LOCALHOST.", True, id="case-dot"),
            pytest.param("app.localhost", True, id="subdomain"),
            pytest.param("localhost.org", False, id="other-tld"),
            pytest.param("notlocalhost", False, id="glued"),
            pytest.param("127.0.0.1", False, id="address"),
        ],
    )
    def test_is_localhost_name(self, host: str, expected: bool) -> None:
        """localhost and names under it (RFC 6761), nothing else."""
        assert is_localhost_name(host) is expected


def _icann_rules() -> list[str]:
    """The ICANN section of the bundled public suffix snapshot (wildcards and exceptions as written)."""
    import importlib.util

    spec = importlib.util.find_spec("tldextract")
    assert spec is not None and spec.submodule_search_locations
    text = (Path(next(iter(spec.submodule_search_locations))) / ".tld_set_snapshot").read_text(
        encoding="utf-8"
    )
    icann = text.split("===BEGIN ICANN DOMAINS===", 1)[1].split("===END ICANN DOMAINS===", 1)[0]
    return [line.lstrip("*.!") for line in icann.splitlines() if line and not line.startswith("//")]


def _bare_suffix_from_the_list(host: str) -> str | None:
    """``urls._bare_suffix`` as written before its shortcuts: always asking tldextract."""
    if urls._canonical_host(host) is None:
        return None
    labels = host.split(".")
    result = urls._extractor().extract_str(host.lower())
    if not result.suffix or not result.domain:
        return None
    written = ".".join(labels[-(result.suffix.count(".") + 1) :])
    one_case = written in (written.lower(), written.upper())
    title_case = result.suffix in urls._TITLE_CASE_SUFFIXES and written.istitle() and len(labels[-2]) > 1
    return str(result.suffix) if one_case or title_case or labels[0].lower() == "www" else None
