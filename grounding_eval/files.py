"""Reading user files, with every failure turned into one :class:`DataError` line naming the file.

Every loader (datasets, articles, directory, recorded answers, rubrics, allowlists, results) reads
through here, so "file not found", "not UTF-8 text" and "malformed YAML at line N" read the same
wherever they come from — and so the rules for what may be read are enforced in one place:

* **Only regular files.** The file is ``stat``-ed before it is opened, and opened non-blocking and
  ``fstat``-ed again (the first check races with a rename): a FIFO would block the reader forever, a
  device (``/dev/zero``) never ends, a directory is not text.
* **A size limit, checked before reading**, per kind of file (:data:`DATA`, :data:`ARTICLE`,
  :data:`RESULTS`); the read itself stops one byte past the limit in case the file grows meanwhile.
* **Optionally, inside a folder** (``inside=``): the path, symlinks resolved, must stay within it, so a
  dataset's ``articles/x.txt -> ~/.ssh/id_rsa`` is refused instead of pasted into a model prompt.
* **Strict structure.** JSON and YAML mappings with a key written twice are refused (both parsers
  otherwise keep the last one silently), as are JSON's ``NaN``/``Infinity`` (not JSON) and nesting too
  deep to read (Python's recursion limit; libyaml stops at depth 1,000 itself).

Outputs are written the other way round, through :func:`write_text_atomic`: a temporary file beside
the target, moved into place, so a reader never sees half a file.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from grounding_eval.errors import EXCERPT_CHARS, DataError, clip

__all__ = [
    "ARTICLE",
    "DATA",
    "RESULTS",
    "FileKind",
    "JsonProblem",
    "check_inside",
    "open_checked",
    "parse_json",
    "read_bytes",
    "read_json",
    "read_text",
    "read_yaml",
    "recording_reads",
    "write_bytes_atomic",
    "write_text_atomic",
]

_MIB = 1024 * 1024


@dataclass(frozen=True)
class FileKind:
    """What a file is, for its size limit and for the message that names the limit."""

    name: str
    max_bytes: int


DATA = FileKind("data file", 64 * _MIB)
"""Datasets, directories, rubrics, recordings, allowlists, answers: 64 MiB.

The sample's 63-record content index takes 33 KB, so a full 5,322-record index is some 3 MB: 64 MiB
leaves a factor of twenty and still parses within a laptop's memory.
"""
ARTICLE = FileKind("cached article", 1 * _MIB)
"""One cached article: 1 MiB, about 250,000 tokens — some 30 times the methods document's whole C1.5
budget (≈2,800–8,700 tokens for two or three articles). The sample's longest article is 30 KB."""
RESULTS = FileKind("promptfoo results file", 256 * _MIB)
"""A ``promptfoo eval -o results.json`` file: 256 MiB. Each row carries its rendered prompt and the
judge's evidence (tens of kilobytes under C1.5), so a run of a few thousand rows is already near
100 MB; the whole file is parsed at once, which is why the limit stops here."""


def _limit(kind: FileKind) -> str:
    mib, rest = divmod(kind.max_bytes, _MIB)
    return f"{mib} MiB" if not rest else f"{kind.max_bytes:,} bytes"


