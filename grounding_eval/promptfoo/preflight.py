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
from importlib import import_module
from pathlib import Path
from typing import Any, Final

from grounding_eval.calls import ASSERTION_CALLS, CALLS
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
    adapter = _adapter(call)
    if adapter is None:
        return {"ok": False, "error": f"unknown grounding-eval call {call!r}"}
    with checking():
        try:
            result = adapter(PLACEHOLDER, context if isinstance(context, dict) else {}, pack_root=pack_root)
        except Checked:
            return {"ok": True}
    metadata = result.get("metadata") if isinstance(result, dict) else None
    if isinstance(metadata, dict) and metadata.get("outcome") == "unscored":
        return {"ok": False, "error": str(metadata.get("unscored_reason") or result.get("reason"))}
    return {"ok": True}


def _adapter(call: str) -> Callable[..., dict[str, Any]] | None:
    """The adapter of a pack assertion (:data:`grounding_eval.calls.ASSERTION_CALLS`), or ``None``."""
    if call not in ASSERTION_CALLS:
        return None
    module, _, name = str(CALLS[call].adapter).partition(":")
    adapter: Callable[..., dict[str, Any]] = getattr(import_module(module), name)
    return adapter
