"""Decide whether a URL outside the allowlist is a real page (LIVE), a made-up one (DEAD), or unknown.

A URL that is not in the allowlist may still be a real page; asking the web is the only way to tell a
hallucinated link from an unlisted one, and the question has to be answered carefully
(docs/explanation/security.md#live-url-checks has the rules and their reasons):

* **Never guess.** Only HTTP 404/410 and a DNS NXDOMAIN mean DEAD; everything else that goes wrong is
  UNKNOWN — an evaluation run offline must not turn every link into a "hallucination".
* **Never be a proxy into the local network.** Every hop's addresses are checked and non-public ones
  refused (IPv6 forms carrying an IPv4 one included), redirects are followed by hand, proxies ignored.
* **Connect to exactly what was checked**, under one deadline per URL over every hop, so neither DNS
  rebinding nor a server trickling its headers gets past the check.
* **Be reproducible.** A recorded snapshot first; a SQLite cache shared by promptfoo's workers; offline
  reads the snapshot only.

The package: :mod:`.policy` (snapshot → cache → budget, redirects), :mod:`.network` (DNS, the
address refusal, the request under one deadline; :mod:`.pinned` its urllib3 connections), :mod:`.store`
(the SQLite cache, the snapshot reader).

Complexity per answer: at most ``max_urls_checked`` checks, each at most ``max_redirects + 1`` hops of
two requests, all within ``answer_budget`` seconds (plus one socket operation's overrun, under 10 ms
in practice); each response header line is capped at 64 KiB, and at most 100 are read (http.client's limits).
A URL's body is never read; a citation's page (:meth:`LivenessChecker.page`, one GET per hop) is read up
to the cap its caller gives, under the same deadline and limits.
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
from grounding_eval.verifier.liveness.result import Liveness, LivenessResult, Page

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
    "Page",
    "parse_nameserver",
]
