"""The judges' reply cache (grounding_eval/judge/cache.py) as a live judge uses it: one JSON file per request,
named by its documented key, and a damaged or foreign file is a miss, never an error.

The judge here is :class:`~grounding_eval.judge.host.HostJudgeClient` with a stand-in for promptfoo's side of
the channel (what it was asked, what it answers); the real channel is driven in tests/test_worker.py and
the end-to-end tests.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.cache import CacheEntry, ReplyCache, cache_key
from grounding_eval.judge.host import HostJudgeClient, Judge, hosting
from grounding_eval.user_cache import read_sealed, write_sealed

PROMPT = "Grade this answer."
JUDGE = Judge("openai:chat:m", "live", "config.provider", ref="r1", host="127.0.0.1:9", digest="d1")


class Answering:
    """promptfoo's side: each model call answered with the next text, and counted."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.asked = 0

    def ask(self, request: Any) -> Any:
        self.asked += 1
        return {"output": self.texts.pop(0), "token_usage": {"prompt": 3, "completion": 1, "total": 4}}


def _client(cache_dir: Path) -> HostJudgeClient:
    return HostJudgeClient(JUDGE, cache_dir=cache_dir, deadline_s=30.0)


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file())


class TestLayout:
    def test_file_is_named_by_the_documented_key(self, tmp_path: Path) -> None:
        """sha256 of canonical JSON of {transport, provider (its label), config_sha256 (its digest, secrets
        replaced), system, prompt}: no key, no URL, no header."""
        with hosting(Answering("x")):
            _client(tmp_path).complete(PROMPT, system="sys")
        fields = {"transport": "promptfoo", "provider": "openai:chat:m", "config_sha256": "d1", "system": "sys",
                  "prompt": PROMPT}  # fmt: skip
        [path] = _files(tmp_path)
        assert path.name == f"{cache_key(fields)}.json"
        record = read_sealed(path, "judge-reply", cache_key(fields))  # sealed with this user's secret
        assert (record["format"], record["key"], record["request"]) == (2, cache_key(fields), fields)
        assert record["reply"]["text"] == "x" and record["created_at"].endswith("Z")

    def test_cache_dir_is_created(self, tmp_path: Path) -> None:
        target = tmp_path / "a" / "b"
        _client(target)
        assert target.is_dir()

    def test_no_temporary_files_are_left(self, tmp_path: Path) -> None:
        with hosting(Answering("0", "1", "2")):
            for i in range(3):
                _client(tmp_path).complete(f"{PROMPT} {i}")
        assert [p.suffix for p in _files(tmp_path)] == [".json"] * 3


class TestDamagedCache:
    """A bad cache file costs one more call, never an error."""

    def _fill(self, cache_dir: Path) -> Path:
        with hosting(Answering("first")):
            _client(cache_dir).complete(PROMPT)
        [path] = _files(cache_dir)
        return path

    @pytest.mark.parametrize(
        "damage",
        [b"", b'{"format": 1, "reply": {"te', b"\xff\xfe", b"[]", b'{"format": 99}'],
        ids=["empty", "truncated", "not-utf8", "list", "future-format"],
    )
    def test_unreadable_file_is_a_miss_and_is_rewritten(
        self, tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture
    ) -> None:
        path = self._fill(tmp_path)
        path.write_bytes(damage)
        channel = Answering("second")
        with hosting(channel), caplog.at_level(logging.WARNING, logger="grounding_eval.judge.cache"):
            reply = _client(tmp_path).complete(PROMPT)
            again = _client(tmp_path).complete(PROMPT)
        assert (reply.text, reply.cached, again.text, again.cached, channel.asked) == (
            "second",
            False,
            "second",
            True,
            1,
        )
        assert "judge cache: ignoring" in caplog.text

    def test_file_for_another_request_is_a_miss(self, tmp_path: Path) -> None:
        """A file whose stored request is not this one (copied, renamed) does not answer."""
        path = self._fill(tmp_path)
        key = path.name.removesuffix(".json")
        record = read_sealed(path, "judge-reply", key)
        record["request"]["prompt"] = "something else"
        assert write_sealed(path, "judge-reply", key, record)  # sealed by this user: only the request differs
        with hosting(Answering("fresh")):
            assert _client(tmp_path).complete(PROMPT).text == "fresh"

    def test_write_failure_still_returns_the_reply(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A full disk loses the cache entry, not the judgment; the temporary file is removed."""

        def refuse(src: str, dst: str) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", refuse)
        with (
            hosting(Answering("kept")),
            caplog.at_level(logging.WARNING, logger="grounding_eval.judge.cache"),
        ):
            assert _client(tmp_path).complete(PROMPT).text == "kept"
        assert "could not write" in caplog.text and _files(tmp_path) == []


def test_parallel_writers_of_one_key_never_expose_a_partial_file(tmp_path: Path) -> None:
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
    assert all(entry is None or (entry.text.endswith(big) and entry.raw is not None) for entry in seen)
    assert [p.suffix for p in _files(tmp_path)] == [".json"]
