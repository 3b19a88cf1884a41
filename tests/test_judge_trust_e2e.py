"""A study someone else wrote cannot take the partner's key or leave it in what the pack writes (issue 39).

Real promptfoo runs, real ``grounding-eval`` commands, and stand-in model APIs on 127.0.0.1 that record
every request (:class:`Endpoint`):

* **A received config's endpoint gets no request.** With ``OPENAI_API_KEY`` and
  ``$GROUNDING_EVAL_JUDGE_PROVIDER`` set, a config that adds ``base_url`` to a judge assertion (the rubric
  judge's JavaScript and Python entries, the factual-accuracy and docs-QA judges) or a results file
  re-graded with ``rescore`` is refused before any call: the config's host sees nothing.
* **A type: python entry honours the assertion's own provider**, as the JavaScript entries do.
* **A promptfoo-held judge's key is in no file the pack writes.** The key inline in ``options.provider``,
  in an ``http`` provider's headers, in an environment variable whose name does not look like a key, in
  the provider URL's query: an endpoint that quotes what it was sent in its reply leaves no copy in the
  rows' reasons and metadata, the audit files, the reply cache or the review queue.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
import yaml

from grounding_eval.judge.rubric import load_rubric
from tests.promptfoo_runs import REPO, offline_env, shared_group
from tests.test_judge_providers_e2e import _config, _eval

PARTNER_KEY = "sk-partner-PARTNERKEY0123456789abcdef"
V3 = load_rubric(REPO / "rubrics" / "v3.yaml")


@dataclass(frozen=True)
class Request:
    path: str  # with its query
    headers: dict[str, str]
    body: str


class Endpoint:
    """A model API on 127.0.0.1 (OpenAI's ``/v1/chat/completions`` and a plain ``/judge`` for promptfoo's
    ``http`` provider) that records every request and answers ``respond(prompt, request)``."""

    def __init__(self, respond: Callable[[str, Request], str]) -> None:
        self.requests: list[Request] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
                seen = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                endpoint.requests.append(seen)
                body = json.loads(raw or "{}")
                messages = body.get("messages")
                if messages is None:
                    try:
                        messages = json.loads(body.get("prompt") or "")
                    except (TypeError, ValueError):
                        messages = [{"content": body.get("prompt")}]
                prompt = "\n\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
                text = respond(prompt, seen)
                if self.path.split("?")[0].endswith("/chat/completions"):
                    out: dict[str, Any] = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                        "finish_reason": "stop"}],
                                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}  # fmt: skip
                else:
                    out = {"text": text}
                data = json.dumps(out).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.host = f"127.0.0.1:{self._server.server_address[1]}"

    def carrying(self, secret: str) -> list[Request]:
        """The requests that carried ``secret`` anywhere (headers, URL, body)."""
        return [r for r in self.requests if secret in json.dumps([r.path, r.headers, r.body])]

    @contextmanager
    def running(self) -> Iterator[Endpoint]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


def _never(prompt: str, request: Request) -> str:
    return "this endpoint was never to be asked"


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    # promptfoo reads .env's relative PROMPTFOO_PYTHON against the config's folder, here a temporary one
    env = offline_env(tmp, {"PROMPTFOO_PYTHON": str(REPO / ".venv" / "bin" / "python"), **extra})
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        if name not in extra:
            env.pop(name, None)
    return env


def _partner_env(tmp: Path, own: Endpoint) -> dict[str, str]:
    """The partner's machine: their key, the one switch, and their own judge endpoint."""
    return _env(tmp, OPENAI_API_KEY=PARTNER_KEY, GROUNDING_EVAL_JUDGE_PROVIDER="openai:chat:gpt-4o-mini",
                OPENAI_BASE_URL=f"{own.url}/v1")  # fmt: skip


def _judge_assertions(config: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in config["defaultTest"]["assert"]
            if str(a.get("value", "")).endswith(("grounding.cjs:judge", "grounding.cjs:factuality",
                                                  "grounding.cjs:docs_qa", "grounding.py:judge"))]  # fmt: skip


