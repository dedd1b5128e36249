"""A proposal's findings by line range, in log time.

Fixers look up, for each list, test, service or call they edit, the findings on its lines. A
filter of every finding for each of thousands of such nodes was quadratic (red-team re-runs
11 and 12: setup.py extension lists 38 s at 819 KB, compose services 62 s at 400 KB, load()
flag lists 69 s at 800 KB, CUDA_HOME tests 24 s at 200 KB).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from gpuport.scan.finding import Finding

__all__ = ["ByLine"]


class ByLine:
    """``found`` sorted once by line; :meth:`within` and :meth:`at` keep the given order."""

    def __init__(self, found: list[Finding]) -> None:
        self._items = sorted(
            (f.location.line, i, f) for i, f in enumerate(found) if f.location.line is not None
        )
        self._lines = [line for line, _, _ in self._items]

    def within(self, first: int, last: int) -> list[Finding]:
        """The findings on lines ``first`` to ``last``, in their original order."""
        lo, hi = bisect_left(self._lines, first), bisect_right(self._lines, last)
        return [f for _, _, f in sorted(self._items[lo:hi], key=lambda t: t[1])]

    def at(self, line: int) -> list[Finding]:
        return self.within(line, line)
