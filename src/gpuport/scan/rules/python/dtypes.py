"""GP208 (FP8 flavour) and GP210 (unsigned dtypes): where a dtype is used decides the severity.

Naming a dtype is not using it. A dtype is a *compute target* where it picks
what a tensor becomes: ``x.to(X)``, a ``dtype=X`` / ``out_dtype=X`` keyword,
an argument of ``torch._scaled_mm``, ``return X``, ``name = X`` (the name is
then used that way). There GP208 keeps its severity.

GP208 stays silent where the dtype is only data: an element of a list, tuple,
set or dict literal (dtype tables, supported-dtype lists), an argument of
``torch.finfo``/``iinfo``, an operand of a comparison or ``in``. On an FNUZ
target (gfx942) it is also silent where the same function (at module level:
the module) names the matching FNUZ counterpart (``float8_e4m3fn`` next to
``float8_e4m3fnuz``): that code picks a flavour per GPU. (On an OCP target a
FNUZ type next to its OCP twin is still wrong unless the choice is arch-aware:
``fnuz if torch.version.hip else fn`` picks FNUZ on MI350 too.) Any other
mention (a positional argument of some function, ``.view(X)``) is info.
``fp8 = torch.float8_e4m3fn`` followed, in the same scope, by ``fp8 =
torch.float8_e4m3fnuz`` under an arch-aware test is the default of an
MI300-aware choice: on gfx942 the first assignment is guarded. A line gets at
most one GP208 (the most severe).

Storage and casts are not GEMMs. ROCm torch stores and converts every FP8 type on every
GPU (``x.to(torch.float8_e4m3fn)`` works on gfx942); what fails is the matrix multiply:
hipBLASLt runs ``torch._scaled_mm`` only with the flavour the GPU computes in. So a
compute-target use keeps its full severity where it may feed one: an argument of
``_scaled_mm`` (and its kin), or anywhere in a file that calls an FP8 GEMM (``_scaled_mm``,
``_scaled_grouped_mm``, Triton's ``tl.dot``/``tl.dot_scaled``) or uses the MX/FP4 scale and
element types (``float8_e8m0fnu``, ``float4_e2m1fn_x2``: MX GEMMs need gfx950). Elsewhere
it is minor: data stored or cast in FP8, which must not reach a matmul in that flavour.

GP210 is minor where the unsigned dtype is the dtype of a tensor that is
computed (``torch.zeros/ones/arange/randint/full(..., dtype=torch.uint32)``,
``.to(torch.uint32)``), info for other ``dtype=`` keywords, and no finding for
``.view(torch.uint64)`` bit-casts, ``torch.empty`` placeholders, assignments
and dtype tables.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport.models import Severity
from gpuport.scan.rules.base import FileContext
from gpuport.scan.rules.python.flow import ScanState
from gpuport.scan.rules.python.guards import ARCH, PLATFORM
from gpuport.scan.rules.python.patterns import FNUZ_FP8, UNSIGNED, fp8_leaf, last_name

_DTYPE_KEYWORDS = ("dtype", "out_dtype")
_SCALED_MM = frozenset({"_scaled_mm", "_scaled_grouped_mm", "scaled_mm", "scaled_grouped_mm"})
_INFO_FUNCS = frozenset({"finfo", "iinfo"})
# Calls whose dtype= makes a tensor whose values are computed in that dtype.
_CREATION = frozenset(
    {
        *("zeros", "ones", "full", "arange", "linspace", "randint", "randperm"),
        *("zeros_like", "ones_like", "full_like", "randint_like"),
        *("new_zeros", "new_ones", "new_full"),
    }
)
# Calls whose dtype= only reserves memory or reinterprets bits.
_PLACEHOLDERS = frozenset(
    {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "view"}
)
# An FP8 (or MX/FP4) matrix multiply in the file: casts there are likely its operands.
# (Substring tests: a regex with a look-behind took seconds over torch's larger files.)
_FP8_GEMM_WORDS = ("scaled_mm", "scaled_grouped_mm", "tl.dot", "float8_e8m0fnu", "float4_e2m1fn")
_RANK = {Severity.INFO: 0, Severity.MINOR: 1, Severity.MAJOR: 2, Severity.BLOCKER: 3}


#: decorators of a fake (meta) kernel: it allocates outputs of the right shape and dtype and
#: never computes, so an FP8 dtype there is storage that follows the real kernel
_FAKE_DECORATORS = frozenset(
    {"register_fake", "impl_abstract", "register_meta", "register_fake_class"}
)


def _fake_kernel(scope: ast.AST | None) -> bool:
    """Whether ``scope`` is a function registered as a fake/meta kernel
    (``@op.register_fake``, ``@torch.library.register_fake("ns::op")``)."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    return any(last_name(d) in _FAKE_DECORATORS for d in scope.decorator_list)


