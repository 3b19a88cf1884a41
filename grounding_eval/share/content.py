"""What a study file holds, read from its content: ``share --redact`` decides by this, not by where it is.

A promptfoo results file is redacted wherever it sits in the study; a dataset file (the documented
formats' items, recorded answers, recorded judge replies, a calibration sheet, anything whose records
carry a question, an answer or a model's output) is hashed only, wherever it sits and whatever its name.
The rules, in order:

1. Every file under a **dataset folder** (one holding ``queries.*``, ``high_risk.*``, ``jkb_index.*``,
   ``recorded_answers.yaml`` or ``dataset.yaml``: :data:`DATASET_MARKERS`) is data.
2. A **JSON or YAML document** shaped like promptfoo's results (``results.results`` a list) is
   results; a **JSONL** file whose lines are result rows (``gradingResult``, ``testCase``,
   ``response``) is results too.
3. Any other JSON, JSONL, YAML or CSV/TSV file whose records (at any depth; a CSV's header) use a field
   in ``policy.yaml``'s ``redact.data_fields`` is data.
4. HTML and XML (promptfoo's ``-o results.html`` / ``.xml``) cannot be redacted field by field: data.
5. Everything else is shipped, after the key, path and High-Risk-text checks every member gets.

A structured file that does not parse is refused under ``--redact`` (it cannot be classified), as one
line naming it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any, Final

from grounding_eval.data.dataset import _STEMS, _SUFFIXES, _find  # the standard file names, defined once
from grounding_eval.data.load import load_high_risk
from grounding_eval.errors import DataError
from grounding_eval.files import JsonProblem, _yaml, parse_json
from grounding_eval.share.redact import is_high_risk, policy

__all__ = [
    "DATASET_MARKERS",
    "Kind",
    "Parsed",
    "classify",
    "dataset_folders",
    "high_risk_texts",
    "is_results",
    "results_rows",
]

DATASET_MARKERS: Final = (
    *(f"{stem}{suffix}" for stem in _STEMS.values() for suffix in _SUFFIXES),
    "recorded_answers.yaml",
    "dataset.yaml",
)
"""File names that make their folder a dataset folder (:mod:`grounding_eval.data.dataset`'s names)."""

_JSON_SUFFIXES: Final = (".json", ".ipynb", ".har")
_JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
_YAML_SUFFIXES: Final = (".yaml", ".yml")
_TABLE_SUFFIXES: Final = (".csv", ".tsv")
_MARKUP_SUFFIXES: Final = (".html", ".htm", ".xhtml", ".xml")
_ROW_FIELDS: Final = frozenset({"gradingResult", "testCase", "response"})
_MIN_TEXT: Final = 24  # shorter High-Risk strings (a county name, "high-risk") are not looked for


class Kind(Enum):
    """What a study file is, for sharing."""

    RESULTS = "results"  # a promptfoo results document (JSON or YAML)
    RESULT_LINES = "result lines"  # JSONL of result rows
    DATA = "data"  # hashed only under --redact
    OTHER = "other"  # shipped


@dataclass(frozen=True)
class Parsed:
    """A file's kind and, for results, its parsed document (or its rows, for JSONL)."""

    kind: Kind
    document: Any = None
    why: str = ""


def _data_fields() -> frozenset[str]:
    return frozenset(str(f).lower() for f in policy()["redact"]["data_fields"])


def is_results(document: Any) -> bool:
    """A promptfoo results document: ``{"results": {"results": [...]}}``."""
    body = document.get("results") if isinstance(document, Mapping) else None
    return isinstance(body, Mapping) and isinstance(body.get("results"), list)


def results_rows(document: Any) -> list[Any]:
    """The rows of a results document (``[]`` for anything else)."""
    return list(document["results"]["results"]) if is_results(document) else []


def _data_field(value: Any) -> str | None:
    """The first data field used by a mapping anywhere in ``value`` (a loop: nesting may be deep)."""
    fields = _data_fields()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, child in item.items():
                if str(key).lower() in fields:
                    return str(key)
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return None


def dataset_folders(files: Iterable[Path]) -> set[Path]:
    """The folders among these files' parents that hold a dataset marker file."""
    return {path.parent for path in files if path.name in DATASET_MARKERS}


def classify(name: str, text: str | None, *, in_dataset: bool = False) -> Parsed:
    """What a file named ``name`` (a path or a bundle member) holding ``text`` is (module docstring).

    Args:
        name: The file's name; its suffix says how to parse it.
        text: Its UTF-8 text, or ``None`` for a file that is not UTF-8 (never parsed: shipped).
        in_dataset: The file lies in a dataset folder.

    Raises:
        DataError: a structured file that does not parse, as one line naming it.
    """

    if in_dataset:
        return Parsed(Kind.DATA, why="in a dataset folder")
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower()
    if suffix in _MARKUP_SUFFIXES:
        return Parsed(Kind.DATA, why="HTML or XML, which cannot be redacted field by field")
    if text is None:
        return Parsed(Kind.OTHER)
    try:
        if suffix in _JSON_SUFFIXES or suffix in _YAML_SUFFIXES:
            document = parse_json(text) if suffix in _JSON_SUFFIXES else _parse_yaml(name, text)
            if is_results(document):
                return Parsed(Kind.RESULTS, document)
            return _data_or_other(document)
        if suffix in _JSONL_SUFFIXES:
            rows = []
            for number, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(parse_json(line))
                    except JsonProblem as exc:
                        raise JsonProblem(exc.problem, f"line {number}") from None
            if any(isinstance(r, Mapping) and _ROW_FIELDS & set(r) for r in rows):
                return Parsed(Kind.RESULT_LINES, rows)
            return _data_or_other(rows)
    except JsonProblem as exc:
        raise DataError(name, f"{exc.message()}: under --redact every JSON and YAML file is read to see "
                        "what it holds") from None  # fmt: skip
    if suffix in _TABLE_SUFFIXES:
        try:
            header = next(csv.reader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ","), [])
        except csv.Error as exc:
            raise DataError(name, f"not a readable table ({exc})") from None
        field = next((h for h in header if h.strip().lower() in _data_fields()), None)
        return Parsed(Kind.DATA, why=f"a column {field!r}") if field else Parsed(Kind.OTHER)
    return Parsed(Kind.OTHER)


