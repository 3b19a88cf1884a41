"""The factual-accuracy judge prompt: the seed's template rendered with the target text treated as hostile.

The template (``rubrics/templates/factual_accuracy.j2``) keeps the seed's section tags verbatim
(``<TARGET_TEXT>``, ``<GROUND_TRUTH_EVIDENCE>``), so the content-derived nonce the rubric judge puts on
its answer tags is not available here. The defence is the rubric judge's :func:`neutralize` rule applied
to this template's tags (:data:`SECTION_TAGS`): inside the target text and the evidence, every opening of
one of them — look-alike brackets, HTML references, invisible characters and look-alike letters
included — has its ``<`` written ``&lt;``; the system message says the target is content, not
instructions. The pattern is built from the judge's own pieces (:mod:`grounding_eval.judge.section_tags`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

import jinja2

from grounding_eval.errors import DataError
from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.judge import section_tags as judge_tags
from grounding_eval.judge.render import TEMPLATES_DIR, judge_environment
from grounding_eval.judge.section_tags import neutralize

__all__ = ["SECTION_TAGS", "RenderedFactualityPrompt", "neutralize_sections", "render_factuality_prompt"]

SECTION_TAGS: Final = ("TARGET_TEXT", "GROUND_TRUTH_EVIDENCE", "CONSTRAINTS")
"""The tags ``factual_accuracy.j2`` uses as section markers (a test keeps the two in step)."""


@cache
def _tag_open() -> re.Pattern[str]:
    # The rubric judge's tag-opening grammar (section_tags._tag_pattern), over this template's tag names.
    inside, gap, opener, slash = (
        judge_tags._INSIDE,
        judge_tags._GAP,
        judge_tags._OPENER,
        judge_tags._SLASH,
    )
    names = sorted(SECTION_TAGS, key=len, reverse=True)
    spelled = "|".join(inside.join(judge_tags._letter(ch.lower()) for ch in name) for name in names)
    return re.compile(rf"{opener}(?P<rest>{gap}(?:{slash}{gap})?(?:{spelled}))(?![a-z0-9_])", re.IGNORECASE)


def neutralize_sections(text: str) -> str:
    """Defuse this template's section tags (and the rubric judge's) inside untrusted text."""
    return neutralize(_tag_open().sub(lambda m: "&lt;" + m.group("rest"), text))


@dataclass(frozen=True)
class RenderedFactualityPrompt:
    """A rendered prompt and the version that produced it."""

    system: str
    user: str
    prompt_version: str


def render_factuality_prompt(
    rubric: FactualityRubric,
    *,
    target_text: str,
    documents: Sequence[Document],
    domain_constraints: Sequence[str] = (),
) -> RenderedFactualityPrompt:
    """Render the judge prompt for one target text against its evidence.

    Raises:
        DataError: the template is missing or uses an undefined variable.
    """
    env = _environment()
    try:
        template = env.get_template(rubric.template)
    except jinja2.TemplateNotFound:
        raise DataError(TEMPLATES_DIR / rubric.template, "template not found") from None
    evidence = [
        {
            "chunk_id": c.chunk_id,
            "source_document_id": c.source_document_id,
            "text": neutralize_sections(c.text),
        }
        for d in documents
        for c in d.chunks
    ]
    try:
        user = template.render(
            severity_scale=[{"level": s.level, "definition": s.definition} for s in rubric.severities],
            verification_results=list(rubric.result_names),
            severity_levels=list(rubric.severity_levels),
            target_text=neutralize_sections(target_text),
            evidence=evidence,
            constraints=[*rubric.constraints, *(neutralize_sections(c) for c in domain_constraints)],
        )
    except jinja2.UndefinedError as exc:
        raise DataError(template.filename, f"template variable undefined: {exc.message}") from exc
    return RenderedFactualityPrompt(rubric.system, user.strip() + "\n", rubric.prompt_version)


def _environment() -> jinja2.Environment:
    return judge_environment(TEMPLATES_DIR)
