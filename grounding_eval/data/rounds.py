"""The five rounds of the methods document, and how each selects its items from a dataset.

Subsets are chosen by tags and by dataset (queries or High-Risk items), never by copied files, so the
real LHSQ-115 and High-Risk sets select the same way as the samples:

======  =======================  ==================  ==============  =========  ============
round   items                    selected by         conditions      rubric     quotes
======  =======================  ==================  ==============  =========  ============
1a      IL eviction              tag il-eviction     C0, C1          v3         information
1b      six states               tag six-state       C0, C1          v3         information
2       IL high-stakes           tag il-high-stakes  C0, C1, C1.5    v3         information
2b      IL high-stakes           tag il-high-stakes  C0, C1, C1.5    v4         scored
3       High-Risk Challenge      high_risk file      C0, C1, C1.5    round3     scored
======  =======================  ==================  ==============  =========  ============
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grounding_eval.data.dataset import Dataset
from grounding_eval.data.records import Query

__all__ = ["ROUNDS", "Round", "select_items"]


@dataclass(frozen=True)
class Round:
    """One evaluation round."""

    id: str
    source: str  # "queries" or "high_risk"
    tags: tuple[str, ...]
    conditions: tuple[str, ...]
    rubric: str
    description: str
    # The methods document runs the quotation accuracy check in Rounds 2b and 3 only ("Quotation
    # accuracy check (Rounds 2b, 3)"). Elsewhere quotes are still reported, as information, but never
    # scored and never a hard failure.
    quotation_scored: bool = False


ROUNDS: dict[str, Round] = {
    r.id: r
    for r in (
        Round("1a", "queries", ("il-eviction",), ("C0", "C1"), "v3", "Round 1a: IL eviction, v3 stack"),
        Round("1b", "queries", ("six-state",), ("C0", "C1"), "v3", "Round 1b: six states, v3 stack"),
        Round(
            "2",
            "queries",
            ("il-high-stakes",),
            ("C0", "C1", "C1.5"),
            "v3",
            "Round 2: IL high-stakes, v3 stack",
        ),
        Round(
            "2b",
            "queries",
            ("il-high-stakes",),
            ("C0", "C1", "C1.5"),
            "v4",
            "Round 2b: IL high-stakes, v4 + quotes",
            quotation_scored=True,
        ),
        Round(
            "3",
            "high_risk",
            (),
            ("C0", "C1", "C1.5"),
            "round3",
            "Round 3: High-Risk Challenge items",
            quotation_scored=True,
        ),
    )
}


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