@dataclass
class _Fp8:
    node: ast.AST
    leaf: str
    guarded: bool
    severity: Severity
    scope: ast.AST | None  # the enclosing function; None at module level
    name: str | None  # the name it is assigned to, if any
    storage: bool = False  # a cast or storage use in code that runs no FP8 GEMM


def branches(expr: ast.AST) -> Iterator[ast.AST]:
    """``expr`` itself, or both arms of a (nested) ternary."""
    while isinstance(expr, ast.IfExp):
        yield from branches(expr.body)
        expr = expr.orelse
    yield expr


class DtypeRules(ScanState):
    """The dtype rules of one file's walk; GP208 findings are emitted by :meth:`finish_fp8`."""

    def __init__(self, ctx: FileContext, mask: bytearray, candidates: set[str]) -> None:
        super().__init__(ctx, mask, candidates)
        self.fp8_strong: set[int] = set()
        self.fp8_names: dict[int, str] = {}
        self.fp8_found: list[_Fp8] = []
        self.fp8_arch_assigned: dict[tuple[str, int], list[int]] = {}
        self._counterparts: dict[str, list[int]] = {}
        self.fp8_gemm: set[int] = set()  # dtype nodes that are arguments of an FP8 GEMM
        self.file_gemm = any(word in ctx.text for word in _FP8_GEMM_WORDS)

    # ---- where a dtype is used ------------------------------------------------

    def _strong(self, expr: ast.AST | None) -> None:
        if expr is not None:
            for arm in branches(expr):
                if fp8_leaf(arm):
                    self.fp8_strong.add(id(arm))

    def dtype_call(self, node: ast.Call, func: str, last: str, guard: int) -> None:
        """Note the dtype contexts of a call (runs before its arguments are walked)."""
        method = isinstance(node.func, ast.Attribute)
        if last in _INFO_FUNCS:
            self.quiet.update(id(a) for a in node.args)
        elif last in _SCALED_MM and (func.startswith("torch.") or method):
            for expr in (*node.args, *(kw.value for kw in node.keywords)):
                self._strong(expr)
                self.fp8_gemm.update(id(arm) for arm in branches(expr))
        elif last == "to" and method and node.args:
            self._strong(node.args[0])
        if method and last in ("to", "type") and node.args:
            self._unsigned(node.args[0], guard, Severity.MINOR)
        for kw in node.keywords:
            if kw.arg in _DTYPE_KEYWORDS:
                self._strong(kw.value)
                if last not in _PLACEHOLDERS:
                    sev = Severity.MINOR if last in _CREATION else Severity.INFO
                    self._unsigned(kw.value, guard, sev)

    def dtype_return(self, node: ast.Return, guard: int) -> None:
        self._strong(node.value)

    def dtype_assign(self, name: str, value: ast.expr, guard: int) -> None:
        """``name = <fp8 dtype>``: a compute target, and maybe an arch-aware reassignment."""
        arms = [arm for arm in branches(value) if fp8_leaf(arm)]
        if not arms:
            return
        for arm in arms:
            self.fp8_strong.add(id(arm))
            self.fp8_names[id(arm)] = name
        if guard & ARCH:
            key = (name, id(self.enclosing(value.lineno)))
            self.fp8_arch_assigned.setdefault(key, []).append(value.lineno)

    def dtype_table(self, items: list[ast.expr]) -> None:
        """Entries of a list/tuple/set/dict literal are data, not compute targets."""
        self.quiet.update(id(item) for item in items if fp8_leaf(item))

    # ---- GP208 -------------------------------------------------------------------

    def fp8_ref(self, node: ast.AST, leaf: str, guard: int) -> None:
        target = self.ctx.target.fp8
        fnuz = leaf in FNUZ_FP8
        if target == "fnuz" and not fnuz:
            guarded, full = bool(guard & PLATFORM), Severity.BLOCKER
        elif target == "ocp" and fnuz:
            guarded, full = bool(guard & ARCH), Severity.BLOCKER
        elif target == "none":
            guarded, full = bool(guard & (ARCH if fnuz else PLATFORM)), Severity.MAJOR
        else:
            return
        strong = id(node) in self.fp8_strong
        line = getattr(node, "lineno", 0)
        self.fp8_found.append(
            _Fp8(
                node,
                leaf,
                guarded,
                full if strong else Severity.INFO,
                self.enclosing(line),
                self.fp8_names.get(id(node)),
            )
        )

    def finish_fp8(self) -> None:
        target = self.ctx.target
        best: dict[int, tuple[tuple[int, int], _Fp8]] = {}
        for hit in self.fp8_found:
            line = getattr(hit.node, "lineno", 0)
            if not hit.guarded and hit.name is not None and target.fp8 == "fnuz":
                later = self.fp8_arch_assigned.get((hit.name, id(hit.scope)), [])
                hit.guarded = any(other > line for other in later)
            if not hit.guarded and target.fp8 == "fnuz" and self._names_counterpart(hit):
                continue
            gemm = self.file_gemm or id(hit.node) in self.fp8_gemm
            if hit.severity is not Severity.INFO and (not gemm or _fake_kernel(hit.scope)):
                hit.severity, hit.storage = Severity.MINOR, True
            rank = (0 if hit.guarded else 1, _RANK[hit.severity])
            if line not in best or rank > best[line][0]:
                best[line] = (rank, hit)
        for line in sorted(best):
            self._report_fp8(best[line][1])

    def _names_counterpart(self, hit: _Fp8) -> bool:
        """Does the function (at module level: the file) also name the FNUZ twin?"""
        other = hit.leaf + "uz"
        lines = self._counterparts.get(other)
        if lines is None:
            lines = self._counterpart_lines(other)
            self._counterparts[other] = lines
        if hit.scope is None:
            return bool(lines)
        first = getattr(hit.scope, "lineno", 0)
        last = getattr(hit.scope, "end_lineno", None) or first
        at = bisect.bisect_left(lines, first)
        return at < len(lines) and lines[at] <= last

    def _counterpart_lines(self, leaf: str) -> list[int]:
        """The lines naming ``leaf`` as a whole word (``float8_e4m3fn``, not ``..fnuz``)."""
        text = self.ctx.text
        out: list[int] = []
        line, pos = 1, 0
        at = text.find(leaf)
        while at >= 0:
            end = at + len(leaf)
            if not (end < len(text) and (text[end].isalnum() or text[end] == "_")):
                line += text.count("\n", pos, at)
                pos = at
                out.append(line)
            at = text.find(leaf, end)
        return out

    def _report_fp8(self, hit: _Fp8) -> None:
        name = self.ctx.target.name
        leaf = hit.leaf
        if self.ctx.target.fp8 == "fnuz":
            message = (
                f"`torch.{leaf}` is the OCP FP8 type; {name} only computes with the FNUZ types"
            )
            fix = (
                f"On {name} use `torch.{leaf}uz` (max 240 for e4m3, not 448), chosen "
                "per GPU: e.g. `torch.float8_e4m3fnuz if 'gfx94' in "
                "torch.cuda.get_device_properties(0).gcnArchName else torch.float8_e4m3fn`."
            )
        elif self.ctx.target.fp8 == "ocp":
            message = f"`torch.{leaf}` is the MI300 (FNUZ) FP8 type; {name} uses the OCP types"
            fix = (
                f"On {name} use `torch.{leaf[:-2]}`; pick FNUZ only when "
                "gcnArchName starts with gfx94."
            )
        else:
            message = f"`torch.{leaf}`: {name} has no FP8 hardware"
            fix = (
                f"Keep an fp16/bf16 path for {name}; FP8 needs gfx942 (FNUZ) or gfx950/gfx12 (OCP)."
            )
        if hit.severity is Severity.INFO:
            message += " (named here, not computed with)"
        elif hit.storage:
            message += (
                " (stored or cast here, which works on every ROCm GPU; this file runs no FP8 "
                "GEMM, and one with this type would fail)"
            )
        self.report(
            "GP208",
            hit.node,
            guarded=hit.guarded,
            severity=hit.severity,
            message=message,
            fix=fix,
        )

    # ---- GP210 -------------------------------------------------------------------

    def _unsigned(self, node: ast.AST | None, guard: int, severity: Severity) -> None:
        """GP210 where a tensor is made or cast to an unsigned dtype."""
        dotted = self.aliases.dotted(node) if node is not None else None
        if node is not None and dotted and dotted[:6] == "torch." and dotted[6:] in UNSIGNED:
            computed = severity is not Severity.INFO
            self.report(
                "GP210",
                node,
                guarded=bool(guard & PLATFORM),
                severity=severity,
                message=f"`{dotted}` is not natively supported on ROCm"
                + ("" if computed else f" (`{last_name(node)}` named here, not computed with)"),
            )