# --- a received config's endpoint ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "python_entry"),
    [("promptfooconfig.yaml", False), ("promptfooconfig.yaml", True),
     ("configs/factual_accuracy.yaml", False), ("configs/docs_qa.yaml", False)],
    ids=["rubric-judge-javascript", "rubric-judge-python", "factual-accuracy", "docs-qa"],
)  # fmt: skip
def test_a_received_configs_base_url_never_gets_the_partners_key(
    tmp_path: Path, src: str, python_entry: bool
) -> None:
    received, own = Endpoint(_never), Endpoint(_never)

    def edit(config: dict[str, Any]) -> None:
        for assertion in _judge_assertions(config):
            assertion["config"]["base_url"] = f"{received.url}/v1"  # the one line a received study adds
            if python_entry:
                assertion["type"] = "python"
                assertion["value"] = assertion["value"].replace("grounding.cjs:", "grounding.py:")

    with received.running(), own.running():
        result = _eval(_config(src, tmp_path, edit), tmp_path / "out.json", _partner_env(tmp_path, own),
                       "--filter-first-n", "2")  # fmt: skip
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    said = result.stdout + result.stderr
    assert "config.base_url names a judge endpoint" in said and "refused, not merged" in said, said[-3000:]
    assert result.returncode not in (0, 100)  # stopped in beforeAll: no model was called
    assert own.requests == []


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_rescore_of_a_received_results_file_never_sends_the_key_to_its_base_url(
    tmp_path: Path, shared_eval: Callable[[str], Any]
) -> None:
    run = shared_eval("promptfooconfig.yaml")
    data = json.loads(run.out.read_text(encoding="utf-8"))
    received, own = Endpoint(_never), Endpoint(_never)
    for row in data["results"]["results"]:
        for assertion in row["testCase"]["assert"]:
            if str(assertion.get("value", "")).endswith("grounding.cjs:judge"):
                assertion["config"]["base_url"] = f"{received.url}/v1"
    given = tmp_path / "received.json"
    given.write_text(json.dumps(data), encoding="utf-8")
    with received.running(), own.running():
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rescore", str(given), "-o", str(tmp_path / "new.json"), "-j", "2"],
            cwd=REPO, env=_partner_env(tmp_path, own), capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))["results"]["results"]
    reasons = [
        c["reason"] for r in rows for c in r["gradingResult"]["componentResults"] if "judge" in c["reason"]
    ]
    assert reasons and all(
        "config.base_url names a judge endpoint" in r for r in reasons if "judge unscored" in r
    )
    assert sum("config.base_url names a judge endpoint" in r for r in reasons) == len(rows)


# --- the assertion's own provider, on a type: python entry ---------------------------------------------------


