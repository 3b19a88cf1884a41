"""The shipped recorded judge replies (fixtures) fit the answers they were recorded for, and replay safely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from grounding_eval.factuality.evidence import Document, load_evidence_files
from grounding_eval.factuality.judge import judge_factuality
from grounding_eval.factuality.parse import Scorecard, parse_scorecard
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.judge.calls import answer_sha256, load_replay_fixtures, replay_client

from .conftest import SUPPORTED, reply

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
FILES = ["judge_replies.yaml", "cheap_replies.yaml"]


@pytest.mark.parametrize("name", FILES)
def test_recordings_are_hashed_for_the_recorded_c15_answers(name: str) -> None:
    answers = {
        (a["query_id"], a["condition"]): a["answer"]
        for a in yaml.safe_load((SAMPLE / "recorded_answers.yaml").read_text())
    }
    for key, fixture in load_replay_fixtures(SAMPLE / "factuality" / name).items():
        rubric_id, item, condition = key.split("/")
        assert rubric_id == "factual_accuracy" and condition == "C1.5"
        assert fixture.answer_sha256 == answer_sha256(answers[(item, condition)]), key


def test_standalone_recording_matches_its_target(rubric: FactualityRubric) -> None:
    text = (SAMPLE / "factuality" / "avoid_eviction_summary.txt").read_text(encoding="utf-8")
    (fixture,) = load_replay_fixtures(SAMPLE / "factuality" / "standalone_replies.yaml").values()
    assert fixture.answer_sha256 == answer_sha256(text)
    assert isinstance(parse_scorecard(fixture.replies[0], rubric), Scorecard)


def test_recorded_cheap_reply_for_another_text_escalates(
    rubric: FactualityRubric, documents: list[Document], tmp_path: Path
) -> None:
    """A cheap recording that does not match the text is never used: the capable judge decides."""
    cheap = tmp_path / "cheap.json"
    cheap.write_text(
        json.dumps(
            [{"key": "k", "answer_sha256": answer_sha256("another text"), "replies": [reply(SUPPORTED)]}]
        )
    )
    capable = tmp_path / "capable.json"
    capable.write_text(
        json.dumps([{"key": "k", "answer_sha256": answer_sha256("the text"), "replies": [reply(SUPPORTED)]}])
    )
    result = judge_factuality(
        "the text", documents, rubric, capable=replay_client(capable), cheap=replay_client(cheap),
        fixture_key="k",
    )  # fmt: skip
    assert result.stage == "capable" and result.status == "scored"
    assert result.attempts[0]["outcome"].startswith(
        "escalated: cheap judge not run (recorded judge reply k was recorded for answer sha256"
    )


def test_vendored_evidence_is_the_sample_article(documents: list[Document]) -> None:
    assert (
        load_evidence_files([SAMPLE / "articles" / "us-50usc3951.txt"], max_chars=1200)[0].text
        == documents[0].text
    )
