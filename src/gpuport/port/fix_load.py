"""``torch.utils.cpp_extension.load()`` / ``load_inline()`` at run time: the nvcc flags of
``extra_cuda_cflags`` get a HIP form (GP211), as the setup.py family gives a ``CUDAExtension``.

On ROCm torch, ``load`` hipifies the sources and hands ``extra_cuda_cflags`` to hipcc, which
stops at the first of nvcc's own options (``--use_fast_math``, ``-Xptxas -O3``,
``-res-usage``...). The list literal given there (or the one literal a name passed there is
assigned, once, in the module) becomes ``([hip flags] if torch.version.hip else [the
original])``, exactly as :mod:`gpuport.port.fix_setup` rewrites a setup.py list. The module
is read with :mod:`ast`, never run.

Safe: ``torch.version.hip`` is None on CUDA torch, so a CUDA run passes the same flags; the
ROCm run, whose build stopped at an nvcc flag, gets hipcc's. The fix does not remove GP211
(the extension is still built at run time, which is what the finding says), so it is listed
with the finding without counting it as fixed.
"""

from __future__ import annotations

import ast

from gpuport.port.by_line import ByLine
from gpuport.port.context import PortContext, Proposal
from gpuport.port.fix_setup import _Spans, hip_list, parse, torch_imports
from gpuport.scan.finding import Finding

__all__ = ["propose"]

_LOADERS = frozenset({"load", "load_inline"})


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _flag_lists(tree: ast.AST) -> list[tuple[ast.List | ast.Tuple, int]]:
    """The list literals that reach ``extra_cuda_cflags`` of a ``load``/``load_inline``
    call, each with the call's line; a name counts only when one literal is assigned to it."""
    assigned: dict[str, list[ast.List | ast.Tuple]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    value = node.value
                    lit = value if isinstance(value, ast.List | ast.Tuple) else None
                    assigned.setdefault(t.id, []).append(lit)  # type: ignore[arg-type]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            assigned.setdefault(node.target.id, []).append(None)  # type: ignore[arg-type]
    out: list[tuple[ast.List | ast.Tuple, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _callee(node.func) not in _LOADERS:
            continue
        for kw in node.keywords:
            if kw.arg != "extra_cuda_cflags":
                continue
            value = kw.value
            if isinstance(value, ast.List | ast.Tuple):
                out.append((value, node.lineno))
            elif isinstance(value, ast.Name):
                lits = assigned.get(value.id, [])
                if len(lits) == 1 and lits[0] is not None:
                    out.append((lits[0], node.lineno))
    return out


def _fix(path: str, text: str, found: list[Finding]) -> Proposal | str | None:
    """The proposal, None, or why it is not made."""
    got = parse(text)
    if got is None:
        return None
    tree, starts, guarded = got
    prop = Proposal(
        id=f"load-hip-flags:{path}",
        family="cpp_extension.load",
        title=f"{path}: no nvcc-only flags in the extension ROCm torch builds at run time",
        safe=True,
        why="torch.version.hip is None on CUDA torch: a CUDA run passes the flags it did; "
        "on ROCm, load() hands them to hipcc, which stopped at the first nvcc-only one",
        findings=[],
        resolves=False,
        note="the extension is still built at run time (GP211): check that it builds on ROCm",
    )
    done: set[int] = set()
    sites: list[tuple[int, int]] = []
    taken: set[int] = set()  # ids of the findings in prop.findings (all alive in `found`)
    by_line = ByLine(found)  # a filter of every finding per list was quadratic
    inside = _Spans(len(starts))  # a scan of every guarded range per list was quadratic
    for a, b in guarded:
        inside.add(a, b)
    for node, call_line in _flag_lists(tree):
        lo, hi = node.lineno, node.end_lineno or node.lineno
        if id(node) in done or inside.holds(lo, hi):
            continue
        # the call's finding, and scan's per-flag findings inside the list
        mine = by_line.within(lo, hi)
        if not lo <= call_line <= hi:
            mine = [*by_line.at(call_line), *mine]
        if hip_list(prop, path, text, starts, node, mine):
            done.add(id(node))
            sites.append((lo, hi))
            new = [f for f in mine if id(f) not in taken]  # a set: `in` a list was quadratic
            taken.update(id(f) for f in new)
            prop.findings.extend(new)
    if not prop.edits or not prop.findings:
        return None
    adds = torch_imports(tree, text, starts, sites)
    if isinstance(adds, str):  # never a top-level import where torch's is guarded (F14)
        return f"no `import torch` that runs whenever the flags are read: {adds}"
    for at, line in adds:
        prop.edit(path, at, at, line)
    return prop


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    for path in ctx.files_with("GP211"):
        if not path.endswith(".py") or path.endswith("setup.py"):
            continue
        text = ctx.read(path)
        if text is None or "cpp_extension" not in text:
            continue
        found = ctx.of("GP211", path=path)
        prop = _fix(path, text, found)
        if isinstance(prop, str):
            ctx.decline(found, prop)
        elif prop is not None:
            out.append(prop)
    return out