def test_a_python_entry_grades_with_the_assertions_own_provider(tmp_path: Path) -> None:
    """promptfoo's precedence on both entries: the assertion's provider replaces the test's grader."""
    from grounding_eval.judge.calls import answer_sha256

    answer = "Call Legal Aid Chicago at (312) 341-1070."
    recordings = {}
    for name in ("own", "grader"):  # two recorded judges, each saying in its reasons which it is
        reply = json.dumps({"criteria": {c: {"verdict": "Yes" if not V3.criterion(c).negative else "No",
                                             "reasoning": f"{name} judged {c}."} for c in V3.ids}})  # fmt: skip
        entries = [{"key": f"v3/q-{kind}/C0", "answer_sha256": answer_sha256(f"{answer} ({kind})"),
                    "replies": [reply]} for kind in ("javascript", "python")]  # fmt: skip
        recordings[name] = tmp_path / f"{name}.yaml"
        recordings[name].write_text(yaml.safe_dump(entries), encoding="utf-8")
    entries = {"javascript": "file://" + str(REPO / "assertions" / "grounding.cjs") + ":judge",
               "python": "file://" + str(REPO / "assertions" / "grounding.py") + ":judge"}  # fmt: skip
    config = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "echo"}],
        "defaultTest": {"options": {"provider": f"replay:{recordings['grader']}"}},
        "tests": [{"vars": {"question": f"{answer} ({kind})", "query_id": f"q-{kind}", "jurisdiction": "IL"},
                   "assert": [{"type": kind, "value": value, "provider": f"replay:{recordings['own']}",
                               "config": {"rubric": "v3", "audit_dir": str(tmp_path / "audit"),
                                          "review_queue": str(tmp_path / "queue.jsonl")}}]}
                  for kind, value in entries.items()],
    }  # fmt: skip
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    result = _eval(path, tmp_path / "out.json", _env(tmp_path))
    rows = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 2, result.stdout[-2000:] + result.stderr[-2000:]
    graded_by = {
        r["testCase"]["vars"]["query_id"]: ("own judged" in json.dumps(r["gradingResult"]),
                                            "grader judged" in json.dumps(r["gradingResult"]))
        for r in rows
    }  # fmt: skip
    assert graded_by == {"q-javascript": (True, False), "q-python": (True, False)}


# --- a promptfoo-held judge's secrets ---------------------------------------------------------------------------

INLINE, HEADER, RENAMED, QUERY = (
    "sk-inline-INLINEKEY0123456789abcdef",
    "hdr-HEADERSECRET-0123456789abcdef",
    "renamed-RENAMEDSECRET-0123456789",
    "qry-QUERYSECRET-0123456789abcdef",
)
SECRETS = {"inline": INLINE, "header": HEADER, "renamed": RENAMED, "query": QUERY}


def _echoing(prompt: str, request: Request) -> str:
    """A normal judge reply whose reasoning quotes what the request carried: its headers and URL query."""
    said = [v for k, v in request.headers.items() if k in ("authorization", "x-api-key", "x-partner")]
    said += [v for _, v in parse_qsl(urlsplit(request.path).query)]
    quoted = " ".join(said) + " " + " ".join(quote(s, safe="") for s in said)
    criteria = {c: {"verdict": "Yes" if not V3.criterion(c).negative else "No",
                    "reasoning": f"Judged {c}; you sent me {quoted}"} for c in V3.ids}  # fmt: skip
    return json.dumps({"criteria": criteria, "summary": f"credentials seen: {quoted}"})


