"""Every command in README.md and docs/ runs as written (issue 42).

Each page with shell blocks has a test here (the tutorial's is ``test_tutorial.py``) that copies the
repository to a temporary folder and runs the page's blocks in order, as ``tests/docs/blocks.py`` says,
with a fresh home and user cache and none of the session's ``GROUNDING_EVAL_*`` variables. Where a page
calls a model API, the vendor's own base-URL variable points promptfoo's provider at a stand-in on
127.0.0.1 (``tests/model_standin.py``), with a placeholder key: nothing leaves the machine. A block no test
can run carries ``<!-- not run: REASON -->`` above its fence; the survey below fails on any other block
that no page test runs, and on a new not-run mark (``NOT_RUN`` lists them).
"""

from __future__ import annotations

import csv
import json
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs import blocks as docs
from tests.docs.blocks import REPO, Block
from tests.model_standin import ModelStandin, RecordedJudge

pytestmark = pytest.mark.e2e

# The pages whose blocks a test in this folder runs.
RUN_BY_TEST = {
    "docs/tutorial.md": "test_tutorial.py",
    "README.md": "test_readme_and_site_pages",
    "docs/index.md": "test_readme_and_site_pages",
    "docs/how-to/bring-your-data.md": "test_data_pages",
    "docs/explanation/methods.md": "test_data_pages",
    "docs/how-to/calibrate.md": "test_calibrate_page",
    "docs/how-to/rescore.md": "test_rescore_page",
    "docs/reference/report.md": "test_report_page",
    "docs/reference/rounds.md": "test_rounds_page",
    "docs/reference/docs-qa.md": "test_docs_qa_page",
    "docs/reference/factuality.md": "test_factuality_page",
    "docs/how-to/judge-provider.md": "test_judge_provider_page",
    "docs/how-to/run-live.md": "test_run_live_page",
    "docs/how-to/judge-reliability.md": "test_judge_reliability_page",
}
# The blocks no test runs, by page: each carries its reason in the page.
NOT_RUN = {
    "README.md": 1,  # scripts/test is the suite itself; scripts/demo runs in the tutorial's test
    "docs/explanation/performance.md": 1,  # the benchmarks: minutes each, wall-clock numbers
    "docs/how-to/run-live.md": 2,  # pytest -m live: real APIs, real money; live URL checks: the internet
    "docs/how-to/share.md": 2,  # the package registries (PyPI, npm)
}


def _pages() -> list[str]:
    return ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md"))]


def _shell_blocks() -> Iterator[Block]:
    for page in _pages():
        yield from docs.page_blocks(page)


class TestSurvey:
    def test_every_shell_block_runs_in_a_test_or_says_why_not(self) -> None:
        unrun = [b.where for b in _shell_blocks() if b.not_run is None and b.page not in RUN_BY_TEST]
        assert unrun == [], (
            "shell blocks no test runs: add the page to a test, or mark them <!-- not run: why -->"
        )
        marked: dict[str, int] = {}
        for block in _shell_blocks():
            if block.not_run is not None:
                assert len(block.not_run) >= 20, f"{block.where}: a not-run mark needs its reason"
                marked[block.page] = marked.get(block.page, 0) + 1
        assert marked == NOT_RUN
        run = sum(1 for b in _shell_blocks() if b.not_run is None)
        assert run >= 30, run

    def test_every_page_listed_has_shell_blocks(self) -> None:
        for page in RUN_BY_TEST:
            assert [b for b in docs.page_blocks(page) if b.not_run is None], page

    def test_a_script_a_not_run_block_names_exists(self) -> None:
        """What no test runs is at least there: each ``.venv/bin/python FILE`` of a not-run block names a file."""
        named = [
            (b.where, m)
            for b in _shell_blocks()
            if b.not_run is not None
            for m in re.findall(r"^\.venv/bin/python (\S+\.py)\b", b.text, re.MULTILINE)
        ]
        assert len(named) >= 9
        assert [(w, m) for w, m in named if not (REPO / m).is_file()] == []

    def test_marks_and_transcripts(self) -> None:
        page = (
            "<!-- not run: needs what no test has -->\n```bash\nrm -rf /\n```\n\n"
            "<!-- exits 1 -->\n```console\n$ false\n```\n\n"
            "```bash\nnpx promptfoo eval -c c.yaml   # exits 100: on purpose\nls\n```\n"
        )
        skipped, console, inline = docs.shell_blocks(page, "p.md")
        assert skipped.not_run == "needs what no test has" and console.not_run is None
        assert console.expected_status == 1 and console.transcript() == [("false", [])]
        assert inline.expected_status == 0
        block_status = Block("p.md", 1, "bash", "verify answer.txt\n# exits 1: a hard failure\n")
        assert block_status.expected_status == 1 and block_status.script == block_status.text
        assert (
            inline.script.splitlines()[0]
            == "npx promptfoo eval -c c.yaml && false || test $? -eq 100   # exits 100: on purpose"
        )

    def test_an_inline_exit_status_is_checked(self, tmp_path: Path) -> None:
        block = Block("p.md", 1, "bash", "bash -c 'exit 3'   # exits 3: documented\ntouch ran\n")
        docs.run_block(block, tmp_path, {"PATH": "/usr/bin:/bin"})
        assert (tmp_path / "ran").exists()
        for wrong in ("exit 0", "exit 4"):
            with pytest.raises(AssertionError, match="exit 1, documented 0"):
                docs.run_block(
                    Block("p.md", 1, "bash", f"bash -c '{wrong}'   # exits 3\n"),
                    tmp_path,
                    {"PATH": "/usr/bin:/bin"},
                )


