"""Where the pack's run-time data lives: one answer for every caller.

The rubrics, judge templates, generation prompts, JSON Schemas and sample datasets sit at the root of
the repository (``rubrics/``, ``prompts/``, ``datasets/``), where configs, tests and users expect them.
The wheel carries the same trees as package data under ``grounding_eval/_data/`` (pyproject's
``package-dir`` maps them without moving a file), laid out exactly as in the repository, so code joins
``pack_root() / "rubrics" / "round3.yaml"`` and never asks which of the two it runs from.

No fallback between the two: an installed package uses its own data, a checkout its own files, and a
needed file that is missing is a one-line :class:`~grounding_eval.errors.DataError` naming it.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from grounding_eval.errors import DataError

__all__ = ["VERSION", "pack_directory", "pack_file", "pack_root", "pack_version", "sha256_file"]

VERSION = "0.1.0"
"""grounding-eval's version: the one place it is written (pyproject.toml reads it from here)."""

_DATA = "_data"


@cache
def pack_root() -> Path:
    """The folder holding ``rubrics/``, ``prompts/`` and ``datasets/`` for this copy of grounding-eval.

    Installed from a wheel: ``grounding_eval/_data``, beside this module. From a checkout (an editable
    install or ``PYTHONPATH``): the repository root.

    The package's folder is this module's: :mod:`importlib.resources` would say the same for a package
    on a file system, and importing it costs each of promptfoo's fresh assertion processes about 5 ms.

    Raises:
        DataError: the package is not on a file system (a zip) or carries no data.
    """
    package = Path(__file__).parent
    if not Path(__file__).is_file():  # e.g. inside a zip: there is no folder to read data from
        raise DataError(
            str(package), "grounding-eval must be installed as files (not a zip) to read its data"
        )
    installed = package / _DATA
    if (installed / "rubrics").is_dir():
        return installed
    checkout = package.parent
    if (checkout / "rubrics").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout
    raise DataError(installed, "grounding-eval's data (rubrics, prompts, datasets) is missing: reinstall it")


def pack_file(*parts: str) -> Path:
    """A file or folder of the pack's data, e.g. ``pack_file("rubrics", "v3.yaml")``.

    Raises:
        DataError: it does not exist (named, with where the pack's data was looked for).
    """
    path = pack_root().joinpath(*parts)
    if not path.exists():
        raise DataError(path, "not in grounding-eval's data (missing from this install or checkout)")
    return path


def pack_directory() -> Path:
    """The organization directory of every state, DC and the territories (``datasets/directory``): the
    verifier's directory for a dataset without its own ``organizations.yaml``."""
    return pack_root() / "datasets" / "directory" / "organizations.yaml"


def pack_version() -> str:
    """grounding-eval's version (a constant: importing ``importlib.metadata`` would cost every
    assertion process about 25 ms)."""
    return VERSION


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
