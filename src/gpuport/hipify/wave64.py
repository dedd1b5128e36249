"""``hipify --wave64 fix``: port the 32-lane warp code whose meaning is proven (issue 25).

CDNA GPUs (gfx90a, gfx942, gfx950: all ``__GFX9__``) run 64-lane wavefronts; RDNA runs 32 and
NVIDIA 32. What a 32 means is decided by the lane-meaning analysis shared with the scan
(:mod:`gpuport.scan.rules.native.warp_meaning`): over every file of the run, a kernel, the
warp helpers it calls and the constants they share are judged together.

By default (the rewrites are *safe*: behaviour provably kept):

* a full-warp mask constant used only as a ``*_sync`` mask -> the full 64-bit mask, when the
  target HIP keeps the masks (>= 6.2; literal masks are widened by the translator);
* ``warpSize`` used where C++ needs a constant (not constexpr on ROCm 7+) -> the
  per-architecture macro, which has the same value;
* a shuffle from a fixed or computed lane with no width, in code that never means the
  hardware wavefront -> CUDA's own width, 32, which keeps exactly what CUDA does;
* a component that is *wrong as written* on a 64-lane wavefront (a ballot kept in 32 bits,
  ``__popc`` of it; 32-lane code next to ``warpSize``) and whose every 32 is a lane, warp or
  ballot site with a wave-size replacement: all of them, together.

With ``--unsafe-fixes`` also the components that are right as written (consistent 32-lane
groups: each half of the wavefront does a CUDA warp's work) are ported to the full wavefront;
each such line is marked ``// gpuport: wave64 unsafe ...``. Everything else is left and listed
with the reason ("32 is a logical tile: ...", "host and device share `WARP_SIZE` ...").

Each rewrite refers to one macro, defined once per file by the block below (the ``#ifndef``
lets headers and sources that all carry it agree), so the output stays single-source::

    #ifndef GPUPORT_WAVE_SIZE
    #if defined(__GFX8__) || defined(__GFX9__)
    #define GPUPORT_WAVE_SIZE 64
    ...

Host code sees 32 (the macro follows the device architecture), which is why a constant that
host code also uses is never ported. Running :func:`plan` on its own output changes nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.warp import warpsize_constexpr
from gpuport.scan.rules.native.warp_facts import LOG2, WAVE
from gpuport.scan.rules.native.warp_meaning import FileMeaning, analyze

__all__ = [
    "MACRO",
    "MARK",
    "WAVE64_MODES",
    "WaveChange",
    "WaveLeft",
    "WaveMode",
    "WavePlan",
    "macro_block",
    "meaning_of",
    "plan",
]

WaveMode = Literal["fix", "report"]
#: why the call at an offset may run on some lanes only, or None
Divergent = Callable[[int], "str | None"]
WAVE64_MODES: tuple[WaveMode, ...] = ("fix", "report")
MACRO = WAVE
MARK = "gpuport: wave64"
UNSAFE = "unsafe"
FULL_MASK_64 = "0xffffffffffffffffull"


def macro_block(eol: str = "\n") -> str:
    """The per-architecture definition every rewrite refers to."""
    lines = [
        f"#ifndef {MACRO} // {MARK}: lanes per wavefront of the architecture being compiled",
        "#if defined(__GFX8__) || defined(__GFX9__)",
        f"#define {MACRO} 64",
        f"#define {LOG2} 6",
        "#else",
        f"#define {MACRO} 32",
        f"#define {LOG2} 5",
        "#endif",
        "#endif",
    ]
    return eol.join(lines) + eol


class WaveChange(NamedTuple):
    """One rewrite: 1-based line of the input, the kind, what; ``unsafe``: made only with
    ``--unsafe-fixes`` (the line is marked so)."""

    line: int
    kind: str
    detail: str
    unsafe: bool = False


class WaveLeft(NamedTuple):
    """A 32-lane site left as it is, and why."""

    line: int
    kind: str
    reason: str


@dataclass
class WavePlan:
    """Span edits on the input text, what they change, and what was left."""

    edits: list[tuple[int, int, str]] = field(default_factory=list)
    changes: list[WaveChange] = field(default_factory=list)
    left: list[WaveLeft] = field(default_factory=list)
    needs_macro: bool = False


_MASK_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+\(?(?P<v>0[xX][fF]{8}[uU]?)\)?[ \t]*$"
)
_MASK_CONST = textre.compile(
    r"(?P<type>(?:unsigned(?:\s+int)?|uint32_t|int))\s+(?P<name>[A-Za-z_]\w*)\s*=\s*"
    r"(?P<v>0[xX][fF]{8}[uU]?)\s*;"
)
_SYNC_FIRST = r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|match_any|match_all)_sync\s*\(\s*"
_SYNC_USE = textre.compile(_SYNC_FIRST + r"(\w+)")
_OTHER_SIMT = textre.compile(
    r"\[\[\s*(?:thread|threads|simdgroup|threadgroup|quadgroup|simdgroups|dispatch)_\w*\s*\]\]"
    r"|<metal_stdlib>|\bmetal::|\bsycl::|<sycl/|<CL/|\bcl::|__kernel\b|\bsub_group"
)


def meaning_of(files: dict[str, CxxSource]) -> dict[str, FileMeaning]:
    """The lane-meaning decisions for every file of a run (Metal, SYCL and OpenCL files,
    whose sub-groups are not CUDA warps, get none)."""
    cuda = {
        rel: src
        for rel, src in files.items()
        if not rel.lower().endswith(".metal") and not _OTHER_SIMT.search(src.code)
    }
    found = analyze(cuda)
    return {rel: found.get(rel, FileMeaning(rel)) for rel in files}


class _Taken:
    """The spans already edited: a new one clashes when it overlaps one (``s < end and start
    < e``) or is the same insertion point. Spans that do not clash are kept sorted, the
    non-empty ones apart (they do not overlap, so their ends are sorted too): a clash is two
    bisections, where a scan of every earlier edit made 6,666 edits take 13 s."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.points: list[int] = []

    def clashes(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, max(end, start + 1)) - 1
        if start == end:  # an insertion: inside a span, or the same point again
            j = bisect.bisect_left(self.points, start)
            inside = i >= 0 and self.starts[i] < start < self.ends[i]
            return inside or (j < len(self.points) and self.points[j] == start)
        if i >= 0 and self.ends[i] > start:
            return True
        j = bisect.bisect_right(self.points, start)
        return j < len(self.points) and self.points[j] < end

    def append(self, span: tuple[int, int]) -> None:
        start, end = span
        if start == end:
            bisect.insort(self.points, start)
            return
        i = bisect.bisect_left(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)


