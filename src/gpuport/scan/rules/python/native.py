"""GP211 (CUDA extension built at run time) and GP212 (Triton inline PTX).

GP211 reads what ``cpp_extension.load`` compiles. ``sources`` is resolved as
far as the text allows: string literals, the last literal argument of a call
(``os.path.join(d, "x.cpp")`` -> ``x.cpp``), the literal tail of an f-string or
``+``/``/`` expression, and a name assigned once in the same function (or at
module level). No ``.cu``/``.cuh`` source, no ``with_cuda=True`` and no
``extra_cuda_cflags``: a CPU-only extension, no finding. Sources it cannot
resolve: minor, since they may or may not hold CUDA.

GP212 only looks at Triton's own ``inline_asm_elementwise``
(``tl.inline_asm_elementwise``, ``triton.language.inline_asm_elementwise``, or
the name imported from ``triton.language``); torch's wrappers of the same name
(``ops.inline_asm_elementwise``, the higher-order op) are not Triton calls.
"""

from __future__ import annotations

import ast
import bisect
import re

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.rules.python.flow import ScanState
from gpuport.scan.rules.python.patterns import PTX, call_arg, str_value

_CUDA_SUFFIXES = (".cu", ".cuh")
_MAX_DEPTH = 4
_TRITON_ASM = frozenset({"tl.inline_asm_elementwise", "triton.language.inline_asm_elementwise"})


#: A file that already branches on ROCm when it builds extensions (DeepSpeed's op_builder).
_ROCM_AWARE = textre.compile(r"\bROCM_HOME\b|\bis_rocm\w*|\bhipify\w*")
#: One PTX approximation instruction and the Triton function that replaces it.
_TRITON_MATH = {
    "cos": "tl.cos",
    "sin": "tl.sin",
    "ex2": "tl.exp2",
    "lg2": "tl.log2",
    "rcp": "tl.fdiv(1.0, x)",
    "sqrt": "tl.sqrt",
    "rsqrt": "tl.rsqrt",
    "tanh": "libdevice tanh",
}
_PTX_MATH = textre.compile(
    r"^\s*(cos|sin|ex2|lg2|rcp|sqrt|rsqrt|tanh)\.approx(?:\.ftz)?\.f(?:16|32|64)"
    r"\s+\$0\s*,\s*\$1\s*;?\s*$"
)


#: PTX statements Triton has portable primitives for: barriers (``tl.debug_barrier``),
#: atomics and ordered loads/stores (``tl.atomic_cas``/``tl.atomic_add`` with ``sem=`` and
#: ``scope=``), fences, thread-index registers (``tl.program_id``, ``tl.arange``), and the
#: spin-loop glue around them (register declarations, labels, predicates, branches).
_PTX_SYNC_STMT = textre.compile(
    r"(?:\.reg\s.*|\w+:|[{}]|"
    r"(?:@!?%\w+\s+)?bra(?:\.uni)?\s+\w+|"
    r"setp\.\w+(?:\.\w+)*\s.*|"
    r"(?:bar|barrier)(?:\.\w+)*(?:\s.*)?|"
    r"(?:atom|red)(?:\.\w+)+\s.*|"
    r"(?:membar|fence)(?:\.\w+)+|"
    r"(?:ld|st)\.(?:acquire|release|relaxed|volatile)(?:\.\w+)+\s.*|"
    r"mov\.[ub]32\s+\$\d+\s*,\s*%(?:tid|ntid|ctaid|nctaid|laneid|warpid|smid)(?:\.[xyz])?)"
)


def _sync_only(text: str) -> bool:
    """Whether a PTX string is made only of :data:`_PTX_SYNC_STMT` statements."""
    stmts = [
        part.strip()
        for line in text.splitlines()
        for part in line.split("//", 1)[0].split(";")
        if part.strip()
    ]
    return bool(stmts) and all(_PTX_SYNC_STMT.fullmatch(st) for st in stmts)


def is_triton_asm(dotted: str) -> bool:
    """Does a call's resolved name denote ``triton.language.inline_asm_elementwise``?"""
    return dotted in _TRITON_ASM or dotted.endswith(".tl.inline_asm_elementwise")


#: Source files read from one ``sources`` expression; past it the rest count as unread
_MAX_SOURCES = 512


