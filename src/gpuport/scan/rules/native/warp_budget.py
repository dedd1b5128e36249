"""A per-file budget for the warp rules (issue 23, the thirty-second re-run's F4).

The warp rules (GP302-GP308) read every warp token -- a shuffle, ballot or vote, a thread
index, a literal 32 or 31 -- with the lane-meaning analysis: linear in the file, but a few
tenths of a millisecond per token, and about a millisecond per warp operation, on a loaded
machine. Hand-written CUDA has few of them (the most in one file of every tree gpuport was
measured on, 13 sets and the port backtest's trees: 1,702 tokens, gpu4pyscf's
``md_indices.cu``, and 134 warp operations, fastllm's ``fastllm-cuda.cu``); a generated file
of megabytes with a few on every line kept ``scan`` busy for minutes. Beyond
:data:`WARP_TOKENS_BUDGET` tokens, the warp rules judge the file up to the unit (function,
macro) that holds the first token over the budget, and the file is reported as only partly
judged, with the line where judging stopped:
the verdict then cannot be ``ready`` on that file's account (the engine counts a file with a
skip reason as not read), and nothing past the cut is silently passed.
"""

from __future__ import annotations

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.rules.native.warp_units import find_units

__all__ = ["WARP_TOKENS_BUDGET", "judged_until"]

#: Warp tokens one file is judged for: about six times the most seen in a real file
WARP_TOKENS_BUDGET = 10_000

#: what the lane-meaning reader reads (warp_facts' trigger) and every warp operation
_WARP_TOKEN = textre.compile(
    r"threadIdx|blockDim|shfl|__ballot|__activemask|warpSize|__lane_id|tiled_partition"
    r"|thread_block_tile|Warp(?:Reduce|Scan)|\b(?:__any|__all|__match_|__reduce_|__syncwarp)"
    r"|(?<![\w.'])(?:32|31|0[xX]1[fF])(?![\w.'])|>>\s*5\b"
)


def judged_until(src: CxxSource) -> tuple[int, int, int, int] | None:
    """``None`` when the file is within the budget; else ``(cut, line, count, budget)``: the
    offset where the warp rules stop (the start of the line of the unit that holds the first
    token over the budget, or of that token's own line outside any unit), its 1-based line,
    the file's count of warp tokens and the budget."""
    code = src.code
    budget = WARP_TOKENS_BUDGET
    over = -1
    count = 0
    for m in _WARP_TOKEN.finditer(code):
        count += 1
        if count == budget + 1:
            over = m.start()
    if over < 0:
        return None
    cut = over
    for unit in find_units(src):
        if unit.start <= over < unit.end and unit.start < cut:
            cut = unit.start
    cut = code.rfind("\n", 0, cut) + 1
    return cut, src.line_of(cut), count, budget
