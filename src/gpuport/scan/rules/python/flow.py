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
``has_gpu``/``gpu_available`` -- and the test does not also look at HIP/ROCm, nor does a
later ``elif`` of the same chain (``elif torch.version.cuda: "cuda"`` / ``elif
torch.version.hip: "rocm"`` hands an AMD GPU to its own branch).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from gpuport.knowledge import TargetInfo
from gpuport.models import Severity
from gpuport.scan.rules.base import FileContext
from gpuport.scan.rules.python.guards import PLATFORM, Aliases, is_cuda_version
from gpuport.scan.rules.python.patterns import falls_back, is_intlike, is_sm_string, last_name
from gpuport.scan.rules.python.scope import GuardScope
from gpuport.scan.rules.python.source import WordLines

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
        # name -> (the capability-derived expression bound to it, tuple index or None)
        self.cap_exprs: dict[str, tuple[ast.expr, int | None]] = {}
        # id of a Compare (or nested BoolOp) -> the outermost `and`/`or` it is part of
        self.bool_roots: dict[int, ast.BoolOp] = {}
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

    def flow_assign(
        self, names: set[str], value: ast.expr, targets: list[ast.expr] | None = None
    ) -> bool:
        """Track names bound to capability/properties/arch values; False if none applied."""
        if self._cap(value):
            self.cap_names |= names
            for target in targets or []:
                if isinstance(target, ast.Name):
                    self.cap_exprs[target.id] = (value, None)
                elif isinstance(target, (ast.Tuple, ast.List)):
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Name):
                            self.cap_exprs[elt.id] = (value, i)
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
            root = self.bool_roots.get(id(node))
            message = gate_verdict(node, root, self.ctx.target, self.cap_exprs)
            if message is None:
                return  # the gate takes the same path as on an NVIDIA GPU of the same class
            self.report("GP205", node, guarded=guarded, message=message)
        elif any(is_sm_string(o) for o in operands) and any(self._arch(o) for o in operands):
            self._arch_finding(node, guarded)

    def _bool_root(self, node: ast.BoolOp, guard: int) -> None:
        """Remember the whole ``and``/``or`` around each comparison: ``major > 8 or (major ==
        8 and minor >= 9)`` is judged as one test (the walk meets the outermost one first)."""
        if not self.has_cap or id(node) in self.bool_roots:
            return
        for sub in ast.walk(node):
            if isinstance(sub, (ast.BoolOp, ast.Compare)):
                self.bool_roots.setdefault(id(sub), node)

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
        if isinstance(node, ast.If) and self._rocm_sibling_below(node):
            return  # `elif torch.version.cuda: ... elif torch.version.hip: ...`
        branches: list[ast.AST] = []
        if isinstance(node, ast.IfExp):
            branches = [node.body, node.orelse]
        else:
            branches = [*node.body, *node.orelse]
        if any(falls_back(b) for b in (node.test, *branches)):
            self._cuda_version_presence(node.test, guard)

    def _rocm_sibling_below(self, node: ast.If) -> bool:
        """Whether a later ``elif`` of the chain tells the platforms apart (tests
        ``torch.version.hip``, ``IS_ROCM`` ...): then an AMD GPU that this branch's
        ``torch.version.cuda`` test lets through is taken by that sibling branch, not
        treated as no GPU."""
        chain = node.orelse
        for _ in range(64):
            if len(chain) != 1 or not isinstance(chain[0], ast.If):
                return False
            if self.scope.test_flags(chain[0].test, cuda_version=False) & PLATFORM:
                return True
            chain = chain[0].orelse
        return False

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


# -- capability gates evaluated against the target ------------------------------------------

_GENERIC_GATE = (
    "compares get_device_capability() with NVIDIA SM numbers; on ROCm it returns gfx-derived "
    "numbers (gfx942 -> (9, 4), gfx950 -> (9, 5))"
)
_CMP_OPS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BIN_OPS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
}


