"""What the 32s of CUDA code mean on a 64-lane wavefront, decided over whole components
(issue 25): the analysis ``hipify --wave64`` rewrites by and the scan's GP303-GP307 judge by.

Units (:mod:`.warp_units`) that share a name — a kernel and the warp helpers it calls, the
constant they divide by, the macro built from it — form one *component*, over every file
given. Each component is read (:mod:`.warp_facts`) and judged as a whole:

* **logical tiles** (a shuffle with an explicit width of 32 or less, ``tiled_partition<32>``):
  HIP gives 32-lane segments on a 64-lane wavefront too, so the 32s are right as written and
  are left, in every mode ("32 is a logical tile: width-32 shuffles at line N");
* **blocked**: some 32 of the component is not a lane (a bit position, ``lane + 32`` data
  offsets, an unrolled shuffle from offset 16, a host use of the constant, a launch with 32
  threads...): rewriting the others would break it, so nothing is rewritten and the blocker
  is the reason;
* **portable**: every 32 of the component is a lane site with a wave-size replacement. Then
  it is *wrong as written* on AMD when it mixes with what already means the hardware
  wavefront (``warpSize``, ``__lane_id()``, a ballot kept in 32 bits): the port is then the
  fix, made by default. When it is right as written (consistent 32-lane groups, each half of
  the wavefront doing a CUDA warp's work), the port to the full wavefront is offered only
  with ``--unsafe-fixes``.

A shuffle from a fixed or computed lane with no width (``__shfl(v, 0)``) reads across the
64-lane wavefront on AMD; in code with no hardware-wavefront meaning, adding CUDA's own
width (32) keeps exactly what CUDA does, so that is made by default unless the component is
ported.

:func:`analyze` takes every file of a run (hipify) or one file (scan) and returns, per file,
each site's decision and each component's verdict at an offset.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.warp_facts import Facts, Note, Site, expr_kind, read_unit
from gpuport.scan.rules.native.warp_units import Unit, find_units, warpish

__all__ = ["Action", "Component", "Decision", "FileMeaning", "analyze"]

Action = Literal["fix", "unsafe", "leave"]

_IDENT = textre.compile(r"[A-Za-z_]\w*")
_SHARED_NAME = textre.compile(r"__shared__\b[^;{}()=]*?\b(?P<name>[A-Za-z_]\w*)\s*[\[;]")
#: every character that cannot be in an identifier, mapped to a space (names by str.split)
_NOT_NAME = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
_INT_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]+\(?[ \t]*(?P<v>\d{1,9})"
    r"[uUlL]*[ \t]*\)?[ \t]*$",
    re.M,
)
_INT_CONST = textre.compile(
    r"\b(?:constexpr|const)[ \t]+(?:static[ \t]+)?(?:unsigned[ \t]+|signed[ \t]+)?"
    r"(?:int|unsigned|long|short|size_t|u?int(?:8|16|32|64)_t|auto)[ \t]+(?P<name>[A-Za-z_]\w*)"
    r"[ \t]*(?:=|\{|\()[ \t]*(?P<v>\d{1,9})[uUlL]*[ \t]*[)}]?[ \t]*;"
)
_RETURN_ONLY = textre.compile(r"^\{\s*return\s+(?P<e>[^;]+);\s*\}$")


@dataclass
class Component:
    """Units judged together, and the verdict."""

    cid: int
    units: list[tuple[str, Unit]] = field(default_factory=list)
    facts: list[tuple[str, Facts]] = field(default_factory=list)
    host_uses: list[tuple[str, int, str]] = field(default_factory=list)  # (rel, offset, name)
    launch: list[tuple[str, Note]] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)  # device helpers no analysed code calls
    #: fix: the port is made by default; unsafe: only with --unsafe-fixes; leave: never
    port: Action = "leave"
    #: right as written on a 64-lane wavefront (no port needed)
    correct: bool = True
    reason: str = ""
    evidence: str = ""  # why it is wrong as written (when it is)
    hw: bool = False
    #: wrong as written only through shuffles with no width (``__shfl_sync(m, v, 0)``): the
    #: 32-lane groups are consistent once those have CUDA's width
    width_only: bool = False
    #: its 32s are logical tiles (shuffles with a width of 32 or less): each 32-lane segment
    #: of a wavefront computes what a CUDA warp does, for every thread, whoever calls it
    tile: bool = False
    unwidthed: list[tuple[str, Note]] = field(default_factory=list)

    @property
    def sites(self) -> list[tuple[str, Site]]:
        return [(rel, s) for rel, f in self.facts for s in f.sites]


@dataclass(frozen=True)
class Decision:
    """One rewrite and what each mode does with it."""

    rel: str
    site: Site
    default: Action  # fix or leave (never unsafe)
    unsafe: Action  # with --unsafe-fixes: fix, unsafe (made, marked) or leave
    reason: str  # why it is left (default) or why it is unsafe
    component: int


@dataclass
class FileMeaning:
    """The decisions for one file, and the components its offsets belong to."""

    rel: str
    decisions: list[Decision] = field(default_factory=list)
    spans: list[tuple[int, int, Component]] = field(default_factory=list)

    def component_at(self, offset: int) -> Component | None:
        """The component whose unit holds ``offset`` (the innermost). Units nest or stand
        apart: the last one starting at or before ``offset``, then its enclosing ones (a
        look at every unit per question was 2.7 s for 4,444 kernels; third review)."""
        index = self._index()
        if index is None:  # units that overlap without nesting: look at each
            best: tuple[int, Component] | None = None
            for start, end, comp in self.spans:
                if start <= offset < end and (best is None or end - start < best[0]):
                    best = (end - start, comp)
            return best[1] if best else None
        order, starts, parent = index
        k = bisect.bisect_right(starts, offset) - 1
        while k >= 0:
            start, end, comp = self.spans[order[k]]
            if start <= offset < end:
                return comp
            k = parent[k]
        return None

    def _index(self) -> tuple[list[int], list[int], list[int]] | None:
        """The units by start (outer first; of two alike, the earlier listed inside) with
        each one's enclosing unit, or None when two overlap without nesting."""
        key = (len(self.spans), id(self.spans))
        cached = self.__dict__.get("_nesting")
        if cached is not None and cached[0] == key:
            return cached[1]  # type: ignore[no-any-return]
        order = sorted(
            range(len(self.spans)), key=lambda i: (self.spans[i][0], -self.spans[i][1], -i)
        )
        starts: list[int] = []
        parent: list[int] = []
        stack: list[int] = []
        found: tuple[list[int], list[int], list[int]] | None = (order, starts, parent)
        for k, i in enumerate(order):
            start, end, _ = self.spans[i]
            while stack and self.spans[order[stack[-1]]][1] <= start:
                stack.pop()
            if stack and self.spans[order[stack[-1]]][1] < end:
                found = None  # overlaps without nesting
                break
            parent.append(stack[-1] if stack else -1)
            stack.append(k)
            starts.append(start)
        self.__dict__["_nesting"] = (key, found)
        return found


