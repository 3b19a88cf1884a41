"""Resource-list layouts: which organization a table row, a card or a footnote gives its contacts for.

Chat models rarely write "call Legal Aid Chicago at (312) 341-1070" as one sentence; they write
tables, cards and source lists, where the organization a phone number or URL belongs to is named in
another cell, on the line above or at the start of a footnote. A careful reader pairs them by the
layout, so the pairing (:class:`~grounding_eval.verifier.phones.Pairing`) asks this module two things
about a contact's position: which block bounds the search for a name nearby (a table cell, a card,
a footnote, a definition line: names outside it are not the contact's), and which organization the
block gives its contacts for when no name nearby pairs (the row's, the card's, the footnote's).
The rules for table rows, headings, cards, bold-name bullets, footnotes and reference definitions are
docs/verifier/pairing.md#in-layouts, written for readers of the report.

Budget: one pass over the lines (``str.split`` and a few anchored matches per line; a line that
starts with none of the markers is passed over with one test of its first character), one pass
over the sorted mentions, each container pushed and popped once however deep lists nest, and one
region per cell or run of lines: O(n). :meth:`Layout.scope_at` is one binary search.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from grounding_eval.verifier.directory import OrgMention
from grounding_eval.verifier.link_refs import parse_references

__all__ = ["Layout"]

_HEADING = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]|$)")
_SETEXT = re.compile(r"[ ]{0,3}(?:=++|-++)[ \t]*+")
_THEMATIC_BREAK = re.compile(r"[ ]{0,3}(?:(?:\*[ \t]*+){3,}+|(?:-[ \t]*+){3,}+|(?:_[ \t]*+){3,}+)")
_ITEM = re.compile(r"[ \t]*+(?:[-*+]|\d{1,9}[.)])(?:[ \t]++|$)")
_FOOTNOTE = re.compile(r"[ ]{0,3}\[\^[^\]\s]{1,99}+\]:")
_DELIMITER_ROW = re.compile(r"[ \t]*+\|?+(?:[ \t]*+:?+-++:?+[ \t]*+\|)*+[ \t]*+(?::?+-++:?+[ \t]*+)?+")
_WORD = re.compile(r"[^\W\d_]+")
_PIPE = re.compile(r"(?<!\\)\|")
# Header words that name the column holding each row's organization.
_ORG_COLUMN = {
    **dict.fromkeys(["organization", "organisation", "org", "provider", "agency", "nonprofit"], 0),
    **dict.fromkeys(["name"], 1),
    **dict.fromkeys(["program", "programme", "resource"], 2),
}  # (the lowest rank wins: "| Resource | Provider |" has its organizations under Provider)
# Bold text that labels a field of a card rather than naming an organization ("**Phone:** …").
_LABELS = frozenset(
    ["phone", "tel", "telephone", "call", "hotline", "helpline", "intake", "website", "web", "site", "online",
     "url", "link", "email", "e-mail", "address", "hours", "fax", "text", "contact", "note", "notes",
     "office", "offices", "line", "number", "toll", "free", "apply", "location", "locations", "tip", "tips",
     "services", "service", "eligibility", "languages", "cost", "chat", "what", "how", "when", "where",
     "who", "why", "important", "warning", "deadline", "next", "step", "steps"]
)  # fmt: skip
_ITEM_MARKERS = frozenset("-*+0123456789")


@dataclass(slots=True, eq=False)
class _Block:
    """A container of lines and the organization it gives its contacts for.

    Mutable: a footnote's organization is the first one it names, which may be on a later line (a
    table row naming no organization refers to its container's block, read when asked).
    """

    kind: str  # section | card | item | footnote | row | definition
    indent: int = 0
    owner: OrgMention | None = None
    is_item: bool = False  # a card whose name line is a list item
    lone: bool = False  # a card whose block is, so far, its name line alone


@dataclass(slots=True, eq=False)
class _Table:
    """The body rows of a table, read one row at a time when a contact in it asks (most rows of a
    hostile table hold none)."""

    column: int | None  # the organization column, if its header says so
    parent: _Block | None  # the container the table is in
    rows: dict[int, tuple[list[tuple[int, int]], OrgMention | _Block | None]]  # by line start


class _Line(NamedTuple):
    start: int
    end: int
    indent: int
    item: bool  # a list item
    content: str  # after the list marker, if any


class Layout:
    """The blocks of one text, for :class:`~grounding_eval.verifier.phones.Pairing`.

    Args:
        text: The answer.
        mentions: Its organization mentions, in order, not overlapping one another.
    """

    def __init__(self, text: str, mentions: Sequence[OrgMention]) -> None:
        self._length = len(text)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._blocks: list[_Block | _Table] = []
        self._text = text
        self._line_starts: list[int] = []
        self._mentions = mentions
        self._m_starts = [m.start for m in mentions]
        references = parse_references(text)
        first = references.first_reference
        # A definition's destination: its line, and the span of the first link that uses it.
        self._definitions = {
            d.dest_start: (d.start, d.end, (first[d.dest_start].start, first[d.dest_start].end))
            if d.dest_start in first
            else (d.start, d.end, None)
            for d in references.definitions
        }
        self._parse(text, {d.start for d in references.definitions})

    def scope_at(self, position: int) -> tuple[int, int, OrgMention | None]:
        """The block holding ``position`` (start, end) and the organization it gives contacts for.

        Outside every block: the whole text, and no organization.
        """
        i = bisect_right(self._starts, position) - 1
        if i >= 0 and position < self._ends[i]:
            block = self._blocks[i]
            if isinstance(block, _Table):
                return self._cell_at(block, position)
            return self._starts[i], self._ends[i], block.owner
        return 0, self._length, None

    def _cell_at(self, table: _Table, position: int) -> tuple[int, int, OrgMention | None]:
        """The table cell holding ``position`` and its row's organization (the row read once)."""
        line = bisect_right(self._line_starts, position) - 1
        start = self._line_starts[line]
        if start not in table.rows:
            end = self._text.find("\n", start)
            end = len(self._text) if end < 0 else end
            cells = _cells(self._text[start:end], start)
            owner: OrgMention | _Block | None = None
            if table.column is not None:
                if table.column < len(cells):
                    owner = self._one_org(*cells[table.column])
            else:
                j = bisect_left(self._m_starts, start)
                if j < len(self._m_starts) and self._m_starts[j] < end:  # its first naming cell
                    owner = self._one_org(*next(c for c in cells if c[1] > self._m_starts[j]))
                else:
                    owner = table.parent  # a table of one organization's offices
            table.rows[start] = (cells, owner)
        cells, owner = table.rows[start]
        k = bisect_right(cells, (position, len(self._text))) - 1
        if k < 0 or position >= cells[k][1]:
            return start, start, None  # on a pipe
        return *cells[k], owner.owner if isinstance(owner, _Block) else owner

    def definition_at(self, start: int) -> tuple[int, int, tuple[int, int] | None] | None:
        """For a URL starting at ``start`` that is a reference definition's destination: the
        definition line (start, end) and the span of the first link using it (None if unused)."""
        return self._definitions.get(start)

    # --- parsing ---------------------------------------------------------------------------------

    def _add(self, start: int, end: int, block: _Block | _Table) -> None:
        if self._blocks and self._blocks[-1] is block:
            self._ends[-1] = end  # the next line of the same block (blank lines between included)
            return
        self._starts.append(start)
        self._ends.append(end)
        self._blocks.append(block)

    def _named(self, start: int, end: int) -> list[OrgMention]:
        """The mentions lying within ``[start, end)``."""
        i = bisect_right(self._m_starts, start - 1)
        found = []
        while i < len(self._mentions) and self._mentions[i].start < end:
            if self._mentions[i].end <= end:
                found.append(self._mentions[i])
            i += 1
        return found

    def _one_org(self, start: int, end: int) -> OrgMention | None:
        """The first mention in ``[start, end)`` when they all name one organization, else None."""
        named = self._named(start, end)
        if not named or any(m.org is not named[0].org for m in named):
            return None
        return named[0]

    def _alone(self, start: int, end: int) -> OrgMention | None:
        """The mention that is all of ``[start, end)`` but emphasis marks and a colon, if one is."""
        i = bisect_left(self._m_starts, start)
        if i >= len(self._mentions) or self._m_starts[i] >= end:
            return None
        if i + 1 < len(self._mentions) and self._m_starts[i + 1] < end:
            return None  # two names (looked at without listing a line's thousands of them)
        m = self._mentions[i]
        if m.end > end:
            return None
        rest = self._text[start : m.start] + self._text[m.end : end]
        return m if not rest.strip(" \t*_:") else None

    def _parse(self, text: str, definition_starts: set[int]) -> None:
        raw_lines = text.split("\n")
        bounds: list[tuple[int, int]] = []
        offset = 0
        for raw in raw_lines:
            bounds.append((offset, offset + len(raw)))
            offset += len(raw) + 1
        self._line_starts = [start for start, _ in bounds]
        stack: list[_Block] = []
        headings: list[tuple[int, OrgMention | None]] = []  # the open headings: (level, organization)
        after_blank = False
        i = 0
        while i < len(raw_lines):
            raw = raw_lines[i]
            start, end = bounds[i]
            stripped = raw.lstrip(" \t")
            if not stripped.strip():
                after_blank = True
                i += 1
                continue
            if start in definition_starts:
                _pop_kinds(stack)
                self._add(start, end, _Block("definition"))
                after_blank = False
                i += 1
                continue
            line = _read_line(raw, stripped, start, end)
            heading = _HEADING.match(raw) if stripped[0] == "#" else None
            setext = (
                not heading
                and not line.item
                and i + 1 < len(raw_lines)
                and raw_lines[i + 1][:4].strip()[:1] in ("=", "-")
                and _SETEXT.fullmatch(raw_lines[i + 1]) is not None
            )
            if heading or setext:
                level = len(heading.group(1)) if heading else (1 if raw_lines[i + 1].strip()[0] == "=" else 2)
                stack = [self._section(headings, level, start, end)]
                self._add(start, end, stack[0])
                if setext:
                    i += 1  # the underline
                    self._add(*bounds[i], stack[0])
            elif _THEMATIC_BREAK.fullmatch(raw):
                _pop_kinds(stack)  # "---" between cards ends the card
            elif stripped.startswith("[^") and _FOOTNOTE.match(raw):
                _pop_kinds(stack)
                stack.append(_Block("footnote", indent=line.indent))
                self._take(stack[-1], start, end)
            elif "|" in raw and i + 1 < len(raw_lines) and _is_delimiter_row(raw_lines[i + 1]):
                _pop_unaccepting(stack, line, after_blank)
                i = self._table(raw_lines, bounds, i, stack[-1] if stack else None)
                after_blank = False
                continue
            else:
                self._line(stack, line, after_blank)
            after_blank = False
            i += 1

    def _section(
        self, headings: list[tuple[int, OrgMention | None]], level: int, start: int, end: int
    ) -> _Block:
        """The section a heading of ``level`` on ``[start, end)`` opens.

        A heading naming one organization owns its section; one naming none that labels a part of
        its parent's ("### Contact", "### How to apply") owns the parent's; any other owns nothing.
        """
        while headings and headings[-1][0] >= level:
            headings.pop()
        owner = self._one_org(start, end)
        if owner is None and not self._named(start, end) and headings:
            text = self._text[start:end].lstrip(" #").strip(" #*_:")
            if _is_label(text):
                owner = headings[-1][1]
        headings.append((level, owner))
        return _Block("section", owner=owner)

    def _line(self, stack: list[_Block], line: _Line, after_blank: bool) -> None:
        """A line that is no heading, footnote, definition or table: a card's name, or content."""
        bold = _bold(line.content) if line.content[:1] in "*_" else None
        owner = None
        if bold is not None:
            name_start = line.end - len(line.content)
            owner = self._one_org(name_start, name_start + len(bold[0]) + 4)
            if owner is None and _is_label(bold[0]):
                bold = None  # "**Phone:**": a field of the card, not a name
        if bold is None and line.content[:1] not in "([":
            owner = self._alone(line.end - len(line.content), line.end)
            if owner is not None:
                bold = (line.content, "")  # a line that is only a name: a card, as if it were bold
        if bold is not None and (
            _names_only(bold[1]) or (owner is not None and not line.item and _aside(bold[1]))
        ):
            # A name line: a card, whether or not the directory knows the name. A known name may
            # carry a short aside ("**Legal Aid Chicago** (Cook County)").
            _pop_kinds(stack)
            stack.append(_Block("card", line.indent, owner, is_item=line.item, lone=_names_only(bold[1])))
            self._add(line.start, line.end, stack[-1])
            return
        _pop_unaccepting(stack, line, after_blank)
        if line.item and bold is not None:
            # A bold-name bullet; one whose name the directory does not know owns nothing, and so
            # keeps the card or section it is in from claiming its contacts.
            stack.append(_Block("item", line.indent, owner))
        if stack:
            self._take(stack[-1], line.start, line.end)

    def _take(self, block: _Block, start: int, end: int) -> None:
        """Give the line ``[start, end)`` to ``block``."""
        block.lone = False
        if block.kind == "footnote" and block.owner is None:
            named = self._named(start, end)
            block.owner = named[0] if named else None
        self._add(start, end, block)

    def _table(
        self, raw_lines: list[str], bounds: list[tuple[int, int]], i: int, parent: _Block | None
    ) -> int:
        """Read the table whose header is line ``i``; return the index of the line after it."""
        header = [raw_lines[i][a:b] for a, b in _cells(raw_lines[i])]
        ranks = [
            min((_ORG_COLUMN.get(w.casefold(), 9) for w in _WORD.findall(cell)), default=9) for cell in header
        ]
        column = ranks.index(min(ranks)) if ranks and min(ranks) < 9 else None
        none = _Block("row")
        for k in (i, i + 1):
            self._add(*bounds[k], none)
        k = i + 2
        while k < len(raw_lines) and "|" in raw_lines[k] and raw_lines[k].strip():
            k += 1
        if k > i + 2:
            self._add(bounds[i + 2][0], bounds[k - 1][1], _Table(column, parent, {}))
        return k


