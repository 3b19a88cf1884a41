"""Extraction: the quoted spans of an answer (inline double quotes and Markdown block quotes)."""

from __future__ import annotations

import re
from typing import Literal

from grounding_eval.verifier.quotes.findings import DEFAULT_THRESHOLDS, QuoteSpan

_BLOCK_MARKER = re.compile(r"[ \t]{0,3}>(?:[ \t]{0,3}>)*[ \t]?")
_QUOTE_MARK = re.compile('["\u201c\u201d]')
_ELISION = re.compile(r"\[\s*(?:\.\s*){3,}\]|\[\s*\u2026\s*\]|\.(?:\s*\.){2,}|\u2026")


# A whitespace-separated token with a letter or digit in it, from its first one: one match per word.
# (``[^\W_]`` is str.isalnum, and ``\s`` is the white space str.split() splits on.)
_WORD_FROM_ALNUM = re.compile(r"[^\W_]\S*")


def _count_words(text: str) -> int:
    """The tokens of ``text.split()`` that hold a letter or digit, elision marks removed first."""
    return len(_WORD_FROM_ALNUM.findall(_ELISION.sub(" ", text)))


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(answer: str) -> list[tuple[int, str]]:
    """Return ``(offset, line without its line break)`` for every line.

    Only CR, LF and CRLF end a line, as in Markdown; ``str.splitlines`` would also split at form
    feeds, ``\x1c``-``\x1e`` and U+2028, and could turn a quote into two paragraphs.
    """
    out: list[tuple[int, str]] = []
    offset = 0
    for m in _LINE_BREAK.finditer(answer):
        out.append((offset, answer[offset : m.start()]))
        offset = m.end()
    if offset < len(answer):
        out.append((offset, answer[offset:]))
    return out


def _blockquote_spans(block: list[tuple[int, str]], min_words: int) -> list[QuoteSpan]:
    """One span per paragraph of a block quote (paragraphs are separated by a bare ``>`` line)."""
    spans: list[QuoteSpan] = []
    para: list[tuple[int, str]] = []  # (offset of content, content)
    for offset, line in [*block, (0, "")]:
        marker = _BLOCK_MARKER.match(line)
        content_at = offset + (marker.end() if marker else 0)
        content = line[marker.end() :] if marker else ""
        if content.strip():
            stripped = content.lstrip() if not para else content
            para.append((content_at + len(content) - len(stripped), stripped.rstrip()))
            continue
        if para:
            text = "\n".join(c for _, c in para)
            start = para[0][0]
            end = para[-1][0] + len(para[-1][1])
            if _count_words(text) >= min_words:
                spans.append(QuoteSpan(text=text, start=start, end=end, kind="blockquote"))
            para = []
    return spans


def _inline_spans(answer: str, begin: int, end: int, min_words: int, max_chars: int) -> list[QuoteSpan]:
    """Pair quote marks inside one paragraph ``answer[begin:end]``.

    A straight ``"`` can open only after a non-alphanumeric character and before a non-space, and
    close only after a non-space and before a non-alphanumeric character; ``“`` only opens and ``”``
    only closes. An opener met while a quote is open restarts it there (the earlier mark was
    unbalanced), so a stray mark costs at most the quote it belongs to.
    """
    spans: list[QuoteSpan] = []
    open_at: int | None = None
    for m in _QUOTE_MARK.finditer(answer, begin, end):
        i = m.start()
        mark = answer[i]
        before = answer[i - 1] if i > begin else " "
        after = answer[i + 1] if i + 1 < end else " "
        can_open = mark == "\u201c" or (mark == '"' and not before.isalnum() and not after.isspace())
        can_close = mark == "\u201d" or (mark == '"' and not before.isspace() and not after.isalnum())
        if open_at is not None and can_close:
            text = answer[open_at + 1 : i]
            if len(text) <= max_chars and _count_words(text) >= min_words:
                kind: Literal["double", "curly"] = "curly" if answer[open_at] == "\u201c" else "double"
                spans.append(QuoteSpan(text=text, start=open_at + 1, end=i, kind=kind))
            open_at = None
        elif can_open:
            open_at = i
    return spans


def extract_quotes(
    answer: str, *, min_words: int = 5, max_chars: int = DEFAULT_THRESHOLDS.max_quote_chars
) -> list[QuoteSpan]:
    """Find the quoted spans of ``min_words`` or more words in an answer.

    Inline quotes (straight or curly double quotes) never cross a blank line and are at most
    ``max_chars`` long, so an unbalanced mark cannot swallow the rest of the answer. Block quotes
    are runs of lines starting with ``>`` (nested ``> >`` too), one span per paragraph; their text is
    not searched for inline quotes again. Words are counted after removing elision marks.

    Args:
        answer: The model's answer (Markdown or plain text).
        min_words: Shorter quotes (scare quotes, terms of art) are not returned.
        max_chars: Longest inline quote, in characters; a longer one is taken to be a stray mark.

    Returns:
        The spans in order of position.
    """
    spans: list[QuoteSpan] = []
    block: list[tuple[int, str]] = []
    para_start: int | None = None
    para_end = 0
    for offset, line in [*_lines(answer), (len(answer), "")]:
        in_block = _BLOCK_MARKER.match(line) is not None
        blank = not line.strip()
        if para_start is not None and (in_block or blank):
            spans.extend(_inline_spans(answer, para_start, para_end, min_words, max_chars))
            para_start = None
        if block and not in_block:
            spans.extend(_blockquote_spans(block, min_words))
            block = []
        if in_block:
            block.append((offset, line))
        elif not blank:
            if para_start is None:
                para_start = offset
            para_end = offset + len(line)
    return sorted(spans, key=lambda s: s.start)
