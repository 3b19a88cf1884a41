"""Rendering the judge prompt from a rubric, with the answer under review treated as hostile.

The prompt is ``rubrics/templates/judge.j2``, rendered with Jinja2 ``StrictUndefined`` so that a
missing variable (a Round 3 rubric rendered without its High-Risk item, a template typo) fails loudly
instead of leaving a blank in front of the judge.

The answer is model output and may try to talk to its grader: close its section early, open a fake
rubric, print its own verdicts. Three cheap defences (docs/explanation/security.md#the-answer-is-hostile):
its section's tags carry a nonce from its own SHA-256, which no answer can contain;
:func:`~grounding_eval.judge.section_tags.neutralize` defuses every opening of a section tag in untrusted
text — question, sources, jurisdiction and High-Risk fields too; and the system prompt says the answer is
content to grade, not instructions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2

from grounding_eval.errors import DataError
from grounding_eval.judge.parse import reply_schema
from grounding_eval.judge.rubric import CRITERION_FILTERS, RUBRICS_DIR, Criterion, Rubric
from grounding_eval.judge.section_tags import neutralize

__all__ = [
    "TEMPLATES_DIR",
    "TEMPLATE_NAME",
    "RenderedPrompt",
    "answer_nonce",
    "judge_environment",
    "render_blocks",
    "render_judge_prompt",
]

TEMPLATES_DIR = RUBRICS_DIR / "templates"
TEMPLATE_NAME = "judge.j2"


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered judge prompt and the versions that produced it (kept with every judgment).

    Attributes:
        system: the system message.
        user: the user message (rubric, context, the answer under review, the reply schema).
        prompt_version: the rubric's ``prompt_version``.
        rubric_id: the rubric's ``id``.
        rubric_version: the rubric's ``version``.
        answer_id: the content-derived nonce on the answer's delimiters.
    """

    system: str
    user: str
    prompt_version: str
    rubric_id: str
    rubric_version: str
    answer_id: str = ""

    def messages(self) -> list[dict[str, str]]:
        """The prompt as chat messages (system, then user)."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


def answer_nonce(answer: str) -> str:
    """The answer delimiters' id: the first 12 hex digits of the answer's SHA-256."""
    return hashlib.sha256(answer.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def judge_environment(templates_dir: str | Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment judge templates render in (``StrictUndefined``, no autoescaping)."""
    return _environment(str(Path(templates_dir) if templates_dir is not None else TEMPLATES_DIR))


@cache
def _environment(templates_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir),
        undefined=jinja2.StrictUndefined,
        # The prompt is plain text for a model, not HTML: escaping would turn the answer's "&" into
        # "&amp;" and change what is graded. Untrusted text is defused by neutralize() instead.
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(CRITERION_FILTERS)
    return env


def render_judge_prompt(
    rubric: Rubric,
    *,
    question: str,
    answer: str,
    jurisdiction: str,
    sources: Sequence[str] = (),
    item: Mapping[str, Any] | None = None,
    templates_dir: str | Path | None = None,
) -> RenderedPrompt:
    """Render the judge prompt for one answer.

    Args:
        rubric: the loaded rubric.
        question: the user's question the answer responds to.
        answer: the answer under review (hostile: delimited and neutralized).
        jurisdiction: the user's jurisdiction as shown to the judge (e.g. ``IL`` or ``Illinois``).
        sources: the source texts the answering model was given (directory blocks or articles); a
            single string counts as one source.
        item: the High-Risk item's fields (``dataclasses.asdict(item)`` works), required when the rubric
            lists ``item_variables``.
        templates_dir: where ``judge.j2`` lives (default ``rubrics/templates``).

    Raises:
        DataError: a template variable is undefined (for example a Round 3 rubric rendered without its
            High-Risk item, or an item missing ``failure_modes``); the Jinja2 error is the cause.
    """
    env = judge_environment(templates_dir)
    if isinstance(sources, str):
        sources = (sources,)
    values = {k: _neutralize_value(v) for k, v in (item or {}).items() if k in rubric.item_variables}
    criteria = [_criterion_context(env, rubric, c, values) for c in rubric.criteria]
    nonce = answer_nonce(answer)
    context = {
        "rubric": {
            "id": rubric.id,
            "version": rubric.version,
            "title": rubric.title,
            "prompt_version": rubric.prompt_version,
        },
        "guidance": rubric.guidance,
        "criteria": criteria,
        "has_negative": any(c.negative for c in rubric.criteria),
        "has_safety": any(c.kind == "safety" for c in rubric.criteria),
        "jurisdiction": neutralize(jurisdiction),
        "question": neutralize(question),
        "sources": [neutralize(s) for s in sources],
        "answer": neutralize(answer),
        "answer_id": nonce,
        "reply_schema": json.dumps(reply_schema(rubric), indent=2, ensure_ascii=False),
    }
    return render_blocks(
        env.get_template(TEMPLATE_NAME), context,
        prompt_version=rubric.prompt_version, rubric_id=rubric.id, rubric_version=rubric.version, answer_id=nonce,
    )  # fmt: skip


def render_blocks(
    template: jinja2.Template, context: Mapping[str, Any], *, prompt_version: str, rubric_id: str,
    rubric_version: str, answer_id: str,
) -> RenderedPrompt:  # fmt: skip
    """A judge template's ``system`` and ``user`` blocks rendered with ``context`` (StrictUndefined).

    Raises:
        DataError: the template uses a variable the context does not have (one line naming the file).
    """
    try:
        parts = {
            name: "".join(template.blocks[name](template.new_context(dict(context)))).strip() + "\n"
            for name in ("system", "user")
        }
    except jinja2.UndefinedError as exc:
        raise DataError(template.filename, f"template variable undefined: {exc.message}") from exc
    return RenderedPrompt(
        system=parts["system"],
        user=parts["user"],
        prompt_version=prompt_version,
        rubric_id=rubric_id,
        rubric_version=rubric_version,
        answer_id=answer_id,
    )


@lru_cache(maxsize=1024)
def _compiled(env: jinja2.Environment, text: str) -> jinja2.Template:
    """A criterion's templated text compiled once per environment (rendering stays per call)."""
    return env.from_string(text)


def _criterion_context(
    env: jinja2.Environment, rubric: Rubric, criterion: Criterion, values: Mapping[str, Any]
) -> dict[str, str]:
    out = {"id": criterion.id, "polarity": criterion.polarity, "kind": criterion.kind}
    for key in ("question", "yes", "partial", "no"):
        text: str = getattr(criterion, key)
        if "{" in text:  # only templated text pays for compiling
            try:
                text = _compiled(env, text).render(values)
            except jinja2.UndefinedError as exc:
                raise DataError(
                    rubric.path,
                    f"criterion {criterion.id!r}: {key}: {exc.message}"
                    " (pass the High-Risk item's fields as item=…)",
                ) from exc
        out[key] = text.strip()
    return out


def _neutralize_value(value: Any) -> Any:
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, Mapping):
        return {neutralize(str(k)): _neutralize_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_neutralize_value(v) for v in value]
    return value
