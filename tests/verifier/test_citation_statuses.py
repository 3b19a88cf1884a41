"""The citation status golden table (tests/golden/citation_statuses.yaml): each citation's status given
the user's state and a citation index, as the rules in tests/golden/citations_README.md say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.errors import DataError
from grounding_eval.verifier.citations import check_citations, find_citations, load_citation_index

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden" / "citation_statuses.yaml"


def _rows() -> list[Any]:
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    return [pytest.param(r, id=r["id"]) for r in rows]


@pytest.mark.parametrize("row", _rows())
def test_row(row: dict[str, Any], tmp_path: Path) -> None:
    """Each citation, in order, with its status; or the index refused with a message that says why."""
    index = None
    if "index" in row:
        path = tmp_path / "citations.yaml"
        path.write_text(yaml.safe_dump(row["index"], allow_unicode=True), encoding="utf-8")
        if "index_error" in row:
            with pytest.raises(DataError) as caught:
                load_citation_index(path)
            message = str(caught.value)
            assert "\n" not in message and all(w in message for w in row["index_error"]), message
            return
        index = load_citation_index(path)
    findings = check_citations(find_citations(row["text"]).mentions, row["state"], index, [])
    got = [{"citation": f.mention.raw, "status": f.status.value} for f in findings]
    expected = [{k: v for k, v in e.items() if k != "why"} for e in row["expected"]]
    assert got == expected, (row["note"], [f.why for f in findings])
    for want, finding in zip(row["expected"], findings, strict=True):
        assert want.get("why", "") in finding.why, (row["note"], finding.why)


def test_every_status_has_rows() -> None:
    """The table pins every status the check gives, and both sides of each rule."""
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    statuses = {e["status"] for r in rows for e in r.get("expected", [])}
    assert {"KNOWN", "UNKNOWN", "UNCHECKED", "WRONG_JURISDICTION"} <= statuses
    assert any("labelled as a comparison" in e.get("why", "") for r in rows for e in r.get("expected", []))
    assert any("index_error" in r for r in rows)
