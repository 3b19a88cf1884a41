"""A stand-in model API on 127.0.0.1 for end-to-end runs through promptfoo's own providers.

It speaks the wire formats promptfoo's providers use — Ollama's ``POST /api/chat``, OpenAI's
``POST /v1/chat/completions``, Anthropic's ``POST /v1/messages``, Google AI Studio's
``POST /v1beta/models/MODEL:generateContent`` and a plain JSON endpoint ``POST /judge`` (``{"prompt"}`` in,
``{"text", "usage"}`` out) for promptfoo's ``http`` provider — and answers each request with
``respond(prompt_text)``, where ``prompt_text`` is every message's content joined by blank lines.
Token counts are reported as each format does (``prompt_eval_count`` / ``eval_count``, ``usage``),
computed from the lengths (a quarter of the characters, at least 1), and every request is recorded so a
test can compare what promptfoo added up with what was served. Nothing leaves the loopback interface.

:class:`RecordedJudge` is a ``respond`` that serves recorded judge replies (the sample's fixtures) to the
prompt that holds the answer they were recorded for: a live judge that gives the recorded verdicts.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml


@dataclass(frozen=True)
class Served:
    """One request the stand-in answered."""

    path: str
    model: str | None
    prompt: str
    reply: str
    prompt_tokens: int
    completion_tokens: int


def _text(content: object) -> str:
    """The text of a message's content: a string, or a list of ``{"text": …}`` blocks or parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return ""


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ModelStandin:
    """The server (see the module docstring); ``url`` is its base, ``served`` what it answered."""

    def __init__(self, respond: Callable[[str], str]) -> None:
        self.respond = respond
        self.served: list[Served] = []
        self._lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                path = self.path.split("?")[0]
                model = body.get("model")
                if path.endswith("/api/chat") or path.endswith("/chat/completions"):
                    prompt = "\n\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
                elif path.endswith("/v1/messages"):  # Anthropic's: content a string or a list of blocks
                    parts = [
                        body.get("system") or "",
                        *(m.get("content") or "" for m in body.get("messages") or []),
                    ]
                    prompt = "\n\n".join(_text(p) for p in parts)
                elif path.endswith(":generateContent"):  # Google AI Studio's (Gemini): the model in the path
                    model = path.rsplit("/", 1)[-1].split(":")[0]
                    contents = [body.get("systemInstruction") or {}, *(body.get("contents") or [])]
                    prompt = "\n\n".join(_text(c.get("parts") or []) for c in contents)
                else:  # promptfoo sends a chat as a JSON list of messages in {{prompt}}
                    given = body.get("prompt")
                    prompt = given if isinstance(given, str) else ""
                    try:  # as text, or already parsed by promptfoo's body template
                        messages = given if isinstance(given, list) else json.loads(prompt)
                    except ValueError:
                        messages = None
                    if isinstance(messages, list):
                        prompt = "\n\n".join(
                            str(m.get("content") or "") for m in messages if isinstance(m, dict)
                        )
                reply = standin.respond(prompt)
                p, c = tokens(prompt), tokens(reply)
                with standin._lock:
                    standin.served.append(Served(path, model, prompt, reply, p, c))
                if path.endswith("/api/chat"):
                    out: dict[str, Any] = {"model": model, "message": {"role": "assistant", "content": reply},
                                           "done": True, "prompt_eval_count": p, "eval_count": c}  # fmt: skip
                elif path.endswith("/v1/messages"):
                    out = {"id": f"standin-{len(standin.served)}", "type": "message", "role": "assistant", "model": model,
                           "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn",
                           "stop_sequence": None, "usage": {"input_tokens": p, "output_tokens": c}}  # fmt: skip
                elif path.endswith(":generateContent"):
                    out = {"candidates": [{"content": {"role": "model", "parts": [{"text": reply}]}, "finishReason": "STOP",
                                           "index": 0}],
                           "usageMetadata": {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c},
                           "modelVersion": model}  # fmt: skip
                elif path.endswith("/chat/completions"):
                    out = {"id": f"standin-{len(standin.served)}", "object": "chat.completion", "model": model,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                        "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}  # fmt: skip
                else:
                    out = {"text": reply, "usage": {"prompt": p, "completion": c, "total": p + c}}
                data = json.dumps(out).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def tokens_served(self) -> dict[str, int]:
        p = sum(s.prompt_tokens for s in self.served)
        c = sum(s.completion_tokens for s in self.served)
        return {"prompt": p, "completion": c, "total": p + c, "requests": len(self.served)}

    @contextmanager
    def running(self) -> Iterator[ModelStandin]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


_WORDS = re.compile(r"[A-Za-z]{3,}")


class RecordedJudge:
    """Recorded judge replies served to the prompt that holds the answer each was recorded for.

    ``recordings`` is a replay file (``[{key, answer_sha256, replies}]``); ``answers`` maps each key to
    the answer text it judged. A prompt is matched by the answer's words (the judge's prompt neutralizes
    delimiters, never words); the n-th prompt for a key gets its n-th reply, as a replay judge does.
    """

    def __init__(self, recordings: list[Mapping[str, Any]], answers: Mapping[str, str]) -> None:
        self._replies = {str(r["key"]): [str(x) for x in r["replies"]] for r in recordings}
        self._marks = {
            key: " ".join(_WORDS.findall(answers[key])[:40]) for key in self._replies if key in answers
        }
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self.unmatched = 0

    @classmethod
    def from_files(cls, recordings: str, answers: Mapping[str, str]) -> RecordedJudge:
        with open(recordings, encoding="utf-8") as handle:
            return cls(yaml.safe_load(handle), answers)

    def __call__(self, prompt: str) -> str:
        words = " ".join(_WORDS.findall(prompt))
        keys = [k for k, mark in self._marks.items() if mark and mark in words]
        with self._lock:
            if len(keys) != 1:
                self.unmatched += 1
                return "no recording matches this prompt"
            n = self._served.get(keys[0], 0)
            self._served[keys[0]] = n + 1
            replies = self._replies[keys[0]]
            return replies[min(n, len(replies) - 1)]
