"""The scan's GP303-GP306 findings judged by the lane-meaning analysis (issue 25), so that
``gpuport scan`` and ``gpuport hipify --wave64`` say the same thing about the same 32.

:class:`JudgedSink` stands in for the rule sink while the warp-width passes run:

* a GP304 "lane math" hit where the analysis finds no lane or warp number (``i % 32`` of a
  data index, ``n / 32`` words, a divisibility check) is not reported, nor a GP305 shuffle
  width of 32 (CUDA's own segment) unless the code around it means the hardware wavefront;
* a GP303-GP306 hit inside code that is right on a 64-lane wavefront as written — 32-lane
  logical tiles with width-32 shuffles, consistent 32-lane groups in which each half of the
  wavefront does a CUDA warp's work — is lowered to info, with the reason;
* anything else (32-lane code next to ``warpSize`` or a ballot, a constant whose uses are in
  other files) stays a hazard.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from typing import Any

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.rules.native.common import Sink
from gpuport.scan.rules.native.warp_meaning import Component, FileMeaning, analyze

__all__ = ["JudgedSink"]

_JUDGED = frozenset({"GP303", "GP304", "GP305", "GP306"})
#: how far after a GP304 hit (the operator) its lane site (the 32) may start
_SITE_REACH = 16


class JudgedSink:
    """A :class:`~gpuport.scan.rules.native.common.Sink` whose GP303-GP306 hits go through the
    lane-meaning analysis of the file (see the module docstring)."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._meaning: FileMeaning | None = None
        self._sites: list[int] = []
        self._names: Counter[str] | None = None
        self._widths: list[Component] = []

    @property
    def meaning(self) -> FileMeaning:
        """The file's lane meaning, analysed on the first GP303-GP306 hit (most files have
        none, and pay nothing)."""
        if self._meaning is None:
            facts = self._sink.ctx.facts
            rel = self._sink.ctx.rel
            self._meaning = analyze(
                {rel: self._sink.src}, ints=facts.ints if facts is not None else None
            )[rel]
            self._sites = sorted(
                d.site.start for d in self._meaning.decisions if d.site.kind == "lane"
            )
        return self._meaning

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sink, name)

    def _lane_site_near(self, offset: int) -> bool:
        self.meaning  # noqa: B018 (analysed on first use)
        at = bisect.bisect_left(self._sites, offset)  # sorted: one look, not one per site
        return at < len(self._sites) and self._sites[at] <= offset + _SITE_REACH

    def hit(
        self,
        rule_id: str,
        offset: int,
        message: str | None = None,
        *,
        fix: str | None = None,
        severity: Severity | None = None,
        guarded: bool = False,
    ) -> bool:
        compare = rule_id == "GP303" and "compared with 32" in (message or "")
        text = message or ""
        if rule_id == "GP305" and text.startswith("Width 32") and "; " not in text:
            # a width-32 shuffle is CUDA's own segment: wrong only next to code that means the
            # hardware wavefront (warpSize, __lane_id())
            comp = self.meaning.component_at(offset)
            if comp is None or not comp.hw:
                return False
        if rule_id in _JUDGED and not guarded and not compare:
            if rule_id == "GP304" and not self._lane_site_near(offset):
                return False  # not a lane or warp number: a data index, a word, a check
            if rule_id == "GP303" and self._unused_template_default(offset):
                return self._sink.hit(
                    rule_id,
                    offset,
                    f"{message or ''}; the function it is a template parameter of never uses "
                    "it: it decides nothing".lstrip("; "),
                    fix=fix,
                    severity=severity,
                    guarded=True,
                )
            comp = self.meaning.component_at(offset)
            if comp is None and rule_id == "GP303":
                # `#define WARP_SIZE 32`: the hit is at the name, the unit is its value
                code = self._sink.code
                eol = code.find("\n", offset)
                end = eol if eol >= 0 else len(code)
                while end > offset + 1 and code[end - 1] in " \t\r\\;":
                    end -= 1  # a trailing comment is blanked to spaces; `WS = 32;`
                comp = self.meaning.component_at(end - 1)
            if comp is None and rule_id == "GP303" and self._host_constant(offset):
                # `constexpr uint32_t warp_size = 32;` inside a host function: a launch shape
                # (Nanoflow's `dim3 nthreads(warp_size, y)`; issue 24, nineteenth sample).
                # What the kernel's lanes do with it is the kernel's own finding
                guarded = True
                message = (
                    f"{message or ''}; set in host code, where it shapes a launch: the "
                    "kernel's lanes are judged in the kernel"
                ).lstrip("; ")
            if comp is not None and self._right_as_written(comp):
                guarded = True
                message = f"{message or ''}; {_why(comp)}".lstrip("; ")
            elif (
                comp is not None
                and comp.width_only
                and self._right_as_written(comp, True)
                and not self._on_unwidthed_line(comp, offset)
            ):
                # consistent 32-lane groups whose only fault is a shuffle with no width: that
                # shuffle is the finding (report_widths), the 32s around it are info
                guarded = True
                rel, note = comp.unwidthed[0]
                line = self._sink.src.line_of(note.offset) if rel == self._sink.ctx.rel else 0
                where = f" at line {line}" if line else ""
                message = (
                    f"{message or ''}; consistent 32-lane groups once the shuffle{where} "
                    "has CUDA's width (32), reported there"
                ).lstrip("; ")
                self._widths.append(comp)
        return self._sink.hit(rule_id, offset, message, fix=fix, severity=severity, guarded=guarded)

    def _host_constant(self, offset: int) -> bool:
        """Whether ``offset`` names a ``const``/``constexpr`` declared in a host function
        (a launch shape), not a variable a host function assigns (a vendor switch's
        ``warpSize = 32;`` is judged as the switch's)."""
        code = self._sink.code
        start = code.rfind("\n", 0, offset) + 1
        return _CONST_DECL.search(code, start, offset) is not None and self._sink.host_only_at(
            offset
        )

    def _unused_template_default(self, offset: int) -> bool:
        """Whether ``offset`` is the name of a template parameter (``unsigned warp_size =
        32``) that the function following the header never names (qsim's ``AddKernel``)."""
        code = self._sink.code
        head = code.rfind("template", max(0, offset - 300), offset + 1)
        name = _IDENT_WORD.match(code, offset)
        if head < 0 or name is None or any(c in code[head:offset] for c in ";{}"):
            return False
        body = code.find("{", offset, offset + 2000)
        if body < 0 or ";" in code[offset:body]:
            return False
        close = self._sink.src.match_close(body)
        if close is None:
            return False
        return textre.search(rf"\b{name.group()}\b", code[body:close]) is None

    def _on_unwidthed_line(self, comp: Component, offset: int) -> bool:
        """Whether the hit shares its line with a shuffle with no width (the finding there
        is that shuffle's, kept whole)."""
        src, rel = self._sink.src, self._sink.ctx.rel
        line = src.line_of(offset)
        return any(r == rel and src.line_of(n.offset) == line for r, n in comp.unwidthed)

    def report_widths(self) -> None:
        """One GP305 at each shuffle with no width of a component whose 32s were lowered to
        info for it (the shuffle is what breaks on a 64-lane wavefront)."""
        seen: set[int] = set()
        for comp in self._widths:
            for rel, note in comp.unwidthed:
                if rel != self._sink.ctx.rel or note.offset in seen:
                    continue
                seen.add(note.offset)
                self._sink.hit(
                    "GP305",
                    note.offset,
                    f"{note.text[0].upper()}{note.text[1:]}; give it CUDA's width, 32 (the "
                    "32-lane groups around it are consistent then)",
                )

    def _right_as_written(self, comp: Component, width_only: bool = False) -> bool:
        """Right on a 64-lane wavefront as written, judged from code this file shows: a
        component with a kernel in it (the uses of a lone constant or helper are in other
        files). A device function of the component that no other device code of it calls is
        called from elsewhere only when this file names it nowhere else either: a
        ``__host__ __device__`` helper that host code calls (llama.cpp's
        ``mmq_get_mma_tile_x_k``, issue 24 tenth sample) is this file's own. A component of
        logical tiles (width-32 shuffles) is right whoever calls it."""
        if not (comp.correct or width_only):
            return False
        if comp.tile and comp.correct and not comp.host_uses:
            # width-32 shuffles and 32-lane math: every thread computes what it does on CUDA,
            # whoever calls the helpers (lightseq's blockReduceSum in a header, issue 24
            # twelfth sample); what a caller then does with the hardware wavefront is the
            # caller's own finding
            return True
        if not any(u.kind == "kernel" for _, u in comp.units):
            return comp.correct and not comp.host_uses and self._numbers_its_own_lanes(comp)
        if not comp.orphans:
            return True
        if self._names is None:  # every identifier of the file, counted once (linear)
            self._names = Counter(self._sink.code.translate(_NOT_NAME).split())
        defined = Counter(u.name for _rel, u in comp.units)
        return all(self._names[name] > defined[name] for name in comp.orphans)

    def _numbers_its_own_lanes(self, comp: Component) -> bool:
        """A block-level helper with no kernel in this file, right as written, is right
        whoever calls it: each entry point (a device function nothing here calls) numbers its
        lanes and warps itself from ``threadIdx``, synchronises the block, takes no lane or
        warp number from its caller and returns none (issue 24, seventeenth sample: fairseq's
        ``blockReduce`` with ``tid / 32``, ``tid % 32`` and xor shuffles 16..1; ColossalAI's
        ``block_max``). A helper that returns a lane (``laneid()``), takes a ``warpid``, or
        lives in another file is not: what its lane means is its caller's."""
        rel, code = self._sink.ctx.rel, self._sink.code
        lanes = [s.start for r, s in comp.sites if r == rel and s.kind == "lane"]
        entries = [u for r, u in comp.units if u.name in comp.orphans and r == rel]
        if not lanes or not entries or len(entries) != len(comp.orphans):
            return False
        for u in entries:
            body_at = code.find("{", u.start, u.end)
            head, body = code[u.start : max(body_at, u.start)], code[max(body_at, u.start) : u.end]
            mine = [at for at in lanes if u.start <= at < u.end]
            if body_at < 0 or not mine or "threadIdx" not in body or "__syncthreads" not in body:
                return False
            if _LANE_WORD.search(head.rsplit("(", 1)[-1] if "(" in head else ""):
                return False  # a lane or warp number handed in by the caller
            # names given a lane or warp number (`int wid = tid / 32`), not a value read with
            # one (`T v = tid < n / 32 ? sums[lane] : 0`)
            named = {
                m.group(1)
                for at in mine
                for m in [_ASSIGNED.search(_statement(code, at))]
                if m is not None and not any(c in m.group(2) for c in "[?")
            }
            returns = _RETURN.findall(body)
            if not returns or any(
                set(_IDENT_WORD.findall(r)) & named or "threadIdx" in r for r in returns
            ):
                return False
        return True


