"""Acceptance property (issue 19): for a random study layout, ``share --redact`` either refuses in one line
or writes a bundle with no High-Risk question, no High-Risk answer, no key and no absolute path — one
that ``bundle check`` accepts.

Layouts are built from the real sample dataset (datasets/sample) and a real promptfoo results file
(tests/fixtures/share/round3_outside_dataset.json); promptfoo is not run. The dataset sits inside the
study, outside it, or is the pack's sample; results files (JSON, YAML, JSONL, or renamed .txt) sit at
any depth, or are passed with --results; stray archives, .env* files (keys in values and comments),
provider configs with an apiKey or an env reference, and notes with local paths are mixed in.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from grounding_eval.cli import main
from tests.share.test_share_layouts import KEY, RESULTS, SAMPLE, leaks, make_study, write

_FOLDER = st.sampled_from(["", "runs/", "a/b/c/", "results-old/", "data2/", ".hidden/"])
_RESULTS_FILE = st.tuples(
    _FOLDER,
    st.sampled_from([("r.json", "results"), ("r.yaml", "results-yaml"), ("r.jsonl", "results-jsonl"),
                     ("run.txt", "results")]),
)  # fmt: skip
_ARCHIVE = st.tuples(
    _FOLDER,
    st.sampled_from(["old.tar.gz", "backup.dat", "share.zip", "notes.bin"]),
    st.sampled_from(["bundle", {"gzip": "x"}, {"zip": "x"}]),
)
_ENV = st.tuples(
    st.sampled_from([".env", ".env.bak", ".env.production", ".envrc", "sub/.env"]),
    st.sampled_from([f"OPENAI_API_KEY={KEY}\n", f"# OPENAI_API_KEY={KEY}\n", f"export ANTHROPIC_API_KEY={KEY}\n",
                     "PROMPTFOO_CONFIG_DIR=/home/me/.promptfoo\n", "PROMPTFOO_DISABLE_TELEMETRY=1\n"]),
)  # fmt: skip
_PROVIDER = st.sampled_from([
    None,
    None,
    "- id: openai:gpt-4.1\n  config:\n    apiKey: '{{ env.OPENAI_API_KEY }}'\n",
    f"- id: openai:gpt-4.1\n  config:\n    apiKey: {KEY}\n",
])  # fmt: skip


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "data": draw(st.sampled_from(["inside", "outside", "pack"])),
        "results": draw(st.lists(_RESULTS_FILE, max_size=3, unique_by=lambda r: r[0] + r[1][0])),
        "passed_results": draw(st.booleans()),
        # One layout in four has a stray archive, one in three a key: most inputs reach the bundle checks.
        "archives": draw(st.sampled_from([0, 0, 0, 1])) * [draw(_ARCHIVE)],
        "envs": draw(st.lists(_ENV, max_size=3, unique_by=lambda e: e[0])),
        "provider": draw(_PROVIDER),
        "notes_path": draw(st.booleans()),
    }


def _build(root: Path, layout: dict[str, Any]) -> Path:
    files: dict[str, Any] = {}
    dataset = None
    if layout["data"] == "inside":
        files["data"], dataset = "sample", "data"
    elif layout["data"] == "outside":
        shutil.copytree(SAMPLE, root / "outside-data")
        dataset = str(root / "outside-data")
    for folder, (name, spec) in layout["results"]:
        files[folder + name] = spec
    for name, text in layout["envs"]:
        files[name] = {"text": text}
    if layout["provider"]:
        files["providers/live.yaml"] = {"text": layout["provider"]}
    if layout["notes_path"]:
        files["NOTES.md"] = {"text": f"raw data at {root}/outside-data and /home/researcher/private\n"}
    study = make_study(root, files, dataset)
    for folder, name, spec in layout["archives"]:
        write(study, folder + name, spec, root)
    return study


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts())
def test_share_redact_refuses_in_one_line_or_leaks_nothing(layout: dict[str, Any]) -> None:
    """The acceptance property; each input is counted as refused (by what) or shared."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        study = _build(root, layout)
        out = root / "shared.tar.gz"
        extra = ["--results", str(RESULTS)] if layout["passed_results"] else []
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["share", str(study), "--redact", "-o", str(out), *extra])
        err = stderr.getvalue()
        if code != 0:
            assert code == 2 and err.count("\n") == 1, err
            named = re.match(r"grounding-eval: error: (\S+): ", err)
            assert named and Path(named.group(1)).is_relative_to(root), err
            assert not out.exists()
            problem = re.match(r"grounding-eval: error: \S+: (?:line \d+: )?([^(;:]*)", err)
            event("refused: " + (problem.group(1).strip() if problem else err))
            return
        assert err == ""
        assert leaks(out, [tmp, str(Path.home())]) == []
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
            assert main(["bundle", "check", str(out)]) == 0, stderr.getvalue()
        event(
            f"shared (data {layout['data']}, {len(layout['results']) + layout['passed_results']} results files)"
        )
