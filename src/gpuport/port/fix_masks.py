"""Full-warp masks (GP302, safe): a literal 32-bit full mask passed to a ``*_sync`` intrinsic
(``__shfl_xor_sync(0xffffffff, v, o)``) or a mask constant defined as one (``#define FULL_MASK
0xffffffff``) becomes ``GPUPORT_FULL_MASK``, defined once per file as ``0xffffffffu`` for nvcc
(the same value and type as before) and ``0xffffffffffffffffull`` for HIP, whose ``*_sync``
intrinsics static_assert a 64-bit mask. A build that compiled keeps compiling the same code;
the HIP build did not compile.

Not where the call may run with only some of a wavefront's lanes
(:mod:`gpuport.hipify.divergence`: in a branch or after a ``return`` that depends on the lane,
or in a helper called there, anywhere in the project's CUDA/C++ files): HIP checks a ``_sync``
mask against the lanes that run the call and traps when they differ, so there the 64-bit mask
would turn the HIP build's compile error into a run-time trap. Such a mask (and a constant any
such call uses) is left, with the reason in ``unfixed``.

Nor a constant used as anything but a ``*_sync`` mask (``bits == ALL_SET``), read in every
C-family file of the project (host ``.c`` files too), through plain ``#define`` aliases, and
with only the constant's own definition and ``defined`` tests not counted as uses (forty-second
re-run F6); files those include under any suffix (``check.def``, ``.cuinc``) are read too
(forty-third re-run F17).
"""

from __future__ import annotations

import posixpath
import re

from gpuport import textre
from gpuport.hipify.divergence import Divergence
from gpuport.intervals import in_any
from gpuport.port.context import PortContext, Proposal
from gpuport.port.cxx_lines import edge_runs_on
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.finding import Finding
from gpuport.scan.rules.native.common import MASK32

__all__ = ["HIP_TEST", "MASK_MACRO", "lexed_sources", "mask_block", "propose_masks"]

#: The preprocessor test every HIP branch ``port`` writes uses: hip-clang (``__HIPCC__``),
#: the HIP headers and CMake's hip::host (``__HIP_PLATFORM_AMD__``), torch's ROCm builds
#: (``USE_ROCM``).
HIP_TEST = "defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)"
MASK_MACRO = "GPUPORT_FULL_MASK"
_MARK = "// gpuport:"
_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"][^\n]*\n?", re.M)
_SYNC = textre.compile(
    r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|"
    r"reduce_(?:add|min|max|and|or|xor))_sync\s*\("
)
_DEFINE_MASK = textre.compile(
    r"^(\s*#\s*define\s+(\w+)\s+)(\(?\s*(?:0[xX]0*[fF]{8}[uU]?|~0[uU]?)\s*\)?)"
)
_CONST_MASK = textre.compile(
    r"\b(?:static\s+)?(?:constexpr|const)\s+(?P<type>(?:unsigned|uint32_t|unsigned\s+int|int|auto)"
    r"(?:\s+int)?)\s+(?P<name>\w+)\s*=\s*(?P<value>0[xX]0*[fF]{8}[uU]?|~0[uU]?)\s*;"
)


def mask_block(eol: str = "\n") -> str:
    lines = [
        f"#ifndef {MASK_MACRO} {_MARK} GP302 full-warp mask: 64-bit on HIP, which asserts it",
        f"#if {HIP_TEST}",
        f"#define {MASK_MACRO} 0xffffffffffffffffull",
        "#else",
        f"#define {MASK_MACRO} 0xffffffffu",
        "#endif",
        "#endif",
    ]
    return eol.join(lines) + eol


def _include_guard(src: CxxSource) -> tuple[int, int] | None:
    """(end of its ``#define`` line, offset of its ``#endif``) of a whole-file include guard:
    ``#ifndef X`` / ``#define X`` first, its ``#endif`` the file's last directive. A
    default-value block (``#ifndef vector`` / ``#define vector 1`` / ``#endif``) is not one."""
    guard = textre.match(r"\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+(\w+)[^\n]*\n", src.code)
    if guard is None or guard.group(1) != guard.group(2) or not src.directives:
        return None
    depth = 0
    for i, d in enumerate(src.directives):
        depth += d.kind in ("if", "ifdef", "ifndef")
        depth -= d.kind == "endif"
        if depth == 0:  # the guard's own #endif: it must close the file
            return (guard.end(), d.offset) if i == len(src.directives) - 1 else None
    return None