class _Planner:
    def __init__(self, src: CxxSource, keep_masks: bool) -> None:
        self.src = src
        self.code = src.code
        self._uses: dict[str, list[int]] | None = None
        self.keep_masks = keep_masks
        self.out = WavePlan()
        self.taken = _Taken()
        self.marks: dict[int, list[str]] = {}

    def edit(
        self, start: int, end: int, new: str, kind: str, detail: str, *, unsafe: bool = False
    ) -> bool:
        if self.src.dead_at(start):
            return False
        if self.taken.clashes(start, end):
            return False
        self.taken.append((start, end))
        self.out.edits.append((start, end, new))
        line = self.src.line_of(start)
        self.out.changes.append(WaveChange(line, kind, detail, unsafe))
        kinds = self.marks.setdefault(line, [])
        tag = f"{UNSAFE} {kind}" if unsafe else kind
        if tag not in kinds:
            kinds.append(tag)
        if MACRO in new or LOG2 in new:
            self.out.needs_macro = True
        return True

    def leave(self, pos: int, kind: str, reason: str) -> None:
        if self.src.dead_at(pos):
            return
        entry = WaveLeft(self.src.line_of(pos), kind, reason)
        if entry not in self.out.left:
            self.out.left.append(entry)

    def decisions(self, meaning: FileMeaning, unsafe: bool) -> None:
        for d in meaning.decisions:
            if d.site.kind == "mask" and not self.keep_masks:
                continue  # below HIP 6.2 the masks are dropped at the calls
            action = d.unsafe if unsafe else d.default
            if action == "leave":
                if d.site.kind != "width":
                    self.leave(d.site.start, d.site.kind, d.reason)
                continue
            self.edit(
                d.site.start,
                d.site.end,
                d.site.new,
                d.site.kind,
                d.site.detail,
                unsafe=action == "unsafe",
            )

    def _divergent_use(self, name: str, divergent: Divergent | None) -> str | None:
        """Why a ``*_sync`` call of this file with mask ``name`` may run on some lanes only."""
        if divergent is None:
            return None
        for at in self._sync_uses().get(name, ()):
            why = divergent(at)
            if why is not None:
                line = self.src.line_of(at)
                return (
                    f"{name} left 32-bit (a 64-bit mask would trap): the mask of the call at "
                    f"line {line}, which may run on some lanes only: {why}"
                )
        return None

    def _sync_uses(self) -> dict[str, list[int]]:
        """Name -> where a ``*_sync`` call takes it as its mask, read once per file (a pattern
        per mask name over the file was quadratic: 24,000 mask defines, > 60 s; thirty-fifth
        re-run F4)."""
        if self._uses is None:
            uses: dict[str, list[int]] = {}
            for m in _SYNC_USE.finditer(self.code):
                uses.setdefault(m.group(1), []).append(m.start())
            self._uses = uses
        return self._uses

    def masks(self, divergent: Divergent | None = None) -> None:
        """Named full masks used as ``*_sync`` masks, where the target HIP keeps the masks
        (below 6.2 they are dropped at the calls and the constant is no longer used); not
        one a call that may run on some lanes only uses (``divergent`` says why)."""
        if not self.keep_masks:
            return
        src, code = self.src, self.code
        for line in range(1, src.line_count + 1):
            m = _MASK_DEFINE.match(src.code_line(line))
            if m is None or m.group("name") not in self._sync_uses():
                continue
            start, _ = src.line_span(line)
            why = self._divergent_use(m.group("name"), divergent)
            if why is not None:
                self.leave(start + m.start("v"), "mask", why)
                continue
            self.edit(
                start + m.start("v"),
                start + m.end("v"),
                FULL_MASK_64,
                "mask",
                f"{m.group('name')}: 32-bit full mask -> 64 bits",
            )
        for m in _MASK_CONST.finditer(code):
            name = m.group("name")
            if name not in self._sync_uses():
                continue
            why = self._divergent_use(name, divergent)
            if why is not None:
                self.leave(m.start("v"), "mask", why)
                continue
            if self.edit(
                m.start("type"), m.end("type"), "unsigned long long", "mask", f"{name}: 64-bit mask"
            ):
                self.taken.append((m.start("v"), m.end("v")))
                self.out.edits.append((m.start("v"), m.end("v"), FULL_MASK_64))

    def warpsize_constants(self) -> None:
        """``warpSize`` where a constant is required: the macro, which has its value."""
        for _at, ws, _message in warpsize_constexpr(self.code):
            self.edit(
                ws, ws + len("warpSize"), MACRO, "constant", f"warpSize as a constant -> {MACRO}"
            )

    def marks_edits(self) -> None:
        src, text = self.src, self.src.text
        for line, kinds in self.marks.items():
            lo, hi = src.line_span(line)
            body = text[lo:hi].rstrip("\r")
            note = f"{MARK} {', '.join(kinds)}"
            if MARK in body:
                continue
            if body.rstrip().endswith("\\"):
                cut = lo + len(body.rstrip()) - 1
                self.out.edits.append((cut, cut, f"/* {note} */ "))
            else:
                end = lo + len(body)
                self.out.edits.append((end, end, f" // {note}"))


