"""The source vars a test's generator named (``metadata.source_vars``), back in its vars when they are not.

The pack's beforeAll hook (``assertions/grounding.cjs``) lifts the long source texts out of the tests' vars
so that promptfoo's viewer does not make them columns; the prompts and the ``grounding.cjs`` assertions get
them back from that hook. What runs without it — a results file graded again (``rescore``), a ``type:
python`` entry (promptfoo's own Python gets the vars without them) — rebuilds them here from the test's
dataset, with the generator that made the test: the same text, since the same function renders it.

It is also the one place that says which vars are sources (none of these constants imports anything).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["GROUNDING_VARS", "NOT_SOURCES", "REFERENCE_VARS", "with_source_vars", "with_source_vars_in"]

# What a round's prompt shows the model under each grounding condition (C0 shows none), in the
# conditions' order; the generator fills them and the judge reads them back from the rendered prompt.
GROUNDING_VARS: Final = {"C1": "jkb_directory", "C1.5": "jkb_full_content"}
# The verifier's default reference text (config ``source_vars``): the item's articles, in every
# test's vars whatever its condition, so an answer gets the same verdict under each.
REFERENCE_VARS: Final = (GROUNDING_VARS["C1.5"],)
# A test's vars that are the item's own words or labels, never a source shown to the model (the report).
NOT_SOURCES: Final = frozenset({"question", "query_id", "item_id", "jurisdiction", "topic", "round"})


def with_source_vars(vars_: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """``vars_`` with the source vars its test names (``metadata.source_vars``) that the row does not keep,
    rebuilt by the generator that made the test: a results file written with the beforeAll hook keeps none.

    Raises:
        DataError: a source var no generator of this pack makes, or its dataset unreadable.
    """
    from grounding_eval.errors import DataError
    from grounding_eval.promptfoo import docs_qa_tests, round_tests

    names = metadata.get("source_vars")
    wanted = [str(n) for n in names if str(n) not in vars_] if isinstance(names, list) else []
    if not wanted:
        return vars_
    makers = {**dict.fromkeys(round_tests.SOURCE_VARS, round_tests.source_vars),
              **dict.fromkeys(docs_qa_tests.SOURCE_VARS, docs_qa_tests.source_vars)}  # fmt: skip
    unknown = [n for n in wanted if n not in makers]
    if unknown:
        raise DataError(
            "results row",
            f"source var(s) {', '.join(unknown)} cannot be rebuilt: no generator of this pack makes them",
        )
    rebuilt: dict[str, str] = {}
    for maker in dict.fromkeys(makers[n] for n in wanted):
        rebuilt |= maker(metadata)
    return {**vars_, **{n: rebuilt[n] for n in wanted}}


def with_source_vars_in(context: Any) -> Any:
    """A promptfoo assertion ``context`` whose vars hold every source var its test names (a new dict when
    any is added; ``context`` itself otherwise, or when it is not a mapping with mapping vars).

    Raises:
        DataError: as :func:`with_source_vars`.
    """
    if not isinstance(context, dict) or not isinstance(context.get("vars"), dict):
        return context
    test = context.get("test")
    metadata = test.get("metadata") if isinstance(test, dict) else None
    if not isinstance(metadata, dict) or not metadata.get("source_vars"):
        return context
    vars_ = with_source_vars(context["vars"], metadata)
    return context if vars_ is context["vars"] else {**context, "vars": vars_}