# --- the pages -----------------------------------------------------------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    docs.require_installed()
    return docs.copy_repository(tmp_path / "repo")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = docs.reader_env(tmp_path / "home", extra)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                 "GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_HOST", "GOOGLE_API_BASE_URL", "OLLAMA_BASE_URL"):  # fmt: skip
        if name not in extra:
            env.pop(name, None)
    return env


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return rows


def _port_is_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_readme_and_site_pages(copy: Path, tmp_path: Path) -> None:
    """README.md (its verify transcript, the site's build and server) and the site's home page."""
    if not _port_is_free(8000):
        pytest.fail("127.0.0.1:8000 is taken: the pages' properdocs serve needs it")
    env = _env(tmp_path)
    ran = docs.run_page("README.md", copy, env)
    assert [b.lang for b in ran] == ["console", "bash", "bash"]
    assert "grounding-eval data validate" in (copy / "site" / "reference" / "cli" / "index.html").read_text()
    (copy / "site" / "index.html").unlink()
    assert len(docs.run_page("docs/index.md", copy, env)) == 2
    assert (copy / "site" / "index.html").is_file()


def test_data_pages(copy: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    docs.run_page("docs/how-to/bring-your-data.md", copy, env)
    urls = [line for line in (copy / "my-allowlist.txt").read_text().splitlines() if not line.startswith("#")]
    assert len(urls) == 63  # the sample's index records
    docs.run_page("docs/explanation/methods.md", copy, env)


def _grade_the_sheet(root: Path) -> None:
    """The people's part: a verdict on every line of the sheet (the first the line allows)."""
    sheet = root / "results" / "sheet.csv"
    with sheet.open(encoding="utf-8", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert lines, "the sheet has no line to grade"
    with sheet.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows(
            {**line, "human_verdict": line["allowed_verdicts"].split(" / ")[0]} for line in lines
        )


def test_calibrate_page(copy: Path, tmp_path: Path) -> None:
    ran = docs.run_page("docs/how-to/calibrate.md", copy, _env(tmp_path), reader={1: _grade_the_sheet})
    assert len(ran) == 2 and len(_rows(copy / "results" / "round3.json")) == 24
    assert (copy / "results" / "sheet.key.json").is_file()


def test_rescore_page(copy: Path, tmp_path: Path) -> None:
    docs.run_page("docs/how-to/rescore.md", copy, _env(tmp_path))
    before, after = _rows(copy / "results" / "sample.json"), _rows(copy / "results" / "rescored.json")
    assert [(r["success"], r["score"]) for r in after] == [(r["success"], r["score"]) for r in before]


def test_report_page(copy: Path, tmp_path: Path) -> None:
    docs.run_page("docs/reference/report.md", copy, _env(tmp_path))
    assert "<html" in (copy / "results" / "report.html").read_text(encoding="utf-8").lower()
    assert any((copy / "results" / "figures").iterdir())


def test_rounds_page(copy: Path, tmp_path: Path) -> None:
    docs.run_page("docs/reference/rounds.md", copy, _env(tmp_path))
    assert len(_rows(copy / "results" / "round1b.json")) > 0


def test_docs_qa_page(copy: Path, tmp_path: Path) -> None:
    docs.run_page("docs/reference/docs-qa.md", copy, _env(tmp_path))
    assert len(_rows(copy / "results" / "docs_qa.json")) > 0


def _recorded_answers(task: str) -> dict[str, str]:
    answers = yaml.safe_load(
        (REPO / "datasets" / "sample" / "recorded_answers.yaml").read_text(encoding="utf-8")
    )
    return {f"{task}/{a['query_id']}/{a['condition']}": str(a["answer"]) for a in answers}


def test_judge_provider_page(copy: Path, tmp_path: Path) -> None:
    """The page's OpenAI judge, pointed at a stand-in that serves the recorded Round 3 replies through
    promptfoo's ``OPENAI_BASE_URL`` (the variable the page names), with a placeholder key as it says."""
    judge = RecordedJudge.from_files(
        str(REPO / "datasets" / "sample" / "judge_replies" / "round3.yaml"), _recorded_answers("round3")
    )
    standin = ModelStandin(judge)
    with standin.running():
        env = _env(tmp_path, OPENAI_API_KEY="local", OPENAI_BASE_URL=f"{standin.url}/v1")
        docs.run_page("docs/how-to/judge-provider.md", copy, env)
    assert judge.unmatched == 0 and len(standin.served) == 24
    assert {s.model for s in standin.served} == {"gpt-4o-mini"}


class _LiveStandin:
    """The three vendors of ``providers/live.yaml`` and the judges, on one stand-in. A generation prompt
    (the item's question under a condition's prompt) gets the recorded answer for that item and condition
    with a mark appended, so the answer is new to the recorded judge, as a live model's is; a judge prompt
    gets the reply recorded for the answer it holds (rubric or factual-accuracy, by the prompt)."""

    MARK = " (Answered by the stand-in.)"

    def __init__(self) -> None:
        sample = REPO / "datasets" / "sample"
        items = [
            json.loads(line)
            for line in (sample / "high_risk.jsonl").read_text(encoding="utf-8").splitlines()
            if line
        ]
        self.questions = {str(i["id"]): str(i["question"]) for i in items}
        self.answers = yaml.safe_load((sample / "recorded_answers.yaml").read_text(encoding="utf-8"))
        self.round3 = RecordedJudge.from_files(
            str(sample / "judge_replies" / "round3.yaml"), _recorded_answers("round3")
        )
        self.factuality = RecordedJudge.from_files(
            str(sample / "factuality" / "judge_replies.yaml"), _recorded_answers("factual_accuracy")
        )
        self.generated = 0

    def __call__(self, prompt: str) -> str:
        if "meticulous" in prompt:  # the factual-accuracy judge's prompt (seed 000)
            return self.factuality(prompt)
        if self.MARK.strip() in prompt:  # a rubric judge's prompt holds the answer it grades
            return self.round3(prompt)
        asked = [qid for qid, question in self.questions.items() if question in prompt]
        assert len(asked) == 1, f"the stand-in cannot tell which item this prompt asks: {prompt[:300]}"
        condition = (
            "C1.5" if "Authoritative source articles" in prompt
            else "C1" if "Relevant authoritative resources" in prompt else "C0"
        )  # fmt: skip
        self.generated += 1
        (answer,) = [
            a["answer"] for a in self.answers if (a["query_id"], a["condition"]) == (asked[0], condition)
        ]
        return str(answer) + self.MARK


def _three_vendors_env(tmp_path: Path, standin: ModelStandin) -> dict[str, str]:
    """Each vendor's base-URL variable names the stand-in, with placeholder keys."""
    return _env(
        tmp_path, OPENAI_API_KEY="placeholder", OPENAI_BASE_URL=f"{standin.url}/v1",
        ANTHROPIC_API_KEY="placeholder", ANTHROPIC_BASE_URL=standin.url,
        GOOGLE_API_KEY="placeholder", GOOGLE_API_BASE_URL=standin.url,
    )  # fmt: skip


def test_run_live_page(copy: Path, tmp_path: Path) -> None:
    """The live page's runs with the three vendors and the judges on a stand-in: each vendor's base-URL
    variable (``ANTHROPIC_BASE_URL``, ``GOOGLE_API_BASE_URL``, ``OPENAI_BASE_URL``) names it, with
    placeholder keys. The recorded judge refuses the new answers; a live judge grades them."""
    respond = _LiveStandin()
    standin = ModelStandin(respond)
    with standin.running():
        env = _three_vendors_env(tmp_path, standin)
        ran = docs.run_page("docs/how-to/run-live.md", copy, env)
    assert len(ran) == 4
    models = {s.model for s in standin.served}
    assert {"claude-sonnet-4-5-20250929", "gemini-2.5-pro", "gpt-4o-mini", "gpt-4.1"} <= models, models
    assert (
        respond.round3.unmatched == 0
    )  # (the factual-accuracy judge is asked for rows it has no recording of)
    # The first run: live answers, the recorded judge: every row says the judge did not run.
    first = _rows(copy / "results" / "round3-live.json")
    assert len(first) == 72
    assert all("ERROR (judge not run): recorded judge reply" in str(r["gradingResult"]) for r in first)
    # The seed's setup: Sonnet 4.5 graded every row, its own included.
    seed = _rows(copy / "results" / "round3-seed-judge.json")
    assert len(seed) == 72 and all("composite" in r["namedScores"] for r in seed)
    judged = {
        c["metadata"]["judge"]["provider"]
        for r in seed
        for c in r["gradingResult"]["componentResults"]
        if "judge" in (c.get("metadata") or {})
    }
    assert judged == {"anthropic:messages:claude-sonnet-4-5-20250929"}


def test_judge_reliability_page(copy: Path, tmp_path: Path) -> None:
    """The offline retest and panel from the recorded fixtures, then the live part: generation and the
    three judges (the row's, and the two of the panel) on the stand-in, each vendor's base URL naming it."""
    respond = _LiveStandin()
    standin = ModelStandin(respond)
    with standin.running():
        env = _three_vendors_env(tmp_path, standin)
        ran = docs.run_page("docs/how-to/judge-reliability.md", copy, env)
    assert len(ran) >= 4
    judges = {s.model for s in standin.served} - {
        "claude-sonnet-4-5-20250929",
        "gemini-2.5-pro",
        "gpt-4o-mini",
    }
    assert judges == {"gpt-4.1", "claude-opus-4-1-20250805", "gemini-2.5-flash"}, judges
    rows = _rows(copy / "results" / "reliability.json")
    assert len(rows) == 72
    meta = [r["gradingResult"].get("metadata") or {} for r in rows]
    assert all(len(m.get("judge_panel") or ()) == 2 for m in meta)
    retested = sum(1 for m in meta if m.get("judge_retest") is not None)
    assert 0 < retested < 72  # a fifth of the rows, drawn


def test_factuality_page(copy: Path, tmp_path: Path) -> None:
    """Offline, then the page's live Anthropic judge on a stand-in serving the recorded replies
    (``ANTHROPIC_BASE_URL``), then the standalone command."""
    judge = RecordedJudge.from_files(
        str(REPO / "datasets" / "sample" / "factuality" / "judge_replies.yaml"),
        _recorded_answers("factual_accuracy"),
    )
    standin = ModelStandin(judge)
    with standin.running():
        env = _env(tmp_path, ANTHROPIC_API_KEY="placeholder", ANTHROPIC_BASE_URL=standin.url)
        ran = docs.run_page("docs/reference/factuality.md", copy, env)
    # The live judge is asked for every row (the recorded cheap stage is off); it has the recorded replies
    # of the rows the capable stage decided offline.
    assert len(ran) == 3 and len(standin.served) >= 5
    assert {s.model for s in standin.served} == {"claude-sonnet-4-5-20250929"}


@pytest.mark.live
def test_judge_provider_page_against_the_real_api(copy: Path, tmp_path: Path) -> None:
    """``pytest -m live`` (docs/how-to/run-live.md): the judge-provider page's command with OpenAI's real
    gpt-4o-mini grading the 24 sample rows (about 24 calls, cents); needs ``OPENAI_API_KEY``."""
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        pytest.fail("OPENAI_API_KEY is not set: the live tests need the keys (docs/how-to/run-live.md)")
    docs.run_page("docs/how-to/judge-provider.md", copy, _env(tmp_path, OPENAI_API_KEY=key))
