"""promptfoo test generator: one test per selected item, with the C1/C1.5 variables filled from data.

Used as ``tests: [{path: file://datasets/generate.py:generate_tests, config: {...}}]``. Config keys:

``dataset``  dataset folder (default the pack's ``datasets/sample``; ``$GROUNDING_EVAL_DATASET`` wins)
``round``    1a | 1b | 2 | 2b | 3 — selects items and declares the round in each test's metadata
``tags``     override the round's tags (any of them qualifies)
``ids``      keep only these item ids
``sample``   ``{n, seed, stratify}``: a reproducible stratified sample of the selected items
             (:mod:`grounding_eval.data.sample`); the spec, pool size and chosen ids go in every test's
             ``metadata.sample`` and the row provenance
``directory`` ``seed`` (default: C1's directory as the methods document builds it, the top-ranked index
             records) or ``matched`` (exactly the records of the item's C1.5 articles: C1 and C1.5 then
             give the same records, a comparison of format alone; :mod:`grounding_eval.data.design`).
             ``matched`` is recorded in every test's ``metadata.directory``

Vars per test: only what the prompts use — ``jurisdiction`` (two-letter code), ``question``,
``jkb_directory``, ``jkb_full_content`` — for promptfoo's viewer makes every var a column and every
description a column too (issue 42: at 1920 px the three conditions' answers must fit beside them). The
item's id (``query_id``), topic, High-Risk fields and the grounding choices (``directory_ids``,
``full_content_ids``, each record's organisation and URL in ``grounding_organizations`` and
``grounding_urls``) go in the test's metadata
(lists in vars would make promptfoo multiply the test); readers of results files written before take
``query_id`` and ``topic`` from the vars too. A test has no description. The two long vars are named in
``metadata.source_vars``, and so is ``jurisdiction`` (also in the metadata: a column of its own put the
third condition off a 1920-pixel screen): the pack's beforeAll hook lifts them out of the vars (no viewer
column, no copy in the results file) and puts them back, verbatim, into the prompts and the assertions
(``assertions/grounding.cjs``); :func:`source_vars` rebuilds the long ones for ``rescore``, and
:mod:`grounding_eval.promptfoo.source_vars` the jurisdiction from the metadata.

**An empty grounding block is an ERROR row, never a silent prompt.** When an item's C1 directory (or, in
a round with C1.5, its C1.5 content) comes out empty, its var is ``file://<pack>/assertions/
missing_grounding.cjs`` and the reason is in the ``grounding_missing`` var: promptfoo calls that file
while rendering each prompt, so exactly the cells whose prompt uses the var become ERROR rows reading
``ERROR (no grounding for C1.5: <why>)`` — for recorded answers and live models alike, since no provider
is called — and the rest of the eval runs. The generator also prints one ``WARNING`` line per gap.
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from grounding_eval.data.conditions import PROMPTS_DIR, ConditionVars, condition_vars
from grounding_eval.data.dataset import load_dataset, resolve_dataset_dir
from grounding_eval.data.design import DIRECTORY_MODES
from grounding_eval.data.methods import ROUNDS, Round
from grounding_eval.data.records import HighRiskItem, Query
from grounding_eval.data.rounds import round_items, size_warnings
from grounding_eval.data.sample import SampleSpec
from grounding_eval.errors import DataError
from grounding_eval.var_names import GROUNDING_VARS, LABEL_VARS

__all__ = ["MISSING_GROUNDING_JS", "SOURCE_VARS", "generate_tests", "missing_grounding", "source_vars"]

MISSING_GROUNDING_JS = Path("assertions") / "missing_grounding.cjs"
"""The var source that turns a cell with an empty grounding block into an ERROR row (under the pack)."""

_GROUNDING = tuple(GROUNDING_VARS.items())  # (condition, var), C1 then C1.5
SOURCE_VARS = tuple(var for _, var in _GROUNDING)
"""The long vars, named in ``metadata.source_vars``: the beforeAll hook keeps them out of the viewer's columns."""


