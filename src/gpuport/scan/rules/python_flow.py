"""Shared state of one file's walk, and the data-flow rules GP205/GP206.

GP205 follows values: ``major, minor = torch.cuda.get_device_capability()``
makes ``major``/``minor`` capability-derived, ``props = get_device_properties(0)``
makes ``props.major`` one, ``for a in torch.cuda.get_arch_list()`` makes ``a``
an arch name; a comparison of such a value with an SM number / tuple or an
``"sm_XX"`` string is the finding. Names are tracked per file in source order,
without scopes: cheap, and a reused name only matters if it is then compared
with an SM number.

GP206 fires where ``torch.version.cuda`` decides between the GPU and the CPU:
an ``if``/ternary/``while`` test whose branches pick ``"cpu"`` or skip, a
``skipIf``/``skipUnless``/``skipif`` condition, or an assignment to a name like
``has_gpu``/``gpu_available`` -- and the test does not also look at HIP/ROCm.
"""

from __future__ import annotations

import ast

from gpuport.models import Severity
from gpuport.scan.rules.base import FileContext
from gpuport.scan.rules.python_guards import PLATFORM, Aliases, is_cuda_version
from gpuport.scan.rules.python_patterns import falls_back, is_intlike, is_sm_string, last_name
from gpuport.scan.rules.python_scope import GuardScope
from gpuport.scan.rules.python_source import WordLines

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_MAX_DEPTH = 12  # how deep the data-flow checks look into one expression