def gate_verdict(
    node: ast.Compare,
    root: ast.BoolOp | None,
    target: TargetInfo,
    names: dict[str, tuple[ast.expr, int | None]],
) -> str | None:
    """None when the gate gives the same answer on ``target`` as on an NVIDIA GPU with the
    same features (``target.nvidia_class``), else the finding's message.

    ``major >= 8`` is true on gfx942 (torch reports (9, 4)) and on an sm_89 GPU alike: right.
    ``>= (9, 0)`` is true on gfx942 but false on sm_89: it switches on a Hopper-only path.
    The whole ``and``/``or`` around the comparison (``root``) is judged when it can be worked
    out, else the comparison alone; a gate that cannot be worked out keeps the generic message.
    """
    reported, like = target.reported_capability(), target.nvidia_class
    if reported is None or like is None:
        return _GENERIC_GATE
    on_amd = on_nvidia = None
    if root is not None:
        on_amd, on_nvidia = _evaluate(root, reported, names), _evaluate(root, like, names)
    if on_amd is None or on_nvidia is None:
        on_amd, on_nvidia = _evaluate(node, reported, names), _evaluate(node, like, names)
    if on_amd is None or on_nvidia is None:
        return _GENERIC_GATE
    if on_amd == on_nvidia:
        return None
    sm = f"sm_{like[0]}{like[1]}"
    return (
        f"this capability test is {on_amd} on {target.name}, where ROCm torch reports "
        f"{reported}, but {on_nvidia} on an NVIDIA GPU with the same features ({sm}-class): "
        f"it takes the path meant for {'newer' if on_amd else 'older'} NVIDIA GPUs"
    )


def _evaluate(
    node: ast.AST, cap: tuple[int, int], names: dict[str, tuple[ast.expr, int | None]]
) -> bool | None:
    """The truth of a test of capability comparisons when the GPU reports ``cap``, or None."""
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, cap, names) for v in node.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, cap, names)
        return None if value is None else not value
    if not isinstance(node, ast.Compare):
        return None
    left = _cap_value(node.left, cap, names, 0)
    if left is None:
        return None
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = _cap_value(right_node, cap, names, 0)
        fn = _CMP_OPS.get(type(op))
        if right is None or fn is None:
            return None
        try:
            if not fn(left, right):
                return False
        except TypeError:
            return None
        left = right
    return True


def _cap_value(
    node: ast.AST, cap: tuple[int, int], names: dict[str, tuple[ast.expr, int | None]], depth: int
) -> Any:
    """The value of a capability-derived expression when the GPU reports ``cap``, or None."""
    if depth > _MAX_DEPTH:
        return None
    deeper = depth + 1
    if isinstance(node, ast.Constant):
        ok = isinstance(node.value, int) and not isinstance(node.value, bool)
        return node.value if ok else None
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "int" and len(node.args) == 1:
            value = _cap_value(node.args[0], cap, names, deeper)  # int(cc[0])
            return value if isinstance(value, int) else None
        return cap if last_name(node.func) == "get_device_capability" else None
    if isinstance(node, ast.Attribute) and node.attr in ("major", "minor"):
        return cap[0] if node.attr == "major" else cap[1]
    if isinstance(node, ast.Name):
        bound = names.get(node.id)
        if bound is None:
            return None
        value = _cap_value(bound[0], cap, names, deeper)
        if bound[1] is None:
            return value
        return value[bound[1]] if isinstance(value, tuple) and bound[1] < len(value) else None
    if isinstance(node, ast.Subscript):
        base = _cap_value(node.value, cap, names, deeper)
        index = node.slice
        if isinstance(base, tuple) and isinstance(index, ast.Constant):
            i = index.value
            return base[i] if isinstance(i, int) and -len(base) <= i < len(base) else None
        return None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_cap_value(e, cap, names, deeper) for e in node.elts]
        return None if any(i is None for i in items) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN_OPS:
        a = _cap_value(node.left, cap, names, deeper)
        b = _cap_value(node.right, cap, names, deeper)
        if isinstance(a, int) and isinstance(b, int):
            try:
                return _BIN_OPS[type(node.op)](a, b)
            except ZeroDivisionError:
                return None
    return None
