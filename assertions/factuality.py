"""promptfoo entry point for the factual-accuracy judge: ``file://assertions/factuality.py:get_assert``.

All the work is in :mod:`grounding_eval.promptfoo.factuality_assertion`; this file only tells it where the
pack lives, so the rubric and template are found wherever promptfoo is launched from.
"""

from typing import Any


def get_assert(output: Any, context: Any) -> dict[str, Any]:
    """Judge ``output``'s factual accuracy against its evidence; always returns a GradingResult."""
    try:
        from grounding_eval.encodable import utf8_encodable
        from grounding_eval.promptfoo.factuality_assertion import factuality_assertion
        from grounding_eval.resources import pack_root

        root = pack_root()  # the checkout's data, or the installed package's
    except Exception as exc:
        return {
            "pass": False,
            "score": 0.0,
            "reason": f"ERROR (factuality unscored): cannot import grounding_eval: {exc}",
            # The outcome as a value (grounding_eval.outcome cannot be imported here: that is the failure).
            "metadata": {"outcome": "unscored", "unscored_reason": f"cannot import grounding_eval: {exc}"},
        }
    # Every string we return must be UTF-8 encodable for promptfoo to write it (lone surrogates).
    return utf8_encodable(factuality_assertion(output, context, pack_root=root))
