"""``grounding-eval init``: a study folder per evaluation, no overwrite without --force, the two commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from grounding_eval.cli import main
from grounding_eval.resources import pack_root
from grounding_eval.share.scaffold import STUDIES
from tests.entry_points import load_file

REPO = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("study", list(STUDIES))
def test_every_study_scaffolds(tmp_path: Path, capsys: pytest.CaptureFixture[str], study: str) -> None:
    """The config parses, names only files the folder has, and the entry files are the pack's own."""
    target = tmp_path / "study"
    code, out, err = _run(capsys, "init", str(target), "--round", study)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    written = [p for p in target.rglob("*") if p.is_file()]
    assert lines[0] == f"Made a study in {target} ({len(written)} files): {STUDIES[study].description}."
    assert lines[-4:] == [
        "Next:",
        f"  cd {target}",
        "  npm install",
        "  npx promptfoo eval -c promptfooconfig.yaml -o results/results.json",
    ]
    # Every file and folder it made (but .gitignore) is named, each with what it is for.
    described = lines[1:-4]
    named = {name.rstrip(",") for line in described for name in line.split("  ")[1].split()}
    made = {p.relative_to(target).parts[0] + ("/" if p.parent != target else "") for p in written}
    assert named == made - {".gitignore"}
    assert all(len(line.strip().split("  ", 1)) == 2 for line in described)
    config = yaml.safe_load((target / "promptfooconfig.yaml").read_text())
    files = [p["id"] for p in config["prompts"]] + [config["providers"][0]["id"], config["tests"][0]["path"]]
    files += [a["value"] for a in config["defaultTest"]["assert"]]
    if "assertScoringFunction" in config["defaultTest"]:
        files.append(config["defaultTest"]["assertScoringFunction"])
    for ref in files:
        assert (target / ref.removeprefix("file://").split(":")[0]).is_file(), ref
    for entry in (
        "assertions/grounding.cjs",
        "assertions/judges.cjs",
        "assertions/calls.json",
        "assertions/grounding.py",
        "assertions/verifier.py",
        "providers/replay.py",
    ):
        assert (target / entry).read_bytes() == (REPO / entry).read_bytes()
    env = dict(
        line.split("=", 1)
        for line in (target / ".env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    assert env["PROMPTFOO_PYTHON"] == sys.executable
    assert env["PROMPTFOO_DISABLE_TELEMETRY"] == "1" and env["PROMPTFOO_DISABLE_UPDATE"] == "1"


def test_package_json_pins_the_packs_promptfoo_and_node(tmp_path: Path) -> None:
    main(["init", str(tmp_path / "s")])
    ours = json.loads((REPO / "package.json").read_text())["devDependencies"]
    study = json.loads((tmp_path / "s" / "package.json").read_text())["devDependencies"]
    assert study == {"node": ours["node"], "promptfoo": ours["promptfoo"]}


def test_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s"
    target.mkdir()
    (target / "README.md").write_text("mine")
    code, out, err = _run(capsys, "init", str(target))
    assert (code, out) == (2, "")
    assert (
        err
        == f"grounding-eval: error: {target}/README.md: exists (1 of the study's files do): use --force to overwrite\n"
    )
    assert (target / "README.md").read_text() == "mine"
    assert sorted(p.name for p in target.iterdir()) == ["README.md"]  # nothing written
    code, _, err = _run(capsys, "init", str(target), "--force")
    assert (code, err) == (0, "")
    assert (target / "README.md").read_text() != "mine"


def test_force_replaces_a_link_not_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    target = tmp_path / "s"
    target.mkdir()
    (target / "README.md").symlink_to(victim)
    assert main(["init", str(target), "--force"]) == 0
    assert victim.read_text() == "keep" and not (target / "README.md").is_symlink()


def test_dataset_is_written_into_the_config(tmp_path: Path) -> None:
    data = tmp_path / "my-data"
    data.mkdir()
    main(["init", str(tmp_path / "s"), "--round", "1b", "--dataset", str(data)])
    config = yaml.safe_load((tmp_path / "s" / "promptfooconfig.yaml").read_text())
    assert config["tests"][0]["config"] == {"dataset": str(data.resolve()), "round": "1b"}
    assert not (tmp_path / "s" / "liveness_snapshot.fixture.csv").exists()


def test_missing_dataset_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "init", str(tmp_path / "s"), "--dataset", str(tmp_path / "nope"))
    assert code == 2 and err == f"grounding-eval: error: {tmp_path}/nope: not a dataset folder\n"


def test_generated_generator_uses_the_installed_pack(tmp_path: Path) -> None:
    """The study's generate.py gives the same tests as the pack's own generator on the sample."""
    from grounding_eval.promptfoo.round_tests import generate_tests

    main(["init", str(tmp_path / "s")])
    tests = load_file("study_generate", tmp_path / "s" / "generate.py").generate_tests({"round": "3"})
    assert tests == generate_tests({"round": "3"}, pack_root=pack_root())
    assert tests[0]["metadata"]["dataset"] == str(pack_root() / "datasets" / "sample")


def test_readme_calls_the_grounding_eval_that_wrote_it(tmp_path: Path) -> None:
    """Each command of the study's README runs from the study folder as written: the grounding-eval it
    names is the script beside the Python that ran init (the one .env names)."""
    study = tmp_path / "deep" / "my-study"
    main(["init", str(study)])
    commands = _readme_commands(study / "README.md")
    assert [c.split()[0] for c in commands] == ["npm", "npx"] + [commands[2].split()[0]] * 4
    tool = commands[2].split()[0]
    assert "__" not in "".join(commands) and not tool.startswith("/")  # no placeholder, no absolute path
    assert (study / tool).resolve() == (Path(sys.executable).parent / "grounding-eval").resolve()
    assert commands[4:] == [
        f"{tool} share . -o ../my-study.tar.gz --results results/results.json --redact",
        f"{tool} bundle check ../my-study.tar.gz",
    ]


def _readme_commands(readme: Path) -> list[str]:
    """The command lines of the README's bash blocks, without their comments."""
    commands, inside = [], False
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = line == "```bash"
        elif inside and line.strip():
            commands.append(line.split("  #")[0].strip())
    return commands
