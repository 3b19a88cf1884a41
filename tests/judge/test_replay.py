"""Recorded judge replies (``replay:``, grounding_eval/judge/calls.py): fixtures served in order per key, each
grading only the answer text it was recorded for; and the one hash that says which text that was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.judge.calls import JudgeError, ReplayJudgeClient, answer_sha256, replay_client

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "judge_client"


def recording(provider_id: str) -> ReplayJudgeClient:
    """A recording named the way configs name it (``replay:<file>``)."""
    return replay_client(provider_id.removeprefix("replay:"), provider_id)


class TestAnswerSha256:
    """The one definition of which answer a recording judged: SHA-256 of the exact UTF-8 text."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            pytest.param("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id="empty"),
            pytest.param("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", id="abc"),
        ],
    )
    def test_known_vectors(self, text: str, expected: str) -> None:
        """FIPS 180-2 test vectors."""
        assert answer_sha256(text) == expected

    def test_utf8_and_no_normalization(self) -> None:
        """Non-ASCII text is hashed as UTF-8; whitespace and case are significant."""
        assert answer_sha256("café") == hashlib.sha256("café".encode()).hexdigest()
        assert len({answer_sha256(t) for t in ("a b", "a  b", "a b\n", "A b", "a\u00a0b")}) == 5

    def test_lone_surrogate_has_a_hash(self) -> None:
        """JSON-decoded output may hold a lone surrogate; it still hashes instead of raising."""
        assert len(answer_sha256("x\ud800y")) == 64


