"""Was a promptfoo run complete? The rule behind ``scripts/demo``'s "exit 100 is success".

promptfoo exits 100 both when a graded answer failed (the sample's answers fail on purpose) and when
the run was cut short — a killed node process still writes the rows it has, with errors on the rest. So
100 counts as success only when the results file is complete: every test × prompt × provider row is
there exactly once, none ended in an error, and promptfoo's own error count is 0.

Usage: ``python -m grounding_eval.demo_check RESULTS.json`` — exit 0 when complete, 1 when not (one line
per problem), 2 when the file cannot be read. Expected tests are counted from the results file's own
``config.tests``: an inline test is one, a ``generate_tests`` entry is as many as it generates now (with
the same ``GROUNDING_EVAL_DATASET``), times ``--repeat`` when the run was repeated.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "problems"]

_GENERATOR = "generate.py:generate_tests"


def problems(results: dict[str, Any], *, pack_root: Path) -> list[str]:
    """Everything that makes ``results`` (a promptfoo ``-o`` JSON) an incomplete run; empty when complete."""
    body = results.get("results")
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return ["not a promptfoo results file (no results.results list)"]
    rows = [r for r in body["results"] if isinstance(r, dict)]
    listed = body.get("prompts")
    prompts: list[Any] = listed if isinstance(listed, list) else []
    out: list[str] = []
    errors = (body.get("stats") or {}).get("errors")
    if errors:
        out.append(f"promptfoo counted {errors} error(s)")
    errored = [r for r in rows if r.get("failureReason") not in (0, 1)]
    if errored:
        first = str(errored[0].get("error") or "")[:120]
        out.append(f"{len(errored)} row(s) ended in an error, e.g. {first!r}")
    try:
        tests = _expected_tests(results.get("config") or {}, pack_root)
    except Exception as exc:  # a config we cannot count from: say so, never assume complete
        return [*out, f"cannot count the expected rows: {type(exc).__name__}: {exc}"]
    repeat = int((results.get("runtimeOptions") or {}).get("repeat") or 1)
    expected = tests * len(prompts) * repeat
    cells = {(r.get("testIdx"), r.get("promptIdx")) for r in rows}
    if len(rows) != expected or len(cells) != len(rows) // repeat:
        out.append(f"{len(rows)} row(s) written, expected {expected} ({tests} tests × {len(prompts)} prompts"
                   f"{f' × {repeat} repeats' if repeat > 1 else ''})")  # fmt: skip
    return out


def _expected_tests(config: dict[str, Any], pack_root: Path) -> int:
    from grounding_eval.promptfoo.round_tests import generate_tests

    tests = config.get("tests") or []
    if not isinstance(tests, list):
        raise ValueError("config.tests is not a list")
    count = 0
    for test in tests:
        path = test.get("path") if isinstance(test, dict) else None
        if isinstance(path, str) and path.endswith(_GENERATOR):
            count += len(generate_tests(test.get("config") or {}, pack_root=pack_root))
        elif isinstance(path, str):
            raise ValueError(f"tests from {path} cannot be counted")
        else:
            count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    """Check one results file; print one line per problem."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m grounding_eval.demo_check RESULTS.json", file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        print(f"{path}: cannot read results: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 2
    if not isinstance(results, dict):
        print(f"{path}: not a promptfoo results file", file=sys.stderr)
        return 2
    found = problems(results, pack_root=Path(__file__).resolve().parents[1])
    for problem in found:
        print(f"{path}: incomplete run: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
