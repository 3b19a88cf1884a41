"""Sets of masked text spans (URLs, phone numbers) that answer "is this offset or span masked?" fast.

Several checks skip text inside a URL or a phone number: a sentence never ends inside one, a domain is
never an organization's name. Asking that of every span in turn costs time proportional to the number of
spans for each question, quadratic over an answer made of thousands of them; a sorted union answers
each question with one binary search.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from operator import le, lt

__all__ = ["SpanSet"]


class SpanSet:
    """The union of half-open spans ``[start, end)``, for membership and overlap questions.

    Empty spans cover nothing and are ignored. Budget: building costs O(n log n) for n spans; each
    question O(log n).
    """

    __slots__ = ("_ends", "_starts")

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        # Disjoint pieces in order (overlapping spans merged; touching ones may stay apart), so both
        # the starts and the ends are sorted and either can be searched.
        ordered = sorted(spans)
        starts = [start for start, _ in ordered]
        ends = [end for _, end in ordered]
        if all(map(lt, starts, ends)) and all(map(le, ends, starts[1:])):
            # (the usual case, checked in C: none empty, none overlapping the next: already pieces)
            self._starts, self._ends = starts, ends
            return
        starts, ends = [], []
        for start, end in ordered:
            if end <= start:
                continue
            if ends and start < ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
        self._starts = starts
        self._ends = ends

    def __len__(self) -> int:
        """The number of disjoint pieces."""
        return len(self._starts)

    def covers(self, position: int) -> bool:
        """True when some span has ``start <= position < end``."""
        i = bisect_right(self._starts, position) - 1
        return i >= 0 and position < self._ends[i]

    def overlaps(self, start: int, end: int) -> bool:
        """True when some span ``[s, e)`` has ``s < end and start < e``."""
        i = bisect_right(self._ends, start)  # the first piece ending after ``start``
        return i < len(self._starts) and self._starts[i] < end
