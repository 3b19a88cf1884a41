"""The docs-QA rubric as data: four pass/fail/n-a criteria, their applicability, the question types.

The judge's :class:`~grounding_eval.judge.rubric.Rubric` speaks Yes/Partial/No with polarities and
dimensions; the docs-QA seed scores 1/0/n/a with an applicability rule per question kind. That is a
different shape, so it has this small model of its own (``rubrics/docs_qa.yaml``), validated when it
is loaded: an unknown key, a missing field or a share table that does not add up to 100 is a one-line
:class:`~grounding_eval.errors.DataError` naming the file, never a surprise halfway through a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.resources import pack_root

__all__ = [
    "APPLIES",
    "RUBRIC_PATH",
    "Applies",
    "DocsQaCriterion",
    "DocsQaRubric",
    "QuestionType",
    "format_docs_qa_rubric",
    "load_docs_qa_rubric",
]

RUBRIC_PATH: Final = pack_root() / "rubrics" / "docs_qa.yaml"
"""The shipped rubric."""

Applies = Literal["required", "n/a", "grader"]
APPLIES: Final[tuple[Applies, ...]] = ("required", "n/a", "grader")
_PROVENANCE: Final = frozenset({"seed", "grounding-eval"})


@dataclass(frozen=True)
class DocsQaCriterion:
    """One criterion: its rules and when it applies.

    Attributes:
        id: The criterion id (``correct``, ``grounded``, …); named scores are ``docs_qa.<id>``.
        name: The seed's name ("Honest about gaps").
        pass_rule: What earns 1.
        fail_rule: What earns 0.
        in_scope: How it applies to in-scope questions (``required``, ``n/a`` or ``grader``).
        out_of_scope: How it applies to out-of-scope questions.
        provenance: field → ``seed`` for the seed's verbatim words (a field not named is ours).
    """

    id: str
    name: str
    pass_rule: str
    fail_rule: str
    in_scope: Applies
    out_of_scope: Applies
    provenance: Mapping[str, str]

    def applies(self, *, out_of_scope: bool) -> Applies:
        """How this criterion applies to a question of that kind."""
        return self.out_of_scope if out_of_scope else self.in_scope


@dataclass(frozen=True)
class QuestionType:
    """A question type of the test set and its target share (percent)."""

    id: str
    name: str
    share: float
    tests: str
    out_of_scope: bool


@dataclass(frozen=True)
class DocsQaRubric:
    """The loaded docs-QA rubric (see ``rubrics/docs_qa.yaml`` for every field's meaning)."""

    id: str
    version: str
    prompt_version: str
    title: str
    criteria: tuple[DocsQaCriterion, ...]
    scoring: tuple[tuple[str, str], ...]  # (text, provenance)
    pass_requires: tuple[str, ...]
    question_types: tuple[QuestionType, ...]
    type_mix_tolerance_points: float
    coverage_min_ratio: float
    coverage_min_word_share: float
    decisions: tuple[tuple[str, str], ...]  # (id, text)
    path: str

    @property
    def ids(self) -> tuple[str, ...]:
        """Criterion ids in the rubric's order."""
        return tuple(c.id for c in self.criteria)

    def question_type(self, type_id: str) -> QuestionType:
        """The question type ``type_id``.

        Raises:
            KeyError: not a type of this rubric.
        """
        for qt in self.question_types:
            if qt.id == type_id:
                return qt
        raise KeyError(type_id)


_TOP: Final = frozenset({
    "id", "version", "prompt_version", "title", "source", "provenance", "verdicts", "criteria", "scoring",
    "pass_requires", "question_types", "type_mix_tolerance_points", "coverage", "decisions",
})  # fmt: skip
_CRITERION: Final = frozenset({"id", "name", "pass_rule", "fail_rule", "provenance", "applies"})
_TYPE: Final = frozenset({"id", "name", "share", "tests", "out_of_scope"})


def load_docs_qa_rubric(path: str | Path = RUBRIC_PATH) -> DocsQaRubric:
    """Load and validate a docs-QA rubric file.

    Raises:
        DataError: one line naming the file and the problem.
    """
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise DataError(path, "expected a YAML mapping (a docs-QA rubric)")
    _no_unknown(path, "the rubric", data, _TOP)
    criteria = tuple(_criterion(path, i, e) for i, e in enumerate(_list(path, data, "criteria"), 1))
    ids = [c.id for c in criteria]
    if len(set(ids)) != len(ids):
        raise DataError(path, "criteria: a criterion id appears twice")
    requires = tuple(str(x) for x in _list(path, data, "pass_requires"))
    missing = [r for r in requires if r not in ids]
    if missing:
        raise DataError(path, f"pass_requires names unknown criteria: {', '.join(missing)}")
    for r in requires:
        c = criteria[ids.index(r)]
        if c.in_scope != "required" or c.out_of_scope != "required":
            raise DataError(path, f"pass_requires: criterion {r!r} must be required for every question")
    types = tuple(_question_type(path, i, e) for i, e in enumerate(_list(path, data, "question_types"), 1))
    if abs(sum(t.share for t in types) - 100.0) > 1e-9:
        raise DataError(path, "question_types: the shares must add up to 100")
    coverage = data.get("coverage")
    if not isinstance(coverage, dict) or set(coverage) != {"min_ratio", "min_word_share"}:
        raise DataError(path, "coverage: expected a mapping with min_ratio and min_word_share")
    scoring = []
    for i, entry in enumerate(_list(path, data, "scoring"), 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise DataError(path, f"scoring entry {i}: expected a mapping with text")
        scoring.append((entry["text"], _mark(path, f"scoring entry {i}", entry.get("provenance"))))
    decisions = []
    for i, entry in enumerate(_list(path, data, "decisions"), 1):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("id", "text")):
            raise DataError(path, f"decisions entry {i}: expected a mapping with id and text")
        if not entry["text"].startswith("grounding-eval decision:"):
            raise DataError(path, f"decision {entry['id']!r}: its text must start 'grounding-eval decision:'")
        decisions.append((entry["id"], " ".join(entry["text"].split())))
    return DocsQaRubric(
        id=_text(path, data, "id"),
        version=_text(path, data, "version"),
        prompt_version=_text(path, data, "prompt_version"),
        title=_text(path, data, "title"),
        criteria=criteria,
        scoring=tuple(scoring),
        pass_requires=requires,
        question_types=types,
        type_mix_tolerance_points=_number(
            path, data.get("type_mix_tolerance_points"), "type_mix_tolerance_points"
        ),
        coverage_min_ratio=_number(path, coverage["min_ratio"], "coverage.min_ratio"),
        coverage_min_word_share=_number(path, coverage["min_word_share"], "coverage.min_word_share"),
        decisions=tuple(decisions),
        path=str(path),
    )


def _criterion(path: str | Path, index: int, entry: Any) -> DocsQaCriterion:
    if not isinstance(entry, dict):
        raise DataError(path, f"criterion {index}: expected a mapping")
    _no_unknown(path, f"criterion {index}", entry, _CRITERION)
    where = f"criterion {entry.get('id', index)}"
    applies = entry.get("applies")
    if not isinstance(applies, dict) or set(applies) != {"in_scope", "out_of_scope"}:
        raise DataError(path, f"{where}: applies must be a mapping with in_scope and out_of_scope")
    for key, value in applies.items():
        if value not in APPLIES:
            raise DataError(
                path, f"{where}: applies.{key} must be one of {', '.join(APPLIES)}, got {value!r}"
            )
    marks = entry.get("provenance") or {}
    if not isinstance(marks, dict):
        raise DataError(path, f"{where}: provenance must be a mapping of field to seed")
    provenance = {str(k): _mark(path, where, v) for k, v in marks.items()}
    bad = set(provenance) - {"name", "pass_rule", "fail_rule"}
    if bad:
        raise DataError(path, f"{where}: provenance names unknown field(s) {', '.join(sorted(bad))}")
    return DocsQaCriterion(
        id=_text(path, entry, "id", where=where),
        name=_text(path, entry, "name", where=where),
        pass_rule=_text(path, entry, "pass_rule", where=where),
        fail_rule=_text(path, entry, "fail_rule", where=where),
        in_scope=applies["in_scope"],
        out_of_scope=applies["out_of_scope"],
        provenance=provenance,
    )


def _question_type(path: str | Path, index: int, entry: Any) -> QuestionType:
    if not isinstance(entry, dict):
        raise DataError(path, f"question type {index}: expected a mapping")
    _no_unknown(path, f"question type {index}", entry, _TYPE)
    where = f"question type {entry.get('id', index)}"
    if not isinstance(entry.get("out_of_scope"), bool):
        raise DataError(path, f"{where}: out_of_scope must be true or false")
    return QuestionType(
        id=_text(path, entry, "id", where=where),
        name=_text(path, entry, "name", where=where),
        share=_number(path, entry.get("share"), f"{where}: share"),
        tests=_text(path, entry, "tests", where=where),
        out_of_scope=entry["out_of_scope"],
    )


def _mark(path: str | Path, where: str, value: Any) -> str:
    if value not in _PROVENANCE:
        raise DataError(path, f"{where}: provenance must be seed or grounding-eval, got {value!r}")
    return str(value)


def _text(path: str | Path, data: Mapping[str, Any], key: str, *, where: str = "the rubric") -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, f"{where}: field {key!r} is required and must be text")
    return " ".join(value.split())


