"""The record every structural change is checked against (issue 40, step 0), as ``tests/fixtures/record/`` keeps it.

One JSON file per shipped config (``configs/*.yaml``, ``promptfooconfig.yaml``) and per study ``grounding-eval
init`` writes, each with three parts read from one offline run of the pinned promptfoo:

- ``eval``: promptfoo's exit code, its pass / fail / error counts, and every row, keyed ``"ITEM CONDITION"``
  (the provider's label added when a config has several): its pass, score, ``failureReason`` and error; the
  named scores as promptfoo wrote them and every score as the report reads it (:func:`tests.scores.
  row_scores`); the row's grading result (pass, score, reason, named scores and weights, metadata: outcome,
  composite, safety); each component result in order (its assertion, metric, pass, score, reason and the
  metadata the pack writes: verifier findings, judge verdicts, provenance, outcome…); and the metadata the
  pack's test generator and replay provider put on the test and the response.
- ``rescore``: ``grounding-eval rescore`` of that results file, recorded the same way, and kept as what
  differs from the eval's rows (``rows_unlike_eval``: path → value; so far only ``1.0`` where promptfoo
  wrote ``1``), which gives every rescored row back exactly.
- ``report``: ``grounding-eval report --json`` of that results file, plain and with ``--by condition
  --effects --rates --criteria``.

Besides: ``report --json`` of every results file the tests keep as a fixture (``fixture_reports.json``) and
the JSON Schemas generated from the models, text for text (``schemas.json``).

What differs from run to run, or from machine to machine, is normalised here and nowhere else, each
for a reason; nothing a verdict is made of is dropped:

- promptfoo's row ids, latencies, durations, token counts, cost, eval ids and prompt ids are not read
  (a row is named by its item and condition; no shipped config calls a model, so every token count is 0);
  where the report names a row by its promptfoo id (``result_id``), the id becomes ``<row ITEM CONDITION>``;
- the rows of a results file come in the order promptfoo finished them, which differs from run to run
  (an item's C1 row before its C0 row in one run of round 1a, after it in the next): rows are kept by
  key (the report lists rows by round, model, item and condition, whatever the file's order);
- the judge's, docs-QA grader's and factual-accuracy judge's ``timestamp`` (the wall clock at grading)
  is replaced by ``"<time>"``; the rescore's stamp and its own timings are not read;
- absolute paths become placeholders: the checkout (and so the installed pack's root, ``pack_root()``)
  becomes ``<repo>``, the folder an ``init`` study was written to ``<study>``, the run's temporary folder
  ``<tmp>``;
- an ``init`` study names the installed pack by its absolute path in what its judges hash (the replay
  provider and recorded-fixture paths of each audit record and review entry), so in an init study's record
  the ids made of those hashes (``audit_id``, ``audit_file``, ``review_entry_id``, ``human_entry_id``,
  ``entry_id``) become ``"<hash>"``: they differ from checkout to checkout. The shipped configs name the
  pack by relative paths and keep their ids.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.scores import query_id, row_scores

REPO = Path(__file__).resolve().parents[1]
RECORD_DIR = REPO / "tests" / "fixtures" / "record"
SHIPPED = (*(f"configs/{p.name}" for p in sorted((REPO / "configs").glob("*.yaml"))), "promptfooconfig.yaml")
INIT_PREFIX = "init:"  # "init:3": the study `grounding-eval init DIR --round 3` writes
# Every results file a test reads as a fixture, reported as it is.
REPORT_FIXTURES = (
    "tests/fixtures/analysis/factual_accuracy.json",
    "tests/fixtures/analysis/round1a.json",
    "tests/fixtures/analysis/round2b.json",
    "tests/fixtures/analysis/round3.json",
    "tests/fixtures/analysis/round3_errors.json",
    "tests/fixtures/report/main_job_before_chips.json.gz",
    "tests/fixtures/report/round3_sample.json",
    "tests/fixtures/report/safety_agreement.json",
    "tests/fixtures/share/round3_outside_dataset.json",
)
REPORT_FLAGS = {"plain": [], "by_condition": ["--by", "condition", "--effects", "--rates", "--criteria"]}
# In a rescore's rows_unlike_eval: a value the eval's row has and the rescored row has not.
ABSENT = "<absent>"
_WALL_CLOCK = "timestamp"  # the grading time in the judges' metadata
# Ids hashed from records that name the checkout's absolute path in an init study (the module's doc).
_PATH_HASHES = frozenset({"audit_id", "audit_file", "review_entry_id", "human_entry_id", "entry_id"})
Json = Any


def record_file(name: str) -> Path:
    """``configs/round3.yaml`` → ``tests/fixtures/record/configs__round3.json``; ``init:3`` → ``init__3.json``."""
    stem = name.removesuffix(".yaml").replace("/", "__").replace(":", "__")
    return RECORD_DIR / f"{stem}.json"


def normalised(value: Json, places: Mapping[str, str]) -> Json:
    """``value`` with each absolute path of ``places`` (path → placeholder, longest first) replaced, in keys
    and strings, and every ``timestamp`` replaced by ``"<time>"``."""
    if isinstance(value, dict):
        return {
            normalised(k, places): "<time>" if k == _WALL_CLOCK and v is not None else normalised(v, places)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalised(v, places) for v in value]
    if isinstance(value, str):
        for path in sorted(places, key=len, reverse=True):
            value = value.replace(path, places[path])
    return value


def without_path_hashes(value: Json) -> Json:
    """``value`` with every id of :data:`_PATH_HASHES` that is set replaced by ``"<hash>"``."""
    if isinstance(value, dict):
        return {
            k: "<hash>" if k in _PATH_HASHES and v is not None else without_path_hashes(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_path_hashes(v) for v in value]
    return value


def _component(c: dict[str, Any]) -> dict[str, Any]:
    assertion = c.get("assertion") or {}
    return {
        "assertion": {k: assertion.get(k) for k in ("type", "value", "metric") if k in assertion},
        "pass": c.get("pass"),
        "score": c.get("score"),
        "reason": c.get("reason"),
        "namedScores": c.get("namedScores"),
        "metadata": c.get("metadata"),
        "components": [_component(n) for n in c.get("componentResults") or ()],
    }


def _key(row: dict[str, Any], with_provider: bool) -> str:
    meta = (row.get("testCase") or {}).get("metadata") or {}
    item = query_id(row) or meta.get("question_id") or f"test {row.get('testIdx')}"
    key = f"{item} {str(row['prompt']['label']).split(':')[0]}"
    return f"{key} {(row.get('provider') or {}).get('label')}" if with_provider else key


def rows_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every row, keyed by item and condition (and provider, when there are several)."""
    several = len({(r.get("provider") or {}).get("label") for r in rows}) > 1
    kept: dict[str, Any] = {}
    for r in rows:
        grading = r.get("gradingResult") or {}
        key = _key(r, several)
        assert key not in kept, f"two rows named {key!r}"
        kept[key] = {
            "success": r.get("success"),
            "score": r.get("score"),
            "failureReason": r.get("failureReason"),
            "error": r.get("error"),
            "namedScores": r.get("namedScores"),
            "report_scores": row_scores(r) if grading else None,
            "grading": {
                k: grading.get(k)
                for k in ("pass", "score", "reason", "namedScores", "namedScoreWeights", "metadata")
            },
            "components": [_component(c) for c in grading.get("componentResults") or ()],
            "response_metadata": (r.get("response") or {}).get("metadata"),
            "test_metadata": (r.get("testCase") or {}).get("metadata"),
        }
    return kept


