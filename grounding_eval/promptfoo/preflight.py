"""The configuration check before an eval makes any model call (``grounding.cjs:beforeAll``).

An unknown judge provider, a malformed rubric, an unreadable directory or allowlist, a missing recorded
judge file: each is the same for every row, and found only when the first row is graded — after every
generation call has been made and paid for. promptfoo's ``beforeAll`` extension hook runs before any;
``assertions/grounding.cjs`` resolves each pack assertion's judges (``assertions/judges.cjs``, which also
loads each live judge and checks its key) and sends the assertion here, as its rows would call it.

:func:`preflight` runs the assertion's own adapter on a placeholder answer, with the same config, vars
and test, up to the point where it would ask a model (or, for the verifier, verify): everything read
and decided before that point is what a row would read and decide. Stopping is
:class:`~grounding_eval.judge.checkpoint.Checked`, raised by
:func:`~grounding_eval.judge.checkpoint.checkpoint` in the judges' one loop, the replay check and the
verifier. An adapter that returns before the checkpoint has refused the configuration: its unscored
reason is the error. What depends on the real answer (a recorded answer or reply that does not match it)
is not checked here and stays a per-row result.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from grounding_eval.judge.checkpoint import Checked, checking

__all__ = ["preflight"]

PLACEHOLDER: Final = "grounding-eval configuration check (no model was asked)"


def preflight(call: str, context: Any, pack_root: Path, *, python_entry: bool = False) -> dict[str, Any]:
    """Check one assertion as its rows would run it (a ``type: python`` entry, ``python_entry``, resolves
    its judges as the JavaScript entries do, so it is checked the same way).

    Returns:
        ``{"ok": True}``; or ``{"ok": False, "error": reason}``.
    """
    del python_entry
    adapter = _ADAPTERS.get(call)
    if adapter is None:
        return {"ok": False, "error": f"unknown grounding-eval call {call!r}"}
    with checking():
        try:
            result = adapter()(PLACEHOLDER, context if isinstance(context, dict) else {}, pack_root=pack_root)
        except Checked:
            return {"ok": True}
    metadata = result.get("metadata") if isinstance(result, dict) else None
    if isinstance(metadata, dict) and metadata.get("outcome") == "unscored":
        return {"ok": False, "error": str(metadata.get("unscored_reason") or result.get("reason"))}
    return {"ok": True}


def _judge() -> Callable[..., dict[str, Any]]:
    from grounding_eval.promptfoo.judge_assertion import judge_assertion

    return judge_assertion


def _factuality() -> Callable[..., dict[str, Any]]:
    from grounding_eval.promptfoo.factuality_assertion import factuality_assertion

    return factuality_assertion


def _docs_qa() -> Callable[..., dict[str, Any]]:
    from grounding_eval.promptfoo.docs_qa_assertion import docs_qa_assertion

    return docs_qa_assertion


def _verifier() -> Callable[..., dict[str, Any]]:
    from grounding_eval.promptfoo.verifier_assertion import verifier_assertion

    return verifier_assertion


_ADAPTERS: Final[dict[str, Callable[[], Callable[..., dict[str, Any]]]]] = {
    "judge": _judge,
    "factuality": _factuality,
    "docs_qa": _docs_qa,
    "verifier": _verifier,
}
