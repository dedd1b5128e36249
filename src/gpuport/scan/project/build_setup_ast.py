"""Which sources a setup.py builds for ROCm, read statically with :mod:`ast` (never run).

A setup.py that builds for both vendors chooses its source lists with a test on
the platform: ``if IS_ROCM:``, ``if not SKIP_CUDA_BUILD and not IS_ROCM:``,
``if use_cuda:`` (``use_cuda = torch.version.cuda and CUDA_HOME is not None``),
``HIP_BUILD = bool(torch.version.hip)``, ``BUILD_TARGET == "rocm"``. This module
follows the statements in source order, gives each branch its value on a ROCm
build (true, false or unknown), and records every path or glob pattern that
reaches a call (``CUDAExtension(sources=...)``, ``sources += ...``,
``x.extend(...)``) with the branch it was used in. A pattern used only in
branches that are false on ROCm is a CUDA-only source.

It answers only for a setup.py that tests the platform for ROCm/HIP at least
once; a CUDA-only setup.py has no ROCm build to model.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuport import pyparse, textre
from gpuport.scan.project.build_rocm_value import (
    NONE_KEY,
    ROCM_NAME,
    later_rocm_branch,
    mentions_rocm,
    plain_dotted,
    rocm_value,
)
from gpuport.scan.project.build_settings import Known, known_of

__all__ = ["Use", "setup_uses"]

_SOURCEISH = textre.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hh|inl)$|[*]|/")


@dataclass(frozen=True)
class Use:
    """A path pattern that reached the build, relative to the setup.py's folder."""

    pattern: str
    cuda_only: bool  # used only where the ROCm build never goes
    line: int  # the test that makes it CUDA-only (or the use site)
    #: named where a ROCm build is shown to compile it (False: a Makefile list whose value
    #: reaches only branches a ROCm build is not shown to take)
    shown: bool = True


@dataclass
class _State:
    env: dict[str, list[tuple[str, bool, int]]] = field(default_factory=dict)
    flags: dict[str, bool | None] = field(default_factory=dict)
    uses: list[Use] = field(default_factory=list)
    tested: bool = False  # a test on the platform was seen
    #: (first line, last line, line of the test) of every branch ROCm never takes
    cuda_ranges: list[tuple[int, int, int]] = field(default_factory=list)


#: Patterns and characters the expressions of a setup.py may stand for, per character of it
BUDGET_PER_CHAR = 4  # 32 let 100 KB of chained lists cost 24-33 s (twelfth re-run)


class _TooLarge(Exception):
    """The expressions stand for more patterns than the file's size allows (``a1 = a0 + a0``,
    ``a2 = a1 + a1``, ...: doubling per line); the file gets no model."""


