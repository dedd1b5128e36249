"""Where ``port`` may add an import line to a Python file, and which files it edits at all
(thirty-ninth re-run F25).

gpuport reads a Python file as UTF-8 and places edits on that reading; Python decodes the
file with its PEP 263 coding cookie (line 1 or 2). A cookie naming another encoding
(``utf-7``: ``+ACM-`` is ``#``) makes both readings differ, so such a file is not edited
unless the two agree: UTF-8 itself, or an ASCII file under an ASCII-compatible one-byte
encoding. An added import never goes above the first lines' shebang or coding cookie (the
shell would run the file, or Python decode it as UTF-8), nor above the docstring or a
``from __future__`` import, and is checked by parsing the result: the module's statements
must be the old ones with the one import added.
"""

from __future__ import annotations

import ast
import codecs
from collections.abc import Callable

from gpuport import textre

__all__ = ["foreign_cookie", "import_after", "import_at"]

#: PEP 263's cookie, as the tokenizer reads it (on line 1 or 2)
_COOKIE = textre.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_FIRST_LINES = textre.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
#: encodings that read an ASCII text as ASCII (one byte a character, no shift states)
_ASCII_SAFE = textre.compile(r"ascii|iso8859-\d+|cp125\d|latin-1|koi8-[ru]|mac-roman")


def foreign_cookie(text: str) -> str | None:
    """Why Python would not read ``text`` (gpuport's UTF-8 reading) as gpuport does: a
    coding cookie on line 1 or 2 naming another encoding; None when both readings agree."""
    rows = []
    pos = 0
    for _ in range(2):
        m = _FIRST_LINES.match(text, pos)
        if m is None or not m.group(0):
            break
        rows.append(m.group(0))
        pos = m.end()
    for row in rows:
        m = _COOKIE.match(row)
        if m is None:
            continue
        name = m.group(1)
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            return f"its coding cookie names {name!r}, an encoding Python does not know"
        if codec in ("utf-8", "utf-8-sig"):
            return None
        if _ASCII_SAFE.fullmatch(codec) and text.isascii():
            try:
                if text.encode("ascii").decode(codec) == text:
                    return None
            except UnicodeError:
                pass
        return (
            f"its coding cookie says {name}: Python decodes the file otherwise than gpuport's "
            "UTF-8 reading, where its edits are placed"
        )
    return None


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def import_at(tree: ast.Module, text: str, starts: list[int], line: str) -> tuple[int, str] | None:
    """Where to insert the import ``line`` (one statement ending in a newline) and the text
    to insert: after the last top-level import of the module's opening block, else after
    its docstring, never above the shebang or coding-cookie lines (the first two, when they
    are comments). None when the module parsed with it is not the old one plus that import
    (a backslash-continued line, a statement sharing the import's line)."""
    last: ast.stmt | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            last = stmt
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        elif last is not None:
            break
    if last is not None:
        row = last.end_lineno or last.lineno
    elif tree.body and _docstring(tree.body[0]):
        row = tree.body[0].end_lineno or tree.body[0].lineno
    else:
        row = 0
    floor = 0  # the shebang / coding-cookie lines stay the first ones
    while floor < 2 and floor + 1 < len(starts):
        first = text[starts[floor] : starts[floor + 1]]
        if first.strip() and not first.lstrip(" \t\f").startswith("#"):
            break
        floor += 1
    row = max(row, floor)
    pos = starts[row] if row < len(starts) else len(text)
    insert = line if pos == 0 or text[pos - 1] in "\r\n" else "\n" + line
    try:
        new = ast.parse(text[:pos] + insert + text[pos:])
        added = ast.dump(ast.parse(line).body[0])
    except (SyntaxError, ValueError, RecursionError):
        return None
    old = [ast.dump(s) for s in tree.body]
    got = [ast.dump(s) for s in new.body]
    docstring = bool(tree.body) and _docstring(tree.body[0])
    for j, dump in enumerate(got):
        if dump == added and got[:j] + got[j + 1 :] == old and not (docstring and j == 0):
            return pos, insert
    return None


#: imports of one package followed before the edits are declined (each edit looks at each)
_MANY = 64


