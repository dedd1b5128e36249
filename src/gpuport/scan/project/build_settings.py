"""Target switches of a setup.py, read with the value a ROCm build gives them (issue 24).

A setup.py that builds its native engine only when a target-device setting equals the CUDA
value (``if os.getenv("X_TARGET_DEVICE", "cuda") == "cuda":``, ``if _is_cuda():`` with
``def _is_cuda(): return get_target_device() == "cuda"``, ``TARGET = envs.X_TARGET_DEVICE``)
leaves that engine out of a ROCm build whose install docs give the ROCm value
(``X_TARGET_DEVICE=rocm pip install .``). This module knows the strings such settings hold on
a ROCm build: the value the project's docs, READMEs or container recipes give the setting
(:func:`gpuport.scan.project.routes_docs.rocm_settings`), and the functions of the file that
only return an expression (``get_target_device()``, ``_is_hip()``), so that tests through
them are evaluated too. Without a documented value, a platform-named setting (target,
device, backend, platform) is not ``"cuda"`` on ROCm by convention: that is in
:func:`build_rocm_value.rocm_value`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuport import pyparse, textre
from gpuport.intervals import first_holding
from gpuport.scan.project.backend_switches import switch_strings

__all__ = ["Known", "dotted_name", "env_name", "evidence_at", "known_of"]


def evidence_at(ranges: Sequence[tuple[int, int, str]], line: int | None) -> str | None:
    """The evidence of the first (first line, last line, evidence) range holding ``line``: a
    binary search in an index built once per list (a search of every range per finding was
    quadratic: sixteenth re-run)."""
    if line is None:
        return None
    return first_holding(ranges, line)


def dotted_name(node: ast.AST) -> str | None:
    """``torch.version.hip`` for that expression, a call's callee for a call; else None (a
    call inside the chain ends it: ``f().x`` is ``x``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = None if isinstance(node.value, ast.Call) else dotted_name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return None


def env_name(node: ast.expr) -> str | None:
    """The environment variable an expression reads: ``os.getenv("X", d)``,
    ``os.environ.get("X", d)``, ``os.environ["X"]``, ``envs.X`` (a settings module)."""
    if isinstance(node, ast.Call) and node.args:
        name = dotted_name(node.func) or ""
        first = node.args[0]
        if (
            name.endswith(("getenv", "environ.get"))
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
        ):
            return first.value
    if isinstance(node, ast.Subscript) and (dotted_name(node.value) or "").endswith("environ"):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("envs", "env", "settings")
        and node.attr.isupper()
    ):
        return node.attr
    return None


@dataclass
class Known:
    """What a ROCm build's setup.py run knows: documented settings, string names, helpers."""

    #: environment variable -> its value on a ROCm build (from the project's docs)
    settings: dict[str, str] = field(default_factory=dict)
    #: module-level name -> environment variable it was read from (``TARGET = os.getenv(..)``)
    names: dict[str, str] = field(default_factory=dict)
    #: function name -> the expression it returns (functions that only return)
    returns: dict[str, ast.expr] = field(default_factory=dict)
    #: CUDA switches named beside their HIP/ROCm twin in the file (``"X_USE_CUDA"`` and
    #: ``"X_USE_ROCM"``): settings the ROCm route leaves off
    cuda_switches: frozenset[str] = frozenset()
    #: (id of a returned expression, flags) -> its ROCm value, worked out once
    values: dict[tuple[int, tuple[tuple[str, bool | None], ...]], bool | None] = field(
        default_factory=dict
    )

    def setting_of(self, node: ast.expr, depth: int = 0) -> str | None:
        """The environment variable behind ``node`` (directly, through a name, or through a
        function that returns it), or None."""
        if depth > 8:
            return None
        var = env_name(node)
        if var is not None:
            return var
        if isinstance(node, ast.Name) and node.id in self.names:
            return self.names[node.id]
        if isinstance(node, ast.Call) and not node.args:
            fn = dotted_name(node.func) or ""
            body = self.returns.get(fn.rsplit(".", 1)[-1])
            if body is not None:
                return self.setting_of(body, depth + 1)
        return None

    def string_value(self, node: ast.expr) -> str | None:
        """The string ``node`` holds on a ROCm build, when the docs give its setting one."""
        var = self.setting_of(node)
        return self.settings.get(var) if var is not None else None

    def returned(self, call: ast.Call) -> ast.expr | None:
        """The expression a call of a return-only function of the file stands for."""
        if call.args or call.keywords:
            return None
        fn = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
        return self.returns.get(fn)


def known_of(tree: ast.Module, settings: dict[str, str]) -> Known:
    """Collect the return-only functions and the names read from the environment."""
    known = Known(settings=dict(settings))
    strings: set[str] = set()
    for node in pyparse.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if len(node.value) < 64 and _IDENT.fullmatch(node.value):
                strings.add(node.value)
            continue
        if isinstance(node, ast.FunctionDef) and not node.args.args:
            body = [s for s in node.body if not _is_docstring(s)]
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                known.returns[node.name] = body[0].value
    for stmt in tree.body:  # module level: TARGET = os.getenv("X_TARGET_DEVICE", "cuda")
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            var = env_name(stmt.value)
            if isinstance(target, ast.Name) and var is not None:
                known.names[target.id] = var
    known.cuda_switches = switch_strings(strings)
    return known


_IDENT = textre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
