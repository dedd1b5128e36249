"""No new per-item scan of a list of ranges on project text (issue 23, item 4).

Five stalls of the fourteenth and fifteenth reviews had one shape: for every finding, token or
use, ``any(a <= x < b for a, b in spans)`` over every guarded range, skipped span or block of
the file, which grows with the file too (ranges x items). ``gpuport.intervals.in_any`` answers
the same question by a binary search. This test reads the package's source and fails on a new
generator of that shape, so the next one is caught where it is written, not by a review.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gpuport

#: ``file:function`` -> why the scan is allowed there
ALLOWED = {
    "intervals.py:in_any": "the short-list path (under 16 ranges) of the binary search itself",
    "intervals.py:first_holding": "the short-list path (under 16 ranges) of the index itself",
}


def _range_scans(tree: ast.AST) -> list[tuple[str, int]]:
    """``(function, line)`` of each ``(lo <= x < hi for lo, hi in ...)`` or ``next((v for lo,
    hi, v in ranges if lo <= x <= hi), None)``: a chained comparison of something between
    two of the names the generator unpacks, in its value or its condition."""
    out: list[tuple[str, int]] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.GeneratorExp | ast.ListComp) or len(node.generators) != 1:
                continue
            gen = node.generators[0]
            if not (isinstance(gen.target, ast.Tuple) and len(gen.target.elts) >= 2):
                continue
            names = {e.id for e in gen.target.elts if isinstance(e, ast.Name)}
            for part in (node.elt, *gen.ifs):
                for cmp in ast.walk(part):
                    if not isinstance(cmp, ast.Compare):
                        continue
                    sides = [cmp.left, *cmp.comparators]
                    operands = {o.id for o in sides if isinstance(o, ast.Name)}
                    if len(operands & names) >= 2 and len(sides) > 2:
                        out.append((func.name, node.lineno))
    return out


_STACKS = {"stack", "opened", "frames", "open_frames"}


def _stack_walks(tree: ast.AST) -> list[tuple[str, int]]:
    """``(function, line)`` of each ``any``/``all``/``next``/``sum`` over a generator that walks
    a stack of open frames (``stack``, ``opened``, ``reversed(stack)``): asked per line, the
    sixteenth re-run's stalls (conditionals x depth)."""
    out: list[tuple[str, int]] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        for node in ast.walk(func):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("any", "all", "next", "sum")
                and node.args
                and isinstance(node.args[0], ast.GeneratorExp)
            ):
                continue
            it = node.args[0].generators[0].iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.args:
                it = it.args[0]  # reversed(stack)
            name = it.attr if isinstance(it, ast.Attribute) else getattr(it, "id", "")
            if name in _STACKS:
                out.append((func.name, node.lineno))
    return out


def test_no_walk_of_every_open_frame_per_question() -> None:
    root = Path(gpuport.__file__).parent
    found = [
        f"{path.relative_to(root).as_posix()}:{line} in {func}()"
        for path in sorted(root.rglob("*.py"))
        for func, line in _stack_walks(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "keep a running value per frame (on_route._fold): " + ", ".join(found)
    code = "def f(stack):\n    return next((x for x in reversed(stack) if x), None)\n"
    assert _stack_walks(ast.parse(code)) == [("f", 2)]


def test_no_scan_of_every_range_per_item() -> None:
    root = Path(gpuport.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for func, line in _range_scans(ast.parse(path.read_text(encoding="utf-8"))):
            if f"{rel}:{func}" not in ALLOWED:
                found.append(f"{rel}:{line} in {func}()")
    assert not found, "use gpuport.intervals.in_any (or say why not in ALLOWED): " + ", ".join(
        found
    )


def test_the_check_sees_the_shape() -> None:
    code = "def f(spans, xs):\n    return [x for x in xs if any(a <= x < b for a, b in spans)]\n"
    assert _range_scans(ast.parse(code)) == [("f", 2)]
    inline = "def h(rs, x):\n    return next((v for a, b, v in rs if a <= x <= b), None)\n"
    assert _range_scans(ast.parse(inline)) == [("h", 2)]
    fine = "def g(pairs):\n    return any(f(a) is None or a == b for a, b in pairs)\n"
    assert _range_scans(ast.parse(fine)) == []
