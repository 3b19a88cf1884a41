"""The allowlist, directory and citation index, compiled once and kept on disk, keyed by what they were built from.

promptfoo runs the verifier in a fresh Python process for every row, and parsing the directory (YAML,
every phone number through libphonenumber, every domain against the public suffix list) and the
allowlist (every URL extracted and normalized) cost each process tens of milliseconds. Here the
result of a load is kept as JSON in the user's cache folder (``~/.cache/grounding-eval``,
:mod:`grounding_eval.user_cache`) and read back instead.

Keyed, never trusted: the key is the SHA-256 of the file's bytes, its path, the kind of resource, this
cache's format number, the source of every module whose rules decide the result (URL normalization,
the directory's validation and phone reading, state codes, this module) and the installed
phonenumbers and tldextract (their version files). Edit the file, move it, upgrade either library or
change a rule, and the key changes, so the entry is not used. The key says which entry to read, not
that its value is right — anyone holding the same files can compute it — so an entry is used only if it
is sealed with this user's secret (:func:`grounding_eval.user_cache.unseal`): one planted in a study's
folder, copied from another machine or edited is a miss. An entry that cannot be read, is not sealed
for its key or does not have the expected shape is ignored and rebuilt — a bad entry costs a rebuild,
never a wrong answer. Entries are written to a temporary file and renamed into
place, so concurrent promptfoo workers never read half an entry; a cache folder that cannot be
written is simply not used. JSON rather than pickle: reading an entry runs no code.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from grounding_eval.built_cache import library_file
from grounding_eval.files import read_bytes
from grounding_eval.user_cache import read_sealed, write_sealed
from grounding_eval.verifier.allowlist import Allowlist, load_allowlist
from grounding_eval.verifier.directory import Directory, Organization, load_directory

__all__ = ["cached_allowlist", "cached_citation_index", "cached_directory"]

_FORMAT = 2  # 2: sealed entries
# Modules whose rules decide what a loaded allowlist or directory holds.
_RULE_MODULES = (
    "allowlist.py", "directory.py", "urls.py", "resource_cache.py", "../states.py", "citations.py",
    "citation_templates.yaml",
)  # fmt: skip
# Files that change with the installed version of a library the loaders use.
_LIBRARY_FILES = (
    ("phonenumbers", "__init__.py"), ("tldextract", "_version.py"), ("citeurl", "templates/state law.yaml"),
    ("citeurl", "templates/general federal law.yaml"),
)  # fmt: skip
_TUPLE_FIELDS = ("states", "aliases", "domains", "phones", "phones_e164", "unverified")
_ORG_FIELDS = ("name", *_TUPLE_FIELDS, "source", "note")
_T = TypeVar("_T")


def cached_allowlist(path: Path, cache_dir: Path) -> Allowlist:
    """:func:`~grounding_eval.verifier.allowlist.load_allowlist`, through the cache in ``cache_dir``."""
    return _cached("allowlist", path, cache_dir, load_allowlist, _allowlist_to_json, _allowlist_from_json)


def cached_directory(path: Path, cache_dir: Path) -> Directory:
    """:func:`~grounding_eval.verifier.directory.load_directory`, through the cache in ``cache_dir``."""
    return _cached("directory", path, cache_dir, load_directory, _directory_to_json, _directory_from_json)


def cached_citation_index(path: Path, cache_dir: Path) -> Any:
    """:func:`~grounding_eval.verifier.citations.load_citation_index`, through the cache in ``cache_dir``:
    reading every entry as a citation builds citeurl's templates, about 0.15 s a fresh process would
    otherwise pay on its first row, citation or not."""
    from grounding_eval.verifier.citations import load_citation_index

    return _cached("citations", path, cache_dir, load_citation_index, _index_to_json, _index_from_json)


def _index_to_json(index: Any) -> Any:
    covers = [{"written": c.written, "prefix": list(c.prefix), "low": None if c.low is None else list(c.low),
               "high": None if c.high is None else list(c.high)} for c in index.covers]  # fmt: skip
    return {"keys": sorted(list(k) for k in index.keys), "covers": covers, "entries": index.entries}


def _index_from_json(value: Any, path: str) -> Any:
    from grounding_eval.verifier.citations import CitationIndex, Cover

    def parts(v: Any) -> tuple[str, ...]:
        if not isinstance(v, list) or not all(isinstance(p, str) for p in v):
            raise ValueError("not a list of strings")
        return tuple(v)

    covers = tuple(
        Cover(c["written"], parts(c["prefix"]), None if c["low"] is None else parts(c["low"]),
              None if c["high"] is None else parts(c["high"]))
        for c in value["covers"]
    )  # fmt: skip
    if not isinstance(value["entries"], int) or not all(isinstance(c.written, str) for c in covers):
        raise ValueError("not a citation index")
    return CitationIndex(path, frozenset(parts(k) for k in value["keys"]), covers, value["entries"])


def _cached(
    kind: str,
    path: Path,
    cache_dir: Path,
    load: Callable[[Path], _T],
    to_json: Callable[[_T], Any],
    from_json: Callable[[Any, str], _T],
) -> _T:
    data = read_bytes(path)  # the same checks as the loader: a regular file within the size limit
    key = _key(kind, path, data)
    entry = cache_dir / f"{kind}-{key[:40]}.json"
    try:
        stored = read_sealed(entry, kind, key)  # None: none, or not one this user's processes wrote
        if stored is not None:
            return from_json(stored, str(path))
    except Exception:
        pass  # an entry of another shape: load
    value = load(path)
    if read_bytes(path) == data:  # (not if the file changed while it was being loaded)
        write_sealed(entry, kind, key, to_json(value))
    return value


def _key(kind: str, path: Path, data: bytes) -> str:
    digest = hashlib.sha256()
    for part in (str(_FORMAT), kind, _rules_fingerprint(), str(path)):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    digest.update(data)
    return digest.hexdigest()


@functools.cache
def _rules_fingerprint() -> str:
    """SHA-256 of the rule modules' source and the libraries' version files (once per process)."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve().parent
    files = [here / name for name in _RULE_MODULES]
    files.extend(library_file(package, name) for package, name in _LIBRARY_FILES)
    for file in files:
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(f"missing {file.name}".encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _allowlist_to_json(allowlist: Allowlist) -> Any:
    return sorted(allowlist.urls)


def _allowlist_from_json(value: Any, path: str) -> Allowlist:
    if not isinstance(value, list) or not all(isinstance(url, str) for url in value):
        raise ValueError("not a list of URLs")
    return Allowlist(path=path, urls=frozenset(value))


def _directory_to_json(directory: Directory) -> Any:
    return [{name: getattr(org, name) for name in _ORG_FIELDS} for org in directory.organizations]


def _directory_from_json(value: Any, path: str) -> Directory:
    organizations = []
    for fields in value:
        read: dict[str, Any] = {
            name: tuple(fields[name]) if isinstance(fields[name], list) else fields[name]
            for name in _ORG_FIELDS
        }
        if not (
            isinstance(read["name"], str)
            and all(_strings(read[name]) for name in _TUPLE_FIELDS)
            and all(read[name] is None or isinstance(read[name], str) for name in ("source", "note"))
        ):
            raise ValueError("not an organization")
        organizations.append(Organization(**read))
    # The entry was written from a directory that passed every check of from_organizations (unique
    # names, phones and domains; no public suffix), and its key says the file and the rules are the
    # same: the lookups are rebuilt without checking again (the suffix check reads the suffix list).
    by_phone = {e164: org for org in organizations for e164 in org.phones_e164}
    by_domain = {domain: org for org in organizations for domain in org.domains}
    return Directory(path, tuple(organizations), by_phone, by_domain)


def _strings(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)
