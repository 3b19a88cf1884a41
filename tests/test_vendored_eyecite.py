"""The vendored eyecite is eyecite's released code with only the documented changes, and reads citations
without fast-diff-match-patch or an installed eyecite (issue 42)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
VENDORED = REPO / "grounding_eval" / "_vendor" / "eyecite"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_eyecite", REPO / "scripts" / "vendor_eyecite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_vendored_file_is_the_released_one_with_the_documented_changes_undone() -> None:
    script = _script()
    lines = (VENDORED / "UPSTREAM_RECORD").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith(f"# {script.UPSTREAM}:")
    record = {line.split(",")[0]: line.split(",")[1] for line in lines[1:]}
    assert sorted(record) == sorted(f"eyecite/{n}" for n in script.FILES)
    on_disk = sorted(p.name for p in VENDORED.iterdir() if p.is_file())
    assert on_disk == sorted([*script.FILES, "LICENSE", "UPSTREAM_RECORD"])
    for name in script.FILES:
        text = (VENDORED / name).read_bytes().decode("utf-8")
        upstream = script.upstream_of(name, text)
        assert script.record_hash(upstream.encode("utf-8")) == record[f"eyecite/{name}"], name
        assert script.vendored(name, upstream) == text, name  # and vendoring gives this file back
    annotate = (VENDORED / "annotate.py").read_text(encoding="utf-8")
    assert "\nimport fast_diff_match_patch" not in annotate  # never at the top: the change that matters


def test_a_hand_edit_is_caught() -> None:
    script = _script()
    text = (VENDORED / "tokenizers.py").read_text(encoding="utf-8").replace("import", "import ", 1)
    record = dict(line.split(",")[:2] for line in (VENDORED / "UPSTREAM_RECORD").read_text().splitlines()[1:])
    assert (
        script.record_hash(script.upstream_of("tokenizers.py", text).encode())
        != record["eyecite/tokenizers.py"]
    )


_WITHOUT = """
import sys
sys.modules["fast_diff_match_patch"] = None  # not installed: importing it raises ImportError
sys.modules["eyecite"] = None  # nor eyecite from PyPI
from grounding_eval._vendor.eyecite import get_citations
from grounding_eval._vendor.eyecite.annotate import SpanUpdater
from grounding_eval.verifier.citations import find_citations
cites = get_citations("See Roe v. Wade, 410 U.S. 113 (1973).")
print(type(cites[0]).__name__, cites[0].groups["reporter"], cites[0].metadata.court)
found = find_citations("See Roe v. Wade, 410 U.S. 113 (1973), and 42 U.S.C. § 1983.")
print([(m.kind, m.normalized, m.error) for m in found.mentions])
try:
    SpanUpdater("a b", "a c b")
except ImportError as error:
    print("diff:", error.name)
"""


def test_citations_are_read_without_fast_diff_match_patch_or_eyecite() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT], capture_output=True, text=True, timeout=120, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "FullCaseCitation U.S. scotus",
        "[('case', '410 U.S. 113', None), ('statute', '42 U.S.C. § 1983', None)]",
        "diff: fast_diff_match_patch",
    ]