def _statement(code: str, at: int) -> str:
    """The statement around offset ``at``: from the last ``;``, ``{`` or ``}`` before it to the
    next ``;`` or ``{`` (an ``if (...)`` test, not the block it opens)."""
    start = max(code.rfind(";", 0, at), code.rfind("{", 0, at), code.rfind("}", 0, at)) + 1
    ends = [e for e in (code.find(";", at), code.find("{", at)) if e >= 0]
    return code[start : min(ends) if ends else len(code)]


_CONST_DECL = textre.compile(r"\b(?:const|constexpr)\b")
_LANE_WORD = textre.compile(r"(?i)lane|warp|wid\b|\btid|wave")
_ASSIGNED = textre.compile(r"\b([A-Za-z_]\w*)\s*=(?!=)(.*)", re.S)
_RETURN = textre.compile(r"\breturn\b([^;]*);")
_IDENT_WORD = textre.compile(r"[A-Za-z_]\w*")


#: every character that cannot be in an identifier, mapped to a space (names by str.split)
_NOT_NAME = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}


def _why(comp: Component) -> str:
    reason = comp.reason.split("; --unsafe-fixes")[0]
    if "correct on a 64-lane wavefront" not in reason:
        reason = f"{reason}; correct on a 64-lane wavefront as written".lstrip("; ")
    return reason
