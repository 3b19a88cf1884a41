"""Load the pack's promptfoo entry files (``assertions/*.py``) the way promptfoo does: by path, with
their folder on ``sys.path`` (the aliases import ``assertions/grounding.py``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def load_entry_point(file: str, function: str = "get_assert") -> Callable[..., Any]:
    """Return ``function`` of ``assertions/<file>.py``, imported from its path (not as a package)."""
    if str(REPO / "assertions") not in sys.path:  # as promptfoo's wrapper.py does
        sys.path.insert(0, str(REPO / "assertions"))
    spec = importlib.util.spec_from_file_location(f"entry_{file}", REPO / "assertions" / f"{file}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry: Callable[..., Any] = getattr(module, function)
    return entry
