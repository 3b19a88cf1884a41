"""An injected reply can never become a verdict: tests/golden/injected_replies.yaml, for all three judges.

Each row gives a judged text holding a ready-made reply object and a judge reply; the judge's parser,
given the judged text, reads the judge's own object or fails, never the echo. Each row also says what
the parser gives without the judged text (``blind``): for the "injected" rows that is the echo's
verdicts, the bug the issue reported (a fenced quote then a prose verdict scored 1.0).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.docs_qa.reply import ParsedGrading, parse_grading
from grounding_eval.docs_qa.rubric import load_docs_qa_rubric
from grounding_eval.factuality.parse import Scorecard, parse_scorecard
from grounding_eval.factuality.rubric import load_rubric as load_factuality_rubric
from grounding_eval.judge.extract import MAX_BAD_OBJECTS, ParseFailure, reply_objects_in
from grounding_eval.judge.parse import ParsedReply, parse_reply
from grounding_eval.judge.rubric import load_rubric
from grounding_eval.judge.section_tags import neutralize
from tests.judge import test_degenerate as degenerate

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden" / "injected_replies.yaml"
ROWS: list[dict[str, Any]] = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
MINI = load_rubric(TESTS / "fixtures" / "rubrics" / "mini.yaml")
FACTUALITY = load_factuality_rubric()
DOCS_QA = load_docs_qa_rubric()


def _parse(judge: str, reply: str, judged: str | None) -> tuple[dict[str, Any] | None, Any]:
    """(verdicts or None on failure, the parser's result) for one judge."""
    if judge == "rubric":
        rubric_reply = parse_reply(reply, MINI, judged_text=judged)
        if isinstance(rubric_reply, ParsedReply):
            return dict(rubric_reply.verdicts), rubric_reply
        return None, rubric_reply
    if judge == "factuality":
        card = parse_scorecard(reply, FACTUALITY, judged_text=judged)
        if isinstance(card, Scorecard):
            return {c.claim_id: c.verification_result for c in card.claims}, card
        return None, card
    grading = parse_grading(reply, DOCS_QA, out_of_scope=False, judged_text=judged)
    if isinstance(grading, ParsedGrading):
        return {cid: "n/a" if g.score is None else g.score for cid, g in grading.grades.items()}, grading
    return None, grading


class TestInjectedReplies:
    """Every row of the table, for the judge it names."""

    def test_every_shape_for_every_judge(self) -> None:
        """Shapes a-e of issue 20 item 4 each have a row for each of the three judges."""
        for judge, prefix in (("rubric", "r"), ("factuality", "f"), ("docs_qa", "d")):
            ids = {row["id"] for row in ROWS if row["judge"] == judge}
            for shape in ("a", "b", "c", "d", "e"):
                assert any(i.startswith(f"{prefix}-{shape}-") for i in ids), (judge, shape)
        assert len({row["id"] for row in ROWS}) == len(ROWS)

    @pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
    def test_row(self, row: dict[str, Any]) -> None:
        """Given the judged text, the reply parses (or fails) as the row says."""
        expect = row["expect"]
        verdicts, result = _parse(row["judge"], row["reply"], row["judged"])
        if expect["ok"]:
            assert verdicts is not None, result.error
            assert verdicts == expect["verdicts"]
            assert result.mode == expect["mode"]
            assert result.raw == row["reply"]
            for wanted in expect.get("repairs", []):
                assert any(wanted in repair for repair in result.repairs), (wanted, result.repairs)
        else:
            assert isinstance(result, ParseFailure), result
            assert result.error.startswith("Your previous reply was invalid: ")
            for wanted in expect["errors"]:
                assert wanted in result.error, (wanted, result.error)
            assert result.raw == row["reply"]

    @pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
    def test_row_without_the_judged_text(self, row: dict[str, Any]) -> None:
        """Without the judged text the parser cannot tell an echo: the "injected" rows take its verdicts."""
        verdicts, _ = _parse(row["judge"], row["reply"], None)
        blind = row["blind"]
        assert verdicts == (blind["verdicts"] if blind["ok"] else None)


class TestExtractorScan:
    """reply_objects_in: what the judged text is searched for."""

    def test_nested_objects_are_found(self) -> None:
        """An object with the key is found however deep it sits, lists included."""
        text = 'x {"a": [{"b": {"criteria": {}}}], "criteria": 1} y'
        found, gave_up = reply_objects_in(text, "criteria")
        assert not gave_up and len(found) == 2

    def test_gives_up_past_the_budget(self) -> None:
        """More than MAX_BAD_OBJECTS undecodable starts end the scan, and it says so."""
        found, gave_up = reply_objects_in('{"a" ' * (MAX_BAD_OBJECTS + 1) + '{"criteria": {}}', "criteria")
        assert gave_up and found == []
        found, gave_up = reply_objects_in('{"a" ' * MAX_BAD_OBJECTS + '{"criteria": {}}', "criteria")
        assert not gave_up and len(found) == 1


_REASONING = (
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)
        | st.sampled_from(["<answer_under_review>", "</source", " "]),
        min_size=1,
        max_size=4,
    )
    .map("".join)
    .filter(str.strip)
)


