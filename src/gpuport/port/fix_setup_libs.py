"""GP407 in a torch extension's setup.py: the CUDA runtime libraries a ROCm build must not link.

``libraries += ["cudart", "c10_cuda"]`` (stable-fast-3d's texture baker, J59; its twin in
stable-point-aware-3d, J12) makes a ROCm torch build fail to link: ROCm has no ``libcudart``
nor ``libc10_cuda``, and torch's ``CUDAExtension`` already links the HIP runtime and
``c10_hip`` when it builds for ROCm. The real ports leave those names out on ROCm. The fix
writes the list as ``([] if torch.version.hip else ["cudart", "c10_cuda"])``: ``torch.version.hip``
is None on CUDA (and CPU) torch, so every other build evaluates and links what it did; it is
*safe*.

Only a list (or tuple) of plain strings, every one of them a library torch links itself on
ROCm (:data:`RUNTIME_LIBS`), given to ``libraries`` (``libraries += [...]``,
``libraries = [...]``, ``libraries.extend([...])``, ``libraries=[...]`` in a call). A list that
also names cuBLAS, cuFFT... needs the HIP library in its place, a person's call; a list
already under a ROCm test, or a file Python would read otherwise, is left as it is. A tuple
keeps its type on ROCm (``()``) and a bare one (``libraries = "cudart", "c10_cuda"``) is put in
parentheses first (forty-third re-run F9). A list on a line that also links another NVIDIA
library outside it (``extra_link_args=["-lcublas"]``) is declined: the scan's one GP407 for the
line covers that link too, and claiming it would hide it (forty-third re-run F7). Text and
``ast`` only: nothing of the project is run.
"""

from __future__ import annotations

import ast

from gpuport.port.context import PortContext, Proposal
from gpuport.port.fix_setup import _span as span  # the offsets of a node, UTF-8 columns read
from gpuport.port.fix_setup import parse, torch_imports
from gpuport.scan.finding import Finding
from gpuport.scan.rules.build.common import CUDA_LIB_NAMES, LINK

__all__ = ["RUNTIME_LIBS", "propose"]

#: what torch links itself on ROCm, in HIP form, for a CUDAExtension
RUNTIME_LIBS = frozenset(
    {"cudart", "cudart_static", "cuda", "c10_cuda", "torch_cuda", "torch_cuda_cu", "torch_cuda_cpp"}
)


def _target(node: ast.AST) -> bool:
    """Whether ``node`` names a ``libraries`` list (``libraries``, ``self.libraries``)."""
    if isinstance(node, ast.Name):
        return node.id == "libraries"
    return isinstance(node, ast.Attribute) and node.attr == "libraries"


def _given(node: ast.AST) -> ast.AST | None:
    """The value ``node`` gives to ``libraries``, or None."""
    if isinstance(node, ast.AugAssign):
        return node.value if isinstance(node.op, ast.Add) and _target(node.target) else None
    if isinstance(node, ast.Assign):
        return node.value if len(node.targets) == 1 and _target(node.targets[0]) else None
    if isinstance(node, ast.keyword):
        return node.value if node.arg == "libraries" else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "extend"
        and _target(node.func.value)
        and len(node.args) == 1
    ):
        return node.args[0]
    return None


def _lists(tree: ast.Module) -> list[ast.List | ast.Tuple]:
    """The list/tuple literals a statement or call gives to ``libraries``."""
    return [v for node in ast.walk(tree) if isinstance(v := _given(node), ast.List | ast.Tuple)]


def _names(node: ast.List | ast.Tuple) -> list[str] | None:
    names = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names if len(names) == len(node.elts) else None


def _empty(node: ast.List | ast.Tuple) -> str:
    """The empty value of the literal's own type: ``()`` for a tuple, ``[]`` for a list (a
    later ``libraries + ("m",)`` keeps working on ROCm)."""
    return "()" if isinstance(node, ast.Tuple) else "[]"


