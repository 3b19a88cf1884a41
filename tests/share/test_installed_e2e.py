"""End to end, as a partner: the built wheel in a fresh venv outside the checkout, ``init``, the pinned
promptfoo offline, provenance in every row, ``share --redact`` and ``bundle check``.

Nothing here imports the checkout: the wheel is built from a copy of the pack's files, installed into a
new venv under a temporary folder (its dependencies from the package registry, the only network used),
and every command runs from that folder with that venv's Python. The pack's ``node_modules`` is linked
into the study (no download); promptfoo runs with ``--no-cache``, or as the study's README writes it (its
cache, like its database, in the fresh study folder). The default study is evaluated once, by its README's
commands (``readme_study``), and read by the tests that check its rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.model_standin import ModelStandin
from tests.scores import query_id, row_scores

REPO = Path(__file__).resolve().parents[2]
# The wheel and its venv are built once per pytest worker: --dist loadgroup keeps these tests on one.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("installed-wheel")]

# What the wheel is built from: everything pyproject.toml maps into the package (plus its metadata files).
_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "grounding_eval", "rubrics", "prompts", "datasets",
            "assertions", "providers")  # fmt: skip


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    # The venv is installed without bytecode (below): its first process writes what it imports, once.
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Build the wheel from a copy of the pack and install it into a fresh venv; returns the paths."""
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("node_modules is missing: run scripts/install (npm ci) first")
    base = tmp_path_factory.mktemp("partner")
    src = base / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in _SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    dist = base / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                  "-w", str(dist), str(src)], cwd=base)  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("grounding_eval-*.whl")
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    # This checkout's pip installs into the new venv (no pip of its own to bootstrap), and compiles no
    # bytecode up front: most of the dependencies' modules (phonenumbers' data, say) are never imported.
    pip = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
                "--disable-pip-version-check", str(wheel)], cwd=base)  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    return {"base": base, "wheel": wheel, "python": python, "bin": venv / "bin"}


