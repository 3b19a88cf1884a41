"""Where a received study hides a grader's endpoint, the switch and ``rescore`` still see it (issue 39).

Real promptfoo runs and real ``grounding-eval rescore``, stand-in model APIs on 127.0.0.1 that record every
request (tests/test_judge_trust_e2e.py's :class:`Endpoint`). The partner holds ``OPENAI_API_KEY``; the study
names its host not in a provider's ``config`` but

* in a grader provider's own ``env:`` map (``{id, env: {OPENAI_BASE_URL: …}}``),
* in the config's top-level ``env:`` block, which promptfoo reads before the process's environment,
* in a provider file (``provider: file://grader.yaml``), which promptfoo expands when it loads the grader.

Under ``$GROUNDING_EVAL_JUDGE_PROVIDER`` each is refused in one line before any call; ``rescore`` of a results
file whose judge hides its endpoint either way does not follow it; and where promptfoo's default grader
grades (no grader named), beforeAll says where the key goes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.promptfoo_runs import REPO
from tests.test_judge_providers_e2e import _eval
from tests.test_judge_trust_e2e import PARTNER_KEY, Endpoint, _env, _never, _partner_env

GRADED_YES = json.dumps({"reason": "polite", "pass": True, "score": 1})
ENTRY = "file://" + str(REPO / "assertions" / "grounding.cjs")
RUBRIC = {"type": "llm-rubric", "value": "The answer is polite."}


def _study(folder: Path, assertion: dict[str, Any], **top: Any) -> Path:
    """A received config in ``folder``: one test graded by ``assertion``, with ``top``-level settings."""
    folder.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "echo"}],
        "extensions": [ENTRY + ":beforeAll"],
        "tests": [{"vars": {"question": "Call Legal Aid Chicago at (312) 341-1070.", "query_id": "q1",
                            "jurisdiction": "IL"}, "assert": [assertion]}],
        **top,
    }  # fmt: skip
    path = folder / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def _refused(result: subprocess.CompletedProcess[str], line: str) -> None:
    """The eval stopped in beforeAll with ``line`` said once, as the refusal's last line."""
    said = result.stdout + result.stderr
    assert said.count(line) == 1, said[-3000:]
    tail = result.stderr.rstrip("\n").splitlines()
    assert tail[-2].startswith("grounding-eval: the configuration has 1 problem(s); no model was called:"), (
        tail[-3:]
    )
    assert line in tail[-1]
    assert result.returncode == 1


def test_a_graders_own_env_map_is_refused_under_the_switch(tmp_path: Path) -> None:
    """promptfoo gives a provider's ``env:`` map to that provider: its OPENAI_BASE_URL is an endpoint."""
    received, own = Endpoint(lambda p, r: GRADED_YES), Endpoint(_never)
    with received.running(), own.running():
        grader = {"id": "openai:chat:gpt-4o-mini", "env": {"OPENAI_BASE_URL": f"{received.url}/v1"}}
        result = _eval(_study(tmp_path / "study", {**RUBRIC, "provider": grader}), tmp_path / "out.json",
                       _partner_env(tmp_path, own))  # fmt: skip
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    _refused(result, f"tests[0].assert[0].provider.env.OPENAI_BASE_URL names a judge endpoint ({received.url}/v1) "
                     "while $GROUNDING_EVAL_JUDGE_PROVIDER decides")  # fmt: skip
    assert own.requests == []


@pytest.mark.parametrize("graded_by", ["llm-rubric", "pack-judge"])
def test_a_configs_env_block_is_refused_under_the_switch(tmp_path: Path, graded_by: str) -> None:
    """The config's ``env:`` block moves every provider that reads OPENAI_BASE_URL — promptfoo's default
    grader (no grader named) and the switch's judge alike: refused as a study's .env line is."""
    received, own = Endpoint(lambda p, r: GRADED_YES), Endpoint(_never)
    assertion = RUBRIC if graded_by == "llm-rubric" else {"type": "javascript", "value": ENTRY + ":judge",
                                                          "config": {"rubric": "v3"}}  # fmt: skip
    with received.running(), own.running():
        path = _study(tmp_path / "study", assertion, env={"OPENAI_BASE_URL": f"{received.url}/v1"})
        result = _eval(path, tmp_path / "out.json", _partner_env(tmp_path, own))
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    _refused(result, f"env.OPENAI_BASE_URL ({received.url}/v1) in the env block of {path}: while "
                     "$GROUNDING_EVAL_JUDGE_PROVIDER decides the judge, the config may not choose")  # fmt: skip
    assert own.requests == []


def test_promptfoos_default_grader_gets_a_key_line(tmp_path: Path) -> None:
    """Switch unset: promptfoo grades a plain ``llm-rubric`` with its default grader, at the host the
    config's env names — and beforeAll says so first, in one line."""
    received = Endpoint(lambda p, r: GRADED_YES)
    with received.running():
        path = _study(tmp_path / "study", RUBRIC, env={"OPENAI_BASE_URL": f"{received.url}/v1"})
        result = _eval(path, tmp_path / "out.json", _env(tmp_path, OPENAI_API_KEY=PARTNER_KEY))
    # the key did go there: promptfoo grades with its default grader at the env block's host
    assert received.carrying(PARTNER_KEY), result.stdout[-2000:] + result.stderr[-2000:]
    line = (f"grounding-eval: API key sent to promptfoo's default grader for llm-rubric at tests[0].assert[0], no "
            f"grader named: promptfoo picks it from the keys you set, at {received.host} (the env block of "
            f"{path} sets OPENAI_BASE_URL)")  # fmt: skip
    assert result.stderr.count(line) == 1, result.stderr[-3000:]


