"""The shipped configs are what their one definition (grounding_eval/promptfoo/configs.py) writes, and an
``init`` study runs the same graders as the shipped config of its evaluation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.promptfoo.configs import EVALUATIONS, PACK, render_pack, render_study

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(PACK))
def test_checked_in_config_is_its_definition(name: str) -> None:
    """Byte for byte: an edit by hand to a shipped config, or to the definition without rewriting the
    files, fails here (fix: .venv/bin/python scripts/write_configs.py)."""
    assert (REPO / name).read_text(encoding="utf-8") == render_pack(name), name


def test_every_shipped_config_is_defined() -> None:
    shipped = {"promptfooconfig.yaml", *(f"configs/{p.name}" for p in (REPO / "configs").glob("*.yaml"))}
    assert shipped == set(PACK)


def _without_paths(config: dict[str, Any]) -> dict[str, Any]:
    """What a config runs, with each file:// path reduced to its file name and export."""
    graders = [
        {
            **a,
            "value": Path(a["value"]).name,
            "config": {k: v for k, v in a["config"].items() if k != "liveness_snapshot"},
        }
        for a in config["defaultTest"]["assert"]
    ]
    scoring = config["defaultTest"].get("assertScoringFunction")
    selection = {k: v for k, v in config["tests"][0]["config"].items() if k != "dataset"}
    return {
        "prompts": [(Path(p["id"]).name, p["label"]) for p in config["prompts"]],
        "graders": graders,
        "scoring": scoring and Path(scoring).name,
        "selection": selection,
        "extensions": [Path(e).name for e in config["extensions"]],
    }


@pytest.mark.parametrize("name", [n for n, p in PACK.items() if EVALUATIONS[p.evaluation].study])
def test_study_runs_what_the_pack_runs(name: str) -> None:
    """The study flavour differs from the shipped config only in paths and where the data is."""
    pack = yaml.safe_load(render_pack(name))
    study = yaml.safe_load(render_study(PACK[name].evaluation, None))
    assert _without_paths(study) == _without_paths(pack)
    assert study["extensions"] == ["file://assertions/grounding.cjs:beforeAll"]


def test_check_names_the_file_that_differs(tmp_path: Path) -> None:
    """scripts/write_configs.py --check exits 0 on the checked-in tree, and 1 naming the one file that
    differs; without --check it rewrites that file."""
    script = [sys.executable, str(REPO / "scripts" / "write_configs.py")]
    ok = subprocess.run([*script, "--check"], capture_output=True, text=True, check=False)
    assert (ok.returncode, ok.stderr) == (0, "")
    (tmp_path / "configs").mkdir()
    for name in PACK:
        (tmp_path / name).write_text((REPO / name).read_text(encoding="utf-8"), encoding="utf-8")
    edited = tmp_path / "configs" / "round2.yaml"
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("rubric: v3", "rubric: v4"), encoding="utf-8"
    )
    bad = subprocess.run(
        [*script, "--check", "--root", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 1
    assert bad.stderr.splitlines()[0].startswith("configs/round2.yaml: differs")
    assert "round1a" not in bad.stderr
    fixed = subprocess.run([*script, "--root", str(tmp_path)], capture_output=True, text=True, check=False)
    assert (fixed.returncode, fixed.stdout) == (0, "wrote configs/round2.yaml\n")
    assert edited.read_text(encoding="utf-8") == render_pack("configs/round2.yaml")