def test_a_promptfoo_held_judges_secrets_are_in_no_file_the_pack_writes(tmp_path: Path) -> None:
    echo = Endpoint(_echoing)
    http = {"method": "POST", "body": {"prompt": "{{prompt}}"}, "transformResponse": "json.text"}
    held = {
        "inline": {"id": "openai:chat:gpt-4o-mini", "config": {"apiKey": INLINE, "apiBaseUrl": f"{echo.url}/v1"}},
        "header": {"id": "http", "config": {**http, "url": f"{echo.url}/judge", "headers": {"x-partner": HEADER}}},
        "renamed": {"id": "openai:chat:gpt-4o-mini",
                    "config": {"apiKeyEnvar": "PARTNER_SETTING", "apiBaseUrl": f"{echo.url}/v1"}},
        "query": {"id": "http", "config": {**http, "url": f"{echo.url}/judge?access={QUERY}"}},
    }  # fmt: skip
    out_dir = tmp_path / "written"
    judge_config = {"rubric": "v3", "cache_dir": str(out_dir / "cache"), "audit_dir": str(out_dir / "audit"),
                    "review_queue": str(out_dir / "queue.jsonl")}  # fmt: skip
    entries = [{"type": "javascript", "value": "file://" + str(REPO / "assertions" / "grounding.cjs") + ":judge",
                "config": judge_config},
               {"type": "python", "value": "file://" + str(REPO / "assertions" / "grounding.py") + ":judge",
                "config": {**judge_config, "timeout": 60}}]  # fmt: skip
    config = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "echo"}],
        "extensions": ["file://" + str(REPO / "assertions" / "grounding.cjs") + ":beforeAll"],
        "defaultTest": {"assert": entries},
        "tests": [{"vars": {"question": f"Who helps with evictions? ({name})", "query_id": name, "jurisdiction": "IL"},
                   "options": {"provider": provider}} for name, provider in held.items()],
    }  # fmt: skip
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with echo.running():
        result = _eval(path, tmp_path / "out.json", _env(tmp_path, PARTNER_SETTING=RENAMED))
    rows = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 4, result.stdout[-2000:] + result.stderr[-2000:]
    for name, secret in SECRETS.items():  # each endpoint really was sent its secret, and quoted it
        assert echo.carrying(secret), name
    written = {
        f"row {r['testCase']['vars']['query_id']}": json.dumps(
            [r["gradingResult"], r.get("error"), r.get("namedScores")], ensure_ascii=False
        )
        for r in rows
    }
    for file in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        written[str(file.relative_to(out_dir))] = file.read_text(encoding="utf-8", errors="replace")
    leaks = [(where, name) for where, text in written.items() for name, secret in SECRETS.items()
             if secret in text or quote(secret, safe="") in text]  # fmt: skip
    assert leaks == []
    judged = [
        c
        for r in rows
        for c in r["gradingResult"]["componentResults"]
        if "judge" in (c.get("metadata") or {})
    ]
    assert len(judged) == 8 and all(c["metadata"]["judge"]["status"] == "scored" for c in judged), [
        c["reason"] for c in judged
    ]
    assert any(k.startswith("cache") for k in written) and any(k.startswith("audit") for k in written)
    assert "[REDACTED]" in "".join(written.values())  # the quotes were there, and scrubbed
    # Every judged row records where its judge was asked: the host alone, no credentials.
    for c in judged:
        meta = c["metadata"]
        assert meta["judge"]["endpoint_host"] == echo.host, meta["judge"]
        assert [u.get("host") for u in meta["judge_usage"]["providers"].values()] == [echo.host]
        assert meta["provenance"]["judge_endpoints"] == [echo.host]
    # beforeAll said, before any call, where the judges' keys would go.
    assert f"grounding-eval: API key sent to {echo.host} (judge: openai:chat:gpt-4o-mini)" in result.stderr
    shutil.rmtree(out_dir)


# --- promptfoo's own graders ---------------------------------------------------------------------------------

GRADED_YES = json.dumps({"reason": "polite", "pass": True, "score": 1})


def _grader_config(tmp: Path, endpoint: Endpoint, where: str, kind: str) -> Path:
    """A received config whose grader (``where``: defaultTest's or the test's ``options.provider``, or the
    assertion's ``provider``) names ``endpoint``; graded by ``kind`` (one of promptfoo's graders, or the
    pack's judge)."""
    return _graders_config(tmp, [(kind, where, endpoint)])[0]


def _graders_config(tmp: Path, cases: list[tuple[str, str, Endpoint]]) -> tuple[Path, list[str]]:
    """A received config with one test per case (kind, where, endpoint), as ``_grader_config`` writes one;
    at most one case may name ``defaultTest.options.provider``. Also the place of each case's grader in it
    (``tests[0]`` read as the case's own test)."""
    tests: list[dict[str, Any]] = []
    places: list[str] = []
    config: dict[str, Any] = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "echo"}],
        "extensions": ["file://" + str(REPO / "assertions" / "grounding.cjs") + ":beforeAll"],
        "defaultTest": {},
        "tests": tests,
    }
    for n, (kind, where, endpoint) in enumerate(cases):
        grader = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{endpoint.url}/v1"}}
        if kind == "pack-judge":
            assertion: dict[str, Any] = {"type": "javascript", "value": "file://" + str(REPO / "assertions" / "grounding.cjs") + ":judge",
                                         "config": {"rubric": "v3", "audit_dir": str(tmp / "audit"), "review_queue": str(tmp / "q.jsonl")}}  # fmt: skip
        else:
            assertion = {"type": kind, "value": "The answer is polite."}
        test: dict[str, Any] = {"vars": {"question": "Who helps with evictions?", "query_id": f"q-{n + 1}", "jurisdiction": "IL"},
                                "assert": [assertion]}  # fmt: skip
        if where == "defaultTest.options.provider":
            assert not config["defaultTest"], "one defaultTest grader per config"
            config["defaultTest"] = {"options": {"provider": grader}}
        elif where == "tests[0].options.provider":
            test["options"] = {"provider": grader}
        else:
            assertion["provider"] = grader
        tests.append(test)
        places.append(where.replace("tests[0]", f"tests[{n}]"))
    path = tmp / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path, places


