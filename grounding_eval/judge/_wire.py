"""The three judge wire formats (Anthropic Messages, OpenAI Chat Completions, Gemini generateContent).

Each format is three pure functions: one builds the HTTP request for a prompt, one pulls the reply text
out of the response JSON, and one reads the tokens the response says it spent. Keeping them free of I/O
lets the client share one retry loop and one cache across providers, and lets a test check each format's
exact request body without a server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, TypeGuard
from urllib.parse import quote

__all__ = [
    "ANTHROPIC_VERSION",
    "WIRES",
    "MalformedReply",
    "TokenCounts",
    "WireFormat",
    "WireKind",
    "WireRequest",
]

ANTHROPIC_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` header; the Messages API is stable under it."""

WireKind = Literal["anthropic", "openai", "google"]


class MalformedReply(ValueError):
    """A 2xx response whose JSON does not hold reply text where the format puts it."""


class TokenCounts(NamedTuple):
    """The tokens one response says it spent (all new: a provider-side prompt cache is not told apart)."""

    prompt: int
    completion: int
    total: int


@dataclass(frozen=True)
class WireRequest:
    """One HTTP POST, ready to send (the body is JSON-serialisable)."""

    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


@dataclass(frozen=True)
class WireFormat:
    """How one provider family is addressed, authenticated, asked and answered.

    Attributes:
        kind: The provider family, as reported in ``JudgeReply.provider``.
        key_envs: Environment variables that may hold the API key, in order of preference.
        default_base: Base URL used when the client is given none. No environment variable changes
            it: ``*_BASE_URL`` belongs to promptfoo's generation providers, not to the judge.
        build: ``(base_url, api_key, model, prompt, system, temperature, max_tokens) -> WireRequest``.
        extract: Response JSON → reply text; raises :class:`MalformedReply`.
        usage: Response JSON → the tokens it reports, or ``None`` when they are missing or malformed
            (never raises: a reply without counts is still a reply).
        request_id_header: Response header carrying the provider's request id, if it sends one.
        request_id_field: Top-level response JSON field used when the header is absent.
        max_temperature: The highest temperature the API accepts.
    """

    kind: WireKind
    key_envs: tuple[str, ...]
    default_base: str
    build: Callable[[str, str, str, str, str | None, float, int], WireRequest]
    extract: Callable[[Any], str]
    usage: Callable[[Any], TokenCounts | None]
    request_id_header: str | None
    request_id_field: str
    max_temperature: float

    def request_id(self, headers: Mapping[str, str], payload: Any) -> str | None:
        """Return the provider's id for this response (header first, then the JSON field), if any."""
        if self.request_id_header is not None:
            value = headers.get(self.request_id_header)
            if value:
                return value
        field = payload.get(self.request_id_field) if isinstance(payload, dict) else None
        return field if isinstance(field, str) and field else None


_JSON: Final = {"content-type": "application/json"}


# --- Anthropic Messages ---------------------------------------------------------------------------------


