"""Kernels a project refuses on ROCm at run time, and the extensions behind them (issue 24).

Python that raises or reports "not supported" for a kernel on ROCm never builds that kernel's
JIT extension there, and never runs the kernel's own Python. Read with :mod:`ast` (nothing is
imported or run), a *refusal* is:

* a ``raise`` (or ``return False`` in a check such as ``is_supported``/``can_implement``/
  ``validate``) under a test that is true on ROCm (``if IS_ROCM:``, ``if is_hip():``,
  ``if torch.version.hip:``), or an ``assert`` that ROCm is not in use;
* a device support list without ROCm: ``SUPPORTED_DEVICES = ("cuda",)``,
  ``supported_backends = ["cuda"]`` (a class or module attribute naming CUDA and no
  ROCm/HIP/AMD).

Its scope is the function that holds it, else the class, else the module. Inside that scope,
every ``cpp_extension.load(sources=...)``/``load_inline`` source that is a file of the project
is *not built on ROCm*, and the scope's own lines are *not run on ROCm*; both name the refusal
as evidence (``ops/attn.py:12``). A support list that names ROCm refuses nothing: a kernel that
says it runs on ROCm keeps its findings (inline PTX there is a real blocker).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuport import pyparse, textre
from gpuport.scan.project.build_settings import dotted_name, evidence_at

__all__ = ["Refusals", "may_refuse", "refusals"]

#: A file worth parsing: a ROCm test followed by a raise or ``return False``, an assert that
#: ROCm is not in use, or a support list (a regular expression over the text; most files
#: never get to :mod:`ast`).
_HINT = textre.compile(
    r"^[ \t]*(?:el)?if\b[^\n]*(?:rocm|hip)[^\n]*:\s*(?:#[^\n]*)?\n[ \t]*"
    r"(?:raise\b|return\s+(?:False|\(\s*False))"
    r"|^[ \t]*assert\s+not\b[^\n]*(?:rocm|hip)"
    r"|^[ \t]*_*(?:supported|supports|support|allowed)_?(?:devices?|backends?|platforms?|targets?)"
    r"\s*(?::[^=\n]*)?=",
    re.I | re.M,
)
_ROCM_TEST = textre.compile(r"(?:^|[._])(?:is_)?(?:rocm|hip)(?:_\w+)?$|torch\.version\.hip$", re.I)
_SUPPORT_NAME = textre.compile(
    r"^_*(?:supported|supports|support|allowed)_?(?:devices?|backends?|platforms?|targets?)$",
    re.I,
)
_CHECK_NAME = textre.compile(
    r"is_supported|can_implement|validate|is_compatible|supports|available"
)
_CUDA_WORD = textre.compile(r"^(?:cuda|nvidia|cu\d*|sm_?\d+)$", re.I)
_ROCM_WORD = textre.compile(r"rocm|hip|amd|gfx", re.I)
_NATIVE = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cpp")


@dataclass
class Refusals:
    #: native file (relative to the root) -> evidence: its JIT extension is refused on ROCm
    not_built: dict[str, str] = field(default_factory=dict)
    #: Python file -> [(first line, last line, evidence)] not run on ROCm
    not_run: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)

    def line_not_run(self, rel: str, line: int | None) -> str | None:
        return evidence_at(self.not_run.get(rel, ()), line)


def _dotted(node: ast.AST) -> str:
    return dotted_name(node) or ""


def _rocm_test(test: ast.expr) -> bool:
    """A test that is true on ROCm: a name/call naming ROCm or HIP, `torch.version.hip`,
    possibly ``and``-ed with others (``if IS_ROCM and x:`` refuses only when x is true, so
    it does not count)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            return (
                isinstance(test.ops[0], ast.IsNot) and _ROCM_TEST.search(_dotted(left)) is not None
            )
        return any(
            isinstance(b, ast.Constant)
            and isinstance(b.value, str)
            and isinstance(test.ops[0], ast.Eq)
            and _ROCM_WORD.fullmatch(b.value.strip()) is not None
            for b in (left, right)
        )
    name = _dotted(test)
    return bool(name) and _ROCM_TEST.search(name) is not None


