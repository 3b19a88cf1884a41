"""Shared fixtures: the test directory and allowlist (never the shipped sample data), and the shipped configs'
offline promptfoo runs that several tests read (``shared_eval``); and each test's lane (``pytest -m unit``)."""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any

import pytest
import yaml

from grounding_eval.promptfoo.written_paths import WRITE_DIRS_ENV
from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources
from tests.promptfoo_runs import EvalRun, run_eval

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

LANES = ("unit", "golden", "e2e", "browser")


def _golden_rows() -> list[Any]:
    """Every row of every table under tests/golden/: a top-level list, or the lists a top-level mapping holds."""
    rows: list[Any] = []
    for path in sorted((REPO / "tests" / "golden").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        tables = data.values() if isinstance(data, dict) else [data]
        rows += [row for table in tables if isinstance(table, list) for row in table]
    return rows


# What starts another process: a test naming one of these (itself, in a test helper it calls or in a fixture) is e2e.
_PROCESS_NAMES = frozenset({"subprocess", "Popen", "run_eval", "_promptfoo", "shared_eval"})


def _code_names(code: CodeType) -> set[str]:
    """The global and attribute names a code object reads, with those of the functions defined inside it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names


def _function_names(function: Any, seen: set[int] | None = None) -> set[str]:
    """The names ``function`` reads, with those of the test helpers (functions and classes of ``tests.*``)
    it names, and theirs in turn."""
    seen = set() if seen is None else seen
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None or id(code) in seen:
        return set()
    seen.add(id(code))
    names = _code_names(code)
    module = inspect.getmodule(function)
    for name in list(names):
        called = getattr(module, name, None)
        if not isinstance(called, type | FunctionType) or called.__module__.split(".")[0] != "tests":
            continue
        helpers = (
            [m for m in vars(called).values() if inspect.isfunction(m)]
            if inspect.isclass(called)
            else [called]
        )
        for helper in helpers:
            names |= _function_names(helper, seen)
    return names


def _names(item: pytest.Item) -> set[str]:
    """What the test reads: its function's names and those of every fixture it uses."""
    names = _function_names(getattr(item, "function", None))
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    for definitions in fixtureinfo.name2fixturedefs.values() if fixtureinfo is not None else ():
        for definition in definitions:
            if definition.baseid:  # the project's own fixtures, not pytest's
                names |= _function_names(definition.func)
    return names


def _lane(item: pytest.Item, golden: list[Any]) -> str:
    """The one lane a test runs in, first rule that holds:
    browser — the test opens Chromium (it calls ``require_chromium``, tests/browser/viewer.py);
    e2e     — it carries the ``e2e`` marker, is in a ``*_e2e.py`` file, or starts a process (subprocess,
              promptfoo's ``run_eval``, ``shared_eval``), itself, through a test helper it calls or a fixture;
    golden  — one of its parameters is a row of a tests/golden/*.yaml table;
    unit    — everything else."""
    names = _names(item)
    if "require_chromium" in names:
        if item.get_closest_marker("e2e") is not None:
            raise pytest.UsageError(
                f"{item.nodeid}: a browser test is in the browser lane only, drop its e2e mark"
            )
        return "browser"
    fixtures = set(getattr(item, "fixturenames", ()))
    if (
        item.get_closest_marker("e2e") is not None
        or item.path.name.endswith("_e2e.py")
        or names & _PROCESS_NAMES
        or "shared_eval" in fixtures
    ):
        return "e2e"
    callspec = getattr(item, "callspec", None)
    if callspec is not None and any(
        isinstance(value, dict | list) and value in golden for value in callspec.params.values()
    ):
        return "golden"
    return "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets exactly one lane marker (``pytest -m unit``, ``bash scripts/test --lane unit``)."""
    golden = _golden_rows()
    for item in items:
        lane = _lane(item, golden)
        if lane != "e2e" or item.get_closest_marker("e2e") is None:
            item.add_marker(lane)


@pytest.fixture(scope="session", autouse=True)
def _session_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's own user cache folder (``XDG_CACHE_HOME``), never the person's ``~/.cache``: data caches
    built once are shared by the session's tests (and the promptfoo runs they start), nothing leaks between runs."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(folder))
        # The tests' configs write their audit files, queues and caches under the session's temporary folder,
        # outside the folder they run in: granted as a user grants a folder (grounding_eval/promptfoo/written_paths.py).
        mp.setenv(WRITE_DIRS_ENV, str(tmp_path_factory.getbasetemp()))
        yield folder


@pytest.fixture(autouse=True)
def _fresh_judge_replies(_session_cache_folder: Path) -> None:
    """No test reads a judge reply another test cached: the key holds the endpoint URL, and a stand-in judge on
    127.0.0.1 gets a port an earlier test's stand-in (scripted with other replies) may have had."""
    shutil.rmtree(_session_cache_folder / "grounding-eval" / "judge", ignore_errors=True)


@pytest.fixture(scope="session")
def directory() -> Directory:
    return load_directory(FIXTURES / "verifier" / "orgs.yaml")


@pytest.fixture(scope="session")
def resources() -> VerifierResources:
    """Offline resources over the test fixtures, with a small recorded liveness snapshot."""
    return load_resources(
        allowlist=FIXTURES / "verifier" / "allowlist.txt",
        orgs=FIXTURES / "verifier" / "orgs.yaml",
        liveness="offline",
        snapshot=FIXTURES / "verifier" / "liveness_snapshot.csv",
        cache_path=None,
    )


@pytest.fixture(scope="session")
def shared_eval(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], EvalRun]:
    """``shared_eval(config)``: the session's one offline promptfoo run of a shipped config (tests/promptfoo_runs.py)."""
    runs: dict[str, EvalRun] = {}

    def shared(config: str) -> EvalRun:
        if config not in runs:
            runs[config] = run_eval(config, tmp_path_factory.mktemp("eval-" + Path(config).stem))
        return runs[config]

    return shared
