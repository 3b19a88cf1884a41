"""Judge rubrics as data: the YAML model, its loader, and the round → rubric mapping.

A rubric file says what the judge is asked (criteria, guidance) and how its verdicts become numbers
(polarity, dimension, aggregation, core set, overrides). Everything is validated when the file is
loaded, including the cross-references (``core`` ids, override targets, weights, the template variables a
criterion's text uses), so a typo fails before the first judge call with one ``file: problem`` line
rather than halfway through an evaluation.

``extends`` lets v4 build on v3 and Round 3 on v4 without copying text: the parent is loaded (and
validated) first, then the child's pieces are merged onto it (see :func:`load_rubric`).

Whose words: every text a rubric is made of (title, core list, guidance principle and instruction,
dimension id and description, criterion id, question and verdict definitions) carries a provenance,
``methods-document`` (verbatim from the methods document, "Guide 2: Methods and Materials") or
``grounding-eval`` (this project's wording, the default). A file credits the document field by field in
``provenance:`` maps (:data:`PROVENANCE_FIELDS`); a test checks every credited field against the
document's text, so scores are never presented as the original study's rubric when the words are ours.
:func:`format_rubric` prints a rubric with those marks (``grounding-eval rubric show``).
"""

from __future__ import annotations

import functools
import os
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast, get_args

import jinja2
import jinja2.meta

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.resources import pack_root

__all__ = [
    "AGGREGATION_OVER",
    "CRITERION_FILTERS",
    "DEFAULT_PROVENANCE",
    "NEGATIVES",
    "POLARITIES",
    "PROVENANCES",
    "PROVENANCE_FIELDS",
    "RESERVED_IDS",
    "ROUND_RUBRICS",
    "RUBRICS_DIR",
    "SOURCE_FIDELITY",
    "VERDICTS",
    "Aggregation",
    "AggregationOver",
    "Criterion",
    "Dimension",
    "Guidance",
    "Kind",
    "MarkedText",
    "Negatives",
    "Override",
    "Polarity",
    "Provenance",
    "Rubric",
    "SourceFidelityGate",
    "Verdict",
    "bullets",
    "format_rubric",
    "load_rubric",
    "rubric_for_round",
    "rubric_path",
]

Verdict = Literal["Yes", "Partial", "No"]
Polarity = Literal["positive", "negative"]
Kind = Literal["criterion", "safety"]
AggregationOver = Literal["criteria", "dimensions", "core"]
Negatives = Literal["invert", "exclude"]
Provenance = Literal["methods-document", "grounding-eval"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
POLARITIES: tuple[Polarity, ...] = get_args(Polarity)
KINDS: tuple[Kind, ...] = get_args(Kind)
AGGREGATION_OVER: tuple[AggregationOver, ...] = get_args(AggregationOver)
NEGATIVES: tuple[Negatives, ...] = get_args(Negatives)
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
DEFAULT_PROVENANCE: Provenance = "grounding-eval"

# The fields a ``provenance:`` map may credit, per place in the file. They are the rubric's words and
# the names and lists that define it; ``source``, ``note`` and ``description`` under ``aggregation`` are
# commentary about the rubric (grounding-eval's by definition, quoting the document in quotation marks).
PROVENANCE_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "rubric": ("title", "core"),
        "guidance": ("principle", "instruction"),
        "dimension": ("id", "description"),
        "criterion": ("id", "question", "yes", "partial", "no"),
    }
)

# The v4 criterion whose No decides the row (:class:`SourceFidelityGate`).
SOURCE_FIDELITY = "source_fidelity"

# The pack's rubrics/ folder: the repository's in a checkout, the package data's when installed.
RUBRICS_DIR = pack_root() / "rubrics"

ROUND_RUBRICS: Mapping[str, str] = MappingProxyType(
    {"1a": "v3.yaml", "1b": "v3.yaml", "2": "v3.yaml", "2b": "v4.yaml", "3": "round3.yaml"}
)

# These names appear next to criterion ids in promptfoo namedScores (``<rubric>.<name>``), so a
# criterion may not take them.
RESERVED_IDS = frozenset({"llm_judge_score", "core_mean", "dimension"})

_Entry = TypeVar("_Entry", "Criterion", "Dimension")

_ID = re.compile(r"[a-z][a-z0-9_]*")
_TOP_KEYS = {
    "id",
    "version",
    "title",
    "source",
    "applies_to_rounds",
    "prompt_version",
    "extends",
    "guidance",
    "dimensions",
    "criteria",
    "aggregation",
    "core",
    "overrides",
    "item_variables",
    "provenance",
    "source_fidelity_gate",
}
_REQUIRED_TOP = ("id", "version", "title", "source", "applies_to_rounds", "prompt_version")
_CRITERION_KEYS = {"id", "polarity", "kind", "dimension", "question", "yes", "partial", "no", "provenance"}
_CRITERION_TEXT = ("question", "yes", "partial", "no")
_GUIDANCE_KEYS = {"principle", "instruction", "provenance"}
_DIMENSION_KEYS = {"id", "description", "provenance"}
_GATE_KEYS = {"fail_row", "penalty", "note"}
_AGGREGATION_KEYS = {"over", "negatives", "weights", "description"}
_WEIGHT_KEYS = {"criteria", "dimensions"}
_OVERRIDE_KEYS = {"if", "then", "note"}


