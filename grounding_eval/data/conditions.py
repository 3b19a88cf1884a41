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
from grounding_eval.data.select import Selection, approx_tokens, select_directory, select_full_content

__all__ = ["ConditionVars", "condition_vars"]

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


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
    directory = select_directory(item, dataset.index)
    full = select_full_content(item, dataset.index, dataset.articles)
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
