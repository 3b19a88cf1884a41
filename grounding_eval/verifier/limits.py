"""The verifier's input limits, in one place: how large an answer it checks, and how much it lists.

The checks are linear in the answer (``benchmarks/degenerate.py`` measures 41 families of hostile text
at 10 kB, 100 kB and 1 MB; time grows about tenfold from 100 kB to 1 MB), so the size limit is not what
keeps them from blowing up. It is a policy: a legal-aid answer is a few kilobytes, and a reply of
hundreds of kilobytes is a runaway generation whose findings nobody will read. Such an answer gets an
explicit error naming its size and this limit, never a verdict on a silently truncated text. The
limit also bounds the cost of what is linear but not cheap per item: tens of microseconds per distinct
phone number (libphonenumber's validation) or URL, a fraction of a millisecond per distinct quotation
checked against its sources.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_ANSWER_BYTES", "MAX_LISTED_FINDINGS", "answer_too_large"]

MAX_ANSWER_BYTES: Final = 262_144
"""Largest answer checked, in UTF-8 bytes (256 KiB): about 40,000 words, 50 times a long answer."""

MAX_LISTED_FINDINGS: Final = 50
"""Most findings a reason lists per check; the rest are counted ("… and N more (see metadata)")."""


def answer_too_large(text: str) -> str | None:
    """Say why ``text`` is too large to verify, or return ``None`` when it is within the limit.

    Budget: one UTF-8 encoding of the text, skipped when it cannot exceed the limit (at most four
    bytes per character). A lone surrogate (possible in text decoded from JSON) counts three bytes.

    Args:
        text: The answer.

    Returns:
        ``"answer too large: N bytes; limit 262144 bytes
        (grounding_eval.verifier.limits.MAX_ANSWER_BYTES)"``, or ``None``.
    """
    if len(text) * 4 <= MAX_ANSWER_BYTES:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= MAX_ANSWER_BYTES:
        return None
    return (
        f"answer too large: {size} bytes; limit {MAX_ANSWER_BYTES} bytes "
        "(grounding_eval.verifier.limits.MAX_ANSWER_BYTES)"
    )