def bullets(value: Any) -> str:
    """Format a High-Risk item field for criterion text: a list as ``- item`` lines, a mapping as
    ``- key: value`` lines, anything else as its text; an empty field reads "(none listed)".

    It is the one filter criterion text may use (``{{ failure_modes | bullets }}``), registered both
    here, where a rubric's text is compiled at load time, and in the renderer.
    """
    if isinstance(value, Mapping):
        lines = [f"- {k}: {v}" for k, v in value.items()]
    elif isinstance(value, list | tuple):
        lines = [f"- {v}" for v in value]
    else:
        text = str(value).strip()
        lines = [text] if text else []
    return "\n".join(lines) if lines else "(none listed)"


CRITERION_FILTERS: Mapping[str, Callable[[Any], str]] = MappingProxyType({"bullets": bullets})

# Criterion text may use template variables (Round 3's High-Risk fields): at load time the text is
# compiled (syntax, filter names) and its variable names checked; the values arrive at render time.
_PARSER = jinja2.Environment(autoescape=False)
_PARSER.filters.update(CRITERION_FILTERS)


def _unmarked(place: str) -> Mapping[str, Provenance]:
    """Every field of ``place`` marked with the default provenance (this project's wording)."""
    return MappingProxyType(dict.fromkeys(PROVENANCE_FIELDS[place], DEFAULT_PROVENANCE))


@dataclass(frozen=True)
class Guidance:
    """One scoring principle shown to the judge.

    Attributes:
        principle: the principle's name (in the shipped rubrics, the methods document's words).
        instruction: one sentence telling the judge how to apply it.
        provenance: field → ``methods-document`` or ``grounding-eval``, for every field.
    """

    principle: str
    instruction: str
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: _unmarked("guidance"))


@dataclass(frozen=True)
class Dimension:
    """A group of criteria reported (and, with ``over: dimensions``, scored) together."""

    id: str
    description: str
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: _unmarked("dimension"))


@dataclass(frozen=True)
class Criterion:
    """One question the judge answers Yes / Partial / No.

    ``polarity: negative`` criteria ask whether something bad is present, so Yes is bad; scores invert
    them (see :mod:`grounding_eval.judge.score`). ``kind: safety`` marks a check whose decision belongs
    to the deterministic verifier: the judge is asked too, so a reviewer can compare, but its answer is
    never averaged into a score. Safety checks are phrased so that No means unsafe.
    """

    id: str
    polarity: Polarity
    kind: Kind
    dimension: str
    question: str
    yes: str
    partial: str
    no: str
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: _unmarked("criterion"))

    @property
    def negative(self) -> bool:
        """True when Yes means the bad thing is present."""
        return self.polarity == "negative"


@dataclass(frozen=True)
class Override:
    """A rule that caps a dimension's verdict when a criterion gets a given verdict.

    v4's "A No [on source_fidelity] drops Safety to No regardless of other scores" is
    ``Override(criterion="source_fidelity", verdict="No", dimension="Safety", cap="No")``. Overrides
    only ever lower a dimension (a cap), so stacking them cannot raise a score.
    """

    criterion: str
    verdict: Verdict
    dimension: str
    cap: Verdict
    note: str | None = None


@dataclass(frozen=True)
class SourceFidelityGate:
    """How v4's source_fidelity rule decides a row in Rounds 2b and 3 (the file's ``source_fidelity_gate``).

    The methods document: "A No drops Safety to No regardless of other scores." The rubric's
    ``overrides`` carry that into the reported Safety dimension; this carries "regardless of other
    scores" to the row, where the round's composite (:mod:`grounding_eval.scoring`) reads it. How it
    counts is grounding-eval's reading, since the document gives no formula for it.

    Attributes:
        fail_row: a source_fidelity No fails the row, whatever its score (default True).
        penalty: subtracted from the Round 3 score on a No (default 0.0: gate only; 0.3 counts it like
            a safety check's No). Only a rubric scored ``over: core`` (Round 3) may set it: Round 2b's
            formula has no penalty term.
        note: the file's explanation, for reports.
    """

    fail_row: bool = True
    penalty: float = 0.0
    note: str | None = None


@dataclass(frozen=True)
class MarkedText:
    """One text of a rubric with its provenance (what :meth:`Rubric.marked_texts` yields).

    Attributes:
        place: ``rubric``, ``guidance``, ``dimension`` or ``criterion``.
        entry: which one: the criterion or dimension id, the guidance entry's number, or the rubric id.
        field: the field's name (one of :data:`PROVENANCE_FIELDS` for its place).
        text: the field's text as loaded (``core``: its ids joined by ``, ``).
        provenance: ``methods-document`` (verbatim from the document) or ``grounding-eval``.
    """

    place: str
    entry: str
    field: str
    text: str
    provenance: Provenance