def _number(path: str | Path, value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise DataError(path, f"{what} must be a number ≥ 0, got {value!r}")
    return float(value)


def _list(path: str | Path, data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise DataError(path, f"field {key!r} must be a non-empty list")
    return value


def _no_unknown(path: str | Path, where: str, entry: Mapping[Any, Any], allowed: frozenset[str]) -> None:
    unknown = set(map(str, entry)) - allowed
    if unknown:
        raise DataError(path, f"{where}: unknown field(s) {', '.join(sorted(unknown))}")


def format_docs_qa_rubric(rubric: DocsQaRubric) -> str:
    """The rubric as text for a person: every text marked ``[seed]`` (verbatim) or ``[grounding-eval]``."""

    def mark(owner: str) -> str:
        return "[seed]" if owner == "seed" else "[grounding-eval]"

    lines = [
        f"{rubric.title}  (id {rubric.id}, version {rubric.version}, prompt {rubric.prompt_version})",
        "",
    ]
    lines.append("Criteria (1 pass / 0 fail / n/a):")
    for c in rubric.criteria:
        owner = dict(c.provenance)
        lines.append(f"  {c.id}: {c.name} {mark(owner.get('name', ''))}")
        lines.append(f"    pass (1): {c.pass_rule} {mark(owner.get('pass_rule', ''))}")
        lines.append(f"    fail (0): {c.fail_rule} {mark(owner.get('fail_rule', ''))}")
        lines.append(f"    applies: in scope {c.in_scope}, out of scope {c.out_of_scope} [grounding-eval]")
    lines += ["", "Scoring:"]
    lines += [f"  {text} {mark(owner)}" for text, owner in rubric.scoring]
    lines.append(f"  pass requires: {', '.join(rubric.pass_requires)} = 1 [seed]")
    lines += ["", "Question types (share of the test set) [seed]:"]
    lines += [f"  {t.id}: {t.name}, {t.share:g} %, tests {t.tests}" for t in rubric.question_types]
    lines += ["", "Decisions:"]
    lines += [f"  {d}: {text}" for d, text in rubric.decisions]
    return "\n".join(lines) + "\n"
