"""GP4xx on setup.py, read with :mod:`ast` only: never executed or imported.

Simple assignments (``NVCC_FLAGS = [...]``, ``.append``, ``+=``) are followed
so that flags kept in a variable are found where they are written; ``if``
blocks that test ROCm/HIP make the findings inside them guarded.
"""

from __future__ import annotations

import ast

from gpuport import pyparse, textre
from gpuport.models import Severity
from gpuport.scan.project.build_rocm_value import rocm_value
from gpuport.scan.rules.base import FileContext, FileKind, checker
from gpuport.scan.rules.build.common import (
    ARCH_ASSIGN,
    ARCH_VAR,
    CUDA_LIB_NAMES,
    HALF_MACRO,
    LINK,
    NVCC_ONLY,
    ROCM_ARCH,
    ROCM_COND,
    SM_TOKEN,
    Guards,
    flag_fix,
    flag_severity,
    lib_fix,
    lists_arch,
)
from gpuport.scan.rules.build.generated import check_setup_generators

_ARG_KWS = {
    "extra_compile_args",
    "extra_cuda_cflags",
    "extra_cflags",
    "extra_link_args",
    "extra_ldflags",
    "libraries",
    "define_macros",
    "undef_macros",
}
_CU_SOURCE = textre.compile(r"\.(cu|cuh)$")


class _SetupPy:
    """What setup.py says about its extensions, read from the syntax tree only."""

    def __init__(self, ctx: FileContext, tree: ast.Module) -> None:
        self.ctx = ctx
        self.values: dict[str, list[ast.expr]] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self.guards = Guards()
        self.seen: set[tuple[str, int, int]] = set()
        # nodes all strings() calls may visit: each call follows its names afresh, so a
        # chain of names each used once (`s2 = s1 + [...]`) was quadratic (twelfth re-run:
        # 100 KB, 22 s); past this the file is said to be not fully judged
        self.left = 4 * len(ctx.text) + 100_000
        for node in pyparse.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            self._collect(node)

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for tgt in node.targets:
                if isinstance(tgt, ast.Name):
                    self.values.setdefault(tgt.id, []).append(node.value)
                elif isinstance(tgt, ast.Subscript) and isinstance(tgt.value, ast.Name):
                    self.values.setdefault(tgt.value.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                self.values.setdefault(node.target.id, []).append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in ("append", "extend", "insert", "update")
        ):
            self.values.setdefault(node.func.value.id, []).extend(node.args)
        elif isinstance(node, ast.If | ast.IfExp) and _mentions_rocm(node.test):
            end = node.end_lineno or node.lineno
            self.guards.ranges.append((node.lineno, end))

    def strings(self, expr: ast.AST) -> list[ast.Constant]:
        """String constants an expression can evaluate to, following simple names.

        Each node is visited and each name expanded once per call, so alias cycles, chains
        and ``S = S + S`` repeated stay linear (eighteenth re-run: every use of a name pushed
        all of its values again, 100 KB 18 s and 486 MB).
        """
        out: list[ast.Constant] = []
        stack, seen, names = [expr], set(), set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.left -= 1
            if self.left < 0:
                raise ValueError("its names stand for more values than its size allows")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node)
            elif isinstance(node, ast.List | ast.Tuple | ast.Set):
                stack.extend(node.elts)
            elif isinstance(node, ast.Dict):
                stack.extend(node.values)
            elif isinstance(node, ast.BinOp):
                stack.extend([node.left, node.right])
            elif isinstance(node, ast.IfExp):
                stack.extend([node.body, node.orelse])
            elif isinstance(node, ast.Starred):
                stack.append(node.value)
            elif isinstance(node, ast.Name) and node.id not in names:
                names.add(node.id)
                stack.extend(self.values.get(node.id, []))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                stack.extend([node.func.value] if node.func.attr == "split" else [])
            elif isinstance(node, ast.Call) and _call_name(node) in ("dict", "list", "tuple"):
                stack.extend([*node.args, *(k.value for k in node.keywords)])
        return sorted(out, key=lambda c: (c.lineno, c.col_offset))

    def report(
        self,
        rule: str,
        node: ast.Constant,
        token: str,
        message: str,
        fix: str | None = None,
        severity: Severity | None = None,
        *,
        guarded: bool = False,
    ) -> None:
        line, col = _token_pos(self.ctx, node, token)
        # One GP407 a line: ["-lcudart", "-lcublas"] is one link step to port.
        key = (rule, line, 0 if rule == "GP407" else col)
        if key in self.seen:
            return
        self.seen.add(key)
        self.ctx.report(
            rule,
            line,
            col,
            message=message,
            fix=fix,
            guarded=guarded or line in self.guards,
            severity=severity,
        )


