"""The recorded judge replies (fixtures) cover every row of every round config, and every final reply
parses under its rubric — so the offline rounds never hit a missing or malformed recording by accident."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.rounds import ROUNDS, select_items
from grounding_eval.judge.client import load_replay_fixtures
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
