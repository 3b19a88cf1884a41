"""``grounding-eval bundle check``: verify a bundle by what it holds, never by what its manifest claims.

Nothing in the tar is trusted. Before a byte of content is read, each member's name (no absolute path,
no ``..``, no backslash), type (files only: no link, device or FIFO) and declared size are checked, and
the sizes are added up: past ``policy.yaml``'s ``bundle.max_total_bytes`` (uncompressed) reading stops,
so a small gzip that inflates to gigabytes is refused, not decompressed. Members are hashed while they
stream (1 MiB at a time); only ``manifest.json`` (which must come first, at most
``max_manifest_bytes``) and, in a redacted bundle, the JSON/JSONL/YAML/CSV members that must be parsed
are held whole, one at a time.

The manifest is read with :func:`grounding_eval.files.parse_json` (a key written twice, NaN, deep
nesting: refused in one line). Then every member's hash and the file list are compared, and every member
is checked as :func:`grounding_eval.share.bundle.member_problem` checks what ``share`` writes: no nested
archive, no ``.env`` but the rebuilt ``study/.env`` (only shareable settings, no comment), no key. A
bundle whose manifest says ``redacted`` is also verified to be so: no ``data/`` member, no absolute path,
no dataset file (:mod:`grounding_eval.share.content`) and every results file already in its redacted
form — redacting it again changes nothing, so a High-Risk row carries only the fields the policy keeps.

A bundle is someone else's study, so what it could run or decide is checked too
(:mod:`grounding_eval.share.received`): a member under ``.cache/``, ``node_modules/`` or ``.promptfoo/``
is refused unread (a planted cache, package or promptfoo database could decide a verdict or run code;
``share`` never writes one), and so is a copy of one of the pack's entry files (``study/assertions/*``,
``study/providers/replay.py``) or of ``init``'s ``generate.py`` that differs from the installed
grounding-eval's, any other file in ``study/assertions/`` or ``study/providers/``, and any other code file
(``.py``, ``.pth``, ``.js``…: Python puts the study folder on ``sys.path``, so an unreferenced ``yaml.py``
or ``grounding_eval/`` still runs). Every model endpoint the
study's configs name that is not a model provider's API host, and every code reference outside the pack's
entries (``file://`` code, ``exec:``, ``python:``, ``package:``, inline code), is listed for the receiver
to read before running the study.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any, Final

from grounding_eval.errors import DataError, clip
from grounding_eval.judge._redact import SECRET_NAME
from grounding_eval.share.leaks import ARCHIVE_HEAD, KeyScan, archive_kind, find_absolute_path, is_env_file
from grounding_eval.share.received import (
    ENV_ENDPOINT,
    config_findings,
    entry_problem,
    is_config_member,
    name_problem,
)

__all__ = ["CheckReport", "check_bundle"]

_CHUNK: Final = 1 << 20
_OVERLAP: Final = 4096  # text kept from the previous chunk, so a key or path across the cut is seen
_PARSED: Final = (".json", ".jsonl", ".ndjson", ".yaml", ".yml", ".csv", ".tsv", ".ipynb", ".har")
_ENV_LINE: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=[A-Za-z0-9._/:-]*$")
_ENV_NAME: Final = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]")
# Never in a bundle (share skips them): a cache, installed packages or promptfoo's database and cache, any
# of which could decide a verdict or run code on the receiver's machine.
_NEVER_SHARED: Final = (".cache", "node_modules", ".promptfoo")


@dataclass
class CheckReport:
    """What ``bundle check`` found: files verified and version warnings (refusals raise)."""

    files: int
    manifest: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)  # endpoints and code the study's configs name


def _member_name_problem(name: str) -> str | None:
    if name.startswith("/") or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if "\\" in name:
        return "backslash in path"
    if any(part == ".." for part in PurePosixPath(name).parts):
        return "path leaves the bundle ('..')"
    return None


def _chunks(handle: IO[bytes]) -> Iterator[bytes]:
    while block := handle.read(_CHUNK):
        yield block


class _Reader:
    """Reads a bundle: every header first (names, types, sizes), then each member streamed and checked."""

    def __init__(self, bundle: Path) -> None:
        from grounding_eval.share.redact import policy

        limits = policy()["bundle"]
        self.bundle = bundle
        self.max_bytes = int(limits["max_member_bytes"])
        self.max_members = int(limits["max_members"])
        self.max_total = int(limits["max_total_bytes"])
        self.max_manifest = int(limits["max_manifest_bytes"])
        self.hashes: dict[str, str] = {}
        self.manifest: dict[str, Any] | None = None
        self.keys = KeyScan()  # a partner's machine does not know the owner's keys: their shapes only
        self.total = 0
        self.configs: dict[str, str] = {}  # the study's configs, as text, read once every hash is known

    def fail(self, problem: str) -> DataError:
        return DataError(self.bundle, problem)

    def read(self) -> None:
        try:
            # Twice: first every header (names, types, sizes, their total) with no content read — the
            # gzip stream is only inflated to skip members — then each member's content, streamed.
            with tarfile.open(self.bundle, "r:*") as tar:
                for count, info in enumerate(tar, 1):
                    self._header(info, count)
            with tarfile.open(self.bundle, "r:*") as tar:
                for count, info in enumerate(tar, 1):
                    if info.isfile():
                        self._member(tar, info, count)
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            if isinstance(exc, FileNotFoundError):
                raise self.fail("no such file") from None
            raise self.fail(f"not a readable tar.gz bundle ({type(exc).__name__}: {exc})") from None

    def _header(self, info: tarfile.TarInfo, count: int) -> None:
        if count > self.max_members:
            raise self.fail(f"more than {self.max_members} members")
        where = f"member {clip(info.name)}"
        problem = _member_name_problem(info.name)
        if problem:
            raise self.fail(f"{where}: {problem}")
        if info.issym() or info.islnk():
            raise self.fail(f"{where}: a link (to {clip(info.linkname)}); bundles hold files only")
        # (case-folded: where the file system ignores case, .Cache/ is .cache/)
        never = next((p for p in PurePosixPath(info.name.casefold()).parts if p in _NEVER_SHARED), None)
        if never is not None:
            raise self.fail(
                f"{where}: under {never}/, which share never writes: a cache, installed package or promptfoo "
                "database from someone else could decide a verdict or run code; refused unread"
            )
        if info.isdir():
            return

        problem = name_problem(info.name)
        if problem:
            raise self.fail(f"{where}: {problem}")
        if not info.isfile():
            raise self.fail(f"{where}: not a regular file")
        if info.size > self.max_bytes:
            raise self.fail(f"{where}: {info.size} bytes, over the {self.max_bytes}-byte limit")
        self.total += info.size
        if self.total > self.max_total:
            raise self.fail(
                f"{where}: the members add up to more than {self.max_total} bytes uncompressed "
                "(policy.yaml bundle.max_total_bytes): refused unread"
            )

    def _member(self, tar: tarfile.TarFile, info: tarfile.TarInfo, count: int) -> None:
        where = f"member {clip(info.name)}"
        name = PurePosixPath(info.name).as_posix()
        if name in self.hashes or (name == "manifest.json" and self.manifest is not None):
            raise self.fail(f"{where}: appears twice")
        handle = tar.extractfile(info)
        if handle is None:  # pragma: no cover - a regular file always has a handle
            raise self.fail(f"{where}: unreadable")
        if name == "manifest.json":
            self._manifest(handle, info.size, count)
            return
        if self.manifest is None:
            raise self.fail(f"{where}: comes before manifest.json (share writes the manifest first)")
        self.hashes[name] = self._stream(name, handle)

        problem = entry_problem(name, self.hashes[name])
        if problem:
            raise self.fail(f"{where}: {problem}")

    def _manifest(self, handle: IO[bytes], size: int, count: int) -> None:
        from grounding_eval.files import JsonProblem, parse_json
        from grounding_eval.share.bundle import BUNDLE_FORMAT

        if count != 1:
            raise self.fail("manifest.json is not the first member (share writes it first)")
        if size > self.max_manifest:
            raise self.fail(f"manifest.json: {size} bytes, over the {self.max_manifest}-byte limit")
        try:
            manifest = parse_json(handle.read().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise self.fail(f"manifest.json: not UTF-8 text (byte {exc.start})") from None
        except JsonProblem as exc:
            raise self.fail(f"manifest.json: {exc.message()}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
            raise self.fail(f"manifest.json: not a {BUNDLE_FORMAT} manifest")
        if not isinstance(manifest.get("files"), dict):
            raise self.fail("manifest.json: no files list")
        self.manifest = manifest

    @property
    def redacted(self) -> bool:
        return bool(self.manifest and self.manifest.get("redacted") is True)

    def _stream(self, name: str, handle: IO[bytes]) -> str:
        """Hash the member while reading it; check its head, its text, and what must be parsed."""
        digest = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")()
        is_env = name == "study/.env"
        # The pack's own files (rubrics hold a "question" field of their own) are not study data.
        parsed = not name.startswith("pack/") and PurePosixPath(name).suffix.lower() in _PARSED
        config = is_config_member(name)
        keep = is_env or config or (self.redacted and parsed)
        whole: list[bytes] = []
        tail, text_ok, first = "", True, True
        for block in _chunks(handle):
            digest.update(block)
            if first:
                self._head(name, block)
                first = False
            if keep:
                whole.append(block)
            if text_ok:
                try:
                    piece = decoder.decode(block)
                except UnicodeDecodeError:
                    text_ok, piece = False, ""
            if not text_ok:
                piece = block.decode("latin-1")  # keys are ASCII: still looked for in a binary file
            window = tail + piece
            self._text(name, window, paths=text_ok and not keep)  # parsed members: after the parse
            tail = window[-_OVERLAP:]
        if first:
            self._head(name, b"")
        if config and text_ok:
            self.configs[name] = b"".join(whole).decode("utf-8")
        if is_env:
            self.check_env(b"".join(whole).decode("utf-8", "replace"))
        elif keep and text_ok and (self.redacted and parsed):
            text = b"".join(whole).decode("utf-8")
            self._parsed(name, text)  # a results file's redaction says more than its first path
            self._text(name, text, paths=True)
        return digest.hexdigest()

    def _head(self, name: str, head: bytes) -> None:
        kind = archive_kind(head[:ARCHIVE_HEAD])
        if kind:
            raise self.fail(f"member {clip(name)}: an archive ({kind}): a bundle never holds another")
        base = PurePosixPath(name).name
        if is_env_file(base) and name != "study/.env":
            raise self.fail(f"member {clip(name)}: a {base} file: only the rebuilt study/.env is shared")
        if name.startswith("data/") and self.redacted:
            raise self.fail(f"member {clip(name)}: a dataset file in a redacted bundle (hashes only)")

    def _text(self, name: str, window: str, *, paths: bool) -> None:
        found = self.keys.find(window)
        if found:
            raise self.fail(f"member {clip(name)}: holds text shaped like an API key")
        if self.redacted and paths:
            path = find_absolute_path(window)
            if path:
                raise self.fail(
                    f"member {clip(name)}: an absolute local path ({clip(path.group(), 30)}) in a redacted bundle"
                )

    def _parsed(self, name: str, text: str) -> None:
        """A redacted bundle's structured member: results already redacted, no dataset rows."""
        from grounding_eval.share.content import Kind, classify
        from grounding_eval.share.redact import is_high_risk, redact_results, redact_row

        where = f"member {clip(name)}"
        try:
            parsed = classify(name, text)
        except DataError as exc:
            raise self.fail(f"{where}: {exc.problem}") from None
        if parsed.kind is Kind.DATA:
            raise self.fail(f"{where}: dataset rows ({parsed.why}) in a redacted bundle (hashes only)")
        rows: list[Any] = []
        if parsed.kind is Kind.RESULTS:
            if redact_results(parsed.document)[0] != parsed.document:
                rows = list(parsed.document["results"]["results"])
                problem = _row_problem(rows) or "its header holds more than the redaction keeps"
                raise self.fail(f"{where}: not redacted: {problem}")
        elif parsed.kind is Kind.RESULT_LINES:
            for number, row in enumerate(parsed.document, 1):
                if isinstance(row, dict) and is_high_risk(row) and redact_row(row) != row:
                    raise self.fail(f"{where}: not redacted: line {number}: {_row_problem([row])}")

    def check_env(self, text: str) -> None:
        """The rebuilt ``study/.env``: share's header line, then only shareable ``NAME=value`` lines."""
        from grounding_eval.share.redact import policy

        keep: dict[str, str] = policy()["bundle"]["shareable_env"]
        for number, line in enumerate(text.splitlines(), 1):
            match = _ENV_LINE.match(line)
            if number == 1 and line.startswith("# Rebuilt by grounding-eval share"):
                continue
            named = _ENV_NAME.match(line)
            setting = named.group(1) if named and named.group(1) not in keep else None
            if setting and ENV_ENDPOINT.search(setting):
                raise self.fail(
                    f"member 'study/.env': line {number} sets {setting}, an endpoint setting: promptfoo reads the "
                    "folder's .env, so it would choose where the judge's requests and your key go"
                )
            if setting and SECRET_NAME.search(setting):
                raise self.fail(
                    f"member 'study/.env': line {number} sets {setting}, a key: a bundle never carries one"
                )
            if not (match and match.group(1) in keep):
                raise self.fail(
                    f"member 'study/.env': line {number} is not a shareable NAME=value setting "
                    "(policy.yaml bundle.shareable_env; comments are not shared)"
                )
            name, value = line.split("=", 1)
            if value != keep[name]:
                raise self.fail(
                    f"member 'study/.env': line {number} sets {name} to {clip(value)}, not "
                    f"{keep[name]!r} (init's value, the only one a bundle may carry)"
                )


