"""Python: a ROCm branch for NVIDIA capability gates (GP205) and a portable tool for a
``nvidia-smi`` status print (GP204). Both are unsafe: they change what runs on ROCm.

* **Capability gates** that ROCm torch answers True where an NVIDIA GPU with the same features
  answers False (``get_device_capability() >= (9, 0)`` on gfx942, which reports (9, 4): the
  Hopper path) get ``and torch.version.hip is None`` (``capability < (9, 0)``, whose True is
  the older path: ``or torch.version.hip is not None``): on CUDA the test is unchanged; on
  ROCm the path meant for newer NVIDIA GPUs is no longer taken. The other direction (a gate that
  ROCm answers False) is left to a person: which AMD GPUs have the feature is a judgement.
* **``nvidia-smi`` for display**: a statement that runs ``nvidia-smi`` with no arguments and
  ignores the result (the project's own ``system("nvidia-smi")`` or ``run(["nvidia-smi"])``; port
  only rewrites that text, it never runs it) runs
  ``amd-smi`` where ``nvidia-smi`` is not installed. Calls that parse its output are left:
  their queries and units have no one-to-one AMD form.
"""

from __future__ import annotations

import ast

from gpuport.port.context import PortContext, Proposal
from gpuport.port.py_imports import foreign_cookie, import_at
from gpuport.scan.finding import Finding

__all__ = ["propose"]

_RUNNERS = {
    ("os", "system"),
    ("subprocess", "run"),
    ("subprocess", "call"),
    ("subprocess", "check_call"),
    ("subprocess", "Popen"),
}


def _starts(text: str) -> list[int]:
    starts = [0]
    for ln in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(ln))
    return starts


def _off(text: str, starts: list[int], line: int, col: int) -> int:
    base = starts[line - 1]
    row = text[base : starts[line] if line < len(starts) else len(text)]
    return base + len(
        row.encode("utf-8", "surrogateescape")[:col].decode("utf-8", "surrogateescape")
    )


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            names.update(a.asname or a.name for a in stmt.names if "." not in a.name or a.asname)
    return names


def _asks_newer(node: ast.Compare) -> bool | None:
    """True for ``capability >= (9, 0)`` (True means the newer NVIDIA path: ROCm must answer
    False), False for ``capability < (9, 0)`` (True means the older path: ROCm must answer
    True), None for a chain or an operator gpuport does not read."""
    if len(node.ops) != 1:
        return None
    op = node.ops[0]
    const_left = isinstance(node.left, ast.Tuple | ast.Constant)
    if isinstance(op, ast.Gt | ast.GtE):
        return not const_left
    if isinstance(op, ast.Lt | ast.LtE):
        return const_left
    return None


def _gates(path: str, text: str, tree: ast.Module, found: list[Finding]) -> Proposal | None:
    if "torch" not in _imports(tree):
        return None
    starts = _starts(text)
    want = {(f.location.line, (f.location.column or 1) - 1): f for f in found}
    prop = Proposal(
        id=f"capability-gate:{path}",
        family="python",
        title=f"{path}: NVIDIA capability gates keep their NVIDIA meaning on ROCm",
        safe=False,
        why="on ROCm the gate now takes the path an NVIDIA GPU of the same class takes; what "
        "runs there changes",
        findings=[],
    )
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        f = want.get((node.lineno, node.col_offset))
        if f is None or "True on" not in f.message:
            continue
        newer = _asks_newer(node)
        if newer is None:
            continue
        s = _off(text, starts, node.lineno, node.col_offset)
        e = _off(text, starts, node.end_lineno or node.lineno, node.end_col_offset or 0)
        new = (
            f"({text[s:e]} and torch.version.hip is None)"
            if newer
            else f"({text[s:e]} or torch.version.hip is not None)"
        )
        prop.edit(path, s, e, new, [f])
        prop.findings.append(f)
    return prop if prop.findings else None


def _smi(path: str, text: str, tree: ast.Module, found: list[Finding]) -> Proposal | str | None:
    """The proposal, None, or why the statements are not rewritten."""
    starts = _starts(text)
    lines = {f.location.line: f for f in found}
    prop = Proposal(
        id=f"nvidia-smi:{path}",
        family="python",
        title=f"{path}: amd-smi where nvidia-smi is not installed",
        safe=False,
        why="where nvidia-smi is missing the statement now runs amd-smi instead of failing: "
        "code that relied on the failure (a GPU probe) behaves differently",
        findings=[],
    )
    for stmt in ast.walk(tree):
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
            continue
        call = stmt.value
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and (func.value.id, func.attr) in _RUNNERS
            and call.args
        ):
            continue
        arg = call.args[0]
        if isinstance(arg, ast.List) and len(arg.elts) == 1:
            arg = arg.elts[0]
        if not (isinstance(arg, ast.Constant) and arg.value == "nvidia-smi"):
            continue
        f = lines.get(arg.lineno)
        if f is None:
            continue
        s = _off(text, starts, arg.lineno, arg.col_offset)
        e = _off(text, starts, arg.end_lineno or arg.lineno, arg.end_col_offset or 0)
        quote = text[s]
        if text[s:e] != f"{quote}nvidia-smi{quote}" or quote not in "\"'":
            continue  # a prefixed (r"", u"") or implicitly joined literal: not rewritten
        nv, amd = f"{quote}nvidia-smi{quote}", f"{quote}amd-smi{quote}"
        new = f"({nv} if shutil.which({nv}) else {amd})"
        prop.edit(path, s, e, new, [f])
        prop.findings.append(f)
    if not prop.findings:
        return None
    if "shutil" not in _imports(tree):
        line = "import shutil  # gpuport: GP204 shutil.which picks the GPU tool\n"
        at = import_at(tree, text, starts, line)  # below a shebang or cookie (F25)
        if at is None:
            return "no place for `import shutil` that Python reads as one import"
        prop.edit(path, at[0], at[0], at[1])
    return prop


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    for path in ctx.files_with("GP204", "GP205"):
        if not path.endswith((".py", ".pyi")):
            continue
        text = ctx.read(path)
        if text is None:
            continue
        if (why := foreign_cookie(text)) is not None:
            ctx.decline(ctx.of("GP204", "GP205", path=path), f"not edited: {why}")
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for make, rule in ((_gates, "GP205"), (_smi, "GP204")):
            found = ctx.of(rule, path=path)
            if found:
                prop = make(path, text, tree, found)
                if isinstance(prop, str):
                    ctx.decline(found, prop)
                elif prop is not None:
                    out.append(prop)
    return out