def _mentions_rocm(test: ast.expr) -> bool:
    words: list[str] = []
    for node in pyparse.walk(test):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)
    return bool(ROCM_COND.search(" ".join(words)))


def _token_pos(ctx: FileContext, node: ast.Constant, token: str) -> tuple[int, int]:
    """The physical line and 1-based column of ``token`` inside a string literal."""
    first = node.lineno
    last = node.end_lineno or first
    raw = ctx.line_text(first).encode("utf-8")[: node.col_offset]
    start_col = len(raw.decode("utf-8", errors="replace"))
    for line in range(first, last + 1):
        text = ctx.line_text(line)
        idx = text.find(token, start_col if line == first else 0)
        if idx >= 0:
            return line, idx + 1
    return first, start_col + 1


def _names(node: ast.AST) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in pyparse.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    }


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _check_tokens(sp: _SetupPy, const: ast.Constant, rocm_arch: bool, in_args: bool) -> None:
    value = str(const.value)
    if not in_args and (not value.strip() or any(c.isspace() for c in value.strip())):
        return  # outside compile args, only single-token strings are read as flags
    target = sp.ctx.target.name
    for m in NVCC_ONLY.finditer(value):
        sp.report(
            "GP402",
            const,
            m.group(1),
            message=f"nvcc-only flag {m.group(1)}",
            fix=flag_fix(m.group(1), target),
            severity=flag_severity(m.group(1)),
        )
    if (
        not rocm_arch
        and (arch := _arch_token(sp, const))
        and (in_args or not _names_an_arch(sp, const))
    ):
        # torch's ROCm build never reads TORCH_CUDA_ARCH_LIST (PYTORCH_ROCM_ARCH, else the GPUs
        # it finds): nothing breaks, the advice stays (issue 24, eleventh: Pointnet2_PyTorch)
        torch_list = arch == "TORCH_CUDA_ARCH_LIST"
        sp.report(
            "GP403",
            const,
            arch,
            message=f"{arch}: NVIDIA architectures only, no PYTORCH_ROCM_ARCH here"
            + (
                "; torch's ROCm build ignores it and builds for PYTORCH_ROCM_ARCH or the GPUs "
                "it finds"
                if torch_list
                else ""
            ),
            fix=f"Set PYTORCH_ROCM_ARCH={target} for the ROCm build.",
            severity=Severity.INFO if torch_list else None,
        )
    for m in HALF_MACRO.finditer(value):
        sp.report("GP406", const, m.group(0), message=f"{m.group(0)} is remapped on ROCm")
    for m in LINK.finditer(value):
        name = m.group(1) or m.group(2) or m.group(3)
        sp.report(
            "GP407",
            const,
            m.group(0),
            message=f"links NVIDIA library {m.group(0)}",
            fix=lib_fix(name),
        )
    if in_args and value in CUDA_LIB_NAMES:
        sp.report(
            "GP407", const, value, message=f"links NVIDIA library {value}", fix=lib_fix(value)
        )


def _arch_token(sp: _SetupPy, const: ast.Constant) -> str | None:
    """The NVIDIA architecture token in a string: sm_80, NAME=8.0, or an arch variable's name
    where it is given a value that lists architectures (not where it is only read)."""
    value = str(const.value)
    if m := SM_TOKEN.search(value):
        return m.group(0)
    for m in ARCH_ASSIGN.finditer(value):
        if lists_arch(m.group(2)):
            return m.group(1)
    if ARCH_VAR.fullmatch(value) and any(lists_arch(str(c.value)) for c in _arch_values(sp, const)):
        return value
    return None


def _names_an_arch(sp: _SetupPy, const: ast.Constant) -> bool:
    """A bare ``sm_90a`` that is a name in a lookup table or a comparison, not a flag: the
    string sits (through tuples, lists, sets) in a dict's value or key, or in a ``==``/``in``
    test, before any call or assignment takes it (torch-harmonics' alias table of the names a
    user may write in TORCH_CUDA_ARCH_LIST, issue 24's twelfth sample). A list assigned to a
    name and formatted into flags later stays a flag list."""
    if not SM_TOKEN.fullmatch(str(const.value).strip()):
        return False
    node: ast.AST = const
    while (parent := sp.parents.get(node)) is not None:
        if isinstance(parent, ast.Tuple | ast.List | ast.Set):
            node = parent
            continue
        if isinstance(parent, ast.Compare):
            return True
        # a dict of flags per compiler ({'nvcc': ['-arch', 'sm_80']}) is no table of names
        return (
            isinstance(parent, ast.Dict)
            and not any(
                isinstance(k, ast.Constant) and str(k.value) in _COMPILER_KEYS for k in parent.keys
            )
            and not any(
                isinstance(c, ast.Constant) and str(c.value).startswith("-") for c in ast.walk(node)
            )
        )
    return False


