"""Was a promptfoo run complete? The rule behind ``scripts/demo``'s "exit 100 is success", for any run.

promptfoo exits 100 both when a graded answer failed (the sample's answers fail on purpose) and when
the run was cut short — a killed node process still writes the rows it has, with errors on the rest. So
100 counts as success only when the results file is complete: every expected row is there exactly once,
none ended in an error, and promptfoo's own error count is 0.

The expected rows come from the config the results file records, counted as promptfoo expands it: each
test (inline, read from ``tests: file://…`` CSV / JSON / JSONL / YAML files or globs, or made by a Python
``generate_tests`` generator, called again now with its config) times its variable combinations (a var
holding a list of strings is one row per string), times its ``repeat`` (the test's ``options.repeat``, else
the run's ``--repeat``), times the prompt × provider columns. File paths are relative to the config's
folder, which the results file does not record: pass ``--config`` for a run whose tests name files. What
cannot be counted here (JavaScript generators, spreadsheets, remote datasets, scenarios, per-test
provider or prompt filters) is reported as a problem, never assumed complete. promptfoo does not record
its ``--filter-*`` options in the results file, so a filtered run reads as an incomplete one.

Usage: ``python -m grounding_eval.demo_check [--config CONFIG] [--summary] RESULTS.json`` — exit 0 when
complete (``--summary`` then prints one line: rows, passes, failures, errors), 1 when not (one line per
problem), 2 when a file cannot be read. Run it from the folder promptfoo ran in (a generator's relative
paths are read from there, as promptfoo read them).
"""

from __future__ import annotations

import argparse
import csv
import glob
import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from grounding_eval.results_file import FAILED_ASSERT, FAILED_ERROR

__all__ = ["Expected", "check", "expected_rows", "main", "problems", "summary"]

_JS = (".js", ".cjs", ".mjs", ".ts", ".mts", ".cts")


class _Uncountable(Exception):
    """The config's tests cannot be counted here: the reason, in one line."""