def _depth(src: CxxSource, offset: int, skip: int = -1) -> int:
    """How many conditionals are open at ``offset`` (the one opened at ``skip`` not counted)."""
    depth = 0
    for d in src.directives:
        if d.offset >= offset:
            break
        if d.kind in ("if", "ifdef", "ifndef") and d.offset != skip:
            depth += 1
        elif d.kind == "endif":
            depth -= 1
    return depth


def _insert_at(src: CxxSource, before: int) -> int:
    """Offset at file scope before ``before`` to put a definition, outside every
    conditional but a whole-file include guard (a definition inside ``#ifndef block_size_x``
    vanishes when the tuner defines ``block_size_x``): after the last such ``#include``
    above it, else after a leading ``#pragma once`` / include guard, else the file start."""
    guard = _include_guard(src)
    skip = -1
    if guard is not None:
        skip = next(d.offset for d in src.directives if d.kind == "ifndef")
    best = None
    opens = ("if", "ifdef", "ifndef")
    steps = [
        (d.offset, 1 if d.kind in opens and d.offset != skip else -(d.kind == "endif"))
        for d in src.directives
    ]
    k = depth = 0  # the depth read on as the includes come in order, not from the top each
    for m in _INCLUDE.finditer(src.text, 0, before):
        while k < len(steps) and steps[k][0] < m.start():
            depth += steps[k][1]
            k += 1
        if not src.code[m.start() : m.end()].strip().startswith("#"):
            continue  # inside a comment
        if depth == 0:
            best = m.end()
    if best is not None:
        return best
    once = textre.search(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*\n", src.text[:before], re.M)
    if (
        once is not None
        and src.code[once.start() : once.end()].strip().startswith("#")
        and (_depth(src, once.start()) == 0)
    ):
        return once.end()
    if guard is not None and guard[0] <= before:
        return guard[0]
    return 0


def propose_masks(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    src = lex(text)
    eol = ctx.eol(text)
    prop = Proposal(
        id=f"full-mask:{path}",
        family="kernels",
        title=f"{path}: full-warp masks that HIP accepts (GPUPORT_FULL_MASK)",
        safe=True,
        why="nvcc sees 0xffffffffu, the value and type it saw; only the HIP build, which did "
        "not compile, changes",
        findings=[],
    )
    first = None
    for f in found:
        line = f.location.line
        if line is None or line > src.line_count:
            continue
        lo, hi = src.line_span(line)
        code_line = src.code[lo:hi]
        m = _DEFINE_MASK.match(code_line)
        if m is not None:
            why = _not_only_a_mask(ctx, m.group(2)) or _divergent(ctx, path, None, m.group(2))
            if why is not None:
                _leave(ctx, f, why)
                continue
            s, e = lo + m.start(3), lo + m.end(3)
            prop.edit(path, s, e, MASK_MACRO, [f])
            prop.findings.append(f)
            first = s if first is None else min(first, s)
            continue
        c = _CONST_MASK.search(code_line)
        if c is not None:
            name = c.group("name")
            why = _not_only_a_mask(ctx, name) or _divergent(ctx, path, None, name)
            if why is not None:
                _leave(ctx, f, why)
                continue
            prop.edit(path, lo + c.start("type"), lo + c.end("type"), "auto", [f])
            prop.edit(path, lo + c.start("value"), lo + c.end("value"), MASK_MACRO, [f])
            prop.findings.append(f)
            first = lo if first is None else min(first, lo)
            continue
        col = (f.location.column or 1) - 1
        call = _SYNC.search(src.code, lo + col, hi + 1)
        if call is None:
            continue
        args = src.call_args(call.end() - 1)
        if not args:
            continue
        a0, a1 = args[0]
        raw = src.code[a0:a1].strip()
        if MASK32.fullmatch(raw) is None or raw == "-1":
            continue
        why = _divergent(ctx, path, call.start(), None)
        if why is not None:
            _leave(ctx, f, why)
            continue
        start = a0 + (len(src.code[a0:a1]) - len(src.code[a0:a1].lstrip()))
        prop.edit(path, start, start + len(raw), MASK_MACRO, [f])
        prop.findings.append(f)
        first = start if first is None else min(first, start)
    if first is None:
        return None
    if f"define {MASK_MACRO}" not in text:
        at = _insert_at(src, first)
        if edge_runs_on(text, at, at):  # the block would not be read as directives (F12)
            ctx.decline(
                prop.findings,
                f"full mask left 32-bit: the line above where {MASK_MACRO}'s definition "
                f"goes ({path}:{src.line_of(max(0, at - 1))}) runs onto the next line (a "
                "backslash at its end, or a comment or quote left open), so the preprocessor "
                "would not read the inserted block as directives; the file is left",
            )
            return None
        prop.edit(path, at, at, mask_block(eol))
    return prop


def lexed_sources(ctx: PortContext) -> dict[str, CxxSource]:
    """Every CUDA/C++ file of the project, lexed once per run (the wave64 analysis and the
    divergence read the same)."""
    cached = ctx.cache.get("wave64-lexed")
    if isinstance(cached, dict):
        return cached
    files: dict[str, CxxSource] = {}
    for rel in ctx.files_of("cuda/c++"):
        text = ctx.read(rel)
        if text is not None:
            files[rel] = lex(text)
    ctx.cache["wave64-lexed"] = files
    return files


def _divergence(ctx: PortContext) -> Divergence:
    """The lane-divergence of every CUDA/C++ file of the project, read together (once)."""
    cached = ctx.cache.get("lane-divergence")
    if isinstance(cached, Divergence):
        return cached
    found = Divergence(lexed_sources(ctx))
    ctx.cache["lane-divergence"] = found
    return found


def _uses(ctx: PortContext, name: str) -> list[tuple[str, int]]:
    """``*_sync`` calls in the project whose mask argument is ``name``: (path, offset)."""
    div = _divergence(ctx)
    out: list[tuple[str, int]] = []
    word = textre.compile(r"\b" + re.escape(name) + r"\b")
    for rel in _naming(ctx).get(name, ()):
        src = div.sources.get(rel)
        if src is None:
            continue
        for call in _SYNC.finditer(src.code):
            args = src.call_args(call.end() - 1)
            if args and word.search(src.code[args[0][0] : args[0][1]]):
                out.append((rel, call.start()))
    return out


def _not_only_a_mask(ctx: PortContext, name: str) -> str | None:
    """Why the constant ``name`` is not only a ``*_sync`` mask, or None: a constant no such
    call takes (a bitmask of data: MD-Bench's ``NBNXN_INTERACTION_MASK_ALL``, J55), or one
    used as data too, where a 64-bit value would change what the HIP build computes
    (``x == FULL_MASK`` with a 32-bit ``x``)."""
    if not _uses(ctx, name):
        return f"{name} is passed to no *_sync call of the project: it is not a warp mask"
    return _data_use(ctx, name, (name,))


def _data_use(ctx: PortContext, name: str, seen: tuple[str, ...]) -> str | None:
    """Where ``name`` is used as anything but a ``*_sync`` mask, or None. Read in every
    C-family file of the project (a host ``.c`` including the header too, forty-second re-run
    F6); only ``name``'s own definition, ``#undef`` / ``#ifdef`` / ``defined()`` tests of it
    are no use; a macro defined as exactly ``name`` (``#define ALL_SET FULL_MASK``) is read on
    the same way, and any other directive or declaration naming it is a use."""
    word = textre.compile(r"\b" + re.escape(name) + r"\b")
    for rel in _naming(ctx).get(name, ()):
        src = _c_source(ctx, rel)
        if src is None:
            continue
        mask_args = []
        for call in _SYNC.finditer(src.code):
            args = src.call_args(call.end() - 1)
            if args and word.search(src.code, args[0][0], args[0][1]):
                mask_args.append(args[0])
        for m in word.finditer(src.code):
            if in_any(mask_args, m.start()):
                continue
            line = src.line_of(m.start())
            lo, hi = src.line_span(line)
            if _own_definition(src.code, lo, hi, m.start(), name):
                continue
            alias = _ALIAS.match(src.code, lo, hi)
            if alias is not None and alias.start("value") == m.start():
                other = alias.group("name")
                if other in seen:
                    continue  # a cycle: the preprocessor stops there
                why = _data_use(ctx, other, (*seen, other))
                if why is None:
                    continue
                return f"{name} is used through {other} ({rel}:{line}): {why}"
            return (
                f"{name} is also used as data ({rel}:{line}), where a 64-bit value would "
                "change what the HIP build computes"
            )
    return None


#: ``#define OTHER NAME`` (or ``(NAME)``): a plain alias, read on by :func:`_data_use`
_ALIAS = textre.compile(
    r"[ \t]*#[ \t]*define[ \t]+(?P<name>\w+)[ \t]+\(?[ \t]*(?P<value>\w+)[ \t]*\)?[ \t\r]*$", re.M
)
_NAMES_IT = textre.compile(
    r"[ \t]*#[ \t]*(?:define|undef|ifn?def)[ \t]+(\w+)|\bdefined[ \t]*\(?[ \t]*(\w+)"
)


def _own_definition(code: str, lo: int, hi: int, at: int, name: str) -> bool:
    """Whether the ``name`` at ``at`` is its own definition (``#define name``, a
    ``const unsigned name = ~0u;``) or a test whether it is defined, not a use."""
    for m in _NAMES_IT.finditer(code, lo, hi):
        for g in (1, 2):
            if m.start(g) == at and m.group(g) == name and (g == 2 or m.start() == lo):
                return True
    return any(
        c.start("name") == at and c.group("name") == name
        for c in _CONST_MASK.finditer(code, lo, hi)
    )


#: C-family files the CUDA/C++ scan kind may leave out but a header can still reach
_HOST_SUFFIXES = (".c", ".m", ".mm", ".ipp", ".tpp", ".tcc", ".hip")


def _c_source(ctx: PortContext, rel: str) -> CxxSource | None:
    """The lexed code of C-family file ``rel`` (a CUDA/C++ one or a host one), once a run."""
    src = lexed_sources(ctx).get(rel)
    if src is not None:
        return src
    host = ctx.cache.get("mask-host-lexed")
    if not isinstance(host, dict):
        host = ctx.cache["mask-host-lexed"] = {}
    if rel not in host:
        text = ctx.read(rel)
        host[rel] = None if text is None else lex(text)
    found: CxxSource | None = host[rel]
    return found


def _naming(ctx: PortContext) -> dict[str, list[str]]:
    """Identifier -> the C-family files of the project whose code names it (read once)."""
    cached = ctx.cache.get("mask-naming")
    if isinstance(cached, dict):
        return cached
    from gpuport.scan.project.files import Skip, iter_entries

    rels = set(lexed_sources(ctx))
    by_name: dict[str, list[str]] = {}
    if ctx.root.is_dir():
        for item in iter_entries(ctx.root):
            if isinstance(item, Skip):
                continue
            by_name.setdefault(posixpath.basename(item[0]), []).append(item[0])
            if item[0].lower().endswith(_HOST_SUFFIXES):
                rels.add(item[0])
    rels |= _included(ctx, rels, by_name)
    index: dict[str, list[str]] = {}
    for rel in sorted(rels):
        src = _c_source(ctx, rel)
        if src is None:
            continue
        for w in set(src.code.translate(_WORDS).split()):
            index.setdefault(w, []).append(rel)
    ctx.cache["mask-naming"] = index
    return index


def _included(ctx: PortContext, rels: set[str], by_name: dict[str, list[str]]) -> set[str]:
    """The project files ``#include``d, directly or through others, by the files ``rels``,
    whatever their suffix (``check.def``, ``.cuinc``, ``.cu.inc``: compiled into the
    translation unit all the same, forty-third re-run F17): the path beside the including
    file, else every project file whose path ends with the included name."""
    out: set[str] = set()
    todo = sorted(rels)
    while todo:
        cur = todo.pop()
        src = _c_source(ctx, cur)
        if src is None:
            continue
        for m in _INCLUDE.finditer(src.text):
            if not src.code[m.start() : m.end()].strip().startswith("#"):
                continue  # inside a comment or a string
            name = posixpath.normpath(m.group(1).strip())
            beside = posixpath.normpath(posixpath.join(posixpath.dirname(cur), name))
            found = [
                r
                for r in by_name.get(posixpath.basename(name), ())
                if r in (name, beside) or r.endswith("/" + name)
            ]
            for rel in found:
                if rel not in rels and rel not in out:
                    out.add(rel)
                    todo.append(rel)
    return out


class _Blank(dict[int, str]):
    """str.translate table: identifier characters kept, every other character a space."""

    def __missing__(self, key: int) -> str:
        return " "


_WORDS = _Blank({c: chr(c) for c in range(128) if chr(c).isalnum() or chr(c) == "_"})


def _divergent(ctx: PortContext, path: str, at: int | None, name: str | None) -> str | None:
    """Why the mask at ``at`` (a call) or named ``name`` must stay 32-bit, or None."""
    div = _divergence(ctx)
    if at is not None:
        why = div.why(path, at)
        line = div.sources[path].line_of(at) if path in div.sources else 0
        return (
            None if why is None else f"the call at {path}:{line} may run on some lanes only: {why}"
        )
    for rel, call in _uses(ctx, name or ""):
        why = div.why(rel, call)
        if why is not None:
            line = div.sources[rel].line_of(call)
            return (
                f"{name} is the mask of the call at {rel}:{line}, which may run on some lanes "
                f"only: {why}"
            )
    return None


def _leave(ctx: PortContext, f: Finding, why: str) -> None:
    ctx.decline(
        [f],
        f"full mask left 32-bit: {why}. HIP checks a *_sync mask against the lanes that run "
        "the call and traps when they differ: a 64-bit mask would turn the HIP build's "
        "compile error into a run-time trap (use the maskless form or the active lanes' "
        "mask there)",
    )
