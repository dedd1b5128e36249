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
(forty-third re-run F17), and those included through a macro the project defines as a
header name (``#include CHECK_FILE``). The rewrite of a constant is declined, with the reason,
where a use may be unread (forty-fourth re-run F9): the constant is named in CUDA source held
in a string (a cupy ``RawKernel``, NVRTC source in C++) or in a file of another language, or
its header is compiled with an ``#include MACRO`` gpuport cannot resolve to a file.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from gpuport import fileio, textre
from gpuport.hipify.divergence import Divergence
from gpuport.intervals import in_any
from gpuport.port.context import PortContext, Proposal
from gpuport.port.cxx_lines import INCLUDE_LINE, edge_runs_on, insert_at
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.finding import Finding
from gpuport.scan.rules.native.common import MASK32

__all__ = [
    "HIP_TEST",
    "MASK_MACRO",
    "c_family_sources",
    "lexed_sources",
    "mask_block",
    "propose_masks",
]

#: The preprocessor test every HIP branch ``port`` writes uses: hip-clang (``__HIPCC__``),
#: the HIP headers and CMake's hip::host (``__HIP_PLATFORM_AMD__``), torch's ROCm builds
#: (``USE_ROCM``).
HIP_TEST = "defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)"
MASK_MACRO = "GPUPORT_FULL_MASK"
_MARK = "// gpuport:"
_INCLUDE = INCLUDE_LINE
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
            name = m.group(2)
            why = (
                _not_only_a_mask(ctx, name)
                or _unread(ctx, name, path)
                or _divergent(ctx, path, None, name)
            )
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
            why = (
                _not_only_a_mask(ctx, name)
                or _unread(ctx, name, path)
                or _divergent(ctx, path, None, name)
            )
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
        at = insert_at(src, first)
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


def c_family_sources(ctx: PortContext) -> dict[str, CxxSource]:
    """Every C-family file the mask analysis reads: the CUDA/C++ ones, host C files, and the
    files those include under any suffix, by a literal name or through a macro the project
    defines as one (``#include CHECK_FILE``, forty-fourth re-run F9, F18), once a run."""
    out: dict[str, CxxSource] = {}
    for rel in _read(ctx).files:
        src = _c_source(ctx, rel)
        if src is not None:
            out[rel] = src
    return out


def _naming(ctx: PortContext) -> dict[str, list[str]]:
    """Identifier -> the C-family files of the project whose code names it (read once)."""
    cached = ctx.cache.get("mask-naming")
    if isinstance(cached, dict):
        return cached
    from gpuport.scan.project.files import Skip, iter_entries

    rels = set(lexed_sources(ctx))
    by_name: dict[str, list[str]] = {}
    every: list[str] = []
    if ctx.root.is_dir():
        for item in iter_entries(ctx.root):
            if isinstance(item, Skip):
                continue
            every.append(item[0])
            by_name.setdefault(posixpath.basename(item[0]), []).append(item[0])
            if item[0].lower().endswith(_HOST_SUFFIXES):
                rels.add(item[0])
    more, unknown, edges = _included(ctx, rels, by_name)
    rels |= more
    index: dict[str, list[str]] = {}
    for rel in sorted(rels):
        src = _c_source(ctx, rel)
        if src is None:
            continue
        for w in set(src.code.translate(_WORDS).split()):
            index.setdefault(w, []).append(rel)
    ctx.cache["mask-naming"] = index
    ctx.cache["mask-read"] = _Read(sorted(rels), every, unknown, edges)
    return index


@dataclass(frozen=True)
class _Read:
    """What :func:`_naming` read: the C-family files, every file of the project, the files
    with an ``#include MACRO`` not resolved (-> the macro), and the include edges."""

    files: list[str]
    every: list[str]
    unknown: dict[str, str]
    edges: dict[str, set[str]]


def _read(ctx: PortContext) -> _Read:
    _naming(ctx)
    found = ctx.cache["mask-read"]
    return found if isinstance(found, _Read) else _Read([], [], {}, {})


#: ``#include NAME``: a header named through a macro
_MACRO_INCLUDE = textre.compile(r"^[ \t]*#[ \t]*include[ \t]+([A-Za-z_]\w*)", re.M)
#: ``#define NAME body`` without parameters (the body read from the text: strings kept)
_PLAIN_DEFINE = textre.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]+([^\n]*))?$", re.M
)
_HEADER_NAME = textre.compile(r"\s*(?:\"([^\"\n]+)\"|<([^>\n]+)>)\s*")


def _header_names(
    macro: str, defines: dict[str, list[str]], seen: tuple[str, ...] = ()
) -> list[str] | None:
    """The header names ``#include macro`` may name by the project's own definitions of
    ``macro`` (read through plain aliases), or None when one is not a plain header name (a
    computed name, or none defined in the project: the file is not known)."""
    bodies = defines.get(macro)
    if not bodies or macro in seen:
        return None
    out: list[str] = []
    for body in bodies:
        h = _HEADER_NAME.fullmatch(body)
        if h is not None:
            out.append(h.group(1) or h.group(2))
            continue
        if textre.fullmatch(r"[A-Za-z_]\w*", body) is None:
            return None
        more = _header_names(body, defines, (*seen, macro))
        if more is None:
            return None
        out += more
    return out