_COMPILER_KEYS = frozenset({"nvcc", "cxx", "cc", "c", "gcc", "g++", "hipcc", "clang", "nvcc_dlink"})


def _arch_values(sp: _SetupPy, const: ast.Constant) -> list[ast.Constant]:
    """What an arch variable named by ``const`` is set to (or defaults to)."""
    parent = sp.parents.get(const)
    if isinstance(parent, ast.Subscript) and parent.slice is const:
        assign = sp.parents.get(parent)  # os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"
        if isinstance(assign, ast.Assign) and parent in assign.targets:
            return sp.strings(assign.value)
    elif isinstance(parent, ast.Call) and len(parent.args) > 1 and parent.args[0] is const:
        return sp.strings(parent.args[1])  # setdefault / putenv / get with a default
    elif isinstance(parent, ast.Dict):
        for key, val in zip(parent.keys, parent.values, strict=True):
            if key is const:
                return sp.strings(val)  # env={"TORCH_CUDA_ARCH_LIST": "8.0"}
    return []


def _is_nvcc_use(sp: _SetupPy, const: ast.Constant) -> bool:
    value = str(const.value)
    if value != "nvcc" and not value.endswith("/nvcc"):
        return False
    parent = sp.parents.get(const)
    if isinstance(parent, ast.Dict) and any(k is const for k in parent.keys):
        return False
    if isinstance(parent, ast.Subscript | ast.Compare):
        return False
    return not (isinstance(parent, ast.Call) and _call_name(parent) in ("get", "setdefault", "pop"))


@checker(FileKind.SETUP_PY)
def check_setup_py(ctx: FileContext) -> None:
    try:
        tree = pyparse.parse(ctx.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        if ctx.skip_reason is None:
            why = getattr(exc, "msg", None) or exc
            ctx.skip_reason = (
                str(why) if isinstance(exc, pyparse.TooLarge) else f"invalid Python: {why}"
            )
        return
    check_setup_generators(ctx, tree)
    sp = _SetupPy(ctx, tree)
    try:
        _check_setup_nodes(ctx, tree, sp)
    except ValueError as exc:
        ctx.skip_reason = f"setup.py judged only in part: {exc}"


def _check_setup_nodes(ctx: FileContext, tree: ast.Module, sp: _SetupPy) -> None:
    names = _names(tree)
    # each string as the quoted text it is: "gfx942 is not supported" is a sentence, not a
    # target (forty-second re-run F18, in setup.py)
    rocm_arch = bool(ROCM_ARCH.search(" ".join(names))) or any(
        ROCM_ARCH.search(f'"{c}"') for c in _consts(tree) if "gfx" in c or "rocm" in c.lower()
    )
    uses_build_ext = "BuildExtension" in names
    in_args: set[int] = set()
    for node in pyparse.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in _ARG_KWS:
                    for const in sp.strings(kw.value):
                        in_args.add(id(const))
                        _check_tokens(sp, const, rocm_arch, in_args=True)
            _check_extension_call(sp, node, uses_build_ext)
        elif _is_name(node, "CUDAExtension") and not _is_callee(sp, node):
            _report_node(sp, "GP404", node, "CUDAExtension is hipified and built with hipcc")
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            test = node.test
            if (
                "CUDA_HOME" in _names(test) | _consts(test)
                and not _mentions_rocm(test)
                and not _cuda_only_test(test)
            ):
                _report_node(sp, "GP409", test, "the GPU build depends on CUDA_HOME only")
    for node in pyparse.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (id(node) not in in_args)
        ):
            _check_tokens(sp, node, rocm_arch, in_args=False)
            if _is_nvcc_use(sp, node):
                probe = _fallback_try(sp, node)
                message = "setup.py looks for or runs nvcc"
                if probe is not None:
                    message += (
                        f", inside a try whose `except` (line {probe}) falls back: "
                        "a probe, not a build requirement"
                    )
                sp.report(
                    "GP408", node, str(node.value), message=message, guarded=probe is not None
                )


#: exceptions a failed nvcc probe raises (no nvcc: OSError/FileNotFoundError; a failing run:
#: CalledProcessError), and the broad ones that include them
_PROBE_ERRORS = frozenset(
    {
        "Exception",
        "BaseException",
        "OSError",
        "FileNotFoundError",
        "EnvironmentError",
        "IOError",
        "CalledProcessError",
        "SubprocessError",
    }
)