def _bound(node: ast.AST, name: str) -> bool:
    """Whether ``name`` is read, bound or declared anywhere under ``node``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name:
            return True
        if isinstance(n, ast.alias) and (n.asname or n.name.partition(".")[0]) == name:
            return True
        if isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
    return False


def _blocks(tree: ast.Module) -> list[tuple[list[ast.stmt], ast.AST]]:
    """Each statement list with its scope (the module or the function it runs in); the
    statement lists of class bodies are left out (a name they import is no variable)."""
    out: list[tuple[list[ast.stmt], ast.AST]] = []
    todo: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while todo:
        node, scope = todo.pop()
        defines = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        inner = node if isinstance(node, defines) else scope
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            listed = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
            if listed and not isinstance(inner, ast.ClassDef):
                out.append((body, inner))  # type: ignore[arg-type]
        for child in ast.iter_child_nodes(node):
            todo.append((child, inner))
    return out


def import_after(
    tree: ast.Module,
    text: str,
    starts: list[int],
    imports: Callable[[ast.stmt], bool],
    binds: Callable[[ast.stmt], bool],
    line: str,
    sites: list[tuple[int, int]],
) -> list[tuple[int, str]] | str:
    """Where to add the import ``line`` (one statement ending in a newline, binding one name)
    so that every edit in ``sites`` (1-based line ranges) reads that name, or why there is no
    such place (fortieth re-run F14). The import goes right after a statement ``imports``
    accepts (one that imports the same package: the new import runs only where it did, and
    cannot fail where it did not), in the same statement list at its indentation, and serves
    the edits after it in that list. An edit with no such statement before it (the package
    imported only in a ``try``/``if`` the edit is not in, or not at all) gets none: a
    module-level import would stop every run without the package. Returns the insertions
    (none where a statement ``binds`` the name already), checked by parsing the result."""
    name = ast.parse(line).body[0]
    names = [a.asname or a.name.partition(".")[0] for a in getattr(name, "names", [])]
    if len(names) != 1:
        return "the import binds no one name"
    # each import of the package, once (per site, a walk of every block was quadratic)
    cands: list[tuple[list[ast.stmt], int, ast.stmt, ast.AST, int]] = [
        (body, i, stmt, scope, body[-1].end_lineno or body[-1].lineno)
        for body, scope in _blocks(tree)
        for i, stmt in enumerate(body)
        if imports(stmt)
    ]
    if len(cands) > _MANY:
        return f"it imports the package more than {_MANY} times"
    cands.sort(key=lambda c: (not binds(c[2]), c[2].lineno))  # one binding the name first
    scopes = _Scopes(tree, names[0], binds)
    if len(scopes.binders) > _MANY:
        return f"it binds `{names[0]}` in more than {_MANY} functions or classes"
    free: dict[int, bool] = {}  # per function scope: the name appears nowhere in it
    placed: list[tuple[list[ast.stmt], int, ast.stmt]] = []
    for first, last in sites:
        best: tuple[list[ast.stmt], int, ast.stmt] | None = None
        hidden = False
        for body, i, stmt, scope, end in cands:
            if (stmt.end_lineno or stmt.lineno) >= first or last > end:
                continue  # not before the edit, or the edit is not in its block
            if scopes.shadowed(first, last, scope):
                hidden = True  # a function around the edit has its own `torch` (F16)
                continue
            if binds(stmt):
                if id(scope) in scopes.other:
                    continue  # the scope also binds the name otherwise: not surely the import
                best = (body, -1, stmt)
                break
            if not isinstance(scope, ast.Module) and id(scope) not in free:
                free[id(scope)] = not _bound(scope, names[0])
            if isinstance(scope, ast.Module) or free[id(scope)]:
                best = (body, i, stmt)
                break
        if best is None and hidden:
            return (
                f"line {first} is in a function or class that binds `{names[0]}` itself, "
                "so it would not read the module's import there"
            )
        if best is None:
            return f"line {first} has no import of the package before it, in its block"
        if best[1] >= 0 and all(p[2] is not best[2] for p in placed):
            placed.append(best)
    if placed and _bound_elsewhere(tree, names[0], binds):
        return f"the module binds `{names[0]}` otherwise"
    out: list[tuple[int, str]] = []
    for _body, _, stmt in placed:
        row = stmt.end_lineno or stmt.lineno
        head = text[starts[stmt.lineno - 1] : starts[stmt.lineno - 1] + stmt.col_offset]
        if head.strip() or row >= len(starts):
            return f"the import at line {stmt.lineno} does not end its line"
        out.append((starts[row], head + line))
    for body, i, _ in sorted(placed, key=lambda p: p[1], reverse=True):
        body.insert(i + 1, name)  # the highest first: the lower indices stay
    try:
        expected = ast.dump(tree)
    finally:
        for body, _, _ in placed:
            body[:] = [x for x in body if x is not name]
    new = text
    for pos, insert in sorted(out, reverse=True):
        new = new[:pos] + insert + new[pos:]
    try:
        got = ast.dump(ast.parse(new))
    except (SyntaxError, ValueError, RecursionError):
        return "the file with the import added does not parse"
    return out if got == expected else "the import added is not read as one statement there"


def _bound_elsewhere(tree: ast.Module, name: str, binds: Callable[[ast.stmt], bool]) -> bool:
    """Whether the module binds ``name`` other than by the package's own import."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Import | ast.ImportFrom) and binds(n):
            continue
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.Import | ast.ImportFrom) and any(
            (a.asname or a.name.partition(".")[0]) == name for a in n.names
        ):
            return True
        if isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return True
    return False