# (The pack judge's own assertion provider is test_a_received_configs_base_url_never_gets_the_partners_key's.)
_GRADER_PLACES = [
    (kind, where)
    for kind in ("llm-rubric", "model-graded-closedqa", "factuality", "pack-judge")
    for where in ("defaultTest.options.provider", "tests[0].options.provider", "tests[0].assert[0].provider")
    if (kind, where) != ("pack-judge", "tests[0].assert[0].provider")
]


@dataclass(frozen=True)
class _GradersRun:
    """One eval of a received config holding several cases (``_graders_config``), under the switch."""

    result: subprocess.CompletedProcess[str]
    received: list[Endpoint]  # each case's grader endpoint
    places: list[str]  # where each case's grader is in the config
    own: Endpoint  # the partner's judge endpoint


@pytest.fixture(scope="module")
def graders_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], tuple[_GradersRun, int]]:
    """``graders_runs(kind, where)``: the eval that holds that case, and its index there. A test's own grader
    is refused by what that test holds alone (judges.cjs suiteGraders), so the cases that name it on a test
    (``tests[0]...``) share one eval, a test each; defaultTest's grader is refused by what every test holds,
    so each of those cases has an eval of its own."""
    runs: dict[str, _GradersRun] = {}

    def run_of(kind: str, where: str) -> tuple[_GradersRun, int]:
        group = f"defaultTest:{kind}" if where == "defaultTest.options.provider" else "tests"
        cases = [
            (k, w)
            for k, w in _GRADER_PLACES
            if (f"defaultTest:{k}" if w == "defaultTest.options.provider" else "tests") == group
        ]
        if group not in runs:
            tmp = tmp_path_factory.mktemp("graders")
            received, own = [Endpoint(lambda p, r: GRADED_YES) for _ in cases], Endpoint(_never)
            config, places = _graders_config(
                tmp, [(k, w, e) for (k, w), e in zip(cases, received, strict=True)]
            )
            with contextlib.ExitStack() as running:
                for endpoint in (*received, own):
                    running.enter_context(endpoint.running())
                result = _eval(config, tmp / "out.json", _partner_env(tmp, own))
            runs[group] = _GradersRun(result, received, places, own)
        return runs[group], cases.index((kind, where))

    return run_of