def plan(
    src: CxxSource,
    *,
    keep_masks: bool,
    rel: str = "source.cu",
    widened: Sequence[int] = (),
    unsafe: bool = False,
    meaning: FileMeaning | None = None,
    divergent: Divergent | None = None,
) -> WavePlan:
    """The wave64 rewrites of ``src`` (see the module docstring). ``keep_masks``: the target
    HIP keeps the ``*_sync`` masks (>= 6.2), so full-mask constants must become 64-bit;
    ``widened``: offsets of literal masks the translator already widened (listed and marked
    here, not edited); ``unsafe``: ``--unsafe-fixes``; ``meaning``: this file's decisions
    when the run analysed several files together (else this file is analysed alone);
    ``divergent``: why a call at an offset may run on some lanes only (a full-mask constant
    such a call uses stays 32-bit)."""
    p = _Planner(src, keep_masks)
    for offset in widened:
        line = src.line_of(offset)
        p.out.changes.append(WaveChange(line, "mask", "0xffffffff -> 64 bits"))
        kinds = p.marks.setdefault(line, [])
        if "mask" not in kinds:
            kinds.append("mask")
    if meaning is None:
        meaning = meaning_of({rel: src})[rel]
    p.masks(divergent)
    p.warpsize_constants()
    p.decisions(meaning, unsafe)
    if p.out.needs_macro and f"define {MACRO}" in src.code:
        p.out.needs_macro = False
    p.marks_edits()
    p.out.changes.sort()
    p.out.left.sort()
    return p.out