def _row_problem(rows: list[Any]) -> str | None:
    """Which High-Risk row first carries more than the policy keeps, and one field it should not have."""
    from grounding_eval.share.redact import is_high_risk, redact_row

    for number, row in enumerate(rows, 1):
        if not (isinstance(row, dict) and is_high_risk(row)):
            continue
        kept = redact_row(row)
        if kept == row:
            continue
        extra = sorted(set(row) - set(kept)) or sorted(k for k in row if row[k] != kept.get(k))
        query = ((row.get("testCase") or {}).get("metadata") or {}).get("query_id")
        what = clip(extra[0]) if extra else "more"
        return f"High-Risk row {number} ({clip(query)}) carries {what}, which the policy drops"
    return None


def check_bundle(bundle: Path) -> CheckReport:
    """Verify a bundle (see the module docstring); warn on version differences that can change a score.

    Raises:
        DataError: the first problem, as one line naming the bundle and the member.
    """
    reader = _Reader(bundle)
    reader.read()
    manifest = reader.manifest
    if manifest is None:
        raise DataError(bundle, "no manifest.json")
    listed = manifest["files"]
    for name, entry in listed.items():
        problem = _member_name_problem(str(name))
        if problem:
            raise DataError(bundle, f"manifest.json lists {clip(name)}: {problem}")
        if name not in reader.hashes:
            raise DataError(bundle, f"member {clip(name)}: listed in the manifest but missing")
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        actual = reader.hashes[name]
        if actual != expected:
            raise DataError(
                bundle, f"member {clip(name)}: SHA-256 {actual[:16]}… differs from the manifest's (tampered)"
            )
    extra = sorted(set(reader.hashes) - set(listed))
    if extra:
        raise DataError(bundle, f"member {clip(extra[0])}: not in the manifest")
    return CheckReport(
        files=len(listed), manifest=manifest, warnings=_version_warnings(manifest), listed=_listed(reader)
    )