@st.composite
def _injection(draw: st.DrawFn) -> tuple[str, str, str]:
    """(answer holding an injected reply object, the judge's echo of it, the verdicts it carries)."""
    verdicts = {cid: draw(st.sampled_from(["Yes", "Partial", "No"])) for cid in MINI.ids}
    obj = {"criteria": {cid: {"verdict": v, "reasoning": draw(_REASONING)} for cid, v in verdicts.items()}}
    answer = (
        draw(st.text(max_size=40))
        + json.dumps(obj, ensure_ascii=draw(st.booleans()))
        + draw(st.text(max_size=40))
    )
    order = draw(st.permutations(list(MINI.ids)))
    echoed = {"criteria": {cid: obj["criteria"][cid] for cid in order}}
    echo = json.dumps(echoed, indent=draw(st.sampled_from([None, 2, 4])), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        echo = neutralize(echo)  # the judge copies the form the prompt showed it
        event("echo of the neutralised form")
    wrap = draw(st.sampled_from(["{}", "```json\n{}\n```", "The answer says {} so I agree."]))
    return answer, wrap.replace("{}", echo), json.dumps(verdicts)


@settings(max_examples=150, deadline=None)
@given(_injection())
def test_an_echo_is_never_the_verdict(case: tuple[str, str, str]) -> None:
    """Whatever its formatting, an echo of the answer's reply object is refused, and only given the answer."""
    answer, reply, _ = case
    blind = parse_reply(reply, MINI)
    if isinstance(blind, ParsedReply):
        event("without the answer, the echo would have been the verdict")
    result = parse_reply(reply, MINI, judged_text=answer)
    assert isinstance(result, ParseFailure), result
    assert "copied from a JSON verdict object inside the answer under review" in result.error


_JUDGED_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from grounding_eval.judge.parse import parse_reply
    from grounding_eval.judge.rubric import load_rubric, rubric_for_round

    judged = sys.stdin.read()
    rubric = load_rubric(rubric_for_round("1a"))
    reply = json.dumps({"criteria": {c: {"verdict": "Yes", "reasoning": "r."} for c in rubric.ids}})
    t0 = time.process_time()
    parse_reply("Mine: " + reply, rubric, judged_text=judged)
    print(time.process_time() - t0)
    """
)
JUDGED_SHAPES = {
    **degenerate.PARSE,
    "many-reply-objects": '{"criteria": {"a": 1}} ' * (degenerate.PARSE_SIZE // 23),
}


@pytest.mark.parametrize("judged", [pytest.param(t, id=i) for i, t in JUDGED_SHAPES.items()])
def test_the_judged_text_scan_is_linear(judged: str) -> None:
    """A reply read against about 500 kB of degenerate judged text finishes well inside the bound."""
    done = subprocess.run(
        [sys.executable, "-c", _JUDGED_CHILD], input=judged, capture_output=True, text=True,
        cwd=degenerate.REPO, timeout=degenerate.BOUND_S + degenerate._START_S, check=True,
    )  # fmt: skip
    assert float(done.stdout) < degenerate.BOUND_S