def results_record(path: Path) -> dict[str, Any]:
    """A results file's pass / fail / error counts and rows."""
    results = json.loads(path.read_text(encoding="utf-8"))["results"]
    stats = results.get("stats") or {}
    return {
        "stats": {k: stats.get(k) for k in ("successes", "failures", "errors")},
        "rows": rows_record(results["results"]),
    }


def _cli(argv: list[str]) -> tuple[int, str, str]:
    """``grounding-eval ARGV`` in this process: exit code, stdout, stderr."""
    from grounding_eval.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def report_record(results: Path) -> dict[str, Any]:
    """``report --json`` of ``results``, plain and grouped by condition with effects, rates and criteria;
    each row's promptfoo id named by the row's key, and the unsafe answers in a fixed order."""
    rows = json.loads(results.read_text(encoding="utf-8"))["results"]["results"]
    several = len({(r.get("provider") or {}).get("label") for r in rows}) > 1
    ids = {str(r["id"]): f"<row {_key(r, several)}>" for r in rows if r.get("id")}
    record: dict[str, Any] = {}
    for name, flags in REPORT_FLAGS.items():
        code, out, err = _cli(["report", str(results), "--json", *flags])
        report = json.loads(out) if code == 0 else out
        record[name] = {"exit": code, "stderr": err, "json": normalised(report, ids)}
    return record