def _read_line(raw: str, stripped: str, start: int, end: int) -> _Line:
    item = _ITEM.match(raw) if stripped[0] in _ITEM_MARKERS else None
    content = raw[item.end() :] if item else stripped
    return _Line(start, end, len(raw) - len(stripped), item is not None, content)


def _pop_kinds(stack: list[_Block]) -> None:
    """Close the cards, bullets and footnotes open (a new one starts)."""
    while stack and stack[-1].kind != "section":
        stack.pop()


def _pop_unaccepting(stack: list[_Block], line: _Line, after_blank: bool) -> None:
    while stack and not _accepts(stack[-1], line, after_blank):
        stack.pop()


def _accepts(block: _Block, line: _Line, after_blank: bool) -> bool:
    """Does the non-blank ``line`` (after a blank line, if ``after_blank``) continue ``block``?"""
    if block.kind == "section":
        return True
    if block.kind == "card":
        if after_blank:
            return block.lone or line.indent > block.indent
        return not (block.is_item and line.item and line.indent <= block.indent)
    if block.kind == "item":
        return line.indent > block.indent or not (line.item or after_blank)
    if block.kind == "footnote":
        return line.indent >= 2 if after_blank else not (line.item and line.indent < 2)
    return False


def _bold(content: str) -> tuple[str, str] | None:
    """``(bold text, the rest stripped)`` when ``content`` starts with ``**…**`` or ``__…__``."""
    mark = content[:2]
    if mark not in ("**", "__"):
        return None
    close = content.find(mark, 2)
    if close <= 2:
        return None
    return content[2:close], content[close + 2 :].strip()


