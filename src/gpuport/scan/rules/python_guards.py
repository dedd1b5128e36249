"""Name resolution and ROCm-guard detection for the Python rules (GP2xx).

Everything here reads an ``ast`` tree; nothing from the scanned project is
imported or run.

A *guard* is code that already tells the platforms apart, so a finding inside
it is reported with ``guarded=True`` (lowered to info). The test of an
``if``/``elif``, a ternary, a ``while`` or an ``and``/``or`` operand
*discriminates the platform* when it contains any of:

* ``<x>.version.hip`` or ``<x>.version.cuda`` (``torch.version.*``);
* an identifier (name, attribute or called function) that names a vendor or
  runtime: ``rocm`` anywhere in it (``IS_ROCM``, ``skipIfRocm``), or one of the
  word parts ``hip``, ``amd``, ``amdgpu``, ``amdsmi``, ``rocr``, ``roctx``,
  ``miopen``, ``hipify``, ``nvidia`` (``is_hip()``, ``HAS_HIP``; ``ship`` and
  ``chip`` are single word parts and do not count);
* ``<platform>.is_cuda()`` where the receiver's name has the word part
  ``platform`` (vLLM's ``current_platform``; ``tensor.is_cuda`` does not count,
  it is true on ROCm);
* a string compared with ``==``/``in``/``startswith`` that names ROCm, HIP,
  AMD, a ``gfx`` architecture or FNUZ (``"rocm" in torch.__version__``).

``torch.cuda.is_available()`` alone is not a guard: it is true on ROCm.

Both branches of such a test count (on ROCm one of them is dead, the other is
the ROCm-aware path), and so do ``elif`` chains below it. A ``match`` statement
counts like an ``if`` chain: every ``case`` body is guarded when the subject
discriminates the platform (``match torch.version.hip:``, ``match
get_rocm_version():``, ``match backend_is_hip:``) or when a case pattern is a
string that names ROCm/HIP/AMD (``case "rocm":``); a ``case ... if <test>:``
whose test discriminates guards that case's body. So does the body of a
function or class whose name names a vendor (``def _init_rocm()``) or whose
decorators discriminate the platform (``@skipIfRocm``,
``@unittest.skipIf(torch.version.hip, ...)``), and the body and ``else`` of a
``try`` whose handler catches ``ImportError``/``ModuleNotFoundError`` (an
optional import of an NVIDIA-only module).

:func:`children` applies these rules during the walk: it hands each child
node the guard bits it runs under.

A test that also names an architecture (``gfx942``, ``gcnArchName``, ``fnuz``,
``cdna``/``rdna``) is *arch-aware*: it carries the :data:`ARCH` bit, which the
FP8 rule needs to accept a FNUZ dtype chosen for the right AMD GPU.
"""

from __future__ import annotations

import ast
import re
from collections import deque

from gpuport.scan.rules.python_patterns import last_name

PLATFORM = 1
ARCH = 2

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PLATFORM_PARTS = frozenset(
    {"hip", "amd", "amdgpu", "amdsmi", "rocr", "roctx", "miopen", "hipify", "nvidia"}
)
_ARCH_PARTS = frozenset({"cdna", "rdna", "fnuz", "gcn"})
_PLATFORM_STRING = re.compile(r"(?i)\b(?:rocm|hip|amd)\b|\+rocm|rocm\d")
_ARCH_STRING = re.compile(r"(?i)gfx\d|fnuz")
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def word_parts(ident: str) -> list[str]:
    """``skipIfRocm`` -> ``['skip', 'if', 'rocm']``; ``HAS_HIP`` -> ``['has', 'hip']``."""
    out: list[str] = []
    for chunk in ident.split("_"):
        out.extend(part.lower() for part in _CAMEL.findall(chunk))
    return out


def ident_flags(ident: str) -> int:
    """Guard bits an identifier carries by its name alone."""
    lower = ident.lower()
    parts = word_parts(ident)
    flags = 0
    if "rocm" in lower or any(p in _PLATFORM_PARTS for p in parts):
        flags = PLATFORM
    if "fnuz" in lower or any(p in _ARCH_PARTS or p.startswith("gfx") for p in parts):
        flags = PLATFORM | ARCH
    return flags


def string_flags(value: str) -> int:
    if _ARCH_STRING.search(value):
        return PLATFORM | ARCH
    if _PLATFORM_STRING.search(value):
        return PLATFORM
    return 0


def is_cuda_version(node: ast.AST) -> bool:
    """``<x>.version.cuda`` (``torch.version.cuda``)."""
    if not isinstance(node, ast.Attribute) or node.attr != "cuda":
        return False
    base = node.value
    return (isinstance(base, ast.Attribute) and base.attr == "version") or (
        isinstance(base, ast.Name) and base.id == "version"
    )


def _attr_flags(node: ast.Attribute) -> int:
    base = node.value
    if node.attr in ("hip", "cuda"):
        base_name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if base_name == "version":
            return PLATFORM
    if node.attr == "is_cuda" and "platform" in word_parts(last_name(base)):
        return PLATFORM
    return ident_flags(node.attr)


