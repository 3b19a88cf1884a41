"""promptfoo's ``type: python`` entry points of the pack, the names ``assertions/grounding.cjs`` exports:
``file://assertions/grounding.py:verifier``, ``:judge``, ``:factuality``, ``:docs_qa``, and the scoring
functions ``:round1``, ``:round2b``, ``:round3`` (``assertScoringFunction``).

Each calls what a grounding.cjs worker calls (grounding_eval/promptfoo/worker.py) with the pack's root, so a
row gets the same GradingResult either way; docs/reference/assertions.md. The older files beside this one
(verifier.py, judge.py, factuality.py, docs_qa.py, composite.py) are aliases of these functions.
"""

import json
import os
from collections.abc import Callable
from typing import Any

# The pack's calls (grounding_eval/calls.py): read beside this file, so that a failure to import
# grounding_eval is still said with the call's own prefix.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.json"), encoding="utf-8") as _file:
    _REGISTRY = json.load(_file)
_CALLS = _REGISTRY["calls"]


def _assertion(call: str, output: Any, context: Any) -> dict[str, Any]:
    head = _CALLS[call]["failed"]
    try:
        from importlib import import_module

        from grounding_eval.encodable import utf8_encodable
        from grounding_eval.resources import pack_root

        module, _, name = _CALLS[call]["adapter"].partition(":")
        grade = getattr(import_module(module), name)
        root = pack_root()  # the checkout's data, or the installed package's
    except Exception as exc:
        # The outcome as a value, written out here: grounding_eval.outcome is what failed to import.
        why = f"cannot import grounding_eval: {exc}"
        return {"pass": False, "score": 0.0, "reason": f"{head}: {why}",
                "metadata": {"outcome": "unscored", "unscored_reason": why}}  # fmt: skip
    # Every string we return must be UTF-8 encodable for promptfoo to write it (lone surrogates).
    result: dict[str, Any] = utf8_encodable(grade(output, context, pack_root=root))
    return result


def _composite(call: str, named_scores: Any, context: Any) -> dict[str, Any]:
    try:
        from importlib import import_module

        from grounding_eval.encodable import utf8_encodable

        module, _, name = _CALLS[call]["adapter"].partition(":")
        score = getattr(import_module(module), name)
        result: dict[str, Any] = utf8_encodable(score(named_scores or {}, context))
        return result
    except Exception as exc:
        # As grounding_eval.outcome writes it (which may be what failed to import); the report reads
        # these fields, never the reason's text.
        why = f"{type(exc).__name__}: {exc}"
        metadata = {"composite": {"status": "unscored"}, "outcome": "unscored", "unscored_reason": why}
        return {
            "pass": False,
            "score": 0.0,
            "reason": f"{_REGISTRY['scoring_failed']}: {why}",
            "metadata": metadata,
        }


def _entry(
    call: str, grade: Callable[[str, Any, Any], dict[str, Any]]
) -> Callable[[Any, Any], dict[str, Any]]:
    def entry(value: Any, context: Any) -> dict[str, Any]:
        return grade(call, value, context)

    entry.__name__ = entry.__qualname__ = call
    return entry


# One function per call, named as the call: (output, context) for an assertion (docs/reference/assertions.md,
# verifier.md, factuality.md, docs-qa.md), (named_scores, context) for a scoring function, the rounds'
# composites (grounding_eval.scoring.composite).
for _call, _spec in _CALLS.items():
    if _spec["kind"] in ("assertion", "scoring"):
        globals()[_call] = _entry(_call, _assertion if _spec["kind"] == "assertion" else _composite)
