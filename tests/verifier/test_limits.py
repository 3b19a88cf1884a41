"""The verifier's input limits: an answer over the size limit is named, never silently truncated."""

from __future__ import annotations

import pytest

from grounding_eval.verifier.limits import MAX_ANSWER_BYTES, answer_too_large


class TestAnswerTooLarge:
    """answer_too_large counts UTF-8 bytes and names the limit and where it is set."""

    def test_limit_is_256_kib(self) -> None:
        """The documented limit."""
        assert MAX_ANSWER_BYTES == 262_144

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param("", id="empty"),
            pytest.param("a" * MAX_ANSWER_BYTES, id="ascii-at-limit"),
            pytest.param("é" * (MAX_ANSWER_BYTES // 2), id="two-byte-at-limit"),
            pytest.param("€" * (MAX_ANSWER_BYTES // 4), id="three-byte-under-limit"),
            pytest.param("😀" * (MAX_ANSWER_BYTES // 4), id="four-byte-at-limit"),
        ],
    )
    def test_within_limit(self, text: str) -> None:
        """Up to and including the limit, in bytes, the answer is verified."""
        assert answer_too_large(text) is None

    @pytest.mark.parametrize(
        ("text", "size"),
        [
            pytest.param("a" * (MAX_ANSWER_BYTES + 1), MAX_ANSWER_BYTES + 1, id="ascii-one-over"),
            pytest.param("é" * (MAX_ANSWER_BYTES // 2 + 1), MAX_ANSWER_BYTES + 2, id="two-byte-over"),
            pytest.param("😀" * 70_000, 280_000, id="four-byte-over-in-fewer-characters"),
            pytest.param("\ud800" * 90_000, 270_000, id="lone-surrogates-count-three-bytes"),
        ],
    )
    def test_over_limit_message(self, text: str, size: int) -> None:
        """Over the limit: the exact message the adapter and the CLI put after "ERROR ("."""
        assert answer_too_large(text) == (
            f"answer too large: {size} bytes; limit 262144 bytes (grounding_eval.verifier.limits.MAX_ANSWER_BYTES)"
        )
