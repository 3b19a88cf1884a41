"""Fill the C1 and C1.5 condition variables from a dataset, with Jinja2 templates kept under prompts/.

``jkb_directory`` (C1) is one block per selected index record; ``jkb_full_content`` (C1.5) is the full
cached text of the selected articles. Templates render with ``StrictUndefined`` so a template that
names a missing field fails loudly instead of printing nothing.

The methods document gives each directory block "a 200-character description": a longer index
description is cut here, when the block is built (the data files keep their text), by
:func:`cut_description`. An empty block is never a silent prompt: :class:`ConditionVars` says why a
block came out empty (``directory_gap``, ``full_content_gap``), and the test generator turns that into an
``ERROR (no grounding for …)`` row.

``directory_mode="matched"`` (the test generator's ``directory: matched``, ``conditions show
--matched-directory``) builds C1's directory from the C1.5 articles' own records instead of the top-ranked
ones (:mod:`grounding_eval.data.design`): a comparison of format alone. The default is the methods
document's construction.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import regex

from grounding_eval.data.dataset import Dataset
from grounding_eval.data.design import DIRECTORY_MODES
from grounding_eval.data.records import Query
from grounding_eval.data.select import Selection, approx_tokens, rank, select_directory, select_full_content
from grounding_eval.errors import DataError
from grounding_eval.resources import pack_root

__all__ = [
    "CONDITION_PROMPTS",
    "DESCRIPTION_CHARS",
    "ConditionVars",
    "condition_vars",
    "cut_description",
    "render_prompt",
]

PROMPTS_DIR = pack_root() / "prompts"  # the repository's in a checkout, the package data's when installed
CONDITION_PROMPTS = {"C0": "c0.txt", "C1": "c1.txt", "C1.5": "c1_5.txt"}
"""The generation prompt file of each condition, verbatim from the methods document."""

DESCRIPTION_CHARS = 200
"""A directory block's description, at most: "a 200-character description" (methods document)."""

_ELLIPSIS = "\u2026"
# Left off the end of a cut description before the "…": a dangling comma, colon, dash or opening bracket
# reads as if text were missing twice.
# The text's own "…" goes too, so the cut never reads "……".
_TRAILING = ",;:-\u2013\u2014([{/\u2026 \t\n\r\u00a0"


@cache
def _clusters() -> Any:  # regex.Pattern (the regex package ships no type information)
    return regex.compile(r"\X")


def _whole_characters(text: str, end: int) -> int:
    r"""``end`` moved back until ``text[:end]`` ends on a whole user-perceived character: the start of the
    extended grapheme cluster (Unicode's UAX #29, the ``regex`` package's ``\X``) that ``end`` falls inside.
    A letter and its marks, a Hangul syllable of conjoining jamo, an emoji ZWJ sequence or a flag is one."""
    if end <= 0 or end >= len(text):
        return end
    for cluster in _clusters().finditer(text):
        if cluster.end() > end:
            return int(cluster.start())
    return end