class _Union:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _line(src: CxxSource, offset: int) -> int:
    return src.line_of(offset)


def analyze(
    files: Mapping[str, CxxSource], *, ints: Mapping[str, int] | None = None
) -> dict[str, FileMeaning]:
    """Decide every 32-lane site of ``files`` (relative path -> lexed source); ``ints``:
    integer constants the project defines elsewhere (name -> value)."""
    units: list[tuple[str, Unit]] = []
    for rel, src in files.items():
        units += [(rel, u) for u in find_units(src)]
    # the project's constants: warp constants equal to 32, and other names equal to 32
    consts: set[str] = set()
    values: dict[str, set[int]] = {}
    for src in files.values():
        for name, value in _int_values(src.code):
            values.setdefault(name, set()).add(value)
    known = dict(ints or {})
    known.update({n: next(iter(v)) for n, v in values.items() if len(v) == 1})
    for _rel, u in units:
        if u.value32 is not None:
            consts.add(u.name)
    opaque = {n for n, v in known.items() if v == 32 and not warpish(n) and n not in consts}
    shared: dict[str, set[str]] = {}
    lane_fns: dict[str, str] = {}
    for rel, u in units:  # one-line functions that return a lane or warp number
        if u.device and u.body is not None:
            src = files[rel]
            m = _RETURN_ONLY.match(src.code[u.body[0] : u.body[1] + 1])
            kind = expr_kind(src, u, m.group("e"), consts) if m is not None else "O"
            if kind in ("L32", "W32", "LHW", "WHW"):
                lane_fns[u.name] = kind
    for rel, src in files.items():
        shared[rel] = (
            {m.group("name") for m in _SHARED_NAME.finditer(src.code)}
            if "__shared__" in src.code
            else set()
        )
    facts: list[Facts] = []
    for rel, u in units:
        facts.append(
            read_unit(
                files[rel],
                u,
                consts=consts,
                opaque=opaque,
                lane_fns=lane_fns,
                shared=shared[rel],
                ints=known,
            )
        )
    return _decide(files, units, facts, consts)


def _int_values(code: str) -> list[tuple[str, int]]:
    """``#define NAME 32`` and ``constexpr int NAME = 32;``-style integer constants (each
    pattern bounded to one line, so a long blank raw string costs nothing)."""
    out: list[tuple[str, int]] = []
    if "define" in code:
        out += [(m.group("name"), int(m.group("v"))) for m in _INT_DEFINE.finditer(code)]
    if "const" in code:
        out += [(m.group("name"), int(m.group("v"))) for m in _INT_CONST.finditer(code)]
    return out


