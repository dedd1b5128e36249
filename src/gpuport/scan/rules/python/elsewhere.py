"""The project's other Python files, read for the callers of a swallowed ``nvidia-smi`` probe.

A probe this file calls only inside a ``try`` that swallows a failed program is info, unless
another Python file of the project uses it otherwise (forty-first re-run F4): a call outside
such a ``try``, a use other than a call (a callback, an ``__all__`` entry), a file that does not
parse, or a test that stops the program on its result (F11). Each other file is parsed at most
once per process and version (its facts are kept by path, size and modification time: the
first version parsed every file that named a probe once per file calling it, 17 s more on
unsloth's 1,800 files); past the bounds only private (``_probe``) names stay swallowed.
Forty-second re-run: a call under an ``import ... as`` name is a call of the probe, and a file
over 1 MiB or not UTF-8 that names it is a use not judged, not a file passed over (F10); the
files naming each probe come from one read of the project a scan, not one per probe (F20).
Forty-third re-run F5: an extensionless ``#!`` python tool and a notebook's code cells are other
Python files too (a notebook is read up to 16 MiB: its outputs take room). Forty-fourth re-run
F5: a function the project's metadata declares a console-script entry point (``[project.scripts]
run = "pkg.cli:run"``, ``console_scripts``; :func:`entry_points`) returns the exit status: a
failure it returns on a probe's result stops the program. F6: Cython and ``uv run --script``
tools are read for callers too (:mod:`.probe_index`).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.rules.python import probe_index
from gpuport.scan.rules.python.guards import (
    SUBPROC,
    gated_tries,
    gating_calls,
    handler_flags,
)

__all__ = [
    "callee_name",
    "entry_points",
    "seen_elsewhere",
    "swallowing_calls",
    "swallowing_nodes",
]


def callee_name(func: ast.expr) -> str:
    """``f`` of ``f(...)``, ``mod.f(...)`` and ``kernel[grid](...)``."""
    while isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def swallowing_calls(tree: ast.Module, gated: set[int]) -> set[int]:
    """Ids of the calls in the body of a ``try`` that swallows a failed program."""
    return {n for n, call in swallowing_nodes(tree, gated).items() if call}


def swallowing_nodes(tree: ast.Module, gated: set[int]) -> dict[int, bool]:
    """Ids of the nodes in the body of a ``try`` that swallows a failed program (each with
    whether it is a call)."""
    inside: dict[int, bool] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Try | ast.TryStar)
            and id(node) not in gated
            and handler_flags(node) & SUBPROC
        ):
            for stmt in node.body:
                inside.update((id(n), isinstance(n, ast.Call)) for n in ast.walk(stmt))
    return inside


#: a file larger than this is not parsed: a probe it names is a use not judged
_PARSE_BYTES = 1024 * 1024
_NOTEBOOK_BYTES = 16 * 1024 * 1024  # a notebook holds its outputs (images as base64)
#: (path, size, mtime, entry points) -> None (does not parse) or (names used otherwise than a
#: swallowed call, names whose result stops the program)
_FACTS: dict[
    tuple[str, int, int, frozenset[str]], tuple[frozenset[str], frozenset[str]] | None
] = {}
_MOST_FACTS = 50_000
#: the files that declare entry points, looked for in the folders from the root to a module's
_META = ("pyproject.toml", "setup.cfg", "setup.py")
#: ``name = "pkg.cli:run"`` (TOML, setup.cfg) and ``"name=pkg.cli:run"`` (setup.py)
_ENTRY = textre.compile(r"[\w.-]+[ \t]*=[ \t]*[\"']?([A-Za-z_][\w.]*)[ \t]*:[ \t]*([A-Za-z_]\w*)")
_DECLARED: dict[tuple[str, int, int], list[tuple[str, str]]] = {}


def entry_points(root: Path, rel: str) -> frozenset[str]:
    """The functions of the module ``rel`` (``pkg/cli.py``, ``src/pkg/cli.py``) that a
    ``pyproject.toml``/``setup.cfg``/``setup.py`` in a folder above it declares an entry point
    (``pkg.cli:run``): the wrapper pip writes does ``sys.exit(run())`` (forty-fourth re-run F5)."""
    stem = rel.rsplit(".", 1)[0] if rel.endswith((".py", ".pyw")) else rel
    stem = stem.removesuffix("/__init__")
    folders = rel.split("/")[:-1]
    out: set[str] = set()
    for depth in range(len(folders) + 1):
        base = root.joinpath(*folders[:depth])
        for name in _META:
            for module, func in _declared(base / name, root):
                dotted = module.replace(".", "/")
                if stem == dotted or stem.endswith("/" + dotted):
                    out.add(func)
    return frozenset(out)


def _declared(path: Path, root: Path) -> list[tuple[str, str]]:
    """(module, function) of each ``module:function`` entry point ``path`` declares."""
    try:
        st = path.stat()
    except OSError:
        return []
    key = (str(path), st.st_size, st.st_mtime_ns)
    got = _DECLARED.get(key)
    if got is None:
        text = fileio.read_text_or_none(path, limit=_PARSE_BYTES, root=root) or ""
        got = [(m, f) for m, f in _ENTRY.findall(text)] if ":" in text else []
        if len(_DECLARED) >= 1_000:
            _DECLARED.clear()
        _DECLARED[key] = got
    return got


def _file_facts(
    path: str, root: Path, status: frozenset[str] = frozenset()
) -> tuple[frozenset[str], frozenset[str]] | None:
    """The names a file uses otherwise than inside a swallowing ``try`` (called under an
    ``import ... as`` name too: forty-second re-run F10), and the names its tests stop the
    program on (``status``: its entry points, F5); None when it is not read or does not
    parse. Kept per file version."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns, status)
    if key in _FACTS:
        return _FACTS[key]
    try:
        limit = _NOTEBOOK_BYTES if path.endswith(".ipynb") else _PARSE_BYTES
        data = fileio.read_bytes(Path(path), limit=limit, root=root)
        code = probe_index.python_source(path, data)  # a notebook's code cells (F5)
        if len(code) > _PARSE_BYTES:
            raise ValueError(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(code)  # bytes: a coding declaration is honoured
    except (fileio.ReadRefused, SyntaxError, ValueError, RecursionError, MemoryError):
        facts = None
    else:
        facts = _facts(tree, status)
    if len(_FACTS) >= _MOST_FACTS:
        _FACTS.clear()
    _FACTS[key] = facts
    return facts


def _facts(tree: ast.Module, status: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    renamed: dict[str, set[str]] = {}  # `from pkg.gpu import gpu_names as probe`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.asname != alias.name:
                    renamed.setdefault(alias.asname, set()).add(alias.name)
    gate = gating_calls(tree, status)
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
    for local, originals in renamed.items():  # a call by the local name is one of the original
        if local in loose:
            loose |= originals
        if local in gate:
            gate |= originals
    return frozenset(loose), frozenset(gate)


def seen_elsewhere(names: frozenset[str], root: Path, rel: str) -> tuple[frozenset[str], set[str]]:
    """``names`` (probes this file calls only where their failure is swallowed) less those
    another Python file of the project uses otherwise (see the module's docstring); and the
    names another file's test stops the program on (returned too). The files that name each
    probe come from one read of the project a scan (:mod:`.probe_index`)."""
    private = frozenset(n for n in names if n.startswith("_"))
    gates: set[str] = set()
    entries = entry_points(root, rel)  # this file's own entry points (F5)
    own = _file_facts(str(root / rel), root, entries) if entries else None
    if own is not None:
        gates |= own[1]
    index = probe_index.lookup(root, rel, names)
    if index is None:
        return private, gates
    kept = set(names)
    for i in sorted({i for n in names for i in index.named.get(n, ())}):
        other, path = index.files[i]
        if other == rel or not kept:
            continue
        seen = index.words[i] & kept
        if not seen:
            continue
        facts = _file_facts(path, root, entry_points(root, other))
        if facts is None:
            kept -= seen  # a use not judged
            continue
        loose, gate = facts
        gates |= seen & gate
        kept -= seen & (loose | gate)
    if not index.complete:
        return private & kept, gates
    return frozenset(kept - (names - index.names - private)), gates


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
