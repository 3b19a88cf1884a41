"""The one reader of promptfoo results files (``promptfoo eval -o results.json``), for every command.

``report``, ``rescore``, ``calibrate``, ``audit`` and ``share`` all read results through here, so a file
is accepted or refused the same way by each of them, with one line naming the row and the problem:

* **Strict JSON** (:func:`grounding_eval.files.parse_json`'s rules): a key written twice in one object
  (``{"results": …, "results": …}`` kept only the last one, and ``rescore`` wrote an empty file),
  ``NaN``/``Infinity`` and floats out of range (``1e400``) are refused. An integer too large for a float
  (``10**400``: ``float()`` of it raised ``OverflowError`` deep inside the report) is refused by the
  reader of the field that holds it — a score must be a number in range (:func:`number`), a var may hold
  anything — so the common case converts every number in C.
* **Bounded nesting**: no value may nest deeper than :data:`MAX_DEPTH` levels (promptfoo's rows nest about
  a dozen), so every reader that walks a row — recursively or not — stays far from Python's recursion
  limit.
* **The promptfoo shape**: an object with a ``results.results`` list of objects, each row's ``success``
  (whether it passed) ``true`` or ``false`` — ``"false"``, ``0``, ``null`` or no ``success`` at all is refused,
  never read as a truth value.
* **Encodable text**: promptfoo itself writes lone surrogates (``"\\ud83d"``, half an emoji cut by a token
  limit); each is replaced by U+FFFD on load (:func:`grounding_eval.encodable.utf8_encodable`), so no
  consumer fails with ``UnicodeEncodeError`` when it prints or writes a row.

Two ways in. :func:`read_results` returns the whole document (``rescore`` and ``share`` rewrite it); it
holds every row in memory, so it keeps :data:`grounding_eval.files.RESULTS`' 256 MiB limit.
:func:`stream_results` hands each row to a function as it is parsed and keeps only what that function
returns (``report`` keeps a small record per row): the file is read in chunks, never held whole, and its
limit is :data:`STREAMED_RESULTS` — ``DESIGN.md``'s 100,000-row file is some 260 MB.

A consumer that finds a row's field of the wrong type raises :class:`RowProblem` from its row function;
the reader reports it as ``<file>: row N of results.results: <problem>``.
"""

from __future__ import annotations

import codecs
import gc
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from grounding_eval.encodable import utf8_encodable
from grounding_eval.errors import DataError, clip
from grounding_eval.files import (
    RESULTS,
    FileKind,
    JsonProblem,
    _finite,
    _no_constant,
    open_checked,  # the same open and regular-file and size checks as every other reader
)

__all__ = [
    "FAILED_ASSERT",
    "FAILED_ERROR",
    "MAX_DEPTH",
    "NOT_RESULTS",
    "REDACTED_LENGTH",
    "SCORE_LIMIT",
    "STREAMED_RESULTS",
    "RowProblem",
    "answer_length",
    "arr",
    "json_type",
    "number",
    "obj",
    "read_results",
    "stream_results",
    "verdict",
]

_MIB = 1024 * 1024
STREAMED_RESULTS = FileKind("promptfoo results file", 1024 * _MIB)
"""A results file read row by row (``report``): 1 GiB, four times the 100,000-row file ``DESIGN.md`` names.

Only what the report keeps of each row stays in memory (a few hundred bytes), so memory is not what
stops here; the limit keeps a mistaken path (a disk image, a log) from being read for minutes."""

MAX_DEPTH = 100
"""How deep a value in a results file may nest (objects and lists). A promptfoo row nests about 12 levels
(``gradingResult.componentResults[i].metadata.verifier.urls[j]``); 100 leaves room for nested vars and
stays far below Python's recursion limit, which every recursive reader of a row would otherwise meet."""

SCORE_LIMIT = 1e12
"""The largest magnitude :func:`number` accepts. promptfoo's scores are 0–1 and named scores sums of a few
weighted ones; ``1e308`` is a float, but the mean of two overflowed (``OverflowError: intermediate
overflow in fsum`` from the report), and ``10**400`` is an integer no float holds."""

