"""Guards that take more than one node to see, and the child list of the walk.

:mod:`gpuport.scan.rules.python.guards` says what one test, decorator or
``try`` means. This module adds what depends on the statements around it:

* **Early exits.** In a block, the statements after ``if <test>:`` whose body
  ends in ``return``/``raise``/``continue``/``break`` run under that test
  (``if torch.version.hip: return True`` makes the rest of the function the
  NVIDIA path); so do the statements after ``assert <test>``
  (``assert try_import_cutlass()`` before a lazy ``import cutlass_library``).
* **Flag variables.** A name that every assignment in the file sets from an
  expression that discriminates the platform is a guard name:
  ``HAS_CUDA_BINDINGS = torch.version.cuda is not None`` / ``if
  HAS_CUDA_BINDINGS: import cuda.bindings``. One other assignment (``ok =
  path.endswith(".onnx")``, a loop target, ``+=``) and it is not. Names are per
  file, without scopes, like the data-flow names of GP205.
* **Vendor-dispatch siblings.** A function or class whose name holds an NVIDIA
  word (``nvml``, ``nvidia``, ``cuda``) is the NVIDIA arm of a dispatch when the
  file also defines the same name with an AMD word (``amdsmi``, ``rocm``,
  ``hip``, ``amd``) in its place: ``_raw_device_count_nvml`` next to
  ``_raw_device_count_amdsmi``, ``CUDAConfigHeuristic`` next to
  ``ROCmConfigHeuristic``. Its body is guarded. The AMD twin must be a real
  ``def``/``class`` (not a line of a docstring). A name with an NVIDIA word
  and no twin is not a guard by itself (``def query_nvidia_gpus()``).
* **Swallowed probes.** A function the file calls only inside a ``try`` that swallows a failed
  program (an ``nvidia-smi`` probe) guards GP204 in its body, unless the file reads it as a
  value elsewhere (``PROBES = {"nvidia": gpu_names}``: forty-second re-run F12) or another
  file uses it otherwise (:mod:`.elsewhere`).
* **Module probes.** ``if has_triton(): import triton`` (and an early exit or
  ``assert`` on ``has_triton()``) guards the imports of the module the probe
  names, nothing else.

A file large enough for partial parsing would lose an unmarked early exit or
flag assignment; :func:`guard_names` marks the lines that may hold one (an
``if``/``assert`` or an assignment with a platform word) so that they stay.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

from gpuport import textre
from gpuport.scan.rules.python.elsewhere import (
    callee_name,
    entry_points,
    seen_elsewhere,
    swallowing_calls,
    swallowing_nodes,
)
from gpuport.scan.rules.python.guards import (
    LAZY,
    PLATFORM,
    SUBPROC,
    gated_tries,
    gating_calls,
    guard_flags,
    handler_flags,
    ident_flags,
    match_flags,
    names_module,
    probed_modules,
    word_parts,
)
from gpuport.scan.rules.python.patterns import fp8_leaf
from gpuport.scan.rules.python.source import REDUCE_ABOVE

Frame = tuple[ast.AST, int]
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_ASSIGNMENT = textre.compile(r"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Fields never worth entering: contexts, operators, and annotations (which never run).
_FIELDS_SKIP = frozenset({"ctx", "op", "ops", "type_comment", "annotation", "returns"})
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody"})
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_FLAG_VALUES = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Name)
_REBINDS = (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)
_NV_PARTS = frozenset({"nvidia", "cuda"})  # and any part ending in "nvml" (pynvml)
_AMD_PARTS = frozenset({"amdsmi", "rocm", "rocmsmi", "hip", "amd", "amdgpu"})
# Functions and classes whose name may hold an AMD word.
_AMD_DEF = textre.compile(
    r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+"
    r"(\w*(?:[Aa][Mm][Dd]|[Rr][Oo][Cc][Mm]|[Hh][Ii][Pp])\w*)",
    re.M,
)
# Words a platform test or a flag assignment may contain (a text filter; the AST decides).
# They ride along with the trigger words in one regex pass (see ``python.marking_pattern``).
GUARD_WORDS = frozenset(
    {
        *("version.hip", "is_hip", "hip_", "HIP", "rocm", "ROCm", "ROCM"),
        *("amdsmi", "gfx", "gcnArch", "fnuz", "try_import", "HAS_"),
    }
)
_ASSIGN_NAME = textre.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
# An ``assert``, or an ``if`` whose body (within the next three lines) leaves the block.
_EXIT_TEST = textre.compile(
    r"[ \t]*(?:assert\b|(?:el)?if\b[^\n]*(?:\n[^\n]*){0,2}?"
    r"\n[ \t]+(?:return|raise|continue|break)\b)"
)


def guard_names(
    text: str, starts: list[int], guards: list[tuple[int, int]], mask: bytearray | None
) -> set[str]:
    """Flag-variable candidates: names assigned on a trigger line or a guard-word line.

    ``starts`` are the trigger lines' offsets, ``guards`` the (line, offset) pairs
    of lines with a :data:`GUARD_WORD <GUARD_WORDS>`. With a ``mask`` (a file that
    will be partially parsed), guard-word lines that assign a name, hold an
    ``assert`` or start an ``if`` that leaves the block are marked, so that flag
    assignments and early exits survive the reduction. (An ``if`` that holds a
    finding is kept anyway.)
    """
    names: set[str] = set()
    match = _ASSIGN_NAME.match
    for first in starts:
        assign = match(text, first)
        if assign is not None:
            names.add(assign.group(1))
    for line, first in guards:
        assign = match(text, first)
        if assign is not None:
            names.add(assign.group(1))
        elif mask is None or _EXIT_TEST.match(text, first) is None:
            continue
        if mask is not None:
            mask[line] = 1
    return names


def vendor_skeleton(name: str, *, amd: bool) -> tuple[str, ...] | None:
    """``_get_pynvml_handler`` -> ``('get', '*', 'handler')``; None without a vendor word.

    ``amd`` picks which vendor's words become ``*``.
    """
    parts = word_parts(name.replace("ROCm", "Rocm"))
    found = False
    out: list[str] = []
    for part in parts:
        if amd:
            vendor = part in _AMD_PARTS or "rocm" in part
        else:
            vendor = part in _NV_PARTS or part.endswith("nvml")
        found = found or vendor
        out.append("*" if vendor else part)
    return tuple(out) if found else None


class GuardScope:
    """Guard state of one file's walk: flag variables and the defined names."""

    def __init__(self, text: str, candidates: set[str]) -> None:
        self.text = text
        self.candidates = candidates
        self.flags: dict[str, tuple[int, int]] = {}
        self.probed: set[int] = set()  # ids of import aliases a ``has_X()`` probe guards
        self.tree: ast.Module | None = None
        self._amd_arms: set[tuple[str, ...]] | None = None
        self._amd_defs: set[tuple[str, ...]] | None = None
        #: functions the file calls only inside a ``try`` that swallows a failed program
        self.swallowed: frozenset[str] = frozenset()
        #: ids of the ``try`` statements whose swallowed failure stops the program
        self.gated: set[int] = set()

    def prepare(self, tree: ast.Module, root: Path | None = None, rel: str = "") -> None:
        """Before the walk: find the flag variables (every assignment a platform test).

        ``root`` (the scanned project's folder) and ``rel`` (this file in it): the
        project's other Python files are read for the callers of a probe this file swallows.
        """
        self.tree = tree
        if "nvidia-smi" in self.text:
            entries = entry_points(root, rel) if root is not None and root.is_dir() else frozenset()
            self.gated = gated_tries(tree, gating_calls(tree, entries))
            self.swallowed = _swallowed_callees(tree, self.gated)
            # only this file's own functions can be a probe another module calls (the
            # builtins and library methods called in the same `try` are not read for)
            own = self.swallowed & {n.name for n in ast.walk(tree) if isinstance(n, DEFS)}
            if own and root is not None and root.is_dir():
                kept, gates = seen_elsewhere(own, root, rel)
                self.swallowed = (self.swallowed - own) | kept
                self.gated |= gated_tries(tree, gates)
        if not self.candidates:
            return
        assigns: list[tuple[int, str, ast.expr]] = []
        lines: dict[str, set[int]] = {}
        bad: set[str] = set()
        # A parameter is a flag when every call in the file passes it by keyword, each time
        # a platform test: `_scale(x, USE_PTX=not IS_ROCM)` / `def _scale(x, USE_PTX): if
        # USE_PTX: <PTX>` (Triton constexpr switches). One call without it, or none at all,
        # and it is not.
        params: dict[str, set[str]] = {}
        calls: list[ast.Call] = []
        defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        passed: set[str] = set()  # names passed by keyword with a platform word in the value
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                target = node.targets[0] if len(node.targets) == 1 else None
                if isinstance(target, ast.Name) and target.id in self.candidates:
                    assigns.append((node.lineno, target.id, node.value))
                    lines.setdefault(target.id, set()).add(node.lineno)
                else:
                    bad.update(_bound(node.targets, self.candidates))
            elif isinstance(node, ast.Call):
                calls.append(node)
                for k in node.keywords:
                    if k.arg and k.arg not in passed and self._platform_value(k.value):
                        passed.add(k.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                defs.append(node)
            elif isinstance(node, ast.AnnAssign):
                target = node.target
                if (
                    isinstance(target, ast.Name)
                    and target.id in self.candidates
                    and node.value is not None
                ):
                    assigns.append((node.lineno, target.id, node.value))
                    lines.setdefault(target.id, set()).add(node.lineno)
            elif isinstance(node, _REBINDS):
                bad.update(_bound([node.target], self.candidates))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                bad.update(_bound([node.optional_vars], self.candidates))
        for fn in defs if passed else ():
            a = fn.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if arg.arg in passed:
                    params.setdefault(arg.arg, set()).add(fn.name)
        for call in calls if params else ():
            callee = callee_name(call.func)
            for name, funcs in params.items():
                if callee not in funcs:
                    continue
                kw = next((k for k in call.keywords if k.arg == name), None)
                if kw is None:
                    bad.add(name)
                else:
                    assigns.append((kw.value.lineno, name, kw.value))
                    lines.setdefault(name, set()).add(kw.value.lineno)
        assigns.sort(key=lambda a: a[0])
        for _ in range(2):  # twice: a flag set from another flag that turned out not one
            flags: dict[str, tuple[int, int]] = {}
            for _line, name, value in assigns:
                if name in bad:
                    continue
                found = 0
                if isinstance(value, _FLAG_VALUES) and not fp8_leaf(value):
                    found = guard_flags(value, names=self.flags or flags)
                if not found & PLATFORM:
                    bad.add(name)
                    continue
                without = guard_flags(value, cuda_version=False, names=self.flags or flags)
                old = flags.get(name, (found, without))
                flags[name] = (found & old[0], without & old[1])
            self.flags = {k: v for k, v in flags.items() if k not in bad}
        if len(self.text) >= REDUCE_ABOVE and self.flags:
            # a partial parse may have blanked an assignment: every assignment line of the
            # text in one pass (a pattern and a pass per flag was flags x text: 40,000 flags in
            # 1.8 MB > 100 s; thirty-third re-run F4)
            line_of = textre.line_finder(self.text)
            for match in _ASSIGNMENT.finditer(self.text):
                name = match.group(1)
                if name in self.flags and line_of(match.start()) not in lines.get(name, ()):
                    del self.flags[name]

    def _platform_value(self, value: ast.expr) -> bool:
        """A keyword argument's value that names a flag candidate or a vendor
        (``not IS_ROCM``, ``is_hip()``); only small expressions are looked into."""
        while isinstance(value, ast.UnaryOp):
            value = value.operand
        if isinstance(value, ast.Call):
            value = value.func
        while isinstance(value, ast.Attribute):  # a loop: attribute chains can be long
            if ident_flags(value.attr):
                return True
            value = value.value
        if isinstance(value, ast.Name):
            return value.id in self.candidates or bool(ident_flags(value.id))
        if isinstance(value, ast.BoolOp | ast.Compare):
            parts = value.values if isinstance(value, ast.BoolOp) else [value.left]
            return any(self._platform_value(v) for v in parts)
        return False

    def test_flags(self, test: ast.AST, *, cuda_version: bool = True) -> int:
        return guard_flags(test, cuda_version=cuda_version, names=self.flags)

    def def_flags(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
        """Guard bits of a function or class body: its name, decorators and siblings."""
        flags = ident_flags(node.name)
        if node.name in self.swallowed:
            flags |= SUBPROC
        for deco in node.decorator_list:
            flags |= self.test_flags(deco)
        if not flags & PLATFORM and self.nvidia_arm(node.name):
            flags |= PLATFORM
        return flags

    def nvidia_arm(self, name: str) -> bool:
        """Is ``name`` the NVIDIA side of a pair the file defines for both vendors?"""
        lower = name.lower()
        if "nvml" not in lower and "nvidia" not in lower and "cuda" not in lower:
            return False
        skeleton = vendor_skeleton(name, amd=False)
        if skeleton is None:
            return False
        if self._amd_arms is None:
            arms = (vendor_skeleton(m.group(1), amd=True) for m in _AMD_DEF.finditer(self.text))
            self._amd_arms = {arm for arm in arms if arm is not None}
        if skeleton not in self._amd_arms:
            return False
        return skeleton in self._defined_amd_arms()

    def _defined_amd_arms(self) -> set[tuple[str, ...]]:
        """AMD arms the file really defines (the text match may sit in a docstring)."""
        if self._amd_defs is None:
            tree = self.tree
            defs = _amd_def_arms(tree) if tree is not None else set()
            if not self._amd_arms or not self._amd_arms - defs or len(self.text) < REDUCE_ABOVE:
                self._amd_defs = defs
            else:  # a partial parse may have blanked the twin: parse the whole file once
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        full = ast.parse(self.text)
                except (SyntaxError, ValueError):
                    full = None
                self._amd_defs = defs | (_amd_def_arms(full) if full is not None else set())
        return self._amd_defs

    def block(self, stmts: list[ast.stmt], guard: int) -> list[Frame]:
        """Frames for a statement list: early exits and asserts guard what follows them."""
        out: list[Frame] = []
        probes: list[list[str]] = []
        for i, stmt in enumerate(stmts):
            checked = i + 1 < len(stmts) and _status_checked(stmt, stmts[i + 1])
            out.append((stmt, guard | SUBPROC if checked else guard))
            if probes:
                self._probe([stmt], probes)
            if isinstance(stmt, ast.If):
                if stmt.body and isinstance(stmt.body[-1], _EXITS):
                    guard |= self.test_flags(stmt.test)
                    probes += probed_modules(stmt.test)
            elif isinstance(stmt, ast.Assert):
                guard |= self.test_flags(stmt.test)
                probes += probed_modules(stmt.test)
        return out

    def _probe(self, stmts: list[ast.stmt], probes: list[list[str]]) -> None:
        """Mark the imports in ``stmts`` of a module one of the ``has_X()`` probes names."""
        for stmt in stmts:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Import):
                    modules = [(a, a.name) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    modules = [(a, f"{node.module}.{a.name}") for a in node.names]
                else:
                    continue
                for alias, dotted in modules:
                    if any(names_module(p, dotted) for p in probes):
                        self.probed.add(id(alias))

    def children(self, node: ast.AST, guard: int) -> list[Frame]:
        """The child nodes to walk, in source order, each with the guard bits it runs under."""
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return []  # a docstring or bare constant statement: not code
        if isinstance(node, (ast.If, ast.While)):
            inner = guard | self.test_flags(node.test)
            probes = probed_modules(node.test)
            if probes:
                self._probe([*node.body, *node.orelse], probes)
            frames = [(node.test, guard), *self.block(node.body, inner)]
            if node.orelse:
                frames += self.block(node.orelse, inner)
            return frames
        if isinstance(node, ast.IfExp):
            inner = guard | self.test_flags(node.test)
            return [(node.test, guard), (node.body, inner), (node.orelse, inner)]
        if isinstance(node, ast.Match):
            inner = guard | match_flags(node, self.flags)
            return [(node.subject, guard), *((c, inner) for c in node.cases)]
        if isinstance(node, ast.match_case):
            inner = guard | (self.test_flags(node.guard) if node.guard is not None else 0)
            case_parts: list[Frame] = [(node.pattern, guard)]
            if node.guard is not None:
                case_parts.append((node.guard, guard))
            return [*case_parts, *self.block(node.body, inner)]
        if isinstance(node, ast.BoolOp):
            flags = [self.test_flags(v) for v in node.values]
            total = 0
            for f in flags:
                total |= f
            return [
                (v, guard | (0 if f else total)) for v, f in zip(node.values, flags, strict=True)
            ]
        if isinstance(node, (ast.Try, ast.TryStar)):
            caught = handler_flags(node)
            inner = guard | (caught & ~SUBPROC if id(node) in self.gated else caught)
            return [
                *self.block(node.body, inner),
                *self.block(node.orelse, inner),
                *((h, guard) for h in node.handlers),
                *self.block(node.finalbody, guard),
            ]
        if isinstance(node, DEFS):
            inner = guard | self.def_flags(node)
            outer: list[ast.AST] = list(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                outer += [*node.bases, *node.keywords]
            else:
                outer.append(node.args)
                inner |= LAZY
            return [*((n, guard) for n in outer), *self.block(node.body, inner)]
        if isinstance(node, _COMPREHENSIONS):
            # Generators first, so that names bound by ``for a in ...`` are known in the element.
            parts: list[ast.AST] = list(node.generators)
            parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return [(p, guard) for p in parts]
        out: list[Frame] = []
        for name in node._fields:
            if name in _FIELDS_SKIP:
                continue
            value = getattr(node, name, None)
            if isinstance(value, list):
                if name in _BLOCK_FIELDS:
                    out.extend(self.block(value, guard))
                else:
                    out.extend((v, guard) for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                out.append((value, guard))
        return out


def _bound(targets: list[ast.expr], candidates: set[str]) -> set[str]:
    """Candidate names bound by assignment targets (inside tuples, starred, ...)."""
    return {
        n.id
        for t in targets
        for n in ast.walk(t)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in candidates
    }


def _amd_def_arms(tree: ast.Module) -> set[tuple[str, ...]]:
    arms = (vendor_skeleton(n.name, amd=True) for n in ast.walk(tree) if isinstance(n, DEFS))
    return {arm for arm in arms if arm is not None}


def _status_checked(stmt: ast.stmt, after: ast.stmt) -> bool:
    """``ret, out = sp.getstatusoutput("nvidia-smi ...")`` (or ``p = subprocess.run(...)``)
    whose status the next statement tests and leaves on (``if ret != 0: return None``): a
    missing program is a handled failure there, as in a ``try`` that catches ``OSError``
    (issue 24, thirteenth sample: jittor's CUDA driver probe)."""
    if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
        return False
    if not isinstance(after, ast.If) or not after.body:
        return False
    if not isinstance(after.body[-1], ast.Return | ast.Continue | ast.Break):
        return False  # a raise makes the failure the caller's
    names = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(after.test))


def _swallowed_callees(tree: ast.Module, gated: set[int]) -> frozenset[str]:
    """Names of the functions this file calls, each call inside the body of a ``try`` whose
    handler swallows what a missing program raises (``except Exception: return []``).

    facefusion's ``run_nvidia_smi()`` is called only from ``detect_execution_devices()``,
    inside such a ``try``: on an AMD host the probe fails quietly and the program goes on
    (issue 24, twenty-second sample). One call outside such a ``try`` and the name is out;
    so is a ``try`` in a function whose result stops the program (``gated``:
    :func:`~gpuport.scan.rules.python.guards.gated_tries`; forty-first re-run F11).
    """
    caught, loose = _calls_by_kind(tree, gated)
    return frozenset(caught - loose)


def _calls_by_kind(tree: ast.Module, gated: set[int]) -> tuple[set[str], set[str]]:
    """The names the file calls inside a ``try`` that swallows a failed program, and those it
    calls or uses otherwise elsewhere: a function read as a value (``PROBES = {"nvidia":
    gpu_names}``, ``probe = gpu_names``, a callback) outside such a ``try`` may be called
    anywhere (forty-second re-run F12)."""
    inside = swallowing_calls(tree, gated)
    within = swallowing_nodes(tree, gated)
    callees: set[int] = set()
    caught: set[str] = set()
    loose: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            callees.add(id(func))
            if isinstance(func, ast.Name):
                name = func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = func.attr  # self.probe() / cls.probe() / module.probe()
            else:
                continue
            (caught if id(node) in inside else loose).add(name)
    for node in ast.walk(tree):
        if id(node) in callees or id(node) in within:
            continue
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load):
            loose.add(node.id if isinstance(node, ast.Name) else node.attr)
    return caught, loose
