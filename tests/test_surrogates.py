"""An answer holding a lone surrogate (half an emoji) never breaks promptfoo's write of our result.

promptfoo's Python wrapper writes what an assertion returns with ``json.dump(..., ensure_ascii=False)``
into a UTF-8 file; a lone surrogate in a reason or in metadata raised ``UnicodeEncodeError`` there, so
the row showed a stack trace and the composite saw no assertion. Each entry file is called here exactly
as the wrapper calls it and its result written exactly as the wrapper writes it; one end-to-end run
through the pinned promptfoo closes the loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounding_eval.cli import main
from grounding_eval.encodable import utf8_encodable
from grounding_eval.judge.audit import read_audit
from grounding_eval.judge.calls import answer_sha256
from grounding_eval.promptfoo.verifier_assertion import verifier_assertion
from grounding_eval.verifier.quotes import check_quotes
from tests.analysis.rows import row as result_row
from tests.entry_points import REPO, load_entry_point
from tests.scores import row_scores

TINY = REPO / "tests" / "fixtures" / "data" / "tiny"
HALF_EMOJI = "\ud83d"
ANSWER = (
    f"Call Legal Aid Chicago at (312) 341-1070 {HALF_EMOJI} or see https://www.legalaidchicago.org/{HALF_EMOJI}x. "
    f'The handbook says "every tenant receives a written summons that names the date {HALF_EMOJI}".'
)


def _write_like_promptfoo(result: Any, tmp_path: Path) -> dict[str, Any]:
    """What promptfoo's wrapper.py does with our return value, then what Node reads back."""
    path = tmp_path / "output.json"
    with open(path, "w", encoding="utf-8") as fp:
        json.dump({"type": "final_result", "data": result}, fp, ensure_ascii=False)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["data"]
    return data


class TestUtf8Encodable:
    def test_clean_results_are_returned_as_they_are(self) -> None:
        result = {"pass": True, "score": 1.0, "reason": "ok ✓ 😀", "namedScores": {"a": 1}}
        assert utf8_encodable(result) is result

    def test_lone_surrogates_in_strings_and_keys_become_replacement_characters(self) -> None:
        result = {"reason": f"x{HALF_EMOJI}y", "metadata": {f"k{HALF_EMOJI}": [f"{HALF_EMOJI}", 1, None]}}
        assert utf8_encodable(result) == {"reason": "x\ufffdy", "metadata": {"k\ufffd": ["\ufffd", 1, None]}}

    @given(
        st.recursive(
            st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
        )
    )
    def test_always_writable(self, value: Any) -> None:
        json.dumps(utf8_encodable(value), ensure_ascii=False).encode("utf-8")


class TestEntryFiles:
    """Each entry file returns a result promptfoo can write, and the checks still saw the real text."""

    def test_verifier(self, tmp_path: Path) -> None:
        source = (TINY / "articles" / "tiny-notice.txt").read_text(encoding="utf-8")
        context = {
            "vars": {"jurisdiction": "IL", "jkb_full_content": source},
            "prompt": f"Authoritative source articles:\n{source}\n",
            "config": {"liveness": "offline"},
            "test": {},
        }
        raw = verifier_assertion(ANSWER, context, pack_root=REPO)
        with pytest.raises(UnicodeEncodeError):  # what made promptfoo's wrapper fail
            _write_like_promptfoo(raw, tmp_path)
        written = _write_like_promptfoo(load_entry_point("verifier")(ANSWER, context), tmp_path)
        assert written["metadata"]["outcome"] != "unscored", written["reason"]
        assert "\ufffd" in written["reason"]
        assert row_scores(written)["phone_org_score"] == 1.0
        # The checks read the answer as written (the quote still holds the half emoji, which quote
        # normalization folds away like any invisible character); only the report was made writable.
        (quote,) = check_quotes(ANSWER, [source])
        assert HALF_EMOJI in quote.span.text and quote.status.value == "EXACT"

    def test_judge(self, tmp_path: Path) -> None:
        recorded = (TINY / "judge_replies" / "round3.yaml").read_text(encoding="utf-8")
        key_line, hash_line = "- key: round3/tiny-hr-wv-01/C0\n", "  answer_sha256: "
        start = recorded.index(key_line)
        entry = recorded[start:].split("\n- key:")[0]
        old_hash = entry.split(hash_line, 1)[1].split("\n", 1)[0]
        fixture = tmp_path / "round3.yaml"
        fixture.write_text(entry.replace(old_hash, answer_sha256(ANSWER)) + "\n", encoding="utf-8")
        test = json.loads((TINY / "high_risk.jsonl").read_text(encoding="utf-8").splitlines()[0])
        context = {
            "vars": {"jurisdiction": "WV", "question": test["question"], "query_id": test["id"]},
            "prompt": "C0 prompt",
            "test": {"metadata": {**test, "rubric": "round3"}, "description": "surrogate"},
            "config": {
                "provider": f"replay:{fixture}",
                "review_queue": str(tmp_path / "q.jsonl"),
                "audit_dir": str(tmp_path / "audit"),
            },
            "metadata": {"recorded_fixture": "surrogate test"},
        }
        result = load_entry_point("judge")(ANSWER, context)
        written = _write_like_promptfoo(result, tmp_path)
        assert written["reason"].startswith("PASS") or written["reason"].startswith("FAIL"), written["reason"]
        meta = written["metadata"]["judge"]
        audit = read_audit(tmp_path / "audit", meta["audit_id"])
        assert "\ufffd" in audit["rendered_prompt"]["user"]

    def test_composite(self, tmp_path: Path) -> None:
        round3 = load_entry_point("composite", "round3")
        result = round3({f"round3.x{HALF_EMOJI}": 1.0}, {"componentResults": []})
        written = _write_like_promptfoo(result, tmp_path)
        assert written["pass"] is False and isinstance(written["reason"], str)


