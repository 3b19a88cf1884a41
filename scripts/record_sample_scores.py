"""Record or check every shipped config's verdicts, rescore and report (tests/fixtures/record/, named_scores.json).

Two records, from one offline run of each config:

- ``tests/fixtures/sample_rounds/named_scores.json``: each sample round's rows, pass, score and every
  named score (``tests/test_promptfoo_e2e.py`` compares them);
- ``tests/fixtures/record/``: the record every structural change is checked against (issue 40, step 0;
  what it holds and what is normalised: ``tests/record.py``) — for every shipped config and every study
  ``grounding-eval init`` writes, each row's pass, score, named scores, reasons and the metadata the
  pack writes, the same after ``grounding-eval rescore``, and ``report --json``; besides, ``report --json``
  of the results files kept as test fixtures and the generated JSON Schemas (``tests/test_record.py``
  compares them).

Either changes only on purpose: run this script, read what moved (``--check`` prints it), and say in the
commit which rows moved and why.

Usage::

    .venv/bin/python scripts/record_sample_scores.py [--check] [CONFIG ...]
    # CONFIG: configs/round3.yaml, promptfooconfig.yaml, init:3 (a study `init --round 3` writes) …;
    # default: every shipped config and every init study, and the fixtures' reports and the schemas

Each config runs through the pinned promptfoo offline, as the tests run it (``tests/promptfoo_runs.py``),
with a fresh user cache; an init study is written to a temporary folder and runs from there, on this
checkout. Write mode replaces the given configs' entries and files, each written atomically.

Exit status: 0 recorded, or no difference (``--check``); 1 a difference (``--check``, one line per moved
row, score or value); 2 a run that failed or a row promptfoo could not grade.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from grounding_eval.files import write_text_atomic  # noqa: E402
from tests import record  # noqa: E402
from tests.promptfoo_runs import run_eval  # noqa: E402
from tests.scores import sample_round_record  # noqa: E402

RECORD = REPO / "tests" / "fixtures" / "sample_rounds" / "named_scores.json"
FIXTURE_REPORTS = record.RECORD_DIR / "fixture_reports.json"
SCHEMAS = record.RECORD_DIR / "schemas.json"
Row = dict[str, Any]


def differences(config: str, before: list[Row], after: list[Row]) -> list[str]:
    """One line per row added or dropped, and per pass, score or named score that moved."""
    old = {(r["item_id"], r["condition"]): r for r in before}
    new = {(r["item_id"], r["condition"]): r for r in after}
    lines = [f"{config} {k[0]} {k[1]}: row dropped" for k in sorted(old.keys() - new.keys())]
    lines += [f"{config} {k[0]} {k[1]}: row added" for k in sorted(new.keys() - old.keys())]
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        where = f"{config} {key[0]} {key[1]}"
        lines += [f"{where}: {f} {a[f]!r} -> {b[f]!r}" for f in ("success", "score") if a[f] != b[f]]
        was, now = a["namedScores"], b["namedScores"]
        for name in sorted(was.keys() | now.keys()):
            if was.get(name) != now.get(name):
                lines.append(f"{where}: {name} {was.get(name, 'absent')} -> {now.get(name, 'absent')}")
    return lines


def every_config() -> list[str]:
    from grounding_eval.share.scaffold import STUDIES

    return [*record.SHIPPED, *(f"{record.INIT_PREFIX}{study}" for study in STUDIES)]


def _run(config: str, folder: Path) -> tuple[list[Row], dict[str, Any]] | str:
    """One offline run of ``config`` (or of the study ``init`` writes) in ``folder``: its rows and its
    record, or why it could not be recorded."""
    cwd, places = REPO, {str(REPO): "<repo>", str(folder): "<tmp>"}
    if config.startswith(record.INIT_PREFIX):
        from grounding_eval.share.scaffold import scaffold

        cwd = folder / "study"
        scaffold(cwd, config.removeprefix(record.INIT_PREFIX), None, force=False)
        (cwd / "node_modules").symlink_to(REPO / "node_modules")
        places[str(cwd)] = "<study>"
    run = run_eval("promptfooconfig.yaml" if cwd != REPO else config, folder, cwd=cwd)
    if run.returncode not in (0, 100) or not run.out.exists():
        return f"{config}: promptfoo exited {run.returncode}\n{run.tail()}"
    # A row promptfoo could not grade (failureReason 2) is a broken run, not a verdict to record.
    errors = [r for r in run.rows() if r.get("failureReason") == 2]
    if errors:
        return f"{config}: {len(errors)} rows errored, e.g. {errors[0].get('error')}"
    # Each test of the suite starts with no judge reply cached (tests/conftest.py): the rescore too.
    shutil.rmtree(Path(os.environ["XDG_CACHE_HOME"]) / "grounding-eval" / "judge", ignore_errors=True)
    return run.rows(), record.config_record(run.returncode, run.out, places, cwd)


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files; write nothing")
    parser.add_argument("configs", nargs="*", help="configs to run (default: every config and init study)")
    args = parser.parse_args(argv)
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        print("node_modules is missing: run scripts/install (npm ci) first", file=sys.stderr)
        return 2
    started = time.monotonic()
    recorded: dict[str, list[Row]] = _read(RECORD) or {}
    configs = args.configs or every_config()
    now: dict[str, list[Row]] = {}
    records: dict[Path, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, _session_env(Path(tmp)):
        for i, config in enumerate(configs):
            print(f"running {config}", file=sys.stderr)
            folder = Path(tmp) / str(i)
            folder.mkdir()
            ran = _run(config, folder)
            if isinstance(ran, str):
                print(ran, file=sys.stderr)
                return 2
            rows, records[record.record_file(config)] = ran
            if config in recorded:  # the sample rounds named_scores.json keeps
                now[config] = sample_round_record(rows)
        if not args.configs:
            records[FIXTURE_REPORTS] = record.fixture_reports()
            records[SCHEMAS] = record.schemas_record()
    if args.check:
        moved = [line for c in now for line in differences(c, recorded.get(c, []), now[c])]
        for path, data in records.items():
            was = _read(path)
            moved += (
                record.differences(path.name, was, data)
                if was is not None
                else [f"{path.name}: not recorded"]
            )
        if not args.configs:
            moved += [f"{p.name}: no config of this name" for p in sorted(record.RECORD_DIR.glob("*.json"))
                      if p not in records]  # fmt: skip
        print("\n".join(moved) if moved else f"no difference ({len(records)} records)")
        print(f"took {time.monotonic() - started:.0f} s", file=sys.stderr)
        return 1 if moved else 0
    # named_scores.json keeps the scores as first recorded (1 where Python now writes 1.0): rewritten
    # only when a row moved.
    rounds_moved = any(differences(c, recorded.get(c, []), now[c]) for c in now)
    if rounds_moved:
        write_text_atomic(RECORD, record.to_text({**recorded, **now}))
    record.RECORD_DIR.mkdir(exist_ok=True)
    for path, data in records.items():
        write_text_atomic(path, record.to_text(data))
    rounds = (
        f"wrote {RECORD.relative_to(REPO)} ({len(now)} configs)"
        if rounds_moved
        else "named_scores.json as it was"
    )
    print(f"{rounds}; wrote {len(records)} files in {record.RECORD_DIR.relative_to(REPO)} "
          f"in {time.monotonic() - started:.0f} s")  # fmt: skip
    return 0


@contextlib.contextmanager
def _session_env(tmp: Path) -> Iterator[None]:
    """The environment a test session gives its runs (tests/conftest.py): a user cache folder of its own,
    and its temporary folder granted for writing."""
    saved = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "GROUNDING_EVAL_WRITE_DIRS")}
    os.environ |= {"XDG_CACHE_HOME": str(tmp / "xdg-cache"), "GROUNDING_EVAL_WRITE_DIRS": str(tmp)}
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


if __name__ == "__main__":
    sys.exit(main())
