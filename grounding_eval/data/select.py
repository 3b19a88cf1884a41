"""Which index records ground a question: deterministic, explainable relevance.

1. If the query lists ``article_ids``, those records are used, in the listed order — nothing else.
2. Otherwise candidates are the index records of the user's state or national (``US``) ones, scored
   ``3 × (query topic among the record's topics) + (content words shared by the question and topic with
   the record's title, description and topics) + 0.5 × (record of the user's own state)``. Records
   scoring 0 are never chosen; ties are broken by record id. Every choice carries its reasons.

The C1 directory takes the top :data:`DIRECTORY_K`; C1.5 takes the top :data:`FULL_CONTENT_K` that
have a cached article (the methods document's "two or three relevant articles").
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from grounding_eval.data.records import Article, IndexRecord, Query
from grounding_eval.states import NATIONAL

__all__ = [
    "DIRECTORY_K",
    "FULL_CONTENT_K",
    "Selection",
    "approx_tokens",
    "rank",
    "select_directory",
    "select_full_content",
]

DIRECTORY_K = 3
FULL_CONTENT_K = 3

_STOPWORDS = frozenset(
    [
        "about",
        "after",
        "again",
        "all",
        "also",
        "and",
        "any",
        "are",
        "because",
        "been",
        "before",
        "being",
        "but",
        "can",
        "cannot",
        "could",
        "did",
        "does",
        "doing",
        "don",
        "done",
        "for",
        "from",
        "get",
        "got",
        "had",
        "has",
        "have",
        "having",
        "her",
        "here",
        "him",
        "his",
        "how",
        "into",
        "its",
        "just",
        "like",
        "made",
        "make",
        "may",
        "more",
        "most",
        "much",
        "must",
        "need",
        "not",
        "now",
        "off",
        "once",
        "only",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "since",
        "some",
        "still",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "too",
        "under",
        "until",
        "very",
        "was",
        "way",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "i'm",
        "i've",
        "can't",
        "don't",
        "won't",
        "it's",
        "right",
        "really",
        "going",
        "want",
    ]
)


@dataclass(frozen=True)
class Selection:
    """A chosen index record, its score and why it was chosen."""

    record: IndexRecord
    score: float
    reasons: tuple[str, ...]


def approx_tokens(text: str) -> int:
    """Estimated tokens: one per four characters, the usual rule of thumb for English.

    An estimate, not a tokenizer (tokenizers download vocabularies at run time): good to compare with
    the methods document's ≈150–200 (C1) and ≈2,800–8,700 (C1.5), not to bill by.
    """
    return math.ceil(len(text) / 4)


def _words(text: str) -> set[str]:
    words = set()
    for word in re.findall(r"[a-z][a-z'-]{2,}", text.lower()):
        word = word.strip("'-")
        if word in _STOPWORDS or len(word) < 3:
            continue
        words.add(word[:-1] if word.endswith("s") and not word.endswith("ss") else word)
    return words


@lru_cache(maxsize=65536)
def _record_words(record: IndexRecord) -> frozenset[str]:
    # Computed once per record: ranking 115 queries over a 5,322-record index would otherwise tokenize
    # every record 115 times.
    return frozenset(_words(f"{record.title} {record.description} {' '.join(record.topics)}"))


def rank(item: Query, index: Mapping[str, IndexRecord]) -> list[Selection]:
    """All records that could ground ``item``, best first (see the module docstring for the rule)."""
    if item.article_ids:
        return [Selection(index[a], 0.0, ("listed in the query's article_ids",)) for a in item.article_ids]
    wanted = _words(f"{item.question} {item.topic.replace('-', ' ')}")
    ranked = []
    for record in index.values():
        if record.state not in (item.jurisdiction, NATIONAL):
            continue
        reasons = []
        score = 0.0
        if item.topic in record.topics:
            score += 3
            reasons.append(f"topic {item.topic}")
        shared = sorted(wanted & _record_words(record))
        if shared:
            score += len(shared)
            reasons.append("shared words: " + ", ".join(shared))
        if score == 0:
            continue
        if record.state == item.jurisdiction:
            score += 0.5
            reasons.append(f"{record.state} record")
        ranked.append(Selection(record, score, tuple(reasons)))
    ranked.sort(key=lambda s: (-s.score, s.record.id))
    return ranked


def select_directory(
    item: Query,
    index: Mapping[str, IndexRecord],
    k: int = DIRECTORY_K,
    *,
    ranked: list[Selection] | None = None,
) -> list[Selection]:
    """The records listed in the C1 directory for ``item`` (``ranked``: a :func:`rank` already made)."""
    chosen = rank(item, index) if ranked is None else ranked
    return chosen if item.article_ids else chosen[:k]


def select_full_content(
    item: Query,
    index: Mapping[str, IndexRecord],
    articles: Mapping[str, Article],
    k: int = FULL_CONTENT_K,
    *,
    ranked: list[Selection] | None = None,
) -> list[Selection]:
    """The records whose cached article text fills C1.5 for ``item``."""
    chosen = rank(item, index) if ranked is None else ranked
    return [s for s in chosen if s.record.id in articles][:k]
