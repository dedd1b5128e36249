"""Whether a position lies in any of many ranges, in logarithmic time.

A rule that asks, for each finding or token, whether it sits in one of the file's guarded
ranges or skipped spans scanned every range each time: ranges x findings (fifteenth re-run:
a CMake file of thousands of ``if(USE_ROCM)`` blocks, 800 KB, 28 s CPU). The ranges are
merged and sorted once and each question is a binary search.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["FirstHolding", "Growing", "Intervals", "first_holding", "in_any"]


class Intervals:
    """The union of half-open ranges ``[a, b)``, sorted and merged."""

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for a, b in sorted(s for s in spans if s[0] < s[1]):
            if self.ends and a <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], b)
            else:
                self.starts.append(a)
                self.ends.append(b)

    def __contains__(self, x: int) -> bool:
        i = bisect_right(self.starts, x) - 1
        return i >= 0 and x < self.ends[i]


class Growing:
    """A union of half-open ranges that grows between questions: kept sorted and merged as
    ranges are added, so each question is a binary search (a list searched per question was
    ranges x questions: wave64's explained spans, one per rewritten warp constant)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, a: int, b: int) -> None:
        if a >= b:
            return
        i = bisect_right(self.ends, a - 1)  # first range ending at or after a
        j = bisect_right(self.starts, b)  # ranges from i up to j touch [a, b)
        if i < j:
            a, b = min(a, self.starts[i]), max(b, self.ends[j - 1])
        self.starts[i:j] = [a]
        self.ends[i:j] = [b]

    def __contains__(self, x: int) -> bool:
        i = bisect_right(self.starts, x) - 1
        return i >= 0 and x < self.ends[i]


#: the merged form of the lists last asked about (by id and whether closed, kept with the list
#: so its id is not reused while it is here); a list that grew since is merged again
_SEEN: dict[tuple[int, bool], tuple[Sequence[tuple[int, int]], int, Intervals]] = {}


def in_any(spans: Sequence[tuple[int, int]], x: int, *, closed: bool = False) -> bool:
    """Whether ``x`` is in one of ``spans`` (``[a, b)``; ``closed``: ``[a, b]``). Short lists
    are read directly; a long one is merged once (per list and length) and searched."""
    if len(spans) < 16:
        if closed:
            return any(a <= x <= b for a, b in spans)
        return any(a <= x < b for a, b in spans)
    key = (id(spans), closed)
    got = _SEEN.get(key)
    if got is None or got[0] is not spans or got[1] != len(spans):
        merged = Intervals([(a, b + 1) for a, b in spans] if closed else spans)
        while len(_SEEN) >= 16:
            del _SEEN[next(iter(_SEEN))]
        got = _SEEN[key] = (spans, len(spans), merged)
    return x in got[2]


class FirstHolding(Generic[T]):
    """For closed ranges ``(first, last, value)``: the value of the first range, in list order,
    that holds a position. The ranges' ends cut the line into segments; each range paints the
    segments it covers that no earlier range painted (a union-find skips those), so building
    is near-linear and each question is a binary search (sixteenth re-run: a CMake branch of
    thousands of commands, each finding searched every range: 1.6 MB, 35 s)."""

    def __init__(self, ranges: Sequence[tuple[int, int, T]]) -> None:
        self.bounds = sorted(
            {a for a, b, _ in ranges if a <= b} | {b + 1 for a, b, _ in ranges if a <= b}
        )
        self.values: list[T | None] = [None] * len(self.bounds)
        nxt = list(range(len(self.bounds) + 1))

        def find(i: int) -> int:
            while nxt[i] != i:
                nxt[i] = nxt[nxt[i]]
                i = nxt[i]
            return i

        for a, b, value in ranges:
            if a > b:
                continue
            i, end = bisect_right(self.bounds, a) - 1, bisect_right(self.bounds, b + 1) - 1
            i = find(i)
            while i < end:
                self.values[i] = value
                nxt[i] = i + 1
                i = find(i + 1)

    def at(self, x: int) -> T | None:
        i = bisect_right(self.bounds, x) - 1
        return self.values[i] if i >= 0 else None


_HOLDING: dict[int, tuple[Sequence[tuple[int, int, object]], int, FirstHolding[object]]] = {}


def first_holding(ranges: Sequence[tuple[int, int, T]], x: int) -> T | None:
    """The value of the first ``(first, last, value)`` of ``ranges`` with ``first <= x <=
    last``, or None. Short lists are read directly; a long one is indexed once (per list and
    length, as :func:`in_any`)."""
    if len(ranges) < 16:
        return next((v for a, b, v in ranges if a <= x <= b), None)
    got = _HOLDING.get(id(ranges))
    if got is None or got[0] is not ranges or got[1] != len(ranges):
        while len(_HOLDING) >= 16:
            del _HOLDING[next(iter(_HOLDING))]
        got = _HOLDING[id(ranges)] = (ranges, len(ranges), FirstHolding(ranges))
    return got[2].at(x)  # type: ignore[return-value]