def generate_tests(config: dict[str, Any] | None = None, *, pack_root: Path) -> list[dict[str, Any]]:
    """Build promptfoo test cases from a dataset.

    Raises:
        DataError: a bad dataset or config, as one line (promptfoo shows it and stops).
    """
    config = dict(config or {})
    unknown = set(config) - {"dataset", "round", "tags", "ids", "sample", "directory"}
    if unknown:
        raise DataError("test generator config", f"unknown key(s) {', '.join(sorted(unknown))}")
    root = resolve_dataset_dir(config.get("dataset"), pack_root / "datasets" / "sample")
    dataset = load_dataset(root)
    round_id = str(config["round"]) if config.get("round") is not None else None
    directory_mode = str(config.get("directory") or "seed")
    if directory_mode not in DIRECTORY_MODES:
        raise DataError(
            "test generator config",
            f"directory {directory_mode!r} is not one of {', '.join(DIRECTORY_MODES)}",
        )
    sample_spec = SampleSpec.from_config(config["sample"]) if config.get("sample") is not None else None
    try:
        items, sample = round_items(
            dataset,
            round_id=round_id,
            tags=_list(config, "tags"),
            ids=_list(config, "ids"),
            sample=sample_spec,
        )
    except KeyError as exc:
        raise DataError("test generator config", str(exc.args[0])) from None
    if not items:
        raise DataError(
            root,
            f"no items selected (round {round_id!r}, tags {config.get('tags')!r}, ids {config.get('ids')!r})",
        )
    spec = ROUNDS.get(round_id) if round_id else None
    if spec is not None:
        for line in size_warnings(dataset, spec.id, len(items)):
            _warn(line)
    tests = []
    for item in items:
        grounding = condition_vars(item, dataset, directory_mode=directory_mode)
        chosen = (*grounding.directory, *grounding.full_content)
        metadata: dict[str, Any] = {
            "query_id": item.id,
            "jurisdiction": item.jurisdiction,
            "topic": item.topic,
            "tags": list(item.tags),
            "dataset": str(root),
            "directory_ids": [s.record.id for s in grounding.directory],
            "full_content_ids": [s.record.id for s in grounding.full_content],
            # Whose each record is, and its URL: the report names what C1 and C1.5 gave from the rows alone.
            # Apart, since a redacted file keeps the organisations only (a URL may be a line of an answer).
            "grounding_organizations": {s.record.id: s.record.organization for s in chosen},
            "grounding_urls": {s.record.id: s.record.url for s in chosen},
            "directory_tokens": grounding.directory_tokens,
            "full_content_tokens": grounding.full_content_tokens,
            "source_vars": [*SOURCE_VARS, *LABEL_VARS],
        }
        if grounding.directory_cut:
            metadata["directory_descriptions_cut"] = list(grounding.directory_cut)
        if directory_mode != "seed":  # absent: the methods document's directory (results files before it)
            metadata["directory"] = directory_mode
        if spec:
            metadata |= {
                "round": spec.id,
                "conditions": list(spec.conditions),
                "rubric": spec.rubric,
                "quotation": "scored" if spec.quotation_scored else "information",
                "citation_check": spec.citation_check,
            }
        if sample is not None:
            metadata["sample"] = sample.metadata()
        if isinstance(item, HighRiskItem):
            metadata |= {
                "risk_tier": item.risk_tier,
                "required_clarifying_questions": list(item.required_clarifying_questions),
                "failure_modes": list(item.failure_modes),
                "sme_variables": list(item.sme_variables),
            }
        vars_: dict[str, Any] = {
            "jurisdiction": item.jurisdiction,
            "question": item.question,
            "jkb_directory": grounding.jkb_directory,
            "jkb_full_content": grounding.jkb_full_content,
        }
        gaps = missing_grounding(item, grounding, spec)
        if gaps:
            for var, reason in gaps.items():
                vars_[var] = _var_source(pack_root / MISSING_GROUNDING_JS)
                _warn(f"{root}: {reason}: its {_condition(var)} cells will be ERROR rows")
            vars_["grounding_missing"] = json.dumps(gaps, ensure_ascii=False, sort_keys=True)
            metadata["grounding_missing"] = dict(gaps)
        tests.append({"vars": vars_, "metadata": metadata})
    return tests


