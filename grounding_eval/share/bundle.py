"""``grounding-eval share``: a study a partner can reproduce, packed so that nothing private leaks.

A bundle is a gzip tar with ``manifest.json`` (always the first member) and four folders:

``study/``    the study folder as ``init`` wrote it and the owner edited it (config, prompts, entry
              files, ``package.json``), without ``node_modules``, promptfoo's database or caches; its
              ``.env`` rebuilt with only the machine-independent settings, no other ``.env*`` file;
``pack/``     the rubrics (YAML and judge templates), generation prompts and JSON Schemas of the
              grounding-eval that made it, so a partner can diff them against their own;
``data/``     the dataset files the owner chose (``--data``): only a dataset that loads and validates;
              under ``--redact`` none (the manifest lists their SHA-256 only);
``results/``  promptfoo results files (``--results``), redacted under ``--redact``.

Under ``--redact`` the study folder's files are judged by what they hold, not where they are
(:mod:`grounding_eval.share.content`): results files anywhere are redacted, dataset files anywhere are
listed by hash only (``dataset_file_hashes``), and paths are rewritten relative to the study. In every
bundle, a member holding a key or a nested archive refuses the share, and under ``--redact`` so does one
holding an absolute path or a High-Risk item's text (:mod:`grounding_eval.share.leaks`): one line naming
the file, nothing written. The bundle is written to a temporary file and moved into place.

The manifest names the SHA-256 and size of every member, grounding-eval's version, promptfoo's and
Node's (as pinned by the study's ``package.json``, and as installed in its ``node_modules`` when
present), the Python package versions, each rubric's id, version, source and file hash, and the names
(never the values) of the settings, ``.env*`` files and package managers' lockfiles and settings left
out. ``bundle check`` (:mod:`grounding_eval.share.check`) verifies all of it against what the members hold.
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
from pathlib import Path
from typing import Any

from grounding_eval.data.dataset import load_dataset
from grounding_eval.errors import DataError, clip
from grounding_eval.files import RESULTS, read_bytes, read_yaml
from grounding_eval.resources import pack_root, pack_version, sha256_file
from grounding_eval.results_file import read_results
from grounding_eval.share.content import Kind, classify, dataset_folders, high_risk_texts, results_rows
from grounding_eval.share.leaks import (
    ARCHIVE_HEAD,
    KeyScan,
    archive_kind,
    find_absolute_path,
    is_env_file,
    line_of,
    relative_paths,
)
from grounding_eval.share.redact import is_high_risk, policy, redact_results, redact_row

__all__ = ["BUNDLE_FORMAT", "MANIFEST", "make_bundle", "member_problem"]

BUNDLE_FORMAT = "grounding-eval-bundle/1"
MANIFEST = "manifest.json"
# Never shared from a study folder: installed packages, promptfoo's database and logs, caches, keys.
_SKIP_DIRS = frozenset({"node_modules", ".promptfoo", ".cache", "__pycache__", ".git", "results", ".venv"})
_ENV_HEADER = "Rebuilt by grounding-eval share: only the settings that are the same on every machine."


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
    """A new ``.env`` holding only the study's settings that are the same on every machine.

    A ``.env`` is where API keys are kept (commented-out ones too); it also names this machine's Python.
    The file is rebuilt from scratch: one ``NAME=value`` line for each setting in ``policy.yaml``
    (``bundle.shareable_env``) that has the one value the policy allows it (``init``'s), nothing else, no
    comment of the user's. The names of the others (never their values) are returned for the manifest.
    """
    keep: dict[str, str] = policy()["bundle"]["shareable_env"]
    lines, dropped = [f"# {_ENV_HEADER}"], []
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip().removeprefix("export ").strip()
        value = value.strip().strip("'\"")
        if sep and keep.get(name) == value:
            lines.append(f"{name}={value}")
        else:
            dropped.append(name if sep else "(a line that is not NAME=value)")
    return ("\n".join(lines) + "\n").encode(), dropped


def _study_files(study: Path, skip: Path) -> list[tuple[str, Path]]:
    """``(member name, path)`` of the study's files, without installed and private folders and links."""
    out = []
    for folder, dirs, files in os.walk(study):
        dirs[:] = sorted(
            d for d in dirs if d.casefold() not in _SKIP_DIRS and not os.path.islink(os.path.join(folder, d))
        )
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file() or path.resolve() == skip.resolve():
                continue  # a bundle written into the study folder is not part of the next one
            out.append(("study/" + path.relative_to(study).as_posix(), path))
    return out


def _pack_files() -> Iterable[tuple[str, Path]]:
    root = pack_root()
    for sub, pattern in (("rubrics", "*.yaml"), ("rubrics/templates", "*.j2"), ("prompts", "*")):
        for path in sorted((root / sub).glob(pattern)):
            if path.is_file():
                yield f"pack/{sub}/{path.name}", path
    for path in sorted((root / "datasets" / "schemas").glob("*.json")):
        yield f"pack/schemas/{path.name}", path


def _results_members(results: list[Path]) -> list[tuple[str, Path]]:
    """``(member name, path)`` of each ``--results`` file, once each: two files with the same name
    (``a/results.json``, ``b/results.json``) become ``results/results.json`` and ``results/results-2.json``
    in the order given, so both are shared; the same file given twice is shared once."""
    out: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    taken: set[str] = set()
    for path in results:
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        name, number = f"results/{path.name}", 1
        while name in taken:
            number += 1
            name = f"results/{path.stem}-{number}{path.suffix}"
        taken.add(name)
        out.append((name, path))
    return out


def _data_files(dataset: Path) -> list[tuple[str, Path]]:
    """The dataset's files, once it loads and validates (an invalid dataset is refused, not shared)."""

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


def _configured_datasets(study: Path) -> list[Path]:
    """The dataset folders the study's config names (``tests[].config.dataset``), resolved against it,
    and the pack's sample, which a study without ``dataset:`` runs on."""

    out = [pack_root() / "datasets" / "sample"]
    try:
        config = read_yaml(study / "promptfooconfig.yaml")
    except DataError:
        return out
    tests = config.get("tests") if isinstance(config, dict) else None
    for test in tests if isinstance(tests, list) else ():
        named = (test.get("config") or {}).get("dataset") if isinstance(test, dict) else None
        if isinstance(named, str) and named.strip():
            out.append((study / named).resolve())
    return out


class _Sharing:
    """The members of one bundle being made, and the checks every member passes before it is written."""

    def __init__(self, study: Path, redact: bool, shared_data: dict[Path, str]) -> None:
        self.study, self.redact, self.shared_data = study, redact, shared_data
        self.members: dict[str, bytes] = {}
        self.sources: dict[str, Path] = {}  # member -> the file it came from, for messages
        self.withheld: dict[str, str] = {}  # member name -> SHA-256: hashed, not shared
        self.rows: list[Any] = []  # every results row seen, for the High-Risk texts
        self.redacted_rows = 0

    def add(self, name: str, source: Path, data: bytes) -> None:
        self.members[name], self.sources[name] = data, source

    def paths(self, value: Any) -> Any:
        """``value`` (text or a parsed document) with its absolute paths rewritten (under --redact)."""
        if not self.redact:
            return value
        if isinstance(value, str):
            return relative_paths(value, self.study, self.shared_data)
        if isinstance(value, dict):
            return {self.paths(k): self.paths(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.paths(v) for v in value]
        return value

    def seen(self, kind: Kind, document: Any) -> None:
        """Count a results document's rows (or result lines) that are shared as they are."""
        if kind is Kind.RESULTS:
            self.rows += results_rows(document)
        elif kind is Kind.RESULT_LINES:
            self.rows += list(document)

    def add_results(self, name: str, source: Path, document: Any) -> None:
        self.rows += results_rows(document)
        if self.redact:
            document, count = redact_results(document)
            self.redacted_rows += count
            self.add(name, source, _json(self.paths(document)))
        else:
            self.add(name, source, source.read_bytes())

    def add_result_lines(self, name: str, source: Path, rows: list[Any]) -> None:
        self.rows += rows
        out = []
        for row in rows:
            if isinstance(row, dict) and is_high_risk(row):
                row = redact_row(row)
                self.redacted_rows += 1
            out.append(json.dumps(self.paths(row), ensure_ascii=False))
        self.add(name, source, ("\n".join(out) + "\n").encode())

    def check(self, keys: KeyScan, datasets: list[Path]) -> None:
        """Refuse the share, in one line naming the file, if a member holds a key, a nested archive, an
        absolute path or (under --redact) the text of a High-Risk item."""

        texts = high_risk_texts(self.rows, datasets) if self.redact else {}
        # A line the pack's own files hold (a rubric's wording, a prompt template) is nobody's text.
        public = [
            data.decode("utf-8", "replace") for name, data in self.members.items() if name.startswith("pack/")
        ]
        # Each text as written and as a JSON string holds it (both escapings), computed once.
        forms = {
            form: what
            for text, what in texts.items()
            if not any(text in p for p in public)
            for form in (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])
        }
        for name, data in self.members.items():
            problem = member_problem(name, data, keys=keys, redacted=self.redact, texts=forms)
            if problem:
                raise DataError(self.sources.get(name, name), f"{problem}; nothing was written")


def make_bundle(
    study: Path,
    output: Path,
    *,
    results: list[Path],
    redact: bool,
    dataset: Path | None = None,
) -> dict[str, Any]:
    """Write the bundle; returns its manifest.

    Under ``redact`` what a study file is decides what is shared (:mod:`grounding_eval.share.content`):
    results anywhere are redacted, dataset files anywhere are hashed only. In every bundle ``.env*``
    files are replaced by a rebuilt ``.env``, and a member holding a key or a nested archive refuses the
    share (:mod:`grounding_eval.share.leaks`).

    Raises:
        DataError: the study has no ``promptfooconfig.yaml``, a results file cannot be read, the
            dataset does not validate, or a member would leak (a key, a
            nested archive, an absolute path or High-Risk text under ``redact``): one line, no bundle.
    """
    from grounding_eval.share.received import entry_problem, is_package_manager_file, name_problem

    if not (study / "promptfooconfig.yaml").is_file():
        raise DataError(
            study, "not a study folder (no promptfooconfig.yaml; make one with grounding-eval init)"
        )
    shareable = policy()["bundle"]["shareable_env"]
    shared_data = {dataset.resolve(): f"data/{dataset.name}"} if dataset is not None and not redact else {}
    sharing = _Sharing(study, redact, shared_data)
    files = _study_files(study, output)
    # A lockfile (npm install writes one in the study) or a package manager's settings: left out, never
    # shared — bundle check refuses them, as they could have npm fetch promptfoo from another host.
    package_files = sorted(name for name, _ in files if is_package_manager_file(name))
    files = [(name, path) for name, path in files if not is_package_manager_file(name)]
    env_files = [(name, path) for name, path in files if is_env_file(path.name)]
    keys = KeyScan.for_study([read_bytes(p).decode("utf-8", "replace") for _, p in env_files], shareable)
    folders = dataset_folders(path for _, path in files)
    if dataset is not None:
        folders.add(dataset.resolve())
    configured = _configured_datasets(study)
    folders |= {f for f in configured if f.is_relative_to(study.resolve())}
    env_dropped: list[str] = []
    for name, path in files:
        if is_env_file(path.name):
            if name == "study/.env":
                data, env_dropped = _shareable_env(read_bytes(path))
                sharing.add(name, path, data)
            continue  # .env.bak, .env.production, .envrc, a .env in a subfolder: never shared
        data = read_bytes(path, RESULTS)
        problem = name_problem(name) or entry_problem(name, _sha(data))  # what bundle check would refuse
        if problem:
            raise DataError(
                path, f"{problem}; bundle check refuses such a bundle, so share does not write it"
            )
        kind = archive_kind(data[:ARCHIVE_HEAD], path.name)
        if kind:
            raise DataError(path, f"an archive ({kind}) inside the study: a bundle never holds another "
                            "(an earlier bundle?); move it out of the study folder")  # fmt: skip
        text = _utf8(data)
        parsed = classify(str(path), text, in_dataset=any(path.resolve().is_relative_to(f) for f in folders))
        if not redact:  # shared as it is; its rows are counted for the High-Risk warning
            sharing.seen(parsed.kind, parsed.document)
            sharing.add(name, path, data)
            continue
        if parsed.kind is Kind.DATA and name == "study/promptfooconfig.yaml":
            raise DataError(path, f"holds test rows ({parsed.why}): under --redact the config cannot be "
                            "shared with its tests written in it; move them into a dataset")  # fmt: skip
        if parsed.kind is Kind.DATA:
            sharing.withheld[name] = _sha(data)
        elif parsed.kind is Kind.RESULTS:
            # JSON results are read again by the one results reader (its shape, nesting and text rules).
            document = read_results(path) if path.suffix.lower() == ".json" else parsed.document
            sharing.add_results(name, path, document)
        elif parsed.kind is Kind.RESULT_LINES:
            sharing.add_result_lines(name, path, parsed.document)
        else:
            sharing.add(name, path, sharing.paths(text).encode() if text is not None else data)
    for name, path in _pack_files():
        sharing.add(name, path, path.read_bytes())
    if dataset is not None:
        for name, path in _data_files(dataset):
            if is_package_manager_file(name):
                package_files.append(name)
                continue
            if redact:  # hashes only: the files hold High-Risk questions, sources and answers
                sharing.withheld[name] = sha256_file(path)
            else:
                sharing.add(name, path, path.read_bytes())
    for name, path in _results_members(results):
        if is_package_manager_file(name):
            raise DataError(path, "a results file named as a package manager's lockfile or settings: "
                            "bundle check refuses that name, so share does not write it; rename it")  # fmt: skip
        sharing.add_results(name, path, read_results(path))
    sharing.check(keys, sorted(folders | set(configured)))
    manifest = {
        "format": BUNDLE_FORMAT,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "grounding_eval": pack_version(),
        **_promptfoo_versions(study),
        "python": platform.python_version(),
        "packages": _package_versions(),
        "rubrics": _rubrics(),
        "redacted": redact,
        "redacted_rows": sharing.redacted_rows,
        "high_risk_rows": sum(1 for row in sharing.rows if isinstance(row, dict) and is_high_risk(row)),
        "dataset_file_hashes": dict(sorted(sharing.withheld.items())),
        "env_dropped": env_dropped,
        "env_files_dropped": sorted(name for name, _ in env_files if name != "study/.env"),
        "package_files_dropped": package_files,
        "files": {
            name: {"sha256": _sha(data), "size": len(data)} for name, data in sorted(sharing.members.items())
        },
    }
    _write_tar(
        output, [(MANIFEST, json.dumps(manifest, indent=1).encode()), *sorted(sharing.members.items())]
    )
    return manifest


def _json(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, indent=1).encode()


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _write_tar(output: Path, members: list[tuple[str, bytes]]) -> None:
    """Write the gzip tar to a temporary file beside ``output`` and move it into place (as
    :func:`grounding_eval.files.write_text_atomic` does for text): never half a bundle."""
    import tempfile

    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle, tarfile.open(fileobj=handle, mode="w:gz") as tar:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o644
                info.mtime = 0  # the same study gives the same members, whenever it is shared
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def member_problem(
    name: str, data: bytes, *, keys: KeyScan, redacted: bool, texts: dict[str, str] | None = None
) -> str | None:
    """Why this member must not be in a bundle, or ``None``: a nested archive, a key, and in a redacted
    bundle an absolute path or the text of a High-Risk item (``texts``: each form it may be written in,
    with what it is)."""
    kind = archive_kind(data[:ARCHIVE_HEAD])
    if kind:
        return f"an archive ({kind}): a bundle never holds another"
    text = _utf8(data)
    found = keys.find(text if text is not None else data.decode("latin-1"))
    if found:
        return f"{found}: an API key must never be shared (use {{{{ env.NAME }}}} in configs)"
    if not redacted or text is None:
        return None
    path = find_absolute_path(text)
    if path:
        return f"line {line_of(text, path.start())}: an absolute local path ({clip(path.group(), 30)})"
    for form, what in (texts or {}).items():
        if form in text:
            return f"holds {what} (line {line_of(text, text.index(form))}), which --redact never shares"
    return None
