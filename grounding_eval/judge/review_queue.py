"""The judges' review queue: a JSONL file of judgments that could not be scored, each appended once.

A judge reply that fails validation twice is not a score; the item goes here for a person, with the
rendered prompt, every raw reply and the validation errors. Every judge of the pack (the rubric judge,
the factual-accuracy judge, the docs-QA grader) writes through :func:`enqueue_review`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, BinaryIO

try:
    import fcntl
except ImportError:  # Windows: the review queue is appended without a lock (see enqueue_review)
    fcntl = None  # type: ignore[assignment]

__all__ = ["enqueue_review", "review_entry_id"]


# What makes two review-queue entries the same: the item, the rubric and prompt it was judged with, the
# judge, and what the judge replied. Not the timestamp, nor whether a reply came from the cache.
_ENTRY_FIELDS = (
    "fixture_key", "rubric_id", "rubric_version", "prompt_version", "provider", "model",
    "answer_sha256", "rendered_prompt", "raw_replies", "errors",
)  # fmt: skip


def review_entry_id(record: dict[str, Any]) -> str:
    """The review-queue key of ``record``: SHA-256 of its identifying fields (:data:`_ENTRY_FIELDS`)."""
    fields = {name: record.get(name) for name in _ENTRY_FIELDS}
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def enqueue_review(path: Path, record: dict[str, Any]) -> bool:
    """Append ``record`` (which carries its ``entry_id``) to the JSONL queue unless it is there already.

    Returns whether it was appended.

    promptfoo runs assertions in parallel processes, so two may queue the same item at once. The check
    and the append happen under an exclusive ``flock`` on the queue file, so processes on one machine
    never append the same ``entry_id`` twice, and lines never interleave. A line cut short by a crash is
    closed with a newline before the next one is written, so it spoils only itself. Limits: the lock is
    advisory (another program appending without it is not excluded), may not hold across machines on a
    network file system, and where ``fcntl`` does not exist (Windows) is skipped: there two racing
    processes can each append the entry once. Budget: one read of the queue per unscored item (the
    queue holds only unscored items).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # A lone surrogate (possible in model output) can only sit inside a JSON string, where
    # backslashreplace writes it as the JSON escape "\udc80": valid UTF-8 that reads back the same.
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
    # json.dumps escapes every quote inside a string, so this exact text occurs only as the key itself.
    marker = json.dumps({"entry_id": record["entry_id"]})[1:-1].encode("utf-8")
    with path.open("ab+") as handle:  # append mode: every write lands at the end, whatever was read
        _lock(handle)
        try:
            handle.seek(0)
            if _contains(handle, marker):
                return False
            end = handle.seek(0, os.SEEK_END)
            if end:
                handle.seek(end - 1)
                if handle.read(1) != b"\n":
                    line = b"\n" + line
            handle.write(line)
            handle.flush()
        finally:
            _unlock(handle)
    return True


def _contains(handle: BinaryIO, marker: bytes, chunk: int = 1 << 20) -> bool:
    """Whether the file holds ``marker``, read in chunks that overlap by the marker's length."""
    tail = b""
    while block := handle.read(chunk):
        window = tail + block
        if marker in window:
            return True
        tail = window[-(len(marker) - 1) :] if len(marker) > 1 else b""
    return False


def _lock(handle: BinaryIO) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def _unlock(handle: BinaryIO) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
