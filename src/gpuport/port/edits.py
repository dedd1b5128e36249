"""Span edits on a file's text, kept per file, and the diff hunks they make.

Every fix states its changes as :class:`Edit` spans on the *original* text of a file (or a
whole new file). :class:`FileEdits` collects them, refuses an edit that overlaps one already
taken (the first fix wins; the other is reported, never merged blindly), and applies them.
:func:`hunks` turns the old and new text into unified-diff hunks and names, for each hunk, the
fixes whose edits fall inside it.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gpuport.port.model import Hunk

__all__ = ["CONTEXT", "Edit", "FileEdits", "created_hunk", "hunks", "line_starts"]

#: Lines of context around each hunk, as ``diff -u``.
CONTEXT = 3
_NO_EOL = "\\ No newline at end of file"


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` of the original with ``new``; ``fix`` made it."""

    start: int
    end: int
    new: str
    fix: str
    labels: tuple[str, ...] = ()  # the findings this edit addresses (empty: all of its fix's)


@lru_cache(maxsize=8)
def line_starts(text: str) -> tuple[int, ...]:
    """Offsets where each line of ``text`` starts (line 1 at index 0); kept for the last few
    texts: :meth:`FileEdits.lines_of` asks once per edit (a file of many edits was quadratic)."""
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return tuple(starts)