@pytest.mark.xdist_group("judge-trust-graders")  # one worker: the module fixture's evals run once
@pytest.mark.parametrize(("kind", "where"), _GRADER_PLACES)
def test_a_graders_endpoint_is_refused_under_the_switch_once_and_last(
    graders_runs: Callable[[str, str], tuple[_GradersRun, int]], where: str, kind: str
) -> None:
    """promptfoo's own graders and the pack's judges follow one rule: under the switch, an endpoint the
    config names for any of them is refused before any call. promptfoo prints a hook's error four times
    (its transform's log on stdout, the hook's error and its two causes on stderr, with stacks): the pack
    says its refusals itself, once each, as the last lines on stderr, and ends the eval (status 1). (The
    cases on a test's own grader share one eval, a test each: ``graders_runs``.)"""
    run, n = graders_runs(kind, where)
    result, received = run.result, run.received[n]
    assert received.requests == [], f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    refusal = f"names a judge endpoint ({received.url}/v1) while $GROUNDING_EVAL_JUDGE_PROVIDER decides"
    said = result.stdout + result.stderr
    assert said.count(refusal) == 1, said[-3000:]
    assert f"  - {run.places[n]}.config.apiBaseUrl {refusal}" in result.stderr
    # The last lines: the count, then one line per case (this one among them), nothing after.
    cases = len(run.places)
    tail = result.stderr.rstrip("\n").splitlines()
    assert tail[-cases - 1].startswith(
        f"grounding-eval: the configuration has {cases} problem(s); no model was called:"
    ), said[-3000:]
    (mine,) = [line for line in tail[-cases:] if refusal in line]
    assert mine.startswith(f"  - {run.places[n]}.config.apiBaseUrl {refusal}")
    assert all(line.startswith("  - ") and "names a judge endpoint" in line for line in tail[-cases:])
    assert result.returncode == 1
    assert run.own.requests == []


def test_a_graders_key_host_is_said_before_the_eval(tmp_path: Path) -> None:
    """Without the switch the config's grader is used, as promptfoo does — and beforeAll says first where
    the key goes, for promptfoo's own graders as for the pack's judges."""
    received = Endpoint(lambda p, r: GRADED_YES)
    env = _env(tmp_path, OPENAI_API_KEY=PARTNER_KEY)
    with received.running():
        result = _eval(_grader_config(tmp_path, received, "defaultTest.options.provider", "llm-rubric"),
                       tmp_path / "out.json", env)  # fmt: skip
    assert received.carrying(PARTNER_KEY), (
        result.stdout[-2000:] + result.stderr[-2000:]
    )  # the key did go there
    line = f"grounding-eval: API key sent to {received.host} (grader: openai:chat:gpt-4o-mini)"
    assert result.stderr.count(line) == 1, result.stderr[-3000:]


_KEYED_BODIES = {
    "nested-under-a-key-like-name": {"prompt": "{{prompt}}", "auth": {"value": PARTNER_KEY}},
    "from-an-environment-variable": {"prompt": "{{prompt}}", "k": "{{ env.PARTNER_SETTING }}"},
    "json-text-body": json.dumps({"prompt": "{{prompt}}", "key": PARTNER_KEY}),
}
_KEYLESS_BODY = {"prompt": "{{prompt}}"}  # the control: no key, no key-host line


@dataclass(frozen=True)
class _HttpBodiesRun:
    result: subprocess.CompletedProcess[str]
    endpoints: dict[str, Endpoint]  # by body (_KEYED_BODIES, and "keyless")


@pytest.fixture(scope="module")
def http_bodies_run(tmp_path_factory: pytest.TempPathFactory) -> _HttpBodiesRun:
    """One eval of a config with an ``http`` provider per body, each on its own endpoint, and a keyless one:
    beforeAll says a key-host line per provider that holds a key, by what that provider holds."""
    tmp = tmp_path_factory.mktemp("http-bodies")
    bodies: dict[str, Any] = {**_KEYED_BODIES, "keyless": _KEYLESS_BODY}
    endpoints = {name: Endpoint(lambda p, r: "an answer") for name in bodies}
    providers = [{"id": "http", "label": name,
                  "config": {"url": f"{endpoints[name].url}/judge", "method": "POST", "body": body,
                             "transformResponse": "json.text"}} for name, body in bodies.items()]  # fmt: skip
    config = {"prompts": ["{{question}}"], "providers": providers,
              "extensions": ["file://" + str(REPO / "assertions" / "grounding.cjs") + ":beforeAll"],
              "tests": [{"vars": {"question": "hello"}}]}  # fmt: skip
    path = tmp / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with contextlib.ExitStack() as running:
        for endpoint in endpoints.values():
            running.enter_context(endpoint.running())
        result = _eval(path, tmp / "out.json", _env(tmp, PARTNER_SETTING=PARTNER_KEY))
    return _HttpBodiesRun(result, endpoints)