def _compared_strings(node: ast.AST) -> int:
    flags = 0
    if isinstance(node, ast.Compare):
        for operand in (node.left, *node.comparators):
            for const in _str_consts(operand):
                flags |= string_flags(const)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("startswith", "endswith")
    ):
        for arg in node.args:
            for const in _str_consts(arg):
                flags |= string_flags(const)
    return flags


def _str_consts(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def guard_flags(test: ast.AST, *, cuda_version: bool = True) -> int:
    """Guard bits of an ``if``/ternary test or a decorator expression (0: not a guard).

    ``cuda_version=False`` ignores ``torch.version.cuda`` (GP206 asks whether a
    test looks at anything *besides* it).
    """
    flags = 0
    for node in ast.walk(test):
        if isinstance(node, ast.Name):
            flags |= ident_flags(node.id)
        elif isinstance(node, ast.Attribute):
            if cuda_version or not is_cuda_version(node):
                flags |= _attr_flags(node)
        elif isinstance(node, (ast.Compare, ast.Call)):
            flags |= _compared_strings(node)
    return flags


def match_flags(node: ast.Match) -> int:
    """Guard bits of a ``match`` statement: from its subject and its string patterns."""
    flags = guard_flags(node.subject)
    for case in node.cases:
        for pat in ast.walk(case.pattern):
            value = pat.value if isinstance(pat, ast.MatchValue) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                flags |= string_flags(value.value)
    return flags


def catches_import_error(node: ast.Try | ast.TryStar) -> bool:
    """``try: import x`` / ``except ImportError:`` (or ``ModuleNotFoundError``)."""
    for handler in node.handlers:
        kinds = handler.type
        if kinds is None:
            continue
        elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
        if any(last_name(e) in _IMPORT_ERRORS for e in elts):
            return True
    return False


def def_flags(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """Guard bits of a function or class body: from its name and its decorators."""
    flags = ident_flags(node.name)
    for deco in node.decorator_list:
        flags |= guard_flags(deco)
    return flags


class Aliases:
    """Maps local names to the dotted names they were imported as."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def add_import(self, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
        """Record the names an import binds; returns (local, dotted) pairs."""
        bound: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound.append((alias.asname, alias.name))
                else:
                    top = alias.name.split(".", 1)[0]
                    bound.append((top, top))
        elif node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    bound.append((alias.asname or alias.name, f"{node.module}.{alias.name}"))
        for local, dotted in bound:
            self.names[local] = dotted
        return bound

    def dotted(self, node: ast.AST) -> str | None:
        """``T.cuda.nvtx`` -> ``torch.cuda.nvtx`` after ``import torch as T``; None if no chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.names.get(node.id, node.id))
        return ".".join(reversed(parts))


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports at module level, including inside top-level ``if``/``try``/``with`` blocks."""
    out: list[ast.Import | ast.ImportFrom] = []
    pending: deque[ast.stmt] = deque(tree.body)
    while pending:
        stmt = pending.popleft()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append(stmt)
        elif isinstance(stmt, ast.If):
            pending.extend(stmt.body + stmt.orelse)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            pending.extend(stmt.body + stmt.orelse + stmt.finalbody)
            for handler in stmt.handlers:
                pending.extend(handler.body)
        elif isinstance(stmt, ast.With):
            pending.extend(stmt.body)
    return out


Frame = tuple[ast.AST, int]
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Fields never worth entering: contexts, operators, and annotations (which never run).
_FIELDS_SKIP = frozenset({"ctx", "op", "ops", "type_comment", "annotation", "returns"})


def children(node: ast.AST, guard: int) -> list[Frame]:
    """The child nodes to walk, in source order, each with the guard bits it runs under."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return []  # a docstring or bare constant statement: not code
    if isinstance(node, (ast.If, ast.IfExp, ast.While)):
        inner = guard | guard_flags(node.test)
        if isinstance(node, ast.IfExp):
            return [(node.test, guard), (node.body, inner), (node.orelse, inner)]
        return [(node.test, guard), *((s, inner) for s in (*node.body, *node.orelse))]
    if isinstance(node, ast.Match):
        inner = guard | match_flags(node)
        return [(node.subject, guard), *((c, inner) for c in node.cases)]
    if isinstance(node, ast.match_case):
        inner = guard | (guard_flags(node.guard) if node.guard is not None else 0)
        case_parts: list[Frame] = [(node.pattern, guard)]
        if node.guard is not None:
            case_parts.append((node.guard, guard))
        return [*case_parts, *((s, inner) for s in node.body)]
    if isinstance(node, ast.BoolOp):
        flags = [guard_flags(v) for v in node.values]
        total = 0
        for f in flags:
            total |= f
        return [(v, guard | (0 if f else total)) for v, f in zip(node.values, flags, strict=True)]
    if isinstance(node, (ast.Try, ast.TryStar)):
        inner = guard | (PLATFORM if catches_import_error(node) else 0)
        return [
            *((s, inner) for s in (*node.body, *node.orelse)),
            *((h, guard) for h in node.handlers),
            *((s, guard) for s in node.finalbody),
        ]
    if isinstance(node, DEFS):
        inner = guard | def_flags(node)
        outer: list[ast.AST] = list(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            outer += [*node.bases, *node.keywords]
        else:
            outer.append(node.args)
        return [*((n, guard) for n in outer), *((s, inner) for s in node.body)]
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
            out.extend((v, guard) for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append((value, guard))
    return out
