"""The wheel's package list and data globs cover the tree; :mod:`grounding_eval.resources` finds the data."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.resources import pack_file, pack_root

REPO = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folder(package: str) -> Path:
    """Where setuptools takes ``package`` from (its own package-dir mapping, else the dotted path)."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        mapped = SETUPTOOLS["package-dir"].get(".".join(parts[:cut]))
        if mapped is not None:
            return REPO / mapped / Path(*parts[cut:])
    return REPO / Path(*parts)


def test_every_code_package_is_listed() -> None:
    """A new folder of modules under grounding_eval/ must be added to pyproject's explicit list."""
    on_disk = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "grounding_eval").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(on_disk - set(SETUPTOOLS["packages"])) == []


def test_every_data_file_is_matched() -> None:
    """Every file of the mapped data folders is matched by its package's globs (none silently left out)."""
    unmatched = []
    for package in SETUPTOOLS["packages"]:
        if not package.startswith("grounding_eval._data"):
            continue
        folder = _folder(package)
        globs = SETUPTOOLS["package-data"].get(package, [])
        for path in folder.iterdir():
            if (
                path.is_file()
                and path.suffix not in (".py", ".pyc")
                and not any(fnmatch(path.name, g) for g in globs)
            ):
                unmatched.append(str(path.relative_to(REPO)))
    assert unmatched == []


def test_checkout_pack_root_is_the_repository() -> None:
    assert pack_root() == REPO
    assert pack_file("rubrics", "round3.yaml") == REPO / "rubrics" / "round3.yaml"


def test_missing_pack_file_is_one_line() -> None:
    with pytest.raises(DataError) as caught:
        pack_file("rubrics", "v99.yaml")
    assert caught.value.one_line() == (
        f"{REPO}/rubrics/v99.yaml: not in grounding-eval's data (missing from this install or checkout)"
    )