@pytest.mark.xdist_group("judge-trust-http-bodies")  # one worker: the module fixture's eval runs once
@pytest.mark.parametrize("body", list(_KEYED_BODIES))
def test_an_http_provider_with_its_key_in_the_body_gets_a_key_host_line(
    http_bodies_run: _HttpBodiesRun, body: str
) -> None:
    """What beforeAll counts as a key is what the scrubber scrubs (judges.cjs secretsOf): a key in an
    ``http`` provider's body, however it is held, makes a key-host line — for that provider's host, and
    none for a provider beside it whose body holds no key (one eval for every body: ``http_bodies_run``)."""
    result, endpoint = http_bodies_run.result, http_bodies_run.endpoints[body]
    assert endpoint.carrying(PARTNER_KEY), result.stdout[-2000:] + result.stderr[-2000:]
    assert (
        f"grounding-eval: API key sent to {endpoint.host} (generation: {endpoint.url}/judge)" in result.stderr
    )
    keyless = http_bodies_run.endpoints["keyless"]
    assert keyless.requests and not keyless.carrying(PARTNER_KEY)  # asked, without the key
    assert f"API key sent to {keyless.host}" not in result.stderr


# --- rescore and the command line -------------------------------------------------------------------------------


_ENDPOINT_SETTINGS = ("config.provider", "options.provider")


@dataclass(frozen=True)
class _ReceivedRescore:
    """``rescore`` of a received results file whose rows name a judge endpoint, each row by one setting (the
    rows alternate), each setting its own endpoint: once with the switch unset, once allowing both hosts."""

    given: Path
    endpoints: dict[str, Endpoint]  # by setting
    asked: dict[str, int]  # requests each endpoint had after the first run
    done: subprocess.CompletedProcess[str]
    rows: list[tuple[str, dict[str, Any]]]  # (setting, rescored row)
    allowed: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def received_rescore(
    tmp_path_factory: pytest.TempPathFactory, shared_eval: Callable[[str], Any]
) -> _ReceivedRescore:
    tmp = tmp_path_factory.mktemp("received-rescore")
    data = json.loads(shared_eval("promptfooconfig.yaml").out.read_text(encoding="utf-8"))
    endpoints = {setting: Endpoint(_never) for setting in _ENDPOINT_SETTINGS}
    settings = []
    for n, row in enumerate(data["results"]["results"]):
        setting = _ENDPOINT_SETTINGS[n % len(_ENDPOINT_SETTINGS)]
        settings.append(setting)
        judge = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{endpoints[setting].url}/v1"}}
        for assertion in row["testCase"]["assert"]:
            if str(assertion.get("value", "")).endswith("grounding.cjs:judge"):
                assertion["config"].pop("provider", None)
                if setting == "config.provider":
                    assertion["config"]["provider"] = judge
                else:
                    row["testCase"]["options"] = {"provider": judge}
    given = tmp / "received.json"
    given.write_text(json.dumps(data), encoding="utf-8")
    env = _env(tmp, OPENAI_API_KEY=PARTNER_KEY)

    def rescore(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rescore", str(given), "-o", str(tmp / "new.json"),
             "-j", "2", *extra],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    with endpoints["config.provider"].running(), endpoints["options.provider"].running():
        done = rescore()
        asked = {setting: len(e.requests) for setting, e in endpoints.items()}
        rows = json.loads((tmp / "new.json").read_text(encoding="utf-8"))["results"]["results"]
        allowed = rescore(*(arg for e in endpoints.values() for arg in ("--allow-endpoint", e.host)))
    return _ReceivedRescore(given, endpoints, asked, done, list(zip(settings, rows, strict=True)), allowed)


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
@pytest.mark.parametrize("setting", _ENDPOINT_SETTINGS)
def test_rescore_never_follows_a_results_files_judge_endpoint(
    received_rescore: _ReceivedRescore, setting: str
) -> None:
    """Switch unset: the row's recorded judge is used, but not the endpoint it names — said in one line,
    the row's judge unscored — unless the user allows that host; then the key-host line comes first.
    (Both settings in one results file, a row each in turn: ``received_rescore``.)"""
    run, received = received_rescore, received_rescore.endpoints[setting]
    assert run.asked[setting] == 0, f"{len(received.carrying(PARTNER_KEY))} request(s) carried the key"
    assert run.done.returncode == 0, run.done.stderr[-2000:]
    line = (f"grounding-eval: {setting}.config.apiBaseUrl names a judge endpoint ({received.url}/v1) in the "
            f"results file {run.given}: not followed")  # fmt: skip
    assert run.done.stderr.count(line) == 1, run.done.stderr[-2000:]
    mine = [r for s, r in run.rows if s == setting]
    judged = [
        c["reason"] for r in mine for c in r["gradingResult"]["componentResults"] if "judge" in c["reason"]
    ]
    assert mine and sum("ERROR (judge unscored)" in r and "not followed" in r for r in judged) == len(mine)
    assert all(f"({received.url}/v1)" in r for r in judged if "not followed" in r)  # its own endpoint's
    assert received.carrying(PARTNER_KEY)  # allowed: followed, after saying where the key goes
    said = run.allowed.stderr.splitlines()
    key_line = f"grounding-eval: API key sent to {received.host} (judge: openai:chat:gpt-4o-mini)"
    assert said.count(key_line) == 1, run.allowed.stderr[-2000:]


