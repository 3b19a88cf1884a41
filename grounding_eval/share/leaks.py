"""What must never leave the machine in a bundle: API keys, local paths, ``.env`` files, nested archives.

``share`` checks every member it is about to write with these, and ``bundle check`` checks every member
it reads, so a bundle made by an older (or a hostile) grounding-eval is judged by what it holds, not by
what its manifest says.

* **Keys.** :func:`~grounding_eval.judge._redact.key_shape` (text shaped like any vendor's key, a private
  key block, a literal ``apiKey:``), plus, when sharing, every secret this machine is known to hold (the
  values in the study's ``.env*`` files, commented-out lines included, and the environment's ``*_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD`` variables) in every form the judge client's scrubber knows
  (:func:`~grounding_eval.judge._redact.secret_pattern`: URL, base64, hex, HTML entities, other case,
  shortened, prefix-stripped). A hit names the file and the line, never the key.
* **Absolute paths.** POSIX ``/dir/…`` (at least one folder: a lone ``/word`` is prose), ``file:///…``,
  ``~/…``, Windows ``C:\\…`` and UNC ``\\\\host\\…``. :func:`relative_paths` rewrites them before a file is
  shared: under the study, relative to it; under a dataset shared in ``data/``, to ``../data/<name>/…``;
  elsewhere, ``<local>/<last part>``. A path written after a placeholder (``{dataset}/x``,
  ``${HOME}/x``) is relative to it and left alone.
* **``.env`` files** (``.env``, ``.env.bak``, ``.env.production``, ``.envrc``, ...) are never shipped;
  ``share`` writes a new ``study/.env`` holding only the settings ``policy.yaml`` lists
  (``bundle.shareable_env``) with plain relative values.
* **Nested archives**, by magic bytes whatever their name (gzip, zip and the formats built on it,
  bzip2, xz, zstd, 7z, rar, tar): a bundle inside a bundle is refused, never shipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Final

from grounding_eval.judge._redact import MIN_SECRET_CHARS, SECRET_NAME, key_shape, secret_pattern

__all__ = [
    "ABSOLUTE_PATH",
    "KeyScan",
    "archive_kind",
    "find_absolute_path",
    "is_env_file",
    "line_of",
    "relative_paths",
]

_PART: Final = r"[\w.@+~%-]"
# Each form starts with the character it is found by ("/", "~", ":", "\\") and looks behind from there:
# a pattern starting with a look-behind is tried at every character (some 100 times slower).
ABSOLUTE_PATH: Final = re.compile(
    rf"""(?x)
    /(?<=file:///){_PART}*(?:/{_PART}*)*                          # file:///tmp/x
    # /tmp/x, /home/me/study/: not after a word (and/or), a URL's "//", a relative path (a/b), a
    # placeholder ({{dataset}}/x, ${{HOME}}/x, $DIR/x) or our own "<local>/x".
    | /(?<![\w/.\-~%}}\]>)$\\]/){_PART}+/(?:{_PART}+(?:/{_PART}+)*/?)?
    | ~(?<![\w/~]~)/{_PART}+(?:/{_PART}*)*                        # ~/x
    | :(?<=[A-Za-z]:)(?<![\w][A-Za-z]:)(?:\\\\|\\|/)[^\s"'<>]*      # C:\x (JSON-escaped or not), C:/x
    | \\\\(?<![\w\\]\\\\)(?:\\\\)?[\w.-]+\\(?:\\)?[^\s"'<>]*      # \\host\share
    """
)
"""An absolute local path in text (see the module docstring). A Windows path's match starts at the
colon after its drive letter."""

_ENV_NAME: Final = re.compile(r"^\.env(?:rc)?(?:[._-].*)?$")
_ASSIGNMENT: Final = re.compile(r"^\s*(?:#\s*)?(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
# A value that is a secret whatever its name: 16+ characters, letters and digits, no path or URL.
_KEYLIKE_VALUE: Final = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9._~+=-]{16,}$")

# (magic, offset, kind): the archive and compression formats a bundle member might hide another in.
_MAGIC: Final = (
    (b"\x1f\x8b", 0, "gzip"),
    (b"PK\x03\x04", 0, "zip"),
    (b"PK\x05\x06", 0, "zip"),
    (b"PK\x07\x08", 0, "zip"),
    (b"BZh", 0, "bzip2"),
    (b"\xfd7zXZ\x00", 0, "xz"),
    (b"\x28\xb5\x2f\xfd", 0, "zstd"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7z"),
    (b"Rar!\x1a\x07", 0, "rar"),
    (b"\x5d\x00\x00", 0, "lzma"),
    (b"ustar", 257, "tar"),
)
_ARCHIVE_SUFFIXES: Final = (
    ".tar", ".tgz", ".tar.gz", ".gz", ".zip", ".bz2", ".tbz", ".tbz2", ".xz", ".txz", ".zst", ".7z",
    ".rar", ".lzma", ".z",
)  # fmt: skip
ARCHIVE_HEAD: Final = 512
"""How many leading bytes :func:`archive_kind` needs (tar's magic is at offset 257)."""


def is_env_file(name: str) -> bool:
    """``.env``, ``.envrc``, ``.env.bak``, ``.env.production``, ``.env-old``...: a file of settings and keys."""
    return bool(_ENV_NAME.match(name))


def archive_kind(head: bytes, name: str = "") -> str | None:
    """The archive or compression format of a file whose first bytes are ``head``, by magic bytes or, for
    an empty or truncated one, by its name; ``None`` for any other file."""
    for magic, offset, kind in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return kind
    lowered = name.lower()
    return next((s.lstrip(".") for s in _ARCHIVE_SUFFIXES if lowered.endswith(s)), None)


def line_of(text: str, index: int) -> int:
    """The 1-based line number of character ``index`` in ``text``."""
    return text.count("\n", 0, index) + 1


def find_absolute_path(text: str) -> re.Match[str] | None:
    """The first absolute local path in ``text``, if any."""
    return ABSOLUTE_PATH.search(text)


def relative_paths(text: str, study: Path, shared_data: Mapping[Path, str] | None = None) -> str:
    """``text`` with every absolute path rewritten (see the module docstring).

    Args:
        text: A file's text, or one string value of a parsed file.
        study: The study folder: paths under it become relative to it.
        shared_data: Dataset folders shared in the bundle, each with its ``data/<name>`` member folder.
    """
    if not _MAY_HOLD_PATH.search(text):
        return text
    for inner, whole, replacement in _rewrites(study, tuple(sorted((shared_data or {}).items()))):
        # A function, not a template: a replacement is never read for backslash escapes.
        text = inner.sub(_literal("" if replacement == "." else replacement + "/"), text)
        text = whole.sub(_literal(replacement), text)
    out, done = [], 0
    for match in ABSOLUTE_PATH.finditer(text):
        start = match.start() - 1 if match.group().startswith(":") else match.start()  # the drive letter
        out += [text[done:start], _local(match)]
        done = match.end()
    return "".join([*out, text[done:]])


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: text


_Pattern = re.Pattern[str]
_MAY_HOLD_PATH: Final = re.compile(r"[/~:\\]")


@cache
def _rewrites(
    study: Path, shared_data: tuple[tuple[Path, str], ...]
) -> list[tuple[re.Pattern[str], re.Pattern[str], str]]:
    """For each folder's spellings, longest first: the pattern of a path inside it, the pattern of the
    folder itself, and what it becomes ("." for the study, "../data/<name>" for a shared dataset)."""
    roots = [(str(p), f"../{member}") for folder, member in shared_data for p in _spellings(folder)]
    roots += [(str(p), ".") for p in _spellings(study)]
    return [
        (
            re.compile(re.escape(prefix) + r"/(?=[\w.@+~%-])"),
            re.compile(re.escape(prefix) + r"/?(?![\w.@+~%/-])"),
            to,
        )
        for prefix, to in sorted(roots, key=lambda r: -len(r[0]))
    ]


def _spellings(folder: Path) -> list[Path]:
    """The ways a folder's absolute path can be written (as given and with symlinks resolved)."""
    return list(dict.fromkeys([folder.absolute(), folder.resolve()]))


def _local(match: re.Match[str]) -> str:
    parts = [p for p in re.split(r"[\\/]+", match.group().rstrip("\\/")) if p and p != "~" and ":" not in p]
    return "<local>/" + (parts[-1] if parts else "")


class KeyScan:
    """Looks for API keys in text: any key's shape, and each secret this machine is known to hold."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        unique = sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self._patterns = [p for p in (secret_pattern(s) for s in unique) if p is not None]

    @classmethod
    def for_study(
        cls, env_texts: Iterable[str], keep: Iterable[str], environ: Mapping[str, str] | None = None
    ) -> KeyScan:
        """A scan for the secrets in these ``.env`` texts (every value but the shareable settings', in
        commented-out lines too) and in the environment's key-like variables."""
        shareable = set(keep)
        secrets = []
        for text in env_texts:
            for line in text.splitlines():
                match = _ASSIGNMENT.match(line)
                if match and match.group(1) not in shareable:
                    name, value = match.group(1), match.group(2).strip("'\"")
                    if SECRET_NAME.search(name) or _KEYLIKE_VALUE.match(value):
                        secrets.append(value)
        for name, value in (os.environ if environ is None else environ).items():
            if SECRET_NAME.search(name) and name not in shareable:
                secrets.append(value)
        return cls(secrets)

    def find(self, text: str) -> str | None:
        """``line N: what`` for the first key in ``text`` (never the key itself), or ``None``."""
        hits = []
        shape = key_shape(text)
        if shape:
            hits.append((shape.start(), "text shaped like an API key"))
        for pattern in self._patterns:
            found = pattern.search(text)
            if found:
                hits.append((found.start(), "a secret from this machine's .env or environment"))
        if not hits:
            return None
        at, what = min(hits)
        return f"line {line_of(text, at)}: {what}"