@dataclass
class FileEdits:
    """The edits taken for one existing file."""

    path: str
    original: str
    edits: list[Edit] = field(default_factory=list)

    def conflicts(self, edit: Edit) -> Edit | None:
        """The edit already taken that ``edit`` overlaps, if any (insertions at one offset
        do not overlap each other; they apply in the order taken)."""
        for other in self.edits:
            if other.fix == edit.fix:
                continue
            if edit.start == edit.end and other.start == other.end:
                continue
            if edit.start < other.end and other.start < edit.end:
                return other
            if edit.start == edit.end and other.start < edit.start < other.end:
                return other
            if other.start == other.end and edit.start < other.start < edit.end:
                return other
        return None

    def add_all(self, edits: list[Edit]) -> Edit | None:
        """Take every edit of one fix, or none of them: the first conflicting edit already
        taken, else None."""
        for e in edits:
            hit = self.conflicts(e)
            if hit is not None:
                return hit
        self.edits.extend(edits)
        return None

    def apply(self) -> str:
        out: list[str] = []
        pos = 0
        order = sorted(enumerate(self.edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0]))
        for _, e in order:
            if e.start < pos:  # cannot happen after conflicts(); keep the text whole
                continue
            out.append(self.original[pos : e.start])
            out.append(e.new)
            pos = e.end
        out.append(self.original[pos:])
        return "".join(out)

    def opcodes(self, new: str) -> list[tuple[str, int, int, int, int]]:
        """Line opcodes of the original -> ``new`` (:meth:`apply`'s text), from the edits
        themselves: each run of lines an edit touches is compared on its own, the lines
        between are equal without a look. difflib over the whole file was quadratic in
        scattered fixes (red-team re-run 12: 400 KB of masks, 61 s). Checked against both
        texts; anything inconsistent falls back to :func:`line_opcodes`."""
        a, b = split_lines(self.original), split_lines(new)
        ops = _edit_opcodes(self.original, self.edits)
        if ops is None or not _consistent(ops, a, b):
            return line_opcodes(a, b)
        return ops

    def lines_of(self, edit: Edit) -> tuple[int, int]:
        """1-based first and last line of the original that ``edit`` touches (an insertion:
        the line it goes before, twice)."""
        starts = line_starts(self.original)
        first = bisect.bisect_right(starts, edit.start)
        last = bisect.bisect_right(starts, max(edit.start, edit.end - 1))
        return first, max(first, last)


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their ``\n`` (the last may have none): the lines of a
    unified diff, split at ``\n`` only, as ``patch`` reads them."""
    if not text:
        return []
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _regions(original: str, edits: list[Edit]) -> list[tuple[int, int, str]]:
    """(start, end, new text) of the original's whole-line runs the edits change, in order;
    a run whose new text does not end a line takes the next line (or run) in."""
    starts = line_starts(original)
    n = len(original)

    def line_end(off: int) -> int:  # the start of the line after the one at `off`
        k = bisect.bisect_right(starts, off)
        return starts[k] if k < len(starts) else n

    raw: list[list[Any]] = []  # [start, end, [edits]]
    pos = 0
    for _, e in sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0])):
        if e.start < pos:  # as apply(): an overlap cannot happen after conflicts()
            continue
        pos = e.end
        lo = starts[bisect.bisect_right(starts, e.start) - 1]
        hi = max(line_end(max(e.start, e.end - 1)), e.end)
        if raw and lo < raw[-1][1]:
            raw[-1][1] = max(raw[-1][1], hi)
            raw[-1][2].append(e)
        else:
            raw.append([lo, hi, [e]])
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(raw):
        lo, hi, mine = raw[i]
        text = _applied(original, lo, hi, mine)
        i += 1
        while hi < n and not text.endswith("\n"):
            if i < len(raw) and raw[i][0] <= hi:
                nxt_lo, nxt_hi, nxt = raw[i]
                text += original[hi:nxt_lo] + _applied(original, nxt_lo, nxt_hi, nxt)
                hi = nxt_hi
                i += 1
            else:
                nxt = line_end(hi)
                text += original[hi:nxt]
                hi = nxt
        out.append((lo, hi, text))
    return out


def _applied(original: str, lo: int, hi: int, edits: list[Edit]) -> str:
    parts, pos = [], lo
    for e in edits:
        parts += [original[pos : e.start], e.new]
        pos = e.end
    parts.append(original[pos:hi])
    return "".join(parts)


def _edit_opcodes(original: str, edits: list[Edit]) -> list[tuple[str, int, int, int, int]] | None:
    starts = line_starts(original)
    ops: list[tuple[str, int, int, int, int]] = []
    ia = ib = 0  # lines of the original / new text before the current region
    total = len(split_lines(original))
    for lo, hi, text in _regions(original, edits):
        # the region's first line (an insertion at the very end: after the last line)
        at = bisect.bisect_right(starts, lo) - 1 if lo < len(original) else total
        la = split_lines(original[lo:hi])
        lb = split_lines(text)
        if at < ia:
            return None
        if at > ia:
            ops.append(("equal", ia, at, ib, ib + at - ia))
            ib += at - ia
            ia = at
        for tag, a1, a2, b1, b2 in line_opcodes(la, lb):
            if a1 == a2 and b1 == b2:
                continue
            ops.append((tag, ia + a1, ia + a2, ib + b1, ib + b2))
        ia += len(la)
        ib += len(lb)
    if ia < total:
        ops.append(("equal", ia, total, ib, ib + total - ia))
    return ops or [("equal", 0, 0, 0, 0)]


def _consistent(ops: list[tuple[str, int, int, int, int]], a: list[str], b: list[str]) -> bool:
    """The opcodes cover both texts in order and every "equal" run is equal."""
    ia = ib = 0
    for tag, a1, a2, b1, b2 in ops:
        if a1 != ia or b1 != ib:
            return False
        if tag == "equal" and (a2 - a1 != b2 - b1 or a[a1:a2] != b[b1:b2]):
            return False
        ia, ib = a2, b2
    return ia == len(a) and ib == len(b)


def _body(lines: list[str], prefix: str) -> list[str]:
    out: list[str] = []
    for ln in lines:
        if ln.endswith("\n"):
            out.append(prefix + ln[:-1])
        else:
            out.append(prefix + ln)
            out.append(_NO_EOL)
    return out


#: Up to this many changed lines (both sides) are matched without the junk heuristic
_EXACT_LINES = 1000


def line_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes of ``a`` -> ``b``, in time near-linear in the lines: the common head
    and tail are taken off first, and a long middle is matched with difflib's junk heuristic,
    so lines that repeat through a file are not tried as anchors (with ``autojunk=False``, 36 KB
    of one repeated line and a fix every few lines took 35-63 s; seventh review)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    ops: list[tuple[str, int, int, int, int]] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    if mid_a or mid_b:
        exact = len(mid_a) + len(mid_b) <= _EXACT_LINES  # small: difflib's closest diff
        matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=not exact)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops or [("equal", 0, 0, 0, 0)]


def _grouped(
    ops: list[tuple[str, int, int, int, int]], n: int
) -> list[list[tuple[str, int, int, int, int]]]:
    """``ops`` in groups with ``n`` lines of context, as ``SequenceMatcher.get_grouped_opcodes``
    makes them."""
    codes = list(ops)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    out: list[list[tuple[str, int, int, int, int]]] = []
    group: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            out.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        out.append(group)
    return out


def hunks(
    old: str,
    new: str,
    spans: list[tuple[int, int, str, tuple[str, ...]]],
    labels: dict[str, list[str]],
    ops: list[tuple[str, int, int, int, int]] | None = None,
) -> list[Hunk]:
    """Unified-diff hunks of ``old`` -> ``new``. ``spans``: (first, last) original lines each
    edit touched, its fix id and the findings it addresses (empty: all of the fix's);
    ``labels``: the finding labels of each fix; ``ops``: the line opcodes when the caller
    has them (:meth:`FileEdits.opcodes`), else difflib's."""
    a = split_lines(old)
    b = split_lines(new)
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1]))
    firsts = [spans[i][0] for i in order]
    reach: list[int] = []  # the largest `last` among the spans up to each one
    for i in order:
        reach.append(max(spans[i][1], reach[-1]) if reach else spans[i][1])
    out: list[Hunk] = []
    for group in _grouped(ops if ops is not None else line_opcodes(a, b), CONTEXT):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        body: list[str] = []
        changed: list[tuple[int, int]] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                body += _body(a[a1:a2], " ")
                continue
            changed.append((a1 + 1, max(a1 + 1, a2)))
            body += _body(a[a1:a2], "-")
            body += _body(b[b1:b2], "+")
        fixes_in: dict[str, None] = {}  # ordered sets: a list's `in` was quadratic
        found_in: dict[str, None] = {}
        hit: set[int] = set()  # the spans that start by hi + 1 and reach lo - 1, by index
        for lo, hi in changed:  # (a scan of every span for every hunk was quadratic)
            k = bisect.bisect_right(firsts, hi + 1)
            first_k = bisect.bisect_left(reach, lo - 1, 0, k)  # `reach` never falls
            hit.update(order[j] for j in range(first_k, k) if spans[order[j]][1] >= lo - 1)
        for j in sorted(hit):  # in the order of the edits, as before
            _first, _last, fix, own = spans[j]
            fixes_in[fix] = None
            found_in.update(dict.fromkeys(own or labels.get(fix, [])))
        fixes, found = list(fixes_in), list(found_in)
        out.append(
            Hunk(
                old_start=i1 + 1 if i2 > i1 else i1,
                old_lines=i2 - i1,
                new_start=j1 + 1 if j2 > j1 else j1,
                new_lines=j2 - j1,
                lines=body,
                findings=found,
                fixes=fixes,
            )
        )
    return out


def created_hunk(text: str, fixes: list[str], labels: dict[str, list[str]]) -> Hunk:
    """The one hunk of a new file."""
    lines = text.splitlines(keepends=True)
    found = list(dict.fromkeys(lab for fix in fixes for lab in labels.get(fix, [])))  # linear
    return Hunk(
        old_start=0,
        old_lines=0,
        new_start=1 if lines else 0,
        new_lines=len(lines),
        lines=_body(lines, "+"),
        findings=found,
        fixes=list(fixes),
    )