# A row's ``failureReason``: promptfoo's ResultFailureReason (NONE 0, ASSERT 1, ERROR 2). An ERROR row has
# no output to grade (a provider or prompt error): never a failure, never rescored.
FAILED_ASSERT = 1
FAILED_ERROR = 2

NOT_RESULTS = "not a promptfoo results file (no results.results list; write it with -o FILE.json)"
"""The problem reported for a JSON file without promptfoo's shape."""

_CHUNK = 8 * _MIB  # characters parsed at a time; a longer row makes the read grow geometrically
# A value cut by a chunk's end fails within this many characters of it (a literal, a number's tail, a
# \uXXXX escape) or in a string still open; an error earlier is the file's own.
_CUT_NEAR = 16
_NUMBER_TAIL = re.compile(r"[0-9.eE+-]*")
_WS = re.compile(r"[ \t\n\r]*")
# A \uXXXX escape of a surrogate: the only way a lone surrogate gets into text decoded as strict UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]")
_T = TypeVar("_T")


class RowProblem(ValueError):
    """A field of a results row that a reader cannot use (the wrong JSON type, a number out of range).

    Raise it from :func:`stream_results`' row function: the reader reports ``row N of results.results:
    <message>`` on one line, with the file's name.
    """


def number(value: Any, where: str) -> float | None:
    """A number field of a row (a score): None when absent or null, else a number within ±:data:`SCORE_LIMIT`.

    Raises:
        RowProblem: ``<where> is a string, expected a number`` (true/false is not a number either), or
            ``<where> is 1e+308, out of range``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RowProblem(f"{where} is {json_type(value)}, expected a number")
    if not -SCORE_LIMIT <= value <= SCORE_LIMIT:
        raise RowProblem(f"{where} is {clip(value)}, out of range (a score is within ±{SCORE_LIMIT:g})")
    return float(value)


def obj(value: Any, where: str, *, null: bool = True) -> dict[str, Any]:
    """An object field of a row; absent or null reads as empty (``null=False``: a list item, where null is
    refused).

    Raises:
        RowProblem: ``<where> is a list, expected an object``.
    """
    if value is None and null:
        return {}
    if not isinstance(value, dict):
        raise RowProblem(f"{where} is {json_type(value)}, expected an object")
    return value


def verdict(entry: Any) -> str | None:
    """One criterion's entry in a judge's ``metadata.judge.verdicts``: its Yes / Partial / No, else None.

    Written as the word (``"Partial"``); files from before issue 21 wrap it (``{"verdict": "Partial"}``).
    """
    word = entry.get("verdict") if isinstance(entry, dict) else entry
    return word if word in ("Yes", "Partial", "No") else None


def arr(value: Any, where: str) -> list[Any]:
    """A list field of a row; absent or null reads as empty.

    Raises:
        RowProblem: ``<where> is an object, expected a list``.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise RowProblem(f"{where} is {json_type(value)}, expected a list")
    return value


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(items)
    if len(obj) != len(items):
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise JsonProblem(f"duplicate key {clip(key)} in one object")
            seen.add(key)
    return obj


