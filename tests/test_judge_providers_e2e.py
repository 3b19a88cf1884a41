"""The judges speak through promptfoo's own providers: real promptfoo runs against stand-in model APIs.

Each judge (rubric, factual accuracy, docs-QA) is driven through a provider id the pack's direct client
does not know — promptfoo's ``ollama:chat:`` and ``http`` providers — against a stand-in on 127.0.0.1
(:mod:`tests.model_standin`) that serves the sample's recorded judge replies to the prompt holding the
answer each was recorded for. So the verdicts must equal the recorded (``replay:``) run's, row for row,
and the judges' tokens must be what the stand-in served, in promptfoo's ``stats.tokenUsage.assertions``.
One more run grades with ``openai:chat:`` given ``apiBaseUrl`` in the grader's config while generation,
also ``openai:chat:``, uses another stand-in: each server sees only its own calls. And a configuration
error stops the eval in ``beforeAll``: no generation call is made.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.model_standin import ModelStandin, RecordedJudge
from tests.promptfoo_runs import REPO, EvalRun, offline_env, shared_group

SAMPLE = REPO / "datasets" / "sample"
DOCS_QA = REPO / "datasets" / "docs_qa"
FILE_REF = re.compile(r"^file://(?!/)(.*)$")


def _answers(path: Path, key: Callable[[dict[str, Any]], str]) -> dict[str, str]:
    return {key(a): str(a["answer"]) for a in yaml.safe_load(path.read_text(encoding="utf-8"))}


ROUND3_ANSWERS = _answers(
    SAMPLE / "recorded_answers.yaml", lambda a: f"round3/{a['query_id']}/{a['condition']}"
)


def _absolute(value: Any, base: Path) -> Any:
    """``value`` with every relative ``file://`` reference made absolute against ``base``."""
    if isinstance(value, str):
        match = FILE_REF.match(value)
        return f"file://{(base / match.group(1)).as_posix()}" if match else value
    if isinstance(value, list):
        return [_absolute(v, base) for v in value]
    if isinstance(value, dict):
        return {k: _absolute(v, base) for k, v in value.items()}
    return value


def _config(src: str, dest: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """A copy of the shipped config ``src`` in ``dest``, its file references absolute, the judges'
    reply cache under ``dest``, then ``edit``ed."""
    path = REPO / src
    config = _absolute(yaml.safe_load(path.read_text(encoding="utf-8")), path.parent)
    for assertion in config["defaultTest"]["assert"]:
        if assertion["value"].endswith(
            ("grounding.cjs:judge", "grounding.cjs:factuality", "grounding.cjs:docs_qa")
        ):
            assertion.setdefault("config", {})["cache_dir"] = str(dest / "judge-cache")
            assertion["config"]["audit_dir"] = str(dest / "audit")
            assertion["config"]["review_queue"] = str(dest / "review.jsonl")
    if edit is not None:
        edit(config)
    out = dest / "promptfooconfig.yaml"
    out.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return out


def _eval(config: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(config), "-o", str(out), "--no-progress-bar", "--no-table",
         "--no-cache", *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=500, check=False,
    )  # fmt: skip


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = offline_env(tmp, extra)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_BASE_URL", "ANTHROPIC_API_KEY"):
        if name not in extra:
            env.pop(name, None)
    return env


def _rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    data = json.loads(out.read_text(encoding="utf-8"))
    rows = {}
    for r in data["results"]["results"]:
        vars_ = r["testCase"].get("vars") or {}
        label = str(r["prompt"].get("label") or "").split(":")[0]  # the configured label, before its text
        rows[(str(vars_.get("query_id") or vars_.get("question_id") or r["testIdx"]), label)] = r
    return rows


def _stats(out: Path) -> dict[str, Any]:
    stats: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))["results"]["stats"]
    return stats


def _verdicts(rows: dict[tuple[str, str], dict[str, Any]]) -> dict[tuple[str, str], Any]:
    return {k: (r["success"], r["score"], r["namedScores"]) for k, r in rows.items()}