def _listed(reader: _Reader) -> list[str]:
    """The endpoints and code the study's configs name (:func:`grounding_eval.share.received.config_findings`);
    a config that does not parse is named as such (promptfoo could not run it either)."""
    import yaml

    from grounding_eval.files import JsonProblem, parse_json

    out: list[str] = []
    for name, text in sorted(reader.configs.items()):
        try:
            document = parse_json(text) if name.endswith(".json") else yaml.safe_load(text)
        except (JsonProblem, ValueError, yaml.YAMLError) as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            out.append(f"config: {name}: not readable ({clip(first)}); promptfoo could not run it either")
            continue
        out += config_findings(name, document, reader.hashes)
    return out


def _version_warnings(manifest: dict[str, Any]) -> list[str]:
    """Differences between the bundle's versions and this environment's that can change a score."""
    from grounding_eval.resources import pack_root, pack_version, sha256_file
    from grounding_eval.share.bundle import _package_versions, _promptfoo_versions
    from grounding_eval.share.redact import policy

    warnings = []
    ours = _package_versions()
    packages = manifest.get("packages")
    theirs: dict[str, Any] = dict(packages) if isinstance(packages, dict) else {}
    if manifest.get("grounding_eval") != pack_version():
        theirs = {**theirs, "grounding-eval": manifest.get("grounding_eval")}
    for name in policy()["bundle"]["score_sensitive_packages"]:
        mine = pack_version() if name == "grounding-eval" else ours.get(name)
        if name in theirs and theirs[name] != mine:
            warnings.append(f"{name}: bundle {theirs[name]}, here {mine} (can change scores)")
    pinned = manifest.get("promptfoo")
    here = (
        _promptfoo_versions(Path.cwd()).get("promptfoo") if (Path.cwd() / "node_modules").is_dir() else None
    )
    if pinned and here is None:
        warnings.append(f"promptfoo: bundle {pinned}, here not known (no node_modules in this folder; "
                        "run bundle check from your study folder)")  # fmt: skip
    elif pinned and pinned != here:
        warnings.append(f"promptfoo: bundle {pinned}, here {here} (can change scores)")
    for rubric in manifest.get("rubrics") or ():
        if not isinstance(rubric, dict):
            continue
        mine_path = pack_root() / "rubrics" / PurePosixPath(str(rubric.get("file"))).name
        label = f"rubric {rubric.get('id') or rubric.get('file')}@{rubric.get('version', '-')}"
        if not mine_path.is_file():
            warnings.append(f"{label}: not in this grounding-eval (can change scores)")
        elif sha256_file(mine_path) != rubric.get("sha256"):
            warnings.append(
                f"{label}: the bundle's rubric file differs from this grounding-eval's (can change scores)"
            )
    return warnings
