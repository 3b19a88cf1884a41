"""``grounding-eval share`` and ``grounding-eval bundle check``: a study a partner can reproduce.

A bundle is a gzip tar with ``manifest.json`` and four folders:

``study/``    the study folder as ``init`` wrote it and the owner edited it (config, prompts, entry
              files, ``package.json``, ``.env``), without ``node_modules``, promptfoo's database or caches;
``pack/``     the rubrics (YAML and judge templates), generation prompts and JSON Schemas of the
              grounding-eval that made it, so a partner can diff them against their own;
``data/``     the dataset files the owner chose (``--data``): only a dataset that loads and validates;
              under ``--redact`` none (the manifest lists their SHA-256 only);
``results/``  promptfoo results files (``--results``), redacted under ``--redact``.

The manifest names the SHA-256 and size of every member, grounding-eval's version, promptfoo's and
Node's (as pinned by the study's ``package.json``, and as installed in its ``node_modules`` when
present), the Python package versions and each rubric's id, version, source and file hash.

``bundle check`` trusts nothing in the tar: it refuses absolute paths, ``..`` components, links and
special files before reading a byte of content, then every member's hash against the manifest and the
manifest's list against the members. Version differences that can change a score are warnings.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import platform
import tarfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from grounding_eval.errors import DataError, clip
from grounding_eval.resources import pack_root, pack_version, sha256_file
from grounding_eval.share.redact import policy, redact_results

__all__ = ["BUNDLE_FORMAT", "CheckReport", "check_bundle", "make_bundle"]

BUNDLE_FORMAT = "grounding-eval-bundle/1"
MANIFEST = "manifest.json"
# Never shared from a study folder: installed packages, promptfoo's database and logs, caches, keys.
_SKIP_DIRS = frozenset({"node_modules", ".promptfoo", ".cache", "__pycache__", ".git", "results", ".venv"})
_SKIP_FILES = frozenset({".env.local"})


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in policy()["bundle"]["recorded_packages"]:
        try:
            out[str(name)] = metadata.version(str(name))
        except metadata.PackageNotFoundError:
            out[str(name)] = None
    return out


def _promptfoo_versions(study: Path) -> dict[str, str | None]:
    """promptfoo and Node as the study pins them (package.json) and as installed there (node_modules)."""

    def read(path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    pins = read(study / "package.json").get("devDependencies") or {}
    installed = read(study / "node_modules" / "promptfoo" / "package.json").get("version")
    return {
        "promptfoo": str(installed or pins.get("promptfoo") or "") or None,
        "promptfoo_pinned": pins.get("promptfoo"),
        "node_pinned": pins.get("node"),
    }


def _rubrics() -> list[dict[str, Any]]:
    from grounding_eval.judge.rubric import load_rubric

    out: list[dict[str, Any]] = []
    for path in sorted((pack_root() / "rubrics").glob("*.yaml")):
        try:
            rubric = load_rubric(path)
        except DataError:  # not a judge rubric (docs-QA and factual-accuracy have their own formats)
            out.append({"file": f"pack/rubrics/{path.name}", "sha256": sha256_file(path)})
            continue
        marks = Counter(str(p) for c in rubric.criteria for p in c.provenance.values())
        out.append({
            "file": f"pack/rubrics/{path.name}",
            "provenance": dict(sorted(marks.items())),  # texts marked methods-document / grounding-eval
            "id": rubric.id,
            "version": rubric.version,
            "prompt_version": rubric.prompt_version,
            "source": rubric.source,
            "sha256": sha256_file(path),
        })  # fmt: skip
    return out


def _shareable_env(data: bytes) -> tuple[bytes, list[str]]:
    """The study's ``.env`` with only the settings that are the same on every machine.

    A ``.env`` is where API keys are kept; it also names this machine's Python. Only the settings in
    ``policy.yaml`` (``bundle.shareable_env``) go into the bundle; the names of the others (never their
    values) are listed in the manifest.
    """
    keep = set(policy()["bundle"]["shareable_env"])
    lines, dropped = [], []
    for line in data.decode("utf-8", "replace").splitlines():
        name = line.split("=", 1)[0].strip().removeprefix("export ").strip()
        if not line.strip() or line.lstrip().startswith("#") or name in keep:
            lines.append(line)
        else:
            dropped.append(name if "=" in line else "(a line that is not NAME=value)")
    return ("\n".join(lines) + "\n").encode(), dropped


def _study_files(study: Path) -> Iterable[tuple[str, Path]]:
    for folder, dirs, files in os.walk(study):
        dirs[:] = sorted(
            d for d in dirs if d not in _SKIP_DIRS and not os.path.islink(os.path.join(folder, d))
        )
        for name in sorted(files):
            path = Path(folder) / name
            if name in _SKIP_FILES or path.is_symlink() or not path.is_file():
                continue
            yield "study/" + path.relative_to(study).as_posix(), path


def _pack_files() -> Iterable[tuple[str, Path]]:
    root = pack_root()
    for sub, pattern in (("rubrics", "*.yaml"), ("rubrics/templates", "*.j2"), ("prompts", "*")):
        for path in sorted((root / sub).glob(pattern)):
            if path.is_file():
                yield f"pack/{sub}/{path.name}", path
    for path in sorted((root / "datasets" / "schemas").glob("*.json")):
        yield f"pack/schemas/{path.name}", path


def _data_files(dataset: Path) -> list[tuple[str, Path]]:
    """The dataset's files, once it loads and validates (an invalid dataset is refused, not shared)."""
    from grounding_eval.data.dataset import load_dataset

    load_dataset(dataset)
    out = []
    for folder, dirs, files in os.walk(dataset):
        dirs[:] = sorted(
            d for d in dirs if d != "__pycache__" and not os.path.islink(os.path.join(folder, d))
        )
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_file() and not path.is_symlink():
                out.append((f"data/{dataset.name}/" + path.relative_to(dataset).as_posix(), path))
    return out