class ScanState:
    """What one walk knows so far, how it reports, and the data-flow rules."""

    def __init__(self, ctx: FileContext, mask: bytearray, candidates: set[str]) -> None:
        self.ctx = ctx
        self.mask = mask
        self.aliases = Aliases()
        self.scope = GuardScope(ctx.text, candidates)
        self.tree: ast.Module | None = None
        self.functions: list[FunctionNode] = []  # the functions the walk is inside, outermost first
        self.cap_names: set[str] = set()
        self.props_names: set[str] = set()
        self.arch_names: set[str] = set()
        self.marked: set[str] = set()
        self.words = WordLines(ctx.text)
        self.has_cap = "get_device_capability" in ctx.text or "get_device_properties" in ctx.text
        self.has_arch = "get_arch_list" in ctx.text
        self.quiet: set[int] = set()  # ids of nodes only compared against, or flavour tables

    def enter_function(self, node: FunctionNode) -> None:
        """The walk reached a function (in source order): it encloses what comes next."""
        functions = self.functions
        while functions and (functions[-1].end_lineno or 0) < node.lineno:
            functions.pop()
        functions.append(node)

    def enclosing(self, line: int) -> FunctionNode | None:
        """The innermost function around ``line`` (None at module or class level)."""
        for func in reversed(self.functions):
            if func.lineno <= line <= (func.end_lineno or func.lineno):
                return func
        return None

    def mark_names(self, names: set[str]) -> None:
        """Make lines that mention these identifiers interesting for the rest of the walk."""
        new = {n for n in names if n not in self.marked}
        if not new:
            return
        self.marked |= new
        self.words.mark(new, self.mask)

    def column(self, line: int | None, col_offset: int | None) -> int | None:
        """The 1-based column, in characters, of an ``ast`` ``col_offset`` on ``line``.

        ``ast`` counts UTF-8 bytes; findings count code points like editors do. Only a
        line that is not ASCII needs converting.
        """
        if col_offset is None:
            return None
        if line is None or col_offset == 0:
            return col_offset + 1
        text = self.ctx.line_text(line)
        if text.isascii():
            return col_offset + 1
        return len(text.encode("utf-8")[:col_offset].decode("utf-8", "ignore")) + 1

    def report(
        self,
        rule_id: str,
        node: ast.AST,
        *,
        guarded: bool,
        message: str,
        fix: str | None = None,
        severity: Severity | None = None,
    ) -> None:
        line = getattr(node, "lineno", None)
        self.ctx.report(
            rule_id,
            line,
            self.column(line, getattr(node, "col_offset", None)),
            message=message,
            fix=fix,
            guarded=guarded,
            severity=severity,
            end_line=getattr(node, "end_lineno", None),
        )

    def flow_assign(self, names: set[str], value: ast.expr) -> bool:
        """Track names bound to capability/properties/arch values; False if none applied."""
        if self._cap(value):
            self.cap_names |= names
        elif self._props(value):
            self.props_names |= names
        elif self._arch(value):
            self.arch_names |= names
        else:
            return False
        self.mark_names(names)
        return True

    def _cap(self, node: ast.AST, depth: int = 0) -> bool:
        """Is this expression derived from ``get_device_capability()``?"""
        if not self.has_cap or depth > _MAX_DEPTH:
            return False
        deeper = depth + 1
        if isinstance(node, ast.Call):
            if last_name(node.func) == "get_device_capability":
                return True
            if isinstance(node.func, ast.Attribute) and self._cap(node.func.value, deeper):
                return True  # cap.to_int()
            return any(self._cap(a, deeper) for a in node.args)
        if isinstance(node, ast.Subscript):
            return self._cap(node.value, deeper)
        if isinstance(node, ast.Name):
            return node.id in self.cap_names
        if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
            return self._cap(node.value, deeper) or self._props(node.value)
        if isinstance(node, ast.BinOp):
            return self._cap(node.left, deeper) or self._cap(node.right, deeper)
        if isinstance(node, (ast.Tuple, ast.List)):  # `(major, minor) >= (8, 0)`
            return any(self._cap(e, deeper) for e in node.elts)
        if isinstance(node, ast.JoinedStr):
            values = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
            return any(self._cap(v, deeper) for v in values)
        return False

    def _props(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return last_name(node.func) == "get_device_properties"
        return isinstance(node, ast.Name) and node.id in self.props_names

    def _arch(self, node: ast.AST, depth: int = 0) -> bool:
        """Is this expression derived from ``get_arch_list()`` (or one of its items)?"""
        if not self.has_arch or depth > _MAX_DEPTH:
            return False
        deeper = depth + 1
        if isinstance(node, ast.Call):
            if last_name(node.func) == "get_arch_list":
                return True
            if isinstance(node.func, ast.Attribute) and self._arch(node.func.value, deeper):
                return True
            return any(self._arch(a, deeper) for a in node.args)
        if isinstance(node, ast.Subscript):
            return self._arch(node.value, deeper)
        return isinstance(node, ast.Name) and node.id in self.arch_names

    def _compare(self, node: ast.Compare, guard: int) -> None:
        operands = [node.left, *node.comparators]
        for op in operands:  # `x == "CUDAExecutionProvider"`, `dtype in (torch.float8_e4m3fn,)`
            self.quiet.add(id(op))
            if isinstance(op, (ast.Tuple, ast.List, ast.Set)):
                self.quiet.update(id(e) for e in op.elts)
        guarded = bool(guard & PLATFORM)
        if any(self._cap(o) for o in operands) and any(is_intlike(o) for o in operands):
            self.report(
                "GP205",
                node,
                guarded=guarded,
                message="compares get_device_capability() with NVIDIA SM numbers; on ROCm "
                "it returns gfx-derived numbers (gfx942 -> (9, 4), gfx950 -> (9, 5))",
            )
        elif any(is_sm_string(o) for o in operands) and any(self._arch(o) for o in operands):
            self._arch_finding(node, guarded)

    def _arch_finding(self, node: ast.AST, guarded: bool) -> None:
        self.report(
            "GP205",
            node,
            guarded=guarded,
            message='looks for "sm_" names in get_arch_list(); on ROCm it lists gfx targets',
        )

    def _branch_test(self, node: ast.If | ast.IfExp | ast.While, guard: int) -> None:
        if not any(is_cuda_version(n) for n in ast.walk(node.test)):
            return
        branches: list[ast.AST] = []
        if isinstance(node, ast.IfExp):
            branches = [node.body, node.orelse]
        else:
            branches = [*node.body, *node.orelse]
        if any(falls_back(b) for b in (node.test, *branches)):
            self._cuda_version_presence(node.test, guard)

    def _cuda_version_presence(self, test: ast.AST, guard: int) -> None:
        if self.scope.test_flags(test, cuda_version=False) & PLATFORM:
            return  # the test also looks at HIP/ROCm: it tells the platforms apart on purpose
        for sub in ast.walk(test):
            if is_cuda_version(sub):
                self.report(
                    "GP206",
                    sub,
                    guarded=bool(guard & PLATFORM),
                    message="torch.version.cuda is None on ROCm, so this treats an AMD GPU "
                    "as no GPU",
                )
                return

    def _for(self, node: ast.For | ast.AsyncFor | ast.comprehension, guard: int) -> None:
        if self._arch(node.iter):
            target = node.target
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            names = {e.id for e in elts if isinstance(e, ast.Name)}
            self.arch_names |= names
            self.mark_names(names)

    def _sm_startswith(self, node: ast.Call, guard: int) -> None:
        if (
            isinstance(node.func, ast.Attribute)
            and node.args
            and is_sm_string(node.args[0])
            and self._arch(node.func.value)
        ):
            self._arch_finding(node, bool(guard & PLATFORM))
