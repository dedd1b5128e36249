"""setup.py: a HIP branch for nvcc-only flags (GP402, GP403), as the real ports write it.

On ROCm, ``torch.utils.cpp_extension`` hands the ``nvcc`` flags of a ``CUDAExtension`` to
hipcc, which takes none of nvcc's own options (``--use_fast_math``, ``-gencode``,
``--expt-relaxed-constexpr``, ``--ptxas-options``, ``--threads``...). The file is read with
:mod:`ast` (never run) and changed in two ways, both keeping every CUDA build as it was:

* a list literal holding such flags becomes ``([hip flags] if torch.version.hip else [the
  original])``, the HIP list being the original without the nvcc-only flags (and their
  values), ``--use_fast_math`` given as clang's ``-ffast-math``;
* a run of statements that only add such flags to a list (``cc_flag.append("-gencode")``, an
  ``if`` or ``for`` around them) goes under ``if not torch.version.hip:``.

Safe: ``torch.version.hip`` is None on CUDA builds of torch, so a CUDA build evaluates the
same expressions and runs the same statements; the ROCm build, which stopped at the first
nvcc-only flag, no longer sees them. ``import torch`` is added when the file lacks it.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Callable

from gpuport import textre
from gpuport.port.by_line import ByLine
from gpuport.port.context import PortContext, Proposal
from gpuport.port.py_imports import foreign_cookie, import_after
from gpuport.scan.finding import Finding

__all__ = ["CLANG_SPELLING", "NVCC_ONLY", "NVCC_VALUED", "hip_flags", "propose"]

#: nvcc options hipcc rejects: without a value, and with one (next word or after ``=``).
NVCC_ONLY = frozenset(
    {
        "--use_fast_math",
        "-use_fast_math",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--extended-lambda",
        "-lineinfo",
        "--generate-line-info",
        "-rdc",
        "--relocatable-device-code",
        "--keep",
        "-Xnvlink",
        "--resource-usage",
        "-res-usage",
        "--extra-device-vectorization",
        "-extra-device-vectorization",
        "--restrict",
        "-Wno-deprecated-gpu-targets",
        "--source-in-ptx",
    }
)
NVCC_VALUED = frozenset(
    {
        "-gencode",
        "--generate-code",
        "-Xptxas",
        "--ptxas-options",
        "--threads",
        "-t",
        "--default-stream",
        "-Xcompiler",
        "--compiler-options",
        "-ccbin",
        "--compiler-bindir",
        "-maxrregcount",
        "--maxrregcount",
        "-arch",
        "--gpu-architecture",
        "-code",
        "--gpu-code",
        "--diag-suppress",
        "-diag-suppress",
        "--split-compile",
    }
)
_ARCH = textre.compile(r"^(?:arch=)?compute_\d+|^sm_\d+|^code=")
_HIP = "torch.version.hip"
_MARK = "# gpuport:"


def _flag_kind(value: str) -> str | None:
    """``plain``, ``valued`` (its value is the next word unless written with ``=``), ``arch``
    (an architecture word), or None when hipcc takes it."""
    words = value.split()
    first = words[0] if words else value
    name = first.split("=", 1)[0]
    if name in NVCC_ONLY:
        return "plain"
    if name in NVCC_VALUED:  # its value after "=" or in the same string ("-Xptxas -O3")
        return "plain" if "=" in first or len(words) > 1 else "valued"
    if _ARCH.match(value):
        return "arch"
    return None


def _literal(node: ast.expr) -> str | None:
    """A string element's text when it can be judged: a constant, or an f-string's constant
    parts (``f"arch=compute_{a},code=sm_{a}"`` -> ``arch=compute_,code=sm_``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    return None


#: nvcc flags whose clang spelling hipcc takes, as the real ports write it
CLANG_SPELLING = {"--use_fast_math": "-ffast-math", "-use_fast_math": "-ffast-math"}


#: the values nvcc's ``-arch`` takes; ``-arch arm64`` / ``-arch x86_64`` are Apple's
#: host-compiler flag (a macOS build's ``cxx`` and link flags), not nvcc's
_NVCC_ARCH_VALUE = textre.compile(r"^(?:sm_|compute_|lto_)\w+$|^(?:all|all-major|native)$")


def _apple_arch(elts: list[ast.expr], i: int) -> bool:
    text = _literal(elts[i])
    if text not in ("-arch", "--arch") or i + 1 >= len(elts):
        return False
    value = _literal(elts[i + 1])
    return value is not None and _NVCC_ARCH_VALUE.match(value) is None


#: CUDA libraries a build links by name and the ROCm library their calls become once torch's
#: hipify has rewritten the sources (cusparseX -> hipsparseX): ``-lcusparse``, ``-l cusparse``,
#: ``cusparse.lib``. Not the CUDA runtime: ROCm torch links HIP's itself.
LINK_TWINS = {
    "cublas": "hipblas",
    "cublasLt": "hipblaslt",
    "cusparse": "hipsparse",
    "cusolver": "hipsolver",
    "curand": "hiprand",
    "cufft": "hipfft",
    "nccl": "rccl",
}


def _link_twin(elts: list[ast.expr], i: int) -> str | None:
    """The HIP spelling of a CUDA library link argument at ``elts[i]``, or None."""
    el = elts[i]
    if not isinstance(el, ast.Constant) or not isinstance(el.value, str):
        return None
    value = el.value
    if value.startswith("-l") and value[2:] in LINK_TWINS:
        return "-l" + LINK_TWINS[value[2:]]
    if value.endswith(".lib") and value[:-4] in LINK_TWINS:
        return LINK_TWINS[value[:-4]] + ".lib"
    if value in LINK_TWINS and i > 0 and _literal(elts[i - 1]) == "-l":
        return LINK_TWINS[value]
    return None


def hip_flags(elts: list[ast.expr]) -> tuple[list[ast.expr | str], bool]:
    """The elements hipcc keeps (an nvcc flag with a clang spelling as that spelling's
    string literal, a CUDA library's link argument as its ROCm twin's), and whether any
    was dropped or changed."""
    kept: list[ast.expr | str] = []
    dropped = False
    skip = False
    for i, el in enumerate(elts):
        if skip:
            skip = False
            dropped = True
            continue
        twin = _link_twin(elts, i)
        if twin is not None:
            kept.append(repr(twin).replace("'", '"'))
            dropped = True
            continue
        text = _literal(el)
        kind = _flag_kind(text) if text is not None and not _apple_arch(elts, i) else None
        if kind is None:
            kept.append(el)
            continue
        dropped = True
        if isinstance(el, ast.Constant) and text in CLANG_SPELLING:
            kept.append(repr(CLANG_SPELLING[text]).replace("'", '"'))
            continue
        skip = kind == "valued"
    return kept, dropped


def _nvcc_words(node: ast.AST) -> bool:
    """Whether ``node`` holds a string hipcc rejects."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.expr):
            text = _literal(sub)
            if text is not None and _flag_kind(text) is not None:
                return True
    return False


def _is_flag_stmt(stmt: ast.stmt) -> bool:
    """A statement that only adds nvcc-only flags to a list (or a block of such)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr in (
            "append",
            "extend",
            "insert",
        ):
            return all(
                isinstance(a, ast.Constant | ast.JoinedStr | ast.List | ast.Tuple)
                for a in call.args[-1:]
            ) and _nvcc_words(call)
        return False
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        return (
            isinstance(stmt.value, ast.List | ast.Tuple)
            and _nvcc_words(stmt.value)
            and all(
                _literal(e) is not None and _flag_kind(_literal(e) or "") is not None
                for e in stmt.value.elts
            )
        )
    if isinstance(stmt, ast.If | ast.For):
        body = [*stmt.body, *stmt.orelse]
        return bool(body) and all(_is_flag_stmt(s) for s in body)
    return False


def _lines(text: str) -> list[int]:
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    return starts


def _offset(starts: list[int], line: int, col: int, text: str) -> int:
    """Offset of ast's (line, utf-8 byte column)."""
    base = starts[line - 1]
    row = text[base : starts[line] if line < len(starts) else len(text)]
    return base + len(
        row.encode("utf-8", "surrogateescape")[:col].decode("utf-8", "surrogateescape")
    )


def _span(node: ast.AST, starts: list[int], text: str) -> tuple[int, int]:
    start = _offset(starts, node.lineno, node.col_offset, text)  # type: ignore[attr-defined]
    end = _offset(starts, node.end_lineno, node.end_col_offset, text)  # type: ignore[attr-defined]
    return start, end


def _groups(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    out: list[list[ast.stmt]] = []
    cur: list[ast.stmt] = []
    for stmt in body:
        if _is_flag_stmt(stmt):
            cur.append(stmt)
            continue
        if cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    out: list[list[ast.stmt]] = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out.append(body)
    return out


def _guarded(tree: ast.AST) -> list[tuple[int, int]]:
    """Line ranges already under a test of ROCm/HIP (their flags are not the CUDA ones)."""
    out: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.IfExp):
            words = " ".join(
                n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
                for n in ast.walk(node.test)
            )
            if textre.search(r"(?i)hip|rocm", words):
                out.append((node.lineno, node.end_lineno or node.lineno))
    return out


_TORCH_LINE = f"import torch  {_MARK} torch.version.hip selects the ROCm build's flags\n"


def _imports_torch(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` imports torch or a module of it (``import torch``, ``from
    torch.utils.cpp_extension import ...``)."""
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    return (
        isinstance(stmt, ast.ImportFrom)
        and not stmt.level
        and (stmt.module == "torch" or (stmt.module or "").startswith("torch."))
    )


def _binds_torch(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Import) and any(
        (a.name == "torch" or a.name.startswith("torch.")) and a.asname is None for a in stmt.names
    )


def torch_imports(
    tree: ast.Module, text: str, starts: list[int], sites: list[tuple[int, int]]
) -> list[tuple[int, str]] | str:
    """Where to add ``import torch`` so that the edits at ``sites`` (1-based line ranges)
    read ``torch.version.hip``: right after an import of torch that runs whenever they do,
    never at the top of a file that imports torch only under ``try``/``if`` or in a function
    (fortieth re-run F14: a torch-less install stopped); below a shebang or coding cookie
    (thirty-ninth re-run F25), as it follows a statement. Or why there is no such place."""
    return import_after(tree, text, starts, _imports_torch, _binds_torch, _TORCH_LINE, sites)


def _covering(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """``line -> whether one of spans holds it``: sorted once, then a binary search per line
    over the running maximum of the ends."""
    starts: list[int] = []
    reach: list[int] = []
    for a, b in sorted(spans):
        starts.append(a)
        reach.append(max(b, reach[-1]) if reach else b)

    def holds(line: int) -> bool:
        i = bisect_right(starts, line) - 1
        return i >= 0 and reach[i] >= line

    return holds


class _Spans:
    """Line ranges; ``holds(lo, hi)``: whether one of them contains ``lo..hi`` (the largest end
    among ranges starting at or before ``lo`` reaches ``hi``), in log time by a Fenwick tree
    of prefix maxima (ends only grow). A scan of every range per node was quadratic."""

    def __init__(self, lines: int) -> None:
        self._n = max(lines, 1) + 2
        self._tree = [0] * (self._n + 1)

    def add(self, first: int, last: int) -> None:
        i = min(max(first, 1), self._n)
        while i <= self._n:
            self._tree[i] = max(self._tree[i], last)
            i += i & -i

    def holds(self, lo: int, hi: int) -> bool:
        i, best = min(max(lo, 0), self._n), 0
        while i > 0:
            best = max(best, self._tree[i])
            i -= i & -i
        return best > 0 and best >= hi  # 0: no range starts at or before lo


def _conditional(text: str, s: int, e: int, node: ast.List | ast.Tuple, kept: list[str]) -> str:
    """``(HIP if torch.version.hip else ORIGINAL)`` for the list at ``text[s:e]``; a list
    that opens its own line is laid out over lines, the original's lines kept as they are."""
    open_, close = ("[", "]") if isinstance(node, ast.List) else ("(", ")")
    comma = "," if isinstance(node, ast.Tuple) and len(kept) == 1 else ""
    original = text[s:e]
    line_start = text.rfind("\n", 0, s) + 1
    lead = text[line_start:s]
    if "\n" not in original or lead.strip():
        return f"({open_}{', '.join(kept)}{comma}{close} if {_HIP} else {original})"
    ind = lead
    inner = ind + "    "
    if kept:
        body = "".join(f"{inner}    {k},\n" for k in kept)
        hip = f"{inner}{open_}\n{body}{inner}{close}\n"
    else:
        hip = f"{inner}{open_}{close}\n"
    rest = original[1:-1]
    return (
        f"(\n{hip}{inner}if {_HIP}  {_MARK} GP402 hipcc takes none of nvcc's own flags\n"
        f"{inner}else {open_}{rest}{close})"
    )


def _cuda_home(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    """GP409: ``CUDA_HOME is (not) None`` tests also accept a ROCm torch build
    (``IS_HIP_EXTENSION``, from the same module), as ROCm ports write them. Unsafe: where the
    ROCm install skipped the extension, it now builds it with hipcc, and a kernel that does
    not compile for AMD stops the install. Left to a person where CUDA_HOME is used as a path
    (the ROCm build would get None)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    imported = has_hip = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "torch.utils.cpp_extension":
            for a in node.names:
                imported |= a.name == "CUDA_HOME" and a.asname is None
                has_hip |= a.name == "IS_HIP_EXTENSION" and a.asname is None
    if not imported:
        return None
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    tests: list[ast.Compare] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "CUDA_HOME"):
            continue
        if isinstance(node.ctx, ast.Store):
            return None  # the project sets it itself
        up = parents.get(id(node))
        if (
            isinstance(up, ast.Compare)
            and up.left is node
            and len(up.ops) == 1
            and isinstance(up.ops[0], ast.Is | ast.IsNot)
            and isinstance(up.comparators[0], ast.Constant)
            and up.comparators[0].value is None
        ):
            tests.append(up)
            continue
        ctx.decline(found, "CUDA_HOME is used as a path here: a ROCm branch is a person's call")
        return None
    if not tests:
        return None
    starts = _lines(text)
    prop = Proposal(
        id=f"setup-rocm-home:{path}",
        family="setup.py",
        title=f"{path}: the extension's CUDA_HOME tests also accept ROCm torch",
        safe=False,
        why="IS_HIP_EXTENSION is False on CUDA torch, so CUDA builds are unchanged; on ROCm the "
        "extension is now built with hipcc where the install skipped it, and a kernel that "
        "does not compile for AMD stops the install",
        findings=list(found),
    )
    by_line = ByLine(found)
    for t in tests:
        s, e = _span(t, starts, text)
        if isinstance(t.ops[0], ast.Is):
            new = f"({text[s:e]} and not IS_HIP_EXTENSION)"
        else:
            new = f"({text[s:e]} or IS_HIP_EXTENSION)"
        prop.edit(path, s, e, new, by_line.within(t.lineno, t.end_lineno or t.lineno))
    if not has_hip:
        line = f"from torch.utils.cpp_extension import IS_HIP_EXTENSION  {_MARK} GP409 ROCm torch\n"
        sites = [(t.lineno, t.end_lineno or t.lineno) for t in tests]
        adds = import_after(tree, text, starts, _imports_home, _binds_hip, line, sites)
        if isinstance(adds, str):  # beside CUDA_HOME's own import, never above it (F14)
            ctx.decline(found, f"no place for the IS_HIP_EXTENSION import: {adds}")
            return None
        for at, insert in adds:
            prop.edit(path, at, at, insert)
    return prop


def _from_cpp_extension(name: str) -> Callable[[ast.stmt], bool]:
    """``stmt -> whether it is from torch.utils.cpp_extension import name``."""
    return lambda stmt: (
        isinstance(stmt, ast.ImportFrom)
        and stmt.module == "torch.utils.cpp_extension"
        and any(a.name == name and a.asname is None for a in stmt.names)
    )


_imports_home = _from_cpp_extension("CUDA_HOME")
_binds_hip = _from_cpp_extension("IS_HIP_EXTENSION")


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    for path in ctx.files_with("GP409"):
        text = ctx.read(path)
        if text is not None and (why := foreign_cookie(text)) is not None:
            ctx.decline(ctx.of("GP409", path=path), f"not edited: {why}")
            continue
        if path.endswith("setup.py") and text is not None:
            got = _cuda_home(ctx, path, text, ctx.of("GP409", path=path))
            if got is not None:
                out.append(got)
    for path in ctx.files_with("GP402", "GP403"):
        if not path.endswith("setup.py"):
            continue
        text = ctx.read(path)
        if text is None:
            continue
        if (why := foreign_cookie(text)) is not None:
            ctx.decline(ctx.of("GP402", "GP403", path=path), f"not edited: {why}")
            continue
        found = ctx.of("GP402", "GP403", path=path)
        prop = _fix(path, text, found)
        if isinstance(prop, str):
            ctx.decline(found, prop)
        elif prop is not None:
            out.append(prop)
    return out


def hip_list(
    prop: Proposal,
    path: str,
    text: str,
    starts: list[int],
    node: ast.List | ast.Tuple,
    findings: list[Finding],
) -> bool:
    """Add to ``prop`` the edit making the flag list ``node`` ``([hip] if torch.version.hip
    else [original])``, in the list's own quotes; False when hipcc takes it as it is."""
    kept, dropped = hip_flags(list(node.elts))
    if not dropped:
        return False
    s, e = _span(node, starts, text)
    quote = "'" if text[s:e].count("'") > text[s:e].count('"') else '"'
    spelled = [
        k.replace('"', quote) if isinstance(k, str) else text[slice(*_span(k, starts, text))]
        for k in kept
    ]
    prop.edit(path, s, e, _conditional(text, s, e, node, spelled), findings)
    return True


def parse(text: str) -> tuple[ast.Module, list[int], list[tuple[int, int]]] | None:
    """The module, its line offsets and the line ranges already under a ROCm test; None
    when gpuport does not edit it: Python reads it otherwise (a coding cookie,
    :func:`~gpuport.port.py_imports.foreign_cookie`). Where ``import torch`` goes, which
    every edit here needs, is asked once the edits are known (:func:`torch_imports`)."""
    if foreign_cookie(text) is not None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    starts = _lines(text)
    return tree, starts, _guarded(tree)


def _fix(path: str, text: str, found: list[Finding]) -> Proposal | str | None:
    """The proposal, None, or why it is not made."""
    got = parse(text)
    if got is None:
        return None
    tree, starts, guarded = got
    prop = Proposal(
        id=f"setup-hip-flags:{path}",
        family="setup.py",
        title=f"{path}: no nvcc-only flags in the ROCm build",
        safe=True,
        why="torch.version.hip is None on CUDA torch: a CUDA build evaluates and runs what it "
        "did; the ROCm build, which hipcc stopped at the first nvcc-only flag, no longer "
        "gets them",
        findings=[],
    )
    covered: list[tuple[int, int]] = []
    spans = _Spans(len(starts))
    for a, b in guarded:
        spans.add(a, b)
    by_line = ByLine(found)

    def inside(node: ast.AST) -> bool:
        lo, hi = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return spans.holds(lo, hi)

    def cover(first: int, last: int) -> None:
        covered.append((first, last))
        spans.add(first, last)

    for body in _bodies(tree):
        for group in _groups(body):
            if inside(group[0]):
                continue
            first, last = group[0].lineno, group[-1].end_lineno or group[-1].lineno
            lo = starts[first - 1]
            hi = starts[last] if last < len(starts) else len(text)
            block = text[lo:hi]
            indent = textre.match(r"[ \t]*", block).group(0)  # type: ignore[union-attr]
            unit = "\t" if indent.startswith("\t") else "    "
            moved = "".join(
                (unit + ln) if ln.strip() else ln for ln in block.splitlines(keepends=True)
            )
            head = f"{indent}if not {_HIP}:  {_MARK} GP402 nvcc-only flags: CUDA builds only\n"
            prop.edit(path, lo, hi, head + moved, by_line.within(first, last))
            cover(first, last)
    for node in ast.walk(tree):
        if not isinstance(node, ast.List | ast.Tuple) or inside(node):
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        if hip_list(prop, path, text, starts, node, by_line.within(first, last)):
            cover(first, last)
    if not covered:
        return None
    held = _covering(covered)
    prop.findings = [f for f in found if f.location.line and held(f.location.line)]
    if not prop.findings:
        return None
    adds = torch_imports(tree, text, starts, covered)
    if isinstance(adds, str):
        return f"no `import torch` that runs whenever the edits do: {adds}"
    for at, line in adds:
        prop.edit(path, at, at, line)
    return prop
