"""What installing the pack put into the user's Python environment that is not the pack's to put there.

citeurl (12.0.4, every release since 11) ships its own test suite as a top-level ``tests`` package (so
does fast-diff-match-patch, which eyecite's PyPI release requires; the pack vendors eyecite without it,
issue 42, but a user's environment may still hold it). Installed, it sits in
``site-packages/tests/__init__.py``: a *regular* package, which wins over a user's own ``tests/`` when
that is a namespace package (no ``__init__.py``) wherever it lies on ``sys.path``, so ``import
tests.helpers`` breaks in the user's project. No fixed release exists and no other library reads
citations as citeurl does, so the pack removes those files after installing (``grounding-eval doctor --fix``,
which ``scripts/install`` runs): only the files each distribution's own ``RECORD`` lists under ``tests/``,
then the folders left empty. Only installed wheels are read — a ``.dist-info`` folder with a ``RECORD``,
inside the environment's own site-packages (``sysconfig`` purelib and platlib) — and only files inside that
folder are touched: an ``.egg-info`` in the current folder (a user's own project, whose ``SOURCES.txt``
lists its ``tests/``) is never read, so the fix cannot delete a user's files.
Neither library imports its tests (measured: no ``import tests`` in either, the pack's whole
suite passes without them); a reinstall of either puts them back, and the check says so.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "COMMANDS",
    "ForeignPackage",
    "add_commands",
    "foreign_packages",
    "remove_foreign",
    "run",
    "site_folders",
]

COMMANDS = frozenset({"doctor"})

_OWN = "grounding-eval"


@dataclass(frozen=True)
class ForeignPackage:
    """A distribution that installed a top-level package by a name nobody's library should take."""

    distribution: str
    version: str
    package: str
    root: Path  # the package's folder
    files: tuple[Path, ...]  # the files its RECORD lists under the package that are present


def site_folders() -> list[str]:
    """This environment's site-packages (``sysconfig`` purelib and platlib), each once."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(os.path.realpath(paths[k]) for k in ("purelib", "platlib")))


def foreign_packages(
    names: Iterable[str] = ("tests",), path: list[str] | None = None
) -> list[ForeignPackage]:
    """Every installed wheel (but grounding-eval) whose ``RECORD`` lists files under a top-level package in
    ``names`` that are present, read with :mod:`importlib.metadata` (``path``: the site-packages folders
    to read; this environment's by default, :func:`site_folders`).

    Only a ``.dist-info`` folder with a ``RECORD`` that sits directly in one of those folders counts, and
    only the listed files that resolve inside that folder: never an ``.egg-info`` (its ``SOURCES.txt``
    lists a project's own sources) nor anything in the current folder.
    """
    from importlib import metadata

    wanted = set(names)
    folders = [Path(os.path.realpath(p)) for p in (site_folders() if path is None else path)]
    found: list[ForeignPackage] = []
    for dist in metadata.distributions(path=[str(f) for f in folders]):
        where = getattr(dist, "_path", None)  # PathDistribution: its metadata folder
        if where is None or not str(where).endswith(".dist-info") or dist.read_text("RECORD") is None:
            continue
        site = Path(os.path.realpath(Path(str(where)).parent))
        if site not in folders:
            continue
        name = str(dist.metadata["Name"] or "")
        if name.lower().replace("_", "-") == _OWN:
            continue
        by_package: dict[str, list[Path]] = {}
        for file in dist.files or ():
            top = file.parts[0] if file.parts else ""
            if top in wanted:
                located = Path(os.path.realpath(str(dist.locate_file(file))))
                if located.is_relative_to(site / top) and located.exists():
                    by_package.setdefault(top, []).append(located)
        for package, files in sorted(by_package.items()):
            found.append(
                ForeignPackage(name, str(dist.version), package, site / package, tuple(sorted(files)))
            )
    return found


def remove_foreign(found: Iterable[ForeignPackage]) -> list[str]:
    """Delete the listed files, then each folder under the package they leave empty; one line per
    distribution saying what went."""
    lines = []
    for package in found:
        folders: set[Path] = set()
        for file in package.files:
            file.unlink(missing_ok=True)
            folders.update(p for p in file.parents if p.is_relative_to(package.root))
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):  # not empty: a file no RECORD lists stays, and its folder
                os.rmdir(folder)
        lines.append(
            f"removed {len(package.files)} files of {package.distribution} {package.version}'s "
            f"top-level {package.package!r} package"
        )
    return lines


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Register ``doctor``."""
    doctor = sub.add_parser(
        "doctor", help="check this Python environment for packages a dependency installed by a common name"
    )
    doctor.add_argument("--fix", action="store_true", help="remove them (only the files their RECORD lists)")


def run(args: argparse.Namespace) -> int:
    """``doctor``: 0 when the environment is clean (or was cleaned with ``--fix``), 1 otherwise."""
    found = foreign_packages()
    if args.fix:
        for line in remove_foreign(found):
            print(line)
        found = foreign_packages()
    for package in found:
        print(
            f"{package.distribution} {package.version} installed a top-level {package.package!r} package "
            f"({len(package.files)} files): it hides your own tests/ namespace package; "
            "grounding-eval doctor --fix removes it"
        )
    if not found:
        print("OK: no dependency installed a top-level 'tests' package")
    return 1 if found else 0