class _Eval:
    """Path patterns an expression can stand for ("" is the setup.py's folder), within a budget
    of patterns and characters proportional to the file's size: memory stays linear in it."""

    def __init__(self, state: _State, budget: int, known: Known | None = None) -> None:
        self.state = state
        self.known = known
        self.left = budget
        self._file: dict[int, bool] = {}  # id(node) -> whether __file__ is in it

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise _TooLarge

    def _product(self, left: list[str], right: list[str], sep: str = "") -> list[str]:
        """Every ``a + sep + b``, paid for before it is built."""
        self.spend(len(left) * len(right) * (1 + len(sep)))
        self.spend(sum(map(len, left)) * len(right) + sum(map(len, right)) * len(left))
        if not sep:
            return [a + b for a in left for b in right]
        return [f"{a}{sep}{b}" if a and b else (a or b) for a in left for b in right]

    def _join(self, parts: list[list[str] | None]) -> list[str] | None:
        out = [""]
        for part in parts:
            if part is None:
                return None
            out = self._product(out, part, "/")
        return out

    def _mentions_file(self, node: ast.AST) -> bool:
        """Whether ``__file__`` is in the expression (each node looked at once per file)."""
        key = id(node)
        if key not in self._file:
            self._file[key] = (isinstance(node, ast.Name) and node.id == "__file__") or any(
                self._mentions_file(child) for child in ast.iter_child_nodes(node)
            )
        return self._file[key]

    def tagged(self, node: ast.expr) -> list[tuple[str, bool, int]]:
        """Patterns with (cuda_only, line) when a name carries them from earlier lines."""
        out = self._tagged(node)
        self.spend(len(out))
        return out

    def paths(self, node: ast.expr) -> list[str] | None:
        out = self._paths(node)
        if out:
            self.spend(len(out) + sum(map(len, out)))
        return out

    def _tagged(self, node: ast.expr) -> list[tuple[str, bool, int]]:
        if isinstance(node, ast.Name) and node.id in self.state.env:
            return list(self.state.env[node.id])
        if isinstance(node, ast.IfExp):  # `[CUDAExtension(...)] if _is_cuda() else []`
            v = rocm_value(node.test, self.state.flags, self.known)
            body, orelse = self.tagged(node.body), self.tagged(node.orelse)
            if v is False:
                body = [(p, True, line or node.lineno) for p, _, line in body]
            elif v is True:
                orelse = [(p, True, line or node.lineno) for p, _, line in orelse]
            return body + orelse
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return [t for e in node.elts for t in self.tagged(e)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.tagged(node.left), self.tagged(node.right)
            if left or right:
                return left + right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            return self.tagged(node.left)
        if isinstance(node, ast.Call) and plain_dotted(node.func) in (
            "list",
            "set",
            "sorted",
            "tuple",
        ):
            return self.tagged(node.args[0]) if node.args else []
        return [(p, False, 0) for p in self.paths(node) or []]

    def _paths(self, node: ast.expr) -> list[str] | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value.strip().lstrip("./") if node.value.startswith("./") else node.value]
        if self._mentions_file(node):
            return [""]
        if isinstance(node, ast.Name):
            got = self.state.env.get(node.id)
            return [p for p, _, _ in got] if got else None
        if isinstance(node, ast.JoinedStr):
            text = [""]
            for piece in node.values:
                if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                    text = self._product(text, [piece.value])
                elif isinstance(piece, ast.FormattedValue):
                    parts = self.paths(piece.value)
                    if parts is None or len(parts) != 1:
                        parts = ["*"]  # a loop variable: any name there
                    text = self._product(text, parts)
            return [textre.sub(r"\*+", "*", t) for t in text if t.strip("*/")]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Add):
            left, right = self.paths(node.left), self.paths(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return self._product(left, right)
            return self._join([left, right])
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.paths(node.elt)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            out: list[str] = []
            for e in node.elts:
                out += self.paths(e) or []
            return out
        if isinstance(node, ast.Call):
            name = plain_dotted(node.func) or ""
            last = name.rsplit(".", 1)[-1]
            if name.endswith("path.join") or last in ("Path", "PurePath", "PosixPath"):
                return self._join([self.paths(a) for a in node.args]) if node.args else [""]
            if last in ("glob", "iglob", "rglob"):
                if (
                    isinstance(node.func, ast.Attribute)
                    and last in ("glob", "rglob")
                    and (plain_dotted(node.func.value) not in ("glob",))
                ):
                    base = self.paths(node.func.value)
                    pat = self.paths(node.args[0]) if node.args else None
                    if base is None or pat is None:
                        return None
                    if last == "rglob":
                        pat = ["**/" + p for p in pat]
                    return self._join([base, pat])
                return self.paths(node.args[0]) if node.args else None
            if last in ("list", "sorted", "set", "tuple", "abspath", "realpath", "resolve"):
                return self.paths(node.args[0]) if node.args else None
            if isinstance(node.func, ast.Attribute) and node.func.attr in (
                "resolve",
                "absolute",
                "as_posix",
            ):
                return self.paths(node.func.value)
            if last in ("dirname", "getcwd"):
                return [""]
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return [""]
        return None


class _Walker:
    def __init__(self, budget: int, known: Known | None = None) -> None:
        self.known = known
        self.state = _State()
        self.ev = _Eval(self.state, budget, known)
        self.unknown = 0  # depth of enclosing `if`s whose value on ROCm is unknown
        #: function name -> (first, last line); its call sites -> [CUDA-only test line or 0]
        self.functions: dict[str, tuple[int, int]] = {}
        self.calls: dict[str, list[int]] = {}
        #: constant booleans assigned outside any platform branch: name -> value
        self.defaults: dict[str, bool | None] = {}
        #: names set to None outside any platform branch (and nothing else there)
        self.none_defaults: set[str] = set()
        self.assigned: set[str] = set()  # names assigned outside CUDA-only branches
        self.varied: set[str] = set()  # ... and of those, given something not constant

    def block(self, body: list[ast.stmt], cuda_line: int, on_rocm: bool = False) -> None:
        for stmt in body:
            self.stmt(stmt, cuda_line, on_rocm)

    def stmt(self, node: ast.stmt, cuda_line: int, on_rocm: bool = False) -> None:
        st = self.state
        for expr in (getattr(node, "test", None), getattr(node, "iter", None)):
            if isinstance(expr, ast.expr):  # calls in a test or loop header count as calls
                self._test_calls(expr, cuda_line, node.lineno)
        if isinstance(node, ast.If):
            if mentions_rocm(node.test) or self._documented_switch(node.test):
                st.tested = True
            v = rocm_value(node.test, st.flags, self.known)
            if v is None and later_rocm_branch(node.orelse, st.flags, self.known):
                v = False  # `if <cuda build>: ... elif <ROCm build>:` -- ROCm takes the elif
            for body, off in ((node.body, v is False), (node.orelse, v is True)):
                if off and not cuda_line and body:
                    end = getattr(body[-1], "end_lineno", None) or body[-1].lineno
                    st.cuda_ranges.append((body[0].lineno, end, node.lineno))
            self.unknown += v is None
            self.block(node.body, cuda_line or (node.lineno if v is False else 0), v is True)
            self.block(node.orelse, cuda_line or (node.lineno if v is True else 0), v is False)
            self.unknown -= v is None
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = getattr(node, "end_lineno", None) or node.lineno
            self.functions[node.name] = (node.lineno, end)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.block(node.body, cuda_line, on_rocm)
            return
        if isinstance(node, ast.For | ast.While | ast.With | ast.AsyncFor | ast.AsyncWith):
            self.block(node.body, cuda_line, on_rocm)
            self.block(getattr(node, "orelse", []), cuda_line, on_rocm)
            return
        if isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                self.block(part, cuda_line, on_rocm)
            for h in node.handlers:
                self.block(h.body, cuda_line, on_rocm)
            return
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if mentions_rocm(node.value):
                st.tested = True
            self._defaults_kept(targets, node.value, cuda_line)
            flag = rocm_value(node.value, st.flags, self.known)
            tags = self._tag(self.ev.tagged(node.value), cuda_line)
            for t in targets:
                name = plain_dotted(t)
                if name and isinstance(t, ast.Name | ast.Attribute):
                    if not isinstance(node.value, ast.Constant):
                        if flag is not None or not ROCM_NAME.search(name):
                            st.flags[name] = flag  # an opt-in ROCm toggle stays on for ROCm
                    elif on_rocm and isinstance(node.value.value, bool):
                        st.flags[name] = node.value.value  # `SKIP_CUDA_BUILD = True` for ROCm
                    elif isinstance(node.value.value, bool):
                        self._constant(name, node.value.value, cuda_line)
                    if tags:
                        st.env[name] = tags
            self._calls(node.value, cuda_line)
            return
        if isinstance(node, ast.AugAssign):
            name = plain_dotted(node.target)
            if name:
                st.env.setdefault(name, []).extend(self._tag(self.ev.tagged(node.value), cuda_line))
            self._calls(node.value, cuda_line)
            return
        if isinstance(node, ast.Expr):
            call = node.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("append", "extend", "add", "update")
                and call.args
            ):
                name = plain_dotted(call.func.value)
                if name:
                    got = self._tag(self.ev.tagged(call.args[0]), cuda_line)
                    st.env.setdefault(name, []).extend(got)
            self._calls(node.value, cuda_line)
            return
        for sub in ast.iter_child_nodes(node):
            if isinstance(sub, ast.expr):
                self._calls(sub, cuda_line)

    def _test_calls(self, expr: ast.expr, cuda_line: int, line: int) -> None:
        """Record the calls of a test, short-circuit included: in ``is_cuda() and
        nvcc_version() >= 11`` the second call is never made on ROCm."""
        todo: list[tuple[ast.AST, int]] = [(expr, cuda_line)]
        while todo:
            sub, cl = todo.pop()
            if isinstance(sub, ast.BoolOp) and not cl:
                stop = not isinstance(sub.op, ast.And)
                off = 0
                for value in sub.values:
                    todo.append((value, off))
                    if not off and rocm_value(value, self.state.flags, self.known) is stop:
                        off = line
                continue
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                self.calls.setdefault(sub.func.id, []).append(cl)
            todo.extend((c, cl) for c in ast.iter_child_nodes(sub))

    def _documented_switch(self, test: ast.expr) -> bool:
        """A test of a target setting whose ROCm value the project's docs give."""
        known = self.known
        if known is None or not known.settings:
            return False
        for sub in pyparse.walk(test):
            if isinstance(sub, ast.expr) and known.string_value(sub) is not None:
                return True
            ret = known.returned(sub) if isinstance(sub, ast.Call) else None
            if ret is not None and any(
                isinstance(n, ast.expr) and known.string_value(n) is not None
                for n in pyparse.walk(ret)
            ):
                return True
        return False

    def _defaults_kept(self, targets: Sequence[ast.expr], value: ast.expr, cuda_line: int) -> None:
        """A name given a constant (``False``, ``None``) outside every platform branch and
        anything else only in CUDA-only branches keeps that constant on ROCm, also when the
        CUDA branch sets it from a call or a tuple (``a, b = get_flags()``)."""
        names = [
            n.id
            for t in targets
            for n in pyparse.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]
        st = self.state
        is_none = isinstance(value, ast.Constant) and value.value is None
        for name in names:
            if cuda_line:
                if (
                    self.defaults.get(name) is not None
                    and not isinstance(value, ast.Constant)
                    and name not in self.varied
                ):
                    st.flags[name] = self.defaults[name]
                if name in self.none_defaults:
                    st.flags[NONE_KEY + name] = True
            elif is_none and len(names) == 1 and not self.unknown and name not in self.assigned:
                self.none_defaults.add(name)
            else:
                self.none_defaults.discard(name)
                st.flags.pop(NONE_KEY + name, None)
            if not cuda_line:
                self.assigned.add(name)
                if not isinstance(value, ast.Constant):
                    self.varied.add(name)

    def _constant(self, name: str, value: bool, cuda_line: int) -> None:
        """``use_cutlass = False`` then ``use_cutlass = True`` only in a CUDA-only branch:
        on ROCm it keeps its default. Set anywhere else, it is unknown."""
        st = self.state
        if cuda_line:
            default = self.defaults.get(name)
            if default is not None and default != value:
                st.flags[name] = default
        elif self.unknown:
            self.defaults[name] = None
            st.flags[name] = None
        elif name not in self.defaults:
            self.defaults[name] = value
        elif self.defaults[name] != value:
            self.defaults[name] = None
            st.flags[name] = None

    @staticmethod
    def _tag(tags: list[tuple[str, bool, int]], cuda_line: int) -> list[tuple[str, bool, int]]:
        if not cuda_line:
            return tags
        return [(p, True, line if c else cuda_line) for p, c, line in tags]

    def _calls(self, node: ast.expr, cuda_line: int) -> None:
        """Every argument of a call here is a use of the patterns it holds (not the
        arguments of calls that only build or test a path)."""
        todo: list[tuple[ast.AST, int]] = [(node, cuda_line)]
        while todo:
            sub, cuda_line = todo.pop()
            if isinstance(sub, ast.IfExp) and not cuda_line:
                v = rocm_value(sub.test, self.state.flags, self.known)
                todo.append((sub.body, sub.lineno if v is False else 0))
                todo.append((sub.orelse, sub.lineno if v is True else 0))
                continue
            if not isinstance(sub, ast.Call):
                todo.extend((c, cuda_line) for c in ast.iter_child_nodes(sub))
                continue
            fn = (plain_dotted(sub.func) or "").rsplit(".", 1)[-1]
            if isinstance(sub.func, ast.Name):
                self.calls.setdefault(sub.func.id, []).append(cuda_line)
            if fn in _NOT_USES:
                continue
            args = list(sub.args) + [k.value for k in sub.keywords]
            for arg in args:
                for p, c, line in self._tag(self.ev.tagged(arg), cuda_line):
                    if p and _SOURCEISH.search(p):
                        self.state.uses.append(Use(p, c, line or sub.lineno))
            todo.extend((a, cuda_line) for a in args)


