"""Project functions that use a hardware lane: their callers number hardware lanes too.

GP304 lowers ``lane = threadIdx.x % 32`` to info in a file with no shuffle, vote, ballot or
warp collective: such a lane can only number logical 32-thread groups addressed through
memory. A file that passes the lane to a helper of the project whose definition shuffles
(``read_lane(v, (lane + 1) % 32)``, ``read_lane`` in an included ``util.cuh`` calling
``__shfl_sync``) does use a hardware lane, although the file itself shows no shuffle
(fortyfirst re-run F3). :func:`lane_functions` names every function of the project whose
body uses a hardware lane (:data:`HW_LANE`), or calls one that does, so the rule can count
a call of one as a hardware-lane use.

A project's function-like macro counts like a function (``#define READ_LANE(v, l)
__shfl_sync(__activemask(), v, l)``, continued lines included): its body is read the same
way (forty-second re-run F13).

Conservative: a definition anywhere in the project counts (an included header, a file
compiled with relocatable device code), and a name defined twice counts when one of its
definitions shuffles. Text only, one pass per file, linear in the text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping

from gpuport import textre

__all__ = ["HW_LANE", "called_names", "lane_functions"]

#: what makes a lane number a hardware lane: shuffles, votes, ballots, matches, warp
#: reductions, the lane-id register, cooperative-groups tiles and CUB's warp collectives
#: (a project's own wrapper counts by its name: apex's `WARP_SHFL(sigma2, srcLaneB)`, ggml's
#: `warp_reduce_sum(`, gunrock's `lanemask_lt()`), warp-wide matrix loads (`ldmatrix`, `wmma`)
#: and the hardware's own `warpSize`, which a literal 32 beside it contradicts on AMD
#: (PowerInfer's `(wid * warpSize + i) * stride + wtid`, `wid = tid / 32`)
HW_LANE = textre.compile(
    r"__(?:any|all|match|reduce_\w+_sync|uni)\w*\s*\("
    r"|\w*(?i:shfl|shuffle|ballot|activemask|lane_?id|lane_?mask|vote|ldmatrix|wmma)\w*\s*\("
    r"|\w*(?i:warp)_?(?i:reduce|all_?reduce|scan|sum|max|min|broadcast)\w*\s*\("
    r"|\bmma\w*\s*\(|\bwarpSize\b"
    r"|%%?laneid|\blaneid\b|\b(?:tiled_partition|coalesced_threads|thread_block_tile)\b"
    r"|\bWarp(?:Reduce|Scan|Load|Store|Exchange|MergeSort)\b|\.(?:any|all)\s*\("
)

#: a function definition's head: a name, its parameters, then its body's brace
_DEFINITION = textre.compile(
    r"\b([A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*"
    r"(?:const\s*|noexcept\s*|override\s*|final\s*|->\s*[\w:<>,\s*&]+?\s*)*\{"
)
#: a function-like macro: its name, then its body up to the end of the (continued) line
_MACRO = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+([A-Za-z_]\w*)\([^)\n]*\)((?:\\\r?\n|\\.|[^\\\n])*)", re.M
)
_CALL = textre.compile(r"\b([A-Za-z_]\w*)\s*\(")
_BRACE = textre.compile(r"[{}]")
_KEYWORDS = frozenset(
    {"if", "for", "while", "switch", "catch", "return", "sizeof", "do", "else", "defined"}
)
#: more definitions than this in the project: every name a definition calls is followed
MOST_DEFINITIONS = 200_000


def called_names(code: str) -> set[str]:
    """The names ``code`` calls (``name(``), keywords aside."""
    return set(_CALL.findall(code)) - _KEYWORDS


def _bodies(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each outermost function body of ``text``: a definition inside
    another's body (a lambda, a local class's method) belongs to the outer one, so the
    bodies are disjoint and the work is linear."""
    heads = [
        (m.group(1), m.end() - 1) for m in _DEFINITION.finditer(text) if m.group(1) not in _KEYWORDS
    ]
    if not heads:
        return []
    closing: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE.finditer(text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            closing[stack.pop()] = m.start()
    out: list[tuple[str, int, int]] = []
    end = -1
    for name, open_at in heads:
        if open_at < end or open_at not in closing:
            continue
        end = closing[open_at]
        out.append((name, open_at, end))
    return out


def lane_functions(texts: Mapping[str, str]) -> frozenset[str]:
    """The names of the project's functions whose body uses a hardware lane, directly or
    through another such function of the project."""
    direct: set[str] = set()
    calls: dict[str, set[str]] = {}  # callee -> the functions that call it
    count = 0
    for text in texts.values():
        if "(" not in text:
            continue
        macros = _MACRO.finditer(text) if "define" in text else ()
        found: Iterable[tuple[str, str]] = ((m.group(1), m.group(2)) for m in macros)
        if "{" in text:
            found = itertools.chain(found, ((n, text[s:e]) for n, s, e in _bodies(text)))
        for name, body in found:
            count += 1
            if count > MOST_DEFINITIONS:
                return frozenset(direct)
            if HW_LANE.search(body) is not None:
                direct.add(name)
                continue
            for callee in called_names(body):
                calls.setdefault(callee, set()).add(name)
    out = set(direct)
    todo = list(direct)
    while todo:  # each name enters once: linear in the calls
        for caller in calls.get(todo.pop(), ()):
            if caller not in out:
                out.add(caller)
                todo.append(caller)
    return frozenset(out)
