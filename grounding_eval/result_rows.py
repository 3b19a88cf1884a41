"""Typed records of one promptfoo results row: the pack's results in it, found and shape-checked once.

:func:`grounding_eval.results_file.stream_results` and :func:`~grounding_eval.results_file.read_results`
read the file; :func:`result_row` reads a row. ``report`` (and through it ``effects`` and ``calibrate``),
``audit`` and ``share``'s provenance walk ``gradingResult.componentResults`` only here, so a component
of the wrong type is refused the same way, with the same field name, by each of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from grounding_eval.calls import ASSERTION_CALLS, JUDGE_CALLS
from grounding_eval.results_file import FAILED_ERROR, RowProblem, arr, json_type, obj

__all__ = [
    "COMPONENTS",
    "JUDGE_KINDS",
    "Component",
    "JudgeRecord",
    "ResultRow",
    "VerifierRecord",
    "result_row",
]

COMPONENTS = "gradingResult.componentResults"
JUDGE_KINDS = JUDGE_CALLS
"""The metadata keys of the pack's judges' results (each judge call's own name, :mod:`grounding_eval.calls`):
the legal-aid judge, docs-QA and factuality."""
_RECORDS = (*JUDGE_KINDS, *(c for c in ASSERTION_CALLS if c not in JUDGE_KINDS))  # and the verifier's
_OBJECTS = (*_RECORDS, "provenance")  # the metadata fields that must be objects where present


@dataclass(frozen=True, slots=True)
class Component:
    """One entry of ``gradingResult.componentResults``, its object fields and its reason type-checked.

    Attributes:
        where: the field's name for messages (``gradingResult.componentResults[3]``).
        result: the entry as promptfoo wrote it (``pass``, ``score``, ``comment`` are read by the caller).
        metadata: its ``metadata`` (empty when absent); each of the pack's records in it is an object.
        assertion: its ``assertion`` (empty when absent).
        reason: its ``reason`` as text (a number is shown as text; absent or null is ``""``).
    """

    where: str
    result: dict[str, Any]
    metadata: dict[str, Any]
    assertion: dict[str, Any]
    reason: str


@dataclass(frozen=True, slots=True)
class VerifierRecord:
    """The deterministic verifier's ``metadata.verifier``, with its finding and URL lists checked.

    Attributes:
        metadata: the record as written.
        hard_failures: each hard failure (an object).
        urls: each URL it checked (an object).
    """

    metadata: dict[str, Any]
    hard_failures: tuple[dict[str, Any], ...]
    urls: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class JudgeRecord:
    """One judge's record: ``metadata.judge``, ``metadata.docs_qa`` or ``metadata.factuality``.

    Attributes:
        kind: which of :data:`JUDGE_KINDS`.
        metadata: the record as written.
    """

    kind: str
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ResultRow:
    """What the pack reads of one results row, every field it walks type-checked.

    Attributes:
        raw: the row as promptfoo wrote it.
        grading: its ``gradingResult`` (empty when absent).
        grading_metadata: ``gradingResult.metadata`` (empty when absent).
        components: each entry of ``gradingResult.componentResults``, in order.
        verifier: the first verifier record, or None when no verifier result is in the row.
        judges: the first record of each judge kind present, in :data:`JUDGE_KINDS` order.
        judge_passed: whether the first component holding a judge's record passed; None when none does.
        errored: promptfoo could not produce the row (a provider or prompt error: ``failureReason`` 2),
            so there is no answer to grade.
    """

    raw: dict[str, Any]
    grading: dict[str, Any]
    grading_metadata: dict[str, Any]
    components: tuple[Component, ...]
    verifier: VerifierRecord | None
    judges: tuple[JudgeRecord, ...]
    judge_passed: bool | None
    errored: bool

    def judge(self, kind: str = "judge") -> dict[str, Any] | None:
        """The metadata of the row's first record of judge ``kind``, or None."""
        return next((j.metadata for j in self.judges if j.kind == kind), None)

    def audits(self, default_dir: str) -> list[tuple[str, str]]:
        """``(audit_dir, audit_id)`` of every result that names an audit record, in order.

        ``default_dir`` stands for a record that names no folder (written before results named one).

        Raises:
            RowProblem: an ``audit_id`` or ``audit_dir`` that is not text.
        """
        refs = []
        for component in self.components:
            for key, value in component.metadata.items():
                if not isinstance(value, dict) or value.get("audit_id") is None:
                    continue
                where = f"{component.where}.metadata.{key}"
                audit_id = value["audit_id"]
                folder = value.get("audit_dir")
                if not isinstance(audit_id, str):
                    raise RowProblem(f"{where}.audit_id is {json_type(audit_id)}, expected text")
                if folder is not None and not isinstance(folder, str):
                    raise RowProblem(f"{where}.audit_dir is {json_type(folder)}, expected text")
                refs.append((folder or default_dir, audit_id))
        return refs

    def provenance(self) -> Iterator[dict[str, Any]]:
        """Each result's ``metadata.provenance`` (an object), in order.

        Raises:
            RowProblem: a provenance that is not an object.
        """
        for component in self.components:
            entry = component.metadata.get("provenance")
            if entry is not None:
                yield obj(entry, f"{component.where}.metadata.provenance")

    def sample(self) -> dict[str, Any] | None:
        """The row's sample: its results' provenance, else the row's own ``metadata.sample`` (promptfoo
        copies the test's metadata into every row, an ERROR row's too, which has no results)."""
        for entry in self.provenance():
            if isinstance(found := entry.get("sample"), dict):
                return found
        meta = self.raw.get("metadata")
        sample = meta.get("sample") if isinstance(meta, dict) else None
        return sample if isinstance(sample, dict) else None


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowProblem(f"{where} is {json_type(value)}, expected text")
    return str(value)


def result_row(raw: dict[str, Any]) -> ResultRow:
    """The row's :class:`ResultRow`: one pass over its results, checking the type of each field read.

    Raises:
        RowProblem: a field of the wrong JSON type, named (``gradingResult.componentResults[2].metadata is
            a list, expected an object``).
    """
    grading = obj(raw.get("gradingResult"), "gradingResult")
    grading_meta = obj(grading.get("metadata"), "gradingResult.metadata")
    components = []
    records: dict[str, dict[str, Any]] = {}
    judge_passed: bool | None = None
    for i, component in enumerate(arr(grading.get("componentResults"), COMPONENTS)):
        # Each check is inlined for the common case (the right type), so that the field's name, for a
        # message, is built only when a check fails: the report reads 100,000 rows.
        where = f"{COMPONENTS}[{i}]"
        if type(component) is not dict:
            component = obj(component, where)
        meta = component.get("metadata")
        if type(meta) is not dict:
            meta = obj(meta, f"{where}.metadata")
        if meta:
            for key in _OBJECTS:
                value = meta.get(key)
                if value is None:
                    continue
                if type(value) is not dict:
                    obj(value, f"{where}.metadata.{key}")
                if key in _RECORDS and not records.get(key):  # the first record, a non-empty one first
                    records[key] = value
            if judge_passed is None and any(k in meta for k in JUDGE_KINDS):
                judge_passed = component.get("pass") is True
        assertion = component.get("assertion")
        if type(assertion) is not dict:
            assertion = obj(assertion, f"{where}.assertion")
        reason = component.get("reason")
        if type(reason) is not str:
            reason = _text(reason, f"{where}.reason")
        components.append(Component(where, component, meta, assertion, reason))
    verifier = records.get("verifier")
    return ResultRow(
        raw=raw,
        grading=grading,
        grading_metadata=grading_meta,
        components=tuple(components),
        verifier=None if verifier is None else _verifier(verifier),
        judges=tuple(JudgeRecord(kind, records[kind]) for kind in JUDGE_KINDS if kind in records),
        judge_passed=judge_passed,
        errored=raw.get("failureReason") == FAILED_ERROR,
    )


def _verifier(meta: dict[str, Any]) -> VerifierRecord:
    return VerifierRecord(meta, _objects(meta, "hard_failures"), _objects(meta, "urls"))


def _objects(meta: dict[str, Any], key: str) -> tuple[dict[str, Any], ...]:
    """The verifier's list ``key``, each entry an object (its name built only for a message)."""
    where = f"metadata.verifier.{key}"
    items = arr(meta.get(key), where)
    if all(type(item) is dict for item in items):
        return tuple(items)
    return tuple(obj(item, f"{where}[{i}]", null=False) for i, item in enumerate(items))
