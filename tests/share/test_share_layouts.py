"""``share --redact`` decides by content (issue 19): each layout of tests/golden/share_layouts.yaml either
refuses in one line or gives a bundle with no High-Risk text, no answer, no key and no absolute path.

The oracle (:func:`leaks`) is the test's own: the sample's High-Risk questions and recorded answers read
straight from datasets/sample, the planted key in the forms the test wrote it, and paths found by a
regular expression of its own — nothing from ``grounding_eval.share``.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import tarfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.cli import main
from grounding_eval.share.bundle import make_bundle
from grounding_eval.share.scaffold import scaffold

REPO = Path(__file__).parents[2]
SAMPLE = REPO / "datasets" / "sample"
RESULTS = REPO / "tests" / "fixtures" / "share" / "round3_outside_dataset.json"
GOLDEN = REPO / "tests" / "golden" / "share_layouts.yaml"
KEY = "sk-proj-Q3xv9LmZt2RkW8bN4cY7hJ1pD6fS0aE5"  # planted; obviously not a real key

HR_QUESTIONS = [
    json.loads(line)["question"] for line in (SAMPLE / "high_risk.jsonl").read_text().splitlines()
]
HR_ANSWERS = [
    a["answer"]
    for a in yaml.safe_load((SAMPLE / "recorded_answers.yaml").read_text())
    if a["query_id"].startswith("hr-")
]
# Absolute paths as the test sees them: a POSIX path with two parts after a boundary, ~/, C:\, file:///.
_PATH = re.compile(r"(?<![\w.:/}\]>$-])/[\w.@+~-]+/|(?<=[\s\"'=(:])~/|(?<![\w])[A-Za-z]:\\|file:///")


def members(bundle: Path) -> dict[str, bytes]:
    """Every member of a bundle, by name."""
    with tarfile.open(bundle, "r:gz") as tar:
        return {i.name: tar.extractfile(i).read() for i in tar if i.isfile()}  # type: ignore[union-attr]


def _forms(text: str) -> list[str]:
    """A text as it appears in a file: as written, and inside a JSON string (both escapings)."""
    return [text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]]


def leaks(bundle: Path, local: list[str]) -> list[str]:
    """What the bundle leaks: High-Risk questions, the first line of High-Risk answers, the key (as
    written and hex), local folders' paths and absolute paths. Empty when nothing."""
    found = []
    needles = {f"question {q[:30]!r}": q for q in HR_QUESTIONS}
    needles |= {f"answer {a.splitlines()[0][:30]!r}": a.strip().splitlines()[0] for a in HR_ANSWERS}
    needles |= {"the key": KEY, "the key in hex": KEY.encode().hex(), "the key's random part": KEY[8:]}
    needles |= {f"local folder {p}": p for p in local}
    for name, data in members(bundle).items():
        text = data.decode("utf-8", "replace")
        found += [
            f"{name}: {what}" for what, needle in needles.items() if any(f in text for f in _forms(needle))
        ]
        if not name.startswith("pack/"):
            found += [
                f"{name}: absolute path near {text[m.start() : m.start() + 40]!r}"
                for m in _PATH.finditer(text)
            ]
    return found


def make_study(tmp_path: Path, files: Mapping[str, Any], dataset: str | None = None) -> Path:
    """A Round 3 study as ``init`` writes it, plus the layout's files."""
    study = tmp_path / "study"
    scaffold(study, "3", None, force=False)
    if dataset:
        config = study / "promptfooconfig.yaml"
        text = re.sub(r"(?m)^      # dataset: .*$", f"      dataset: {dataset}", config.read_text())
        config.write_text(text)
    for rel, spec in files.items():
        write(study, rel, spec, tmp_path)
    return study


def write(study: Path, rel: str, spec: Any, tmp_path: Path) -> None:
    """Write one layout entry (see the golden table's header)."""
    target = study / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if spec == "sample":
        shutil.copytree(SAMPLE, target)
        return
    document = json.loads(RESULTS.read_text())
    if spec == "results":
        target.write_text(RESULTS.read_text())
    elif spec == "results-yaml":
        target.write_text(
            yaml.dump(document, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True)
        )
    elif spec == "results-jsonl":
        target.write_text("".join(json.dumps(r) + "\n" for r in document["results"]["results"]))
    elif spec == "hr-items":
        shutil.copy(SAMPLE / "high_risk.jsonl", target)
    elif spec == "answers":
        shutil.copy(SAMPLE / "recorded_answers.yaml", target)
    elif spec == "bundle":  # as an earlier share wrote it: the study's files and the results, unredacted
        with tarfile.open(target, "w:gz") as tar:
            for path in sorted(p for p in study.rglob("*") if p.is_file() and p != target):
                tar.add(path, arcname="study/" + path.relative_to(study).as_posix())
            tar.add(RESULTS, arcname=f"results/{RESULTS.name}")
    elif "text" in spec:
        target.write_text(_fill(spec["text"], tmp_path))
    elif "gzip" in spec:
        target.write_bytes(gzip.compress(spec["gzip"].encode()))
    elif "zip" in spec:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("inner.txt", spec["zip"])
        target.write_bytes(buffer.getvalue())
    else:  # pragma: no cover - a typo in the table
        raise AssertionError(f"unknown layout entry {spec!r}")


def _fill(text: str, tmp_path: Path) -> str:
    return text.replace("$KEYHEX", KEY.encode().hex()).replace("$KEY", KEY).replace("$TMP", str(tmp_path))


