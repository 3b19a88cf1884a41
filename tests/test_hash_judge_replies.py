"""scripts/hash_judge_replies.py: fills each recorded judge reply's answer_sha256 from the dataset's recorded
answers without disturbing the file, and ``--check`` names every missing or wrong hash (exit codes, exact
output)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.judge.calls import answer_sha256, load_replay_fixtures
from tests.entry_points import load_file

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "fixtures" / "data" / "tiny"
KEYS = [f"round3/tiny-hr-wv-01/{c}" for c in ("C0", "C1", "C1.5")]


def _load_main() -> Callable[[list[str]], int]:
    return load_file("hash_judge_replies", REPO / "scripts" / "hash_judge_replies.py").main


main = _load_main()


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A copy of the tiny dataset's recordings (answers and judge replies) to edit freely."""
    root = tmp_path / "tiny"
    (root / "judge_replies").mkdir(parents=True)
    shutil.copy(TINY / "recorded_answers.yaml", root)
    shutil.copy(TINY / "judge_replies" / "round3.yaml", root / "judge_replies")
    return root


def _replies(dataset: Path) -> Path:
    return dataset / "judge_replies" / "round3.yaml"


def _strip(path: Path) -> None:
    path.write_text(
        re.sub(r"(?m)^  answer_sha256: .*\n", "", path.read_text(encoding="utf-8")), encoding="utf-8"
    )


def _hash(dataset: Path, item: str, condition: str) -> str:
    return answer_sha256(load_recorded_answers(dataset / "recorded_answers.yaml")[item, condition].answer)