def _fallback_try(sp: _SetupPy, node: ast.AST) -> int | None:
    """The line of the ``except`` that catches a failed nvcc run around ``node`` and goes
    on (returns, assigns a default) instead of raising or exiting; None when there is none.
    ``try: subprocess.check_output(["nvcc", "--version"]) except: return None`` probes for
    nvcc; without such a handler the call is a hard requirement."""
    child, parent = node, sp.parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.Module):
        if isinstance(parent, ast.Try) and any(child is stmt for stmt in parent.body):
            for handler in parent.handlers:
                if _catches_probe(handler.type) and not _stops(handler):
                    return handler.lineno
        child, parent = parent, sp.parents.get(parent)
    return None


def _catches_probe(kind: ast.expr | None) -> bool:
    if kind is None:  # a bare `except:`
        return True
    kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    for k in kinds:
        name = k.attr if isinstance(k, ast.Attribute) else getattr(k, "id", "")
        if name in _PROBE_ERRORS:
            return True
    return False


def _stops(handler: ast.ExceptHandler) -> bool:
    """Whether the handler raises or exits, which makes nvcc a requirement after all."""
    for n in pyparse.walk(handler):
        if isinstance(n, ast.Raise):
            return True
        if isinstance(n, ast.Call) and _call_name(n) in ("exit", "_exit", "abort"):
            return True
    return False


def _cuda_only_test(test: ast.expr) -> bool:
    """``CUDA_HOME is None and torch.version.cuda``: another operand of the ``and`` is false
    on a ROCm build, so the test is about the CUDA build alone and gates nothing on ROCm.
    (``CUDA_HOME`` itself is unset on ROCm, which is what GP409 is about.)"""
    return isinstance(test, ast.BoolOp) and (
        isinstance(test.op, ast.And)
        and any(
            rocm_value(v) is False and "CUDA_HOME" not in _names(v) | _consts(v)
            for v in test.values
        )
    )


def _is_name(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (
        isinstance(node, ast.Attribute) and node.attr == name
    )


def _is_callee(sp: _SetupPy, node: ast.AST) -> bool:
    parent = sp.parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _consts(node: ast.AST) -> set[str]:
    return {
        n.value
        for n in pyparse.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _report_node(
    sp: _SetupPy, rule: str, node: ast.AST, message: str, *, guarded: bool = False
) -> None:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    raw = sp.ctx.line_text(line).encode("utf-8")[:col]
    column = len(raw.decode("utf-8", errors="replace")) + 1
    if (rule, line, column) not in sp.seen:
        sp.seen.add((rule, line, column))
        sp.ctx.report(rule, line, column, message=message, guarded=guarded or line in sp.guards)


def _off_on_rocm(sp: _SetupPy, node: ast.AST) -> int | None:
    """The line of an ``if`` around ``node`` whose branch a ROCm build does not take
    (``if "CUDA_HOME" in os.environ:``: a ROCm machine sets no CUDA_HOME), else None."""
    child, parent = node, sp.parents.get(node)
    while parent is not None and not isinstance(parent, ast.FunctionDef | ast.Module):
        if isinstance(parent, ast.If):
            value = rocm_value(parent.test)
            if (value is False and child in parent.body) or (
                value is True and child in parent.orelse
            ):
                return parent.lineno
        child, parent = parent, sp.parents.get(parent)
    return None


def _check_extension_call(sp: _SetupPy, call: ast.Call, uses_build_ext: bool) -> None:
    name = _call_name(call)
    if name not in ("CUDAExtension", "CppExtension", "Extension"):
        return
    src_expr: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "sources":
            src_expr = kw.value
    sources = [str(c.value) for c in sp.strings(src_expr)] if src_expr is not None else []
    cu = [s for s in sources if _CU_SOURCE.search(s)]
    if name == "CUDAExtension":
        shown = f" ({', '.join(cu[:3])}{'...' if len(cu) > 3 else ''})" if cu else ""
        _report_node(
            sp,
            "GP404",
            call.func,
            f"CUDAExtension{shown}: hipified and built with hipcc on ROCm torch; "
            "check the kernels with the GP3xx rules",
        )
    elif cu and (name == "CppExtension" or uses_build_ext):
        message = f"{name} with CUDA sources ({', '.join(cu[:3])}) is not hipified on ROCm"
        off = _off_on_rocm(sp, call)
        if off is not None:  # the build does not fail there: it leaves the extension out
            message += f" (built only where line {off}'s test holds, which a ROCm build skips)"
        _report_node(sp, "GP405", call.func, message, guarded=off is not None)
