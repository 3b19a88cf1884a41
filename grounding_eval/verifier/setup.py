"""Build the verifier's resources from file paths and options, checking everything before any answer.

Shared by the promptfoo assertion and the command line so both validate the same way and fail with
the same one-line messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from grounding_eval.errors import DataError
from grounding_eval.verifier.allowlist import load_allowlist
from grounding_eval.verifier.directory import load_directory
from grounding_eval.verifier.liveness import LivenessChecker
from grounding_eval.verifier.quotes import DEFAULT_THRESHOLDS
from grounding_eval.verifier.report import VerifierResources

__all__ = ["LIVENESS_MODES", "load_resources"]

LIVENESS_MODES = ("offline", "live")


def load_resources(
    *,
    allowlist: Path,
    orgs: Path,
    liveness: str = "offline",
    snapshot: Path | None = None,
    cache_path: Path | None = None,
    allow_hosts: Iterable[str] = (),
    dns_server: str | None = None,
    quote_near: float | None = None,
    quote_partial: float | None = None,
) -> VerifierResources:
    """Load and validate the allowlist, directory, liveness checker and quote thresholds.

    ``dns_server`` (``"address[:port]"``, e.g. ``"127.0.0.1:5353"``) is the one nameserver a live check
    asks whether a host exists; ``None`` uses the system's resolver configuration. It is validated here
    in either mode, and only used live.

    Raises:
        DataError: one line naming the file (or option) and the problem.
    """
    if liveness not in LIVENESS_MODES:
        raise DataError("liveness", f"must be one of {', '.join(LIVENESS_MODES)}, not {liveness!r}")
    try:
        thresholds = dataclasses.replace(
            DEFAULT_THRESHOLDS,
            near=DEFAULT_THRESHOLDS.near if quote_near is None else quote_near,
            partial=DEFAULT_THRESHOLDS.partial if quote_partial is None else quote_partial,
        )
    except ValueError as exc:
        raise DataError("quote thresholds", str(exc)) from None
    return VerifierResources(
        allowlist=load_allowlist(allowlist),
        directory=load_directory(orgs),
        liveness=LivenessChecker(
            offline=liveness == "offline",
            cache_path=cache_path,
            snapshot_path=snapshot,
            allow_hosts=allow_hosts,
            dns_resolver=dns_server,
        ),
        liveness_mode=liveness,
        quote_thresholds=thresholds,
    )
