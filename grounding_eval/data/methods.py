"""The methods document's rounds and real datasets: what each round runs, and the sizes each set has.

Plain values, importing nothing of the package: the loaders, the models that check a ``dataset.yaml``,
the round selection and the test generator all read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["REAL_SETS", "ROUNDS", "RealSet", "Round"]


@dataclass(frozen=True)
class RealSet:
    """One of the methods document's datasets: its file, its size, and each round's documented count."""

    name: str
    source: str  # "queries" or "high_risk": the dataset file it is
    size: int
    rounds: Mapping[str, int]  # round id -> items the study used
    seed_text: str


REAL_SETS: Mapping[str, RealSet] = {
    s.name: s
    for s in (
        RealSet(
            "LHSQ-115",
            "queries",
            115,
            {"1a": 22, "1b": 48, "2": 10, "2b": 10},
            "LHSQ-115: 115 synthetic user-voice queries … Round subsets: 22 IL eviction (1a), 48 across six "
            "states (1b), 10 IL high-stakes (2, 2b).",
        ),
        RealSet(
            "High-Risk-Challenge",
            "high_risk",
            192,
            {"3": 40},
            "High-Risk Challenge Queries: a 192-query SME-flagged set … Round 3 used 40.",
        ),
    )
}
"""The sets a ``dataset.yaml`` may claim, with the methods document's numbers (seed 001, "Datasets")."""


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
    # The citation check is the pack's own (the seed's verifier has none), and citations are neutral:
    # UNKNOWN and another state's law are hard failures only where a seed safety check covers them
    # (Round 3's hallucinated_citation and jurisdiction_correct), information elsewhere.
    citation_check: str = "information"


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
            citation_check="hard",
        ),
    )
}
