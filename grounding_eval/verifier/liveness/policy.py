"""The order of a liveness check: snapshot, then cache, then (within the answer's budget) the network.

Redirects are followed here, one hop at a time, so that every hop's host is asked about and checked again
(see the package docstring and docs/reference/verifier.md).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urljoin

from grounding_eval.errors import DataError
from grounding_eval.verifier.liveness import network
from grounding_eval.verifier.liveness.network import DnspythonResolver, DnsResolver, Transport
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult, Page
from grounding_eval.verifier.liveness.store import Cache, load_page_snapshot, load_snapshot, record_page
from grounding_eval.verifier.urls import normalize_url

if TYPE_CHECKING:
    import http.cookiejar

DEFAULT_URL_DEADLINE: Final = 10.0
"""Seconds one URL may take in all: DNS, addresses, connections, TLS and headers over every hop."""
DEFAULT_ANSWER_BUDGET: Final = 30.0
"""Seconds of network checks one answer may spend (see :meth:`LivenessChecker.for_answer`)."""
DEFAULT_MAX_URLS_CHECKED: Final = 50
"""Network checks one answer may make; further URLs are UNKNOWN (see :meth:`LivenessChecker.for_answer`)."""

_DEAD_CODES: Final = frozenset({404, 410})


@dataclass
class _AnswerBudget:
    """What one answer has used of its network checks (see :meth:`LivenessChecker.for_answer`)."""

    max_urls: int
    seconds: float
    checked: int = 0
    spent: float = 0.0
    results: dict[str, LivenessResult] = field(default_factory=dict)  # by normalized URL
    pages: dict[str, Page] = field(default_factory=dict)  # pages read (citation checks), by normalized URL


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
        now: Callable[[], float] = time.monotonic,
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
            now: The clock a URL's deadline and the answer's budget are measured on; a test injects its own
                with its own :class:`DnsResolver`, which spends that clock's time (sockets wait real time).

        Raises:
            DataError: The snapshot is missing or malformed, the cache is not a usable SQLite file (live),
                ``dns_resolver`` is a string that is not an IP address with an optional port, or a
                limit is out of range (one line naming the option).
        """
        self._url_deadline = _positive_seconds("url_deadline", url_deadline)
        self._answer_budget = _positive_seconds("answer_budget", answer_budget)
        self._max_urls_checked = _positive_count("max_urls_checked", max_urls_checked)
        self._now = now
        self._offline = offline
        self._cache_path = cache_path
        if dns_resolver is None or isinstance(dns_resolver, str):
            try:
                dns: DnsResolver = DnspythonResolver(dns_resolver, lifetime=timeout)
            except ValueError as exc:
                raise DataError("dns_server", str(exc)) from None
        else:
            dns = dns_resolver
        self._transport = Transport(timeout=timeout, allow_hosts=allow_hosts, dns=dns)
        self._max_redirects = max_redirects
        self._snapshot = load_snapshot(snapshot_path) if snapshot_path is not None else {}
        self._snapshot_path = snapshot_path
        self._pages = load_page_snapshot(snapshot_path) if snapshot_path is not None else {}
        self._answer: _AnswerBudget | None = None
        # Offline never reads or writes the cache.
        self._cache = Cache(cache_path) if cache_path is not None and not offline else None

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
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return cached
        answer = self._answer
        if answer is not None:
            earlier = answer.results.get(key)
            if earlier is not None:
                return earlier
        result = self._within_budget(lambda clock: self._follow(url, clock).result)
        if answer is not None:
            answer.results[key] = result
        if self._cache is not None and result.status is not Liveness.UNKNOWN:
            self._cache.put(key, result)  # an UNKNOWN may be fine tomorrow; never remember it
        return result

    @property
    def offline(self) -> bool:
        """Whether the checker never touches the network."""
        return self._offline

    def page(self, url: str, limit: int) -> Page:
        """GET ``url`` following redirects as :meth:`check` does, with the same limits, and read at most
        ``limit`` bytes of the final 2xx answer's body: what a citation check needs to tell a section's
        page from a chapter's or a not-found page. Neither the snapshot's URL rows nor the cache are
        consulted (they say an address answered, not what it showed); offline, nothing is asked."""
        if self._offline:
            return Page(LivenessResult(Liveness.UNKNOWN, "offline mode", None), url)
        key = normalize_url(url)
        answer = self._answer
        if answer is not None and key in answer.pages:
            return answer.pages[key]
        read: list[Page] = []

        def fetch(clock: network.Clock) -> LivenessResult:
            read.append(self._follow(url, clock, limit))
            return read[-1].result

        result = self._within_budget(fetch)
        page = read[-1] if read else Page(result, url)
        if answer is not None:
            answer.pages[key] = page
        return page

    def spend(self, seconds: float) -> None:
        """Count ``seconds`` of work on what a check brought back (reading a citation's page) against
        the answer's budget, as its network time is."""
        if self._answer is not None:
            self._answer.spent += max(0.0, seconds)

    def recorded_page(self, url: str, citation: str) -> LivenessResult | None:
        """What the snapshot records of ``url`` as ``citation``'s page (a live run's decision), or None."""
        return self._pages.get((normalize_url(url), citation))

    def record_page(self, url: str, citation: str, result: LivenessResult) -> str:
        """Record a live decision about ``citation``'s page in the snapshot, when there is one and the run
        is live, so an offline run decides the same; return why it was not recorded ("" when it was,
        or when there is nothing to record it in)."""
        if self._offline or self._snapshot_path is None or result.status is Liveness.UNKNOWN:
            return ""
        try:
            record_page(self._snapshot_path, url, citation, result)
        except OSError as exc:
            return f"not recorded in the snapshot {self._snapshot_path}: {type(exc).__name__}"
        self._pages.setdefault((normalize_url(url), citation), result)
        return ""

    def _within_budget(self, fetch: Callable[[network.Clock], LivenessResult]) -> LivenessResult:
        """``fetch`` under the URL's deadline, counted against the answer's checks and seconds (an
        UNKNOWN without any traffic past either limit)."""
        answer = self._answer
        if answer is not None:
            if answer.checked >= answer.max_urls:
                urls = f"{answer.max_urls} URL{'s' if answer.max_urls != 1 else ''}"
                return LivenessResult(Liveness.UNKNOWN, f"over the per-answer limit ({urls} checked)", None)
            if answer.spent >= answer.seconds:
                return LivenessResult(Liveness.UNKNOWN, _budget_spent(answer), None)
            answer.checked += 1
        started = self._now()
        try:
            return fetch(self._clock(started))
        finally:
            if answer is not None:
                answer.spent += self._now() - started

    def _clock(self, now: float) -> network.Clock:
        """The deadline of a check starting ``now``: the URL's own, or the answer's budget if sooner."""
        answer = self._answer
        if answer is not None and answer.seconds - answer.spent < self._url_deadline:
            return network.Clock(now + answer.seconds - answer.spent, _budget_spent(answer), self._now)
        return network.Clock(
            now + self._url_deadline,
            f"no complete answer within {self._url_deadline:g} s (per-URL deadline)",
            self._now,
        )

    # --- network ---------------------------------------------------------------------------------------
    def _follow(self, url: str, clock: network.Clock, limit: int = 0) -> Page:
        """Follow ``url``'s redirects hop by hop: HEAD (then GET) each, or, with a ``limit``, GET each and
        read that much of the final 2xx body."""
        current = url
        jar: http.cookiejar.CookieJar | None = None
        for hop in range(self._max_redirects + 1):
            after = f" after {hop} redirect{'s' if hop != 1 else ''}" if hop else ""
            body = b""
            try:
                target = network.target(current)
                # Every hop, like the address check: a redirect into a name that does not exist leads
                # the reader nowhere, just as a redirect to a 404 does.
                self._transport.dns_check(target.host, after, clock)
                addresses = self._transport.addresses(target, clock)
                if limit:
                    code, headers, jar, body = self._transport.page(target, addresses, clock, jar, limit)
                else:
                    code, headers, jar = self._transport.exchange(target, addresses, clock, jar)
            except network.Stop as stop:
                return Page(stop.result, current)
            if code in network.REDIRECT_CODES:
                location = headers.get("Location")
                if not location:
                    return Page(
                        LivenessResult(Liveness.UNKNOWN, f"HTTP {code} without Location", code), current
                    )
                try:
                    current = urljoin(current, network.utf8_header(location.strip()))
                except ValueError:
                    return Page(
                        LivenessResult(Liveness.UNKNOWN, f"HTTP {code} with a malformed Location", code),
                        current,
                    )
                continue
            status = Liveness.DEAD if code in _DEAD_CODES else Liveness.UNKNOWN
            status = Liveness.LIVE if 200 <= code < 300 else status
            kind = headers.get("Content-Type") or ""
            return Page(LivenessResult(status, f"HTTP {code}{after}", code), current, body, kind)
        return Page(
            LivenessResult(Liveness.UNKNOWN, f"more than {self._max_redirects} redirects", None), current
        )


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