def _judge_results(row: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for c in row["gradingResult"].get("componentResults") or []:
        if "judge_usage" in (c.get("metadata") or {}):
            yield c


def _replayed(shared_eval: Callable[[str], EvalRun], config: str) -> dict[tuple[str, str], Any]:
    """The shipped offline config's verdicts with its recorded judges, to match: the session's one run of it
    (tests/promptfoo_runs.py), which every test reading it shares."""
    run = shared_eval(config)
    assert run.returncode in (0, 100), run.tail()
    return _verdicts(_rows(run.out))


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_the_rubric_judge_through_ollama_gives_the_recorded_verdicts_and_counts_its_tokens(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    judge = RecordedJudge.from_files(str(SAMPLE / "judge_replies" / "round3.yaml"), ROUND3_ANSWERS)
    standin = ModelStandin(judge)
    config = _config("promptfooconfig.yaml", tmp_path)
    with standin.running():
        env = _env(
            tmp_path, OLLAMA_BASE_URL=standin.url, GROUNDING_EVAL_JUDGE_PROVIDER="ollama:chat:standin-judge"
        )
        first = _eval(config, tmp_path / "first.json", env)
        served_first = standin.tokens_served()
        second = _eval(config, tmp_path / "second.json", env)  # every reply now from the pack's cache
    assert first.returncode == 100, first.stdout[-2000:] + first.stderr[-2000:]
    assert judge.unmatched == 0
    rows = _rows(tmp_path / "first.json")
    assert len(rows) == 24 and served_first["requests"] == 24
    assert _verdicts(rows) == _replayed(shared_eval, "promptfooconfig.yaml")
    assertions = _stats(tmp_path / "first.json")["tokenUsage"]["assertions"]
    assert (assertions["total"], assertions["prompt"], assertions["completion"]) == (
        served_first["total"], served_first["prompt"], served_first["completion"])  # fmt: skip
    assert f"Grading: {served_first['total']:,}" in first.stdout
    for row in rows.values():
        (judged,) = _judge_results(row)
        usage = judged["metadata"]["judge_usage"]["providers"]["ollama:chat:standin-judge"]
        assert (usage["calls"], usage["model"]) == (1, 1) and usage["tokens"] > 0
        assert judged["metadata"]["judge"]["provider"] == "ollama:chat:standin-judge"
    # Cached: no new request, no new token, the same verdicts; the tokens counted as cached. promptfoo
    # >= 0.122 keeps the logical count in tokenUsage (every token, all cached) and what was spent anew in
    # tokenUsage.incurredTokenUsage (none); 0.121 put 0 in tokenUsage.assertions.total.
    assert second.returncode == 100 and standin.tokens_served()["requests"] == 24
    assert _verdicts(_rows(tmp_path / "second.json")) == _replayed(shared_eval, "promptfooconfig.yaml")
    usage = _stats(tmp_path / "second.json")["tokenUsage"]
    assert (usage["assertions"]["total"], usage["assertions"]["cached"]) == (served_first["total"],) * 2
    incurred = usage["incurredTokenUsage"]["assertions"]
    assert (incurred["total"], incurred["prompt"], incurred["completion"]) == (0, 0, 0)


@pytest.mark.xdist_group(shared_group("configs/factual_accuracy.yaml"))
def test_the_factuality_judge_through_an_http_provider_named_on_the_assertion(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    answers = _answers(
        SAMPLE / "recorded_answers.yaml", lambda a: f"factual_accuracy/{a['query_id']}/{a['condition']}"
    )
    judge = RecordedJudge.from_files(str(SAMPLE / "factuality" / "judge_replies.yaml"), answers)
    standin = ModelStandin(judge)

    def edit(config: dict[str, Any]) -> None:
        (assertion,) = config["defaultTest"]["assert"]
        del assertion["config"]["provider"]  # promptfoo's own field names the judge instead
        assertion["provider"] = {
            "id": f"{standin.url}/judge",
            "config": {"method": "POST", "body": {"prompt": "{{prompt}}"},
                       "transformResponse": "({output: json.text, tokenUsage: json.usage})"},
        }  # fmt: skip

    with standin.running():
        result = _eval(
            _config("configs/factual_accuracy.yaml", tmp_path, edit), tmp_path / "out.json", _env(tmp_path)
        )
    assert result.returncode == 100, result.stdout[-2000:] + result.stderr[-2000:]
    assert judge.unmatched == 0
    rows = _rows(tmp_path / "out.json")
    assert _verdicts(rows) == _replayed(shared_eval, "configs/factual_accuracy.yaml")
    served = standin.tokens_served()
    # Every row is a legal-aid item, at the seed's high risk level: the cheap stage is skipped, and each of
    # the five rows' capable calls (one retry among them) is the stand-in's (issue 41).
    assert served["requests"] == 6
    assertions = _stats(tmp_path / "out.json")["tokenUsage"]["assertions"]
    assert (assertions["total"], assertions["prompt"]) == (served["total"], served["prompt"])
    providers = {
        p
        for row in rows.values()
        for c in _judge_results(row)
        for p in c["metadata"]["judge_usage"]["providers"]
    }
    assert f"{standin.url}/judge" in providers


@pytest.mark.xdist_group(shared_group("configs/docs_qa.yaml"))
def test_the_docs_qa_grader_through_ollama_named_by_grader(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    answers = _answers(DOCS_QA / "recorded_answers.yaml", lambda a: f"docs_qa/{a['query_id']}")
    judge = RecordedJudge.from_files(str(DOCS_QA / "grader_replies.yaml"), answers)
    standin = ModelStandin(judge)

    def edit(config: dict[str, Any]) -> None:
        del config["defaultTest"]["assert"][0]["config"]["provider"]  # --grader names it

    with standin.running():
        result = _eval(_config("configs/docs_qa.yaml", tmp_path, edit), tmp_path / "out.json",
                       _env(tmp_path, OLLAMA_BASE_URL=standin.url), "--grader", "ollama:chat:standin-grader")  # fmt: skip
    assert result.returncode in (0, 100), result.stdout[-2000:] + result.stderr[-2000:]
    assert judge.unmatched == 0
    rows = _rows(tmp_path / "out.json")
    assert _verdicts(rows) == _replayed(shared_eval, "configs/docs_qa.yaml")
    served = standin.tokens_served()
    assert served["requests"] == 25  # 24 questions, one retried
    assert _stats(tmp_path / "out.json")["tokenUsage"]["assertions"]["total"] == served["total"]
    assert {s.model for s in standin.served} == {"standin-grader"}


def _c0_only(config: dict[str, Any], generation_url: str) -> None:
    config["prompts"] = [p for p in config["prompts"] if p.get("label") == "C0"]
    config["providers"] = [{"id": "openai:chat:standin-answerer", "label": "live-answers",
                            "config": {"apiBaseUrl": f"{generation_url}/v1"}}]  # fmt: skip


class _Answerer:
    """Generation: the recorded C0 answer to the question in the prompt."""

    def __init__(self) -> None:
        items = [
            json.loads(line)
            for line in (SAMPLE / "high_risk.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        self.by_question = {str(i["question"]).strip(): ROUND3_ANSWERS[f"round3/{i['id']}/C0"] for i in items}

    def __call__(self, prompt: str) -> str:
        found = [a for q, a in self.by_question.items() if q in prompt]
        return found[0] if len(found) == 1 else "no recorded answer"


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_openai_chat_judge_with_its_own_api_base_url_while_generation_uses_another(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    generation = ModelStandin(_Answerer())
    judge = RecordedJudge.from_files(str(SAMPLE / "judge_replies" / "round3.yaml"), ROUND3_ANSWERS)
    grading = ModelStandin(judge)

    def edit(config: dict[str, Any]) -> None:
        _c0_only(config, generation.url)
        del config["defaultTest"]["assert"][1]["config"]["provider"]
        config["defaultTest"]["options"] = {"provider": {
            "id": "openai:chat:standin-judge", "config": {"apiBaseUrl": f"{grading.url}/v1", "temperature": 0}}}  # fmt: skip

    with generation.running(), grading.running():
        env = _env(
            tmp_path,
            OPENAI_API_KEY="sk-test-standin-0000000000000000",
            OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        )
        result = _eval(_config("promptfooconfig.yaml", tmp_path, edit), tmp_path / "out.json", env)
    assert result.returncode == 100, result.stdout[-2000:] + result.stderr[-2000:]
    assert judge.unmatched == 0
    rows = _rows(tmp_path / "out.json")
    assert len(rows) == 8
    expected = {
        (q, "C0"): v
        for (q, label), v in _replayed(shared_eval, "promptfooconfig.yaml").items()
        if label == "C0"
    }
    assert _verdicts(rows) == expected
    assert {s.model for s in generation.served} == {"standin-answerer"} and len(generation.served) == 8
    assert {s.model for s in grading.served} == {"standin-judge"} and len(grading.served) == 8
    stats = _stats(tmp_path / "out.json")["tokenUsage"]
    assert stats["total"] == generation.tokens_served()["total"]
    assert stats["assertions"]["total"] == grading.tokens_served()["total"]
    # Before any call, beforeAll said where the key goes: one line per host, generation and judge.
    hosts = [ln for ln in result.stderr.splitlines() if ln.startswith("grounding-eval: API key sent to")]
    assert hosts == [
        f"grounding-eval: API key sent to {generation.url.removeprefix('http://')} (generation: openai:chat:standin-answerer)",
        f"grounding-eval: API key sent to {grading.url.removeprefix('http://')} (judge: openai:chat:standin-judge)",
    ]  # fmt: skip


BROKEN = [
    pytest.param({"GROUNDING_EVAL_JUDGE_PROVIDER": "nosuch:provider"}, None, "Could not identify provider", id="unknown-provider"),
    pytest.param({"GROUNDING_EVAL_JUDGE_PROVIDER": "anthropic:messages:claude-x"}, None, "its API key is not set", id="missing-key"),
    pytest.param({}, "self", "is the model under test", id="self-grading"),
    pytest.param({}, "rubric", "rubric", id="malformed-rubric"),
    pytest.param({}, "directory", "organizations", id="unreadable-directory"),
    # promptfoo's own Python runs a `type: python` entry: its judge is resolved by the same rules
    # (assertions/judges.cjs), which refuse a config's endpoint while the switch decides the judge.
    pytest.param({"GROUNDING_EVAL_JUDGE_PROVIDER": "ollama:chat:m"}, "python-entry", "config.base_url names a judge endpoint", id="python-entry"),
]  # fmt: skip


@pytest.mark.parametrize(("env_extra", "breakage", "said"), BROKEN)
def test_a_configuration_error_stops_the_eval_before_any_generation_call(
    tmp_path: Path, env_extra: dict[str, str], breakage: str | None, said: str
) -> None:
    generation = ModelStandin(_Answerer())

    def edit(config: dict[str, Any]) -> None:
        _c0_only(config, generation.url)
        verifier, judge = config["defaultTest"]["assert"]
        if breakage == "self":  # the judge is the model under test, at the same endpoint
            judge["config"]["provider"] = {
                "id": "openai:chat:standin-answerer",
                "config": {"apiBaseUrl": f"{generation.url}/v1"},
            }
        if breakage == "rubric":
            bad = tmp_path / "bad_rubric.yaml"
            bad.write_text("id: broken\ncriteria: [1, 2\n", encoding="utf-8")
            judge["config"]["rubric"] = str(bad)
        if breakage == "directory":
            verifier["config"]["orgs"] = str(tmp_path / "no_such_organizations.yaml")
        if breakage == "python-entry":
            judge["type"], judge["value"] = "python", f"file://{REPO / 'assertions' / 'judge.py'}:get_assert"
            judge["config"]["base_url"] = "http://127.0.0.1:9/v1"

    with generation.running():
        env = _env(tmp_path, OPENAI_API_KEY="sk-test-standin-0000000000000000", **env_extra)
        config = _config("promptfooconfig.yaml", tmp_path, edit)
        result = _eval(config, tmp_path / "out.json", env)
    said_all = result.stdout + result.stderr
    assert result.returncode == 1, said_all[-3000:]
    assert "grounding-eval: the configuration has" in said_all and said in said_all
    assert generation.served == []  # no generation call was made
    assert not (tmp_path / "out.json").exists()
