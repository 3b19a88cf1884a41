"""``grounding-eval factuality``: exit codes, the exact ``--json`` shape, one-line errors."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.judge.calls import answer_sha256
from grounding_eval.promptfoo.judge_assertion import JUDGE_PROVIDER_ENV

from .conftest import CONTRADICTED, EVIDENCE_FILES, SUPPORTED, JudgeServer, Scripted, reply, wire_cases

TARGET = (
    "A landlord may not evict a servicemember's family without a court order. Everyone gets free legal aid."
)
EVIDENCE = ["--evidence", *map(str, EVIDENCE_FILES)]
JSON_KEYS = [
    "status",
    "score",
    "judge_reported_score",
    "claims",
    "ungrounded_verdicts",
    "model_id",
    "prompt_version",
    "attempts",
]
CLAIM_KEYS = [
    "claim_id",
    "claim_text",
    "verification_result",
    "score",
    "severity",
    "evidence_quote",
    "evidence_check",
]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv(JUDGE_PROVIDER_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def _files(tmp_path: Path, *replies: str, text: str = TARGET) -> tuple[Path, str]:
    target = tmp_path / "answer.txt"
    target.write_text(text, encoding="utf-8")
    fixtures = tmp_path / "replies.json"
    fixtures.write_text(json.dumps([{"key": "factual_accuracy/answer.txt", "answer_sha256": answer_sha256(text),
                                     "replies": list(replies)}]))  # fmt: skip
    return target, f"replay:{fixtures}"


class TestJson:
    def test_exact_shape(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        target, judge = _files(tmp_path, reply(SUPPORTED, CONTRADICTED, score=0.9))
        assert main(["factuality", str(target), *EVIDENCE, "--judge", judge, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert list(out) == JSON_KEYS
        assert (out["status"], out["score"], out["judge_reported_score"]) == ("scored", 0.5, 0.9)
        assert [list(c) for c in out["claims"]] == [CLAIM_KEYS, CLAIM_KEYS]
        assert [c["evidence_check"] for c in out["claims"]] == ["FOUND", "FOUND"]
        assert out["claims"][1]["severity"] == "Major"
        assert out["ungrounded_verdicts"] == 0
        assert out["prompt_version"] == "factual-accuracy-p1"
        assert out["attempts"][0]["outcome"] == "parsed"

    def test_needs_human_verification_exits_1(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        target, judge = _files(tmp_path, reply(SUPPORTED, CONTRADICTED))
        queue = tmp_path / "human.jsonl"
        code = main(
            [
                "factuality",
                str(target),
                *EVIDENCE,
                "--judge",
                judge,
                "--risk-level",
                "high",
                "--human-queue",
                str(queue),
                "--json",
            ]
        )
        assert code == 1
        assert json.loads(capsys.readouterr().out)["status"] == "needs_human_verification"
        assert json.loads(queue.read_text(encoding="utf-8"))["findings"][0]["claim_id"] == "c2"

    def test_no_verifiable_claims(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        target, judge = _files(tmp_path, reply())
        assert main(["factuality", str(target), *EVIDENCE, "--judge", judge, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["status"], out["score"], out["claims"]) == ("no_verifiable_claims", None, [])

    def test_invalid_twice_is_error_exit_1(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        target, judge = _files(tmp_path, "no", "still no")
        queue = tmp_path / "review.jsonl"
        assert (
            main(
                [
                    "factuality",
                    str(target),
                    *EVIDENCE,
                    "--judge",
                    judge,
                    "--review-queue",
                    str(queue),
                    "--json",
                ]
            )
            == 1
        )
        out = json.loads(capsys.readouterr().out)
        assert (out["status"], out["score"]) == ("error", None)
        assert json.loads(queue.read_text(encoding="utf-8"))["raw_replies"] == ["no", "still no"]

    def test_ungrounded_verdict(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        invented = {
            **SUPPORTED,
            "claim_id": "c9",
            "evidence_quote": "every tenant may stay for a year without paying rent",
        }
        target, judge = _files(tmp_path, reply(SUPPORTED, invented))
        assert main(["factuality", str(target), *EVIDENCE, "--judge", judge, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["ungrounded_verdicts"] == 1
        assert [(c["evidence_check"], c["score"]) for c in out["claims"]] == [
            ("FOUND", 1.0),
            ("NOT_FOUND", None),
        ]


class TestText:
    def test_lines(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        target, judge = _files(tmp_path, reply(SUPPORTED, CONTRADICTED))
        assert main(["factuality", str(target), *EVIDENCE, "--judge", judge]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("FAIL factual accuracy 0.50 over 2 verifiable claim(s)")
        assert (
            lines[2]
            == "  c2: Contradicted [Major] — Every renter qualifies for free legal aid. (quote FOUND in avoid#1)"
        )

    def test_print_rubric(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["factuality", "--print-rubric"]) == 0
        assert "[seed] Critical:" in capsys.readouterr().out


class TestOpenAICompatibleServer:
    def test_base_url(
        self,
        tmp_path: Path,
        judge_server: JudgeServer,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        case = wire_cases(judge_server.url)["openai"]
        monkeypatch.setenv("OPENAI_API_KEY", case.key)
        judge_server.script(Scripted(body=case.ok(reply(SUPPORTED))))
        target, _ = _files(tmp_path, "unused")
        code = main(["factuality", str(target), *EVIDENCE, "--judge", "openai:chat:local-model",
                     "--base-url", f"{judge_server.url}/v1", "--no-cache", "--json"])  # fmt: skip
        assert code == 0
        assert json.loads(capsys.readouterr().out)["model_id"] == "openai:chat:local-model"
        assert judge_server.requests[0].path == "/v1/chat/completions"


class TestBadInput:
    """Exit 2 and one line on stderr naming the file or option and the problem."""

    @pytest.mark.parametrize(
        ("args", "expected"),
        [
            (["missing.txt", "--evidence", "e.txt", "--judge", "replay:r.json"], "missing.txt"),
            (["answer.txt", "--judge", "replay:r.json"], "--evidence FILE is required"),
            (["answer.txt", "--evidence", "nope.txt", "--judge", "replay:r.json"], "nope.txt"),
            (["answer.txt", "--evidence", "e.txt"], "no judge: give --judge"),
            (
                ["answer.txt", "--evidence", "e.txt", "--judge", "bard:x"],
                "Could not identify provider: bard:x",
            ),
            (
                ["answer.txt", "--evidence", "e.txt", "--judge", "openai:chat:gpt-4o"],
                "judge provider openai:chat:gpt-4o (--judge): its API key is not set",
            ),
            (["empty.txt", "--evidence", "e.txt", "--judge", "replay:r.json"], "the target text is empty"),
            (
                ["answer.txt", "--evidence", "blank.txt", "--judge", "replay:r.json"],
                "evidence document is empty",
            ),
            (["answer.txt", "--evidence", "e.txt", "--risk-level", "extreme"], "invalid choice"),
        ],
    )
    def test_exit_2(self, args: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        (tmp_path / "answer.txt").write_text(TARGET, encoding="utf-8")
        (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
        (tmp_path / "blank.txt").write_text("\n", encoding="utf-8")
        (tmp_path / "e.txt").write_text("Evidence.", encoding="utf-8")
        (tmp_path / "r.json").write_text(json.dumps([{"key": "k", "replies": ["x"]}]), encoding="utf-8")
        with pytest.raises(SystemExit) if "invalid choice" in expected else contextlib.nullcontext():
            assert main(["factuality", *args]) == 2
        err = capsys.readouterr().err
        assert expected in err
        assert len(err.strip().splitlines()) == 1