def _operand(node: ast.List | ast.Tuple, starts: list[int], text: str) -> str:
    """The literal's text as one operand of the conditional: a bare tuple
    (``libraries = "cudart", "c10_cuda"``, ``libraries += "cudart",``) in parentheses, or the
    conditional would take only its first item (forty-third re-run F9)."""
    s, e = span(node, starts, text)
    if isinstance(node, ast.Tuple) and node.elts and span(node.elts[0], starts, text)[0] == s:
        return f"({text[s:e]})"
    return text[s:e]


def _links_by_line(tree: ast.Module) -> dict[int, list[tuple[ast.Constant, str]]]:
    """The strings the scan reads as an NVIDIA link (``"-lcublas"``, ``"cudart"``), by each
    line they cover, with the name read."""
    out: dict[int, list[tuple[ast.Constant, str]]] = {}
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Constant) and isinstance(n.value, str)):
            continue
        m = LINK.search(n.value)
        name = m.group(0) if m is not None else n.value if n.value in CUDA_LIB_NAMES else None
        if name is not None:
            for ln in range(n.lineno, (n.end_lineno or n.lineno) + 1):
                out.setdefault(ln, []).append((n, name))
    return out


def _other_link(
    links: dict[int, list[tuple[ast.Constant, str]]], node: ast.AST, lines: set[int]
) -> str | None:
    """A link on one of ``lines`` outside ``node`` (``extra_link_args=["-lcublas"]`` beside
    ``libraries=["cudart"]``), or None. The scan reports one GP407 a line, so that link shares
    the finding this fix would claim (forty-third re-run F7)."""
    inside = {id(n) for n in ast.walk(node)}
    for ln in sorted(lines):
        for const, name in links.get(ln, ()):
            if id(const) not in inside:
                return name
    return None


def _fix(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    got = parse(text)
    if got is None:
        return None
    tree, starts, guarded = got
    links = _links_by_line(tree)
    prop = Proposal(
        id=f"setup-hip-libs:{path}",
        family="setup.py",
        title=f"{path}: no CUDA runtime libraries in the ROCm build's link",
        safe=True,
        why="torch.version.hip is None on CUDA torch: a CUDA build links what it did; ROCm "
        "torch links the HIP runtime and c10_hip itself, and has no libcudart to link",
        findings=[],
    )
    sites: list[tuple[int, int]] = []
    for node in _lists(tree):
        lo, hi = node.lineno, node.end_lineno or node.lineno
        hits = [f for f in found if f.location.line is not None and lo <= f.location.line <= hi]
        names = _names(node)
        if not hits or names is None or not names:
            continue
        if any(a <= lo and hi <= b for a, b in guarded):
            continue  # already under a ROCm test
        others = sorted(set(names) - RUNTIME_LIBS)
        if others:
            ctx.decline(
                hits,
                f"{path}:{lo} also links {', '.join(others)}: the ROCm build needs the HIP "
                "library in its place (hipBLAS, hipFFT...), a person's call",
            )
            continue
        on = {f.location.line for f in hits if f.location.line is not None}
        if (other := _other_link(links, node, on)) is not None:
            ctx.decline(
                hits,
                f"{path}:{lo}: the line's one GP407 finding also covers {other}, linked outside "
                "this list: rewriting the list would hide that link; a person's call",
            )
            continue
        new = f"({_empty(node)} if torch.version.hip else {_operand(node, starts, text)})"
        prop.edit(path, *span(node, starts, text), new, hits)
        prop.findings += hits
        sites.append((lo, hi))
    if not sites:
        return None
    adds = torch_imports(tree, text, starts, sites)
    if isinstance(adds, str):
        ctx.decline(prop.findings, f"no place for `import torch`: {adds}")
        return None
    for at, insert in adds:
        prop.edit(path, at, at, insert)
    return prop


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    for path in ctx.files_with("GP407"):
        if not path.endswith("setup.py"):
            continue
        text = ctx.read(path)
        if text is None:
            continue
        got = _fix(ctx, path, text, ctx.of("GP407", path=path))
        if got is not None:
            out.append(got)
    return out