def _relevant(u: Unit, f: Facts) -> bool:
    return bool(
        u.value32 is not None
        or f.sites
        or f.anchors
        or f.needs
        or f.widths
        or f.blockers
        or (f.hw and u.kind != "host")
        or f.lane32
        or f.masks
        or f.unknown
        or f.fixed_tiles
    )


def _decide(
    files: Mapping[str, CxxSource],
    units: list[tuple[str, Unit]],
    facts: list[Facts],
    consts: set[str],
) -> dict[str, FileMeaning]:
    n = len(units)
    uf = _Union(n)
    by_name: dict[str, list[int]] = {}
    for i, (_rel, u) in enumerate(units):
        if u.kind != "host":
            by_name.setdefault(u.name, []).append(i)
    relevant = [_relevant(u, f) for (_rel, u), f in zip(units, facts, strict=True)]
    names_in: list[set[str]] = []
    for rel, u in units:
        code = files[rel].code
        names_in.append(set(code[u.start : u.end].translate(_NOT_NAME).split()) - {u.name})
    # relevance spreads through names: a macro or declaration built from a relevant name,
    # a device function calling a relevant helper. A worklist over who names whom (passes
    # until nothing changed took a pass per link of a call chain written callee last:
    # eighteenth re-run, 400 KB 11.6 s)
    users: dict[str, list[int]] = {}
    for i, (_rel, u) in enumerate(units):
        if u.kind != "host" and not relevant[i]:
            for name in names_in[i]:
                if name in by_name:
                    users.setdefault(name, []).append(i)
    todo = [j for j in range(n) if relevant[j] and units[j][1].kind != "host"]
    while todo:
        for i in users.pop(units[todo.pop()][1].name, ()):
            if not relevant[i]:
                relevant[i] = True
                todo.append(i)
    called: set[str] = set()
    # a unit naming X joins every relevant unit called X: they are joined to each other once,
    # and the unit to the first of them (N kernels naming a macro defined N times joined
    # N x N: twentieth re-run, 782 KB 24 s)
    group: dict[str, int | None] = {}  # name -> its first relevant unit, once joined
    for i, (_rel, u) in enumerate(units):
        if u.kind == "host" or not relevant[i]:
            continue
        for name in names_in[i]:
            if name not in group:
                same = [j for j in by_name.get(name, ()) if relevant[j]]
                for j in same[1:]:
                    uf.join(same[0], j)
                if any(units[j][1].kind == "device" for j in same):
                    called.add(name)
                group[name] = same[0] if same else None
            first = group[name]
            if first is not None:
                uf.join(i, first)
    comps: dict[int, Component] = {}
    for i, (rel, u) in enumerate(units):
        if not relevant[i] or u.kind == "host":
            continue
        root = uf.find(i)
        comp = comps.setdefault(root, Component(cid=root))
        comp.units.append((rel, u))
        comp.facts.append((rel, facts[i]))
    # host code: uses of a component's names, and its kernels' launches. Only a component's
    # first host use and first launch are read (its reason), so a name is followed from the
    # first host unit that uses it; later ones would only add more of the same
    used_names: set[str] = set()
    launched_names: set[str] = set()
    for i, (rel, u) in enumerate(units):
        if u.kind != "host" and not u.both:
            continue
        src = files[rel]
        for name in names_in[i] | ({u.name} if u.both else set()):
            if u.kind != "host" or name in used_names:
                continue
            used_names.add(name)
            for j in by_name.get(name, ()):
                if not relevant[j] or units[j][1].kind in ("kernel", "device"):
                    continue
                used = comps.get(uf.find(j))
                if used is not None:
                    at = src.code.find(name, u.start, u.end)
                    used.host_uses.append((rel, at, name))
        for kernel, notes in facts[i].launches.items():
            if not notes or kernel in launched_names:
                continue
            launched_names.add(kernel)
            for j in by_name.get(kernel, ()):
                launched = comps.get(uf.find(j)) if relevant[j] else None
                if launched is not None:
                    launched.launch += [(rel, note) for note in notes]
    for comp in comps.values():
        for _rel, u in comp.units:
            if u.kind == "device" and u.name not in called:
                comp.orphans.append(u.name)
        _judge(comp, files)
    return _meanings(files, comps)


def _at(files: Mapping[str, CxxSource], rel: str, note: Note) -> str:
    return f"{note.text} (line {_line(files[rel], note.offset)})"


