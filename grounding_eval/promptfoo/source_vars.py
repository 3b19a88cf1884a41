"""The source vars a test's generator named (``metadata.source_vars``), back in its vars when they are not.

The pack's beforeAll hook (``assertions/grounding.cjs``) lifts the long source texts out of the tests' vars
so that promptfoo's viewer does not make them columns; the prompts and the ``grounding.cjs`` assertions get
them back from that hook. What runs without it — a results file graded again (``rescore``), a ``type:
python`` entry (promptfoo's own Python gets the vars without them) — rebuilds them here from the test's
dataset, with the generator that made the test: the same text, since the same function renders it.
A round test names its ``jurisdiction`` there too (:data:`~grounding_eval.var_names.LABEL_VARS`), rebuilt
from its metadata. Which vars are sources is said in :mod:`grounding_eval.var_names`.
"""

from __future__ import annotations

from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.var_names import LABEL_VARS

__all__ = ["with_source_vars", "with_source_vars_in"]


def with_source_vars(vars_: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """``vars_`` with the source vars its test names (``metadata.source_vars``) that the row does not keep,
    rebuilt by the generator that made the test: a results file written with the beforeAll hook keeps none.

    Raises:
        DataError: a source var no generator of this pack makes, or its dataset unreadable.
    """
    # Imported here for start-up speed: the generators import jinja2 and the dataset loaders (≈180 ms), which
    # an assertion pays only when a row lost its sources (benchmarks/cold_start.py measures that path).
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
    """The label vars (:data:`~grounding_eval.var_names.LABEL_VARS`) from the test's metadata, where the
    generator put them too."""
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
