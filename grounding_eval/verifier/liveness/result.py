"""What a liveness check says about one URL (see docs/reference/verifier.md)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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


@dataclass(frozen=True)
class Page:
    """A page asked for with its body (a live citation check): where the redirects led, and what it said.

    Attributes:
        result: As :meth:`LivenessChecker.check` would say of the URL (its final HTTP status).
        url: The address finally reached, after every redirect followed.
        body: The first bytes of a 2xx answer's body (at most the cap asked for), decoded as its
            Content-Encoding says; empty otherwise.
        content_type: The final answer's Content-Type header ("" when none).
    """

    result: LivenessResult
    url: str
    body: bytes = b""
    content_type: str = ""
