"""The dataset record types, in the formats the methods document describes.

* :class:`Query` — an LHSQ-style user-voice question with the tags that select round subsets.
* :class:`HighRiskItem` — a High-Risk Challenge item: a query plus the SME-flagged fields Round 3 grades.
* :class:`IndexRecord` — one JKB Content Index entry; the directory (C1) is built from these.
* :class:`Article` — one cached article's extracted text (C1.5), tied to its index entry.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RISK_TIERS", "Article", "HighRiskItem", "IndexRecord", "Query"]

RISK_TIERS = ("critical", "high", "moderate")
"""High-Risk tiers, most severe first."""


@dataclass(frozen=True)
class Query:
    """A user-voice question for one jurisdiction."""

    id: str
    jurisdiction: str
    topic: str
    question: str
    tags: tuple[str, ...] = ()
    article_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class HighRiskItem(Query):
    """A High-Risk Challenge item: what an expert says a good answer must ask about and must avoid."""

    required_clarifying_questions: tuple[str, ...] = ()
    failure_modes: tuple[str, ...] = ()
    risk_tier: str = ""
    sme_variables: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexRecord:
    """One JKB Content Index entry."""

    id: str
    state: str
    title: str
    url: str
    description: str
    organization: str
    topics: tuple[str, ...] = ()
    source: str | None = None


@dataclass(frozen=True)
class Article:
    """A cached article: extracted text (headings, paragraphs, lists) of one index entry."""

    record: IndexRecord
    text: str
    path: str
