"""Two sweeps of :mod:`.divergence` over one function's text: which regions hold each exit,
and where an assigned expression ends (kept apart so that module stays short)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class _Spanned(Protocol):
    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


def around(
    regions: Sequence[_Spanned], points: list[int], most: int = 2_000_000
) -> list[list[int]] | None:
    """For each of ``points`` (ascending), the indices of the regions holding it, outer first:
    one sweep over the regions sorted by start (statements nest), not regions x points.
    None when the answer would hold more than ``most`` indices in all (20,000 nested ``if``s
    around 20,000 returns: > 2 GB; thirty-fourth re-run F2)."""
    order = sorted(range(len(regions)), key=lambda i: (regions[i].start, -regions[i].end))
    stack: list[int] = []
    out: list[list[int]] = []
    k = 0
    for at in points:
        while k < len(order) and regions[order[k]].start <= at:
            stack.append(order[k])
            k += 1
        stack = [i for i in stack if regions[i].end > at] if stack else stack
        out.append([i for i in stack if regions[i].start <= at])
        most -= len(out[-1])
        if most < 0:
            return None
    return out


def rhs(code: str, pos: int, limit: int) -> str:
    """The expression assigned at ``pos``: up to a ``;``, a top-level ``,`` or the ``)`` that
    closes an enclosing bracket (a ``for`` header's step)."""
    depth = 0
    for i in range(pos, min(limit, pos + 2000)):
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                return code[pos:i]
            depth -= 1
        elif c in ";{}" or (c == "," and depth == 0):
            return code[pos:i]
    return code[pos : min(limit, pos + 2000)]
