"""Vendor eyecite's released wheel into grounding_eval/_vendor/eyecite/, with one patch (issue 42).

Why: eyecite (every release, 2.7.8 the newest) requires fast-diff-match-patch, whose only releases (2.0.1,
2.1.0) have no wheel for CPython 3.13 or 3.14 on any platform, nor for Linux aarch64 on any CPython. pip
installs it from source there, which needs a C++ compiler; without one the pack does not install. eyecite
needs that library only to map offsets between a marked-up text and its plain text (``annotate`` and a
``Document`` built from ``markup_text``), which the pack never does — but ``eyecite/__init__.py`` imports
``annotate``, which imports it at its top, so eyecite cannot even be imported without it. No other
distribution provides that module, and no eyecite release imports it lazily.

So the pack carries eyecite's own released files (BSD-2-Clause, its LICENSE beside them) with two
mechanical changes, and depends on what eyecite depends on but fast-diff-match-patch:

* its absolute imports of itself (``from eyecite.x import``) name the vendored package, so it never
  meets a user's own eyecite;
* ``annotate.py`` imports fast_diff_match_patch where it diffs (``SpanUpdater.get_diff_steps``), not at
  its top. Called without it, that raises ModuleNotFoundError naming the module, as the import did.

Nothing else changes. ``UPSTREAM_RECORD`` keeps the wheel's RECORD lines of the vendored files; the test
(tests/test_vendored_eyecite.py) undoes the two changes and checks every file against them, so a hand
edit fails CI. To move to a new eyecite: set ``UPSTREAM`` and run this script (it downloads the wheel
with pip), then run the citation tests and ``scripts/record_sample_scores.py --check``.

Usage::

    .venv/bin/python scripts/vendor_eyecite.py [--wheel eyecite-2.7.8-py3-none-any.whl]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = "eyecite==2.7.8"
TARGET = REPO / "grounding_eval" / "_vendor" / "eyecite"
PACKAGE = "grounding_eval._vendor.eyecite"
# eyecite's wheel files the pack carries: all but test_factories.py (eyecite's own test helpers).
FILES = (
    "__init__.py", "annotate.py", "clean.py", "find.py", "helpers.py", "models.py", "py.typed",
    "regexes.py", "resolve.py", "tokenizers.py", "utils.py",
)  # fmt: skip
# The one patch: (the upstream text, the vendored text) in annotate.py.
LAZY_IMPORT = (
    (
        "import fast_diff_match_patch\n\nfrom eyecite.utils import (",
        "from eyecite.utils import (",
    ),
    (
        "        try:\n            return fast_diff_match_patch.diff(",
        "        # grounding-eval: imported here, not at the top (scripts/vendor_eyecite.py: issue 42)\n"
        "        import fast_diff_match_patch\n\n"
        "        try:\n            return fast_diff_match_patch.diff(",
    ),
)
_OWN_IMPORT = re.compile(r"^(\s*from )eyecite(\.| import )", re.MULTILINE)
_VENDORED_IMPORT = re.compile(rf"^(\s*from ){re.escape(PACKAGE)}(\.| import )", re.MULTILINE)


def vendored(name: str, upstream: str) -> str:
    """The vendored text of eyecite's file ``name`` (its upstream text: ``upstream``)."""
    text = upstream
    if name == "annotate.py":
        for before, after in LAZY_IMPORT:
            if text.count(before) != 1:
                raise ValueError(f"annotate.py: the patched text is not there once: {before!r}")
            text = text.replace(before, after)
    if PACKAGE in text:
        raise ValueError(f"{name}: already names {PACKAGE}")
    return _OWN_IMPORT.sub(rf"\g<1>{PACKAGE}\g<2>", text)


def upstream_of(name: str, text: str) -> str:
    """eyecite's own text of the vendored file ``name`` (its vendored text: ``text``): the changes undone."""
    text = _VENDORED_IMPORT.sub(r"\g<1>eyecite\g<2>", text)
    if name == "annotate.py":
        for before, after in reversed(LAZY_IMPORT):
            text = text.replace(after, before, 1)
    return text


def record_hash(data: bytes) -> str:
    """A RECORD file's hash of ``data`` (PEP 376: sha256, urlsafe base64 without padding)."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def vendor(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        record = {line.split(",")[0]: line for line in archive.read(record_name).decode().splitlines()}
        license_name = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        TARGET.mkdir(parents=True, exist_ok=True)
        kept = []
        for name in FILES:
            data = archive.read(f"eyecite/{name}")
            line = record[f"eyecite/{name}"]
            if line.split(",")[1] != record_hash(data):
                raise ValueError(f"{wheel}: eyecite/{name} does not match the wheel's RECORD")
            text = vendored(name, data.decode("utf-8"))
            if upstream_of(name, text) != data.decode("utf-8"):
                raise ValueError(f"eyecite/{name}: the vendoring does not undo")
            (TARGET / name).write_text(text, encoding="utf-8", newline="")
            kept.append(line)
        (TARGET / "LICENSE").write_bytes(archive.read(license_name))
        header = f"# {UPSTREAM}: RECORD lines of the vendored files (scripts/vendor_eyecite.py)\n"
        (TARGET / "UPSTREAM_RECORD").write_text(header + "\n".join(kept) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="eyecite's wheel (default: pip downloads UPSTREAM)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        wheel = args.wheel
        if wheel is None:
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                       "--dest", folder, UPSTREAM]  # fmt: skip
            subprocess.run(command, check=True, timeout=300)
            wheel = next(Path(folder).glob("eyecite-*.whl"))
        try:
            vendor(wheel)
        except (OSError, ValueError, KeyError, StopIteration, zipfile.BadZipFile) as error:
            print(f"vendor_eyecite: error: {wheel}: {error}", file=sys.stderr)
            return 1
    print(f"vendored {UPSTREAM} into {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