def make_bundle(
    study: Path,
    output: Path,
    *,
    results: list[Path],
    redact: bool,
    dataset: Path | None = None,
) -> dict[str, Any]:
    """Write the bundle; returns its manifest.

    Raises:
        DataError: the study has no ``promptfooconfig.yaml``, a results file cannot be read, the
            dataset does not validate, or two results files share a name.
    """
    from grounding_eval.files import RESULTS, read_json

    if not (study / "promptfooconfig.yaml").is_file():
        raise DataError(
            study, "not a study folder (no promptfooconfig.yaml; make one with grounding-eval init)"
        )
    members: dict[str, bytes] = {}
    env_dropped: list[str] = []
    for name, path in [*_study_files(study), *_pack_files()]:
        if path.resolve() == output.resolve():
            continue  # a bundle written into the study folder is not part of the next one
        members[name] = path.read_bytes()
        if name == "study/.env":
            members[name], env_dropped = _shareable_env(members[name])
    dataset_hashes: dict[str, str] = {}
    if dataset is not None:
        for name, path in _data_files(dataset):
            if redact:  # hashes only: the files hold High-Risk questions, sources and answers
                dataset_hashes[name] = sha256_file(path)
            else:
                members[name] = path.read_bytes()
    redacted_rows = 0
    for path in results:
        name = f"results/{path.name}"
        if name in members:
            raise DataError(path, f"two results files named {path.name!r}: rename one")
        data = read_json(path, RESULTS)
        if redact:
            data, count = redact_results(data)
            redacted_rows += count
            members[name] = json.dumps(data, ensure_ascii=False, indent=1).encode()
        else:
            members[name] = path.read_bytes()
    manifest = {
        "format": BUNDLE_FORMAT,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "grounding_eval": pack_version(),
        **_promptfoo_versions(study),
        "python": platform.python_version(),
        "packages": _package_versions(),
        "rubrics": _rubrics(),
        "redacted": redact,
        "redacted_rows": redacted_rows,
        "dataset_file_hashes": dataset_hashes,
        "env_dropped": env_dropped,
        "files": {name: {"sha256": _sha(data), "size": len(data)} for name, data in sorted(members.items())},
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(output, "w:gz") as tar:
        for name, data in [(MANIFEST, json.dumps(manifest, indent=1).encode()), *sorted(members.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0  # the same study gives the same members, whenever it is shared
            tar.addfile(info, io.BytesIO(data))
    return manifest


@dataclass
class CheckReport:
    """What ``bundle check`` found: files verified and version warnings (refusals raise)."""

    files: int
    manifest: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _member_name_problem(name: str) -> str | None:
    if name.startswith("/") or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if "\\" in name:
        return "backslash in path"
    if any(part == ".." for part in PurePosixPath(name).parts):
        return "path leaves the bundle ('..')"
    return None


def _read_members(bundle: Path) -> dict[str, bytes]:
    limits = policy()["bundle"]
    max_bytes, max_members = int(limits["max_member_bytes"]), int(limits["max_members"])
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(bundle, "r:*") as tar:
            for count, info in enumerate(tar, 1):
                if count > max_members:
                    raise DataError(bundle, f"more than {max_members} members")
                where = f"member {clip(info.name)}"
                problem = _member_name_problem(info.name)
                if problem:
                    raise DataError(bundle, f"{where}: {problem}")
                if info.issym() or info.islnk():
                    raise DataError(
                        bundle, f"{where}: a link (to {clip(info.linkname)}); bundles hold files only"
                    )
                if info.isdir():
                    continue
                if not info.isfile():
                    raise DataError(bundle, f"{where}: not a regular file")
                if info.size > max_bytes:
                    raise DataError(bundle, f"{where}: {info.size} bytes, over the {max_bytes}-byte limit")
                name = PurePosixPath(info.name).as_posix()
                if name in members:
                    raise DataError(bundle, f"{where}: appears twice")
                handle = tar.extractfile(info)
                members[name] = handle.read() if handle else b""
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise DataError(bundle, "no such file") from None
        raise DataError(bundle, f"not a readable tar.gz bundle ({type(exc).__name__}: {exc})") from None
    return members


def check_bundle(bundle: Path) -> CheckReport:
    """Verify a bundle: paths, member types, every hash and the file list; warn on version differences.

    Raises:
        DataError: the first problem, as one line naming the bundle and the member.
    """
    members = _read_members(bundle)
    raw = members.pop(MANIFEST, None)
    if raw is None:
        raise DataError(bundle, f"no {MANIFEST}")
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        raise DataError(bundle, f"{MANIFEST} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise DataError(bundle, f"{MANIFEST}: not a {BUNDLE_FORMAT} manifest")
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        raise DataError(bundle, f"{MANIFEST}: no files list")
    for name, entry in listed.items():
        if _member_name_problem(str(name)):
            raise DataError(bundle, f"{MANIFEST} lists {clip(name)}: {_member_name_problem(str(name))}")
        if name not in members:
            raise DataError(bundle, f"member {clip(name)}: listed in the manifest but missing")
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        actual = _sha(members[name])
        if actual != expected:
            raise DataError(
                bundle, f"member {clip(name)}: SHA-256 {actual[:16]}… differs from the manifest's (tampered)"
            )
    extra = sorted(set(members) - set(listed))
    if extra:
        raise DataError(bundle, f"member {clip(extra[0])}: not in the manifest")
    return CheckReport(files=len(listed), manifest=manifest, warnings=_version_warnings(manifest, members))


def _version_warnings(manifest: dict[str, Any], members: dict[str, bytes]) -> list[str]:
    """Differences between the bundle's versions and this environment's that can change a score."""
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