def _included(
    ctx: PortContext, rels: set[str], by_name: dict[str, list[str]]
) -> tuple[set[str], dict[str, str], dict[str, set[str]]]:
    """The project files ``#include``d, directly or through others, by the files ``rels``,
    whatever their suffix (``check.def``, ``.cuinc``, ``.cu.inc``: compiled into the
    translation unit all the same, forty-third re-run F17): the path beside the including
    file, else every project file whose path ends with the included name. A name given by a
    macro is read through the project's definitions of it (every one); where one is not a
    plain header name the include is unknown (forty-fourth re-run F9). Returns the files, the
    unknown includes (file -> macro) and the include edges."""
    out: set[str] = set()
    edges: dict[str, set[str]] = {}
    defines: dict[str, list[str]] = {}
    pending: list[tuple[str, str]] = []
    todo = sorted(rels)

    def add(cur: str, name: str) -> None:
        name = posixpath.normpath(name.strip())
        beside = posixpath.normpath(posixpath.join(posixpath.dirname(cur), name))
        for rel in by_name.get(posixpath.basename(name), ()):
            if rel in (name, beside) or rel.endswith("/" + name):
                edges.setdefault(cur, set()).add(rel)
                if rel not in rels and rel not in out:
                    out.add(rel)
                    todo.append(rel)

    while True:
        while todo:
            cur = todo.pop()
            src = _c_source(ctx, cur)
            if src is None or ("include" not in src.code and "define" not in src.code):
                continue
            for d in _PLAIN_DEFINE.finditer(src.code):
                body = src.text[d.start(2) : d.end(2)] if d.group(2) is not None else ""
                defines.setdefault(d.group(1), []).append(body.strip())
            for m in _INCLUDE.finditer(src.text):
                if src.code[m.start() : m.end()].strip().startswith("#"):
                    add(cur, m.group(1))  # (else inside a comment or a string)
            pending += [(cur, m.group(1)) for m in _MACRO_INCLUDE.finditer(src.code)]
        still: list[tuple[str, str]] = []
        for cur, macro in pending:
            names = _header_names(macro, defines)
            if names is None:
                still.append((cur, macro))
            for name in names or ():
                add(cur, name)
        if not todo:  # no new file: what is left is not known
            return out, dict(still), edges
        pending = still


def _unknown_include(ctx: PortContext, path: str) -> str | None:
    """Why a translation unit that reads ``path`` also includes a file gpuport cannot name
    (``#include MACRO`` the project defines as no plain header name), or None."""
    read = _read(ctx)
    unknown, edges = read.unknown, read.edges
    if not unknown:
        return None
    back: dict[str, list[str]] = {}
    for a, bs in edges.items():
        for b in bs:
            back.setdefault(b, []).append(a)
    tops = _reach({path}, back)  # the files that include path, directly or not
    for rel in sorted(_reach(tops, {a: list(bs) for a, bs in edges.items()})):
        if rel in unknown:
            return (
                f"{rel} is compiled with {path} and includes a file named by the macro "
                f"{unknown[rel]}, which gpuport cannot resolve to a file: a use there as data "
                "would not be seen"
            )
    return None


def _reach(start: set[str], edges: dict[str, list[str]]) -> set[str]:
    seen = set(start)
    todo = list(start)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


#: what marks text as CUDA source (a kernel a program compiles at run time from a string)
_KERNEL_MARKS = ("__global__", "__device__", "#include")
#: prose: a sample there is compiled by no one
_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".adoc", ".html", ".htm", ".tex", ".org")
_PY_SUFFIXES = (".py", ".pyw", ".pyx", ".pyi")


def _embedded(ctx: PortContext) -> dict[str, list[str]]:
    """Identifier -> the project files that name it in CUDA source gpuport does not read as
    code: the string literals of a file one of whose strings holds CUDA source (a cupy
    ``RawKernel``, NVRTC/hiprtc source in a C++ string), or the whole of a file of another
    language (or a template) that does (forty-fourth re-run F9). Read once a run."""
    cached = ctx.cache.get("mask-embedded")
    if isinstance(cached, dict):
        return cached
    read = _read(ctx)
    c_files = set(read.files)
    index: dict[str, list[str]] = {}
    for rel in read.every:
        if rel.lower().endswith(_DOC_SUFFIXES):
            continue
        # read past ctx's cache: every file of the project is looked at once, and kept not
        text = fileio.read_text_or_none(ctx.root / rel, limit=fileio.LIMIT_SOURCE, root=ctx.root)
        if text is None or "\x00" in text or not any(k in text for k in _KERNEL_MARKS):
            continue  # (a NUL: a binary file)
        if rel in c_files:
            src = _c_source(ctx, rel)
            pieces = [] if src is None else [src.string_body(s) for s in src.strings]
        elif rel.lower().endswith(_PY_SUFFIXES):
            pieces = _python_strings(text)
        else:
            pieces = [text]
        if not any(k in p for p in pieces for k in _KERNEL_MARKS):
            continue
        words: set[str] = set()
        for piece in pieces:
            words.update(piece.translate(_WORDS).split())
        for w in words:
            index.setdefault(w, []).append(rel)
    ctx.cache["mask-embedded"] = index
    return index


def _python_strings(text: str) -> list[str]:
    """The string constants of a Python text (the whole text where it does not parse)."""
    import ast

    from gpuport import pyparse

    try:
        tree = pyparse.parse(text)
    except pyparse.PARSE_ERRORS:
        return [text]
    return [
        n.value
        for n in pyparse.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _unread(ctx: PortContext, name: str, path: str) -> str | None:
    """Why the project may use the constant ``name`` (defined in ``path``) where gpuport
    does not read it, or None: named in CUDA source held in a string or a file of another
    language, or compiled with a file included through a macro gpuport cannot resolve."""
    where = _embedded(ctx).get(name)
    if where:
        return (
            f"{name} is named in {where[0]}, in CUDA source gpuport does not read as code (a "
            "kernel compiled at run time from a string, a template): a use there as data "
            "would not be seen"
        )
    return _unknown_include(ctx, path)


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
