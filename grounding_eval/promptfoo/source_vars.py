"""The source vars a test's generator named (``metadata.source_vars``), back in its vars when they are not.

The pack's beforeAll hook (``assertions/grounding.cjs``) lifts the long source texts out of the tests' vars
so that promptfoo's viewer does not make them columns; the prompts and the ``grounding.cjs`` assertions get
them back from that hook. What runs without it — a results file graded again (``rescore``), a ``type:
python`` entry (promptfoo's own Python gets the vars without them) — rebuilds them here from the test's
dataset, with the generator that made the test: the same text, since the same function renders it.
A round test names its ``jurisdiction`` there too (:data:`LABEL_VARS`), rebuilt from its metadata.

It is also the one place that says which vars are sources (none of these constants imports anything).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "GROUNDING_VARS",
    "LABEL_VARS",
    "NOT_SOURCES",
    "REFERENCE_VARS",
    "with_source_vars",
    "with_source_vars_in",
]

# What a round's prompt shows the model under each grounding condition (C0 shows none), in the
# conditions' order; the generator fills them and the judge reads them back from the rendered prompt.
GROUNDING_VARS: Final = {"C1": "jkb_directory", "C1.5": "jkb_full_content"}
# The verifier's default reference text (config ``source_vars``): the item's articles, in every
# test's vars whatever its condition, so an answer gets the same verdict under each.
REFERENCE_VARS: Final = (GROUNDING_VARS["C1.5"],)
# A test's vars that are the item's own words or labels, never a source shown to the model (the report).
NOT_SOURCES: Final = frozenset({"question", "query_id", "item_id", "jurisdiction", "topic", "round"})
# Short vars a prompt uses whose value is also the test's metadata under the same name: a round test
# names them in metadata.source_vars too, so that beforeAll lifts them with the sources. promptfoo's viewer
# gives any var a column at least 160 px wide, and with the question's (360 px) and the three
# conditions' (480 px each) the jurisdiction's put the third condition 56 px past a 1920-pixel screen
# (issue 42); the details' Metadata tab shows it. Rebuilt from the metadata.
LABEL_VARS: Final = ("jurisdiction",)


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
              **dict.fromkeys(docs_qa_tests.SOURCE_VARS, docs_qa_tests.source_vars),
              **dict.fromkeys(LABEL_VARS, _labels)}  # fmt: skip
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


def _labels(metadata: dict[str, Any]) -> dict[str, str]:
    """The label vars (:data:`LABEL_VARS`) from the test's metadata, where the generator put them too."""
    from grounding_eval.errors import DataError

    found = {n: metadata[n] for n in LABEL_VARS if isinstance(metadata.get(n), str) and metadata[n]}
    if len(found) < len(LABEL_VARS):
        missing = ", ".join(n for n in LABEL_VARS if n not in found)
        raise DataError(
            "results row", f"its test names {missing} among its source vars but its metadata has none"
        )
    return found


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
