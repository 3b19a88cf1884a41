"""Rendering the docs-QA grader prompt (``rubrics/templates/docs_qa.j2``).

The seed: "give an LLM this rubric, the question, the reference answer, the source sections, and the
assistant's answer"; the issue adds the ``must_include`` list. The answer is hostile and handled as
the rubric judge handles it (:mod:`grounding_eval.judge.render`): a content-derived nonce on its
delimiters, and :func:`~grounding_eval.judge.section_tags.neutralize` on every untrusted text (the answer,
the question, the source sections). The environment is the judge's (``StrictUndefined``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from grounding_eval.docs_qa.reply import grading_schema
from grounding_eval.docs_qa.rubric import DocsQaRubric
from grounding_eval.docs_qa.testset import Question
from grounding_eval.judge.render import (
    TEMPLATES_DIR,
    RenderedPrompt,
    answer_nonce,
    judge_environment,
    render_blocks,
)
from grounding_eval.judge.section_tags import neutralize

__all__ = ["TEMPLATE_NAME", "render_grader_prompt"]

TEMPLATE_NAME = "docs_qa.j2"

_APPLIES = {
    "required": "applies: score 1 or 0",
    "n/a": 'does not apply: write "n/a"',
    "grader": 'normally "n/a"; score it 1 or 0 only if the answer makes it relevant',
}


def render_grader_prompt(
    rubric: DocsQaRubric,
    question: Question,
    answer: str,
    sources: Sequence[tuple[str, str]],
    *,
    templates_dir: str | Path | None = None,
) -> RenderedPrompt:
    """Render the grader prompt for one answer.

    Args:
        rubric: the docs-QA rubric.
        question: the test-set record (question, type, reference answer, must-include list).
        answer: the answer under review (hostile).
        sources: ``(section id, section text)`` of the question's source sections.
        templates_dir: where ``docs_qa.j2`` lives (default ``rubrics/templates``).

    Raises:
        DataError: a template variable is undefined.
    """
    env = judge_environment(templates_dir if templates_dir is not None else TEMPLATES_DIR)
    oos = question.out_of_scope
    nonce = answer_nonce(answer)
    context = {
        "rubric": {
            "id": rubric.id,
            "version": rubric.version,
            "title": rubric.title,
            "prompt_version": rubric.prompt_version,
        },
        "criteria": [
            {
                "id": c.id,
                "name": c.name,
                "pass_rule": c.pass_rule,
                "fail_rule": c.fail_rule,
                "applies": _APPLIES[c.applies(out_of_scope=oos)],
            }
            for c in rubric.criteria
        ],
        "question_type": question.type,
        "question": neutralize(question.question),
        "reference_answer": neutralize(question.reference_answer),
        "must_include": [neutralize(p) for p in question.must_include],
        "sources": [{"id": neutralize(sid), "text": neutralize(text)} for sid, text in sources],
        "answer": neutralize(answer),
        "answer_id": nonce,
        "reply_schema": json.dumps(grading_schema(rubric, out_of_scope=oos), indent=2, ensure_ascii=False),
    }
    return render_blocks(
        env.get_template(TEMPLATE_NAME), context,
        prompt_version=rubric.prompt_version, rubric_id=rubric.id, rubric_version=rubric.version, answer_id=nonce,
    )  # fmt: skip