def _data_or_other(document: Any) -> Parsed:
    field = _data_field(document)
    return Parsed(Kind.DATA, why=f"records with a field {field!r}") if field else Parsed(Kind.OTHER)


def _parse_yaml(name: str, text: str) -> Any:
    """YAML with the project's strict loader (a key written twice is refused), as a JsonProblem."""

    yaml, loader, duplicate_key = _yaml()
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader subclass: safe
    except duplicate_key as exc:
        raise JsonProblem(str(exc), f"line {getattr(exc, 'line', '?')}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise JsonProblem(f"malformed YAML ({getattr(exc, 'problem', None) or 'unreadable'})",
                          f"line {mark.line + 1}" if mark is not None else None) from None  # fmt: skip
    except RecursionError:
        raise JsonProblem("not readable: nested too deeply") from None


def high_risk_texts(rows: Iterable[Any], datasets: Iterable[Path]) -> dict[str, str]:
    """Texts of High-Risk items that must not be in any shared file, each with what it is.

    From results rows (a High-Risk row's vars, test vars and output) and from datasets (each High-Risk
    item's question, failure modes and clarifying questions; its recorded answers). A dataset that does
    not load gives nothing: its files are hashed, not shared, anyway.
    """
    texts: dict[str, str] = {}

    def add(value: Any, what: str) -> None:
        if isinstance(value, str):
            for line in value.splitlines():
                if len(line.strip()) >= _MIN_TEXT:
                    texts.setdefault(line.strip(), what)
        elif isinstance(value, list):
            for item in value:
                add(item, what)

    for row in rows:
        if not (isinstance(row, Mapping) and is_high_risk(row)):
            continue
        meta = (row.get("testCase") or {}).get("metadata") or {}
        what = f"High-Risk item {meta.get('query_id', '?')}"
        for holder in (row.get("vars"), (row.get("testCase") or {}).get("vars")):
            if isinstance(holder, Mapping):
                for key, value in holder.items():
                    # Not the sources shown to the model (jkb_*): the same articles serve every item.
                    if key not in ("query_id", "jurisdiction", "topic") and not str(key).startswith("jkb_"):
                        add(value, f"{what}'s {key}")
        response = row.get("response")
        if isinstance(response, Mapping):
            add(response.get("output"), f"{what}'s answer")
        for key in ("failure_modes", "required_clarifying_questions"):
            add(meta.get(key), f"{what}'s {key}")
    for folder in datasets:
        texts.update({t: w for t, w in _dataset_texts(folder).items() if t not in texts})
    return texts


def _dataset_texts(folder: Path) -> dict[str, str]:
    from grounding_eval.data.recorded_answers import load_recorded_answers

    out: dict[str, str] = {}

    def add(value: str, what: str) -> None:
        for line in value.splitlines():
            if len(line.strip()) >= _MIN_TEXT:
                out.setdefault(line.strip(), what)

    try:
        found = _find(folder, "high_risk", required=False)
        items = load_high_risk(found) if found else []
    except DataError:
        return out
    ids = set()
    for item in items:
        ids.add(item.id)
        add(item.question, f"High-Risk item {item.id}'s question")
        for text in (*item.failure_modes, *item.required_clarifying_questions):
            add(text, f"High-Risk item {item.id}'s rubric text")
    answers = folder / "recorded_answers.yaml"
    if answers.is_file():
        try:
            for (query_id, condition), answer in load_recorded_answers(answers).items():
                if query_id in ids:
                    add(answer.answer, f"High-Risk item {query_id}'s recorded {condition} answer")
        except DataError:
            pass
    return out