def _anthropic_request(
    base: str, key: str, model: str, prompt: str, system: str | None, temperature: float, max_tokens: int
) -> WireRequest:
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "temperature": temperature}
    if system is not None:
        body["system"] = system
    body["messages"] = [{"role": "user", "content": prompt}]
    headers = {**_JSON, "x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
    return WireRequest(f"{base}/v1/messages", headers, body)


def _anthropic_text(payload: Any) -> str:
    content = _field(payload, "content", list)
    texts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                raise MalformedReply("a text block without a text string")
            texts.append(block["text"])
    if not texts:  # e.g. only tool_use or thinking blocks: nothing a rubric parser could read
        raise MalformedReply("no text block in content")
    return "".join(texts)


def _anthropic_usage(payload: Any) -> TokenCounts | None:
    # No total is sent; input_tokens leaves out prompt-cache reads and writes (counted apart by Anthropic).
    return _counts(payload, "usage", "input_tokens", "output_tokens", None)


# --- OpenAI Chat Completions (and any compatible server) ------------------------------------------------


def _openai_request(
    base: str, key: str, model: str, prompt: str, system: str | None, temperature: float, max_tokens: int
) -> WireRequest:
    messages = [{"role": "system", "content": system}] if system is not None else []
    messages.append({"role": "user", "content": prompt})
    body = {"model": model, "temperature": temperature, "max_tokens": max_tokens, "messages": messages}
    return WireRequest(f"{base}/chat/completions", {**_JSON, "authorization": f"Bearer {key}"}, body)


def _openai_text(payload: Any) -> str:
    choices = _field(payload, "choices", list)
    if not choices:
        raise MalformedReply("choices is empty")
    message = _field(choices[0], "message", dict)
    # content is null when the model refused (``refusal``) or only called tools.
    text: str = _field(message, "content", str)
    return text


def _openai_usage(payload: Any) -> TokenCounts | None:
    return _counts(payload, "usage", "prompt_tokens", "completion_tokens", "total_tokens")


# --- Google Gemini generateContent ----------------------------------------------------------------------


def _google_request(
    base: str, key: str, model: str, prompt: str, system: str | None, temperature: float, max_tokens: int
) -> WireRequest:
    body: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    body["generationConfig"] = {"temperature": temperature, "maxOutputTokens": max_tokens}
    # The key goes in a header, never the query string, so it cannot leak through a logged URL.
    url = f"{base}/v1beta/models/{quote(model, safe='-._~')}:generateContent"
    return WireRequest(url, {**_JSON, "x-goog-api-key": key}, body)


def _google_text(payload: Any) -> str:
    candidates = _field(payload, "candidates", list)  # absent when the prompt itself was blocked
    if not candidates:
        raise MalformedReply("candidates is empty")
    # A candidate stopped for safety has no content: that is a failed call, not an empty judgment.
    parts = _field(_field(candidates[0], "content", dict), "parts", list)
    texts = []
    for part in parts:
        if not isinstance(part, dict) or part.get("thought") is True:
            continue  # thought summaries are the model's scratchpad, not its answer
        if "text" in part:
            if not isinstance(part["text"], str):
                raise MalformedReply("a part whose text is not a string")
            texts.append(part["text"])
    if not texts:
        raise MalformedReply("no text part in candidates[0].content.parts")
    return "".join(texts)


def _google_usage(payload: Any) -> TokenCounts | None:
    # totalTokenCount also holds thinking tokens (thoughtsTokenCount), which candidatesTokenCount leaves out.
    return _counts(payload, "usageMetadata", "promptTokenCount", "candidatesTokenCount", "totalTokenCount")


# --- shared ---------------------------------------------------------------------------------------------


def _field(obj: Any, name: str, kind: type[Any]) -> Any:
    """Return ``obj[name]`` if ``obj`` is a JSON object holding a value of ``kind`` there."""
    if not isinstance(obj, dict):
        raise MalformedReply(f"expected a JSON object holding {name!r}")
    value = obj.get(name)
    if not isinstance(value, kind):
        found = "missing" if value is None else type(value).__name__
        raise MalformedReply(f"{name!r} is {found}, expected {kind.__name__}")
    return value


def _counts(
    payload: Any, section: str, prompt: str, completion: str, total: str | None
) -> TokenCounts | None:
    """Read ``payload[section]``'s prompt, completion and total token counts.

    Each count must be a whole number ≥ 0, and the total no smaller than its parts; anything else is
    ``None``, so a garbled count reads as unknown rather than as tokens never spent. The total is the
    sum of the parts when the format has none (Anthropic) or the response leaves it out (some
    OpenAI-compatible servers).
    """
    usage = payload.get(section) if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return None
    p, c = usage.get(prompt), usage.get(completion)
    t = usage.get(total) if total is not None else None
    if not (_is_count(p) and _is_count(c)):
        return None
    if t is None:
        t = p + c
    return TokenCounts(p, c, t) if _is_count(t) and t >= p + c else None


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


WIRES: Final[Mapping[WireKind, WireFormat]] = {
    "anthropic": WireFormat(
        kind="anthropic",
        key_envs=("ANTHROPIC_API_KEY",),
        default_base="https://api.anthropic.com",
        build=_anthropic_request,
        extract=_anthropic_text,
        usage=_anthropic_usage,
        request_id_header="request-id",
        request_id_field="id",
        max_temperature=1.0,
    ),
    "openai": WireFormat(
        kind="openai",
        key_envs=("OPENAI_API_KEY",),
        default_base="https://api.openai.com/v1",
        build=_openai_request,
        extract=_openai_text,
        usage=_openai_usage,
        request_id_header="x-request-id",
        request_id_field="id",
        max_temperature=2.0,
    ),
    "google": WireFormat(
        kind="google",
        key_envs=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        default_base="https://generativelanguage.googleapis.com",
        build=_google_request,
        extract=_google_text,
        usage=_google_usage,
        request_id_header=None,
        request_id_field="responseId",
        max_temperature=2.0,
    ),
}