def _file_type(mode: int) -> str | None:
    """None for a regular file, else what the file is, for the message."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _check(path: str | Path, st: os.stat_result, kind: FileKind) -> None:
    what = _file_type(st.st_mode)
    if what is not None:
        raise DataError(path, f"is {what}, not a regular file")
    if st.st_size > kind.max_bytes:
        raise DataError(path, f"is {st.st_size:,} bytes; a {kind.name} may be at most {_limit(kind)}")


def check_inside(path: str | Path, inside: str | Path) -> None:
    """Raise a one-line DataError unless ``path``, symlinks resolved, lies within the folder ``inside``."""
    _check_inside(path, inside)


def _check_inside(path: str | Path, inside: str | Path) -> None:
    root = Path(inside).resolve()
    try:
        resolved = Path(path).resolve(strict=True)
    except FileNotFoundError:
        raise DataError(path, "file not found (or a broken symlink)") from None
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise DataError(path, f"cannot resolve the path: {getattr(exc, 'strerror', None) or exc}") from None
    if not resolved.is_relative_to(root):
        raise DataError(
            path,
            f"resolves outside the dataset folder {inside} (a symlink?): only files inside it are read; "
            "copy the file in instead",
        )


# O_BINARY: on Windows, without it the C runtime would translate line endings under our feet.
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def open_checked(path: str | Path, kind: FileKind = DATA, *, inside: str | Path | None = None) -> IO[bytes]:
    """The file opened for reading (binary), if it is a regular file within ``kind``'s limit (and
    ``inside``): for a reader that streams the file instead of holding it (``results_file``). The size is
    checked before opening and again on the open file (the first check races with a rename).

    Raises:
        DataError: missing, not a regular file, too large, outside ``inside``, or unreadable.
    """
    if inside is not None:
        _check_inside(path, inside)
    try:
        _check(path, os.stat(path), kind)
        # O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait for a
        # writer; the fstat below then refuses it. It has no effect on a regular file.
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise DataError(path, "file not found") from None
    except NotADirectoryError:
        raise DataError(path, "file not found (a parent is not a folder)") from None
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        _check(path, os.fstat(fd), kind)
    except OSError as exc:
        os.close(fd)
        raise DataError(path, f"cannot read: {exc.strerror or exc}") from None
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


_READS: ContextVar[list[Path] | None] = ContextVar("grounding_eval_reads", default=None)


@contextmanager
def recording_reads() -> Iterator[list[Path]]:
    """Every file :func:`read_bytes` (and so every reader here) reads inside the block, in order: what a
    value built from files must be keyed on to be kept (:mod:`grounding_eval.built_cache`)."""
    reads: list[Path] = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)


def read_bytes(path: str | Path, kind: FileKind = DATA, *, inside: str | Path | None = None) -> bytes:
    """Return the file's bytes, if it is a regular file within ``kind``'s limit (and ``inside``).

    Raises:
        DataError: missing, not a regular file, too large, outside ``inside``, or unreadable.
    """
    with open_checked(path, kind, inside=inside) as handle:
        try:
            data = handle.read(kind.max_bytes + 1)
        except OSError as exc:
            raise DataError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > kind.max_bytes:
        raise DataError(path, f"grew while being read, past the {_limit(kind)} a {kind.name} may be")
    reads = _READS.get()
    if reads is not None:
        reads.append(Path(path))
    return data


def read_text(path: str | Path, kind: FileKind = DATA, *, inside: str | Path | None = None) -> str:
    """Return the file's UTF-8 text (a leading byte-order mark, as spreadsheets write, is dropped).

    Args:
        path: The file.
        kind: Its kind, for the size limit (:data:`DATA` unless said otherwise).
        inside: When given, the path with symlinks resolved must lie within this folder.

    Raises:
        DataError: as :func:`read_bytes`, or the file is not UTF-8.
    """
    data = read_bytes(path, kind, inside=inside)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(path, f"not UTF-8 text (byte {exc.start})") from None


class JsonProblem(ValueError):
    """Why a text is not acceptable JSON, and where (``line N``, ``record N``) when that is known."""

    def __init__(self, problem: str, where: str | None = None) -> None:
        self.problem = problem
        self.where = where
        super().__init__(self.message())

    def message(self) -> str:
        """``where: problem``, or the problem alone."""
        return f"{self.where}: {self.problem}" if self.where else self.problem


class _Duplicated(dict[str, Any]):
    """A JSON object in which a key was written twice (a marker, until the parse ends)."""


def _no_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses to inf
        raise JsonProblem(f"the number {clip(text)} is too large")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past Python's limit on digits converted (4,300 by default)
        raise JsonProblem(f"a number of {len(text):,} digits is too long") from None


def parse_json(text: str) -> Any:
    """``json.loads``, refusing what it would accept silently or fail on with a traceback.

    A key written twice in one object, ``NaN``/``Infinity`` (and numbers too large to be finite or to
    convert), and nesting past the recursion limit are refused. A duplicate key in a top-level list (a
    file of records) is placed as ``record N``.

    Raises:
        JsonProblem: the text is not valid JSON, or is refused for one of these reasons.
    """
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                duplicates.append(key)
                return _Duplicated(items)
            obj[key] = value
        return obj

    try:
        data = json.loads(
            text, object_pairs_hook=pairs, parse_constant=_no_constant, parse_float=_finite, parse_int=_int
        )
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"not valid JSON ({exc.msg})", f"line {exc.lineno}") from None
    except RecursionError:
        raise JsonProblem("not readable: nested too deeply") from None
    if not duplicates:
        return data
    # The hook cannot know where it is; the marker it left says which record holds the first duplicate.
    where = None
    if isinstance(data, list):
        where = next((f"record {i}" for i, row in enumerate(data, 1) if _has_marker(row)), None)
    raise JsonProblem(f"duplicate key {clip(duplicates[0])} in one object", where)


def _has_marker(value: Any) -> bool:
    stack = [value]
    while stack:  # a loop, not recursion: the value may be nested as deep as the parser allowed
        item = stack.pop()
        if isinstance(item, _Duplicated):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def read_json(path: str | Path, kind: FileKind = DATA, *, inside: str | Path | None = None) -> Any:
    """Parse the file as JSON with :func:`parse_json`'s rules.

    Raises:
        DataError: as :func:`read_text`, or ``line N: not valid JSON (…)``, ``record N: duplicate key
        …``, ``not readable: nested too deeply``.
    """
    text = read_text(path, kind, inside=inside)
    try:
        return parse_json(text)
    except JsonProblem as exc:
        raise DataError(path, exc.message()) from None


_MERGE_TAG = "tag:yaml.org,2002:merge"
_QUOTED = re.compile(rf"'([^'\n]{{{EXCERPT_CHARS + 1},}})'")


@functools.cache
def _yaml() -> tuple[Any, type[Any], type[Exception]]:
    """PyYAML, the loader and its duplicate-key error, built on first use.

    Importing PyYAML costs a fresh process some 10 ms, and promptfoo starts one per assertion call,
    most of which read no YAML at all (the verifier's compiled resources are cached).
    """
    import yaml

    # libyaml's safe loader when the wheel has it: several times faster, and every promptfoo call reloads.
    safe_loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class DuplicateKey(yaml.YAMLError):
        def __init__(self, key: Any, line: int, first: int) -> None:
            super().__init__(f"duplicate key {clip(key)} (first at line {first})")
            self.line = line

    class UniqueKeyLoader(safe_loader):  # type: ignore[valid-type,misc]
        """The safe loader, refusing a mapping that writes one key twice (PyYAML keeps the last one).

        Keys merged in with ``<<: *anchor`` may be overridden, as YAML intends; only the keys written
        in the mapping itself must be unique.
        """

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                        continue
                    key = self.construct_object(key_node, deep=False)
                    line = key_node.start_mark.line + 1
                    try:
                        if key in seen:
                            raise DuplicateKey(key, line, seen[key])
                        seen[key] = line
                    except TypeError:  # unhashable: the base constructor says so
                        continue
            return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
            # A scalar that does not convert to its type (``2024-13-45``, ``!!int abc``) escapes PyYAML
            # as a bare ValueError; give it the node's line like every other YAML problem.
            try:
                return super().construct_object(node, deep=deep)
            except (ValueError, TypeError, AttributeError, OverflowError):
                kind = str(node.tag).rsplit(":", 1)[-1]
                raise yaml.constructor.ConstructorError(
                    None, None, f"not a valid {clip(kind, 20)[1:-1]} value", node.start_mark
                ) from None

    return yaml, UniqueKeyLoader, DuplicateKey


def read_yaml(path: str | Path, kind: FileKind = DATA, *, inside: str | Path | None = None) -> Any:
    """Parse the file as YAML (safe loader only; a key written twice in one mapping is refused).

    Raises:
        DataError: as :func:`read_text`, or ``malformed YAML at line N: <problem>`` (a value that does
        not convert to its type included), ``line N: duplicate key 'k' (first at line M)``, ``not
        readable: nested too deeply``.
    """
    text = read_text(path, kind, inside=inside)
    yaml, loader, duplicate_key = _yaml()
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader subclass: safe
    except duplicate_key as exc:
        raise DataError(path, f"line {getattr(exc, 'line', '?')}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        # PyYAML quotes the offending tag or name in full: clip it like any other excerpt.
        problem = _QUOTED.sub(lambda m: clip(m.group(1)), str(getattr(exc, "problem", None) or exc))
        raise DataError(path, f"malformed YAML{where}: {problem}") from None
    except RecursionError:
        raise DataError(path, "not readable: nested too deeply") from None


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to a temporary file beside ``path`` and move it into
    place: ``path`` is either the old file or the whole new one, never half-written.

    Raises:
        DataError: the folder is missing or not writable (one line naming ``path``).
        UnicodeEncodeError: ``text`` holds a lone surrogate (callers make text encodable first); the old
            file is kept and no temporary file is made.
    """
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and move it into place: ``path`` is either the
    old file or the whole new one, never half-written.

    The new file gets the old one's permissions, or, for a new file, the usual ``0o666`` less the umask
    (a temporary file from :mod:`tempfile` would be ``0o600``: an allowlist or report nobody else can read).

    Raises:
        DataError: the folder is missing or not writable (one line naming ``path``).
    """
    path = Path(path)
    tmp = path.parent / f".{path.name}-{os.urandom(6).hex()}.tmp"  # O_EXCL below: never someone else's
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        old_mode = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask
    except FileNotFoundError:
        raise DataError(path, f"cannot write: the folder {path.parent} does not exist") from None
    except OSError as exc:
        raise DataError(path, f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if old_mode is not None:
            os.chmod(tmp, old_mode)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, UnicodeError):
            raise DataError(path, f"cannot write: {exc.strerror or exc}") from None
        raise
