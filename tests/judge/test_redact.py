"""Tests for grounding_eval.judge._redact: every echoed form of a key is found, ordinary text is not."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from grounding_eval.judge._redact import MIN_FORM_CHARS, REDACTED, redact, secret_pattern
from tests.judge.conftest import JudgeServer, Scripted, wire_cases

KEY = "sk-ant-api03-Zq7vL2xR9mN4tK8wB1cD6fH3jP5sY0uE"
ODD = "sk-odd+Test/KEY=0123456789:abc déf~XYZ"


def _scrub(text: str, key: str = KEY) -> str:
    result: str = redact(text, secret_pattern(key))
    return result


def _b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


FORMS = [
    ("verbatim", KEY, KEY),
    ("url-quote", ODD, quote(ODD)),
    ("url-quote-nothing-safe", ODD, quote(ODD, safe="")),
    ("url-quote-plus", ODD, quote_plus(ODD)),
    ("url-mixed-case-hex", ODD, quote(ODD, safe="").replace("%2F", "%2f").replace("%3A", "%3a")),
    ("json-escaped-slash-and-accent", ODD, json.dumps(ODD).replace("/", "\\/")[1:-1]),
    ("base64", KEY, _b64(KEY)),
    ("base64-unpadded", ODD, _b64(ODD).rstrip("=")),
    ("base64-urlsafe", ODD, base64.urlsafe_b64encode(ODD.encode()).decode()),
    ("short-dots", KEY, KEY[:5] + "..." + KEY[-4:]),
    ("short-many-dots", KEY, KEY[:3] + "......" + KEY[-3:]),
    ("short-ellipsis", KEY, KEY[:12] + "…" + KEY[-6:]),
    ("short-json-ellipsis", KEY, KEY[:12] + "\\u2026" + KEY[-6:]),
    ("short-stars", KEY, KEY[:8] + "*" * 30 + KEY[-4:]),
    ("short-prefix-only", KEY, KEY[:14] + "..."),
]


class TestForms:
    """Each form, alone and inside a sentence, becomes [REDACTED] whole."""

    @pytest.mark.parametrize(("key", "echoed"), [pytest.param(k, e, id=i) for i, k, e in FORMS])
    def test_alone(self, key: str, echoed: str) -> None:
        """The form by itself is replaced entirely."""
        assert _scrub(echoed, key) == REDACTED

    @pytest.mark.parametrize(("key", "echoed"), [pytest.param(k, e, id=i) for i, k, e in FORMS])
    def test_in_text(self, key: str, echoed: str) -> None:
        """Inside a sentence only the form is replaced."""
        assert _scrub(f'error: key "{echoed}" is invalid', key) == f'error: key "{REDACTED}" is invalid'

    @pytest.mark.parametrize("user", ["", "u", "us", "use", "user", "a-longer-user"])
    def test_basic_auth_every_alignment(self, user: str) -> None:
        """base64("user:key"): whichever byte of a 3-byte group the key starts at, it is scrubbed."""
        header = "Basic " + _b64(f"{user}:{KEY}")
        out = _scrub(header)
        assert out.count(REDACTED) == 1
        before, after = out.split(REDACTED)
        # Only the user's characters and at most one boundary character (<= 4 bits of the key) remain.
        assert len(before) <= len("Basic ") + -(-(len(user) + 1) * 4 // 3) + 1
        assert len(after) <= 3

    @given(st.binary(max_size=20), st.binary(max_size=20), st.booleans())
    def test_base64_of_key_inside_any_bytes(self, head: bytes, tail: bytes, urlsafe: bool) -> None:
        """Inside base64 of any bytes, at most one boundary character on each side of the key survives."""
        encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
        out = _scrub(encode(head + KEY.encode() + tail).decode())
        assert REDACTED in out
        before, _, after = out.partition(REDACTED)
        assert len(before) <= -(-len(head) * 4 // 3) + 1
        assert len(after.rstrip("=")) <= -(-len(tail) * 4 // 3) + 1

    def test_redacts_keys_and_nested_values(self) -> None:
        """Dicts (keys too) and lists are walked; other values are left alone."""
        value = {KEY: [f"x {quote(KEY)}", 3, None, {"k": _b64(KEY)}]}
        assert redact(value, secret_pattern(KEY)) == {REDACTED: [f"x {REDACTED}", 3, None, {"k": REDACTED}]}


class TestOrdinaryText:
    """Text that only resembles the key's forms is left as it is."""

    @pytest.mark.parametrize(
        "text",
        [
            "sk-...wxyz and sk-ant-...",  # another key's shortened echo
            KEY[:2] + "..." + KEY[-4:],  # two characters of prefix are not enough
            KEY[:5] + " ... " + KEY[-4:],  # spaces around the dots: prose, not an echo
            KEY[:7] + "…",  # a prefix alone needs eight characters
            "…" + KEY[-4:],  # an ending alone is not looked for
            _b64(KEY[:-6]),  # base64 of a different (shorter) string
        ],
    )
    def test_unchanged(self, text: str) -> None:
        """None of these is scrubbed."""
        assert _scrub(text) == text

    def test_short_keys_only_verbatim(self) -> None:
        """Below MIN_FORM_CHARS the base64 and shortened forms are not looked for (they would be noise)."""
        key = "k3y/short"
        assert len(key) < MIN_FORM_CHARS
        assert _scrub(f"{key} {quote(key, safe='')} {_b64(key)} k3y...ort", key) == (
            f"{REDACTED} {REDACTED} {_b64(key)} k3y...ort"
        )

    def test_empty_key_scrubs_nothing(self) -> None:
        """An empty secret gives no pattern and redact returns the value unchanged."""
        assert secret_pattern("") is None
        assert redact("anything", None) == "anything"

    def test_repetitive_key_does_not_backtrack(self) -> None:
        """A key that repeats itself and text built from its pieces scrub in one pass."""
        key = "a" * 40
        text = (key[:20] + "…" + "a" * 3 + "b") * 5_000
        out = _scrub(text, key)
        assert re.fullmatch(rf"(?:{re.escape(REDACTED)}b)+", out)


