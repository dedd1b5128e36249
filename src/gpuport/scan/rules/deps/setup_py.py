"""Requirement strings of ``setup.py``, read with :mod:`ast` only: never executed or imported.

Module-level names are followed (also when extended by ``+=``, ``.extend`` and
``.append``), as are ``setup(**kw)`` with a dict literal or ``dict(...)``,
newline-separated strings and f-strings (unknown parts become "X").
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from gpuport import pyparse, textre
from gpuport.scan.rules.base import physical_lines
from gpuport.scan.rules.deps.readers_common import Entry

_SETUP_KEYS = ("install_requires", "extras_require", "setup_requires")
_MAX_DEPTH = 8


def _module_names(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """Module-level ``name = ...``, ``name += ...``, ``name.extend(...)``, ``name.append(...)``.

    Each name maps to the expressions that make up its value, in order.
    """
    names: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            value = node.value
            for tgt in node.targets:
                if not isinstance(tgt, ast.Name):
                    continue
                if (  # base = base + [...] extends base
                    isinstance(value, ast.BinOp)
                    and isinstance(value.op, ast.Add)
                    and isinstance(value.left, ast.Name)
                    and value.left.id == tgt.id
                ):
                    names.setdefault(tgt.id, []).append(value.right)
                else:
                    names[tgt.id] = [value]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                names[node.target.id] = [node.value]
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            if isinstance(node.target, ast.Name):
                names.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("extend", "append")
                and isinstance(func.value, ast.Name)
                and len(call.args) == 1
            ):
                names.setdefault(func.value.id, []).append(call.args[0])
    return names


#: Steps and characters following the names of a setup.py may take, per character of it
BUDGET_PER_CHAR = 4  # 32 let 100 KB of chained lists cost 24-33 s (twelfth re-run)


class _SetupReader:
    def __init__(self, text: str) -> None:
        self.tree = pyparse.parse(text)
        self.lines = physical_lines(text)
        self.names = _module_names(self.tree)
        self.out: list[Entry] = []
        self.resolving: set[str] = set()
        # names that repeat names (``a2 = [a1, a1]``, ``s2 = s1 + s1``) multiply per line:
        # the work, and so the memory, stays linear in the file's size
        self.left = BUDGET_PER_CHAR * len(text) + 100_000

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise ValueError("its names stand for more values than its size allows; not read")

    def read(self) -> list[Entry]:
        for call in pyparse.walk(self.tree):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname != "setup":
                continue
            for kw in call.keywords:
                if kw.arg in _SETUP_KEYS:
                    self.strings(kw.value)
                elif kw.arg is None:  # setup(**kw)
                    self.kwargs(kw.value)
        # a name reached twice (setup(**kw) and a keyword) counts once (a dict: linear)
        return list(dict.fromkeys(self.out))

    def resolve(self, node: ast.expr) -> list[ast.expr]:
        """The expressions a module-level name stands for, or the node itself."""
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        return [node]

    def _follow(self, name: ast.Name, depth: int, visit: Callable[[ast.expr, int], None]) -> None:
        """Visit what a module-level name stands for; a name already being followed is a cycle."""
        if name.id in self.resolving or name.id not in self.names:
            return
        self.resolving.add(name.id)
        for expr in self.names[name.id]:
            visit(expr, depth + 1)
        self.resolving.discard(name.id)

    def kwargs(self, node: ast.expr, depth: int = 0) -> None:
        """``**kw`` where kw is a dict literal or a ``dict(...)`` call (directly or by name)."""
        if depth > _MAX_DEPTH:
            return
        self.spend(1)
        if isinstance(node, ast.Name):
            self._follow(node, depth, self.kwargs)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    self.kwargs(value, depth + 1)
                elif isinstance(key, ast.Constant) and key.value in _SETUP_KEYS:
                    self.strings(value)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "dict":
            for arg in node.args:
                self.kwargs(arg, depth + 1)
            for kw in node.keywords:
                if kw.arg in _SETUP_KEYS:
                    self.strings(kw.value)
                elif kw.arg is None:
                    self.kwargs(kw.value, depth + 1)

    def render(self, node: ast.expr, depth: int = 0) -> tuple[str, bool] | None:
        """A string expression as text (unknown parts as "X"), and whether any were unknown."""
        if depth > _MAX_DEPTH:
            return None
        self.spend(1)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, False
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            partial = False
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
                    continue
                known = None
                if (
                    isinstance(value, ast.FormattedValue)
                    and value.conversion == -1
                    and value.format_spec is None
                ):
                    known = self.known_scalar(value.value, depth + 1)
                if known is None:
                    parts.append("X")
                    partial = True
                else:
                    parts.append(known)
            self.spend(sum(map(len, parts)))
            return "".join(parts), partial
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.render(node.left, depth + 1)
            right = self.render(node.right, depth + 1)
            if left is None or right is None:
                return None
            self.spend(len(left[0]) + len(right[0]))
            return left[0] + right[0], left[1] or right[1]
        if isinstance(node, ast.Name):
            values = self.resolve(node)
            if len(values) == 1 and values[0] is not node and node.id not in self.resolving:
                self.resolving.add(node.id)
                try:
                    return self.render(values[0], depth + 1)
                finally:
                    self.resolving.discard(node.id)
        return None

    def known_scalar(self, node: ast.expr, depth: int) -> str | None:
        """The text of a formatted value whose value is known (a constant, or a name for one)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)):
            return str(node.value)
        if isinstance(node, ast.Name):
            rendered = self.render(node, depth)
            if rendered is not None and not rendered[1]:
                return rendered[0]
        return None

    def strings(self, node: ast.expr | None, depth: int = 0) -> None:
        if node is None or depth > _MAX_DEPTH:
            return
        self.spend(1)
        if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            rendered = self.render(node)
            if rendered is not None:
                self.emit(node, *rendered)
                return
        if isinstance(node, ast.Name):
            self._follow(node, depth, self.strings)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                self.strings(elt.value if isinstance(elt, ast.Starred) else elt, depth + 1)
        elif isinstance(node, ast.Dict):
            for value in node.values:
                self.strings(value, depth + 1)
        elif isinstance(node, ast.BinOp):
            self.strings(node.left, depth + 1)
            self.strings(node.right, depth + 1)

    def emit(self, node: ast.expr, text: str, partial: bool) -> None:
        if "\n" not in text and "\r" not in text:
            self.out.append(Entry("req", text, node.lineno, partial))
            return
        # "a\nb" / a triple-quoted block: one requirement a line, comments dropped
        first = node.lineno - 1
        last = min(node.end_lineno or node.lineno, len(self.lines))
        cursor = first
        for piece in physical_lines(text):
            req = textre.split(r"(?:^|\s)#", piece, maxsplit=1)[0].strip()
            if not req:
                continue
            for i in range(cursor, last):
                if req in self.lines[i]:
                    cursor = i
                    break
            self.out.append(Entry("req", req, cursor + 1, partial))


def setup_py_entries(text: str) -> list[Entry]:
    """Requirement strings in ``setup(install_requires=..., extras_require=...)``.

    Follows module-level names (also extended by ``+=``, ``.extend`` and ``.append``),
    ``setup(**kw)`` with a dict literal or ``dict(...)``, newline-separated strings and
    f-strings (unknown parts become "X").
    """
    return _SetupReader(text).read()