# Floats are checked as they are parsed (``json`` turns 1e400 into inf); integers are converted in C, and
# one too large for a float (10**400) is refused by whoever reads it as a number.
_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_finite)


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH` (a loop, not recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


class _Stream:
    """A JSON text read in chunks: the two outer levels walked by hand, every value parsed by ``json``."""

    def __init__(self, path: str | Path, handle: IO[bytes], kind: FileKind) -> None:
        self.path = path
        self.handle = handle
        self.kind = kind
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0
        self.lines_dropped = 0  # line breaks in the text already dropped from ``buf``
        self.where = ""  # the row being read, for messages

    # -- reading -----------------------------------------------------------------------------------

    def fill(self, at_least: int = 0) -> bool:
        """Append the next chunk to the buffer (dropping what was parsed); False at the end of the file."""
        if self.eof:
            return False
        if self.pos:
            self.lines_dropped += self.buf.count("\n", 0, self.pos)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        try:
            data = self.handle.read(max(at_least, _CHUNK))
        except OSError as exc:
            raise DataError(self.path, f"cannot read: {exc.strerror or exc}") from None
        self.bytes_read += len(data)
        if self.bytes_read > self.kind.max_bytes:
            raise DataError(self.path, f"grew while being read, past the limit of a {self.kind.name}")
        try:
            self.buf += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise DataError(
                self.path, f"not UTF-8 text (byte {self.bytes_read - len(data) + exc.start})"
            ) from None
        self.eof = not data
        return True

    def problem(self, text: str, pos: int | None = None) -> DataError:
        where = f"{self.where}: " if self.where else ""
        if pos is not None:
            line = self.lines_dropped + self.buf.count("\n", 0, pos) + 1
            return DataError(self.path, f"line {line}: {where}{text}")
        return DataError(self.path, f"{where}{text}")

    def peek(self) -> str:
        """The next character that is not white space ('' at the end of the text)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.buf) or not self.fill():
                return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def expect(self, chars: str, what: str) -> str:
        char = self.peek()
        if not char or char not in chars:
            found = "the end of the file" if not char else clip(char)
            raise self.problem(f"not valid JSON (expected {what}, found {found})", self.pos)
        self.pos += 1
        return char

    def parse(self) -> tuple[Any, int]:
        """The JSON value at ``pos`` and where it ends, read on until it is not cut by a chunk's end."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.buf) - _CUT_NEAR or exc.msg.startswith("Unterminated string")
                if cut and self.fill(2 * (len(self.buf) - self.pos)):
                    continue
                raise self.problem(f"not valid JSON ({exc.msg})", exc.pos) from None
            except JsonProblem as exc:
                raise self.problem(exc.problem) from None
            except ValueError:  # json's own int(): past Python's limit on digits converted
                raise self.problem("a number is too long (over 4,300 digits)") from None
            except RecursionError:
                raise self.problem("not readable: nested too deeply") from None
            # A number that ends with the text read so far may go on in the next chunk ("0" of "0.5").
            number = type(value) is int or type(value) is float
            if not (number and _NUMBER_TAIL.fullmatch(self.buf, end)) or not self.fill():
                return value, end

    def value(self) -> Any:
        """The next JSON value, whole, with the strict rules, bounded nesting and encodable text."""
        self.peek()
        value, end = self.parse()
        start = self.pos
        self.pos = end
        if isinstance(value, dict | list):
            # A text with fewer brackets than the limit cannot nest deeper: most rows stop here.
            brackets = self.buf.count("{", start, end) + self.buf.count("[", start, end)
            if brackets > MAX_DEPTH and _too_deep(value):
                raise self.problem(f"not readable: nested deeper than {MAX_DEPTH} levels")
        if _SURROGATE_ESCAPE.search(self.buf, start, end):
            value = utf8_encodable(value)
        return value

    def key(self) -> str:
        if self.peek() != '"':
            self.expect('"', "a key")
        key = self.value()
        assert isinstance(key, str)  # a value starting with '"' is a string
        self.expect(":", "':'")
        return key

    def members(self) -> Iterator[str]:
        """The keys of the object starting here, one by one (the caller reads each value)."""
        self.expect("{", "an object")
        if self.peek() == "}":
            self.pos += 1
            return
        seen: set[str] = set()
        while True:
            key = self.key()
            if key in seen:
                raise self.problem(f"duplicate key {clip(key)} in one object")
            seen.add(key)
            yield key
            if self.expect(",}", "',' or '}'") == "}":
                return

    def end(self) -> None:
        if self.peek():
            raise self.problem("not valid JSON (extra data after the document)", self.pos)


def stream_results(
    path: str | Path, row: Callable[[dict[str, Any], int], _T], *, kind: FileKind = STREAMED_RESULTS
) -> tuple[list[_T], dict[str, Any]]:
    """Read a promptfoo results file row by row: ``row(raw, number)`` for each row of ``results.results``.

    Args:
        path: The results file.
        row: Called with each row (an object, strict, encodable) and its number (1-based); what it
            returns is kept. It may raise :class:`RowProblem` to refuse the row.
        kind: The size limit (:data:`STREAMED_RESULTS` unless said otherwise).

    Returns:
        What ``row`` returned for each row, in order, and the rest of the document: every other field,
        with ``results.results`` an empty list.

    Raises:
        DataError: one line naming the file (and the row, or the line of a JSON syntax error): missing,
            not a regular file, too large, not UTF-8, not strict JSON, nested too deeply, not a
            promptfoo results file, a row that is not an object, or a :class:`RowProblem`.
    """
    kept: list[_T] = []
    # Parsed JSON holds no reference cycles, yet the cyclic collector would walk the growing heap of kept
    # rows again and again (a quarter of the time of 100,000 rows): it is paused while the file is read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _stream(path, row, kind, kept)
    finally:
        if collecting:
            gc.enable()


def _stream(
    path: str | Path, row: Callable[[dict[str, Any], int], _T], kind: FileKind, kept: list[_T]
) -> tuple[list[_T], dict[str, Any]]:
    with open_checked(path, kind) as handle:
        stream = _Stream(path, handle, kind)
        document: dict[str, Any] = {}
        seen_rows = False
        if stream.peek() != "{":
            stream.value()  # any JSON at all? (a syntax error is reported as such)
            stream.end()
            raise DataError(path, NOT_RESULTS)
        for key in stream.members():
            if key != "results" or stream.peek() != "{":
                document[key] = stream.value()
                continue
            body: dict[str, Any] = {}
            for inner in stream.members():
                if inner != "results" or stream.peek() != "[":
                    body[inner] = stream.value()
                    continue
                seen_rows = True
                body[inner] = []
                stream.expect("[", "a list")
                if stream.peek() == "]":
                    stream.pos += 1
                    continue
                number = 0
                while True:
                    number += 1
                    stream.where = f"row {number} of results.results"
                    raw = stream.value()
                    if not isinstance(raw, dict):
                        raise DataError(path, f"{stream.where} is {json_type(raw)}, expected an object")
                    success = raw.get("success", ...)
                    if success is ... or success is None:  # (falsy: a failure, whatever the row's grading)
                        missing = "missing" if success is ... else "null"
                        raise stream.problem(f"success is {missing}, expected true/false")
                    if type(success) is not bool:  # ("false" is truthy: a pass; null is falsy: a failure)
                        raise stream.problem(f"success is {json_type(success)} ({clip(json.dumps(success))}), "
                                             "expected true/false")  # fmt: skip
                    try:
                        kept.append(row(raw, number))
                    except RowProblem as exc:
                        raise stream.problem(str(exc)) from None
                    stream.where = ""
                    if stream.expect(",]", "',' or ']'") == "]":
                        break
            document[key] = body
        stream.end()
    if not seen_rows:
        raise DataError(path, NOT_RESULTS)
    return kept, document


def read_results(path: str | Path, *, kind: FileKind = RESULTS) -> dict[str, Any]:
    """The whole promptfoo results file, with :func:`stream_results`' rules (strict, shape, encodable).

    For the commands that rewrite or copy the document (``rescore``, ``share``); every row is held in
    memory, so the limit is :data:`grounding_eval.files.RESULTS` (256 MiB).

    Raises:
        DataError: as :func:`stream_results`.
    """
    rows, document = stream_results(path, lambda raw, _: raw, kind=kind)
    document["results"]["results"] = rows
    return document


def json_type(value: Any) -> str:
    """How a message names a JSON value's type: ``null``, ``a number``, ``a list``…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


REDACTED_LENGTH = "answer_length"  # a redacted row's {"chars", "words"}: its answer's length, kept without it


def answer_length(text: str) -> tuple[int, int]:
    """``(characters, words)`` of an answer: code points, and runs of non-whitespace (``str.split()``). The
    report's answer-length table and length-adjusted effects count with it, and redaction keeps it."""
    return len(text), len(text.split())
