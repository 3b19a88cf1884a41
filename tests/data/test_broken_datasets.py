"""Every row of tests/golden/broken_datasets.yaml (how it was written: broken_datasets_README.md): a shipped
dataset with one mistake, caught by the real ``grounding-eval data validate`` with the expected one-line
message."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.cli import main

REPO = Path(__file__).resolve().parents[2]
ROWS: list[dict[str, Any]] = yaml.safe_load(
    (REPO / "tests/golden/broken_datasets.yaml").read_text(encoding="utf-8")
)
SOURCES = {"sample": REPO / "datasets" / "sample", "docs_qa": REPO / "datasets" / "docs_qa"}


def _copy(kind: str, tmp_path: Path) -> Path:
    root = tmp_path / kind
    shutil.copytree(SOURCES[kind], root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return root


def _apply(root: Path, change: dict[str, Any]) -> None:
    path = root / change["file"]
    if change.get("delete"):
        path.unlink()
    elif "write" in change:
        path.write_text(change["write"], encoding="utf-8")
    elif "append" in change:
        with path.open("a", encoding="utf-8") as f:
            f.write(change["append"])
    else:
        text = path.read_text(encoding="utf-8")
        assert change["replace"] in text, f"{change['file']} no longer holds {change['replace']!r}"
        path.write_text(text.replace(change["replace"], change["with"], 1), encoding="utf-8")


def _validate(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    status = main(["data", "validate", str(root)])
    return status, capsys.readouterr().err.splitlines()


def test_the_table_covers_every_file_kind() -> None:
    """At least two mistakes per file kind, ids unique."""
    assert len({row["id"] for row in ROWS}) == len(ROWS) >= 30
    kinds: dict[str, int] = {}
    for row in ROWS:
        for change in row["changes"]:
            kind = change["file"].split("/")[0] if "/" in change["file"] else change["file"]
            kinds[kind] = kinds.get(kind, 0) + 1
    assert all(n >= 2 for n in kinds.values()), kinds


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_the_shipped_datasets_are_valid(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = _validate(_copy(kind, tmp_path), capsys)
    assert status == 0, err
    assert not [line for line in err if "error" in line]


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_broken_dataset(row: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(row["dataset"], tmp_path)
    for change in row["changes"]:
        _apply(root, change)
    status, err = _validate(root, capsys)
    assert status != 0, f"{row['id']}: data validate passed:\n" + "\n".join(err)
    errors = [line for line in err if not line.startswith("warning:")]
    for fragments in row["expect"]:
        assert any(all(f in line for f in fragments) for line in errors), (
            f"{row['id']} ({row['note']}): no line holds all of {fragments}:\n" + "\n".join(errors)
        )


def test_a_round3_dataset_needs_no_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tutorial's own dataset: a few High-Risk items, the index and the articles they cite."""
    root = tmp_path / "mine"
    root.mkdir()
    lines = (SOURCES["sample"] / "high_risk.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (root / "high_risk.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    shutil.copy(SOURCES["sample"] / "jkb_index.jsonl", root)
    shutil.copytree(SOURCES["sample"] / "articles", root / "articles")
    status, err = _validate(root, capsys)
    assert status == 0, err
    (root / "dataset.yaml").write_text('rounds: ["3"]\n', encoding="utf-8")
    assert _validate(root, capsys)[0] == 0
    (root / "dataset.yaml").write_text('rounds: ["1b", "3"]\n', encoding="utf-8")
    status, err = _validate(root, capsys)
    assert status == 2 and any("round 1b reads queries.jsonl" in line for line in err), err


def test_a_round_whose_items_are_absent_is_one_clear_error(tmp_path: Path) -> None:
    """A config asking for Round 1b of a dataset with High-Risk items only names the file it needs."""
    from grounding_eval.data.dataset import load_dataset
    from grounding_eval.data.rounds import round_items
    from grounding_eval.errors import DataError

    root = tmp_path / "mine"
    root.mkdir()
    shutil.copy(SOURCES["sample"] / "high_risk.jsonl", root)
    shutil.copy(SOURCES["sample"] / "jkb_index.jsonl", root)
    dataset = load_dataset(root)
    assert [item.id for item in round_items(dataset, round_id="3")[0]] == [
        item.id for item in dataset.high_risk
    ]
    with pytest.raises(DataError, match=r"round 1b reads queries\.jsonl: this dataset has no queries"):
        round_items(dataset, round_id="1b")
