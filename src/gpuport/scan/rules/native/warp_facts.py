"""What one unit of CUDA code says about the warp (issue 25, the second part of the
lane-meaning analysis; units come from :mod:`.warp_units`, decisions from :mod:`.warp_meaning`).

For each unit the reader lists:

* **sites**: 32-lane tokens a wave64 port would change, each with its replacement (lane and
  warp numbers ``tid % 32``, ``tid >> 5``; warp counts ``blockDim.x / 32``; ``lane == 31``;
  shuffle loops from 16; a shuffle from lane 31; ``__shared__ T s[32]``; strides ``+= 32``;
  warp constants ``= 32``; ballots kept in 32 bits and ``__popc`` of them);
* **anchors**: what makes 32 a *logical tile* that HIP keeps on a 64-lane wavefront: a shuffle
  with an explicit width of 32 or less, ``tiled_partition<32>``;
* **blockers**: a 32 whose meaning is not a lane (a bit position, a data offset ``lane + 32``,
  a size ``2 * WS``, an unrolled shuffle from offset 16, a global warp number, a lane number
  passed to another function, a host use, a 32-thread launch) — rewriting the sites around
  it would break the code;
* **hw**: code that already means the hardware wavefront (``warpSize``, ``__lane_id()``,
  hipCUB's default-width warp primitives);
* **needs**: operations that read across the whole 64-lane wavefront on AMD (a ballot, a
  shuffle from a fixed lane with no width): 32-lane code around them is wrong as written;
* **widths**: shuffles from a fixed or computed lane with no width, where adding CUDA's
  default width (32) keeps CUDA's meaning exactly.

Every 32 of a device unit that no site, anchor or use explains is a blocker, so what the
reader does not understand stops a rewrite instead of being rewritten.
"""

from __future__ import annotations

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.warp_base import _LANE_KINDS, LOG2, WAVE, Facts, Note, Site
from gpuport.scan.rules.native.warp_ops import OpsPasses
from gpuport.scan.rules.native.warp_units import Unit
from gpuport.scan.rules.native.warp_uses import UsesPasses

__all__ = ["LOG2", "WAVE", "Facts", "Note", "Site", "expr_kind", "read_unit"]


#: text without any of these says nothing about the warp (read no further)
_WARP_TEXT = textre.compile(
    r"threadIdx|blockDim|shfl|__ballot|__activemask|warpSize|__lane_id|tiled_partition"
    r"|thread_block_tile|Warp(?:Reduce|Scan)|GPUPORT_|(?<![\w.'])(?:32|31|0[xX]1[fF])(?![\w.'])"
    r"|>>\s*5\b"
)


class _Reader(OpsPasses, UsesPasses):
    """Reads one unit (see :func:`read_unit`)."""

    def read(self) -> Facts:
        if self.u.value32 is not None:
            s, e = self.u.value32
            self.site(s, e, WAVE, "constant", f"{self.u.name}: 32 -> {WAVE}")
            self.f.lane32 = True
            return self.f
        self.shared_arrays()
        self.definitions()
        self.hw()
        self.tiles()
        self.tile_numbers()
        self.shuffles()
        self.loops()
        self.lane_math()
        self.compares()
        self.strides()
        self.ballots()
        self.lane_uses()
        self.const_uses()
        self.unexplained()
        self.f.lane32 = self.f.lane32 or any(k in _LANE_KINDS for k in self.kinds.values())
        return self.f


def read_unit(
    src: CxxSource,
    unit: Unit,
    *,
    consts: set[str],
    opaque: set[str] = frozenset(),  # type: ignore[assignment]
    lane_fns: dict[str, str] | None = None,
    shared: set[str] = frozenset(),  # type: ignore[assignment]
    ints: dict[str, int] | None = None,
) -> Facts:
    """What ``unit`` says about the warp (see the module docstring). ``consts``: the names
    of the warp constants equal to 32 (the project's); ``opaque``: other names equal to 32;
    ``lane_fns``: functions that return a lane or warp number, and which; ``shared``: the
    file's ``__shared__`` arrays; ``ints``: integer constants the project defines."""
    text = src.code[unit.start : unit.end]
    if unit.kind == "host":
        if "<<<" not in text and "hipLaunchKernelGGL" not in text:
            return Facts()
        r = _Reader(src, unit, consts, opaque, lane_fns or {}, shared, ints)
        r.launches()
        return r.f
    if unit.value32 is None and not _WARP_TEXT.search(text):
        names = consts | opaque | set(lane_fns or ())
        if not names or not any(n in text for n in names):
            return Facts()  # nothing about the warp: most units of a large tree
    return _Reader(src, unit, consts, opaque, lane_fns or {}, shared, ints).read()


def expr_kind(src: CxxSource, unit: Unit, expr: str, consts: set[str]) -> str:
    """The lane kind of ``expr`` in ``unit`` (see :meth:`_Reader.kind`)."""
    return _Reader(src, unit, consts, set(), {}, set()).kind(expr)
