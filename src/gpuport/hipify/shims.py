"""Small portable shims for CUDA APIs the target HIP lacks (issue 25, item 4).

Where the HIP version translated for has no counterpart of an API the code uses, hipify can
leave it (and report it unsupported: the output does not compile) or emit a shim: a few lines,
written once per file after the includes, each block guarded by a macro of its own and marked
``// gpuport: shim ...``, so the output compiles where a hand port does not. Each shim is
listed in the report (``shims``), and the name is no longer reported unsupported.

* ``__syncwarp`` (HIP < 6.2): on AMD a wavefront runs in lockstep; what ``__syncwarp`` adds is
  memory ordering between its lanes, which this shim makes with the same wavefront-scope
  fences and barrier HIP 6.2's own ``__syncwarp`` uses. The mask is accepted and ignored (HIP
  6.2 ignores it too). Guarded by ``HIP_VERSION`` so a newer HIP uses its own.
* ``cooperative_groups/reduce.h`` (``cg::reduce`` and its ``cg::plus``/``less``/``greater``/
  ``bit_and``/``bit_or``/``bit_xor`` functors; no HIP 5.x or 6.x header has them): the include
  becomes HIP's cooperative groups header and ``cg::reduce`` is defined as a tree over the
  group's ranks (``shfl_down`` by 1, 2, 4, ..., a rank adding only partners inside the group,
  then rank 0's result broadcast: every thread gets the result, as ``cg::reduce`` documents).
  It holds for any group size and for coalesced groups (a ``labeled_partition`` of a tile has
  any number of threads, and HIP's ``coalesced_group`` has ``shfl_down``/``shfl`` but no
  ``shfl_xor``), where a butterfly over ``shfl_xor`` would not compile or, for a size that is
  not a power of two, would combine threads outside the group.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuport import textre

__all__ = ["MARK", "Shim", "first_use", "shim_block", "uses_syncwarp"]

MARK = "gpuport: shim"

_SYNCWARP = textre.compile(r"(?<![\w.>])__syncwarp\s*\(")
_OWN_SYNCWARP = textre.compile(r"\#[ \t]*define[ \t]+__syncwarp\b|\b__syncwarp\s*\([^)]*\)\s*\{")


@dataclass(frozen=True)
class Shim:
    """One shim: the API it stands for and why it is needed."""

    name: str
    reason: str


_USE = textre.compile(
    r"(?<![\w.>])(?:__syncwarp\s*\(|reduce\s*\(|(?:plus|less|greater|bit_and|bit_or|bit_xor)\s*<)"
)


def first_use(code: str) -> int:
    """Where the code first uses a shimmed API (the end of ``code`` when it does not)."""
    m = _USE.search(code)
    return m.start() if m else len(code)


def uses_syncwarp(code: str) -> bool:
    """Whether the code calls ``__syncwarp`` and has no shim of its own for it."""
    return _SYNCWARP.search(code) is not None and _OWN_SYNCWARP.search(code) is None


_SYNCWARP_BLOCK = """\
// {mark}: __syncwarp is not in HIP < 6.2
#if !defined(GPUPORT_SHIM_SYNCWARP) && \
    (HIP_VERSION_MAJOR < 6 || (HIP_VERSION_MAJOR == 6 && HIP_VERSION_MINOR < 2))
#define GPUPORT_SHIM_SYNCWARP
__device__ inline void __syncwarp(unsigned long long = 0) {{
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}}
#endif
"""

_CG_REDUCE_BLOCK = """\
#ifndef GPUPORT_SHIM_CG_REDUCE // {mark}: cooperative_groups::reduce is not in HIP {version}
#define GPUPORT_SHIM_CG_REDUCE
namespace cooperative_groups {{
template <class T> struct plus {{ __device__ T operator()(T a, T b) const {{ return a + b; }} }};
template <class T> struct less {{
  __device__ T operator()(T a, T b) const {{ return b < a ? b : a; }}
}};
template <class T> struct greater {{
  __device__ T operator()(T a, T b) const {{ return a < b ? b : a; }}
}};
template <class T> struct bit_and {{ __device__ T operator()(T a, T b) const {{ return a & b; }} }};
template <class T> struct bit_or {{ __device__ T operator()(T a, T b) const {{ return a | b; }} }};
template <class T> struct bit_xor {{ __device__ T operator()(T a, T b) const {{ return a ^ b; }} }};
template <class Group, class T, class Op>
__device__ T reduce(const Group& g, T v, Op op) {{
  const unsigned int n = g.size(), r = g.thread_rank();
  for (unsigned int o = 1; o < n; o *= 2) {{
    const T t = g.shfl_down(v, o);
    if (r + o < n) v = op(v, t);
  }}
  return g.shfl(v, 0);
}}
}}  // namespace cooperative_groups
#endif
"""


def shim_block(shims: list[Shim], version: str, eol: str = "\n") -> str:
    """The text of the shims, in a fixed order."""
    parts: list[str] = []
    names = {s.name for s in shims}
    if "__syncwarp" in names:
        parts.append(_SYNCWARP_BLOCK.format(mark=MARK))
    if "cooperative_groups/reduce.h" in names:
        parts.append(_CG_REDUCE_BLOCK.format(mark=MARK, version=version))
    return "".join(parts).replace("\n", eol)