_SCOPE_NODES = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


def _binding(node: ast.AST, name: str) -> bool:
    """Whether ``node`` itself (not what is under it) binds ``name`` in the scope it runs in
    (a star import may bind any name)."""
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.alias):
        return node.name == "*" or (node.asname or node.name.partition(".")[0]) == name
    if isinstance(node, ast.Global | ast.Nonlocal):
        return name in node.names
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return node.name == name
    if isinstance(node, ast.MatchMapping):
        return node.rest == name
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    return False


class _Scopes:
    """Which scopes (the module, each function, lambda and class) bind a name themselves
    (forty-first re-run F16: a module's ``import torch`` is not what a function reads whose
    own later ``import torch.utils.cpp_extension`` makes ``torch`` one of its locals).
    Comprehensions are read as part of the scope around them (binding more, never less)."""

    def __init__(self, tree: ast.Module, name: str, binds: Callable[[ast.stmt], bool]) -> None:
        self.depth: dict[int, int] = {id(tree): 0}
        #: scopes binding the name other than by an import ``binds`` accepts
        self.other: set[int] = set()
        #: (first line, last line, depth) of each function, lambda or class binding the name
        self.binders: list[tuple[int, int, int]] = []
        bound: set[int] = set()
        todo: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
        while todo:
            node, scope = todo.pop()
            if isinstance(node, ast.Import | ast.ImportFrom) and binds(node):
                bound.add(id(scope))
                continue
            if _binding(node, name):
                bound.add(id(scope))
                self.other.add(id(scope))
            if not isinstance(node, _SCOPE_NODES):
                todo += [(child, scope) for child in ast.iter_child_nodes(node)]
                continue
            self.depth[id(node)] = self.depth[id(scope)] + 1
            outer: list[ast.AST] = [] if isinstance(node, ast.Lambda) else [*node.decorator_list]
            inner: list[ast.AST] = []
            if isinstance(node, ast.ClassDef):
                outer += [*node.bases, *node.keywords]
                inner += node.body
            else:
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                params += [p for p in (a.vararg, a.kwarg) if p is not None]
                outer += [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
                outer += [p.annotation for p in params if p.annotation is not None]
                if not isinstance(node, ast.Lambda) and node.returns is not None:
                    outer.append(node.returns)
                if any(p.arg == name for p in params):
                    bound.add(id(node))
                    self.other.add(id(node))
                inner += [node.body] if isinstance(node, ast.Lambda) else node.body
            todo += [(x, scope) for x in outer] + [(x, node) for x in inner]
        for node in ast.walk(tree):
            if isinstance(node, _SCOPE_NODES) and id(node) in bound:
                end = node.end_lineno or node.lineno
                self.binders.append((node.lineno, end, self.depth[id(node)]))

    def shadowed(self, first: int, last: int, scope: ast.AST) -> bool:
        """Whether a function, lambda or class inside ``scope`` around lines first..last
        binds the name itself (read by lines, so a same-line one counts too)."""
        depth = self.depth.get(id(scope), 0)
        return any(a <= first and last <= b and d > depth for a, b, d in self.binders)