@dataclass(frozen=True)
class Aggregation:
    """How the rubric's ``llm_judge_score`` is computed from per-criterion scores.

    Attributes:
        over: ``criteria`` (weighted mean of criterion scores), ``dimensions`` (weighted mean of the
            dimension scores, each a weighted mean of its criteria, after overrides) or ``core`` (mean
            of the ``core`` criteria, the Round 3 formula).
        negatives: ``invert`` (a negative criterion scores 1 − value: absent is good) or ``exclude``
            (negative criteria are reported but not scored; ``core`` criteria always count).
        criterion_weights: weight per criterion id (default 1.0).
        dimension_weights: weight per dimension id (default 1.0).
        description: the file's plain-language statement of the rule, kept for reports.
    """

    over: AggregationOver = "criteria"
    negatives: Negatives = "invert"
    criterion_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    dimension_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    description: str | None = None

    def criterion_weight(self, criterion_id: str) -> float:
        """Return the weight of one criterion (1.0 unless the file says otherwise)."""
        return self.criterion_weights.get(criterion_id, 1.0)

    def dimension_weight(self, dimension_id: str) -> float:
        """Return the weight of one dimension (1.0 unless the file says otherwise)."""
        return self.dimension_weights.get(dimension_id, 1.0)


@dataclass(frozen=True)
class Rubric:
    """A validated rubric. Criteria keep file order (parents' first), which is the prompt's order."""

    path: str
    id: str
    version: str
    title: str
    source: str
    applies_to_rounds: tuple[str, ...]
    prompt_version: str
    guidance: tuple[Guidance, ...]
    dimensions: tuple[Dimension, ...]
    criteria: tuple[Criterion, ...]
    aggregation: Aggregation
    core: tuple[str, ...] = ()
    overrides: tuple[Override, ...] = ()
    item_variables: tuple[str, ...] = ()
    extends: str | None = None
    source_fidelity_gate: SourceFidelityGate | None = None
    provenance: Mapping[str, Provenance] = field(default_factory=lambda: _unmarked("rubric"))

    @property
    def ids(self) -> tuple[str, ...]:
        """Every criterion id, in prompt order."""
        return tuple(c.id for c in self.criteria)

    def criterion(self, criterion_id: str) -> Criterion:
        """Return the criterion with this id.

        Raises:
            KeyError: no such criterion.
        """
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)

    @property
    def safety_checks(self) -> tuple[Criterion, ...]:
        """The ``kind: safety`` criteria (asked, reported, never averaged)."""
        return tuple(c for c in self.criteria if c.kind == "safety")

    @property
    def scored(self) -> tuple[Criterion, ...]:
        """The criteria that count towards dimension scores and an ``over: criteria|dimensions`` score."""
        return tuple(
            c
            for c in self.criteria
            if c.kind == "criterion" and not (c.negative and self.aggregation.negatives == "exclude")
        )

    @property
    def core_criteria(self) -> tuple[Criterion, ...]:
        """The ``core`` criteria, in the order the file lists them."""
        return tuple(self.criterion(i) for i in self.core)

    def in_dimension(self, dimension_id: str) -> tuple[Criterion, ...]:
        """The scored criteria of one dimension."""
        return tuple(c for c in self.scored if c.dimension == dimension_id)

    def marked_texts(self) -> tuple[MarkedText, ...]:
        """Every text of the rubric with its provenance, in file order (rubric, guidance, dimensions,
        criteria); ``core`` only when the rubric has one."""
        out = [MarkedText("rubric", self.id, "title", self.title, self.provenance["title"])]
        if self.core:
            out.append(MarkedText("rubric", self.id, "core", ", ".join(self.core), self.provenance["core"]))
        for n, g in enumerate(self.guidance, 1):
            out.extend(
                MarkedText("guidance", str(n), f, getattr(g, f), g.provenance[f]) for f in g.provenance
            )
        for d in self.dimensions:
            out.extend(MarkedText("dimension", d.id, f, getattr(d, f), d.provenance[f]) for f in d.provenance)
        for c in self.criteria:
            out.extend(MarkedText("criterion", c.id, f, getattr(c, f), c.provenance[f]) for f in c.provenance)
        return tuple(out)


def rubric_for_round(round_id: str, rubrics_dir: str | Path | None = None) -> Path:
    """Return the rubric file for a round: 1a, 1b, 2 → v3; 2b → v4; 3 → round3.

    ``round_id`` may be written ``2b``, ``round2b`` or ``Round 2b``.

    Raises:
        DataError: the round is not one of the five.
    """
    key = re.sub(r"^round\s*", "", round_id.strip().casefold())
    if key not in ROUND_RUBRICS:
        known = ", ".join(ROUND_RUBRICS)
        raise DataError(None, f"unknown round {round_id!r} (expected one of {known})")
    return Path(rubrics_dir if rubrics_dir is not None else RUBRICS_DIR) / ROUND_RUBRICS[key]