def _refuses(body: list[ast.stmt], check: bool) -> bool:
    """A ``raise`` (or, in a check function, ``return False``) at the top of a branch."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return True
        if check and isinstance(stmt, ast.Return):
            v = stmt.value
            if isinstance(v, ast.Constant) and v.value is False:
                return True
            if isinstance(v, ast.Tuple) and v.elts:  # (False, "not supported on ROCm")
                first = v.elts[0]
                return isinstance(first, ast.Constant) and first.value is False
    return False


def _support_list(node: ast.stmt) -> bool:
    """``SUPPORTED_DEVICES = ("cuda",)``: a support list that names CUDA and never ROCm."""
    if not isinstance(node, ast.Assign | ast.AnnAssign):
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(_SUPPORT_NAME.match(_dotted(t).rsplit(".", 1)[-1]) for t in targets):
        return False
    value = node.value
    if not isinstance(value, ast.List | ast.Tuple | ast.Set):
        return False
    words = [
        e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
    ]
    if len(words) != len(value.elts) or not words:
        return False
    return any(_CUDA_WORD.match(w) for w in words) and not any(_ROCM_WORD.search(w) for w in words)


def _own_refusal(scope: ast.AST) -> int | None:
    """The line of a refusal that belongs to ``scope`` itself (not to a nested function)."""
    check = isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) and bool(
        _CHECK_NAME.search(scope.name)
    )
    for node in _own_nodes(scope):
        if isinstance(node, ast.If) and _rocm_test(node.test) and _refuses(node.body, check):
            return node.lineno
        if isinstance(node, ast.Assert):
            t = node.test
            if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and _rocm_test(t.operand):
                return node.lineno
        if isinstance(node, ast.stmt) and _support_list(node):
            return node.lineno
    return None


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope, without descending into nested functions or classes."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


def _check_methods_refuse(cls: ast.ClassDef) -> int | None:
    """A check method of the class (``is_supported``, ``can_implement``) that refuses ROCm:
    the class's kernel is never chosen there."""
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _CHECK_NAME.search(
            item.name
        ):
            line = _own_refusal(item)
            if line is not None:
                return line
    return None


def _sources(
    call: ast.Call, here: str, assigned: dict[str, ast.expr], seen: dict[int, list[str]]
) -> list[str]:
    """The literal source files a ``load(...)``/``load_inline`` call compiles (relative to the
    root). ``seen``: each list read once per file (6,000 calls of one 6,000-name list read it
    6,000 times: 41 s for 219 KB; sixth review)."""
    expr: ast.expr | None = None
    for kw in call.keywords:
        if kw.arg in ("sources", "cuda_sources"):
            expr = kw.value
    if expr is None and len(call.args) > 1:
        expr = call.args[1]
    if isinstance(expr, ast.Name):
        expr = assigned.get(expr.id)
    if expr is None:
        return []
    if id(expr) in seen:
        return seen[id(expr)]
    out: list[str] = []
    for node in pyparse.walk(expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if text.endswith(_NATIVE) and ".." not in text.split("/"):
                out.append(posixpath.normpath(posixpath.join(here, text.lstrip("./"))))
    seen[id(expr)] = out
    return out


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """Every function and class, with its enclosing scopes (innermost first), and the
    module."""
    yield tree, []
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(tree, [])]
    while stack:
        node, outer = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                chain: list[ast.AST] = [node, *outer] if node is not tree else [tree]
                yield child, chain
                stack.append((child, chain))
            elif not isinstance(child, ast.expr):
                stack.append((child, outer))


def _by_suffix(src: str, here: str, native: set[str]) -> str | None:
    """A source named relative to some other folder (the package root, the repository): the
    one native file whose path ends with the name, when there is exactly one."""
    tail = src[len(here) + 1 :] if here and src.startswith(here + "/") else src
    hits = [n for n in native if n == tail or n.endswith("/" + tail)]
    return hits[0] if len(hits) == 1 else None


_CHEAP = textre.compile(r"rocm|hip|upport", re.I)


def may_refuse(text: str) -> bool:
    """Whether a Python file is worth reading for refusals (regular expressions, no parse)."""
    return _CHEAP.search(text) is not None and _HINT.search(text) is not None


def refusals(texts: dict[str, str], native: set[str]) -> Refusals:
    """Read every Python file that may refuse ROCm (``texts``: relative path -> text) against
    the project's native files."""
    out = Refusals()
    for rel, text in texts.items():
        if not _HINT.search(text):
            continue
        try:
            tree = pyparse.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        assigned = {
            t.id: n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        refused: dict[int, tuple[ast.AST, str]] = {}
        try:
            for scope, chain in _scopes(tree):
                line = _own_refusal(scope)
                if line is None and isinstance(scope, ast.ClassDef):
                    line = _check_methods_refuse(scope)
                if line is not None:
                    refused[id(scope)] = (scope, f"{rel}:{line}")
                elif any(id(c) in refused for c in chain):
                    continue
        except RecursionError:
            continue
        listed: dict[int, list[str]] = {}  # the tree lives until the loop ends: ids hold
        for scope, evidence in refused.values():
            why = f"refused on ROCm at run time: {evidence}"
            first = getattr(scope, "lineno", 1)
            last = getattr(scope, "end_lineno", None) or len(text.splitlines())
            out.not_run.setdefault(rel, []).append((first, last, why))
            for node in pyparse.walk(scope):
                if isinstance(node, ast.Call) and _dotted(node.func).rsplit(".", 1)[-1] in (
                    "load",
                    "load_inline",
                ):
                    for src in _sources(node, here, assigned, listed):
                        found = src if src in native else _by_suffix(src, here, native)
                        if found is not None:
                            out.not_built.setdefault(found, why)
    return out