def test_wheel_carries_the_run_time_data(installed: dict[str, Path]) -> None:
    """Every rubric, template, prompt, schema and sample file of the repository is in the wheel."""
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    expected = [
        *(REPO / "rubrics").glob("*.yaml"), *(REPO / "rubrics" / "templates").glob("*.j2"),
        *(REPO / "prompts").glob("*"), *(REPO / "datasets" / "schemas").glob("*.json"),
        *(p for p in (REPO / "datasets" / "sample").rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        *(p for p in (REPO / "datasets" / "docs_qa").rglob("*")
          if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts),
        REPO / "assertions" / "grounding.cjs", REPO / "providers" / "replay.py",
    ]  # fmt: skip
    missing = [
        str(p.relative_to(REPO))
        for p in expected
        if f"grounding_eval/_data/{p.relative_to(REPO).as_posix()}" not in names
    ]
    assert missing == []
    code = {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "grounding_eval").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(code - names) == []  # every module (pyproject lists packages explicitly)
    assert "grounding_eval/analysis/decisions.yaml" in names
    assert "grounding_eval/share/policy.yaml" in names


def test_partner_study_end_to_end(installed: dict[str, Path], readme_study: _ReadmeStudy) -> None:
    base, python, bindir = installed["base"], installed["python"], installed["bin"]
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1",
           "PROMPTFOO_CONFIG_DIR": str(base / ".promptfoo")}  # fmt: skip
    for key in (
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "PROMPTFOO_PYTHON",
        "GROUNDING_EVAL_DATASET",
        "GROUNDING_EVAL_JUDGE_PROVIDER",
    ):
        env.pop(key, None)
    where = _run(
        [str(python), "-c", "from grounding_eval.resources import pack_root; print(pack_root())"], base, env
    )
    root = Path(where.stdout.strip())
    assert where.returncode == 0 and root.name == "_data" and REPO not in root.parents, where.stderr

    # The study and its offline eval of the sample: the README's (readme_study), run as it writes them.
    study, init = readme_study.study, readme_study.init
    assert (
        init.stdout.splitlines()[-1] == "  npx promptfoo eval -c promptfooconfig.yaml -o results/results.json"
    )
    out = study / "results" / "results.json"
    (run,) = [d for c, d in zip(readme_study.commands[1:], readme_study.done, strict=True)
              if c.startswith("npx promptfoo eval -c promptfooconfig.yaml -o results/results.json")]  # fmt: skip
    assert run.returncode == 100, (
        run.stdout[-3000:] + run.stderr[-3000:]
    )  # some sample answers fail on purpose
    rows: list[dict[str, Any]] = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 24  # 8 High-Risk sample items x C0, C1, C1.5
    rubric_sha = hashlib.sha256((root / "rubrics" / "round3.yaml").read_bytes()).hexdigest()
    version = _run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('grounding-eval'))"], base, env
    )
    for row in rows:
        assert "composite" in row_scores(row) and "deterministic_verifier_score" in row_scores(row), row[
            "error"
        ]
        components = row["gradingResult"]["componentResults"]
        verifier = next(c["metadata"] for c in components if "verifier" in (c.get("metadata") or {}))
        judge = next(c["metadata"] for c in components if "judge" in (c.get("metadata") or {}))
        assert (
            str(root) in verifier["verifier_inputs"]["allowlist"]["path"]
        )  # the installed sample, not the checkout
        assert verifier["provenance"] == {"grounding_eval": version.stdout.strip(), "dataset": "sample"}
        assert judge["provenance"] == {
            "grounding_eval": version.stdout.strip(),
            "dataset": "sample",
            "rubric": {"id": "round3", "version": judge["judge"]["rubric_version"], "sha256": rubric_sha},
            "prompt_version": judge["judge"]["prompt_version"],
        }
        assert len(json.dumps(verifier["provenance"])) + len(json.dumps(judge["provenance"])) < 600
    assert {r["success"] for r in rows} == {True, False}
    # The installed pack grades exactly as the checkout's main job does (recorded by tests/test_promptfoo_e2e.py).
    recorded = json.loads((REPO / "tests" / "fixtures" / "sample_rounds" / "named_scores.json").read_text())
    now = sorted(({"item_id": query_id(r), "condition": r["prompt"]["label"].split(":")[0], "success": r["success"],
                   "score": r["score"], "namedScores": row_scores(r)} for r in rows),
                 key=lambda x: (x["item_id"], x["condition"]))  # fmt: skip
    assert now == recorded["promptfooconfig.yaml"]

    prov = _run([str(bindir / "grounding-eval"), "provenance", str(out)], base, env)
    assert prov.returncode == 0, prov.stderr
    assert (
        f"rubrics: round3@{judge['judge']['rubric_version']} sha256:{rubric_sha[:12]} (24 rows)"
        in prov.stdout
    )

    bundle = base / "study.tar.gz"
    share = _run([str(bindir / "grounding-eval"), "share", str(study), "-o", str(bundle), "--results", str(out),
                  "--redact", "--data", str(root / "datasets" / "sample")], base, env)  # fmt: skip
    assert share.returncode == 0, share.stderr
    assert (
        share.stdout
        == f"wrote {bundle}: {share.stdout.split(': ')[1].split(' files')[0]} files, 24 High-Risk rows redacted\n"
    )
    check = _run([str(bindir / "grounding-eval"), "bundle", "check", str(bundle)], study, env)
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith(f"{bundle}: OK, ")
    assert "warning" not in check.stdout  # same pack, same rubrics, same promptfoo (the study's node_modules)

    members = _bundle_members(bundle)
    manifest = json.loads(members["manifest.json"])
    assert manifest["promptfoo"] == "0.123.1" and manifest["redacted"] is True
    assert not [n for n in members if n.startswith("data/")]  # redacted: dataset files by hash only
    assert manifest["dataset_file_hashes"]["data/sample/high_risk.jsonl"] == hashlib.sha256(
        (root / "datasets" / "sample" / "high_risk.jsonl").read_bytes()).hexdigest()  # fmt: skip
    shared = json.loads(members["results/results.json"])["results"]["results"]
    assert [(r["testCase"]["metadata"]["query_id"], r["score"], r["namedScores"]) for r in shared] == [
        (r["testCase"]["metadata"]["query_id"], r["score"], r["namedScores"]) for r in rows
    ]
    verdicts = [c["metadata"]["judge"]["verdicts"] for r in shared for c in r["gradingResult"]["componentResults"]
                if "judge" in c.get("metadata", {})]  # fmt: skip
    assert len(verdicts) == 24 and all(verdicts)
    _assert_no_redacted_text(rows, members)
    # What is kept is what the report reads: the redacted results give the very same report.
    redacted = base / "redacted.json"
    redacted.write_bytes(members["results/results.json"])
    reports = [_run([str(bindir / "grounding-eval"), "report", str(p)], base, env) for p in (out, redacted)]
    assert reports[0].returncode == 0 and reports[0].stdout.count("\n") > 20, reports[0].stderr
    assert reports[1].stdout.replace(str(redacted), "RESULTS") == reports[0].stdout.replace(
        str(out), "RESULTS"
    )


