"""The checks of single fields of dataset files, as plain functions: the one place each rule is written.

Each takes a field's raw value and returns it cleaned, or raises :class:`FieldProblem` with the words a
user reads (``unknown state code 'ZZ'``). The models of :mod:`grounding_eval.data.models` are built from
them; a loader on an assertion's path (the judge's recorded replies, read in every fresh judge process)
calls them directly, without importing pydantic.
"""

from __future__ import annotations

import re
from typing import Any

from grounding_eval.errors import clip
from grounding_eval.states import parse_state

__all__ = [
    "CONDITIONS",
    "MAX_DESCRIPTION_CHARS",
    "SHA256_HEX",
    "FieldProblem",
    "answer_hash",
    "check_description",
    "check_id_list",
    "check_ident",
    "check_list_or_one",
    "check_nonempty_list",
    "check_one_of",
    "check_raw_text",
    "check_state",
    "check_state_or_us",
    "check_text",
    "check_text_list",
    "check_url",
    "optional_text",
    "reply_texts",
]

MAX_DESCRIPTION_CHARS = 400
"""The directory format expects about 200 characters; anything past 400 is not a description."""
CONDITIONS = ("C0", "C1", "C1.5", "docs-qa")
"""The conditions a recording may be for: the three generation conditions, and the docs-QA assistant's."""
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class FieldProblem(ValueError):
    """A problem with one field's value (the caller adds file, record and field)."""


# ---- field checks: each takes the raw value and returns the clean one, or raises FieldProblem ----


def check_text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldProblem("must be non-empty text")
    return " ".join(value.split()) if "\n" not in value else value.strip()


def check_ident(value: Any) -> str:
    text = check_text(value)
    if any(c.isspace() for c in text) or "/" in text:
        raise FieldProblem(f"{clip(text)} is not an id (no spaces or slashes)")
    return text


def check_short_state(value: Any) -> None:
    # The longest state name is 20 characters; a longer value is not one, and is not quoted in full.
    if isinstance(value, str) and len(value.strip()) > 40:
        raise FieldProblem(f"unknown state code {clip(value.strip())}")


def check_state(value: Any) -> str:
    check_short_state(value)
    try:
        return parse_state(value)
    except ValueError as exc:
        raise FieldProblem(str(exc)) from None


def check_state_or_us(value: Any) -> str:
    check_short_state(value)
    try:
        return parse_state(value, allow_national=True)
    except ValueError as exc:
        raise FieldProblem(str(exc)) from None


def check_text_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # CSV cells hold lists as "a; b; c"
        value = [part for part in value.split(";") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise FieldProblem("must be a list of non-empty text values")
    return tuple(v.strip() for v in value)


def check_nonempty_list(value: Any) -> tuple[str, ...]:
    items = check_text_list(value)
    if not items:
        raise FieldProblem("must list at least one value")
    return items


def check_id_list(value: Any) -> tuple[str, ...]:
    return tuple(check_ident(v) for v in check_text_list(value))


def check_url(value: Any) -> str:
    text = check_text(value)
    if not text.lower().startswith(("http://", "https://")) or " " in text:
        raise FieldProblem(f"{clip(text)} is not an http(s) URL")
    return text


def check_description(value: Any) -> str:
    text = check_text(value)
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise FieldProblem(
            f"is {len(text)} characters; a directory description is about 200 "
            f"(at most {MAX_DESCRIPTION_CHARS})"
        )
    return text


def check_one_of(allowed: tuple[str, ...], *, lower: bool = False) -> Any:
    def check(value: Any) -> str:
        text = check_text(value)
        text = text.lower() if lower else text
        if text not in allowed:
            raise FieldProblem(f"{clip(value)} is not one of {', '.join(allowed)}")
        return text

    return check


def check_raw_text(value: Any) -> str:
    check_text(value)
    return str(value)  # kept exactly as written: an answer's layout is what the verifier reads


def optional_text(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldProblem("must be text")
    return value


def answer_hash(value: Any) -> str:
    if not (isinstance(value, str) and SHA256_HEX.fullmatch(value)):
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:80] + "…"
        raise FieldProblem(f"must be 64 lowercase hex digits (the SHA-256 of the judged answer), got {shown}")
    return value


def reply_texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(r, str) for r in value):
        raise FieldProblem("must be a non-empty list of text")
    return tuple(value)


def check_list_or_one(item: Any) -> Any:
    def check(value: Any) -> tuple[Any, ...]:
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list):
            raise FieldProblem("must be a list")
        return tuple(item(v) for v in values)

    return check
