"""Reading user files, with every failure turned into one :class:`DataError` line naming the file.

Every loader (directory, recorded answers, datasets) reads through here, so "file not found", "not
UTF-8 text" and "malformed YAML at line N" read the same wherever they come from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from grounding_eval.errors import DataError

__all__ = ["read_text", "read_yaml"]

# libyaml's safe loader when the wheel has it: several times faster, and every promptfoo call reloads.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_text(path: str | Path) -> str:
    """Return the file's UTF-8 text (a leading byte-order mark, as spreadsheets write, is dropped).

    Raises:
        DataError: the file is missing, a directory, unreadable or not UTF-8.
    """
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except IsADirectoryError:
        raise DataError(path, "is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise DataError(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror}") from None


def read_yaml(path: str | Path) -> Any:
    """Parse the file as YAML (safe loader only).

    Raises:
        DataError: as :func:`read_text`, or ``malformed YAML at line N: <problem>``.
    """
    text = read_text(path)
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise DataError(path, f"malformed YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
