"""The project's other Python files, read for the callers of a swallowed ``nvidia-smi`` probe.

A probe this file calls only inside a ``try`` that swallows a failed program is info, unless
another Python file of the project uses it otherwise (forty-first re-run F4): a call outside
such a ``try``, a use other than a call (a callback, an ``__all__`` entry), a file that does not
parse, or a test that stops the program on its result (F11). Each other file is parsed at most
once per process and version (its facts are kept by path, size and modification time: the
first version parsed every file that named a probe once per file calling it, 17 s more on
unsloth's 1,800 files); past the bounds only private (``_probe``) names stay swallowed.
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

from gpuport import textre
from gpuport.scan.rules.python.guards import (
    SUBPROC,
    gated_tries,
    gating_calls,
    handler_flags,
)

__all__ = ["callee_name", "seen_elsewhere", "swallowing_calls"]


def callee_name(func: ast.expr) -> str:
    """``f`` of ``f(...)``, ``mod.f(...)`` and ``kernel[grid](...)``."""
    while isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def swallowing_calls(tree: ast.Module, gated: set[int]) -> set[int]:
    """Ids of the calls in the body of a ``try`` that swallows a failed program."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Try | ast.TryStar)
            and id(node) not in gated
            and handler_flags(node) & SUBPROC
        ):
            for stmt in node.body:
                inside.update(id(n) for n in ast.walk(stmt) if isinstance(n, ast.Call))
    return inside


#: how much of the project is read for the other callers of a swallowed probe; past it only
#: a private (``_``) probe stays swallowed: a public one's callers are not all seen
MOST_FILES = 20_000
MOST_BYTES = 64 * 1024 * 1024
_FILE_BYTES = 1024 * 1024
_PY_FILES: dict[str, list[tuple[str, str]]] = {}  # project root -> its Python files
#: (path, size, mtime) -> None (does not parse) or (names used otherwise than a swallowed
#: call, names whose result stops the program)
_FACTS: dict[tuple[str, int, int], tuple[frozenset[str], frozenset[str]] | None] = {}
_MOST_FACTS = 50_000


def _python_files(root: Path) -> list[tuple[str, str]] | None:
    """(relative path, path) of the project's Python files, listed once per process;
    None past :data:`MOST_FILES`."""
    key = str(root)
    got = _PY_FILES.get(key)
    if got is None:
        from gpuport.scan.project.files import iter_entries  # the project layer, when needed

        got = []
        for item in iter_entries(root):
            if isinstance(item, tuple) and item[0].endswith(".py"):
                got.append((item[0], item[1].path))
                if len(got) > MOST_FILES:
                    break
        if len(_PY_FILES) >= 8:
            _PY_FILES.clear()
        _PY_FILES[key] = got
    return got if len(got) <= MOST_FILES else None


def _file_facts(path: str, text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The names a file uses otherwise than inside a swallowing ``try``, and the names its
    tests stop the program on; None when it does not parse. Kept per file version."""
    try:
        st = Path(path).stat()
        key: tuple[str, int, int] | None = (path, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _FACTS:
        return _FACTS[key]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        facts = None
    else:
        gate = gating_calls(tree)
        inside = swallowing_calls(tree, gated_tries(tree, gate))
        callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        loose: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                if id(node) not in inside:
                    loose.add(callee_name(node.func))  # `gpu_names()`, `pkg.gpu.gpu_names()`
            elif id(node) not in callees:
                ref = _reference(node)
                if ref.isidentifier():
                    loose.add(ref)
        facts = (frozenset(loose), frozenset(gate))
    if key is not None:
        if len(_FACTS) >= _MOST_FACTS:
            _FACTS.clear()
        _FACTS[key] = facts
    return facts


def seen_elsewhere(names: frozenset[str], root: Path, rel: str) -> tuple[frozenset[str], set[str]]:
    """``names`` (probes this file calls only where their failure is swallowed) less those
    another Python file of the project uses otherwise (see the module's docstring); and the
    names another file's test stops the program on (returned too)."""
    from gpuport.scan.project.files import read_text

    private = frozenset(n for n in names if n.startswith("_"))
    files = _python_files(root)
    if files is None:
        return private, set()
    words = textre.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    kept = set(names)
    gates: set[str] = set()
    spent = 0
    for other, path in files:
        if other == rel or not kept:
            continue
        text = read_text(Path(path), _FILE_BYTES, root)
        if not isinstance(text, str):
            continue
        spent += len(text)
        if spent > MOST_BYTES:
            return private & kept, gates
        seen = set(words.findall(text)) & kept
        if not seen:
            continue
        facts = _file_facts(path, text)
        if facts is None:
            kept -= seen
            continue
        loose, gate = facts
        gates |= seen & gate
        kept -= seen & (loose | gate)
    return frozenset(kept), gates


def _reference(node: ast.AST) -> str:
    """The name a node reads: ``f`` (loaded), ``mod.f``, a string ``"f"`` (``__all__``,
    ``getattr``)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""