def _bundle_members(bundle: Path) -> dict[str, bytes]:
    with tarfile.open(bundle, "r:gz") as tar:
        return {info.name: tar.extractfile(info).read() for info in tar if info.isfile()}  # type: ignore[union-attr]


def _texts(rows: list[dict[str, Any]]) -> set[str]:
    """Every question, answer and source text of the High-Risk rows (all of them here), and their lines."""
    texts: set[str] = set()
    for row in rows:
        assert row["testCase"]["metadata"].get("risk_tier")
        # The source texts are in the prompt the model was shown (the beforeAll hook lifts them out of vars),
        # less the lines of the pack's own prompt templates, which the bundle may carry.
        template = {
            ln.strip() for p in (REPO / "prompts").glob("*.txt") for ln in p.read_text("utf-8").splitlines()
        }
        shown = "\n".join(ln for ln in row["prompt"]["raw"].splitlines() if ln.strip() not in template)
        whole = [row["vars"]["question"], row["response"]["output"], shown,
                 *(row["vars"].get(v, "") for v in ("jkb_directory", "jkb_full_content"))]  # fmt: skip
        meta = row["testCase"]["metadata"]
        whole += [
            *meta["required_clarifying_questions"],
            *meta["failure_modes"],
            *map(str, meta["sme_variables"]),
        ]
        for text in whole:
            texts.add(text.strip())
            # Any line with 30+ letters would give a text away on its own (rules of dashes would not).
            texts.update(line.strip() for line in text.splitlines() if sum(c.isalpha() for c in line) >= 30)
    return {t for t in texts if sum(c.isalpha() for c in t) >= 12}  # "county" alone is no give-away


def _assert_no_redacted_text(rows: list[dict[str, Any]], members: dict[str, bytes]) -> None:
    texts = _texts(rows)
    assert len(texts) > 100
    for name, data in members.items():
        for form in {data, data.decode("utf-8", "replace").encode("utf-8")}:
            decoded = form.decode("utf-8", "replace")
            # JSON escapes quotes, newlines and non-ASCII: look for each text as JSON would write it, too.
            found = [t for t in texts if t in decoded or json.dumps(t, ensure_ascii=False)[1:-1] in decoded
                     or json.dumps(t)[1:-1] in decoded]  # fmt: skip
            assert found == [], (name, found[:3])


def _init_study(
    installed: dict[str, Path], name: str, round_: str, **extra: str
) -> tuple[Path, dict[str, str]]:
    """``init`` a study of ``round_`` under the partner folder with the wheel's venv first on PATH and none of
    this checkout's settings; the pack's node_modules linked in. Returns the study and its environment."""
    base, bindir = installed["base"], installed["bin"]
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1",
           "PROMPTFOO_CONFIG_DIR": str(base / f".promptfoo-{name}"), **extra}  # fmt: skip
    for key in ("PYTHONPATH", "VIRTUAL_ENV", "PROMPTFOO_PYTHON", "GROUNDING_EVAL_DATASET",
                "GROUNDING_EVAL_JUDGE_PROVIDER", "GROUNDING_EVAL_DOCS_QA_DATASET"):  # fmt: skip
        env.pop(key, None)
    study = base / name
    init = _run([str(bindir / "grounding-eval"), "init", str(study), "--round", round_], base, env)
    assert init.returncode == 0, init.stderr
    (study / "node_modules").symlink_to(REPO / "node_modules")
    return study, env


@pytest.mark.parametrize(
    ("round_", "rows", "chip"), [("docs-qa", 24, "docs_qa.correct"), ("factuality", 5, "factual_accuracy")]
)
def test_the_other_evaluations_run_from_the_wheel(
    installed: dict[str, Path], round_: str, rows: int, chip: str
) -> None:
    """docs-QA and factual accuracy read their rubric, schema and sample data from the installed package."""
    study, env = _init_study(installed, f"study-{round_}", round_)
    run = _run(["npx", "promptfoo", "eval", "-c", "promptfooconfig.yaml", "-o", "results/results.json",
                "--no-progress-bar", "--no-cache"], study, env)  # fmt: skip
    assert run.returncode == 100, run.stdout[-3000:] + run.stderr[-3000:]  # sample answers fail on purpose
    results = json.loads((study / "results" / "results.json").read_text(encoding="utf-8"))["results"][
        "results"
    ]
    assert len(results) == rows
    assert all(r["failureReason"] in (0, 1) for r in results), [r.get("error") for r in results][:3]
    assert all(chip in row_scores(r) or r["success"] is False for r in results)
    assert sum(chip in row_scores(r) for r in results) >= rows - 2


