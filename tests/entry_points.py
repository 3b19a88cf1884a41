"""Load Python files by path, as their hosts do: the pack's promptfoo entry files (``assertions/*.py``,
with their folder on ``sys.path``: the aliases import ``assertions/grounding.py``), and scripts, benchmarks
and hooks that are not part of a package."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def load_entry_point(file: str, function: str = "get_assert") -> Callable[..., Any]:
    """Return ``function`` of ``assertions/<file>.py``, imported from its path (not as a package)."""
    if str(REPO / "assertions") not in sys.path:  # as promptfoo's wrapper.py does
        sys.path.insert(0, str(REPO / "assertions"))
    entry: Callable[..., Any] = getattr(
        load_file(f"entry_{file}", REPO / "assertions" / f"{file}.py"), function
    )
    return entry


def load_file(name: str, path: Path) -> ModuleType:
    """Import the file at ``path`` as module ``name``, registered in ``sys.modules`` (a dataclass in it
    looks its module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
