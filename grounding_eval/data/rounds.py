"""The five rounds of the methods document, and how each selects its items from a dataset.

Subsets are chosen by tags and by dataset (queries or High-Risk items), never by copied files, so the
real LHSQ-115 and High-Risk sets select the same way as the samples:

======  =======================  ==================  ==============  =========  ============  ===========
round   items                    selected by         conditions      rubric     quotes        citations
======  =======================  ==================  ==============  =========  ============  ===========
1a      IL eviction              tag il-eviction     C0, C1          v3         information   information
1b      six states               tag six-state       C0, C1          v3         information   information
2       IL high-stakes           tag il-high-stakes  C0, C1, C1.5    v3         information   information
2b      IL high-stakes           tag il-high-stakes  C0, C1, C1.5    v4         scored        information
3       High-Risk Challenge      high_risk file      C0, C1, C1.5    round3     scored        hard
======  =======================  ==================  ==============  =========  ============  ===========

A round may run on a reproducible sample of its items (``sample: {n, seed, stratify}``,
:mod:`grounding_eval.data.sample`): :func:`round_items` selects, then draws, for the test generator and
``grounding-eval data sample`` alike. When the dataset claims to be the methods document's real set
(``dataset.yaml``, :mod:`grounding_eval.data.manifest`), :func:`size_warnings` compares the counts with
the documented ones (22 / 48 / 10, 40 of 192).
"""

from __future__ import annotations

from collections.abc import Sequence

from grounding_eval.data.dataset import Dataset
from grounding_eval.data.methods import REAL_SETS, ROUNDS
from grounding_eval.data.records import Query
from grounding_eval.data.sample import Sample, SampleSpec, draw_sample
from grounding_eval.errors import DataError

__all__ = ["round_items", "select_items", "size_warnings"]


def select_items(
    dataset: Dataset,
    *,
    round_id: str | None = None,
    tags: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
) -> list[Query]:
    """Items for a round (its source and tags), optionally narrowed or overridden by ``tags`` / ``ids``.

    ``tags`` replaces the round's tags (an item qualifies with any of them); ``ids`` keeps only those
    items, in the dataset's order. Without a round, both files are searched.

    Raises:
        KeyError: an unknown round id.
    """
    if round_id is not None and round_id not in ROUNDS:
        raise KeyError(f"unknown round {round_id!r}: one of {', '.join(ROUNDS)}")
    spec = ROUNDS.get(round_id) if round_id else None
    if spec is None:
        pool: list[Query] = [*dataset.queries, *dataset.high_risk]
    else:
        pool = list(dataset.high_risk) if spec.source == "high_risk" else list(dataset.queries)
    wanted_tags = tuple(tags) if tags is not None else (spec.tags if spec else ())
    if wanted_tags:
        pool = [item for item in pool if set(item.tags) & set(wanted_tags)]
    if ids is not None:
        keep = set(ids)
        pool = [item for item in pool if item.id in keep]
    return pool


def round_items(
    dataset: Dataset,
    *,
    round_id: str | None = None,
    tags: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    sample: SampleSpec | None = None,
    where: str = "test generator config",
) -> tuple[list[Query], Sample | None]:
    """:func:`select_items`, then, with ``sample``, the drawn sample of them (items in dataset order).

    Raises:
        KeyError: an unknown round id.
        DataError: the round's item file is absent or empty (Round 3 reads high_risk.jsonl, the others
            queries.jsonl), or the sample cannot be drawn (``n`` above the pool, a missing ``stratify``
            field).
    """
    spec = ROUNDS.get(round_id) if round_id else None
    if spec is not None and not (dataset.high_risk if spec.source == "high_risk" else dataset.queries):
        file = "high_risk.jsonl" if spec.source == "high_risk" else "queries.jsonl"
        noun = "High-Risk items" if spec.source == "high_risk" else "queries"
        raise DataError(dataset.root, f"round {round_id} reads {file}: this dataset has no {noun} ({where})")
    items = select_items(dataset, round_id=round_id, tags=tags, ids=ids)
    if sample is None:
        return items, None
    label = f"round {round_id}'s items" if round_id else "the items"
    drawn = draw_sample(items, sample, round_label=label, where=where)
    return list(drawn.items), drawn


def size_warnings(dataset: Dataset, round_id: str | None = None, selected: int | None = None) -> list[str]:
    """One line per documented size the dataset differs from, when ``dataset.yaml`` claims the real set.

    Without ``round_id``: the claimed files' sizes and the tag-selected rounds' counts (1a, 1b, 2, 2b;
    Round 3's 40 is a sample, checked where it is drawn). With ``round_id`` and ``selected`` (the items a
    run uses, after any sample): that round's file size and that count.
    """
    lines: list[str] = []
    where = dataset.manifest.path or dataset.root
    for name in dataset.manifest.claims:
        real = REAL_SETS[name]
        if round_id is not None and (round_id not in ROUNDS or ROUNDS[round_id].source != real.source):
            continue
        have = len(dataset.queries if real.source == "queries" else dataset.high_risk)
        noun = "queries" if real.source == "queries" else "High-Risk items"
        if have != real.size:
            lines.append(f"{where}: claims {name} ({real.size} {noun}), but has {have} {noun}")
        if round_id is not None and selected is not None:
            counts = {round_id: selected}
        else:
            counts = {r: len(select_items(dataset, round_id=r)) for r in real.rounds if ROUNDS[r].tags}
        for rid, count in counts.items():
            documented = real.rounds.get(rid)
            if documented is not None and count != documented:
                how = f"tag {ROUNDS[rid].tags[0]}" if ROUNDS[rid].tags else f"a sample, n {documented}"
                lines.append(
                    f"{where}: claims {name}: round {rid} uses {count} item(s), the methods document's "
                    f"round {rid} used {documented} ({how})"
                )
    return lines
