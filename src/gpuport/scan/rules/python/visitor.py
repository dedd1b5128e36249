"""The one walk over a Python file's ``ast`` that feeds every GP2xx rule.

Cost model: the checker in :mod:`gpuport.scan.rules.python.checker` has already run a
regex of trigger words over the text and marked the lines that contain one.
The walk only enters nodes whose line range holds a marked line (a C-level
``bytearray.find``), so a 5,000-line file with three trigger lines costs a few
hundred node visits, not fifty thousand. Lines that become interesting during
the walk (a name bound to ``get_device_capability()``, a local alias of
``cpp_extension.load``) are marked as they are found; the walk goes in source
order, so later uses are seen. The walk is iterative (no recursion limit on
deeply nested expressions) and each node is visited once, by one dispatcher.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from gpuport import textre
from gpuport.knowledge import PackageInfo
from gpuport.models import Severity
from gpuport.scan.rules.base import OTHER_VENDOR, FileContext
from gpuport.scan.rules.python.dtypes import DtypeRules
from gpuport.scan.rules.python.guards import IMPORT, LAZY, PLATFORM, SUBPROC, word_parts
from gpuport.scan.rules.python.native import NativeRules, is_triton_asm
from gpuport.scan.rules.python.patterns import (
    BAD_DEVICE,
    CUDA_ENV,
    DEVICE_FUNCS,
    DEVICE_KEYWORDS,
    DEVICE_METHODS,
    ENV_KEYS,
    EXTENSION_FUNCS,
    FP8,
    GRAPH_COMPILE_MODES,
    GRAPH_REFS,
    NVIDIA_SMI_CMD,
    NVML_MODULES,
    NVTX_MODULES,
    ORT_CUDA,
    ORT_ROCM,
    PRESENCE_PARTS,
    REDUCED_PRECISION,
    SKIP_FUNCS,
    alias_worthy,
    call_arg,
    is_boolish,
    last_name,
    reported_package,
    str_value,
)
from gpuport.scan.rules.python.scope import DEFS, Frame

#: Calls that only ask whether an executable or file is there (``shutil.which``,
#: ``os.path.exists``): on an AMD host they answer None/False and run nothing. Such a probe
#: for ``nvidia-smi`` is still GP204 (it tells "no GPU" on an AMD host) unless the same
#: function probes for the AMD side too (``rocm``/``amd-smi``/``hip`` names or strings):
#: then it tells the vendors apart, like a ``torch.version.hip`` sibling branch.
_MIGRAPHX = "MIGraphXExecutionProvider"
ORT_AMD = frozenset({ORT_ROCM, _MIGRAPHX})
AMD_PROBE = textre.compile(r"rocm|amd-smi|rocminfo|(?<![a-z])hip(?![a-z])", re.I)
PRESENCE_PROBES = frozenset({"which", "find_executable", "exists", "isfile", "lexists"})

IMPORTS = (ast.Import, ast.ImportFrom)


class PythonScan(DtypeRules, NativeRules):
    """One file's walk; :meth:`run` walks the tree and reports through ``ctx``.

    ``candidates`` are the names :func:`~gpuport.scan.rules.python.scope.guard_names`
    found assigned on lines with a platform word (possible flag variables).
    """

    def __init__(self, ctx: FileContext, mask: bytearray, candidates: set[str]) -> None:
        super().__init__(ctx, mask, candidates)
        self.env_writes: dict[str, list[tuple[int, int, bool]]] = {}
        self.imports_seen: dict[tuple[str, bool], bool] = {}  # -> whether only lazily so far
        self.torch_nvtx_seen = False
        self._amd_probe: dict[int, bool] = {}  # function id -> it probes for ROCm/AMD too
        self.legacy_rocm: set[int] = set()  # ROCMExecutionProvider beside MIGraphX's
        self.handlers: dict[type[ast.AST], Callable[[Any, int], None]] = {
            ast.Import: self._import,
            ast.ImportFrom: self._import,
            ast.Call: self._call,
            ast.Attribute: self._ref,
            ast.Name: self._ref,
            ast.Constant: self._constant,
            ast.Compare: self._compare,
            ast.BoolOp: self._bool_root,
            ast.Assign: self._assign,
            ast.AnnAssign: self._assign,
            ast.AugAssign: self._assign,
            ast.Dict: self._dict,
            ast.Tuple: self._collection,
            ast.List: self._collection,
            ast.Set: self._collection,
            ast.If: self._branch_test,
            ast.IfExp: self._branch_test,
            ast.While: self._branch_test,
            ast.For: self._for,
            ast.AsyncFor: self._for,
            ast.comprehension: self._for,
            ast.FunctionDef: self._function,
            ast.AsyncFunctionDef: self._function,
            ast.Return: self.dtype_return,
            ast.ClassDef: self._class,
        }

    def run(self, tree: ast.Module) -> None:
        self.tree = tree
        self.scope.prepare(tree, self.ctx.root, self.ctx.rel)
        stack: list[Frame] = [(tree, 0)]
        find = self.mask.find
        handlers = self.handlers
        children = self.scope.children
        while stack:
            node, guard = stack.pop()
            lineno = getattr(node, "lineno", None)
            if lineno is not None and not isinstance(node, IMPORTS):  # imports bind aliases
                end = getattr(node, "end_lineno", None) or lineno
                if isinstance(node, DEFS) and node.decorator_list:
                    lineno = node.decorator_list[0].lineno  # decorators sit above ``def``
                if find(1, lineno, end + 1) < 0:
                    continue
            handler = handlers.get(type(node))
            if handler is not None:
                handler(node, guard)
            stack.extend(reversed(children(node, guard)))
        self._finish()
        # The handler table makes this object a reference cycle: let go of the tree now,
        # not at the next garbage collection (a retained tree slows every later parse).
        self.tree = None
        self.scope.tree = None
        self.functions.clear()
        self.handlers.clear()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, guard: int) -> None:
        self.enter_function(node)

    def _import(self, node: ast.Import | ast.ImportFrom, guard: int) -> None:
        bound = self.aliases.add_import(node)
        self.mark_names({local for local, dotted in bound if alias_worthy(dotted, local)})
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return
            for alias in node.names:
                dotted = node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                self._imported(dotted, alias, guard)
        else:
            for alias in node.names:
                self._imported(alias.name, alias, guard)

    def _imported(self, dotted: str, where: ast.AST, guard: int) -> None:
        """Report an import once per file, package and guard state (a file depends on it).

        An import inside a function is lazy (an optional path): GP201 is major there,
        and a later module-level import of the same package is still reported.
        """
        top = dotted.split(".", 1)[0]
        if top in self.ctx.own.packages:
            return  # the project's own code, not a dependency (see gpuport.scan.project.own_names)
        line = getattr(where, "lineno", None)
        # A suppressed import must not count as "seen": it would hide the next one.
        quiet = self.ctx.suppressed
        guarded = bool(guard & (PLATFORM | IMPORT)) or id(where) in self.scope.probed
        lazy = bool(guard & LAZY)
        seen = self.imports_seen
        if top in NVML_MODULES:
            if (top, guarded) not in seen and not quiet("GP203", line):
                seen[(top, guarded)] = lazy
                self.report(
                    "GP203",
                    where,
                    guarded=guarded,
                    message=f"`{top}` reads NVIDIA's NVML, which does not exist on an AMD GPU host",
                )
            return
        if top in NVTX_MODULES:
            if (top, guarded) not in seen and not quiet("GP217", line):
                seen[(top, guarded)] = lazy
                self.report(
                    "GP217",
                    where,
                    guarded=guarded,
                    message="the third-party `nvtx` package only talks to NVIDIA's NVTX",
                )
            return
        pkg = self.ctx.packages.by_import(dotted)
        if pkg is None or not reported_package(pkg):
            return
        key = (pkg.name, guarded)
        if key in seen and (lazy or not seen[key]):
            return
        if quiet("GP201" if pkg.status == "no" else "GP202", line):
            return
        seen[key] = lazy
        self._package_finding(dotted, pkg, where, guarded, lazy)

    def _package_finding(
        self, dotted: str, pkg: PackageInfo, where: ast.AST, guarded: bool, lazy: bool
    ) -> None:
        how = pkg.route.how
        longest = sorted(pkg.imports, key=len, reverse=True)
        dotted = next((i for i in longest if dotted == i or dotted.startswith(i + ".")), dotted)
        if pkg.status == "no" and pkg.category == OTHER_VENDOR:
            self.report(  # Intel XPU, Gaudi ...: a third vendor's path, not a CUDA one
                "GP201",
                where,
                guarded=guarded,
                severity=Severity.INFO,
                fix="Nothing to port: keep it on its own vendor's code path.",
                message=f"`{dotted}` comes from {pkg.name}, another vendor's accelerator stack "
                f"({pkg.summary}); the project runs on CUDA without it, so on ROCm too",
            )
        elif pkg.status == "no":
            self.report(
                "GP201",
                where,
                guarded=guarded,
                severity=Severity.MAJOR if lazy else None,
                fix=how,
                message=f"`{dotted}` comes from {pkg.name}, which has no ROCm build: {pkg.summary}"
                + (" (imported lazily, inside a function)" if lazy else ""),
            )
        else:
            state = (
                "works only in part" if pkg.status == "partial" else "needs a ROCm-specific install"
            )
            self.report(
                "GP202",
                where,
                guarded=guarded,
                fix=how,
                message=f"`{dotted}` comes from {pkg.name}, which {state} on ROCm: {how}",
            )

    def _ref(self, node: ast.Attribute | ast.Name, guard: int) -> None:
        if isinstance(node, ast.Name):
            dotted = self.aliases.names.get(node.id)
            if dotted is None:
                return
        else:
            found = self.aliases.dotted(node)
            if found is None:
                return
            dotted = found
        head, _, leaf = dotted.rpartition(".")
        if head == "torch" and leaf in FP8 and id(node) not in self.quiet:
            self.fp8_ref(node, leaf, guard)
        if dotted in GRAPH_REFS:
            self.report(
                "GP215",
                node,
                guarded=bool(guard & PLATFORM),
                message=f"`{dotted}` captures a CUDA graph, which is a hipGraph on ROCm",
            )
        elif dotted == "torch.cuda.nvtx" and not self.torch_nvtx_seen:
            self.torch_nvtx_seen = True
            self.report(
                "GP217",
                node,
                guarded=bool(guard & PLATFORM),
                severity=Severity.INFO,
                message="`torch.cuda.nvtx` ranges become rocTX ranges on ROCm "
                "(domains, categories and colours are ignored)",
                fix="Nothing to change; view the ranges with rocprofv3 --marker-trace.",
            )

    def _call(self, node: ast.Call, guard: int) -> None:
        func = self.aliases.dotted(node.func) or ""
        last = last_name(node.func)
        guarded = bool(guard & PLATFORM)
        if last in PRESENCE_PROBES and self.functions and self._probes_amd(self.functions[-1]):
            self.quiet.update(id(a) for a in node.args)  # NVIDIA and AMD probed side by side
        if last == "import_module":
            name = str_value(call_arg(node, 0, "name"))
            if name:
                self._imported(name, node, guard)
        elif last.startswith("nvmlInit"):
            self.report(
                "GP203",
                node,
                guarded=guarded,
                message=f"`{last}()` starts NVML, which fails on AMD GPUs",
            )
        elif func in EXTENSION_FUNCS:
            self.extension(node, func, guarded)
        elif is_triton_asm(func):
            self.inline_asm(node, guarded)
        elif func == "torch.compile":
            mode = call_arg(node, None, "mode")
            if str_value(mode) in GRAPH_COMPILE_MODES and mode is not None:
                self.report(
                    "GP215",
                    mode,
                    guarded=guarded,
                    message=f'torch.compile(mode="{str_value(mode)}") records CUDA graphs, '
                    "which are hipGraphs on ROCm",
                )
        elif last in SKIP_FUNCS and node.args:
            self._cuda_version_presence(node.args[0], guard)
        elif last in ("startswith", "endswith"):
            self._sm_startswith(node, guard)
        method = isinstance(node.func, ast.Attribute) and last in DEVICE_METHODS
        if func in DEVICE_FUNCS or method:
            self._device_string(node.args[0] if node.args else None)
        self.dtype_call(node, func, last, guard)
        for kw in node.keywords:
            if kw.arg in DEVICE_KEYWORDS:
                self._device_string(kw.value)
            elif kw.arg in ENV_KEYS:
                self._env_write(kw.arg, kw, guard)
        if last in ("setdefault", "putenv", "setenv") and node.args:
            key = str_value(node.args[0])
            if key in ENV_KEYS and key is not None:
                self._env_write(key, node.args[0], guard)

    def _probes_amd(self, func: ast.AST) -> bool:
        """Whether ``func`` also looks for ROCm/AMD (cached per function)."""
        key = id(func)
        if key not in self._amd_probe:
            self._amd_probe[key] = any(
                (
                    (
                        isinstance(n, ast.Constant)
                        and isinstance(n.value, str)
                        and len(n.value) < 200
                    )
                    and AMD_PROBE.search(n.value) is not None
                )
                or (isinstance(n, ast.Name) and AMD_PROBE.search(n.id) is not None)
                or (isinstance(n, ast.Attribute) and AMD_PROBE.search(n.attr) is not None)
                for n in ast.walk(func)
            )
        return self._amd_probe[key]

    def _device_string(self, node: ast.AST | None) -> None:
        text = str_value(node)
        if text is None and isinstance(node, ast.JoinedStr) and node.values:
            head = str_value(node.values[0])
            text = head.rstrip(":") if head and head.endswith(":") else None
        if node is not None and text is not None and BAD_DEVICE.fullmatch(text.strip()):
            self.report(
                "GP207",
                node,
                guarded=False,
                message=f'"{text}" is not a torch device type; ROCm GPUs are "cuda" devices',
            )

    def _constant(self, node: ast.Constant, guard: int) -> None:
        value = node.value
        if not isinstance(value, str) or id(node) in self.quiet or len(value) > 200:
            return
        guarded = bool(guard & PLATFORM)
        if "nvidia-smi" in value and NVIDIA_SMI_CMD.fullmatch(value) and id(node) not in self.quiet:
            caught = not guard & PLATFORM and guard & SUBPROC
            self.report(
                "GP204",
                node,
                guarded=bool(guard & (PLATFORM | SUBPROC)),
                message="runs `nvidia-smi`, which does not exist on an AMD GPU host"
                + (
                    "; its failure is caught, so there the program goes on without what it reports"
                    if caught
                    else ""
                ),
            )
        elif value in ORT_CUDA and id(node) not in self.quiet:
            self.report(
                "GP213",
                node,
                guarded=guarded,
                message=f"ONNX Runtime's {value} is NVIDIA-only; on ROCm the session "
                "silently falls back to the CPU",
            )
        elif value == ORT_ROCM:
            # the same table offers the rule's own advice beside it (facefusion's provider
            # map: 'rocm' and 'migraphx'; issue 24, twenty-second sample): a legacy choice,
            # not a blocker of the AMD path
            both = id(node) in self.legacy_rocm
            self.report(
                "GP214",
                node,
                guarded=both,
                message="ROCMExecutionProvider was removed from ONNX Runtime (1.23+)"
                + ("; the same table offers MIGraphXExecutionProvider" if both else ""),
            )
        elif value == "bfx9":
            self.report(
                "GP209",
                node,
                guarded=guarded,
                message='fp32_precision "bfx9" is NVIDIA-only and raises on ROCm',
            )

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, guard: int) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        guarded = bool(guard & PLATFORM)
        names: set[str] = set()
        for target in targets:
            elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            names.update(e.id for e in elts if isinstance(e, ast.Name))
            if isinstance(target, ast.Subscript):
                key = str_value(target.slice)
                if key in ENV_KEYS and key is not None:
                    self._env_write(key, target, guard)
            elif isinstance(target, ast.Attribute) and value is not None:
                self._setting(target, value, guarded)
        if value is None or isinstance(node, ast.AugAssign):
            return
        if len(names) == 1 and len(targets) == 1 and isinstance(targets[0], ast.Name):
            self.dtype_assign(targets[0].id, value, guard)
        if (
            names
            and not self.flow_assign(names, value, list(targets))
            and is_boolish(value)
            and any(PRESENCE_PARTS & set(word_parts(n)) for n in names)
        ):
            self._cuda_version_presence(value, guard)

    def _setting(self, target: ast.Attribute, value: ast.expr, guarded: bool) -> None:
        if target.attr in REDUCED_PRECISION and not (
            isinstance(value, ast.Constant) and value.value is False
        ):
            self.report(
                "GP209",
                target,
                guarded=guarded,
                message=f"`{target.attr}` is not supported on ROCm",
            )
        elif (
            isinstance(value, ast.Constant)
            and value.value is True
            and _is_cudnn_benchmark(self.aliases.dotted(target) or "")
        ):
            self.report(
                "GP216",
                target,
                guarded=guarded,
                message="cudnn.benchmark=True makes MIOpen run an exhaustive find for every "
                "new input shape on ROCm",
            )

    def _provider_table(self, items: list[ast.expr]) -> None:
        """A table that names an AMD ONNX Runtime provider beside NVIDIA's (a provider
        ``Enum``, a preference list): ORT uses the first one that is available, so on ROCm
        the CUDA entry is skipped, not a fallback to the CPU (GP213)."""
        names = {id(n): str_value(n) for n in items if isinstance(n, ast.Constant)}
        if any(v in ORT_AMD for v in names.values()):
            self.quiet.update(k for k, v in names.items() if v in ORT_CUDA)
        if _MIGRAPHX in names.values():  # the ROCm provider offered beside its successor
            self.legacy_rocm.update(k for k, v in names.items() if v == ORT_ROCM)

    def _class(self, node: ast.ClassDef, guard: int) -> None:
        self._provider_table(
            [s.value for s in node.body if isinstance(s, ast.Assign | ast.AnnAssign) and s.value]
        )

    def _dict(self, node: ast.Dict, guard: int) -> None:
        self._provider_table([k for k in node.keys if k is not None] + node.values)
        for key in node.keys:
            name = str_value(key)
            if name in ENV_KEYS and name is not None and key is not None:
                self._env_write(name, key, guard)
        self.dtype_table([k for k in node.keys if k is not None] + node.values)

    def _collection(self, node: ast.Tuple | ast.List | ast.Set, guard: int) -> None:
        self._provider_table(node.elts)
        self.dtype_table(node.elts)

    def _env_write(self, key: str, node: ast.AST, guard: int) -> None:
        guarded = bool(guard & PLATFORM)
        if key == "CUDA_VISIBLE_DEVICES":
            self.report(
                "GP218",
                node,
                guarded=guarded,
                message="sets CUDA_VISIBLE_DEVICES: ROCm honours it like HIP_VISIBLE_DEVICES",
            )
        elif key in CUDA_ENV:
            self.report(
                "GP220",
                node,
                guarded=guarded,
                message=f"sets {key}; the ROCm equivalent is {CUDA_ENV[key]}",
                fix=f"Also set {CUDA_ENV[key]} when running on ROCm.",
            )
        else:
            line = getattr(node, "lineno", 0)
            col = getattr(node, "col_offset", 0)
            self.env_writes.setdefault(key, []).append((line, col, guarded))

    def _finish(self) -> None:
        self.finish_fp8()
        hip = self.env_writes.get("HIP_VISIBLE_DEVICES")
        rocr = self.env_writes.get("ROCR_VISIBLE_DEVICES")
        if not hip or not rocr:
            return
        line, col, _ = max(hip[0], rocr[0])
        self.ctx.report(
            "GP219",
            line,
            self.column(line, col),
            message=f"sets both HIP_VISIBLE_DEVICES (line {hip[0][0]}) and "
            f"ROCR_VISIBLE_DEVICES (line {rocr[0][0]}); HIP re-indexes the GPUs ROCR left "
            "visible, so the two masks compound",
        )


def _is_cudnn_benchmark(dotted: str) -> bool:
    """``torch.backends.cudnn.benchmark``, also through an alias the walk did not see."""
    return dotted == "cudnn.benchmark" or dotted.endswith(".cudnn.benchmark")
