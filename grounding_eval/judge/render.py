"""Rendering the judge prompt from a rubric, with the answer under review treated as hostile.

The prompt is ``rubrics/templates/judge.j2``, rendered with Jinja2 ``StrictUndefined`` so that a
missing variable (a Round 3 rubric rendered without its High-Risk item, a template typo) fails loudly
instead of leaving a blank in front of the judge.

The answer is model output and may try to talk to its grader: close the answer section early, open a
fake rubric, or print its own verdicts. Three defences, each cheap:

1. The answer sits between ``<answer_under_review id="N">`` and ``</answer_under_review id="N">``, where
   ``N`` is the first 12 hex digits of the answer's SHA-256. It is derived from the content (so the
   prompt is deterministic and caches well), and an answer cannot contain its own nonce: changing the
   answer to include it changes the nonce.
2. :func:`neutralize` rewrites every opening of one of the template's section tags (:data:`SECTION_TAGS`)
   inside untrusted text, ``<answer_under_review``, ``</criteria``, ``<source`` …, so that its ``<`` is
   written ``&lt;``. Look-alike angle brackets (fullwidth ``＜``, ``‹``, ``〈`` …), and invisible
   characters (a zero-width space inside ``answer_under_review``) or fullwidth letters (``ｓｏｕｒｃｅ``)
   in the tag name, are caught too. Nothing else in the text changes, and neutralizing twice changes
   nothing more.
3. The system prompt tells the judge that anything inside the answer (instructions, grades, JSON) is
   content to grade, not instructions.

The question, sources, jurisdiction and High-Risk item fields are neutralized the same way: the
High-Risk set is an adversarial red-team set, so its questions are untrusted too.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from grounding_eval.errors import DataError
from grounding_eval.judge.parse import reply_schema
from grounding_eval.judge.rubric import CRITERION_FILTERS, RUBRICS_DIR, Criterion, Rubric

__all__ = [
    "SECTION_TAGS",
    "TEMPLATES_DIR",
    "TEMPLATE_NAME",
    "RenderedPrompt",
    "answer_nonce",
    "judge_environment",
    "neutralize",
    "render_judge_prompt",
]

TEMPLATES_DIR = RUBRICS_DIR / "templates"
TEMPLATE_NAME = "judge.j2"

SECTION_TAGS: tuple[str, ...] = (
    "answer_under_review",
    "criteria",
    "criterion",
    "guidance",
    "jurisdiction",
    "reply_format",
    "rubric",
    "source",
    "sources",
    "user_question",
)
"""Every tag ``judge.j2`` uses as a section marker (a test keeps this list and the template in step)."""

# Characters that render as nothing (zero-width space/joiners, bidi controls, soft hyphen, BOM): a
# tag name with one inside still reads as the tag to a language model.
_INVISIBLE = "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]*"
# "<" and the characters a model may read as one.
_LESS_THAN = "[<\u2039\u2329\u27e8\u3008\ufe64\uff1c]"


_SLASH = "[/\uff0f]"


def _fullwidth(ch: str) -> str:
    # ASCII "!"…"~" have fullwidth twins at +0xFEE0 ("ｓｏｕｒｃｅ"), which a model reads as the same word.
    forms = {ch.lower(), ch.upper()}
    return "[" + "".join(re.escape(f) + re.escape(chr(ord(f) + 0xFEE0)) for f in sorted(forms)) + "]"


def _tag_pattern() -> re.Pattern[str]:
    names = sorted(SECTION_TAGS, key=len, reverse=True)
    spelled = "|".join(_INVISIBLE.join(_fullwidth(ch) for ch in name) for name in names)
    gap = rf"{_INVISIBLE}\s*{_INVISIBLE}"
    # The look-ahead keeps look-alike words such as "<sourcery>" or "<rubrics>" untouched.
    return re.compile(
        rf"{_LESS_THAN}(?P<rest>{gap}(?:{_SLASH}{gap})?(?:{spelled}))(?![a-z0-9_])", re.IGNORECASE
    )


_TAG_OPEN = _tag_pattern()


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


def neutralize(text: str) -> str:
    """Defuse the template's section tags inside untrusted text, changing nothing else.

    Every ``<`` (or look-alike) that opens or closes a tag named in :data:`SECTION_TAGS` becomes
    ``&lt;``; the rest of the text, including the tag name, is left as written, so the judge still
    sees exactly what the answer tried.
    """
    return _TAG_OPEN.sub(lambda m: "&lt;" + m.group("rest"), text)


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
    template = env.get_template(TEMPLATE_NAME)
    try:
        parts = {
            name: "".join(template.blocks[name](template.new_context(context))).strip() + "\n"
            for name in ("system", "user")
        }
    except jinja2.UndefinedError as exc:
        raise DataError(template.filename, f"template variable undefined: {exc.message}") from exc
    return RenderedPrompt(
        system=parts["system"],
        user=parts["user"],
        prompt_version=rubric.prompt_version,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        answer_id=nonce,
    )


def _criterion_context(
    env: jinja2.Environment, rubric: Rubric, criterion: Criterion, values: Mapping[str, Any]
) -> dict[str, str]:
    out = {"id": criterion.id, "polarity": criterion.polarity, "kind": criterion.kind}
    for key in ("question", "yes", "partial", "no"):
        text: str = getattr(criterion, key)
        if "{" in text:  # only templated text pays for compiling
            try:
                text = env.from_string(text).render(values)
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
