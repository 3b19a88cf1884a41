"""The pack's calls — which exist, what each is, what its failure says, and the deadlines they run under.

One definition for Python and JavaScript: ``assertions/calls.json``, which ``assertions/grounding.cjs``,
``assertions/judges.cjs`` and ``assertions/grounding.py`` read beside themselves (``init`` copies it into a
study with them), and this module reads for the package (the worker, preflight, rescore, the report, the
scaffold, the adapters). A call is an export of ``grounding.cjs`` / ``grounding.py`` and a request a
worker answers: an ``assertion`` (``file://assertions/grounding.cjs:judge``), a ``scoring`` function
(``assertScoringFunction: …:round3``), or a ``worker`` call of ``grounding.cjs``'s own ``beforeAll``.

Imports nothing of the package: the core vocabulary every layer may read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = [
    "ASSERTION_CALLS",
    "CALLS",
    "CALL_MARGIN_S",
    "JUDGE_BACKOFF_MAX_S",
    "JUDGE_CALLS",
    "JUDGE_MAX_RETRIES",
    "JUDGE_TIMEOUT_S",
    "MODEL_CALLS_PER_JUDGMENT",
    "MODEL_CALL_DEFAULT_S",
    "REGISTRY_FILE",
    "SCORING_CALLS",
    "SCORING_FAILED",
    "WORKER_FAILED",
    "WORKER_IDLE_S",
    "Call",
    "CallKind",
    "worst_case_seconds",
]

CallKind = Literal["assertion", "scoring", "worker"]


def _registry_file() -> Path:
    """``assertions/calls.json``: the installed package's copy (``grounding_eval/_data``, as
    :func:`grounding_eval.resources.pack_root` finds the data), else the checkout's."""
    package = Path(__file__).parent
    installed = package / "_data" / "assertions" / "calls.json"
    return installed if installed.is_file() else package.parent / "assertions" / "calls.json"


REGISTRY_FILE: Final = _registry_file()
_REGISTRY: Final[dict[str, Any]] = json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Call:
    """One call of the pack.

    Attributes:
        name: its name (the export, the worker request's ``call``).
        kind: ``assertion``, ``scoring`` or ``worker``.
        adapter: the function that answers it, ``module:function`` (``None`` for a worker call, which
            the worker answers itself); an assertion's is called ``(output, context, pack_root=…)``, a
            scoring function's ``(named_scores, context)``.
        failed: the reason's prefix when the call could not give its result (``ERROR (judge unscored)``).
        not_run: a judge's prefix when its configuration refused it before any model call.
        judge: whether it asks a model (its judges are resolved by ``judges.cjs``).
        cheap_judge: whether it has a cheap first-stage judge besides its judge.
        rescored: whether ``rescore`` grades it again (others keep their recorded result).
        rubric: a scoring call's rubric (the composite of that rubric's round).
    """

    name: str
    kind: CallKind
    adapter: str | None
    failed: str
    not_run: str | None = None
    judge: bool = False
    cheap_judge: bool = False
    rescored: bool = False
    rubric: str | None = None


SCORING_FAILED: Final[str] = _REGISTRY["scoring_failed"]
"""A scoring function's failure prefix: the composite was not computed."""
WORKER_FAILED: Final[str] = _REGISTRY["worker_failed"]
"""The worker's prefix for a request that names no call, or is not a request."""


def _call(name: str, spec: Mapping[str, Any]) -> Call:
    kind = spec["kind"]
    if kind not in ("assertion", "scoring", "worker"):
        raise ValueError(f"{REGISTRY_FILE}: call {name!r} has kind {kind!r}")
    return Call(
        name=name,
        kind=kind,
        adapter=spec.get("adapter"),
        failed=SCORING_FAILED if kind == "scoring" else spec["failed"],
        not_run=spec.get("not_run"),
        judge=bool(spec.get("judge")),
        cheap_judge=bool(spec.get("cheap_judge")),
        rescored=bool(spec.get("rescored")),
        rubric=spec.get("rubric"),
    )


CALLS: Final[Mapping[str, Call]] = MappingProxyType(
    {name: _call(name, spec) for name, spec in _REGISTRY["calls"].items()}
)
"""Every call, by name, in the registry's order."""
ASSERTION_CALLS: Final = tuple(c.name for c in CALLS.values() if c.kind == "assertion")
JUDGE_CALLS: Final = tuple(c.name for c in CALLS.values() if c.judge)
SCORING_CALLS: Final = tuple(c.name for c in CALLS.values() if c.kind == "scoring")

_DEADLINES: Final[Mapping[str, Any]] = _REGISTRY["deadlines"]
JUDGE_TIMEOUT_S: Final = float(_DEADLINES["judge_timeout_s"])
"""A judge's ``timeout`` when its config gives none: seconds per attempt of one model call."""
JUDGE_MAX_RETRIES: Final = int(_DEADLINES["judge_max_retries"])
"""A judge's ``max_retries`` when its config gives none."""
JUDGE_BACKOFF_MAX_S: Final = float(_DEADLINES["judge_backoff_max_s"])
"""The longest wait between two attempts of one model call."""
MODEL_CALLS_PER_JUDGMENT: Final = int(_DEADLINES["model_calls_per_judgment"])
"""The most model calls one judgment makes (factual accuracy: cheap judge, judge, its repair retry)."""
CALL_MARGIN_S: Final = float(_DEADLINES["call_margin_s"])
"""What a worker call's deadline adds to its judgment's model calls."""
WORKER_IDLE_S: Final = float(_DEADLINES["worker_idle_s"])
"""Seconds a worker waits for a request before it exits."""


def worst_case_seconds(
    *, timeout: float, max_retries: int, backoff_max: float = JUDGE_BACKOFF_MAX_S
) -> float:
    """The longest one model call may take: ``max_retries + 1`` attempts of ``timeout`` seconds and the
    waits between them (``assertions/judges.cjs`` ``worstCaseSeconds``, from which ``grounding.cjs``
    derives a call's deadline, is this bound)."""
    return (max_retries + 1) * timeout + max_retries * backoff_max


MODEL_CALL_DEFAULT_S: Final = worst_case_seconds(timeout=JUDGE_TIMEOUT_S, max_retries=JUDGE_MAX_RETRIES)
"""One model call's bound when its request names none: the default judge's (720 s)."""