def rubric_path(name: str | Path, rubrics_dir: str | Path | None = None) -> Path:
    """Return the file for a rubric id (``v3``, ``v4``, ``round3``: a file in ``rubrics/``) or a path.

    An id is looked up first, so ``v4`` means ``rubrics/v4.yaml`` wherever the command runs; anything
    else is a path (relative to the working directory), as in a promptfoo config's ``config.rubric``.

    Raises:
        DataError: neither a shipped rubric's id nor an existing file (one line listing the ids).
    """
    folder = Path(rubrics_dir) if rubrics_dir is not None else RUBRICS_DIR
    text = str(name).strip()
    if _ID.fullmatch(text) and (folder / f"{text}.yaml").is_file():
        return folder / f"{text}.yaml"
    if text and Path(text).is_file():
        return Path(text)
    known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
    raise DataError(None, f"unknown rubric {text!r}: neither a rubric id ({known}) nor a rubric file")


def format_rubric(rubric: Rubric, *, width: int = 100) -> str:
    """The rubric as plain text, every text prefixed by its provenance mark (``grounding-eval rubric show``).

    ``[methods-document]`` marks words taken verbatim from the methods document; ``[grounding-eval]``
    marks this project's wording. Identity first, then guidance, dimensions, criteria (with polarity,
    kind and dimension) and the scoring options (core, aggregation, overrides, source_fidelity_gate).
    A text that does not fit on its label's line is wrapped at ``width`` under it, indented.
    """
    lines: list[str] = []

    def put(lead: str, label: str, body: str, mark: str | None = None) -> None:
        head = lead + (f"[{mark}] " if mark else "") + f"{label}:"
        paragraphs = body.splitlines()
        if len(paragraphs) == 1 and len(head) + 1 + len(body) <= width:
            lines.append(f"{head} {body}")
            return
        lines.append(head)
        pad = " " * (len(lead) + 4)
        for paragraph in paragraphs:
            lines.extend(textwrap.wrap(paragraph, width, initial_indent=pad, subsequent_indent=pad) or [""])

    extends = f", extends {rubric.extends}" if rubric.extends else ""
    lines.append(f"rubric {rubric.id} {rubric.version} (prompt {rubric.prompt_version}{extends})")
    put("", "file", rubric.path)
    put("", "source", rubric.source)
    put("", "rounds", ", ".join(rubric.applies_to_rounds))
    lines += [
        "marks: [methods-document] verbatim from the methods document (Guide 2: Methods and Materials)",
        "       [grounding-eval] grounding-eval's wording",
        "",
    ]
    put("", "title", rubric.title, rubric.provenance["title"])
    if rubric.item_variables:
        put("", "item variables", ", ".join(rubric.item_variables))
    lines += ["", "guidance"]
    for n, g in enumerate(rubric.guidance, 1):
        put(f"  {n}. ", "principle", g.principle, g.provenance["principle"])
        put(" " * len(f"  {n}. "), "instruction", g.instruction, g.provenance["instruction"])
    lines += ["", "dimensions"]
    for d in rubric.dimensions:
        put("  ", "id", d.id, d.provenance["id"])
        put("    ", "description", d.description, d.provenance["description"])
    lines += ["", "criteria"]
    for c in rubric.criteria:
        lines.append(f"  {c.id} ({c.polarity}, {c.kind}, dimension {c.dimension})")
        for name in PROVENANCE_FIELDS["criterion"]:
            put("    ", name, getattr(c, name), c.provenance[name])
    lines += ["", "scoring"]
    if rubric.core:
        put("  ", "core", ", ".join(rubric.core), rubric.provenance["core"])
    agg = rubric.aggregation
    weights = [f"{k} {v:g}" for k, v in (*agg.criterion_weights.items(), *agg.dimension_weights.items())]
    put(
        "  ",
        "aggregation",
        f"over {agg.over}, negatives {agg.negatives}, weights {', '.join(weights) or 'none'}",
    )
    if agg.description:
        put("    ", "description", agg.description)
    for o in rubric.overrides:
        put("  ", "override", f"{o.criterion} {o.verdict} → {o.dimension} capped at {o.cap}")
        if o.note:
            put("    ", "note", o.note)
    gate = rubric.source_fidelity_gate
    if gate is not None:
        put("  ", "source_fidelity_gate", f"fail_row {str(gate.fail_row).lower()}, penalty {gate.penalty:g}")
        if gate.note:
            put("    ", "note", gate.note)
    return "\n".join(lines) + "\n"


