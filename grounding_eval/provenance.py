"""What produced a score, in every result row: ``metadata.provenance``.

A partner comparing their numbers with ours needs to know, per row, which grounding-eval, which rubric
(id, version and the SHA-256 of its file: an edited rubric with an unchanged version still shows), which
judge-prompt version, which dataset graded it and, for a sampled round, which sample (``n``, ``seed``,
``stratify``, the method, the pool size and the SHA-256 of the chosen ids; the ids themselves are in the
row's ``metadata.sample``, which promptfoo copies from the test into every row, ERROR rows included).
The verifier and the judge each add this small mapping (a few hundred bytes) to their GradingResult's
metadata; :class:`ProvenanceCount` gathers it back from a promptfoo results file for ``grounding-eval
report`` and ``grounding-eval share``.

Imports stay light: this runs inside every assertion call.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grounding_eval.result_rows import ResultRow

__all__ = [
    "ProvenanceCount", "dataset_name", "format_provenance", "results_provenance", "row_provenance", "sample_label",
]  # fmt: skip

_SAMPLE_KEYS = ("n", "seed", "stratify", "method", "pool", "ids_sha256")


def dataset_name(dataset: Any) -> str:
    """The dataset's name: its folder's name (``sample`` for the pack's own), or ``-`` when none."""
    if not dataset:
        return "-"
    return Path(str(dataset)).name or str(dataset)


@cache
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    from grounding_eval.resources import sha256_file

    return sha256_file(path)


def _sha256(path: Path) -> str | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _file_sha256(str(path), stat.st_mtime_ns, stat.st_size)


def row_provenance(
    *,
    dataset: Any,
    rubric_path: Path | None = None,
    rubric_id: str | None = None,
    rubric_version: str | None = None,
    prompt_version: str | None = None,
    sample: Any = None,
) -> dict[str, Any]:
    """The ``metadata.provenance`` of one GradingResult (only the keys that apply).

    ``sample``: the test's ``metadata.sample`` (set by the generator for a sampled round), kept without
    its id list.
    """
    from grounding_eval.resources import pack_version

    out: dict[str, Any] = {"grounding_eval": pack_version(), "dataset": dataset_name(dataset)}
    if isinstance(sample, Mapping):
        out["sample"] = {k: sample[k] for k in _SAMPLE_KEYS if k in sample}
    if rubric_id is not None:
        out["rubric"] = {
            "id": rubric_id,
            "version": rubric_version,
            "sha256": _sha256(rubric_path) if rubric_path is not None else None,
        }
    if prompt_version is not None:
        out["prompt_version"] = prompt_version
    return out


def sample_label(sample: Mapping[str, Any]) -> str:
    """One line naming a sample: ``n 40 of 192, seed 7, stratified by risk_tier, jurisdiction (ids sha256:…)``."""
    stratify = sample.get("stratify") or []
    by = ", ".join(map(str, stratify)) if isinstance(stratify, list) and stratify else "nothing"
    digest = str(sample.get("ids_sha256") or "-")[:12]
    return (
        f"n {sample.get('n')} of {sample.get('pool')}, seed {sample.get('seed')}, stratified by {by} "
        f"(ids sha256:{digest})"
    )


class ProvenanceCount:
    """Counts what produced rows, one :class:`~grounding_eval.result_rows.ResultRow` at a time (a report
    streams its file); :meth:`summary` is :func:`results_provenance`'s mapping."""

    def __init__(self) -> None:
        self.rows = 0
        self.with_provenance = 0
        self.counters: dict[str, Counter[str]] = {k: Counter() for k in _COUNTED}

    def add(self, row: ResultRow) -> None:
        """Count one row: once per distinct value it names.

        Raises:
            RowProblem: a ``metadata.provenance`` that is not an object.
        """
        self.rows += 1
        seen: dict[str, set[str]] = {k: set() for k in _COUNTED}
        for entry in row.provenance():
            seen["grounding_eval"].add(str(entry.get("grounding_eval")))
            seen["datasets"].add(str(entry.get("dataset")))
            rubric = entry.get("rubric")
            if isinstance(rubric, Mapping):
                digest = str(rubric.get("sha256") or "-")[:12]
                seen["rubrics"].add(f"{rubric.get('id')}@{rubric.get('version')} sha256:{digest}")
            if entry.get("prompt_version") is not None:
                seen["prompt_versions"].add(str(entry["prompt_version"]))
        for entry in row.provenance():
            hosts = entry.get("judge_endpoints")
            if isinstance(hosts, list):
                seen["judge_endpoints"].update(str(h) for h in hosts)
        sample = row.sample()
        if sample is not None:
            seen["samples"].add(sample_label(sample))
        if seen["grounding_eval"]:
            self.with_provenance += 1
        for key, values in seen.items():
            self.counters[key].update(values)

    def summary(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "rows_with_provenance": self.with_provenance,
            **{key: dict(sorted(counter.items())) for key, counter in self.counters.items()},
        }


_COUNTED = ("grounding_eval", "rubrics", "prompt_versions", "datasets", "samples", "judge_endpoints")


def results_provenance(results: Mapping[str, Any]) -> dict[str, Any]:
    """Count what produced the rows of a promptfoo results file (``-o results.json``, as
    :func:`~grounding_eval.results_file.read_results` returns it).

    Returns ``{"rows", "rows_with_provenance", "grounding_eval": {version: rows}, "rubrics":
    {"id@version sha256:…": rows}, "prompt_versions": {…}, "datasets": {…}, "samples": {…},
    "judge_endpoints": {host: rows}}``. A row
    counts once per distinct value it names; ``samples`` counts every row of a sampled round, ERROR rows
    included (:func:`sample_label`), and is empty when no row was sampled.

    Raises:
        RowProblem: a row's field of the wrong type, as ``row N of results.results: <problem>``.
    """
    from grounding_eval.result_rows import result_row
    from grounding_eval.results_file import RowProblem, obj

    count = ProvenanceCount()
    for number, raw in enumerate(results["results"]["results"], 1):
        try:
            count.add(result_row(obj(raw, "the row", null=False)))
        except RowProblem as exc:
            raise RowProblem(f"row {number} of results.results: {exc}") from None
    return count.summary()


def format_provenance(summary: Mapping[str, Any]) -> list[str]:
    """The report's provenance lines for one results file (see :func:`results_provenance`)."""

    def counted(values: Mapping[str, int]) -> str:
        return ", ".join(f"{value} ({n} rows)" for value, n in values.items()) or "-"

    lines = [
        f"rows with provenance: {summary['rows_with_provenance']} of {summary['rows']}",
        f"grounding-eval: {counted(summary['grounding_eval'])}",
        f"rubrics: {counted(summary['rubrics'])}",
        f"judge prompt versions: {counted(summary['prompt_versions'])}",
        f"datasets: {counted(summary['datasets'])}",
    ]
    if summary.get("samples"):  # only for sampled rounds: an unsampled report reads as before
        lines.append(f"samples: {counted(summary['samples'])}")
    if summary.get("judge_endpoints"):  # only where a live judge was asked (a recorded one asks none)
        lines.append(
            f"judge endpoints (hosts the live judges were asked at): {counted(summary['judge_endpoints'])}"
        )
    return lines
