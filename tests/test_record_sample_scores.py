"""scripts/record_sample_scores.py without promptfoo: what --check prints, and an atomic write that sorts keys.

The script's run of every sample round is what test_promptfoo_e2e.py compares with the file; here only its
own logic, on rows written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.entry_points import load_file

REPO = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    return load_file("record_sample_scores", REPO / "scripts" / "record_sample_scores.py")


def _row(item: str, condition: str, score: float, **named: float) -> dict[str, object]:
    return {
        "item_id": item,
        "condition": condition,
        "success": score >= 0.5,
        "score": score,
        "namedScores": named,
    }


def test_differences_name_each_moved_row_and_score() -> None:
    before = [_row("a", "C0", 1, x=1, y=0.5), _row("b", "C0", 0.2, x=0), _row("c", "C1", 1)]
    after = [_row("a", "C0", 1, x=1, z=1), _row("b", "C0", 0.6, x=0), _row("d", "C1", 1)]
    assert _script().differences("r.yaml", before, after) == [
        "r.yaml c C1: row dropped",
        "r.yaml d C1: row added",
        "r.yaml a C0: y 0.5 -> absent",
        "r.yaml a C0: z absent -> 1",
        "r.yaml b C0: success False -> True",
        "r.yaml b C0: score 0.2 -> 0.6",
    ]
    assert _script().differences("r.yaml", before, before) == []


def test_write_is_sorted_indented_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The script writes a record as ``record.to_text`` puts it, through the pack's atomic writer."""
    target = tmp_path / "named_scores.json"
    target.write_text("old", encoding="utf-8")
    data = {"z.yaml": [_row("a", "C0", 1, b=1, a=0)], "a.yaml": []}
    script = _script()
    script.write_text_atomic(target, script.record.to_text(data))
    assert target.read_text(encoding="utf-8") == json.dumps(data, indent=1, sort_keys=True) + "\n"
    assert [p.name for p in tmp_path.iterdir()] == ["named_scores.json"]
