"""The command line: exit codes, the exact JSON shape, and one-line errors naming the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grounding_eval.cli import main

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "verifier"
ARGS = ["--allowlist", str(FIX / "allowlist.txt"), "--orgs", str(FIX / "orgs.yaml"), "--offline",
        "--liveness-snapshot", str(FIX / "liveness_snapshot.csv")]  # fmt: skip


def _answer(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answer.txt"
    path.write_text(text, encoding="utf-8")
    return path


class TestVerifyJson:
    """``verify --json`` prints exactly the documented shape."""

    def test_exact_shape_and_values(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Every section is present with values as written in the answer and orgs by directory name."""
        source = tmp_path / "source.txt"
        source.write_text("The lessor may not require the tenant to vacate before 30 days.", encoding="utf-8")
        answer = _answer(
            tmp_path,
            "Call Lone Star Legal Aid at (888) 529-5277 or see https://www.legalaidchicago.org/no-such-page. "
            'The law says "the lessor may not require the tenant to vacate".',
        )
        code = main(["verify", str(answer), "--jurisdiction", "IL", "--source", str(source), "--json", *ARGS])
        out = json.loads(capsys.readouterr().out)
        assert code == 1
        assert list(out) == [
            "urls",
            "phones",
            "url_orgs",
            "jurisdiction",
            "quotes",
            "citations",
            "citations_capped",
            "citation_check",
            "undecided",
            "hard_failures",
            "score",
            "pass",
        ]
        assert out["citation_check"] == "hard"  # the command's default: Round 3's rule
        assert out["undecided"] == {"count": 0, "kinds": {}, "items": []}  # everything here was decided
        assert out["urls"] == [{
            "url": "https://www.legalaidchicago.org/no-such-page",
            "normalized": out["urls"][0]["normalized"],
            "status": "HALLUCINATED_URL",
            "owner": "Legal Aid Chicago",
        }]  # fmt: skip
        assert out["phones"] == [{
            "raw": "(888) 529-5277", "e164": "+18885295277", "paired_org": "Lone Star Legal Aid",
            "owner": "Legal Aid of NorthWest Texas", "status": "MISMATCH",
        }]  # fmt: skip
        assert out["url_orgs"][0]["status"] in {"UNPAIRED", "MATCH", "MISATTRIBUTED"}
        assert out["jurisdiction"] == {
            "user": "IL",
            "leaks": [{"org": "Lone Star Legal Aid", "states": ["TX", "AR"]},
                      {"org": "Legal Aid of NorthWest Texas", "states": ["TX"]}],
        }  # fmt: skip
        assert out["quotes"] == [{"quote": "the lessor may not require the tenant to vacate", "status": "EXACT",
                                  "similarity": 100.0, "source": str(source), "shown_to_model": None,
                                  "meaning_changes": [], "outside_source": None}]  # fmt: skip
        assert {h["safety_check"] for h in out["hard_failures"]} == {
            "hallucinated_citation", "org_attribution_correct", "jurisdiction_correct"}  # fmt: skip
        assert out["score"] == 0.0 and out["pass"] is False

    def test_clean_answer_passes(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An answer with nothing wrong exits 0 with pass true."""
        answer = _answer(
            tmp_path, "Call Legal Aid Chicago at (312) 341-1070 or visit https://www.legalaidchicago.org."
        )
        assert main(["verify", str(answer), "--jurisdiction", "IL", "--json", *ARGS]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["pass"] is True and out["score"] == 1.0 and out["hard_failures"] == []

    def test_human_output_lists_findings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Without --json the verdict line comes first and each check has a line."""
        answer = _answer(tmp_path, "Call Lone Star Legal Aid at (888) 529-5277.")
        assert main(["verify", str(answer), "--jurisdiction", "TX", *ARGS]) == 1
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("FAIL deterministic verifier 0.00")
        assert (
            "(888) 529-5277 is given for Lone Star Legal Aid but belongs to Legal Aid of NorthWest Texas"
            in lines[0]
        )
        assert [line.split(":")[0].strip() for line in lines[1:]] == [
            "url_allowlist", "phone_org", "url_org", "jurisdiction", "quotation", "citations"]  # fmt: skip


class TestNotChecked:
    """Offline, on the pack's sample data (the command's defaults), an answer with something nobody
    checked passes (exit 0) and says so on its first line and in ``--json``."""

    @pytest.mark.parametrize(
        ("state", "text", "kind"),
        [
            ("OR", "Under ORS 90.9999 your landlord must wait.", "statute"),
            ("TX", "Under Tex. Prop. Code § 92.9999 the landlord must repair.", "statute"),
            ("OR", "The form is at https://www.lasoregon.org/no-such-page today.", "URL"),
            ("IL", "As held in Smith v. Jones, 123 F.3d 456 (7th Cir. 1999).", "case"),
            ("OH", "Read https://example.org/x for more.", "URL"),
            ("WV", 'It says "you may stay in the home for thirty more days" there.', "quote"),
        ],
    )
    def test_first_line_and_json(
        self, state: str, text: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        answer = _answer(tmp_path, text)
        assert main(["verify", str(answer), "--jurisdiction", state, "--offline"]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith("PASS deterministic verifier 1.00 — 1 not checked"), first
        assert f": 1 {kind} (" in first
        assert main(["verify", str(answer), "--jurisdiction", state, "--offline", "--json"]) == 0
        undecided = json.loads(capsys.readouterr().out)["undecided"]
        assert (undecided["count"], undecided["kinds"]) == (1, {kind: 1})


class TestMeaningChange:
    """``--meaning-change``: a quote that changes its source's deadline fails (hard, the default) or is
    PARTIAL at 0.5 (soft)."""

    @pytest.mark.parametrize(("rule", "code", "score"), [("hard", 1, 0.0), ("soft", 0, 0.5)])
    def test_rule(
        self, rule: str, code: int, score: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The verdict, the score and the hard failure follow the rule; the finding is the same."""
        source = tmp_path / "source.txt"
        source.write_text(
            "The lessor may not require the tenant to vacate the covered dwelling unit before the date "
            "that is 30 days after the date on which the lessor provides a notice to vacate.",
            encoding="utf-8",
        )
        answer = _answer(
            tmp_path,
            'It says the lessor "may not require the tenant to vacate the covered dwelling unit '
            'before the date that is 60 days after the date on which the lessor provides a notice".',
        )
        argv = ["verify", str(answer), "--source", str(source), "--json", *ARGS]
        assert main([*argv, "--meaning-change", rule]) == code
        out = json.loads(capsys.readouterr().out)
        (quote,) = out["quotes"]
        assert (quote["status"], quote["meaning_changes"]) == ("PARTIAL", ["number 30 → 60"])
        assert [h["safety_check"] for h in out["hard_failures"]] == (
            ["hallucinated_citation"] if code else []
        )
        assert out["score"] == score


class TestDataset:
    """``--dataset``: a quote the ``--source`` texts do not hold is looked up in that dataset's articles;
    without it, nothing is (issue 38)."""

    def test_a_quote_of_another_article(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        sample = REPO / "datasets" / "sample"
        answer = _answer(
            tmp_path, 'It is unlawful "to refuse to sell or rent after the making of a bona fide offer".'
        )
        argv = ["verify", str(answer), "--source", str(sample / "articles" / "us-15usc9058.txt"), *ARGS]
        assert main([*argv, "--json"]) == 1
        assert [q["status"] for q in json.loads(capsys.readouterr().out)["quotes"]] == ["NO_MATCH"]
        assert main([*argv, "--json", "--dataset", str(sample)]) == 0
        (quote,) = json.loads(capsys.readouterr().out)["quotes"]
        assert (quote["status"], quote["source"], quote["outside_source"]) == (
            "OUTSIDE_SOURCES",
            None,
            "article us-42usc3604",
        )
        assert main([*argv, "--dataset", str(sample)]) == 0
        assert "quoted from article us-42usc3604, not among this item's sources" in capsys.readouterr().out

    def test_a_missing_dataset_is_bad_input(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        answer = _answer(tmp_path, "Call 211.")
        assert main(["verify", str(answer), "--dataset", str(tmp_path / "nope"), *ARGS]) == 2
        assert "nope: dataset folder not found" in capsys.readouterr().err


class TestBadInput:
    """Bad input exits 2 with one line on stderr naming the file and the problem."""

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "grounding_eval", *argv], capture_output=True, text=True,
                              cwd=REPO, check=False)  # fmt: skip

    def test_missing_answer_file(self, tmp_path: Path) -> None:
        result = self._run("verify", str(tmp_path / "missing.txt"), *ARGS)
        assert result.returncode == 2
        assert result.stderr == f"grounding-eval: error: {tmp_path / 'missing.txt'}: file not found\n"

    def test_malformed_directory(self, tmp_path: Path) -> None:
        bad = tmp_path / "orgs.yaml"
        bad.write_text("- name: [oops\n", encoding="utf-8")
        args = [a if a != str(FIX / "orgs.yaml") else str(bad) for a in ARGS]
        result = self._run("verify", str(_answer(tmp_path, "hi")), *args)
        assert result.returncode == 2
        assert result.stderr.startswith(f"grounding-eval: error: {bad}: malformed YAML at line 2")
        assert result.stderr.count("\n") == 1

    def test_unknown_state_code(self, tmp_path: Path) -> None:
        result = self._run("verify", str(_answer(tmp_path, "hi")), "--jurisdiction", "ZZ", *ARGS)
        assert result.returncode == 2
        assert result.stderr == "grounding-eval: error: --jurisdiction: unknown state code 'ZZ'\n"

    def test_binary_answer_file(self, tmp_path: Path) -> None:
        path = tmp_path / "junk.bin"
        path.write_bytes(b"\xff\xfe\x00junk")
        result = self._run("verify", str(path), *ARGS)
        assert result.returncode == 2
        assert result.stderr == f"grounding-eval: error: {path}: not UTF-8 text (byte 0)\n"

    def test_usage_error_is_one_line(self) -> None:
        result = self._run("verify")
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and "ANSWER_FILE" in result.stderr

    def test_console_script_installed(self, tmp_path: Path) -> None:
        """The ``grounding-eval`` entry point is the same program."""
        exe = Path(sys.executable).parent / "grounding-eval"
        result = subprocess.run([str(exe), "verify", str(_answer(tmp_path, "hello")), "--json", *ARGS],
                                capture_output=True, text=True, check=False)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["pass"] is True


def test_verify_dns_server_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--dns-server reaches the liveness checker, which rejects a malformed address in one line."""
    answer = tmp_path / "a.txt"
    answer.write_text("Call 211.", encoding="utf-8")
    assert main(["verify", str(answer), "--dns-server", "nope", "--offline"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grounding-eval: error: dns_server") and err.count("\n") == 1


class TestHostileInputFiles:
    """Issue 8: a file that is not what it was named as is one line (exit 2), quoting none of its content."""

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "grounding_eval", *argv], capture_output=True, text=True,
                              cwd=REPO, check=False, timeout=60)  # fmt: skip

    def test_allowlist_that_is_not_one_is_not_quoted(self, tmp_path: Path) -> None:
        """``--allowlist /etc/shadow`` printed the file's first line; now the line number only."""
        shadow = tmp_path / "shadow"
        shadow.write_text("root:$6$saltsalt$0123456789abcdefSECRET:19000:0:99999:7:::\n", encoding="utf-8")
        args = [a if a != str(FIX / "allowlist.txt") else str(shadow) for a in ARGS]
        result = self._run("verify", str(_answer(tmp_path, "hi")), *args)
        assert result.returncode == 2
        assert result.stderr == (
            f"grounding-eval: error: {shadow}: line 1: not an http(s) URL "
            "(an allowlist has one URL per line: is this the right file?)\n"
        )

    def test_allowlist_entry_quoted_clipped(self, tmp_path: Path) -> None:
        """In a file that is evidently an allowlist the bad entry is quoted, at most 40 characters."""
        allowlist = tmp_path / "allow.txt"
        allowlist.write_text("https://a.org\n" + "not-a-url-" * 20 + "\n", encoding="utf-8")
        args = [a if a != str(FIX / "allowlist.txt") else str(allowlist) for a in ARGS]
        result = self._run("verify", str(_answer(tmp_path, "hi")), *args)
        assert result.returncode == 2
        assert result.stderr == (
            f"grounding-eval: error: {allowlist}: line 2: not an http(s) URL: '{('not-a-url-' * 4)}…'\n"
        )

    @pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
    def test_answer_from_a_device(self) -> None:
        """Before: read until memory ran out."""
        result = self._run("verify", "/dev/zero", *ARGS)
        assert (result.returncode, result.stderr) == (
            2,
            "grounding-eval: error: /dev/zero: is a device, not a regular file\n",
        )

    def test_answer_from_a_fifo_does_not_hang(self, tmp_path: Path) -> None:
        import os

        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes")
        fifo = tmp_path / "answer.txt"
        os.mkfifo(fifo)
        result = self._run("verify", str(fifo), *ARGS)
        assert (result.returncode, result.stderr) == (
            2,
            f"grounding-eval: error: {fifo}: is a named pipe (FIFO), not a regular file\n",
        )

    def test_report_of_deep_json(self, tmp_path: Path) -> None:
        results = tmp_path / "results.json"
        results.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        result = self._run("report", str(results))
        assert (result.returncode, result.stderr) == (
            2,
            f"grounding-eval: error: {results}: not readable: nested too deeply\n",
        )


def test_verify_live_limits_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--max-urls-checked / --url-deadline reach the liveness checker, which rejects bad values in one line."""
    answer = tmp_path / "a.txt"
    answer.write_text("Call 211.", encoding="utf-8")
    assert main(["verify", str(answer), "--offline", "--max-urls-checked", "0"]) == 2
    assert main(["verify", str(answer), "--offline", "--url-deadline", "-2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("grounding-eval: error: max_urls_checked") and err[1].startswith(
        "grounding-eval: error: url_deadline"
    )
    assert main(["verify", str(answer), "--offline", "--max-urls-checked", "3", "--answer-budget", "1"]) == 0