class TestResultsCommands:
    """A results file holding lone surrogates (as promptfoo writes them: ``"\\ud83d"`` escapes) is read by
    every results command; the half emoji shows as U+FFFD. Each crashed with ``UnicodeEncodeError`` (and
    ``--html`` left a 0-byte file, destroying an existing report)."""

    @pytest.fixture
    def results(self, tmp_path: Path) -> Path:
        rows = [
            result_row(f"q{HALF_EMOJI}{i}", condition, composite=0.4 + 0.1 * i, provider=f"model{HALF_EMOJI}",
                       verdicts={"engages_with_variables": "Yes"}, success=bool(i % 2))
            for i in range(3) for condition in ("C0", "C1")
        ]  # fmt: skip
        for row in rows:
            row["response"]["output"] = ANSWER
            row["vars"]["question"] = f"Can my landlord {HALF_EMOJI} lock me out?"
        path = tmp_path / "results.json"
        path.write_text(json.dumps({"evalId": "e", "results": {"results": rows}}), encoding="utf-8")
        assert "\\ud83d" in path.read_text(encoding="utf-8")  # the escape, as promptfoo writes it
        return path

    @pytest.mark.parametrize(
        "flags", [[], ["--effects"], ["--rates"], ["--criteria"]], ids=lambda f: " ".join(f) or "table"
    )
    def test_report(self, results: Path, flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["report", str(results), *flags]) == 0
        out = capsys.readouterr().out
        assert "model\ufffd" in out and HALF_EMOJI not in out

    def test_html_report(self, results: Path, tmp_path: Path) -> None:
        html = tmp_path / "report.html"
        html.write_text("an earlier report", encoding="utf-8")
        assert main(["report", str(results), "--html", str(html)]) == 0
        page = html.read_text(encoding="utf-8")
        assert "model\ufffd" in page and page.startswith("<!doctype html>")

    def test_rescore(self, results: Path, tmp_path: Path) -> None:
        new = tmp_path / "new.json"
        assert main(["rescore", str(results), "-o", str(new), "-j", "1"]) == 0
        assert json.loads(new.read_text(encoding="utf-8"))["results"]["results"][0]["vars"]["question"] == (
            "Can my landlord \ufffd lock me out?"
        )


