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
requests are HTTP/1.1 over urllib3 (certificates checked against ``certifi``'s bundle, as ``requests``
does), one connection per request to the checked address itself (:mod:`.pinned`), with no retries;
every read waits at most what is left of the deadline, so a server trickling its headers cannot outlast
it. Cookies set during one URL's redirects are sent on its later hops, as a browser would; nothing is
kept from one URL to the next.

The package: :mod:`.policy` (snapshot → cache → budget, redirects), :mod:`.network` (DNS, the
address refusal, the request under one deadline; :mod:`.pinned` its urllib3 connections), :mod:`.store`
(the SQLite cache, the snapshot reader).

Complexity per answer: at most ``max_urls_checked`` checks, each at most ``max_redirects + 1`` hops of
two requests, all within ``answer_budget`` seconds (plus one socket operation's overrun, under 10 ms
in practice); each response header line is capped at 64 KiB, and at most 100 are read (http.client's limits).
"""

from __future__ import annotations

from grounding_eval.verifier.liveness.network import (
    USER_AGENT,
    DnsOutcome,
    DnspythonResolver,
    DnsResolver,
    DnsVerdict,
    parse_nameserver,
)
from grounding_eval.verifier.liveness.policy import (
    DEFAULT_ANSWER_BUDGET,
    DEFAULT_MAX_URLS_CHECKED,
    DEFAULT_URL_DEADLINE,
    LivenessChecker,
)
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult

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