class NativeRules(ScanState):
    """GP211 and GP212 of one file's walk."""

    def extension(self, node: ast.Call, func: str, guarded: bool) -> None:
        leaf = func.rsplit(".", 1)[1]
        with_cuda = call_arg(node, None, "with_cuda")
        cuda = isinstance(with_cuda, ast.Constant) and with_cuda.value is True
        cuda = cuda or call_arg(node, None, "extra_cuda_cflags") is not None
        severity: Severity | None = None
        resolved = False  # every source named: its kernels are files gpuport reads
        if leaf == "load":
            sources = call_arg(node, 1, "sources")
            found = self._sources(sources, node.lineno, 0) if sources is not None else [None]
            known = [s for s in found if s is not None]
            named = bool(known) and len(known) == len(found)
            resolved = named and self._beside(known)
            if not cuda and not any(s.endswith(_CUDA_SUFFIXES) for s in known):
                if named:
                    return  # a CPU-only extension
                severity = Severity.MINOR
            elif not resolved:
                # advice, not a defect (issue 24): ROCm torch hipifies what load() compiles;
                # what breaks is in its flags (reported at each flag) or in its kernels, judged
                # in their own files where the project has them
                severity = Severity.MINOR
        elif leaf == "load_inline" and not cuda and call_arg(node, 2, "cuda_sources") is None:
            return
        elif leaf != "load_inline":
            # CUDAExtension(...) in a builder module (lightseq's op builders): the advice
            # GP404 gives for setup.py, minor; its kernels are judged in their own files and
            # its nvcc flags at each flag (issue 24, twelfth sample)
            severity = Severity.MINOR
        message = (
            f"`{leaf}` builds a custom CUDA extension at run time; on ROCm torch "
            "hipifies it and builds it with hipcc, so its kernels must be portable"
            + (
                " (which files it compiles is not plain from the text, so they are not judged "
                "here: check that they are scanned and portable)"
                if severity
                else ""
            )
        )
        aware = self._rocm_aware()
        if aware is not None and not guarded:  # a builder with its own ROCm branch
            guarded = True
            message += (
                f"; this file already handles ROCm (`{aware.group(0)}`), and the kernels "
                "it builds are judged in their own files"
            )
        elif resolved and not guarded:
            # ROCm torch hipifies what load() compiles: the porting work, if any, is in
            # those source files, whose own findings (GP3xx) count it once.
            guarded = True
            message += "; its sources are named, and their kernels are judged in their own files"
        self.report("GP211", node, guarded=guarded, severity=severity, message=message)
        self._nvcc_flags(node, leaf)

    def _rocm_aware(self) -> re.Match[str] | None:
        """The file's own ROCm handling, searched once per file (once per `load()` call was
        quadratic: red-team re-run 12, 400 KB of calls, 10 s of a 14 s port)."""
        if not hasattr(self, "_aware"):
            self._aware = _ROCM_AWARE.search(self.ctx.text)
        return self._aware

    def _nvcc_flags(self, node: ast.Call, leaf: str) -> None:
        """nvcc-only flags in ``extra_cuda_cflags`` (``--use_fast_math``): on ROCm torch
        hands them to hipcc, which rejects or misreads them (the same flags and fixes as
        GP402 in build files). Not lowered by the sources' own judgement: the flag is here."""
        from gpuport.scan.rules.build.common import NVCC_ONLY, flag_fix, flag_severity

        flags = call_arg(node, None, "extra_cuda_cflags")
        if isinstance(flags, ast.Name):  # `flags = [...]` then `extra_cuda_cflags=flags`
            flags = self._assigned(flags.id, node.lineno)
        items = flags.elts if isinstance(flags, ast.List | ast.Tuple) else []
        seen: set[int] | None = getattr(self, "_flag_items", None)
        if seen is None:  # a list shared by many calls: its flags reported once
            seen = set()
            self._flag_items = seen
        for item in items:
            if id(item) in seen:
                continue
            seen.add(id(item))
            text = str_value(item)
            for m in NVCC_ONLY.finditer(text or ""):
                flag = m.group(1)
                self.report(
                    "GP211",
                    item,
                    guarded=False,
                    severity=flag_severity(flag) or Severity.MAJOR,
                    message=f"`{leaf}` passes nvcc-only flag {flag} in extra_cuda_cflags; "
                    "on ROCm torch hands it to hipcc",
                    fix=flag_fix(flag, self.ctx.target.name),
                )

    def _beside(self, names: list[str]) -> bool:
        """Is every source a file of the project, beside (or below) this one or named from
        the project's root? Only then are its kernels scanned in their own files (a stat;
        nothing is opened here)."""
        # beside this file, or named from the project's root (the folder a user runs
        # from: `load(sources=["csrc/k.cu"])` in pkg/ops.py)
        bases = [self.ctx.path.parent]
        if self.ctx.root is not None and self.ctx.root != bases[0]:
            bases.append(self.ctx.root)
        seen: dict[str, bool] | None = getattr(self, "_file_memo", None)
        if seen is None:  # each name looked at once per file: 14,000 calls of one list of
            seen = {}  # 512 names stat-ed it 7 M times (37 s for 187 KB; seventh review)
            self._file_memo = seen
        for n in names:
            if n not in seen:
                rel = n.lstrip("/")
                seen[n] = ".." not in n.split("/") and any((b / rel).is_file() for b in bases)
            if not seen[n]:
                return False
        return True

    def _sources(self, expr: ast.AST, line: int, depth: int) -> list[str | None]:
        """The file names an expression for ``sources`` holds (None: one it cannot read)."""
        if depth > _MAX_DEPTH:
            return [None]
        deeper = depth + 1
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            out: list[str | None] = []
            for elt in expr.elts:
                if len(out) >= _MAX_SOURCES:  # more than any real build lists: not read on
                    out.append(None)
                    break
                item = elt.value if isinstance(elt, ast.Starred) else elt
                out.extend(self._sources(item, line, deeper))
            return out
        text = str_value(expr)
        if text is not None:
            return [text]
        if isinstance(expr, ast.JoinedStr) and expr.values:
            return [str_value(expr.values[-1])]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Div)):
            return self._sources(expr.right, line, deeper)
        if isinstance(expr, ast.Call):
            literal = next((a for a in reversed(expr.args) if str_value(a) is not None), None)
            return [str_value(literal)]
        if isinstance(expr, ast.Name):
            value = self._assigned(expr.id, line)
            if value is not None:
                memo = self._memo()
                if id(value) not in memo:  # each assigned value read once per file
                    memo[id(value)] = self._sources(value, line, deeper)[:_MAX_SOURCES]
                return memo[id(value)]
        return [None]

    def _memo(self) -> dict[int, list[str | None]]:
        """Sources of assigned values already read in this file (``a = [b]*20``, ``b =
        [c]*20`` and 1,600 ``load("m", a)`` calls took 2.5 min; sixth review). One walk
        object per file, whose tree lives while it runs: an id names one node."""
        memo: dict[int, list[str | None]] | None = getattr(self, "_source_memo", None)
        if memo is None:
            memo = {}
            self._source_memo = memo
        return memo

    def _assigned(self, name: str, line: int) -> ast.expr | None:
        """The value of the last simple ``name = ...`` before ``line``: function, then module.
        Each scope's assignments are indexed once (6,000 ``load(...)`` calls each re-read
        every statement of the module: 41 s for 219 KB; sixth review)."""
        func = self.enclosing(line)
        scopes: list[ast.AST] = [func] if func is not None else []
        if self.tree is not None:
            scopes.append(self.tree)
        for scope in scopes:
            found = self._assignments(scope).get(name)
            if not found:
                continue
            at = bisect.bisect_left(found, (line,)) - 1  # the last one before ``line``
            if at >= 0:
                return found[at][1]
        return None

    def _assignments(self, scope: ast.AST) -> dict[str, list[tuple[int, ast.expr]]]:
        """name -> [(line, value)] of the simple assignments in ``scope`` (a function: every
        statement inside it; the module: its top level), by line."""
        index: dict[int, dict[str, list[tuple[int, ast.expr]]]] | None = getattr(
            self, "_assign_index", None
        )
        if index is None:
            index = {}
            self._assign_index = index
        got = index.get(id(scope))
        if got is not None:
            return got
        stmts = scope.body if isinstance(scope, ast.Module) else ast.walk(scope)
        table: dict[str, list[tuple[int, ast.expr]]] = {}
        for stmt in stmts:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            else:
                continue
            if isinstance(target, ast.Name):
                table.setdefault(target.id, []).append((stmt.lineno, value))
        for entries in table.values():
            entries.sort(key=lambda e: e[0])
        index[id(scope)] = table
        return table

    def inline_asm(self, node: ast.Call, guarded: bool) -> None:
        asm = call_arg(node, 0, "asm")
        if asm is None:
            asm = call_arg(node, None, "asm_str")
        if isinstance(asm, ast.JoinedStr):
            text: str | None = "".join(str_value(v) or " $0 " for v in asm.values)
        else:
            text = str_value(asm)
        if text is None:
            self.report(
                "GP212",
                node,
                guarded=guarded,
                severity=Severity.MINOR,
                message="tl.inline_asm_elementwise with an assembly string gpuport cannot "
                "read; if it is PTX it will not compile for AMD GPUs",
            )
        elif (math := _PTX_MATH.match(text)) is not None:
            op = math.group(1)
            self.report(
                "GP212",
                node,
                guarded=guarded,
                message=f"tl.inline_asm_elementwise runs one PTX math instruction "
                f"(`{op}.approx`), which the AMD backend cannot assemble; Triton's own "
                f"`{_TRITON_MATH[op]}` does the same (a PTX math approximation)",
            )
        elif PTX.search(text) and _sync_only(text):
            self.report(
                "GP212",
                node,
                guarded=guarded,
                message="tl.inline_asm_elementwise carries NVIDIA PTX, which the AMD backend "
                "cannot assemble; it only synchronizes or reads thread indices, which "
                "Triton's tl.atomic_cas/tl.atomic_add (sem=, scope=), tl.debug_barrier and "
                "tl.program_id do portably (PTX synchronization)",
            )
        elif PTX.search(text):
            self.report(
                "GP212",
                node,
                guarded=guarded,
                message="tl.inline_asm_elementwise carries NVIDIA PTX, which the AMD backend "
                "cannot assemble",
            )