def config_record(returncode: int, out: Path, places: Mapping[str, str], cwd: Path = REPO) -> dict[str, Any]:
    """A finished offline run's record: its rows, their rescore and their report (see the module's doc).
    ``cwd`` is where promptfoo ran (the repository root, or a study's folder): rescore reads the relative
    paths of the assertions' config from there."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(cwd):
        rescored = Path(tmp) / "rescored.json"
        code, _out, err = _cli(["rescore", str(out), "-o", str(rescored)])
        places = {**places, str(Path(tmp).resolve()): "<tmp>", tmp: "<tmp>"}
        rescore: dict[str, Any] = {"exit": code, "stderr": err if code else ""}  # its summary: timings
        graded = normalised(results_record(out), places)
        if code == 0:
            again = normalised(results_record(rescored), places)
            rescore |= {"stats": again["stats"], "rows_unlike_eval": unlike(graded["rows"], again["rows"])}
        record = {
            "eval": {"exit": returncode, **graded},
            "rescore": normalised(rescore, places),
            "report": normalised(report_record(out), places),
        }
        return without_path_hashes(record) if "<study>" in places.values() else record


def fixture_reports() -> dict[str, Any]:
    """``report --json`` of every results file the tests keep as a fixture."""
    record: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in REPORT_FIXTURES:
            path = REPO / name
            if path.suffix == ".gz":
                path = Path(tmp) / path.stem
                path.write_bytes(gzip.decompress((REPO / name).read_bytes()))
            record[name] = report_record(path)
        kept: dict[str, Any] = normalised(
            record, {str(REPO): "<repo>", tmp: "<tmp>", str(Path(tmp).resolve()): "<tmp>"}
        )
        return kept


def schemas_record() -> dict[str, str]:
    """The JSON Schemas generated from the models, file name → text."""
    from grounding_eval.data.schemas import generated_schemas

    return generated_schemas()


def unlike(before: Json, after: Json, where: str = "") -> dict[str, Json]:
    """``after`` as the values that differ from ``before``, path → value (``"<absent>"``: a value
    ``before`` has and ``after`` has not); ``before`` and this give ``after`` back, type for type."""
    if isinstance(before, dict) and isinstance(after, dict):
        moved: dict[str, Json] = {}
        for key in sorted(before.keys() | after.keys()):
            if key not in after:
                moved[f"{where}/{key}"] = ABSENT
            elif key not in before:
                moved[f"{where}/{key}"] = after[key]
            else:
                moved |= unlike(before[key], after[key], f"{where}/{key}")
        return moved
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return {
            k: v
            for i, (a, b) in enumerate(zip(before, after, strict=True))
            for k, v in unlike(a, b, f"{where}[{i}]").items()
        }
    return {} if _same(before, after) else {where or "/": after}


def _same(a: Json, b: Json) -> bool:
    """Equal in JSON's bytes: ``1`` (as promptfoo writes a whole score) is not ``1.0`` (as Python does)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def differences(name: str, before: Json, after: Json, where: str = "") -> list[str]:
    """One line per value that moved, was added or was dropped, named by its path in the record."""
    if isinstance(before, dict) and isinstance(after, dict):
        lines = []
        for key in sorted(before.keys() | after.keys()):
            here = f"{where}/{key}"
            if key not in after:
                lines.append(f"{name} {here}: dropped")
            elif key not in before:
                lines.append(f"{name} {here}: added")
            else:
                lines += differences(name, before[key], after[key], here)
        return lines
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            line
            for i, (a, b) in enumerate(zip(before, after, strict=True))
            for line in differences(name, a, b, f"{where}[{i}]")
        ]
    if _same(before, after):
        return []
    return [f"{name} {where or '/'}: {_short(before)} -> {_short(after)}"]


def _short(value: Json) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else f"{text[:157]}..."


def to_text(record: Json) -> str:
    """A record file's text: sorted keys, indent 1, one newline at the end."""
    return json.dumps(record, indent=1, sort_keys=True) + "\n"
