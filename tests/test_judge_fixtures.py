"""The recorded judge replies (fixtures) cover every row of every round config, every final reply parses
under its rubric, and every reply carries the SHA-256 of the recorded answer it judged — so the offline
rounds never hit a missing, malformed or mismatched recording by accident.

After editing a recorded answer, re-record its judge reply, then ``scripts/hash_judge_replies.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.methods import ROUNDS
from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.data.rounds import select_items
from grounding_eval.judge.calls import answer_sha256, load_replay_fixtures
from grounding_eval.judge.parse import ParseFailure, parse_reply
from grounding_eval.judge.rubric import load_rubric

REPO = Path(__file__).resolve().parents[1]
SAMPLE = load_dataset(REPO / "datasets" / "sample")


@pytest.mark.parametrize("round_id", list(ROUNDS))
def test_every_row_of_the_round_has_a_reply(round_id: str) -> None:
    spec = ROUNDS[round_id]
    fixtures = load_replay_fixtures(REPO / "datasets" / "sample" / "judge_replies" / f"{spec.rubric}.yaml")
    wanted = {
        f"{spec.rubric}/{item.id}/{c}"
        for item in select_items(SAMPLE, round_id=round_id)
        for c in spec.conditions
    }
    assert wanted <= set(fixtures), sorted(wanted - set(fixtures))[:5]


@pytest.mark.parametrize("rubric_id", ["v3", "v4", "round3"])
def test_final_replies_parse_and_retries_are_real(rubric_id: str) -> None:
    rubric = load_rubric(REPO / "rubrics" / f"{rubric_id}.yaml")
    fixtures = load_replay_fixtures(REPO / "datasets" / "sample" / "judge_replies" / f"{rubric_id}.yaml")
    for key, fixture in fixtures.items():
        assert key.startswith(f"{rubric_id}/")
        assert not isinstance(parse_reply(fixture.replies[-1], rubric), ParseFailure), key
        for earlier in fixture.replies[:-1]:  # a recorded retry starts from a reply that really fails
            assert isinstance(parse_reply(earlier, rubric), ParseFailure), key


REPLY_FILES = [
    pytest.param(REPO / dataset / "judge_replies" / name, id=f"{dataset}/{name}")
    for dataset, names in (
        ("datasets/sample", ("v3.yaml", "v4.yaml", "round3.yaml")),
        ("tests/fixtures/data/tiny", ("round3.yaml",)),
    )
    for name in names
]


@pytest.mark.parametrize("path", REPLY_FILES)
def test_every_reply_is_hashed_to_its_recorded_answer(path: Path) -> None:
    """Each reply under <rubric>/<item>/<condition> names, by SHA-256, the dataset's recorded answer for
    (item, condition): the text the judge would be shown when the main job replays it."""
    answers = load_recorded_answers(path.parent.parent / "recorded_answers.yaml")
    wrong = []
    for key, fixture in load_replay_fixtures(path).items():
        _, item, condition = key.split("/")
        expected = answer_sha256(answers[item, condition].answer)
        if fixture.answer_sha256 != expected:
            wrong.append(f"{key}: {fixture.answer_sha256} != {expected}")
    assert not wrong, wrong[:5]