def _names_only(rest: str) -> bool:
    """True when what follows a bold name on its line is nothing, or a colon."""
    return rest in ("", ":")


def _aside(rest: str) -> bool:
    """True for a short aside after a bold name: "(Cook County)", "— statewide", no sentence."""
    return len(rest) <= 60 and rest[:1] in "(—–-" and ". " not in rest


def _is_label(bold: str) -> bool:
    """True for bold text that labels a field: "Phone:", "Website", "Hours:", "Main phone"."""
    words = _WORD.findall(bold)
    return len(words) <= 3 and any(w.casefold() in _LABELS for w in words)


def _is_delimiter_row(line: str) -> bool:
    return "|" in line and "-" in line and _DELIMITER_ROW.fullmatch(line) is not None


def _cells(line: str, offset: int = 0) -> list[tuple[int, int]]:
    """The spans of a table row's cells, from ``offset`` (outer pipes optional; ``\\|`` is no pipe)."""
    if "\\" in line:
        bounds = [-1, *(m.start() for m in _PIPE.finditer(line)), len(line)]
    else:
        bounds = [-1]
        for part in line.split("|"):
            bounds.append(bounds[-1] + 1 + len(part))
    cells = [(offset + a + 1, offset + b) for a, b in pairwise(bounds)]
    if len(cells) > 1 and not line[: cells[0][1] - offset].strip():
        cells = cells[1:]  # before a leading pipe
    if len(cells) > 1 and not line[cells[-1][0] - offset :].strip():
        cells = cells[:-1]  # after a trailing pipe
    return cells
