"""promptfoo entry point for the docs-QA rubric: ``file://assertions/docs_qa.py:get_assert``.

All the work is in :mod:`grounding_eval.promptfoo.docs_qa_assertion`; this file only tells it where the pack lives.
"""

from typing import Any


def get_assert(output: Any, context: Any) -> dict[str, Any]:
    """Grade ``output`` with the docs-QA rubric and its helpers; always returns a GradingResult."""
    try:
        from grounding_eval.encodable import utf8_encodable
        from grounding_eval.promptfoo.docs_qa_assertion import docs_qa_assertion
        from grounding_eval.resources import pack_root

        root = pack_root()  # the checkout's data, or the installed package's
    except Exception as exc:
        return {
            "pass": False,
            "score": 0.0,
            "reason": f"ERROR (docs-qa unscored): cannot import grounding_eval: {exc}",
            # The outcome as a value (grounding_eval.outcome cannot be imported here: that is the failure).
            "metadata": {"outcome": "unscored", "unscored_reason": f"cannot import grounding_eval: {exc}"},
        }
    # Every string we return must be UTF-8 encodable for promptfoo to write it (lone surrogates).
    return utf8_encodable(docs_qa_assertion(output, context, pack_root=root))
