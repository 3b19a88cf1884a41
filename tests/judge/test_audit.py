"""The judge's audit log: content-addressed records, checked on reading, found from a results row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.errors import DataError
from grounding_eval.judge.audit import audit_id, read_audit, write_audit

RECORD = {
    "fixture_key": "round3/x/C1",
    "timestamp": "2026-01-01T00:00:00+00:00",
    "rendered_prompt": {"system": "sys", "user": "the answer"},
    "raw_replies": ["{}"],
}


def test_the_id_is_the_content_without_the_timestamp(tmp_path: Path) -> None:
    later = {**RECORD, "timestamp": "2027-01-01T00:00:00+00:00"}
    assert audit_id(RECORD) == audit_id(later)
    assert audit_id(RECORD) != audit_id({**RECORD, "raw_replies": ["{ }"]})
    first = write_audit(tmp_path, RECORD)
    assert write_audit(tmp_path, later) == first  # stored once
    stored = read_audit(tmp_path, first)
    assert stored["timestamp"] == RECORD["timestamp"] and stored["audit_id"] == first
    assert len(list(tmp_path.rglob("*.json"))) == 1


def test_a_changed_record_is_refused(tmp_path: Path) -> None:
    rid = write_audit(tmp_path, RECORD)
    path = next(tmp_path.rglob(f"{rid}.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["raw_replies"] = ["a different reply"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match="changed after it was written"):
        read_audit(tmp_path, rid)


@pytest.mark.parametrize("bad", ["", "abc", "g" * 64, "../" + "a" * 61])
def test_only_hex_ids_are_looked_up(tmp_path: Path, bad: str) -> None:
    with pytest.raises(DataError, match="not an audit id"):
        read_audit(tmp_path, bad)


def test_a_missing_record_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no audit record"):
        read_audit(tmp_path, "a" * 64)


def test_lone_surrogates_are_stored_as_replacement_characters(tmp_path: Path) -> None:
    rid = write_audit(tmp_path, {**RECORD, "raw_replies": ["bad \ud800 text"]})
    assert read_audit(tmp_path, rid)["raw_replies"] == ["bad \ufffd text"]


def _results(tmp_path: Path, rid: str) -> Path:
    row = {
        "id": "row-1",
        "testIdx": 3,
        "promptIdx": 1,
        "success": True,
        "gradingResult": {
            "componentResults": [
                {"metadata": {"verifier": {}}},
                {"metadata": {"judge": {"audit_id": rid, "audit_dir": str(tmp_path / "log")}}},
            ]
        },
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"results": [row]}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("ref", ["row-1", "3:1"])
def test_cli_finds_the_record_of_a_row(tmp_path: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    rid = write_audit(tmp_path / "log", RECORD)
    assert main(["audit", "--results", str(_results(tmp_path, rid)), ref]) == 0
    out = capsys.readouterr().out
    assert f"===== audit {rid} =====" in out and "----- USER -----\nthe answer" in out
    assert "----- REPLY 1 -----\n{}" in out


def test_cli_by_id_and_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = write_audit(tmp_path, RECORD)
    assert main(["audit", rid, "--dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["rendered_prompt"]["user"] == "the answer"


def test_cli_unknown_row_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--results", str(_results(tmp_path, "a" * 64)), "9:9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no row 9:9" in err
