"""``bundle check`` verifies what a bundle holds (issue 19): tests/golden/share_check.yaml's bundles are
refused in one line, a gzip bomb is refused unread within a small memory budget, and the bundles
``share`` makes pass."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.cli import main
from grounding_eval.share.bundle import make_bundle
from tests.share.test_share_layouts import RESULTS, SAMPLE, make_study, members

GOLDEN = Path(__file__).parents[1] / "golden" / "share_check.yaml"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real redacted bundle: results in the study root, the sample dataset inside the study."""
    tmp = tmp_path_factory.mktemp("base")
    study = make_study(tmp, {"data": "sample", "results.json": "results"}, dataset="data")
    out = tmp / "base.tar.gz"
    make_bundle(study, out, results=[], redact=True)
    return out


def _content(spec: Any, shared: dict[str, bytes]) -> bytes:
    document = json.loads(RESULTS.read_text())
    if spec == "results-raw":
        return RESULTS.read_bytes()
    if spec == "results-jsonl":
        return "".join(json.dumps(r) + "\n" for r in document["results"]["results"]).encode()
    if spec == "row-with-vars":
        redacted = json.loads(shared["study/results.json"])
        redacted["results"]["results"][0]["vars"] = document["results"]["results"][0]["vars"]
        return json.dumps(redacted).encode()
    if spec == "hr-items":
        return (SAMPLE / "high_risk.jsonl").read_bytes()
    if "text" in spec:
        return str(spec["text"]).replace("$PAD1MIB", "x" * ((1 << 20) - 20)).encode()
    return gzip.compress(str(spec["gzip"]).encode())


def _write(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _edited(base: Path, row: dict[str, Any], dst: Path) -> Path:
    shared = members(base)
    manifest = json.loads(shared.pop("manifest.json"))
    for name, spec in (row.get("add") or {}).items():
        shared[name] = _content(spec, shared)
    manifest["redacted"] = row.get("redacted", True)
    manifest["files"] = {
        n: {"sha256": hashlib.sha256(d).hexdigest(), "size": len(d)} for n, d in shared.items()
    }
    raw = json.dumps(manifest).encode()
    if "manifest" in row:
        deep = (
            '{"format": "grounding-eval-bundle/1", "files": {}, "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
        )
        raw = str(row["manifest"]).replace("$DEEP", deep).encode()
    entries = [("manifest.json", raw), *sorted(shared.items())]
    if row.get("manifest_last"):
        entries = entries[1:] + entries[:1]
    return _write(dst, entries)


def _rows() -> list[Any]:
    return [pytest.param(r, id=r["id"]) for r in yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("row", _rows())
def test_refused(row: dict[str, Any], base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2, nothing on stdout, one line on stderr naming the bundle and the member."""
    import re

    bundle = _edited(base, row, tmp_path / "edited.tar.gz")
    code = main(["bundle", "check", str(bundle)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1 and err.startswith(f"grounding-eval: error: {bundle}: "), err
    assert re.search(row["expect"], err), err


def test_the_base_bundle_verifies(base: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Control: share's own redacted bundle passes every check the table's rows fail."""
    assert main(["bundle", "check", str(base)]) == 0, capsys.readouterr().err


_PEAK_OF_CHILD = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print("peak-kib", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, end="", file=sys.stderr)
sys.exit(code)
"""


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, produced as read (the bomb is never held in memory by the test either)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def test_gzip_bomb_is_refused_unread(base: Path, tmp_path: Path) -> None:
    """Three 180 MiB members of zeros (a 2.5 MB gzip): refused in one line once the declared sizes pass
    the 512 MiB total, before any content is read, in a subprocess whose peak memory stays far below
    one member (was a MemoryError traceback)."""
    bomb = tmp_path / "bomb.tar.gz"
    shared = members(base)
    size = 180 * (1 << 20)
    with tarfile.open(bomb, "w:gz", compresslevel=1) as tar:
        manifest = json.loads(shared["manifest.json"])
        manifest["files"] = {}
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for n in range(3):
            info = tarfile.TarInfo(f"study/zeros{n}.bin")
            info.size = size
            tar.addfile(info, io.BufferedReader(_Zeros(size)))
    assert bomb.stat().st_size < 3 * (1 << 20)
    started = time.monotonic()
    # The check runs under a small Python that reports its child's peak memory: a child's ru_maxrss
    # counts the memory it was forked from (vfork: the whole pytest worker, 300+ MiB in the full suite).
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-m", "grounding_eval", "bundle", "check", str(bomb)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )  # fmt: skip
    elapsed = time.monotonic() - started
    stderr, _, peak = done.stderr.rpartition("peak-kib ")
    peak_mib = int(peak) / 1024
    done = subprocess.CompletedProcess(done.args, done.returncode, done.stdout, stderr)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr == (
        f"grounding-eval: error: {bomb}: member 'study/zeros2.bin': the members add up to more than "
        "536870912 bytes uncompressed (policy.yaml bundle.max_total_bytes): refused unread\n"
    )
    assert peak_mib < 200, f"peak RSS {peak_mib:.0f} MiB"
    print(f"gzip bomb: refused in {elapsed:.1f} s, peak RSS {peak_mib:.0f} MiB")