class TestReplay:
    """Recorded judge replies (fixtures), served in order per key."""

    def test_successive_calls_return_successive_replies(self) -> None:
        """Malformed first, valid on the retry — as recorded; then the key is used up."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        first = client.complete("any prompt", fixture_key="q001/C1/v4")
        second = client.complete("any prompt", fixture_key="q001/C1/v4")
        assert first.text.startswith("Sure!")
        assert second.text.startswith('{"criteria"')
        assert (
            second.provider,
            second.model,
            second.cached,
            second.attempts,
            second.raw,
            second.request_id,
        ) == (
            "replay",
            str(FIX / "replay.yaml"),
            False,
            0,
            None,
            None,
        )
        with pytest.raises(JudgeError) as info:
            client.complete("any prompt", fixture_key="q001/C1/v4")
        assert str(info.value) == (
            f"{FIX / 'replay.yaml'}: replay judge: key 'q001/C1/v4' has 2 recorded replies, asked for reply 3"
        )

    def test_keys_are_independent_and_position_is_per_instance(self) -> None:
        """Another key has its own position; a new client starts again from the first reply."""
        path = f"replay:{FIX / 'replay.yaml'}"
        client = recording(path)
        client.complete("p", fixture_key="q001/C1/v4")
        assert client.complete("p", fixture_key="q002/C0/v4").text.endswith('"fail"}')
        assert recording(path).complete("p", fixture_key="q001/C1/v4").text.startswith("Sure!")

    def test_unknown_key(self) -> None:
        """A key the file does not record → JudgeError naming the file and the key."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        with pytest.raises(JudgeError) as info:
            client.complete("p", fixture_key="q999/C1/v4")
        assert (
            str(info.value)
            == f"{FIX / 'replay.yaml'}: replay judge has no recorded replies for key 'q999/C1/v4'"
        )

    def test_missing_fixture_key(self) -> None:
        """Replay cannot guess which recording is meant."""
        with pytest.raises(JudgeError, match="replay judge needs a fixture_key"):
            recording(f"replay:{FIX / 'replay.yaml'}").complete("p")

    def test_answer_hash_is_loaded(self) -> None:
        """An entry's answer_sha256 is kept; an entry without one has None."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        assert client._fixtures["q003/C0/v4"].answer_sha256 == answer_sha256("Recorded answer for q003.")
        assert client._fixtures["q002/C0/v4"].answer_sha256 is None

    @pytest.mark.parametrize(
        ("key", "answer", "recorded_answer", "status", "allowed"),
        [
            pytest.param("q003/C0/v4", "Recorded answer for q003.", False, "match", True, id="same-text"),
            pytest.param(
                "q003/C0/v4", "Recorded answer for q003.", True, "match", True, id="same-text-recorded"
            ),
            pytest.param("q003/C0/v4", "A live model's answer.", False, "mismatch", False, id="other-text"),
            pytest.param("q003/C0/v4", "Recorded answer for q003.\n", True, "mismatch", False, id="edited"),
            pytest.param(
                "q002/C0/v4", "Anything.", True, "unhashed_recorded_answer", True, id="old-both-recorded"
            ),
            pytest.param("q002/C0/v4", "Anything.", False, "unhashed", False, id="old-live-answer"),
        ],
    )
    def test_check_answer(
        self, key: str, answer: str, recorded_answer: bool, status: str, allowed: bool
    ) -> None:
        """Which answers a recording may grade: its own text; or, without a hash, another recording only."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        check = client.check_answer(key, answer, answer_is_recorded=recorded_answer)
        assert (check.key, check.status, check.allowed) == (key, status, allowed)
        assert check.answer_sha256 == answer_sha256(answer)
        assert check.recorded_sha256 == client._fixtures[key].answer_sha256
        assert client._served == {}  # checking serves nothing

    def test_check_answer_messages(self) -> None:
        """The refusal names the key and both hashes (12 digits each); acceptance of an old one says why."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        live = answer_sha256("Live.")
        assert client.check_answer("q003/C0/v4", "Live.", answer_is_recorded=False).detail == (
            f"recorded judge reply q003/C0/v4 was recorded for answer sha256 0e026422adc2… but this answer "
            f"is sha256 {live[:12]}…"
        )
        assert client.check_answer("q002/C0/v4", "Live.", answer_is_recorded=False).detail == (
            f"recorded judge reply q002/C0/v4 has no answer hash and this answer (sha256 {live[:12]}…) is "
            "not a recorded fixture, so nothing shows the reply judged this text"
        )
        assert client.check_answer("q002/C0/v4", "Live.", answer_is_recorded=True).detail == (
            "recorded reply without an answer hash, accepted because the answer is a recorded fixture too"
        )
        assert (
            client.check_answer("q003/C0/v4", "Recorded answer for q003.", answer_is_recorded=False).detail
            == ""
        )

    def test_check_answer_unknown_key(self) -> None:
        """A key the file does not record → the same JudgeError as complete() gives."""
        client = recording(f"replay:{FIX / 'replay.yaml'}")
        assert isinstance(client, ReplayJudgeClient)
        with pytest.raises(JudgeError, match="has no recorded replies for key 'q999/C1/v4'"):
            client.check_answer("q999/C1/v4", "x", answer_is_recorded=True)
        with pytest.raises(JudgeError, match="needs a fixture_key"):
            client.check_answer(None, "x", answer_is_recorded=True)

    @pytest.mark.parametrize(
        ("name", "problem"),
        [
            ("not_a_list.yaml", "expected a non-empty YAML list"),
            ("empty.yaml", "expected a non-empty YAML list"),
            ("bad_yaml.yaml", "malformed YAML at line"),
            ("empty_replies.yaml", "entry 1 (q001): field 'replies' must be a non-empty list of text"),
            ("reply_not_text.yaml", "entry 1 (q001): field 'replies' must be a non-empty list of text"),
            ("missing_key.yaml", "entry 1: field 'key' is required and must be text"),
            ("duplicate_key.yaml", "entry 2: a second entry for key 'q001'"),
            ("unknown_field.yaml", "entry 1: unknown field(s) reply"),
            (
                "sha256_uppercase.yaml",
                "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits",
            ),
            (
                "sha256_short.yaml",
                "field 'answer_sha256' must be 64 lowercase hex digits (the SHA-256 of the "
                "judged answer), got '0e026422adc2d398'",
            ),
            (
                "sha256_not_text.yaml",
                "field 'answer_sha256' must be 64 lowercase hex digits (the SHA-256 of the "
                "judged answer), got 12345",
            ),
            ("sha256_prefixed.yaml", "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits"),
            ("sha256_newline.yaml", "entry 1 (q001): field 'answer_sha256' must be 64 lowercase hex digits"),
            ("no_such_file.yaml", "file not found"),
        ],
    )
    def test_malformed_fixture_file(self, name: str, problem: str) -> None:
        """A bad fixture file is one DataError line naming the file, raised when the client is built."""
        path = FIX / "replay_bad" / name
        with pytest.raises(DataError) as info:
            recording(f"replay:{path}")
        assert str(info.value).startswith(f"{path}: ")
        assert problem in str(info.value)
        assert "\n" not in str(info.value)
