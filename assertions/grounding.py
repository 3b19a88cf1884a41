"""promptfoo's ``type: python`` entry points of the pack, the names ``assertions/grounding.cjs`` exports:
``file://assertions/grounding.py:verifier``, ``:judge``, ``:factuality``, ``:docs_qa``, and the scoring
functions ``:round1``, ``:round2b``, ``:round3`` (``assertScoringFunction``).

Each calls what a grounding.cjs worker calls (grounding_eval/promptfoo/worker.py) with the pack's root, so a
row gets the same GradingResult either way; docs/reference/assertions.md. The older files beside this one
(verifier.py, judge.py, factuality.py, docs_qa.py, composite.py) are aliases of these functions.
"""

from collections.abc import Callable
from typing import Any

# call: (module and function in grounding_eval.promptfoo, the reason's head when it cannot be imported)
_ASSERTIONS = {
    "verifier": ("verifier_assertion", "ERROR (verifier not run)"),
    "judge": ("judge_assertion", "ERROR (judge unscored)"),
    "factuality": ("factuality_assertion", "ERROR (factuality unscored)"),
    "docs_qa": ("docs_qa_assertion", "ERROR (docs-qa unscored)"),
}


def _assertion(call: str, output: Any, context: Any) -> dict[str, Any]:
    name, head = _ASSERTIONS[call]
    try:
        from importlib import import_module

        from grounding_eval.encodable import utf8_encodable
        from grounding_eval.resources import pack_root

        grade = getattr(import_module(f"grounding_eval.promptfoo.{name}"), name)
        root = pack_root()  # the checkout's data, or the installed package's
    except Exception as exc:
        # The outcome as a value, written out here: grounding_eval.outcome is what failed to import.
        why = f"cannot import grounding_eval: {exc}"
        return {"pass": False, "score": 0.0, "reason": f"{head}: {why}",
                "metadata": {"outcome": "unscored", "unscored_reason": why}}  # fmt: skip
    # Every string we return must be UTF-8 encodable for promptfoo to write it (lone surrogates).
    result: dict[str, Any] = utf8_encodable(grade(output, context, pack_root=root))
    return result


def _composite(name: str, named_scores: Any, context: Any) -> dict[str, Any]:
    try:
        from grounding_eval.encodable import utf8_encodable
        from grounding_eval.promptfoo import composite_scoring

        score = getattr(composite_scoring, f"score_{name}")
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
            "reason": f"UNSCORED: composite not computed: {why}",
            "metadata": metadata,
        }


def _entry(
    call: str, grade: Callable[[str, Any, Any], dict[str, Any]]
) -> Callable[[Any, Any], dict[str, Any]]:
    def entry(value: Any, context: Any) -> dict[str, Any]:
        return grade(call, value, context)

    entry.__name__ = entry.__qualname__ = call
    return entry


# (output, context): docs/reference/assertions.md, verifier.md, factuality.md, docs-qa.md
verifier = _entry("verifier", _assertion)
judge = _entry("judge", _assertion)
factuality = _entry("factuality", _assertion)
docs_qa = _entry("docs_qa", _assertion)
# (named_scores, context): the rounds' composites (grounding_eval.scoring.composite)
round1 = _entry("round1", _composite)
round2b = _entry("round2b", _composite)
round3 = _entry("round3", _composite)