_NOT_USES = frozenset(
    {"join", "Path", "PurePath", "glob", "iglob", "rglob", "dirname", "abspath", "realpath",
     "exists", "isdir", "isfile", "listdir", "walk", "open", "remove", "print", "copy",
     "copyfile", "rename", "run", "check_output", "check_call", "getenv", "get", "format",
     "replace", "startswith", "endswith", "split", "relpath", "basename", "list", "sorted",
     "set", "tuple", "len", "any", "all", "bool", "str"}
)  # fmt: skip


def setup_uses(
    text: str, settings: dict[str, str] | None = None
) -> tuple[list[Use], bool, list[tuple[int, int, int]]]:
    """The path patterns this setup.py uses, whether it tests for ROCm at all, and the line
    ranges of the branches a ROCm build never takes (first, last, line of the test).
    ``settings``: environment settings the project's docs give a ROCm value."""
    try:
        tree = pyparse.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # CPython's parser raises MemoryError on deeply nested brackets: no model, no crash
        return [], False, []
    w = _Walker(BUDGET_PER_CHAR * len(text) + 100_000, known_of(tree, settings or {}))
    try:
        w.block(tree.body, 0)
    except (RecursionError, _TooLarge):
        return [], False, []
    ranges = list(w.state.cuda_ranges)
    for name, (first, last) in w.functions.items():  # a helper only CUDA-only code calls
        sites = w.calls.get(name, [])
        if sites and all(sites):
            ranges.append((first, last, sites[0]))
    return w.state.uses, w.state.tested, ranges