def source_vars(metadata: dict[str, Any]) -> dict[str, str]:
    """The source vars of a test made here, rebuilt from its dataset as the eval rendered them: a results
    file keeps none (the beforeAll hook lifts them out of the vars). A block the item lacks is the
    placeholder a prompt that does not use it was given, ``(no grounding for …)``.

    Raises:
        DataError: the dataset is unreadable, or no longer holds the item.
    """
    root = str(metadata.get("dataset") or "")
    if not root:
        raise DataError(
            "results row", "its test names source vars but no dataset (testCase.metadata.dataset)"
        )
    blocks = _blocks(root, str(metadata.get("query_id") or ""), str(metadata.get("directory") or "seed"))
    named = metadata.get("grounding_missing")
    gaps: dict[str, Any] = named if isinstance(named, dict) else {}
    return {var: f"({gaps[var]})" if var in gaps else blocks[var] for var in SOURCE_VARS}


@lru_cache(maxsize=4)
def _dataset(root: str) -> Any:
    return load_dataset(root)


@lru_cache(maxsize=4096)
def _blocks(root: str, query_id: str, directory_mode: str = "seed") -> dict[str, str]:
    # A type: python entry is a fresh process per row: kept on disk while the dataset's files are unchanged.
    from grounding_eval.built_cache import cached_build

    # The default's key is the one written before directory modes existed: those cache entries stay valid.
    key = (str(Path(root).resolve()), query_id) + ((directory_mode,) if directory_mode != "seed" else ())
    blocks: dict[str, str] = cached_build(
        "source-vars", key, Path(root),
        lambda: _built_blocks(root, query_id, directory_mode), _block_rules(), accept=_are_blocks,
    )  # fmt: skip
    return blocks


def _are_blocks(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == set(SOURCE_VARS)
        and all(isinstance(v, str) for v in value.values())
    )


@lru_cache(maxsize=1)
def _block_rules() -> tuple[Path, ...]:
    """The code and templates that decide a test's blocks: the data package, the condition templates, this
    module, the file reader and the libraries that validate and render (their version files)."""
    from grounding_eval.built_cache import library_file

    package = Path(__file__).resolve().parents[1]
    return (
        *sorted((package / "data").glob("*.py")), package / "files.py", Path(__file__).resolve(),
        *sorted(p for p in PROMPTS_DIR.iterdir() if p.is_file()),
        library_file("jinja2", "__init__.py"), library_file("pydantic", "version.py"),
    )  # fmt: skip


def _built_blocks(root: str, query_id: str, directory_mode: str = "seed") -> dict[str, str]:
    dataset = _dataset(root)
    try:
        item = dataset.item(query_id)
    except KeyError:
        raise DataError(root, f"no item {query_id!r}: the source vars cannot be rebuilt") from None
    grounding = condition_vars(item, dataset, directory_mode=directory_mode)
    return {"jkb_directory": grounding.jkb_directory, "jkb_full_content": grounding.jkb_full_content}


def missing_grounding(item: Query, grounding: ConditionVars, spec: Round | None) -> dict[str, str]:
    """``{var: "no grounding for <condition>: <why>"}`` for each block of ``item`` that came out empty
    and that the round shows (every block when no round is named)."""
    gaps = {"jkb_directory": grounding.directory_gap, "jkb_full_content": grounding.full_content_gap}
    return {
        var: f"no grounding for {condition}: {gaps[var]}"
        for condition, var in _GROUNDING
        if gaps[var] and (spec is None or condition in spec.conditions)
    }


def _condition(var: str) -> str:
    return next(condition for condition, name in _GROUNDING if name == var)


def _var_source(path: Path) -> str:
    """A ``file://`` var naming ``path``, absolute (promptfoo resolves a var's path from the config's folder,
    which the generator does not know), with glob characters bracketed: promptfoo globs ``file://`` vars."""
    return "file://" + re.sub(r"([*?\[\]{}()])", r"[\1]", path.resolve().as_posix())


def _warn(line: str) -> None:
    # promptfoo logs a Python generator's stderr line starting with WARNING at its warn level.
    print(f"WARNING: grounding-eval: {line}", file=sys.stderr)


def _list(config: dict[str, Any], key: str) -> list[str] | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise DataError("test generator config", f"{key!r} must be a list")
    return [str(v) for v in value]
