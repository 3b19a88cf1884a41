"""The user's own cache folder, and cache entries that only this user's processes can have written.

A study someone else wrote is untrusted (docs/explanation/security.md, "A study you received"): whatever
its folder holds must not decide a verdict. A cache entry is a verdict waiting to be read back — a
compiled allowlist, a citation index, a dataset's articles, a judge's reply — and the key it is filed
under is computable by anyone holding the same dataset, so neither the folder nor the key can be what
makes an entry trusted. Two things do:

* **Where.** Every cache lives in the user's cache folder, ``$XDG_CACHE_HOME/grounding-eval`` (an
  absolute ``XDG_CACHE_HOME`` only, as the XDG specification says) or ``~/.cache/grounding-eval``, never
  in the study folder promptfoo runs in.
* **Who wrote it.** Each entry carries an HMAC-SHA256 of its content under a secret of this user's,
  ``<cache folder>/secret`` (32 random bytes, mode 0600, created on first use). An entry whose MAC does
  not verify — planted in a folder a config names, copied from another machine, edited — is a miss: it
  costs a rebuild or a judge call, never a value. The MAC also covers the entry's kind and key, so an
  entry cannot answer under another name.

A user whose cache folder cannot be written (no home, a read-only file system), whose secret file is
not theirs alone, or whose cache folder resolves to a place inside the current (study) folder has no
secret: callers then build every value again (:func:`secret` is ``None``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any, Final

from grounding_eval.errors import DataError
from grounding_eval.files import write_text_atomic

__all__ = ["cache_root", "inside_working_folder", "read_sealed", "seal", "secret", "unseal", "write_sealed"]

_SECRET_NAME: Final = "secret"
_SECRET_BYTES: Final = 32


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/grounding-eval`` when that variable is an absolute path, else
    ``~/.cache/grounding-eval``: the user's, never the current (study) folder's."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "grounding-eval"


def secret() -> bytes | None:
    """This user's cache secret (see the module docstring), created on first use; ``None`` when it
    cannot be read or made, its file is readable or writable by anyone else, or the cache folder lies
    inside the current (study) folder (:func:`inside_working_folder`)."""
    root = cache_root()
    if inside_working_folder(root):
        return None
    return _secret(root)


def inside_working_folder(root: Path) -> bool:
    """Whether the cache folder ``root``, its links resolved, lies in the current folder: a study's
    ``.env`` (which promptfoo loads) can set ``XDG_CACHE_HOME=/proc/self/cwd/.x`` or ``HOME``, and a secret
    and entries written there would travel with the study. Then nothing is cached, and the first time a
    process finds it so it says so on stderr in one line. The current folder being the user's home or
    one above it (a command run from ``~``) is not a study's: the default cache under it is kept."""
    real = Path(os.path.realpath(root))
    here = Path(os.path.realpath(os.getcwd()))
    if not real.is_relative_to(here):
        return False
    home = _account_home()
    if home is not None and home.is_relative_to(here):
        return False
    _say_inside(str(real), str(here))
    return True


def _account_home() -> Path | None:
    """The user's home from the account database (not ``$HOME``, which a study's ``.env`` can set)."""
    try:
        import pwd

        return Path(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    except (ImportError, KeyError, OSError):
        return None


@functools.cache
def _say_inside(root: str, here: str) -> None:  # (once per process and folder)
    import sys

    print(
        f"grounding-eval: cache folder {root} is inside the current folder {here} (XDG_CACHE_HOME or HOME "
        "set by a study?): nothing is cached in this run; set XDG_CACHE_HOME to a folder outside it",
        file=sys.stderr,
    )


@functools.cache
def _secret(root: Path) -> bytes | None:  # (once per process and folder: one small read)
    path = root / _SECRET_NAME
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    except OSError:
        return None
    import secrets
    import tempfile

    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=root, prefix=".secret-", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(_SECRET_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                os.link(tmp, path)  # (never replaces a secret, so no entry sealed with it is lost)
        finally:
            os.unlink(tmp)
        return _read_secret(path)
    except OSError:
        return None


def _read_secret(path: Path) -> bytes | None:
    with path.open("rb") as handle:
        status = os.fstat(handle.fileno())
        data = handle.read(_SECRET_BYTES + 1)
    if status.st_mode & 0o077 or (hasattr(os, "getuid") and status.st_uid != os.getuid()):
        return None  # another user could read or write it: it proves nothing
    return data if len(data) == _SECRET_BYTES else None


def _mac(key: bytes, kind: str, name: str, body: bytes) -> str:
    tag = hmac.new(key, digestmod=hashlib.sha256)
    for part in (kind.encode("utf-8", "surrogatepass"), name.encode("utf-8", "surrogatepass")):
        tag.update(len(part).to_bytes(8, "big") + part)
    tag.update(body)
    return tag.hexdigest()


def seal(kind: str, name: str, value: Any) -> str | None:
    """``value`` (JSON) as a sealed entry's text for ``kind``/``name``, or ``None`` without a secret.

    The text is JSON: ``{"kind", "name", "mac", "body"}``, ``body`` the value's own JSON as a string (so
    the MAC is checked over the bytes read, with no second serialization).

    Raises:
        TypeError, ValueError: ``value`` is not JSON.
    """
    key = secret()
    if key is None:
        return None
    body = json.dumps(value, ensure_ascii=False)
    mac = _mac(key, kind, name, body.encode("utf-8", "surrogatepass"))
    # ASCII outside: a lone surrogate in the value (half an emoji in a prompt) is written as its escape.
    return json.dumps({"kind": kind, "name": name, "mac": mac, "body": body})


def unseal(kind: str, name: str, text: str | bytes) -> Any | None:
    """The value of a sealed entry's text if it was sealed for ``kind``/``name`` under this user's
    secret, else ``None`` (not JSON, another shape, another kind or name, another secret, edited)."""
    key = secret()
    if key is None:
        return None
    try:
        entry = json.loads(text)
        body = entry.get("body") if isinstance(entry, dict) else None
        if not (isinstance(body, str) and isinstance(entry.get("mac"), str)):
            return None
        expected = _mac(key, kind, name, body.encode("utf-8", "surrogatepass"))
        if not hmac.compare_digest(expected, entry["mac"]):
            return None
        return json.loads(body)
    except (ValueError, TypeError, UnicodeError, RecursionError):
        return None


def read_sealed(path: Path, kind: str, name: str) -> Any | None:
    """The value of the sealed entry at ``path`` (:func:`unseal`), or ``None``: no file, an unreadable
    one, or one this user's processes did not write for ``kind``/``name``."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return unseal(kind, name, data)


def write_sealed(path: Path, kind: str, name: str, value: Any) -> bool:
    """Write ``value`` sealed at ``path``, whole (temporary file, rename); whether it was written.

    A folder that cannot be written, a value that is not JSON or no secret: not written, no error — a
    cache that cannot keep a value costs a rebuild, never a wrong one.
    """
    try:
        text = seal(kind, name, value)
        if text is None:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    except (OSError, DataError, TypeError, ValueError, UnicodeError):
        return False
    return True