@pytest.mark.e2e
def test_promptfoo_writes_every_row(tmp_path: Path) -> None:
    """The pinned promptfoo, an ``echo`` answer holding a lone surrogate, the verifier: no stack trace."""
    tests = [{"vars": {"answer": ANSWER, "jurisdiction": "IL"}, "description": f"row {i}"} for i in range(3)]
    config = {
        "description": "lone surrogates",
        "prompts": ["{{answer}}"],
        "providers": [{"id": "echo"}],
        "defaultTest": {
            "assert": [
                {
                    "type": "python",
                    "value": f"file://{REPO / 'assertions' / 'verifier.py'}:get_assert",
                    "config": {"liveness": "offline"},
                }
            ]
        },
        "tests": tests,
    }
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML; "\ud83d" stays an escape
    out = tmp_path / "out.json"
    result = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(path), "-o", str(out), "--no-progress-bar", "--no-table",
         "--no-cache"],
        cwd=REPO, env={**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode in (0, 100), result.stdout[-3000:] + result.stderr[-3000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 3
    for row in rows:
        assert HALF_EMOJI in row["response"]["output"]  # promptfoo carried the lone surrogate to us
        reason = row["gradingResult"]["reason"]
        assert "UnicodeEncodeError" not in reason and "Traceback" not in reason, reason[:500]
        assert row_scores(row)["phone_org_score"] == 1.0, reason[:500]
    # promptfoo's own file, read by every results command: the half emoji is U+FFFD, nothing fails.
    html = tmp_path / "report.html"
    for argv in (["report", str(out)], ["report", str(out), "--html", str(html)],
                 ["rescore", str(out), "-o", str(tmp_path / "rescored.json"), "-j", "1"]):  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "grounding_eval", *argv], cwd=REPO, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 0 and not done.stderr, (argv[0], done.stderr[-2000:])
    assert "\ufffd" in html.read_text(encoding="utf-8")


@pytest.mark.e2e
def test_a_live_judge_grades_an_answer_holding_a_lone_surrogate(tmp_path: Path) -> None:
    """Issue 39, finding 5: the rubric judge through promptfoo's own provider (a stand-in on 127.0.0.1)
    on an answer holding half an emoji. It is judged — the judge is sent U+FFFD, the row says so — and a
    second run reads the reply from the pack's cache; it was an ERROR row (``UnicodeEncodeError`` in the
    reply cache's key)."""
    import yaml

    from tests.model_standin import ModelStandin
    from tests.promptfoo_runs import offline_env

    recorded = yaml.safe_load(
        (REPO / "datasets" / "sample" / "judge_replies" / "round3.yaml").read_text("utf-8")
    )
    reply = str(recorded[0]["replies"][0])  # a well-formed round3 judgment, served to any prompt
    item = json.loads((TINY / "high_risk.jsonl").read_text(encoding="utf-8").splitlines()[0])
    judge = {
        "type": "javascript",
        "value": f"file://{REPO / 'assertions' / 'grounding.cjs'}:judge",
        "config": {"rubric": "round3", "provider": "ollama:chat:standin-judge", "cache_dir": str(tmp_path / "cache"),
                   "audit_dir": str(tmp_path / "audit"), "review_queue": str(tmp_path / "review.jsonl")},
    }  # fmt: skip
    config = {
        "description": "a lone surrogate under a live judge",
        "prompts": ["{{answer}}"],
        "providers": [{"id": "echo"}],
        "defaultTest": {"assert": [judge]},
        "tests": [{"vars": {"answer": ANSWER, "jurisdiction": item["jurisdiction"], "question": item["question"],
                            "query_id": item["id"]}, "metadata": {**item, "rubric": "round3"}}],
    }  # fmt: skip
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML; "\ud83d" stays an escape

    def judged(standin: ModelStandin, run: str) -> dict[str, Any]:
        out = tmp_path / f"{run}.json"
        env = offline_env(tmp_path / run, {"OLLAMA_BASE_URL": standin.url})
        done = subprocess.run(
            ["npx", "promptfoo", "eval", "-c", str(path), "-o", str(out), "--no-progress-bar", "--no-table",
             "--no-cache"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]
        (row,) = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
        assert HALF_EMOJI in row["response"]["output"]  # the answer reached the judge as written
        component = row["gradingResult"]["componentResults"][0]
        assert "judge" in component["metadata"], component["reason"][:500]  # (ERROR rows have no record)
        meta = component["metadata"]["judge"]
        assert meta["status"] == "scored", component["reason"][:500]
        assert meta["lone_surrogates_sent_as_fffd"] == 3  # the answer's three half emoji, said in the row
        return meta

    with ModelStandin(lambda prompt: reply).running() as standin:
        first = judged(standin, "first")
        assert len(standin.served) == 1 and not first["cached"]
        sent = standin.served[0].prompt
        assert sent.count("\ufffd") == 3 and not any("\ud800" <= c <= "\udfff" for c in sent)
        second = judged(standin, "second")
        assert len(standin.served) == 1 and second["cached"]  # from the pack's reply cache
