"""Build the verifier's resources from file paths and options, checking everything before any answer.

Shared by the promptfoo assertion and the command line so both validate the same way and fail with
the same one-line messages.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.verifier.allowlist import Allowlist, load_allowlist
from grounding_eval.verifier.citations import CitationIndex, load_citation_index
from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.liveness import (
    DEFAULT_ANSWER_BUDGET,
    DEFAULT_MAX_URLS_CHECKED,
    DEFAULT_URL_DEADLINE,
    LivenessChecker,
)
from grounding_eval.verifier.quotes import DEFAULT_THRESHOLDS
from grounding_eval.verifier.quotes.outside import OutsideText, OutsideTexts, vocabulary
from grounding_eval.verifier.verdict import VerifierResources

__all__ = ["LIVENESS_MODES", "article_texts", "load_resources"]

LIVENESS_MODES = ("offline", "live")


def load_resources(
    *,
    allowlist: Path | Allowlist,
    orgs: Path,
    liveness: str = "offline",
    snapshot: Path | None = None,
    cache_path: Path | None = None,
    allow_hosts: Iterable[str] = (),
    dns_server: str | None = None,
    url_deadline: float = DEFAULT_URL_DEADLINE,
    answer_budget: float = DEFAULT_ANSWER_BUDGET,
    max_urls_checked: int = DEFAULT_MAX_URLS_CHECKED,
    quote_near: float | None = None,
    quote_partial: float | None = None,
    cache_dir: Path | None = None,
    citations: Path | None = None,
    dataset: Path | None = None,
) -> VerifierResources:
    """Load and validate the allowlist, directory, liveness checker and quote thresholds.

    ``dns_server`` (``"address[:port]"``, e.g. ``"127.0.0.1:5353"``) is the one nameserver a live check
    asks whether a host exists; ``None`` uses the system's resolver configuration. It is validated here
    in either mode, and only used live.

    ``allowlist`` is a file, or an allowlist already built (e.g. from a dataset's index).

    The live check's limits, validated here in either mode: ``url_deadline`` (seconds one URL may take
    over DNS, connections and every redirect; default 10), ``answer_budget`` (seconds of checks one
    answer may spend; default 30) and ``max_urls_checked`` (network checks per answer; default 50).
    Past a limit a URL is UNCHECKED with the reason; snapshot and cache hits are free.

    ``cache_dir`` (the user's, :func:`grounding_eval.user_cache.cache_root`): keep the loaded allowlist,
    directory and citation index there, keyed by their files' content and sealed with the user's secret,
    and read them back in the next process instead of parsing the files again
    (:mod:`~grounding_eval.verifier.resource_cache`); ``None`` parses them every time.

    ``citations``: the dataset's citation index (``citations.yaml``), or None for none.

    ``dataset``: the dataset the answers' items come from, or None. A quote the item's sources do not
    hold is then looked up in its articles (labelled ``article <id>``), read the first time a quote needs
    them (:func:`article_texts`); without it such a quote stays ``NO_MATCH``.

    Raises:
        DataError: one line naming the file (or option) and the problem.
    """
    if dataset is not None and not Path(dataset).is_dir():
        raise DataError(dataset, "dataset folder not found")
    if liveness not in LIVENESS_MODES:
        raise DataError("liveness", f"must be one of {', '.join(LIVENESS_MODES)}, not {liveness!r}")
    try:
        thresholds = dataclasses.replace(
            DEFAULT_THRESHOLDS,
            near=DEFAULT_THRESHOLDS.near if quote_near is None else quote_near,
            partial=DEFAULT_THRESHOLDS.partial if quote_partial is None else quote_partial,
        )
    except ValueError as exc:
        raise DataError("quote thresholds", str(exc)) from None
    return VerifierResources(
        allowlist=allowlist if isinstance(allowlist, Allowlist) else _allowlist(allowlist, cache_dir),
        directory=_directory(orgs, cache_dir),
        liveness=LivenessChecker(
            offline=liveness == "offline",
            cache_path=cache_path,
            snapshot_path=snapshot,
            allow_hosts=allow_hosts,
            dns_resolver=dns_server,
            url_deadline=url_deadline,
            answer_budget=answer_budget,
            max_urls_checked=max_urls_checked,
        ),
        liveness_mode=liveness,
        quote_thresholds=thresholds,
        citations=None if citations is None else _citation_index(citations, cache_dir),
        outside_texts=None if dataset is None else _dataset_articles(Path(dataset), cache_dir),
    )


def _allowlist(path: Path, cache_dir: Path | None) -> Allowlist:
    if cache_dir is None:
        return load_allowlist(path)
    from grounding_eval.verifier.resource_cache import cached_allowlist

    return cached_allowlist(Path(path), cache_dir)


def _citation_index(path: Path, cache_dir: Path | None) -> CitationIndex:
    if cache_dir is None:
        return load_citation_index(path)
    from grounding_eval.verifier.resource_cache import cached_citation_index

    index: CitationIndex = cached_citation_index(Path(path), cache_dir)
    return index


def _directory(path: Path, cache_dir: Path | None) -> Directory:
    if cache_dir is None:
        return load_directory(path)
    from grounding_eval.verifier.resource_cache import cached_directory

    return cached_directory(Path(path), cache_dir)


def _dataset_articles(dataset: Path, cache_dir: Path | None) -> OutsideTexts:
    return OutsideTexts(
        lambda: [
            OutsideText(f"article {i}", text, words) for i, text, words in article_texts(dataset, cache_dir)
        ]
    )


@cache
def article_texts(
    dataset: Path, cache_dir: Path | None = None
) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Every article of ``dataset``'s article cache, ``(id, text, words)`` in id order (none without an
    article cache), read as the dataset loader reads them (each id in the index, each file inside the
    dataset folder), ``words`` its vocabulary as the quotation matcher reads it; once per process, and
    with ``cache_dir`` kept there while the files and that code are unchanged
    (:mod:`grounding_eval.built_cache`): loading the index validates it (~100 ms in a fresh process),
    and the vocabularies cost a normalization of every article.

    Raises:
        DataError: the index or an article cannot be read.
    """
    if cache_dir is None:
        return _read_articles(dataset)
    from grounding_eval.built_cache import cached_build, library_file

    package = Path(__file__).resolve().parents[1]
    quotes = package / "verifier" / "quotes"
    rules = (*sorted((package / "data").glob("*.py")), *sorted(quotes.glob("*.py")), package / "files.py",
             Path(__file__).resolve(), library_file("pydantic", "version.py"))  # fmt: skip
    value = cached_build(
        "article-texts", (str(dataset.resolve()),), dataset, lambda: _read_articles(dataset), rules,
        accept=_are_articles, cache_dir=cache_dir,
    )  # fmt: skip
    return tuple((str(i), str(text), tuple(map(str, words))) for i, text, words in value)


def _read_articles(dataset: Path) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    from grounding_eval.data.dataset import find_index, load_articles
    from grounding_eval.data.load import load_index

    if not os.path.lexists(dataset / "articles"):  # (as the loader: a dataset without an article cache)
        return ()
    index_path = find_index(dataset)
    index = load_index(index_path, inside=dataset)
    articles = load_articles(dataset / "articles", index, str(index_path), root=dataset)
    return tuple((i, article.text, tuple(vocabulary(article.text))) for i, article in articles.items())


def _are_articles(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], str)
        and isinstance(v[2], list) and all(isinstance(w, str) for w in v[2])
        for v in value
    )  # fmt: skip