def cut_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text`` if it is at most ``limit`` characters, else cut at a word boundary, with "…", to at most
    ``limit`` characters including the "…".

    Characters are code points (Python ``len``). The cut is at the last space that leaves room for the
    "…"; trailing punctuation before it is dropped (``"rent, …"`` would read oddly). A first word longer
    than the limit is cut inside the word, never inside a user-perceived character (a letter and its marks, an
    emoji ZWJ sequence, a flag).
    """
    if len(text) <= limit:
        return text
    room = limit - len(_ELLIPSIS)
    # The last whitespace at or before index ``room``: the text before it is at most ``room`` long.
    space = next((i for i in range(room, 0, -1) if text[i].isspace()), 0)
    # No such whitespace: one word longer than the limit, cut inside it.
    head = text[:space] if space else text[: _whole_characters(text, room)]
    cut = head.rstrip(_TRAILING).rstrip()
    return (cut or head.rstrip() or text[: _whole_characters(text, room)]) + _ELLIPSIS


@dataclass(frozen=True)
class ConditionVars:
    """The grounding variables for one query, with what was chosen and its size."""

    jkb_directory: str
    jkb_full_content: str
    directory: tuple[Selection, ...]
    full_content: tuple[Selection, ...]
    directory_cut: tuple[str, ...] = ()
    """Index ids whose description was cut to :data:`DESCRIPTION_CHARS` in this directory."""
    directory_gap: str | None = None
    """Why the C1 directory is empty (``None`` when it is not)."""
    full_content_gap: str | None = None
    """Why the C1.5 content is empty (``None`` when it is not)."""

    @property
    def directory_tokens(self) -> int:
        """Estimated tokens of the C1 directory."""
        return approx_tokens(self.jkb_directory)

    @property
    def full_content_tokens(self) -> int:
        """Estimated tokens of the C1.5 content."""
        return approx_tokens(self.jkb_full_content)


@cache
def _environment(templates: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
    )


def condition_vars(
    item: Query, dataset: Dataset, templates: Path = PROMPTS_DIR, *, directory_mode: str = "seed"
) -> ConditionVars:
    """Render ``jkb_directory`` and ``jkb_full_content`` for ``item``.

    ``directory_mode`` (:data:`~grounding_eval.data.design.DIRECTORY_MODES`): ``seed`` (default) lists the
    top-ranked index records in C1's directory, as the methods document builds it; ``matched`` lists
    exactly the records of the item's C1.5 articles, in their order, so C1 and C1.5 give the same records.

    Raises:
        DataError: an unknown ``directory_mode``.
    """
    if directory_mode not in DIRECTORY_MODES:
        raise DataError(
            dataset.root, f"directory {directory_mode!r} is not one of {', '.join(DIRECTORY_MODES)}"
        )
    env = _environment(templates)
    ranked = rank(item, dataset.index)
    full = select_full_content(item, dataset.index, dataset.articles, ranked=ranked)
    matched = directory_mode == "matched"
    directory = list(full) if matched else select_directory(item, dataset.index, ranked=ranked)
    records = [
        dataclasses.replace(s.record, description=cut_description(s.record.description)) for s in directory
    ]
    jkb_directory = env.get_template("jkb_directory.j2").render(records=records).strip()
    jkb_full_content = (
        env.get_template("jkb_full_content.j2")
        .render(articles=[dataset.articles[s.record.id] for s in full])
        .strip()
    )
    return ConditionVars(
        jkb_directory=jkb_directory,
        jkb_full_content=jkb_full_content,
        directory=tuple(directory),
        full_content=tuple(full),
        directory_cut=tuple(r.id for r, s in zip(records, directory, strict=True) if r != s.record),
        directory_gap=None if jkb_directory else _gap(item, ranked, _DIRECTORY_KIND[directory_mode]),
        full_content_gap=None if jkb_full_content else _gap(item, ranked, "cached article"),
    )


_DIRECTORY_KIND = {"seed": "index record", "matched": "cached article (directory: matched)"}


def _gap(item: Query, ranked: list[Selection], kind: str) -> str:
    """Why a block is empty, in one line (the reason of the item's ERROR row)."""
    ids = [s.record.id for s in ranked]
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    if item.article_ids:
        return f"item {item.id!r}: none of its article_ids ({shown}) has a {kind}"
    if not ranked:
        return (
            f"item {item.id!r}: no index record of {item.jurisdiction} or US matches its topic "
            f"{item.topic!r} or its question's words"
        )
    return f"item {item.id!r}: none of the {len(ids)} matching index records ({shown}) has a {kind}"


def render_prompt(
    condition: str,
    item: Query,
    dataset: Dataset,
    templates: Path = PROMPTS_DIR,
    *,
    directory_mode: str = "seed",
) -> str:
    """The generation prompt exactly as the model sees it under ``condition`` (C0, C1 or C1.5).

    promptfoo renders the same files with Nunjucks; their ``{{name}}`` placeholders are plain
    substitutions, so a literal replacement gives the identical text (promptfoo also drops the file's
    final newline).

    Raises:
        DataError: the condition's grounding block is empty (as in an eval, where that cell is an ERROR
            row): never a prompt with an empty block.
    """
    grounding = condition_vars(item, dataset, templates, directory_mode=directory_mode)
    gap = {"C1": grounding.directory_gap, "C1.5": grounding.full_content_gap}.get(condition)
    if gap:
        raise DataError(dataset.root, f"no grounding for {condition}: {gap}")
    values = {
        "jurisdiction": item.jurisdiction,
        "question": item.question,
        "jkb_directory": grounding.jkb_directory,
        "jkb_full_content": grounding.jkb_full_content,
    }
    text = (templates / CONDITION_PROMPTS[condition]).read_text(encoding="utf-8").rstrip()
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text
