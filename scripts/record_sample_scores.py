"""Record or check every sample round's verdicts and named scores (tests/fixtures/sample_rounds/named_scores.json).

``tests/test_promptfoo_e2e.py`` compares each shipped sample-round config's rows with this file: a row's
pass, score and every named score. The file changes only on purpose: run this script, read what moved
(``--check`` prints it), and say in the commit which rows moved and why.

Usage::

    .venv/bin/python scripts/record_sample_scores.py [--check] [CONFIG ...]   # default: every config in the file

Each config runs through the pinned promptfoo offline, as the tests run it (``tests/promptfoo_runs.py``).
Write mode replaces the given configs' entries and writes the file atomically.

Exit status: 0 recorded, or no difference (``--check``); 1 a difference (``--check``, one line per moved
row or score); 2 a run that failed or a row promptfoo could not grade.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.promptfoo_runs import run_eval  # noqa: E402
from tests.scores import sample_round_record  # noqa: E402

RECORD = REPO / "tests" / "fixtures" / "sample_rounds" / "named_scores.json"
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


def write_atomically(path: Path, data: dict[str, list[Row]]) -> None:
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file; write nothing")
    parser.add_argument("configs", nargs="*", help="configs to run (default: every config in the file)")
    args = parser.parse_args(argv)
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        print("node_modules is missing: run scripts/install (npm ci) first", file=sys.stderr)
        return 2
    recorded: dict[str, list[Row]] = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    configs = args.configs or sorted(recorded)
    now: dict[str, list[Row]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, config in enumerate(configs):
            print(f"running {config}", file=sys.stderr)
            folder = Path(tmp) / str(i)
            folder.mkdir()
            run = run_eval(config, folder)
            if run.returncode not in (0, 100) or not run.out.exists():
                print(f"{config}: promptfoo exited {run.returncode}\n{run.tail()}", file=sys.stderr)
                return 2
            # A row promptfoo could not grade (failureReason 2) is a broken run, not a verdict to record.
            errors = [r for r in run.rows() if r.get("failureReason") == 2]
            if errors:
                print(f"{config}: {len(errors)} rows errored, e.g. {errors[0].get('error')}", file=sys.stderr)
                return 2
            now[config] = sample_round_record(run.rows())
    if args.check:
        moved = [line for c in configs for line in differences(c, recorded.get(c, []), now[c])]
        print("\n".join(moved) if moved else f"no difference ({len(configs)} configs)")
        return 1 if moved else 0
    write_atomically(RECORD, {**recorded, **now})
    print(f"wrote {RECORD.relative_to(REPO)} ({len(configs)} configs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
