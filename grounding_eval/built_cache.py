"""A value built from a dataset's files, kept on disk and used again only while those files are unchanged.

A ``type: python`` entry is a fresh process per row, and when the beforeAll hook has lifted a test's
source vars out of its vars, each such process rebuilt them from the dataset: loading and validating it
(pydantic) cost ~100 ms a process. Here the built value is kept as JSON with what it was built from —
the SHA-256 of every file the build read (:func:`grounding_eval.files.recording_reads`) and the names in
each folder they lie in and in the dataset folder (so a file the build would now also read, such as a
new article, is noticed) — and used again only when all of these are as recorded; otherwise it is built
again. The code that builds the value is part of the entry's name.

The list of files read is the entry's own, so it is believed only because this user's processes wrote
it: entries live in the user's cache folder, never the study's, and are sealed with this user's secret
(:mod:`grounding_eval.user_cache`). A planted entry (an empty list of files, a value of its own), one
copied from another machine or edited is a miss. Keyed, never trusted, as the verifier's resource cache
(:mod:`grounding_eval.verifier.resource_cache`): a bad entry costs a rebuild, never a wrong value; entries
are written whole (temporary file, rename); a folder that cannot be written is not used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from grounding_eval.files import read_bytes, recording_reads
from grounding_eval.user_cache import cache_root, read_sealed, write_sealed

__all__ = ["cached_build", "library_file"]

_FORMAT: Final = 2  # 2: sealed entries in the user's cache folder


def cached_build(
    kind: str,
    name: Iterable[str],
    folder: Path,
    build: Callable[[], Any],
    rules: Iterable[Path],
    *,
    accept: Callable[[Any], bool],
    cache_dir: Path | None = None,
) -> Any:
    """``build()`` (a JSON value), or what it returned before from the same files, folder and rules.

    ``name`` says which value (e.g. the dataset folder and an item id); ``folder`` is the one whose names
    are checked besides the folders of the files read; ``rules`` are the source files whose code decides
    the value; ``accept`` says whether a stored value has the shape ``build`` returns; ``cache_dir`` is
    the user's cache folder (:func:`~grounding_eval.user_cache.cache_root`) unless a test names another.
    """
    digest = hashlib.sha256()
    for part in (str(_FORMAT), kind, *name):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for rule in rules:
        digest.update(_file_digest(rule).encode() + b"\0")
    name = f"{kind}-{digest.hexdigest()}"
    entry = (cache_dir or cache_root()) / f"{name[: len(kind) + 41]}.json"
    try:
        stored = read_sealed(entry, "built", name)  # None: none, or not one this user's processes wrote
        if stored is not None and _unchanged(stored["files"], stored["folders"]) and accept(stored["value"]):
            return stored["value"]
    except Exception:
        pass  # an entry of another shape: build
    with recording_reads() as reads:
        value = build()
    files = {str(path): _file_digest(path) for path in reads}
    folders = {str(f): _names(f) for f in {folder, *(Path(path).parent for path in files)}}
    write_sealed(entry, "built", name, {"files": files, "folders": folders, "value": value})
    return value


def library_file(package: str, name: str) -> Path:
    """A file of an installed package (its version file, for a key), found without importing the package;
    a package that is not installed gives a path that does not exist, and so a mark of its own."""
    spec = importlib.util.find_spec(package)
    folders = spec.submodule_search_locations if spec else None
    return Path(next(iter(folders))) / name if folders else Path(package)


def _unchanged(files: dict[str, str], folders: dict[str, str]) -> bool:
    return all(_file_digest(Path(p)) == d for p, d in files.items()) and all(
        _names(Path(f)) == d for f, d in folders.items()
    )


def _file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except Exception as exc:  # (a file gone or unreadable since: its own mark, never a match)
        return f"unreadable: {exc}"


def _names(folder: Path) -> str:
    try:
        return hashlib.sha256(
            "\0".join(sorted(os.listdir(folder))).encode("utf-8", "surrogatepass")
        ).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc}"
