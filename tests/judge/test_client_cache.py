"""The judge reply cache: hits make no HTTP call, anything that changes the reply misses, failures and
replies the caller refuses are never cached, files are written atomically, and API keys never reach the
disk."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.judge.cache import CacheEntry, ReplyCache, cache_key
from grounding_eval.judge.client import JudgeError, make_client
from grounding_eval.user_cache import seal, unseal
from tests.judge.conftest import FAKE_KEYS, JudgeServer, Scripted, WireCase, wire_cases

FAST = {"backoff_base": 0.001, "backoff_max": 0.01}
PROMPT = "Grade this answer.\n<answer>Call the Legal Aid hotline.</answer>"


def _client(case: WireCase, cache_dir: Path, **options: Any) -> Any:
    options = {"base_url": case.base_url, **FAST, **options}
    return make_client(case.provider_id, env=case.env, cache_dir=cache_dir, **options)


def _files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.iterdir())


class TestHits:
    """A repeated request is answered from disk with zero HTTP calls."""

    def test_second_identical_call_is_cached(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """Same text, raw and request id; cached=True, attempts=0; the server sees one request."""
        judge_server.script(Scripted(body=wire_case.ok('{"overall": "pass"}')))
        client = _client(wire_case, tmp_path)
        first = client.complete(PROMPT, system="sys")
        second = client.complete(PROMPT, system="sys")
        assert judge_server.count == 1
        assert (first.cached, first.attempts) == (False, 1)
        assert (second.cached, second.attempts) == (True, 0)
        assert (second.text, second.raw, second.request_id, second.provider, second.model) == (
            first.text,
            first.raw,
            first.request_id,
            first.provider,
            first.model,
        )

    def test_another_client_shares_the_cache(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """A new client on the same directory (as another promptfoo process would be) hits."""
        judge_server.script(Scripted(body=wire_case.ok("once")))
        _client(wire_case, tmp_path).complete(PROMPT)
        again = _client(wire_case, tmp_path).complete(PROMPT)
        assert (again.text, again.cached, judge_server.count) == ("once", True, 1)

    def test_temperature_0_and_0_0_share_a_key(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """An int and a float temperature are the same request."""
        judge_server.script(Scripted(body=wire_case.ok("x")))
        _client(wire_case, tmp_path, temperature=0).complete(PROMPT)
        assert _client(wire_case, tmp_path, temperature=0.0).complete(PROMPT).cached

    def test_empty_system_is_no_system(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """system="" sends no system prompt, so it is the same request as system=None."""
        judge_server.script(Scripted(body=wire_case.ok("x")))
        client = _client(wire_case, tmp_path)
        client.complete(PROMPT)
        assert client.complete(PROMPT, system="").cached

    def test_fixture_key_does_not_split_the_cache(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """fixture_key means nothing to an HTTP judge, so it is not part of the key."""
        judge_server.script(Scripted(body=wire_case.ok("x")))
        client = _client(wire_case, tmp_path)
        client.complete(PROMPT, fixture_key="a")
        assert client.complete(PROMPT, fixture_key="b").cached


class TestMisses:
    """Anything that can change the reply is part of the key."""

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            ({"prompt": PROMPT}, {"prompt": PROMPT + " "}),
            ({"system": None}, {"system": "Be strict."}),
            ({"system": "Be strict."}, {"system": "Be lenient."}),
            ({"temperature": 0.0}, {"temperature": 0.2}),
            ({"max_tokens": 4096}, {"max_tokens": 1024}),
        ],
        ids=["prompt", "system-added", "system-changed", "temperature", "max_tokens"],
    )
    def test_request_changes_miss(
        self,
        wire_case: WireCase,
        judge_server: JudgeServer,
        tmp_path: Path,
        first: dict[str, Any],
        second: dict[str, Any],
    ) -> None:
        """Changing one field of the request makes a new HTTP call."""
        judge_server.script(Scripted(body=wire_case.ok("1")), Scripted(body=wire_case.ok("2")))
        for call in (first, second):
            options = {k: v for k, v in call.items() if k in ("temperature", "max_tokens")}
            client = _client(wire_case, tmp_path, **options)
            reply = client.complete(call.get("prompt", PROMPT), system=call.get("system"))
            assert not reply.cached
        assert judge_server.count == 2
        assert len(_files(tmp_path)) == 2

    def test_model_change_misses(self, judge_server: JudgeServer, tmp_path: Path) -> None:
        """Another model of the same family is another judge."""
        case = wire_cases(judge_server.url)["anthropic"]
        judge_server.script(Scripted(body=case.ok("1")), Scripted(body=case.ok("2")))
        for model in ("claude-a", "claude-b"):
            client = make_client(
                f"anthropic:messages:{model}", env=case.env, base_url=case.base_url, cache_dir=tmp_path
            )
            reply = client.complete(PROMPT)
        assert (reply.text, reply.cached, judge_server.count) == ("2", False, 2)

    def test_base_url_change_misses(self, judge_server: JudgeServer, tmp_path: Path) -> None:
        """Another server is another judge, even when it answers for the same model name."""
        case = wire_cases(judge_server.url)["openai"]
        judge_server.script(Scripted(body=case.ok("1")), Scripted(body=case.ok("2")))
        port = judge_server.url.rsplit(":", 1)[1]
        for base in (f"http://127.0.0.1:{port}/v1", f"http://localhost:{port}/v1"):
            reply = make_client(case.provider_id, env=case.env, cache_dir=tmp_path, base_url=base).complete(
                PROMPT
            )
            assert not reply.cached
        assert judge_server.count == 2

    def test_provider_family_is_part_of_the_key(self, judge_server: JudgeServer, tmp_path: Path) -> None:
        """The same model name under two families does not share replies."""
        cases = wire_cases(judge_server.url)
        judge_server.script(Scripted(body=cases["anthropic"].ok("a")), Scripted(body=cases["openai"].ok("o")))
        env = {**cases["anthropic"].env, **cases["openai"].env}
        for family in ("anthropic:messages", "openai:chat"):  # both at one server: only the family differs
            client = make_client(f"{family}:same", env=env, base_url=judge_server.url, cache_dir=tmp_path)
            reply = client.complete(PROMPT)
        assert (reply.text, reply.cached) == ("o", False)


class TestFailuresAreNotCached:
    """Only a successful reply is remembered; the next call after a failure asks again."""

    @pytest.mark.parametrize(
        "failure",
        [Scripted(500, {"error": "boom"}), Scripted(401, {"error": "bad key"}), Scripted(raw=b"not json")],
        ids=["500", "401", "malformed"],
    )
    def test_failed_call_leaves_no_file(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path, failure: Scripted
    ) -> None:
        """After a JudgeError the cache is empty and the same request goes to the server again."""
        judge_server.script(*[failure] * (1 if failure.status == 401 else 2))  # 401 is not retried
        client = _client(wire_case, tmp_path, max_retries=1)
        with pytest.raises(JudgeError):
            client.complete(PROMPT)
        assert _files(tmp_path) == []
        before = judge_server.count
        judge_server.script(Scripted(body=wire_case.ok("now fine")))
        reply = client.complete(PROMPT)
        assert (reply.text, reply.cached, judge_server.count) == ("now fine", False, before + 1)


class TestOnlyAcceptedRepliesAreCached:
    """``accept`` decides what is kept: a reply the caller cannot use is asked for again (issue 8)."""

    def test_refused_reply_is_not_cached(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """A reply accept() refuses leaves no file; the same request goes to the server again."""
        judge_server.script(Scripted(body=wire_case.ok("not json")), Scripted(body=wire_case.ok("{}")))
        client = _client(wire_case, tmp_path)
        first = client.complete(PROMPT, accept=lambda text: text.startswith("{"))
        assert (first.text, first.cached) == ("not json", False)
        assert _files(tmp_path) == []
        second = client.complete(PROMPT, accept=lambda text: text.startswith("{"))
        assert (second.text, second.cached, judge_server.count) == ("{}", False, 2)
        assert len(_files(tmp_path)) == 1

    def test_accepted_reply_is_cached(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """A reply accept() takes is served from disk next time, with accept() asked again."""
        judge_server.script(Scripted(body=wire_case.ok("good")))
        client = _client(wire_case, tmp_path)
        seen: list[str] = []
        client.complete(PROMPT, accept=lambda text: seen.append(text) is None)
        again = client.complete(PROMPT, accept=lambda text: seen.append(text) is None)
        assert (again.text, again.cached, judge_server.count, seen) == ("good", True, 1, ["good", "good"])

    def test_refused_cache_entry_is_a_miss_and_removed(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """An entry cached without accept (an older run) that accept() refuses is asked again and removed."""
        judge_server.script(Scripted(body=wire_case.ok("stale")), Scripted(body=wire_case.ok("still bad")))
        client = _client(wire_case, tmp_path)
        client.complete(PROMPT)
        assert len(_files(tmp_path)) == 1
        reply = client.complete(PROMPT, accept=lambda text: False)
        assert (reply.text, reply.cached, judge_server.count) == ("still bad", False, 2)
        assert _files(tmp_path) == []

    def test_replay_ignores_accept(self) -> None:
        """The replay client takes the argument (the JudgeClient protocol) and never calls it."""
        fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "judge_client" / "replay.yaml"
        client = make_client(f"replay:{fixtures}")
        key = next(iter(yaml.safe_load(fixtures.read_text(encoding="utf-8"))))["key"]
        called: list[str] = []
        client.complete("p", fixture_key=key, accept=lambda text: called.append(text) is None)
        assert called == []


class TestLayout:
    """One JSON file per key, named by the key, holding the request fields and the reply."""

    def test_file_is_named_by_the_documented_key(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """sha256 of canonical JSON of {provider, model, base_url, temperature, max_tokens, system, prompt}."""
        judge_server.script(Scripted(body=wire_case.ok("x")))
        client = _client(wire_case, tmp_path)
        reply = client.complete(PROMPT, system="sys")
        fields = {
            "provider": wire_case.kind,
            "model": wire_case.model,
            "base_url": client.base_url,
            "temperature": 0.0,
            "max_tokens": 4096,
            "system": "sys",
            "prompt": PROMPT,
        }
        [path] = _files(tmp_path)
        assert path.name == f"{cache_key(fields)}.json"
        envelope = json.loads(path.read_text(encoding="utf-8"))  # sealed: grounding_eval.user_cache
        assert (envelope["kind"], envelope["name"]) == ("judge-reply", cache_key(fields))
        record = unseal("judge-reply", cache_key(fields), path.read_bytes())
        assert record["format"] == 2
        assert record["key"] == cache_key(fields)
        assert record["request"] == fields
        assert record["reply"] == {"text": "x", "raw": reply.raw, "request_id": reply.request_id}
        assert record["created_at"].endswith("Z")

    def test_cache_dir_is_created(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """A missing cache directory (and its parents) is created when the client is built."""
        target = tmp_path / "a" / "b"
        _client(wire_case, target)
        assert target.is_dir()

    def test_no_temporary_files_are_left(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """Only final files remain after writes."""
        judge_server.script(*[Scripted(body=wire_case.ok(str(i))) for i in range(3)])
        client = _client(wire_case, tmp_path)
        for i in range(3):
            client.complete(f"{PROMPT} {i}")
        assert [p.suffix for p in _files(tmp_path)] == [".json"] * 3


class TestSecretsOnDisk:
    """API keys never reach a cache file, even when a server echoes them."""

    def test_key_never_in_cache_files(self, judge_server: JudgeServer, tmp_path: Path) -> None:
        """Every family, a reply echoing the key in text and in another field: no file holds a key."""
        for case in wire_cases(judge_server.url).values():
            body = case.ok(f"echo {case.key}")
            body["echo"] = {"headers": {case.key_header: case.key_value}}
            judge_server.script(Scripted(body=body, headers={"x-request-id": case.key}))
            _client(case, tmp_path).complete(PROMPT, system="sys")
        files = _files(tmp_path)
        assert len(files) == 3
        blob = b"".join(p.read_bytes() for p in files)
        for key in FAKE_KEYS.values():
            assert key.encode() not in blob
        assert b"[REDACTED]" in blob


class TestDamagedCache:
    """A bad cache file costs one more call, never an error."""

    def _fill(self, case: WireCase, server: JudgeServer, cache_dir: Path) -> Path:
        server.script(Scripted(body=case.ok("first")))
        _client(case, cache_dir).complete(PROMPT)
        [path] = _files(cache_dir)
        return path

    @pytest.mark.parametrize(
        "damage",
        [
            b"",
            b'{"format": 1, "reply": {"te',
            b"\xff\xfe",
            b"[]",
            b'{"format": 99}',
        ],
        ids=["empty", "truncated", "not-utf8", "list", "future-format"],
    )
    def test_unreadable_file_is_a_miss_and_is_rewritten(
        self,
        wire_case: WireCase,
        judge_server: JudgeServer,
        tmp_path: Path,
        damage: bytes,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """The call goes to the server and the file is replaced by a good one."""
        path = self._fill(wire_case, judge_server, tmp_path)
        path.write_bytes(damage)
        judge_server.script(Scripted(body=wire_case.ok("second")))
        with caplog.at_level(logging.WARNING, logger="grounding_eval.judge.cache"):
            reply = _client(wire_case, tmp_path).complete(PROMPT)
        assert (reply.text, reply.cached) == ("second", False)
        assert "judge cache: ignoring" in caplog.text
        assert _client(wire_case, tmp_path).complete(PROMPT).text == "second"

    def test_file_for_another_request_is_a_miss(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """A file whose stored request is not this one (copied, renamed) does not answer."""
        path = self._fill(wire_case, judge_server, tmp_path)
        envelope = json.loads(path.read_text(encoding="utf-8"))
        record = json.loads(envelope["body"])
        record["request"]["prompt"] = "something else"
        path.write_text(
            str(seal(envelope["kind"], envelope["name"], record)), encoding="utf-8"
        )  # sealed here
        judge_server.script(Scripted(body=wire_case.ok("fresh")))
        assert _client(wire_case, tmp_path).complete(PROMPT).text == "fresh"

    def test_write_failure_still_returns_the_reply(
        self,
        wire_case: WireCase,
        judge_server: JudgeServer,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """A full disk loses the cache entry, not the judgment; the temporary file is removed."""

        def refuse(src: str, dst: str) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", refuse)
        judge_server.script(Scripted(body=wire_case.ok("kept")))
        with caplog.at_level(logging.WARNING, logger="grounding_eval.judge.cache"):
            reply = _client(wire_case, tmp_path).complete(PROMPT)
        assert reply.text == "kept"
        assert "could not write" in caplog.text
        assert _files(tmp_path) == []


class TestConcurrentWriters:
    """Parallel writers of one key never expose a partial file."""

    def test_readers_see_nothing_or_a_whole_entry(self, tmp_path: Path) -> None:
        """Writers and readers race on one key; every read is a miss or a complete entry."""
        cache = ReplyCache(tmp_path)
        fields = {"provider": "openai", "model": "m", "prompt": "p"}
        big = "x" * 200_000  # large enough that a non-atomic write would be seen half done
        seen: list[CacheEntry | None] = []
        errors: list[BaseException] = []

        def write(n: int) -> None:
            try:
                for i in range(20):
                    cache.put(fields, text=f"{n}-{i}-{big}", raw={"n": n}, request_id=None)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        def read() -> None:
            for _ in range(200):
                seen.append(cache.get(fields))

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=read) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        for entry in seen:
            assert entry is None or (entry.text.endswith(big) and entry.raw is not None)
        assert [p.suffix for p in _files(tmp_path)] == [".json"]