# --- issue 19: hex, HTML-entity, other-case and prefix-stripped echoes (tests/golden/key_echoes.yaml) ---

GOLDEN = Path(__file__).parents[1] / "golden" / "key_echoes.yaml"
_NAMED_KEYS = {"KEY": KEY, "ODD": ODD}


def _echo_rows() -> list[Any]:
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    return [
        pytest.param(_NAMED_KEYS.get(r["key"], r["key"]), r["echoed"], r["expect"], id=r["id"]) for r in rows
    ]


class TestEchoForms:
    """Each golden echo is scrubbed whole (or, for a look-alike, left as it is), alone and in a sentence."""

    @pytest.mark.parametrize(("key", "echoed", "expect"), _echo_rows())
    def test_alone(self, key: str, echoed: str, expect: str) -> None:
        """The echo by itself becomes exactly the expected text."""
        assert _scrub(echoed, key) == expect

    @pytest.mark.parametrize(("key", "echoed", "expect"), _echo_rows())
    def test_in_text(self, key: str, echoed: str, expect: str) -> None:
        """Inside a sentence only the echo is replaced."""
        assert _scrub(f"you sent <{echoed}> (rejected)", key) == f"you sent <{expect}> (rejected)"


def _echoes_by_key() -> list[Any]:
    """The golden echoes that are scrubbed, one group per key: one judge reply holds every echo of its key."""
    groups: dict[str, list[str]] = {}
    for p in _echo_rows():
        key, echoed, expect = p.values
        if expect == REDACTED:
            groups.setdefault(key, []).append(echoed)
    return [pytest.param(key, echoes, id=f"{len(echoes)}-echoes-of-key-{n}") for n, (key, echoes) in
            enumerate(groups.items())]  # fmt: skip


class TestEchoingServer:
    """A judge API on 127.0.0.1 echoes the key in every golden form at once (each form is scrubbed alone by
    ``TestEchoForms`` here and in Node by tests/judge/test_scrub_js.py); nothing it sent reaches the reply,
    the cache file, an audit record or a review-queue line (the files `judge` writes)."""

    @pytest.mark.parametrize(("key", "echoes"), _echoes_by_key())
    def test_reply_cache_audit_and_queue(
        self, key: str, echoes: list[str], judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        from grounding_eval.judge.audit import write_audit
        from grounding_eval.judge.host import HostJudgeClient, resolve_judges
        from grounding_eval.judge.review_queue import enqueue_review

        case = wire_cases(judge_server.url)["openai"]
        said = " | ".join(f"you sent: {echoed} (thanks)" for echoed in echoes)
        judge_server.script(Scripted(body=case.ok(said)))
        cache = tmp_path / "cache"
        # promptfoo's own provider, its key inline; scrubbed in Node (assertions/judges.cjs)
        spec = {
            "id": case.provider_id,
            "config": {"apiBaseUrl": case.base_url, "apiKey": key, "maxRetries": 0},
        }
        judge = resolve_judges("judge", {"config": {"provider": spec}}).judge
        reply = HostJudgeClient(judge, cache_dir=cache, deadline_s=30.0).complete("Grade.")
        assert judge_server.requests[0].headers["authorization"] == f"Bearer {key}"  # the key went out
        record = {"entry_id": "e1", "reply": reply.text, "raw": reply.raw}
        write_audit(tmp_path / "audit", record)
        enqueue_review(tmp_path / "queue.jsonl", record)
        assert reply.text == " | ".join(f"you sent: {REDACTED} (thanks)" for _ in echoes)
        written = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
        assert len(written) >= 3  # cache, audit record, queue
        for data in written:
            for echoed in echoes:
                assert echoed.encode() not in data and echoed.encode("unicode_escape") not in data, echoed