@dataclass(frozen=True)
class Expected:
    """How many rows a run's config asks for, and how."""

    tests: int  # after promptfoo's variable expansion
    runs: int  # promptfoo's test indexes: each test times its repeat
    prompts: int
    providers: int

    @property
    def rows(self) -> int:
        return self.runs * self.prompts * self.providers

    def __str__(self) -> str:
        parts = [_count(self.tests, "test"), _count(self.prompts, "prompt")]
        if self.providers > 1:
            parts.append(_count(self.providers, "provider"))
        if self.runs != self.tests and self.runs % self.tests == 0:
            parts.append(_count(self.runs // self.tests, "repeat"))
        elif self.runs != self.tests:
            parts[0] += f" ({self.runs} with their repeats)"
        return " × ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def problems(results: dict[str, Any], *, config_dir: Path | None) -> list[str]:
    """Everything that makes ``results`` (a promptfoo ``-o`` JSON) an incomplete run; empty when complete.

    ``config_dir`` is the folder of the run's config (its ``file://`` test paths are relative to it);
    ``None`` when unknown, which is a problem only for tests that name files.
    """
    return check(results, config_dir=config_dir)[0]


def check(results: dict[str, Any], *, config_dir: Path | None) -> tuple[list[str], Expected | None]:
    """:func:`problems`, and the expected rows when they could be counted."""
    body = results.get("results")
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return ["not a promptfoo results file (no results.results list)"], None
    rows = [r for r in body["results"] if isinstance(r, dict)]
    out: list[str] = []
    errors = (body.get("stats") or {}).get("errors")
    if errors:
        out.append(f"promptfoo counted {errors} error(s)")
    errored = [r for r in rows if r.get("failureReason") not in (0, FAILED_ASSERT)]
    if errored:
        first = str(errored[0].get("error") or "")[:120]
        out.append(f"{len(errored)} row(s) ended in an error, e.g. {first!r}")
    try:
        expected = expected_rows(results, config_dir=config_dir)
    except _Uncountable as exc:  # never assume complete
        return [*out, f"cannot count the expected rows: {exc}"], None
    except Exception as exc:  # a generator or tests file that fails now: say so, never assume complete
        return [*out, f"cannot count the expected rows: {type(exc).__name__}: {str(exc)[:200]}"], None
    cells = Counter((r.get("testIdx"), r.get("promptIdx")) for r in rows)
    if len(rows) != expected.rows or len(cells) != len(rows):
        out.append(f"{len(rows)} row(s) written, expected {expected.rows} ({expected})")
    return out, expected


def expected_rows(results: dict[str, Any], *, config_dir: Path | None) -> Expected:
    """The rows the recorded config asks for (see the module docstring for what is counted).

    Raises:
        _Uncountable: tests this module cannot count, with the reason.
    """
    config = results.get("config") or {}
    if not isinstance(config, dict):
        raise _Uncountable("the results file records no config")
    if config.get("scenarios"):
        raise _Uncountable("the config uses scenarios")
    body = results.get("results") or {}
    columns = len([p for p in body.get("prompts") or [] if isinstance(p, dict)])  # prompt × provider
    listed = config.get("providers")
    providers = len(listed) if isinstance(listed, list) and listed and columns % len(listed) == 0 else 1
    runtime = results.get("runtimeOptions") or {}
    repeat = _repeat(runtime.get("repeat"), 1)
    default: dict[str, Any] = config["defaultTest"] if isinstance(config.get("defaultTest"), dict) else {}
    tests = list(_read_tests(config.get("tests"), config_dir)) or [{}]
    count = runs = 0
    for test in tests:
        if not isinstance(test, dict):
            raise _Uncountable(f"a test that is not a mapping ({type(test).__name__})")
        if test.get("providers") or test.get("prompts"):
            raise _Uncountable("a test limits its providers or prompts")
        options = {**(default.get("options") or {}), **(test.get("options") or {})}
        variables = {**(default.get("vars") or {}), **(test.get("vars") or {})}
        combos = 1 if options.get("disableVarExpansion") else _combinations(variables, config_dir)
        count += combos
        runs += combos * _repeat(options.get("repeat"), repeat)
    return Expected(tests=count, runs=runs, prompts=columns // providers, providers=providers)


def _repeat(value: Any, fallback: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else fallback


def _combinations(variables: dict[str, Any], config_dir: Path | None) -> int:
    """promptfoo's variable expansion: a list whose first item is a string is one value per item; a
    ``file://`` glob is one value per file it matches."""
    count = 1
    for name, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            pattern = value.removeprefix("file://")
            if any(ch in pattern for ch in "*?["):
                matches = glob.glob(str(_resolve(pattern, config_dir, f"var {name}")))
                if not matches:
                    raise _Uncountable(f"var {name}: no file matches {pattern}")
                count *= len(matches)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            count *= len(value)
    return count


def _resolve(path: str, config_dir: Path | None, what: str) -> Path:
    if Path(path).is_absolute():
        return Path(path)
    if config_dir is None:
        raise _Uncountable(f"{what} is relative to the config's folder: pass --config CONFIG")
    return config_dir / path


def _read_tests(spec: Any, config_dir: Path | None) -> Iterator[Any]:
    """The tests of ``config.tests`` as promptfoo reads them (``readTests``)."""
    if spec is None:
        return
    if isinstance(spec, str):
        yield from (
            _glob(spec, config_dir) if spec.endswith(("yaml", "yml")) else _file(spec, None, config_dir)
        )
    elif isinstance(spec, dict) and isinstance(spec.get("path"), str):
        yield from _file(spec["path"], spec.get("config"), config_dir)
    elif isinstance(spec, list):
        for entry in spec:
            if isinstance(entry, str):
                path, _ = _split_function(entry.removeprefix("file://"))
                if path.endswith((*_JS, ".py", ".xlsx", ".xls")) or ":" in entry.removeprefix("file://"):
                    yield from _file(entry, None, config_dir)
                else:
                    yield from _glob(entry, config_dir)
            elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield from _file(entry["path"], entry.get("config"), config_dir)
            else:
                yield entry
    else:
        raise _Uncountable(f"config.tests is a {type(spec).__name__}")


def _split_function(path: str) -> tuple[str, str | None]:
    colon = path.rfind(":")
    return (path[:colon], path[colon + 1 :]) if colon > 1 else (path, None)


def _glob(spec: str, config_dir: Path | None) -> Iterator[Any]:
    if "://" in spec.removeprefix("file://"):
        raise _Uncountable(f"tests from {spec} (remote)")
    pattern = spec.removeprefix("file://")
    for match in sorted(glob.glob(str(_resolve(pattern, config_dir, f"tests {spec}")))):
        if match.endswith((".yaml", ".yml", ".json")):
            yield from _listed(_parse(Path(match)))
        elif match.endswith(".jsonl"):
            yield from _jsonl(Path(match))
        else:
            yield from _file(match, None, config_dir)


def _file(spec: str, config: Any, config_dir: Path | None) -> Iterator[Any]:
    """One tests file or generator (promptfoo's ``readStandaloneTestsFile``)."""
    if "://" in spec.removeprefix("file://"):
        raise _Uncountable(f"tests from {spec} (remote)")
    path, function = _split_function(spec.removeprefix("file://"))
    file = _resolve(path, config_dir, f"tests {spec}")
    suffix = file.suffix.lower()
    if suffix in _JS:
        raise _Uncountable(f"tests from {spec} (a JavaScript generator)")
    if suffix == ".py":
        yield from _generated(file, function or "generate_tests", config)
    elif suffix == ".csv":
        with file.open(encoding="utf-8-sig", newline="") as handle:
            for row in csv.DictReader(handle):  # a row is one test, its columns its vars
                if any((v or "").strip() for v in row.values()):
                    yield {"vars": row}
    elif suffix in (".json", ".yaml", ".yml"):
        yield from _listed(_parse(file))
    elif suffix == ".jsonl":
        yield from _jsonl(file)
    else:
        raise _Uncountable(f"tests from {spec} ({suffix or 'no extension'} files are not read here)")


def _parse(file: Path) -> Any:
    text = file.read_text(encoding="utf-8")
    return json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)


def _listed(document: Any) -> list[Any]:
    return document if isinstance(document, list) else [] if document is None else [document]


def _jsonl(file: Path) -> Iterator[Any]:
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def _generated(file: Path, function: str, config: Any) -> list[Any]:
    """The tests a Python generator makes now, called as promptfoo calls it (``fn(config)``, or ``fn()``)."""
    spec = importlib.util.spec_from_file_location(f"_demo_check_generator_{abs(hash(file))}", file)
    if spec is None or spec.loader is None:
        raise _Uncountable(f"{file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generate = getattr(module, function, None)
    if not callable(generate):
        raise _Uncountable(f"{file}: no function {function}")
    made = generate() if config is None else generate(config)
    if not isinstance(made, list):
        raise _Uncountable(f"{file}:{function} returned a {type(made).__name__}, not a list of tests")
    return made


def summary(results: dict[str, Any], path: Path, expected: Expected) -> str:
    """One line: the rows, how they came out, and where the file is (for a complete run)."""
    rows = [r for r in results["results"]["results"] if isinstance(r, dict)]
    passed = sum(1 for r in rows if r.get("success") is True)
    errors = sum(1 for r in rows if r.get("failureReason") == FAILED_ERROR)
    return (
        f"{len(rows)} rows ({expected}): {passed} passed, {len(rows) - passed - errors} failed, "
        f"{errors} errors; results in {path}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Check one results file; print one line per problem (or, with ``--summary``, the summary)."""
    parser = argparse.ArgumentParser(prog="python -m grounding_eval.demo_check", description=__doc__)
    parser.add_argument("results", metavar="RESULTS.json", type=Path)
    parser.add_argument("--config", metavar="CONFIG", type=Path, help="the config the run used")
    parser.add_argument("--summary", action="store_true", help="print rows, passes, failures, errors")
    args = parser.parse_args(argv)
    path: Path = args.results
    loaded = [_load(path, json.loads)]
    if args.config is not None:
        loaded.append(_load(args.config, yaml.safe_load))
    if any(isinstance(doc, _Unreadable) for doc in loaded):
        for doc in loaded:
            if isinstance(doc, _Unreadable):
                print(doc.line, file=sys.stderr)
        return 2
    results = loaded[0]
    if not isinstance(results, dict):
        print(f"{path}: not a promptfoo results file", file=sys.stderr)
        return 2
    config_dir = None
    if args.config is not None:
        config_dir = args.config.resolve().parent
        recorded = (results.get("config") or {}).get("tests")
        written = loaded[1].get("tests") if isinstance(loaded[1], dict) else None
        if written != recorded:
            print(f"{path}: {args.config} is not this run's config (its tests differ)", file=sys.stderr)
            return 1
    found, expected = check(results, config_dir=config_dir)
    for problem in found:
        print(f"{path}: incomplete run: {problem}", file=sys.stderr)
    if not found and expected is not None and args.summary:
        print(summary(results, path, expected))
    return 1 if found else 0


@dataclass(frozen=True)
class _Unreadable:
    line: str


def _load(path: Path, parse: Any) -> Any:
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError, yaml.YAMLError) as exc:
        return _Unreadable(f"{path}: cannot read: {type(exc).__name__}: {str(exc)[:200]}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