@pytest.mark.parametrize("where", ["tests[0].assert[0].provider", "defaultTest.options.provider"])
def test_a_provider_files_endpoint_is_refused_under_the_switch(tmp_path: Path, where: str) -> None:
    """``file://grader.yaml`` beside the config (promptfoo reads it from the config's folder): the endpoint
    the file holds is checked as if written in place."""
    received, own = Endpoint(lambda p, r: GRADED_YES), Endpoint(_never)
    study = tmp_path / "study"
    study.mkdir()
    (study / "grader.yaml").write_text(yaml.safe_dump(
        {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{received.url}/v1"}}), encoding="utf-8")  # fmt: skip
    if where == "defaultTest.options.provider":
        path = _study(study, RUBRIC, defaultTest={"options": {"provider": "file://grader.yaml"}})
    else:
        path = _study(study, {**RUBRIC, "provider": "file://grader.yaml"})
    with received.running(), own.running():
        # run from the pack, not the study: promptfoo reads grader.yaml from the config's folder
        result = _eval(path, tmp_path / "out.json", _partner_env(tmp_path, own))
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    _refused(result, f"{where} (file://grader.yaml).config.apiBaseUrl names a judge endpoint ({received.url}/v1) "
                     "while $GROUNDING_EVAL_JUDGE_PROVIDER decides")  # fmt: skip
    assert own.requests == []


@pytest.mark.parametrize("hidden", ["file-ref", "provider-env"])
def test_rescore_never_follows_an_endpoint_the_results_file_hides(
    tmp_path: Path, shared_eval: Callable[[str], Any], hidden: str
) -> None:
    """Switch unset, only the partner's key: a row's judge ``config.provider`` that is a provider file
    beside the results file, or ``{id, env: {OPENAI_BASE_URL}}``, is not followed — one line, every row's
    judge unscored."""
    data = json.loads(shared_eval("promptfooconfig.yaml").out.read_text(encoding="utf-8"))
    received = Endpoint(_never)
    (tmp_path / "grader.yaml").write_text(yaml.safe_dump(
        {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{received.url}/v1"}}), encoding="utf-8")  # fmt: skip
    judge: Any = ("file://grader.yaml" if hidden == "file-ref" else
                  {"id": "openai:chat:gpt-4o-mini", "env": {"OPENAI_BASE_URL": f"{received.url}/v1"}})  # fmt: skip
    for row in data["results"]["results"]:
        for assertion in row["testCase"]["assert"]:
            if str(assertion.get("value", "")).endswith("grounding.cjs:judge"):
                assertion["config"]["provider"] = judge
    given = tmp_path / "received.json"
    given.write_text(json.dumps(data), encoding="utf-8")
    # a received study ships its data; rescore runs in its folder, as a partner would (promptfoo finds grader.yaml)
    shutil.copytree(REPO / "datasets" / "sample", tmp_path / "datasets" / "sample")
    with received.running():
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rescore", given.name, "-o", str(tmp_path / "new.json"), "-j", "2"],
            cwd=tmp_path, env=_env(tmp_path, OPENAI_API_KEY=PARTNER_KEY, PYTHONPATH=str(REPO)), capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    assert done.returncode == 0, done.stderr[-2000:]
    setting = "config.provider (file://grader.yaml).config.apiBaseUrl" if hidden == "file-ref" else (
        "config.provider.env.OPENAI_BASE_URL")  # fmt: skip
    line = f"grounding-eval: {setting} names a judge endpoint ({received.url}/v1) in the results file {given.name}: not followed"
    assert done.stderr.count(line) == 1, done.stderr[-2000:]
    rows = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))["results"]["results"]
    judged = [
        c["reason"] for r in rows for c in r["gradingResult"]["componentResults"] if "judge" in c["reason"]
    ]
    assert sum("ERROR (judge unscored)" in r and "not followed" in r for r in judged) == len(rows)


@pytest.mark.parametrize("where", ["defaultTest.provider", "tests[0].provider"])
def test_a_model_under_test_named_per_test_gets_a_key_line(tmp_path: Path, where: str) -> None:
    """A received config can name the model under test per test (defaultTest.provider, a test's provider):
    beforeAll says where that model's key goes, before any call, as it does for the suite's providers."""
    received = Endpoint(lambda p, r: "An answer.")
    spec = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{received.url}/v1"}}
    with received.running():
        if where == "defaultTest.provider":
            path = _study(
                tmp_path / "study", {"type": "contains", "value": "answer"}, defaultTest={"provider": spec}
            )
        else:
            path = _study(tmp_path / "study", {"type": "contains", "value": "answer"})
            config = yaml.safe_load(path.read_text(encoding="utf-8"))
            config["tests"][0]["provider"] = spec
            path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        result = _eval(path, tmp_path / "out.json", _env(tmp_path, OPENAI_API_KEY=PARTNER_KEY))
    assert received.carrying(PARTNER_KEY), result.stdout[-2000:] + result.stderr[-2000:]  # promptfoo's choice
    line = f"grounding-eval: API key sent to {received.host} (generation: openai:chat:gpt-4o-mini)"
    assert result.stderr.count(line) == 1, result.stderr[-3000:]
