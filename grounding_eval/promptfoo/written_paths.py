"""Where a config may have the pack write: inside the folder you run in, your cache folder, or a folder you name.

A config is code from whoever wrote the study (docs/explanation/security.md, "A study you received"), and a
results file re-graded by ``rescore`` carries its rows' assertion configs. The paths such a config names for
the files the pack writes — ``audit_dir``, ``review_queue``, ``human_queue``, ``cache_dir`` (the judges) and
``liveness_cache`` (the verifier) — are checked here, once, for every entry: the path, resolved as the pack
would open it (relative to the folder you run in, ``..`` applied, links followed), must lie inside that
folder, inside your cache folder (:func:`grounding_eval.user_cache.cache_root`), or inside a folder you list
in ``$GROUNDING_EVAL_WRITE_DIRS`` (absolute folders, separated by ``os.pathsep``). Anything else — ``/tmp/x``
from a received config, ``../../.ssh``, ``results`` linked to your home folder — is refused in one line
naming the setting, before anything is written. Paths you give yourself (``--review-queue``, ``--cache-dir``,
``--liveness-cache`` on the command line) are yours and not checked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from grounding_eval.errors import DataError, clip

__all__ = ["WRITE_DIRS_ENV", "WRITTEN_KEYS", "outside_reason", "written_path"]

WRITE_DIRS_ENV: Final = "GROUNDING_EVAL_WRITE_DIRS"
WRITTEN_KEYS: Final = ("audit_dir", "review_queue", "human_queue", "cache_dir", "liveness_cache")
"""The config settings that name a file or folder the pack writes."""


def written_path(config: Mapping[str, Any], key: str, default: str | Path) -> Path:
    """The path ``config[key]`` names (``default`` when unset), once it is allowed (see the module docstring).

    Raises:
        DataError: the path lies outside every allowed folder (one line naming ``config.<key>``).
    """
    value = config.get(key)
    if value is None or value == "":
        return Path(default)
    path = Path(str(value)).expanduser()
    why = outside_reason(path)
    if why:
        raise DataError(f"config.{key}", f"{clip(str(value), 80)} {why}")
    return path


def outside_reason(path: Path) -> str | None:
    """Why a config may not have the pack write at ``path``, or ``None`` when it may."""
    where = (Path.cwd() / path).resolve()
    if any(where.is_relative_to(root) for root in _allowed()):
        return None
    return (
        f"is outside the folder you run in ({Path.cwd()}) and your cache folder: a config may not have the pack "
        f"write anywhere else on your disk; to allow a folder, list it in ${WRITE_DIRS_ENV}"
    )


def _allowed() -> list[Path]:
    from grounding_eval.user_cache import cache_root

    granted = [Path(p) for p in os.environ.get(WRITE_DIRS_ENV, "").split(os.pathsep) if os.path.isabs(p)]
    return [p.resolve() for p in (Path.cwd(), cache_root(), *granted)]
