"""The test-set format (JSON Schema + section resolution), the type mix, and ``grounding-eval data validate``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.docs_qa.docs_set import load_docs_set
from grounding_eval.docs_qa.rubric import load_docs_qa_rubric
from grounding_eval.docs_qa.testset import SCHEMA_PATH, load_questions, type_mix
from grounding_eval.errors import DataError

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "docs_qa" / "tiny"
GOOD: dict[str, Any] = {
    "id": "T01", "type": "direct-lookup", "question": "What torque?", "reference_answer": "0.6 N·m.",
    "must_include": ["0.6 N·m"], "source_sections": ["maintenance-procedure.md#torque-values"],
}  # fmt: skip


def _write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class TestLoadQuestions:
    """Each record is validated; the first problem is one line naming the file, the record and the field."""

    DOCS = load_docs_set(TINY / "docs")

    def test_tiny_set_loads(self) -> None:
        questions = load_questions(TINY / "questions.jsonl", self.DOCS)
        assert [q.id for q in questions] == ["T01", "Q07", "T03"]
        assert questions[2].out_of_scope and not questions[1].out_of_scope

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"type": "lookup"}, "line 1 (T01): type: 'lookup' is not one of"),
            ({"id": "has space"}, "line 1 ('has space'): id: 'has space' does not match"),
            ({"question": "  "}, "line 1 (T01): question: ' ' does not match"),
            ({"must_include": []}, "must_include: needs at least one entry"),
            ({"source_sections": []}, "source_sections: needs at least one entry"),
            ({"type": "out-of-scope"}, "source_sections: must be empty for an out-of-scope question"),
            ({"extra": 1}, "record: unknown field(s): 'extra' was unexpected"),
            ({"source_sections": ["maintenance-procedure.md#nope"]}, "source_sections: 'maintenance-procedure.md#nope' is not a section of"),
            ({"source_sections": ["other.md"]}, "'other.md' is not a section"),
            ({"must_include": "one"}, "must_include: 'one' is not of type 'array'"),
        ],
        ids=["bad-type", "bad-id", "blank-question", "no-must-include", "no-sources", "oos-with-sources",
             "unknown-field", "unknown-anchor", "unknown-file", "not-a-list"],
    )  # fmt: skip
    def test_one_line_errors(self, tmp_path: Path, change: dict[str, Any], message: str) -> None:
        path = _write(tmp_path, {**GOOD, **change})
        with pytest.raises(DataError) as info:
            load_questions(path, self.DOCS)
        text = str(info.value)
        assert text.startswith(str(path)) and "\n" not in text
        assert message in text, text

    def test_missing_required_field(self, tmp_path: Path) -> None:
        record = dict(GOOD)
        del record["reference_answer"]
        with pytest.raises(DataError, match="'reference_answer' is a required property"):
            load_questions(_write(tmp_path, record), self.DOCS)

    def test_duplicate_id(self, tmp_path: Path) -> None:
        with pytest.raises(DataError, match="line 2 \\(T01\\): id 'T01' was already used at line 1"):
            load_questions(_write(tmp_path, GOOD, GOOD), self.DOCS)

    def test_yaml_records_like_the_seed(self, tmp_path: Path) -> None:
        import yaml

        path = tmp_path / "questions.yaml"
        path.write_text(yaml.safe_dump([GOOD]), encoding="utf-8")
        assert load_questions(path, self.DOCS)[0].id == "T01"

    def test_schema_is_valid_json_schema(self) -> None:
        import jsonschema  # type: ignore[import-untyped]

        jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


class TestTypeMix:
    """Shares against the seed's 40/25/20/15 %, warning past 5 points."""

    def test_sample_is_within_tolerance(self) -> None:
        docs = load_docs_set(REPO / "datasets" / "docs_qa" / "docs")
        questions = load_questions(REPO / "datasets" / "docs_qa" / "questions.jsonl", docs)
        mix = {s.type: s for s in type_mix(questions, load_docs_qa_rubric())}
        assert {t: s.n for t, s in mix.items()} == {
            "direct-lookup": 10,
            "multi-section": 6,
            "reworded": 5,
            "out-of-scope": 3,
        }
        assert len(questions) >= 24 and not any(s.warn for s in mix.values())

    def test_warns_past_tolerance(self) -> None:
        questions = load_questions(TINY / "questions.jsonl", load_docs_set(TINY / "docs"))
        mix = {s.type: s for s in type_mix(questions, load_docs_qa_rubric())}
        assert mix["reworded"].warn and mix["reworded"].off_by == pytest.approx(-20.0)
        assert mix["direct-lookup"].share == pytest.approx(100 / 3)


def _validate(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grounding_eval", "data", "validate", str(folder)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


class TestDataValidate:
    """``grounding-eval data validate DIR`` on a docs-QA dataset folder."""

    def test_sample(self) -> None:
        run = _validate(REPO / "datasets" / "docs_qa")
        assert run.returncode == 0, run.stderr
        assert "docs-QA test set, 24 questions, 10 documents" in run.stdout
        assert "24 recorded answers, 24 recorded grader replies — valid" in run.stdout
        assert "direct-lookup   10   41.7 %     40 %" in run.stdout
        assert "out-of-scope     3   12.5 %     15 %" in run.stdout
        assert run.stderr == ""

    def test_tiny_warns_but_passes(self) -> None:
        run = _validate(TINY)
        assert run.returncode == 0, run.stderr
        warnings = run.stderr.strip().splitlines()
        assert len(warnings) == 4
        assert (
            f"warning: {TINY}: reworded is 0.0 % of the questions, 20.0 points from the seed's 20 % (tolerance 5)"
            in warnings
        )

    def test_bad_record_is_one_line_error(self, tmp_path: Path) -> None:
        shutil.copytree(TINY, tmp_path / "set")
        path = tmp_path / "set" / "questions.jsonl"
        path.write_text(
            path.read_text(encoding="utf-8")
            .replace('"#torque-values', '"#torque')
            .replace("#torque-values", "#torque"),
            encoding="utf-8",
        )
        run = _validate(tmp_path / "set")
        assert run.returncode != 0
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1
        assert (
            "questions.jsonl: line 1 (T01): source_sections: 'maintenance-procedure.md#torque' is not a section of"
            in lines[0]
        )
