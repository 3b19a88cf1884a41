"""The layers hold (issue 40): the import contracts in pyproject.toml are kept, and no library module is in an
import cycle, counting imports inside functions and under ``TYPE_CHECKING`` (grimp reads every import
statement). Both read the source, never import it: a second or two."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import grimp
from importlinter.application import use_cases
from importlinter.application.ports.reporting import Report
from importlinter.configuration import configure

import grounding_eval

REPO = Path(__file__).resolve().parents[1]
# eyecite's released code, vendored unchanged but for its imports (scripts/vendor_eyecite.py): its package
# and its modules import each other, as upstream's do; it imports nothing of ours.
VENDORED = "grounding_eval._vendor"


def _graph() -> grimp.ImportGraph:
    # cache_dir=None: grimp's default cache (.grimp_cache) could answer for files edited since.
    return grimp.build_graph("grounding_eval", cache_dir=None)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan), outside ``VENDORED``."""
    modules = sorted(m for m in graph.modules if not m.startswith(VENDORED))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative: a deep chain must not hit the recursion limit
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, successors = work[-1]
            for nxt in successors:
                if nxt.startswith(VENDORED):
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def _report() -> Report:
    # What lint-imports does first: the readers of pyproject.toml, then the contract types (a private step of
    # import-linter's, pinned at 2.17 in the dev extra).
    configure()
    use_cases._register_built_in_contract_types()
    report = use_cases.create_report(
        use_cases.read_user_options(str(REPO / "pyproject.toml")), cache_dir=None
    )
    assert not report.could_not_run
    return report


def test_the_import_contracts_are_kept() -> None:
    """``lint-imports``, as scripts/test runs it: every contract of ``[tool.importlinter]`` (the layers, the
    report never importing the promptfoo boundary, no cycles among siblings) is kept; a broken one is
    printed with its imports."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 3 kept, 0 broken." in done.stdout  # every contract ran (a misread config checks none)


def test_no_library_module_is_in_an_import_cycle() -> None:
    graph = _graph()
    assert len(graph.modules) > 100  # the whole package was read
    assert _cycles(graph) == []


def test_a_back_edge_is_caught() -> None:
    """The checks see a violation when there is one: an import from the report into the promptfoo boundary
    breaks the layers' neighbour rule and the report's own contract; one from the core vocabulary up to
    the boundary also closes a cycle, which both cycle checks find."""
    contracts = {contract.name: contract for contract, _ in _report().get_contracts_and_checks()}
    graph = _graph()
    graph.add_import(importer="grounding_eval.analysis.summary", imported="grounding_eval.promptfoo.worker")
    graph.add_import(importer="grounding_eval.errors", imported="grounding_eval.promptfoo.worker")
    broken = sorted(
        name for name, contract in contracts.items() if not contract.check(graph, verbose=False).kept
    )
    assert broken == sorted(contracts)
    assert any("grounding_eval.errors" in component for component in _cycles(graph))


def test_no_benchmark_imports_another_in_a_cycle() -> None:
    """The benchmarks import one another as scripts beside each other (``cold_start`` reads the benchmark
    answer): the same rule, over their import statements (functions' included)."""
    graph = grimp.ImportGraph()
    scripts = {path.stem: path for path in (REPO / "benchmarks").glob("*.py")}
    for name in scripts:
        graph.add_module(name)
    for name, path in scripts.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                imported = [node.module or ""]
            for other in imported:
                if other in scripts and other != name:
                    graph.add_import(importer=name, imported=other)
    assert graph.find_modules_directly_imported_by("cold_start")  # the reading works: it imports one
    assert _cycles(graph) == []


def test_the_package_is_the_one_under_test() -> None:
    """grimp reads the package Python imports: this checkout's, not another install's."""
    assert Path(grounding_eval.__file__).resolve().parent == REPO / "grounding_eval"