def _rows() -> list[Any]:
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    return [pytest.param(r, id=r["id"]) for r in rows]


def share(capsys: pytest.CaptureFixture[str], study: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["share", str(study), "--redact", "-o", str(out), *extra])
    stdout, stderr = capsys.readouterr()
    return code, stdout, stderr


@pytest.mark.parametrize("row", _rows())
def test_layout(row: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each golden layout: refused in one line naming the file, or shared with nothing leaked."""
    study = make_study(tmp_path, row["files"], row.get("config_dataset"))
    out = tmp_path / "shared.tar.gz"
    code, stdout, stderr = share(capsys, study, out)
    expect = row["expect"]
    if "refused" in expect:
        assert code == 2 and stdout == "" and stderr.count("\n") == 1, stderr
        assert stderr.startswith(f"grounding-eval: error: {study}/"), stderr
        assert re.search(expect["refused"], stderr), stderr
        assert not out.exists()
        return
    assert (code, stderr) == (0, ""), stderr
    assert leaks(out, [str(tmp_path), str(Path.home())]) == []
    shared = members(out)
    manifest = json.loads(shared["manifest.json"])
    assert set(expect.get("shared", ())) <= set(shared)
    assert not set(expect.get("absent", ())) & set(shared)
    assert set(expect.get("withheld", ())) <= set(manifest["dataset_file_hashes"])
    assert not [n for n in manifest["dataset_file_hashes"] if n in shared]
    if "redacted_rows" in expect:
        assert manifest["redacted_rows"] == expect["redacted_rows"]
    assert main(["bundle", "check", str(out)]) == 0, capsys.readouterr().err


def test_env_is_rebuilt_with_shareable_settings_only(tmp_path: Path) -> None:
    """The rebuilt .env: the five promptfoo settings of init's template, no comment, no key, no Python."""
    study = make_study(tmp_path, {})
    with (study / ".env").open("a") as env:
        env.write(f"# OPENAI_API_KEY={KEY}\nOPENAI_API_KEY={KEY}\nPROMPTFOO_CONFIG_DIR=/home/me/.promptfoo\n")
    manifest = make_bundle(study, tmp_path / "b.tar.gz", results=[], redact=True)
    text = members(tmp_path / "b.tar.gz")["study/.env"].decode()
    body = [line for line in text.splitlines() if not line.startswith("# Rebuilt by grounding-eval share")]
    assert body == [
        "PROMPTFOO_DISABLE_TELEMETRY=1",
        "PROMPTFOO_DISABLE_UPDATE=1",
        "PROMPTFOO_DISABLE_SHARING=1",
        "PROMPTFOO_CONFIG_DIR=./.promptfoo",
        "PROMPTFOO_CACHE_PATH=./.promptfoo/cache",
    ]
    assert manifest["env_dropped"] == ["PROMPTFOO_PYTHON", "OPENAI_API_KEY", "PROMPTFOO_CONFIG_DIR"]


def test_redacted_results_keep_no_absolute_path(tmp_path: Path) -> None:
    """The real results file's local paths (metadata.dataset, replay:/… judge providers, the recorded
    answers' file, the prompts' paths) come out relative to the study or as <local>/name."""
    study = make_study(tmp_path, {})
    original = RESULTS.read_text()
    assert "/tmp/s_repro/outside" in original  # the fixture's dataset was outside its study
    make_bundle(study, tmp_path / "b.tar.gz", results=[RESULTS], redact=True)
    shared = json.loads(members(tmp_path / "b.tar.gz")["results/round3_outside_dataset.json"])
    rows = shared["results"]["results"]
    assert [r["testCase"]["metadata"]["dataset"] for r in rows] == ["<local>/outside"] * 3
    judge = rows[0]["gradingResult"]["componentResults"][3]["metadata"]["judge"]
    assert judge["model"] == "<local>/round3.yaml"  # was the recorded replies' absolute path
    assert leaks(tmp_path / "b.tar.gz", ["/tmp/s_repro"]) == []


def test_paths_under_the_study_become_relative(tmp_path: Path) -> None:
    """A path inside the study loses the study's folder: a partner's copy resolves it the same way."""
    study = make_study(tmp_path, {})
    (study / "NOTES.md").write_text(f"prompts: {study}/prompts/c0.txt; study: {study}\n")
    make_bundle(study, tmp_path / "b.tar.gz", results=[], redact=True)
    assert members(tmp_path / "b.tar.gz")["study/NOTES.md"] == b"prompts: prompts/c0.txt; study: .\n"


def test_a_share_without_redact_warns_with_the_high_risk_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --redact the bundle holds the High-Risk rows verbatim: the share says how many, on stderr."""
    study = make_study(tmp_path, {"results.json": "results"})
    out = tmp_path / "plain.tar.gz"
    assert main(["share", str(study), "-o", str(out)]) == 0
    stdout, stderr = capsys.readouterr()
    assert stdout.startswith(f"wrote {out}: ")
    assert stderr == (
        f"grounding-eval: warning: {out} holds 3 High-Risk rows verbatim (the person's question and the "
        "answer); share with --redact to replace them with hashes\n"
    )
    assert json.loads(members(out)["manifest.json"])["high_risk_rows"] == 3
    redacted = tmp_path / "redacted.tar.gz"
    code, _, stderr = share(capsys, study, redacted)
    assert (code, stderr) == (0, "")
    manifest = json.loads(members(redacted)["manifest.json"])
    assert manifest["high_risk_rows"] == manifest["redacted_rows"] == 3
