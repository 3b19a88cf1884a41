"""Fill the C1 and C1.5 condition variables from a dataset, with Jinja2 templates kept under prompts/.

``jkb_directory`` (C1) is one block per selected index record; ``jkb_full_content`` (C1.5) is the full
cached text of the selected articles. Templates render with ``StrictUndefined`` so a template that
names a missing field fails loudly instead of printing nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jinja2

from grounding_eval.data.dataset import Dataset
from grounding_eval.data.records import Query
from grounding_eval.data.select import Selection, approx_tokens, rank, select_directory, select_full_content
from grounding_eval.resources import pack_root

__all__ = ["CONDITION_PROMPTS", "ConditionVars", "condition_vars", "render_prompt"]

PROMPTS_DIR = pack_root() / "prompts"  # the repository's in a checkout, the package data's when installed
CONDITION_PROMPTS = {"C0": "c0.txt", "C1": "c1.txt", "C1.5": "c1_5.txt"}
"""The generation prompt file of each condition, verbatim from the methods document."""


@dataclass(frozen=True)
class ConditionVars:
    """The grounding variables for one query, with what was chosen and its size."""

    jkb_directory: str
    jkb_full_content: str
    directory: tuple[Selection, ...]
    full_content: tuple[Selection, ...]

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


def condition_vars(item: Query, dataset: Dataset, templates: Path = PROMPTS_DIR) -> ConditionVars:
    """Render ``jkb_directory`` and ``jkb_full_content`` for ``item``."""
    env = _environment(templates)
    ranked = rank(item, dataset.index)
    directory = select_directory(item, dataset.index, ranked=ranked)
    full = select_full_content(item, dataset.index, dataset.articles, ranked=ranked)
    return ConditionVars(
        jkb_directory=env.get_template("jkb_directory.j2")
        .render(records=[s.record for s in directory])
        .strip(),
        jkb_full_content=env.get_template("jkb_full_content.j2")
        .render(articles=[dataset.articles[s.record.id] for s in full])
        .strip(),
        directory=tuple(directory),
        full_content=tuple(full),
    )


def render_prompt(condition: str, item: Query, dataset: Dataset, templates: Path = PROMPTS_DIR) -> str:
    """The generation prompt exactly as the model sees it under ``condition`` (C0, C1 or C1.5).

    promptfoo renders the same files with Nunjucks; their ``{{name}}`` placeholders are plain
    substitutions, so a literal replacement gives the identical text (promptfoo also drops the file's
    final newline).
    """
    grounding = condition_vars(item, dataset, templates)
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