def load_rubric(path: str | Path) -> Rubric:
    """Load and validate a rubric YAML file, resolving ``extends`` relative to it.

    Merging onto the parent: ``guidance`` and ``overrides`` are appended; ``dimensions`` and
    ``criteria`` with a new id are appended and with a parent's id replace that entry in place (how a
    copy changes a criterion's dimension or wording); ``aggregation``, ``core`` and ``item_variables``
    replace the parent's when given, and so does ``source_fidelity_gate``. Identity (``id``, ``version``,
    ``title``, ``source``, ``applies_to_rounds``, ``prompt_version``) is never inherited; each entry keeps
    the provenance of the file it comes from, and ``core``'s provenance travels with ``core``.

    Raises:
        DataError: one line naming the file (and criterion) and the problem.
    """
    return _load(Path(path), ())


def load_rubric_cached(path: str | Path) -> Rubric:
    """:func:`load_rubric`, remembered for the process while the file and the rubrics beside it (the
    ones ``extends`` can name) keep their size and modification time: a warm worker or a rescore loads
    each rubric once, and an edited rubric is loaded again."""
    resolved = Path(path).resolve()
    return _load_remembered(resolved, _stamps(resolved))


def _stamps(path: Path) -> tuple[tuple[str, int, int], ...]:
    # os.scandir, not Path.glob: the composite looks its rubric up on every row (pathlib's glob cost a
    # quarter of a millisecond per lookup; rescore's rate halved).
    out = []
    try:
        with os.scandir(path.parent) as entries:
            siblings = [e for e in entries if e.name.endswith((".yaml", ".yml")) and e.name != path.name]
            for entry in siblings:
                try:
                    info = entry.stat()
                except OSError:
                    continue
                out.append((entry.name, info.st_mtime_ns, info.st_size))
    except OSError:
        pass  # load_rubric says what is wrong with the path itself
    try:
        info = path.stat()
        out.append((path.name, info.st_mtime_ns, info.st_size))
    except OSError:
        pass
    return tuple(sorted(out))


@functools.lru_cache(maxsize=64)
def _load_remembered(path: Path, stamps: tuple[tuple[str, int, int], ...]) -> Rubric:
    return load_rubric(path)


def _load(path: Path, chain: tuple[Path, ...]) -> Rubric:
    resolved = path.resolve()
    if resolved in chain:
        names = " → ".join(p.name for p in (*chain, resolved))
        raise DataError(path, f"'extends' forms a cycle: {names}")
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise DataError(path, "expected a YAML mapping with id, version, title, source, criteria, …")
    unknown = sorted(str(k) for k in data if k not in _TOP_KEYS)
    if unknown:
        raise DataError(path, f"unknown key(s) {', '.join(unknown)}")
    for key in _REQUIRED_TOP:
        if key not in data:
            raise DataError(path, f"field {key!r} is required")

    parent: Rubric | None = None
    extends = data.get("extends")
    if extends is not None:
        if not isinstance(extends, str) or not extends.strip():
            raise DataError(path, "field 'extends' must name a rubric file, e.g. v3 or v3.yaml")
        parent_path = _resolve_extends(path, extends.strip())
        parent = _load(parent_path, (*chain, resolved))
    elif "criteria" not in data:
        raise DataError(path, "field 'criteria' is required")

    rounds = _string_list(path, data, "applies_to_rounds")
    guidance = tuple(_guidance(path, i, g) for i, g in enumerate(_list(path, data, "guidance"), 1))
    dimensions = tuple(_dimension(path, i, d) for i, d in enumerate(_list(path, data, "dimensions"), 1))
    criteria = tuple(_criterion(path, i, c) for i, c in enumerate(_list(path, data, "criteria"), 1))
    _no_duplicates(path, "dimension", (d.id for d in dimensions))
    _no_duplicates(path, "criterion", (c.id for c in criteria))

    marks = _provenance(path, "", data, "rubric")
    core_mark = marks["core"] if "core" in data or parent is None else parent.provenance["core"]
    rubric = Rubric(
        path=str(path),
        id=_text(path, data, "id"),
        version=_text(path, data, "version", coerce=True),
        title=_text(path, data, "title"),
        source=_text(path, data, "source"),
        applies_to_rounds=rounds,
        prompt_version=_text(path, data, "prompt_version", coerce=True),
        guidance=(parent.guidance if parent else ()) + guidance,
        dimensions=_merge_by_id(parent.dimensions if parent else (), dimensions),
        criteria=_merge_by_id(parent.criteria if parent else (), criteria),
        aggregation=(
            _aggregation(path, data["aggregation"])
            if "aggregation" in data
            else (parent.aggregation if parent else Aggregation())
        ),
        core=(_string_list(path, data, "core") if "core" in data else (parent.core if parent else ())),
        overrides=(parent.overrides if parent else ())
        + tuple(_override(path, i, o) for i, o in enumerate(_list(path, data, "overrides"), 1)),
        item_variables=(
            _string_list(path, data, "item_variables")
            if "item_variables" in data
            else (parent.item_variables if parent else ())
        ),
        extends=parent.id if parent else None,
        source_fidelity_gate=(
            _gate(path, data["source_fidelity_gate"])
            if "source_fidelity_gate" in data
            else (parent.source_fidelity_gate if parent else None)
        ),
        provenance=MappingProxyType({**marks, "core": core_mark}),
    )
    _check(rubric)
    return rubric


