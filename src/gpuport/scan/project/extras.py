"""Which lines of a manifest belong to an optional extra, and to which one.

A dependency that only an extra pulls in (``pip install pkg[kernels]``) is not needed to run
the project: its findings are scope ``extra`` (see :mod:`gpuport.scan.project.view`). Read
statically: pyproject tables (PEP 621 and Poetry), ``extras_require`` in setup.py (through
``ast``, never run) and ``[options.extras_require]`` in setup.cfg.
"""

from __future__ import annotations

import ast

from gpuport import pyparse, textre

__all__ = ["pyproject_extra_lines", "setup_cfg_extra_lines", "setup_py_extra_lines"]

_EXTRA_HEADER = textre.compile(
    r"^\s*\[(?:project\.optional-dependencies|tool\.poetry\.extras)\]\s*$"
)
_TABLE = textre.compile(r"^\s*\[")
_EXTRA_KEY = textre.compile(r"""^\s*["']?([\w.-]+)["']?\s*=""")
_DOTTED_EXTRA = textre.compile(r"""^\s*optional-dependencies\.["']?([\w.-]+)["']?\s*=""")
_NEW_KEY = textre.compile(r"^[A-Za-z_\"'][^=]*=")


def pyproject_extra_lines(text: str) -> dict[int, str]:
    """pyproject line -> the optional extra it belongs to (both table and dotted forms)."""
    out: dict[int, str] = {}
    inside, name, dotted = False, "", ""
    for n, line in enumerate(text.split("\n"), 1):
        if _EXTRA_HEADER.match(line):
            inside, name, dotted = True, "", ""
            continue
        if _TABLE.match(line):
            inside, dotted = False, ""
        m = _DOTTED_EXTRA.match(line)
        if m:
            dotted = m.group(1)
        elif dotted and _NEW_KEY.match(line):
            dotted = ""
        if inside:
            k = _EXTRA_KEY.match(line)
            if k:
                name = k.group(1)
            if name:
                out[n] = name
        elif dotted:
            out[n] = dotted
    return out


def _lines(node: ast.AST, name: str, out: dict[int, str]) -> None:
    first = getattr(node, "lineno", 0)
    for line in range(first, (getattr(node, "end_lineno", None) or first) + 1):
        out[line] = name


def setup_py_extra_lines(text: str) -> dict[int, str]:
    """setup.py line -> extra: the values of ``extras_require={...}`` (a keyword, a key of a
    kwargs dict, or a module-level name assigned a dict literal)."""
    try:
        tree = pyparse.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    assigned = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    }
    out: dict[int, str] = {}
    for node in pyparse.walk(tree):
        found: list[ast.expr] = []
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            found.append(node.value)
        elif isinstance(node, ast.Dict):
            found += [
                v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and k.value == "extras_require"
            ]
        seen: set[int] = set()
        for value in found:
            _table(value, assigned, out, 0, seen)
    return out


def _table(
    value: ast.expr,
    assigned: dict[str, ast.expr],
    out: dict[int, str],
    depth: int,
    seen: set[int],
) -> None:
    """The extras of one ``extras_require`` value: a dict literal, a name assigned one, and
    the ``**name`` entries inside it, each table read once (``E0 = {**E1, **E1, ...}`` four
    levels deep made 1.6 KB of setup.py visit K^5 entries: 38 s at K=40; sixth review)."""
    table = assigned.get(value.id) if isinstance(value, ast.Name) else value
    if not isinstance(table, ast.Dict) or depth > 4 or id(table) in seen:
        return
    seen.add(id(table))
    for key, item in zip(table.keys, table.values, strict=True):
        if key is None:  # {**OTHER_EXTRAS}
            _table(item, assigned, out, depth + 1, seen)
        elif isinstance(key, ast.Constant) and isinstance(key.value, str):
            _lines(item, key.value, out)


_CFG_SECTION = textre.compile(r"^\s*\[([^\]]+)\]")
_CFG_KEY = textre.compile(r"^([\w.-]+)\s*[=:]")


def setup_cfg_extra_lines(text: str) -> dict[int, str]:
    """setup.cfg line -> extra, inside ``[options.extras_require]``."""
    out: dict[int, str] = {}
    inside, name = False, ""
    for n, line in enumerate(text.split("\n"), 1):
        section = _CFG_SECTION.match(line)
        if section:
            inside, name = section.group(1).strip() == "options.extras_require", ""
            continue
        if not inside:
            continue
        key = _CFG_KEY.match(line)  # a key starts at column 0; its values are indented
        if key:
            name = key.group(1)
        if name and line.strip():
            out[n] = name
    return out
