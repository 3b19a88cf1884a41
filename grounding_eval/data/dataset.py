"""A whole dataset — queries, High-Risk items, content index, article cache — loaded and cross-checked.

A dataset is a folder with the standard file names (so a user's private data is a drop-in):

    queries.jsonl        LHSQ-style queries            (or .csv / .yaml / .json; Rounds 1a–2b)
    high_risk.jsonl      High-Risk Challenge items     (Round 3)
    jkb_index.jsonl      JKB-style content index       (required)
    articles/            article cache: <index id>.txt or <index id>.md, one file per article
    allowlist.txt        the verifier's URL allowlist (or allowlist.csv; optional: when absent it is
                         built from the index on load, as `grounding-eval allowlist build` does)
    organizations.yaml   the verifier's organization directory (optional: the pack's directory of every state otherwise)
    dataset.yaml         what the folder is: a name, and which of the methods document's real sets it
                         claims to hold (optional; :mod:`grounding_eval.data.manifest`)

At least one item file is needed; when ``dataset.yaml`` declares ``rounds``, the files those rounds read
are (:func:`required_item_files`). Cross-checks: every cached article and every query's ``article_ids``
must name an index record.

Every file :func:`load_dataset` reads must be a regular file that, symlinks resolved, lies inside the
dataset folder: a shared dataset cannot pull a file from elsewhere on the machine (``articles/x.txt ->
~/.ssh/id_rsa``) into a model prompt. A cached article may be at most 1 MiB
(:data:`~grounding_eval.files.ARTICLE`), the other files 64 MiB.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from grounding_eval.data.load import load_high_risk, load_index, load_queries
from grounding_eval.data.manifest import Manifest, load_manifest
from grounding_eval.data.methods import ROUNDS
from grounding_eval.data.records import Article, HighRiskItem, IndexRecord, Query
from grounding_eval.errors import DataError, clip
from grounding_eval.files import ARTICLE, check_inside, read_text

__all__ = [
    "DATASET_ENV",
    "Dataset",
    "find_allowlist",
    "find_directory",
    "find_index",
    "load_articles",
    "load_dataset",
    "resolve_dataset_dir",
]

DATASET_ENV = "GROUNDING_EVAL_DATASET"
"""Environment variable naming a dataset folder; it overrides the folder named in a config."""

_T = TypeVar("_T")
_STEMS = {"queries": "queries", "high_risk": "high_risk", "index": "jkb_index"}
_SUFFIXES = (".jsonl", ".csv", ".yaml", ".yml", ".json")
_ARTICLE_SUFFIXES = (".txt", ".md")


@dataclass(frozen=True)
class Dataset:
    """Everything a round needs, validated."""

    root: str
    queries: tuple[Query, ...]
    high_risk: tuple[HighRiskItem, ...]
    index: dict[str, IndexRecord] = field(repr=False)
    articles: dict[str, Article] = field(repr=False)
    manifest: Manifest = field(default=Manifest(), repr=False)

    def item(self, item_id: str) -> Query:
        """Return the query or High-Risk item with this id."""
        for item in (*self.queries, *self.high_risk):
            if item.id == item_id:
                return item
        raise KeyError(item_id)


def resolve_dataset_dir(configured: str | Path | None, default: Path) -> Path:
    """The dataset folder: ``$GROUNDING_EVAL_DATASET`` if set, else the configured one, else ``default``."""
    chosen = os.environ.get(DATASET_ENV) or configured
    return Path(chosen) if chosen else default


def _present(path: Path) -> bool:
    # Anything by that name, even a broken symlink or a FIFO: reading it then says what is wrong,
    # instead of "no such file" for a file the user can see.
    return os.path.lexists(path)


def _find(root: Path, kind: str, *, required: bool) -> Path | None:
    candidates = [root / f"{_STEMS[kind]}{suffix}" for suffix in _SUFFIXES]
    found = [p for p in candidates if _present(p)]
    if len(found) > 1:
        raise DataError(root, f"both {found[0].name} and {found[1].name} exist: keep one {kind} file")
    if not found and required:
        raise DataError(root, f"no {kind} file ({_STEMS[kind]}.jsonl, .csv, .yaml or .json)")
    return found[0] if found else None


def find_index(root: str | Path) -> Path:
    """The dataset's content index file.

    Raises:
        DataError: none or several index files.
    """
    found = _find(Path(root), "index", required=True)
    assert found is not None
    return found


def find_allowlist(root: str | Path) -> Path | None:
    """The dataset's own URL allowlist (``allowlist.txt`` or ``allowlist.csv``), if it has one.

    Raises:
        DataError: both exist.
    """
    return _find_one(Path(root), ("allowlist.txt", "allowlist.csv"))


def find_directory(root: str | Path) -> Path | None:
    """The dataset's own organization directory (``organizations.yaml``), if it has one.

    Raises:
        DataError: both ``organizations.yaml`` and ``organizations.yml`` exist.
    """
    return _find_one(Path(root), ("organizations.yaml", "organizations.yml"))


def find_citation_index(root: str | Path) -> Path | None:
    """The dataset's own citation index (``citations.yaml``), if it has one.

    Raises:
        DataError: both ``citations.yaml`` and ``citations.yml`` exist.
    """
    return _find_one(Path(root), ("citations.yaml", "citations.yml"))


def _find_one(root: Path, names: tuple[str, ...]) -> Path | None:
    found = [root / name for name in names if _present(root / name)]
    if len(found) > 1:
        raise DataError(root, f"both {found[0].name} and {found[1].name} exist: keep one")
    if found:
        check_inside(found[0], root)  # a dataset's files never come from elsewhere (symlinks resolved)
    return found[0] if found else None


def load_articles(
    folder: str | Path,
    index: dict[str, IndexRecord],
    index_path: str,
    *,
    root: str | Path | None = None,
    problems: list[str] | None = None,
) -> dict[str, Article]:
    """Load every ``<id>.txt``/``<id>.md`` in ``folder``; each id must be in the index.

    Args:
        folder: The article cache, ``<dataset>/articles``.
        index: The dataset's index records.
        index_path: The index file, for messages.
        root: The dataset folder every article must resolve within (default: ``folder``'s parent).
        problems: When given, a bad article is added to it as one line and skipped instead of raising.

    Raises:
        DataError: an article is not in the index, empty, not a regular file, over 1 MiB, not UTF-8,
            or (a symlink) outside ``root``.
    """
    folder = Path(folder)
    root = Path(root) if root is not None else folder.parent
    if not folder.is_dir():
        raise DataError(folder, "article cache folder not found")
    articles: dict[str, Article] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in _ARTICLE_SUFFIXES or path.name.startswith("."):
            continue
        try:
            articles[path.stem] = _article(path, articles, index, index_path, root)
        except DataError as exc:
            if problems is None:
                raise
            problems.append(exc.one_line())
    return articles


def _article(
    path: Path, articles: dict[str, Article], index: dict[str, IndexRecord], index_path: str, root: Path
) -> Article:
    if path.stem in articles:
        raise DataError(path, f"a second file for article {path.stem!r}")
    record = index.get(path.stem)
    if record is None:
        raise DataError(path, f"article id {path.stem!r} is not in the index {index_path}")
    text = read_text(path, ARTICLE, inside=root)
    if not text.strip():
        raise DataError(path, "article text is empty")
    return Article(record, text.strip() + "\n", str(path))


def required_item_files(manifest: Manifest) -> tuple[str, ...]:
    """The item files a dataset must hold: those the rounds its ``dataset.yaml`` declares read (queries for
    1a–2b, high_risk for 3); with no rounds declared, none in particular (at least one of the two)."""

    return tuple(dict.fromkeys(ROUNDS[r].source for r in manifest.rounds))


def load_dataset(root: str | Path, *, problems: list[str] | None = None) -> Dataset:
    """Load and cross-check the dataset folder ``root``.

    A dataset needs its content index and the item files its rounds read: ``dataset.yaml``'s ``rounds``
    when it declares them (:func:`required_item_files`), otherwise at least one of ``queries.jsonl`` and
    ``high_risk.jsonl`` (a missing one simply holds no items).

    Args:
        root: The dataset folder.
        problems: When given, every problem found is added to it as one line and loading goes on with
            what is valid (``data validate``); otherwise the first problem raises.

    Raises:
        DataError: one line naming the file, the record and the field.
    """
    root = Path(root)
    if not root.is_dir():
        raise DataError(root, "dataset folder not found")

    def attempt(step: Callable[[], _T], default: _T) -> _T:
        if problems is None:
            return step()
        try:
            return step()
        except DataError as exc:
            problems.append(exc.one_line())
            return default

    def report(path: str | Path | None, problem: str) -> None:
        attempt(lambda: _refuse(path, problem), None)

    manifest: Manifest = attempt(lambda: load_manifest(root), Manifest())
    index_path = attempt(lambda: _find(root, "index", required=True), None)
    before = len(problems) if problems is not None else 0
    index: dict[str, IndexRecord] = {}
    if index_path is not None:
        index = attempt(lambda: load_index(index_path, inside=root, problems=problems), index)
    # An index with problems is not the index: its absent records are not reported again for each item.
    index_known = index_path is not None and (problems is None or len(problems) == before)
    queries_path = attempt(lambda: _find(root, "queries", required=False), None)
    high_risk_path = attempt(lambda: _find(root, "high_risk", required=False), None)
    found = {"queries": queries_path, "high_risk": high_risk_path}
    for kind in required_item_files(manifest):
        if found[kind] is None:
            rounds = ", ".join(r for r in manifest.rounds if ROUNDS[r].source == kind)
            report(
                manifest.path,
                f"round {rounds} reads {_STEMS[kind]}.jsonl (or .csv, .yaml, .json): none in {root}",
            )
    if queries_path is None and high_risk_path is None and not manifest.rounds:
        report(root, "no item file: queries.jsonl or high_risk.jsonl (or .csv, .yaml, .json)")
    queries: list[Query] = []
    if queries_path is not None:
        queries = attempt(lambda: load_queries(queries_path, inside=root, problems=problems), queries)
    high_risk: list[HighRiskItem] = []
    if high_risk_path is not None:
        high_risk = attempt(lambda: load_high_risk(high_risk_path, inside=root, problems=problems), high_risk)
    items: tuple[tuple[Path | None, list[Query]], ...] = (
        (queries_path, queries),
        (high_risk_path, list(high_risk)),
    )
    for path, listed in items:
        for item in listed:
            for article_id in item.article_ids:
                if index_known and article_id not in index:
                    report(
                        path,
                        f"id {clip(item.id)}: field 'article_ids': {clip(article_id)} is not in the index {index_path}",
                    )
    # Each file's ids are unique already (the loaders check); only an id used in both files is left.
    high_risk_ids = {item.id for item in high_risk}
    for duplicate in [q.id for q in queries if q.id in high_risk_ids]:
        report(high_risk_path, f"id {clip(duplicate)}: field 'id': also used in {queries_path}")
    articles: dict[str, Article] = {}
    if _present(root / "articles") and index_known:
        articles = attempt(
            lambda: load_articles(root / "articles", index, str(index_path), root=root, problems=problems),
            articles,
        )
    return Dataset(str(root), tuple(queries), tuple(high_risk), index, articles, manifest)


def _refuse(path: str | Path | None, problem: str) -> None:
    raise DataError(path, problem)