def _resolve_extends(path: Path, name: str) -> Path:
    # ``extends: v3`` and ``extends: v3.yaml`` both name the file next to this one.
    target = path.parent / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
    if not target.is_file():
        raise DataError(path, f"'extends: {name}' names no file ({target.name} not found next to it)")
    return target


# ---------------------------------------------------------------------------------------------------
# Field readers: each raises a DataError naming the file and, where there is one, the entry.
# ---------------------------------------------------------------------------------------------------


def _text(path: Path, data: Mapping[str, Any], key: str, *, where: str = "", coerce: bool = False) -> str:
    value = data.get(key)
    # Versions such as 3.0 arrive from YAML as floats; reading them as text is what the author meant.
    if coerce and isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise DataError(path, f"{where}field {key!r} is required and must be non-empty text")
    return value.strip()


def _list(path: Path, data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise DataError(path, f"field {key!r} must be a list")
    return value


def _string_list(path: Path, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    # Round names such as 2 arrive from YAML as numbers; booleans (a bare "yes") are never names.
    if not isinstance(value, list) or not all(
        isinstance(v, str | int) and not isinstance(v, bool) and str(v).strip() for v in value
    ):
        raise DataError(path, f"field {key!r} must be a list of names")
    names = tuple(str(v).strip() for v in value)
    _no_duplicates(path, f"{key} entry", names)
    return names


def _no_duplicates(path: Path, what: str, ids: Iterable[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DataError(path, f"{what} {i!r} is listed twice")
        seen.add(i)


def _unknown_keys(path: Path, where: str, entry: Mapping[Any, Any], allowed: set[str]) -> None:
    unknown = sorted(str(k) for k in entry if k not in allowed)
    if unknown:
        raise DataError(path, f"{where}unknown key(s) {', '.join(unknown)}")


def _yaml11_keys(entry: Mapping[Any, Any]) -> dict[Any, Any]:
    # YAML 1.1 (PyYAML) reads bare ``yes:`` / ``no:`` keys as booleans. A user who copies a rubric and
    # writes them unquoted means the verdict names, so read them back as such.
    return {("yes" if k is True else "no" if k is False else k): v for k, v in entry.items()}


def _verdict(path: Path, where: str, value: Any) -> Verdict:
    # The same YAML 1.1 trap for values: bare Yes / No become booleans.
    if value is True:
        value = "Yes"
    elif value is False:
        value = "No"
    if value not in VERDICTS:
        raise DataError(path, f"{where}verdict must be one of Yes, Partial, No (got {value!r})")
    return cast(Verdict, value)


def _guidance(path: Path, index: int, entry: Any) -> Guidance:
    where = f"guidance {index}: "
    if not isinstance(entry, dict):
        raise DataError(path, f"{where}expected a mapping with principle and instruction")
    _unknown_keys(path, where, entry, _GUIDANCE_KEYS)
    return Guidance(
        principle=_text(path, entry, "principle", where=where),
        instruction=_text(path, entry, "instruction", where=where),
        provenance=_provenance(path, where, entry, "guidance"),
    )


def _dimension(path: Path, index: int, entry: Any) -> Dimension:
    where = f"dimension {index}: "
    if not isinstance(entry, dict):
        raise DataError(path, f"{where}expected a mapping with id and description")
    _unknown_keys(path, where, entry, _DIMENSION_KEYS)
    return Dimension(
        id=_text(path, entry, "id", where=where),
        description=_text(path, entry, "description", where=where),
        provenance=_provenance(path, where, entry, "dimension"),
    )


def _criterion(path: Path, index: int, entry: Any) -> Criterion:
    if not isinstance(entry, dict):
        raise DataError(path, f"criterion {index}: expected a mapping with id, polarity, kind, dimension, …")
    entry = _yaml11_keys(entry)
    cid = entry.get("id")
    where = f"criterion {cid!r}: " if isinstance(cid, str) else f"criterion {index}: "
    _unknown_keys(path, where, entry, _CRITERION_KEYS)
    cid = _text(path, entry, "id", where=where)
    if not _ID.fullmatch(cid):
        raise DataError(path, f"{where}id must be snake_case (lowercase letters, digits, underscores)")
    if cid in RESERVED_IDS:
        raise DataError(path, f"{where}id is reserved for a score name; choose another")
    polarity = entry.get("polarity")
    if polarity not in POLARITIES:
        raise DataError(path, f"{where}polarity must be positive or negative (got {polarity!r})")
    kind = entry.get("kind", "criterion")
    if kind not in KINDS:
        raise DataError(path, f"{where}kind must be criterion or safety (got {kind!r})")
    if kind == "safety" and polarity != "positive":
        raise DataError(path, f"{where}a safety check must be positive (phrased so that No means unsafe)")
    texts = {key: _text(path, entry, key, where=where) for key in _CRITERION_TEXT}
    return Criterion(
        id=cid,
        polarity=cast(Polarity, polarity),
        kind=cast(Kind, kind),
        dimension=_text(path, entry, "dimension", where=where),
        **texts,
        provenance=_provenance(path, where, entry, "criterion"),
    )


def _provenance(path: Path, where: str, entry: Mapping[Any, Any], place: str) -> Mapping[str, Provenance]:
    """The entry's ``provenance:`` map completed with the default for every field it does not name."""
    fields = PROVENANCE_FIELDS[place]
    given = entry.get("provenance")
    if given is None:
        return _unmarked(place)
    if not isinstance(given, dict):
        raise DataError(path, f"{where}provenance must map field names to {' or '.join(PROVENANCES)}")
    given = _yaml11_keys(given)  # a bare ``yes:`` key, as on criteria
    unknown = sorted(str(k) for k in given if k not in fields)
    if unknown:
        raise DataError(
            path, f"{where}provenance: unknown field(s) {', '.join(unknown)} (fields: {', '.join(fields)})"
        )
    out: dict[str, Provenance] = dict.fromkeys(fields, DEFAULT_PROVENANCE)
    for key, value in given.items():
        if value not in PROVENANCES:
            raise DataError(
                path, f"{where}provenance: {key}: must be {' or '.join(PROVENANCES)} (got {value!r})"
            )
        out[key] = cast(Provenance, value)
    return MappingProxyType(out)


def _gate(path: Path, entry: Any) -> SourceFidelityGate:
    where = "source_fidelity_gate: "
    if not isinstance(entry, dict):
        raise DataError(path, f"{where}expected a mapping with fail_row and penalty")
    _unknown_keys(path, where, entry, _GATE_KEYS)
    fail_row = entry.get("fail_row", True)
    if not isinstance(fail_row, bool):
        raise DataError(path, f"{where}fail_row must be true or false (got {fail_row!r})")
    penalty = entry.get("penalty", 0.0)
    if isinstance(penalty, bool) or not isinstance(penalty, int | float) or not 0.0 <= penalty <= 1.0:
        raise DataError(path, f"{where}penalty must be a number from 0 to 1 (got {penalty!r})")
    note = entry.get("note")
    if note is not None and not isinstance(note, str):
        raise DataError(path, f"{where}note must be text")
    return SourceFidelityGate(
        fail_row=fail_row,
        penalty=float(penalty),
        note=" ".join(note.split()) if isinstance(note, str) else None,
    )


def _override(path: Path, index: int, entry: Any) -> Override:
    where = f"override {index}: "
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("if"), dict)
        or not isinstance(entry.get("then"), dict)
    ):
        raise DataError(path, f"{where}expected {{if: {{criterion, verdict}}, then: {{dimension, verdict}}}}")
    _unknown_keys(path, where, entry, _OVERRIDE_KEYS)
    when, then = entry["if"], entry["then"]
    _unknown_keys(path, f"{where}if: ", when, {"criterion", "verdict"})
    _unknown_keys(path, f"{where}then: ", then, {"dimension", "verdict"})
    note = entry.get("note")
    if note is not None and not isinstance(note, str):
        raise DataError(path, f"{where}note must be text")
    return Override(
        criterion=_text(path, when, "criterion", where=f"{where}if: "),
        verdict=_verdict(path, f"{where}if: ", when.get("verdict")),
        dimension=_text(path, then, "dimension", where=f"{where}then: "),
        cap=_verdict(path, f"{where}then: ", then.get("verdict")),
        note=note.strip() if isinstance(note, str) else None,
    )


def _aggregation(path: Path, entry: Any) -> Aggregation:
    where = "aggregation: "
    if not isinstance(entry, dict):
        raise DataError(path, f"{where}expected a mapping with over, negatives, weights")
    _unknown_keys(path, where, entry, _AGGREGATION_KEYS)
    over = entry.get("over", "criteria")
    if over not in AGGREGATION_OVER:
        raise DataError(path, f"{where}over must be one of {', '.join(AGGREGATION_OVER)} (got {over!r})")
    negatives = entry.get("negatives", "invert")
    if negatives not in NEGATIVES:
        raise DataError(path, f"{where}negatives must be invert or exclude (got {negatives!r})")
    weights = entry.get("weights") or {}
    if not isinstance(weights, dict):
        raise DataError(path, f"{where}weights must be a mapping with criteria and/or dimensions")
    _unknown_keys(path, f"{where}weights: ", weights, _WEIGHT_KEYS)
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        raise DataError(path, f"{where}description must be text")
    return Aggregation(
        over=cast(AggregationOver, over),
        negatives=cast(Negatives, negatives),
        criterion_weights=_weights(path, "criteria", weights.get("criteria")),
        dimension_weights=_weights(path, "dimensions", weights.get("dimensions")),
        description=" ".join(description.split()) if isinstance(description, str) else None,
    )


def _weights(path: Path, which: str, value: Any) -> Mapping[str, float]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, dict):
        raise DataError(path, f"aggregation: weights: {which} must map ids to numbers")
    out: dict[str, float] = {}
    for key, weight in value.items():
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight >= 0:
            raise DataError(
                path, f"aggregation: weights: {which}: {key!r} must be a number ≥ 0 (got {weight!r})"
            )
        out[str(key)] = float(weight)
    return MappingProxyType(out)


def _merge_by_id(parent: tuple[_Entry, ...], child: tuple[_Entry, ...]) -> tuple[_Entry, ...]:
    replacing: dict[str, _Entry] = {c.id: c for c in child}
    merged: list[_Entry] = [replacing.pop(p.id, p) for p in parent]
    merged.extend(c for c in child if c.id in replacing)
    return tuple(merged)


# ---------------------------------------------------------------------------------------------------
# Cross-checks on the merged rubric.
# ---------------------------------------------------------------------------------------------------


def _check(rubric: Rubric) -> None:
    path = rubric.path
    if not rubric.criteria:
        raise DataError(path, "field 'criteria' must list at least one criterion")
    dimensions = {d.id for d in rubric.dimensions}
    ids = set(rubric.ids)
    for c in rubric.criteria:
        if c.dimension not in dimensions:
            known = ", ".join(sorted(dimensions)) or "none declared"
            raise DataError(
                path, f"criterion {c.id!r}: unknown dimension {c.dimension!r} (dimensions: {known})"
            )
        _check_template_text(rubric, c)
    for i in rubric.core:
        if i not in ids:
            raise DataError(path, f"core: unknown criterion {i!r}")
        if rubric.criterion(i).kind != "criterion":
            raise DataError(path, f"core: criterion {i!r} is a safety check; those are never averaged")
    for n, o in enumerate(rubric.overrides, 1):
        if o.criterion not in ids:
            raise DataError(path, f"override {n}: if: unknown criterion {o.criterion!r}")
        if o.dimension not in dimensions:
            raise DataError(path, f"override {n}: then: unknown dimension {o.dimension!r}")
        if not rubric.in_dimension(o.dimension):
            raise DataError(path, f"override {n}: then: dimension {o.dimension!r} has no scored criteria")
    gate = rubric.source_fidelity_gate
    if gate is not None:
        if SOURCE_FIDELITY not in ids or rubric.criterion(SOURCE_FIDELITY).kind != "criterion":
            raise DataError(path, f"source_fidelity_gate: the rubric has no {SOURCE_FIDELITY} criterion")
        if gate.penalty and rubric.aggregation.over != "core":
            raise DataError(
                path,
                "source_fidelity_gate: penalty applies only to a Round 3 score (aggregation over: core);"
                " the Round 2b formula has no penalty term",
            )
    agg = rubric.aggregation
    for key in agg.criterion_weights:
        if key not in ids:
            raise DataError(path, f"aggregation: weights: criteria: unknown criterion {key!r}")
    for key in agg.dimension_weights:
        if key not in dimensions:
            raise DataError(path, f"aggregation: weights: dimensions: unknown dimension {key!r}")
    if agg.over == "core":
        if not rubric.core:
            raise DataError(path, "aggregation: over: core needs a non-empty 'core' list")
        weighted = [agg.criterion_weight(i) for i in rubric.core]
    elif agg.over == "dimensions":
        used = {c.dimension for c in rubric.scored}
        weighted = [
            agg.dimension_weight(d) * sum(agg.criterion_weight(c.id) for c in rubric.in_dimension(d))
            for d in used
        ]
    else:
        weighted = [agg.criterion_weight(c.id) for c in rubric.scored]
    if not sum(weighted) > 0:
        raise DataError(path, f"aggregation: over: {agg.over} has nothing with a positive weight to average")


def _check_template_text(rubric: Rubric, c: Criterion) -> None:
    for key in _CRITERION_TEXT:
        text = getattr(c, key)
        if "{" not in text:
            # No "{{", "{%" or "{#": nothing to check, and compiling each plain text costs ~1 ms (every
            # promptfoo call loads the rubric in a fresh process).
            continue
        try:
            tree = _PARSER.parse(text)
            _PARSER.from_string(text)  # compiling catches unknown filters, which parsing lets through
        except jinja2.TemplateSyntaxError as exc:
            raise DataError(
                rubric.path, f"criterion {c.id!r}: {key}: template error: {exc.message}"
            ) from None
        undeclared = sorted(jinja2.meta.find_undeclared_variables(tree) - set(rubric.item_variables))
        if undeclared:
            raise DataError(
                rubric.path,
                f"criterion {c.id!r}: {key}: uses variable(s) {', '.join(undeclared)}"
                " not listed in item_variables",
            )