def _judge(comp: Component, files: Mapping[str, CxxSource]) -> None:
    """Set the component's verdict (see the module docstring)."""
    anchors = [(rel, a) for rel, f in comp.facts for a in f.anchors]
    blockers = [(rel, b) for rel, f in comp.facts for b in f.blockers]
    hw = [(rel, h) for rel, f in comp.facts for h in f.hw]
    ballots = [(rel, b) for rel, f in comp.facts for b in f.ballots]
    votes = [(rel, x) for rel, f in comp.facts for x in f.needs if "votes" in x.text]
    unwidthed = [(rel, x) for rel, f in comp.facts for x in f.needs if "no width" in x.text]
    lane32 = any(f.lane32 for _rel, f in comp.facts) or any(
        s.kind in ("lane", "shuffle", "constant") for _rel, s in comp.sites
    )
    comp.hw = bool(hw)
    # wrong as written: 32-lane code next to what reads the whole 64-lane wavefront
    wrong: list[str] = []
    if ballots:
        wrong.append(_at(files, *ballots[0]))
    if lane32 and hw:
        wrong.append(f"32-lane code next to {_at(files, *hw[0])}")
    if votes and lane32:
        wrong.append(f"32-lane groups read {_at(files, *votes[0])}")
    repaired = not wrong  # what only the width fixes need is repaired by them
    if unwidthed and not hw:
        wrong.append(_at(files, *unwidthed[0]))
    unknown = [(rel, x) for rel, f in comp.facts for x in f.unknown]
    if unknown and not wrong:
        wrong.append(_at(files, *unknown[0]))
        repaired = False
    comp.correct = not wrong
    comp.evidence = wrong[0] if wrong else ""
    comp.width_only = bool(wrong) and repaired and bool(unwidthed)
    comp.tile = bool(anchors)
    comp.unwidthed = unwidthed
    if not comp.sites:
        comp.port = "leave"
        return
    narrow = [(rel, x) for rel, f in comp.facts for x in f.fixed_tiles]
    if narrow:
        comp.reason = f"sub-warp groups: {_at(files, *narrow[0])}"
    elif blockers:
        comp.reason = _at(files, *blockers[0])
    elif comp.host_uses:
        rel, at, name = comp.host_uses[0]
        comp.reason = f"host and device share `{name}` (host code at line {_line(files[rel], at)})"
    elif comp.launch:
        comp.reason = _at(files, *comp.launch[0])
    elif comp.orphans:
        comp.reason = f"`{comp.orphans[0]}` is called from code outside the files translated"
    if comp.reason:
        if anchors:
            comp.reason = f"32 is a logical tile: {_at(files, *anchors[0])}; {comp.reason}"
        comp.port = "leave"
        if comp.correct:
            comp.reason += "; correct on a 64-lane wavefront as written"
        elif repaired:
            comp.reason += "; correct once the shuffles have CUDA's width"
        else:
            comp.reason += f"; needs a hand port: {comp.evidence}"
        return
    if anchors:  # 32-lane logical tiles that HIP keeps: right as written, portable whole
        comp.port = "unsafe"
        comp.reason = (
            f"32 is a logical tile: {_at(files, *anchors[0])}; correct on a 64-lane wavefront "
            "as written; --unsafe-fixes ports the tiles to the full wavefront"
        )
    elif not repaired:
        comp.port = "fix"
        comp.reason = f"the port fixes {comp.evidence}"
    else:
        comp.port = "unsafe"
        comp.reason = (
            "consistent 32-lane groups, correct on a 64-lane wavefront as written (each half "
            "does a CUDA warp's work); --unsafe-fixes ports them to the full wavefront"
        )


def _meanings(
    files: Mapping[str, CxxSource], comps: dict[int, Component]
) -> dict[str, FileMeaning]:
    out = {rel: FileMeaning(rel) for rel in files}
    for comp in comps.values():
        for rel, u in comp.units:
            out[rel].spans.append((u.start, u.end, comp))
        for rel, f in comp.facts:
            for s in f.sites:
                unsafe: Action = comp.port if comp.port != "fix" else "fix"
                out[rel].decisions.append(
                    Decision(
                        rel,
                        s,
                        "fix" if comp.port == "fix" else "leave",
                        unsafe,
                        comp.reason,
                        comp.cid,
                    )
                )
            for site in f.masks:
                out[rel].decisions.append(Decision(rel, site, "fix", "fix", "", comp.cid))
            for w in f.widths:
                if comp.hw:
                    continue
                out[rel].decisions.append(
                    Decision(
                        rel,
                        w,
                        "leave" if comp.port == "fix" else "fix",
                        "fix" if comp.port == "leave" else "leave",
                        "keeps CUDA's 32-lane shuffle segments",
                        comp.cid,
                    )
                )
    for meaning in out.values():
        meaning.decisions.sort(key=lambda d: (d.site.start, d.site.end))
    return out