class TestCheck:
    """--check changes nothing and reports one line per problem."""

    def test_the_shipped_fixtures_pass(self) -> None:
        """The sample dataset (the default) and the tiny one, through the real entry point."""
        result = subprocess.run(
            [sys.executable, "scripts/hash_judge_replies.py", "--check", "datasets/sample", "tests/fixtures/data/tiny"],
            cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.fullmatch(
            r"ok: every answer_sha256 matches its recorded answer \(\d+ replies in 6 files\)\n",
            result.stdout,  # with round3.retest and round3.second_judge
        )

    def test_tiny_exact_output(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["--check", str(dataset)]) == 0
        assert (
            capsys.readouterr().out
            == "ok: every answer_sha256 matches its recorded answer (3 replies in 1 file)\n"
        )

    def test_missing_hashes(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        _strip(_replies(dataset))
        before = _replies(dataset).read_bytes()
        assert main(["--check", str(dataset)]) == 1
        assert capsys.readouterr().out.splitlines() == [
            f"{_replies(dataset)}: {key}: no answer_sha256 (its recorded answer is sha256 "
            f"{_hash(dataset, 'tiny-hr-wv-01', key.rsplit('/', 1)[1])})"
            for key in KEYS
        ]
        assert _replies(dataset).read_bytes() == before

    def test_edited_answer(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An answer edited after its reply was recorded: exactly that entry, with both hashes."""
        answers = dataset / "recorded_answers.yaml"
        old = _hash(dataset, "tiny-hr-wv-01", "C0")
        answers.write_text(
            answers.read_text(encoding="utf-8").replace("be there early", "be there on time"),
            encoding="utf-8",
        )
        new = _hash(dataset, "tiny-hr-wv-01", "C0")
        assert main(["--check", str(dataset)]) == 1
        assert capsys.readouterr().out == (
            f"{_replies(dataset)}: round3/tiny-hr-wv-01/C0: answer_sha256 {old} does not match its recorded "
            f"answer, sha256 {new}\n"
        )

    def test_reply_without_a_recorded_answer(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        answers = dataset / "recorded_answers.yaml"
        lines = answers.read_text(encoding="utf-8").splitlines(keepends=True)
        answers.write_text(
            "".join(line for line in lines if "tiny-hr-wv-01, condition: C1," not in line), encoding="utf-8"
        )
        assert main(["--check", str(dataset)]) == 1
        assert capsys.readouterr().out == (
            f"{_replies(dataset)}: round3/tiny-hr-wv-01/C1: no recorded answer for 'tiny-hr-wv-01' under C1 "
            f"in {answers}\n"
        )

    def test_unreadable_file_is_exit_2(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        _replies(dataset).write_text(
            "- key: round3/x/C0\n  answer_sha256: ABC\n  replies: [a]\n", encoding="utf-8"
        )
        assert main(["--check", str(dataset)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{_replies(dataset)}: entry 1 (round3/x/C0): field 'answer_sha256' must be 64")
        assert err.count("\n") == 1


class TestWrite:
    """Write mode fills or updates the hash line and leaves every other byte alone."""

    def test_fills_back_the_exact_file(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Strip the hashes, write them again: byte for byte the shipped file, header comment included."""
        original = _replies(dataset).read_bytes()
        _strip(_replies(dataset))
        assert main([str(dataset)]) == 0
        assert capsys.readouterr().out == f"{_replies(dataset)}: 3 answer_sha256 lines written or updated\n"
        assert _replies(dataset).read_bytes() == original
        assert main([str(dataset)]) == 0  # idempotent
        assert capsys.readouterr().out == f"{_replies(dataset)}: 0 answer_sha256 lines written or updated\n"

    def test_updates_a_stale_hash_in_place(self, dataset: Path) -> None:
        answers = dataset / "recorded_answers.yaml"
        answers.write_text(
            answers.read_text(encoding="utf-8").replace("be there early", "be there on time"),
            encoding="utf-8",
        )
        before = _replies(dataset).read_text(encoding="utf-8").splitlines()
        assert main([str(dataset)]) == 0
        after = _replies(dataset).read_text(encoding="utf-8").splitlines()
        changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
        assert changed == [(changed[0][0], f"  answer_sha256: {_hash(dataset, 'tiny-hr-wv-01', 'C0')}")]
        assert main(["--check", str(dataset)]) == 0

    def test_quoted_keys_comments_and_crlf(self, dataset: Path) -> None:
        """A quoted key with a trailing comment, a note field and CRLF line endings all survive."""
        text = (
            "# header comment\r\n"
            '- key: "round3/tiny-hr-wv-01/C0"  # the C0 row\r\n'
            "  note: >-\r\n    hand-written\r\n"
            "  replies:\r\n    - |\r\n      {}\r\n"
        )
        _replies(dataset).write_bytes(text.encode("utf-8"))
        assert main([str(dataset)]) == 0
        expected = text.replace(
            "# the C0 row\r\n",
            f"# the C0 row\r\n  answer_sha256: {_hash(dataset, 'tiny-hr-wv-01', 'C0')}\r\n",
        )
        assert _replies(dataset).read_bytes() == expected.encode("utf-8")

    def test_entry_not_introduced_by_its_key_is_refused(
        self, dataset: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """An entry written as `- replies: …` then `key:` cannot be edited line-wise: exit 2, file untouched."""
        text = "- replies: [a]\n  key: round3/tiny-hr-wv-01/C0\n"
        _replies(dataset).write_text(text, encoding="utf-8")
        assert main([str(dataset)]) == 2
        assert capsys.readouterr().err == (
            f"{_replies(dataset)}: write mode needs every entry to begin with a '- key: ...' line "
            "(0 such lines for 1 entries); add answer_sha256 to the others by hand\n"
        )
        assert _replies(dataset).read_text(encoding="utf-8") == text

    def test_reply_without_a_recorded_answer_is_reported(
        self, dataset: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The other entries are still hashed; the orphan is named and the exit status is 1."""
        _strip(_replies(dataset))
        answers = dataset / "recorded_answers.yaml"
        lines = answers.read_text(encoding="utf-8").splitlines(keepends=True)
        answers.write_text(
            "".join(line for line in lines if "tiny-hr-wv-01, condition: C1," not in line), encoding="utf-8"
        )
        assert main([str(dataset)]) == 1
        out = capsys.readouterr().out.splitlines()
        assert out[0] == f"{_replies(dataset)}: 2 answer_sha256 lines written or updated"
        assert out[1].endswith(
            "round3/tiny-hr-wv-01/C1: no recorded answer for 'tiny-hr-wv-01' under C1 in " + str(answers)
        )
        fixtures = load_replay_fixtures(_replies(dataset))
        assert [fixtures[k].answer_sha256 is not None for k in KEYS] == [True, False, True]
