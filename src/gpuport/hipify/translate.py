"""Token-aware CUDA -> HIP source translation (the core of `gpuport hipify`, issue 3).

The translator works on the lexed view of :mod:`gpuport.scan.cxx`: comments and string
literals are blank there, so only whole identifiers of real code are looked up in the API map
and replaced; the text of comments and strings is never touched. ``#include`` paths are the one
exception: they are code in that view and are rewritten through the map's header table.

What it does, in one pass over the original text (edits are collected as spans and applied
at the end, so every position reported refers to the input):

* identifiers found in the API map are replaced by their HIP name when the entry is available
  in the target ``hip_version``; otherwise they are left as they are and reported as
  unsupported (a name that does not exist on that HIP would not compile, or worse);
* member names after ``.``/``->`` are user fields, not API calls, and are left alone;
* ``cub::`` (and ``using namespace cub``) become the map's namespace replacement (``hipcub``);
* warp intrinsics follow the HIP version: below 6.2 the ``*_sync`` forms become the maskless
  forms with a trailing comment; from 6.2 the sync forms stay and a literal 32-bit full mask
  becomes a 64-bit one (HIP's sync functions ``static_assert`` a 64-bit mask), but not in a
  call that may run on some lanes only (:mod:`gpuport.hipify.divergence`: HIP checks the mask
  against the lanes that run the call and traps): that mask is left, and listed unsupported;
* ``#include <hip/hip_runtime.h>`` is added after the leading comments / ``#pragma once`` /
  include guard when the file uses CUDA runtime or device code and does not include it.

``<<<...>>>`` launches are kept as they are (hip-clang accepts them) unless
``launch_syntax="ggl"``: then each becomes ``hipLaunchKernelGGL(...)`` (see
:mod:`gpuport.hipify.launch`); a launch that cannot be parsed is kept and reported as
unsupported ("launch not rewritten: <why>"). The result is stable: translating the output
again changes nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from packaging.version import InvalidVersion, Version

from gpuport import textre
from gpuport.knowledge.api_map import ApiEntry, ApiMap, load_api_map
from gpuport.models import GpuportError
from gpuport.scan.cxx import CxxSource, lex, within

from . import shims as shim
from . import wave64 as wave
from .divergence import Divergence
from .hipheaders import HipHeaders
from .launch import rewrite_launches
from .wave64 import WaveChange, WaveLeft, WaveMode

if TYPE_CHECKING:
    from gpuport.scan.rules.native.warp_meaning import FileMeaning

__all__ = [
    "DEFAULT_HIP_VERSION",
    "LAUNCH_SYNTAXES",
    "MASK_DROPPED",
    "LaunchSyntax",
    "Translation",
    "Unsupported",
    "port_wave64",
    "translate",
]

LaunchSyntax = Literal["keep", "ggl"]
LAUNCH_SYNTAXES: tuple[LaunchSyntax, ...] = ("keep", "ggl")

DEFAULT_HIP_VERSION = "6.4"
#: The start of the reason a full mask is left 32-bit (HIP >= 6.2).
LEFT_32 = (
    "full mask left 32-bit (the HIP build stops at it): a 64-bit mask would trap at run "
    "time, since HIP checks a *_sync mask against the lanes that run the call, and this call "
    "may run on some lanes only"
)
#: The comment written after a warp call whose mask was dropped (HIP < 6.2).
MASK_DROPPED = "/* gpuport: mask dropped (HIP < 6.2) */"
HIP_RUNTIME_INCLUDE = "#include <hip/hip_runtime.h>"
_CG_HEADER = "hip/hip_cooperative_groups.h"

_SYNC_WARP_FROM = Version("6.2")
#: ``*_sync`` warp intrinsics and the maskless form HIP had before 6.2.
_WARP_NONSYNC = {
    "__shfl_sync": "__shfl",
    "__shfl_xor_sync": "__shfl_xor",
    "__shfl_up_sync": "__shfl_up",
    "__shfl_down_sync": "__shfl_down",
    "__ballot_sync": "__ballot",
    "__any_sync": "__any",
    "__all_sync": "__all",
}
_WARP_CALL = textre.compile(
    r"(?<![\w.])(?P<name>" + "|".join([*_WARP_NONSYNC, "__syncwarp"]) + r")\b[ \t\r\n]*\("
)
_FULL_MASK_32 = textre.compile(r"0[xX][fF]{8}(?:[uU](?:[lL]{1,2})?|[lL]{1,2}[uU]?)?")
_IDENT = textre.compile(r"(?<![\w.])[A-Za-z_]\w*")
_INCLUDE = textre.compile(
    r'^[ \t]*\#[ \t]*(?:include|include_next)[ \t]*(?:<(?P<angle>[^>\n]*)>|"(?P<quote>[^"\n]*)")',
    re.MULTILINE,
)
_SCOPE_AFTER = textre.compile(r"[ \t]*::")
_USING_NAMESPACE = textre.compile(r"\busing[ \t]+namespace[ \t]+$")
_PRAGMA_ONCE = textre.compile(r"[ \t]*\#[ \t]*pragma[ \t]+once\b")
_IFNDEF = textre.compile(r"[ \t]*\#[ \t]*ifndef[ \t]+(\w+)")
_DEFINE = textre.compile(r"[ \t]*\#[ \t]*define[ \t]+(\w+)")
#: Words that make a file device code (the API families that need hip_runtime.h are added).
_DEVICE_WORDS = frozenset(
    {
        "__global__",
        "__device__",
        "__shared__",
        "__constant__",
        "__managed__",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
    }
)
_RUNTIME_FAMILIES = frozenset({"runtime", "device", "driver"})
#: Host APIs all declared in the HIP headers (device functions may come from clang's own).
_CORE_FAMILIES = frozenset({"runtime", "driver", "complex", "nvrtc"})
#: CUDA toolkit headers (not a project's own): unmapped, they have no HIP counterpart.
_CUDA_HEADER = textre.compile(
    r"^(?:cooperative_groups/|cuda/|nvtx3/|crt/|cuda_(?:pipeline|awbarrier|fp8|fp6|fp4|egl|gl_interop"
    r"|texture_types|surface_types|device_runtime_api|occupancy)\w*\.h$|mma\.h$|cudaTypedefs\.h$"
    r"|cudnn_\w+\.h$|cusparseLt\.h$|cutensor\w*\.h$|cufile\.h$|nvml\.h$|nvjpeg\.h$|npp\w*\.h$"
    r"|nvcomp|sm_\d+_\w+\.h$)"
)


class Unsupported(NamedTuple):
    """A CUDA identifier left as it is: no HIP equivalent, or not in the target HIP version."""

    name: str
    line: int
    col: int
    reason: str


@dataclass(frozen=True)
class Translation:
    """The translated text and what happened on the way."""

    text: str
    #: Replacements made, per CUDA name (header names and ``cub::`` included).
    replacements: dict[str, int] = field(default_factory=dict)
    #: Identifiers left untranslated, in source order, with 1-based line and column.
    unsupported: list[Unsupported] = field(default_factory=list)
    #: Whether ``#include <hip/hip_runtime.h>`` was added.
    added_include: bool = False
    #: ``wave64="fix"``: the 32-lane sites rewritten, and those left as ambiguous.
    wave64: list[WaveChange] = field(default_factory=list)
    wave64_left: list[WaveLeft] = field(default_factory=list)
    #: portable shims written into the output for APIs the target HIP lacks
    shims: list[shim.Shim] = field(default_factory=list)


@lru_cache(maxsize=32)
def _parse_version(text: str) -> Version:
    try:
        return Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a digit run past int()'s limit
        raise GpuportError(f"not a HIP version: {text!r} (expected e.g. 6.2 or 6.2.4)") from None


def _unavailable(entry: ApiEntry, target: Version, headers: HipHeaders | None = None) -> str | None:
    """Why ``entry`` cannot be emitted for HIP ``target``; None when it can. With the headers
    of an installed HIP of that version, they decide (see :mod:`gpuport.hipify.hipheaders`)."""
    if entry.hip is None:
        return "no HIP equivalent"
    if headers is not None:
        if entry.hip in headers.names:
            return None
        if entry.family in _CORE_FAMILIES or entry.hip_header:
            return f"not in the HIP {headers.version} headers at {headers.include}"
    elif entry.hip_header and not entry.hip_added:
        # only a HIP's own headers can say (bf16 intrinsics newer HIPs added): none to read
        return f"needs a HIP whose {entry.hip_header} defines it; no such headers to check"
    if entry.hip_added and _parse_version(entry.hip_added) > target:
        return f"not available before HIP {entry.hip_added}"
    if entry.hip_removed and _parse_version(entry.hip_removed) <= target:
        return f"removed in HIP {entry.hip_removed}"
    return None


class _Edits:
    """Span edits on the input text, applied at the end; some spans are protected."""

    def __init__(self) -> None:
        self.edits: list[tuple[int, int, str]] = []
        self.protected: set[int] = set()  # start offsets of identifiers already handled
        self.dropped: list[tuple[int, int]] = []  # removed spans (inclusive ends), sorted

    def add(self, start: int, end: int, replacement: str) -> None:
        self.edits.append((start, end, replacement))

    def apply(self, text: str) -> str:
        out: list[str] = []
        last = 0
        for start, end, replacement in sorted(self.edits, key=lambda e: (e[0], e[1])):
            if start < last:  # overlaps an earlier edit: the first one wins
                continue
            out.append(text[last:start])
            out.append(replacement)
            last = end
        out.append(text[last:])
        return "".join(out)


def _member_access(code: str, start: int) -> bool:
    """Whether the identifier at ``start`` follows ``.`` or ``->`` (a user's member)."""
    j = start - 1
    while j >= 0 and code[j] in " \t\r\n":
        j -= 1
    return j >= 0 and (code[j] == "." or (code[j] == ">" and j > 0 and code[j - 1] == "-"))


def _skip_space(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _warp_calls(
    src: CxxSource,
    target: Version,
    edits: _Edits,
    counts: Counter[str],
    divergent: Callable[[int], str | None],
    left: list[Unsupported],
) -> tuple[bool, list[int]]:
    """Rewrite ``*_sync`` warp intrinsics for ``target`` (see the module docstring).

    Returns whether any warp call was seen (the file then needs the HIP runtime header) and
    the offsets of the literal masks widened to 64 bits. A full mask of a call that may run
    on some lanes only (``divergent`` says why) is left 32-bit and listed in ``left``."""
    text, code = src.text, src.code
    seen = False
    widened: list[int] = []
    sync_ok = target >= _SYNC_WARP_FROM
    for m in _WARP_CALL.finditer(code):
        name = m.group("name")
        if _member_access(code, m.start()):
            continue
        seen = True
        open_paren = m.end() - 1
        args = src.call_args(open_paren)
        if sync_ok:
            if args:
                a0, a1 = args[0]
                start = _skip_space(text, a0, a1)
                literal = text[start:a1].rstrip()
                if (
                    _FULL_MASK_32.fullmatch(literal)
                    and code[start : start + len(literal)] == literal
                ):
                    why = divergent(m.start())
                    if why is not None:
                        line, col = src.line_col(m.start())
                        left.append(Unsupported(name, line, col, f"{LEFT_32}: {why}"))
                        continue
                    edits.add(start, start + len(literal), wave.FULL_MASK_64)
                    widened.append(start)
            continue
        if name == "__syncwarp" or len(args) < 2:
            continue  # left as is; the identifier pass reports it as unsupported
        close = src.match_close(open_paren)
        body = _skip_space(text, args[1][0], args[1][1])
        if close is None or text[m.start() : body] != code[m.start() : body]:
            continue  # a comment or string inside the mask: do not drop it
        edits.add(m.start(), body, _WARP_NONSYNC[name] + "(")
        edits.add(close + 1, close + 1, " " + MASK_DROPPED)
        edits.protected.add(m.start())
        edits.dropped.append((m.start(), body - 1))
        counts[name] += 1
    return seen, widened


def _insert_point(src: CxxSource) -> tuple[int, str]:
    """Where the hip_runtime include goes, and the text to insert there."""
    text, code = src.text, src.code
    line = 1
    n = src.line_count
    while line <= n and not src.code_line(line).strip():
        line += 1
    if line > n:
        return 0, HIP_RUNTIME_INCLUDE + "\n"
    after = None
    first = src.code_line(line)
    if _PRAGMA_ONCE.match(first):
        after = line
    else:
        guard = _IFNDEF.match(first)
        nxt = line + 1
        while nxt <= n and not src.code_line(nxt).strip():
            nxt += 1
        if guard and nxt <= n:
            define = _DEFINE.match(src.code_line(nxt))
            if define and define.group(1) == guard.group(1):
                after = nxt
    if after is not None:
        _, end = src.line_span(after)
        if end >= len(text):
            return len(text), "\n" + HIP_RUNTIME_INCLUDE + "\n"
        return end + 1, HIP_RUNTIME_INCLUDE + "\n"
    start, end = src.line_span(line)
    first_code = _skip_space(code, start, end)
    if not text[start:first_code].strip():
        return start, HIP_RUNTIME_INCLUDE + "\n"
    return first_code, "\n" + HIP_RUNTIME_INCLUDE + "\n"


def translate(
    text: str,
    *,
    hip_version: str = DEFAULT_HIP_VERSION,
    api_map: ApiMap | None = None,
    launch_syntax: LaunchSyntax = "keep",
    wave64: WaveMode = "report",
    path: str = "source.cu",
    headers: HipHeaders | None = None,
    unsafe: bool = False,
    meaning: FileMeaning | None = None,
    shims: bool = True,
    lexed: CxxSource | None = None,
    divergence: Divergence | None = None,
) -> Translation:
    """Translate CUDA source ``text`` to HIP for ``hip_version`` (see the module docstring).

    ``wave64="fix"`` also ports the clear 32-lane assumptions (:mod:`gpuport.hipify.wave64`);
    ``path`` (relative, for the device-code test) names the file. ``headers``: the installed
    HIP, when it is the one translated for (its headers then decide what exists).
    ``unsafe``: ``--unsafe-fixes`` (wave64 rewrites that are not proven, each marked);
    ``meaning``: the lane-meaning decisions for this text when the run analysed several
    files together (:func:`gpuport.hipify.wave64.meaning_of`). ``shims``: write a small
    portable shim for an API the target HIP lacks (:mod:`gpuport.hipify.shims`) instead of
    leaving it unsupported. ``lexed``: ``text`` already lexed (a run that read every file
    first). ``divergence``: the lane-divergence of every file of the run, ``lexed`` among
    them (a helper judged by its callers in other files; else this file is read alone)."""
    if launch_syntax not in LAUNCH_SYNTAXES:
        raise GpuportError(f"launch syntax must be keep or ggl, not {launch_syntax!r}")
    if wave64 not in wave.WAVE64_MODES:
        raise GpuportError(f"wave64 must be fix or report, not {wave64!r}")
    amap = api_map if api_map is not None else load_api_map()
    target = _parse_version(hip_version)
    src = lexed if lexed is not None and lexed.text == text else lex(text)
    code = src.code
    edits = _Edits()
    counts: Counter[str] = Counter()
    unsupported: list[Unsupported] = []
    header_spans: list[tuple[int, int]] = []
    has_runtime = False
    needed: list[shim.Shim] = []
    last_include = -1  # end of the include line a shim has to follow

    for m in _INCLUDE.finditer(code):
        group = "angle" if m.group("angle") is not None else "quote"
        name = m.group(group)
        start, end = m.span(group)
        header_spans.append((start, end))
        hip = amap.header(name)
        final = name if hip is None else hip
        if hip is not None and hip != name:
            edits.add(start, end, hip)
            counts[name] += 1
            if headers is not None and not headers.has_header(hip):
                line, col = src.line_col(start)
                why = f"{hip} is not in the HIP {headers.version} install at {headers.include}"
                unsupported.append(Unsupported(name, line, col, why))
        elif (
            shims
            and name == "cooperative_groups/reduce.h"
            and (headers is None or headers.has_header(_CG_HEADER))
        ):
            final = _CG_HEADER
            edits.add(start, end, final)
            counts[name] += 1
            needed.append(
                shim.Shim(name, f"cooperative_groups::reduce is not in HIP {hip_version}")
            )
        elif hip is None and _CUDA_HEADER.match(name):
            line, col = src.line_col(start)
            unsupported.append(Unsupported(name, line, col, "CUDA header with no HIP counterpart"))
        if final in ("hip/hip_runtime.h", "hip_runtime.h"):
            has_runtime = True

    lanes: list[Divergence] = []

    def divergent(at: int) -> str | None:
        if not lanes:  # read only where a full mask is met
            whole = divergence is not None and divergence.sources.get(path) is src
            lanes.append(divergence if whole and divergence else Divergence({path: src}))
        return lanes[0].why(path, at)

    warp_seen, widened = _warp_calls(src, target, edits, counts, divergent, unsupported)
    if shims and target < _SYNC_WARP_FROM and shim.uses_syncwarp(code):
        needed.append(shim.Shim("__syncwarp", f"__syncwarp is not in HIP {hip_version}"))
    if needed:  # the shims go after the last include before their first use
        first = shim.first_use(code)
        for m in _INCLUDE.finditer(code):
            if m.start() < first:
                last_include = max(last_include, src.line_span(src.line_of(m.start()))[1])
    plan = None
    if wave64 == "fix":
        plan = wave.plan(
            src,
            keep_masks=target >= _SYNC_WARP_FROM,
            rel=path,
            widened=widened,
            unsafe=unsafe,
            meaning=meaning,
            divergent=divergent,
        )
        for w_start, w_end, w_new in plan.edits:
            edits.add(w_start, w_end, w_new)

    # a file whose only CUDA is a warp call needs the runtime header on the first pass too
    uses_runtime = "<<<" in code or warp_seen
    entries = amap.entries
    namespaces = amap.namespaces
    hdr = iter(header_spans)
    next_hdr = next(hdr, None)
    for m in _IDENT.finditer(code):
        start = m.start()
        while next_hdr is not None and next_hdr[1] <= start:
            next_hdr = next(hdr, None)
        if next_hdr is not None and next_hdr[0] <= start:
            continue  # inside an #include path
        name = m.group()
        if name in _DEVICE_WORDS:
            uses_runtime = True
            continue
        if name in namespaces:
            ns = namespaces[name].hip
            if ns != name and not _member_access(code, start):
                scoped = _SCOPE_AFTER.match(code, m.end()) is not None
                if scoped or _USING_NAMESPACE.search(code, max(0, start - 40), start):
                    edits.add(start, m.end(), ns)
                    counts[name + "::"] += 1
            continue
        entry = entries.get(name)
        if entry is None or start in edits.protected or _member_access(code, start):
            continue
        if edits.dropped and within(edits.dropped, start):
            continue  # inside a dropped warp mask
        if entry.family in _RUNTIME_FAMILIES:
            uses_runtime = True
        reason = _unavailable(entry, target, headers)
        if reason is not None and any(n.name == name for n in needed):
            continue  # the shim stands for it
        if reason is not None:
            line, col = src.line_col(start)
            unsupported.append(Unsupported(name, line, col, reason))
        elif entry.hip != name and entry.hip is not None:
            edits.add(start, m.end(), entry.hip)
            counts[name] += 1

    # before the launch edits: an insertion at the same offset goes first
    added = uses_runtime and not has_runtime
    macro = plan is not None and plan.needs_macro
    if added or macro:
        pos, insert = _insert_point(src)
        if not added:
            insert = insert.replace(HIP_RUNTIME_INCLUDE + "\n", "")
        if macro:
            insert += wave.macro_block()
        if needed and last_include < pos:
            insert += shim.shim_block(needed, hip_version)
            needed_at = -1
        else:
            needed_at = last_include
        edits.add(pos, pos, insert)
    elif needed:
        needed_at = last_include if last_include >= 0 else _insert_point(src)[0] - 1
    else:
        needed_at = -1
    if needed and needed_at >= 0:
        edits.add(needed_at + 1, needed_at + 1, shim.shim_block(needed, hip_version))
    if launch_syntax == "ggl":
        launch_edits, failures = rewrite_launches(src)
        for edit in launch_edits:
            edits.add(*edit)
        for failure in failures:
            line, col = src.line_col(failure.offset)
            unsupported.append(
                Unsupported("<<<", line, col, f"launch not rewritten: {failure.reason}")
            )
    unsupported.sort(key=lambda u: (u.line, u.col))

    return Translation(
        text=edits.apply(text),
        replacements=dict(sorted(counts.items())),
        unsupported=unsupported,
        added_include=added,
        wave64=plan.changes if plan is not None else [],
        wave64_left=plan.left if plan is not None else [],
        shims=needed,
    )


def port_wave64(
    text: str,
    *,
    path: str = "source.cu",
    unsafe: bool = False,
    meaning: FileMeaning | None = None,
    src: CxxSource | None = None,
) -> Translation:
    """Only the wave64 rewrites, on CUDA source that stays CUDA (no renaming): the same edits
    :func:`translate` makes with ``wave64="fix"``, so a project can keep one source that nvcc
    and hipcc both compile (masks stay as they are: CUDA takes 32-bit masks). By default only
    the rewrites proven to keep the code's meaning; ``unsafe``: also those ``--unsafe-fixes``
    makes (each line marked). ``meaning``: this file's decisions when the project was
    analysed whole (:func:`gpuport.hipify.wave64.meaning_of`; else the file is judged alone);
    ``src``: ``text`` already lexed."""
    if src is None:
        src = lex(text)
    plan = wave.plan(src, keep_masks=False, rel=path, unsafe=unsafe, meaning=meaning)
    edits = _Edits()
    for w_start, w_end, w_new in plan.edits:
        edits.add(w_start, w_end, w_new)
    if plan.needs_macro:
        pos, insert = _insert_point(src)
        edits.add(pos, pos, insert.replace(HIP_RUNTIME_INCLUDE + "\n", "") + wave.macro_block())
    return Translation(text=edits.apply(text), wave64=plan.changes, wave64_left=plan.left)
