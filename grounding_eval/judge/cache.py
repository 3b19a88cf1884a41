"""On-disk cache of judge replies worth keeping, safe to share between parallel promptfoo processes.

What is worth keeping is the caller's decision: the client stores a successful reply only if the caller
accepts it (the rubric judge: only replies that parse against the rubric), so a reply that failed the
schema is asked for again on a re-run, never served from here (see ``HostJudgeClient.complete``).

A judgment at temperature 0 is as close to a pure function of (provider, model, base URL, parameters,
rendered prompt) as an API allows, and a re-run of an evaluation should neither pay for nor wait on the
same judgments twice. promptfoo runs each Python assertion in its own process, many at once, so the cache
is one JSON file per key, written to a temporary file and moved into place with :func:`os.replace`: a
reader sees the whole old file, the whole new one, or none — never half of one. No locks are needed; two
processes that miss the same key at the same moment both ask the judge and the last writer wins.

Layout: ``<cache_dir>/<sha256 of the request fields>.json``, a sealed entry
(:mod:`grounding_eval.user_cache`) whose body is ``{"format", "key", "request", "reply", "created_at"}``.
``request`` repeats the fields the key was computed from (so a file can be read and audited on its own,
and a read checks it really answers the request); ``reply`` holds the text, the provider's response JSON
and its request id. API keys are never among the fields.

A reply read back decides a verdict as a model's would, and the key is computable by anyone who can
render the same prompt, so an entry is used only if it is sealed with this user's secret: one planted in
a study's folder or in a folder a config names as ``cache_dir``, copied from another machine or edited
is a miss (one more call to the judge). The default folder is the user's, never the study's
(:func:`grounding_eval.user_cache.cache_root`). A prompt holding a lone surrogate has a key too (its
code point is hashed as it is).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from grounding_eval.user_cache import cache_root, read_sealed, write_sealed

__all__ = ["CacheEntry", "ReplyCache", "cache_key", "default_cache_dir"]

_FORMAT: Final = 2  # bump when the file layout changes: older files then read as misses (2: sealed)
_KIND: Final = "judge-reply"
_log = logging.getLogger(__name__)


def _canonical(fields: Mapping[str, Any]) -> bytes:
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")  # (a lone surrogate is hashed as it is, never an error)


def default_cache_dir() -> Path:
    """``judge/`` in the user's cache folder (``~/.cache/grounding-eval/judge``): where the judges keep
    replies unless a config names ``cache_dir``."""
    return cache_root() / "judge"


def cache_key(fields: Mapping[str, Any]) -> str:
    """Return the sha256 hex digest of ``fields`` as canonical JSON (sorted keys, no spaces, UTF-8).

    Args:
        fields: Everything that decides the reply: provider, model, base_url, temperature, max_tokens,
            system, prompt. Values must be JSON-serialisable; ``0`` and ``0.0`` hash differently, so the
            caller normalises numbers first.
    """
    return hashlib.sha256(_canonical(fields)).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """A cached successful reply."""

    text: str
    raw: dict[str, Any] | None
    request_id: str | None
    created_at: str


class ReplyCache:
    """A directory of cached replies (see the module docstring for the layout)."""

    def __init__(self, directory: Path) -> None:
        """Use ``directory``, which the caller has already created."""
        self.directory = directory

    def path(self, key: str) -> Path:
        """Return the file that holds (or would hold) the reply for ``key``."""
        return self.directory / f"{key}.json"

    def get(self, fields: Mapping[str, Any]) -> CacheEntry | None:
        """Return the cached reply for ``fields``, or ``None``.

        A missing, unreadable, truncated or foreign file is a miss, never an error: the worst a damaged
        cache may cost is one more call to the judge.
        """
        key = cache_key(fields)
        path = self.path(key)
        if not path.exists():
            return None
        entry = _entry(read_sealed(path, _KIND, key), fields)
        if entry is None:
            _log.warning(
                "judge cache: ignoring %s (not a sealed format-%d entry for this request)", path, _FORMAT
            )
        return entry

    def put(
        self, fields: Mapping[str, Any], *, text: str, raw: dict[str, Any] | None, request_id: str | None
    ) -> None:
        """Store a successful reply for ``fields`` atomically; a failure to write is logged, not raised.

        The reply is already in hand when this runs, so a full disk must not turn it into a failed call.
        """
        key = cache_key(fields)
        record = {
            "format": _FORMAT,
            "key": key,
            "request": dict(fields),
            "reply": {"text": text, "raw": raw, "request_id": request_id},
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        }
        if not write_sealed(self.path(key), _KIND, key, record):
            _log.warning("judge cache: could not write %s", self.path(key))

    def discard(self, fields: Mapping[str, Any]) -> None:
        """Remove the entry for ``fields``, if there is one; a failure is logged, not raised.

        Another process may be rewriting the same key at that moment and lose its new file: that costs
        one more call to the judge, never a half-written file.
        """
        path = self.path(cache_key(fields))
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            _log.warning("judge cache: could not remove %s (%s)", path, exc)


def _entry(data: Any, fields: Mapping[str, Any]) -> CacheEntry | None:
    """Return the entry in a parsed cache file if it is well formed and answers ``fields``."""
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    # Compare the stored request, not just the file name: a copied or renamed file must not answer.
    if not isinstance(data.get("request"), dict) or _canonical(data["request"]) != _canonical(fields):
        return None
    reply = data.get("reply")
    if not isinstance(reply, dict) or not isinstance(reply.get("text"), str):
        return None
    raw, request_id, created = reply.get("raw"), reply.get("request_id"), data.get("created_at")
    return CacheEntry(
        text=reply["text"],
        raw=raw if isinstance(raw, dict) else None,
        request_id=request_id if isinstance(request_id, str) else None,
        created_at=created if isinstance(created, str) else "",
    )