def test_the_command_line_runs_the_packs_node_and_promptfoo_not_the_folders(tmp_path: Path) -> None:
    """A received folder ships node_modules/.bin/promptfoo, a node and a promptfoo package that each leave
    a marker: the judges host the command line starts runs the pack's own, and says where the key goes."""
    marker = tmp_path / "MARKER"
    fake = f'#!/bin/sh\necho "$0" >> {marker}\nexit 1\n'
    modules = tmp_path / "study" / "node_modules"
    for script in (
        modules / ".bin" / "promptfoo",
        modules / ".bin" / "node",
        modules / "node" / "bin" / "node",
    ):
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(fake, encoding="utf-8")
        script.chmod(0o755)
    package = modules / "promptfoo"
    (package / "dist" / "src").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "promptfoo", "main": "./dist/src/index.js",
        "exports": {".": {"import": "./dist/src/index.js", "require": "./dist/src/index.cjs"}}}), encoding="utf-8")  # fmt: skip
    for name in ("index.js", "index.cjs"):
        (package / "dist" / "src" / name).write_text(
            f"require('fs').appendFileSync({json.dumps(str(marker))}, 'promptfoo library\\n');",
            encoding="utf-8",
        )
    study = modules.parent
    (study / "answer.txt").write_text("Call Legal Aid Chicago at (312) 341-1070.", encoding="utf-8")
    (study / "evidence.txt").write_text("Legal Aid Chicago: (312) 341-1070.", encoding="utf-8")
    own = Endpoint(_never)
    env = {
        **_env(tmp_path, OPENAI_API_KEY=PARTNER_KEY),
        "PATH": f"{modules / '.bin'}{os.pathsep}.{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("GROUNDING_EVAL_NODE", None)
    with own.running():
        done = subprocess.run(
            [sys.executable, "-m", "grounding_eval", "factuality", "answer.txt", "--evidence", "evidence.txt",
             "--judge", "openai:chat:gpt-4o-mini", "--base-url", f"{own.url}/v1", "--no-cache"],
            cwd=study, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert own.carrying(PARTNER_KEY), done.stderr[-2000:]  # the pack's host did run, and called
    assert f"grounding-eval: API key sent to {own.host} (judge: openai:chat:gpt-4o-mini)" in done.stderr