@pytest.mark.parametrize("round_", ["3", "docs-qa", "factuality"])
def test_a_study_with_a_mistyped_judge_stops_before_any_model_call(
    installed: dict[str, Path], round_: str
) -> None:
    """Issue 40: a study ``init`` writes checks its graders in promptfoo's beforeAll hook, as the pack's own
    configs do: a mistyped judge id costs one line before any generation call (it cost every row's call)."""
    study, env = _init_study(
        installed, f"typo-{round_}", round_, OPENAI_API_KEY="sk-test-standin-0000000000000000"
    )
    generation = ModelStandin(lambda prompt: "an answer")
    config_path = study / "promptfooconfig.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["providers"] = [
        {"id": "openai:chat:standin-answerer", "config": {"apiBaseUrl": f"{generation.url}/v1"}}
    ]
    judged = [a for a in config["defaultTest"]["assert"] if "provider" in a.get("config", {})]
    assert judged, config["defaultTest"]["assert"]
    for assertion in judged:
        assertion["config"]["provider"] = "opnai:chat:gpt-4.1"  # the typo
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with generation.running():
        run = _run(["npx", "promptfoo", "eval", "-c", "promptfooconfig.yaml", "-o", "results/results.json",
                    "--no-progress-bar", "--no-cache"], study, env)  # fmt: skip
    said = run.stdout + run.stderr
    assert generation.served == [], f"{len(generation.served)} model request(s) before the typo was caught"
    assert run.returncode == 1 and "grounding-eval: the configuration has" in said, said[-3000:]
    assert "opnai:chat:gpt-4.1" in said
    assert not (study / "results" / "results.json").exists()


@dataclass(frozen=True)
class _ReadmeStudy:
    """A study ``init`` wrote, and every command of its README run in it as written (but ``npm install``)."""

    study: Path
    init: subprocess.CompletedProcess[str]
    commands: list[str]  # the README's, npm install first
    done: list[subprocess.CompletedProcess[str]]  # one per command after npm install


@pytest.fixture(scope="module")
def readme_study(installed: dict[str, Path]) -> _ReadmeStudy:
    """The study's README run as written from the study folder, with the wheel's venv not on PATH: the README
    names that venv's grounding-eval itself. (npm install is the one command not run: the pack's node_modules
    is linked instead, no download.) Its offline eval of the sample is the module's one run of the default
    study: test_the_study_readme_runs_as_written checks each command, test_partner_study_end_to_end reads
    the rows."""
    base, bindir = installed["base"], installed["bin"]
    path = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "grounding-eval").exists()
    )
    env = {**os.environ, "NO_COLOR": "1", "PATH": path}
    for key in ("PYTHONPATH", "VIRTUAL_ENV", "PROMPTFOO_PYTHON", "PROMPTFOO_CONFIG_DIR", "GROUNDING_EVAL_DATASET",
                "GROUNDING_EVAL_JUDGE_PROVIDER"):  # fmt: skip
        env.pop(key, None)
    assert shutil.which("grounding-eval", path=env["PATH"]) is None  # only the README's path can work
    study = base / "readme-study"
    init = _run([str(bindir / "grounding-eval"), "init", str(study)], base, env)
    assert init.returncode == 0, init.stderr
    commands, inside = [], False
    for line in (study / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = line == "```bash"
        elif inside and line.strip():
            commands.append(line)
    assert len(commands) == 6 and commands[0].startswith("npm install")
    assert shutil.which("npm", path=env["PATH"])
    (study / "node_modules").symlink_to(REPO / "node_modules")
    return _ReadmeStudy(study, init, commands, [_run(["bash", "-c", c], study, env) for c in commands[1:]])


def test_the_study_readme_runs_as_written(installed: dict[str, Path], readme_study: _ReadmeStudy) -> None:
    """Every command of the README that init writes runs as written from the study folder, with the wheel's
    venv not on PATH (``readme_study``)."""
    for command, done in zip(readme_study.commands[1:], readme_study.done, strict=True):
        expected = 100 if command.startswith("npx promptfoo eval") else 0  # sample answers fail on purpose
        assert done.returncode == expected, (command, done.stdout[-2000:], done.stderr[-2000:])
    assert done.stdout.startswith("../readme-study.tar.gz: OK, ")  # bundle check, the last command
    assert (installed["base"] / "readme-study.tar.gz").is_file()
