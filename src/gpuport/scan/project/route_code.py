"""A ROCm route the project's own Python code holds: an AMD backend package, or an installer
script that installs the ROCm build of a package.

facefusion documents no ROCm route in a README, Dockerfile or build file; its route is its
installer, ``python install.py rocm`` (``facefusion/installer.py``: a choice -> package table
with ``onnxruntime-rocm`` and ``onnxruntime-migraphx``, installed with pip). Without it the
app was judged as a project with no route (issue 24, twenty-second sample, its one wrong
verdict). An installer is a Python file whose name says so (``install*.py``,
``*installer*.py``, ``setup_env*.py``, ``launch*.py``) at most two folders deep, that runs
pip and names a ROCm build: a ROCm wheel index (``download.pytorch.org/whl/rocm``,
``repo.radeon.com``, ``repo.amd.com/rocm``), a ``+rocm`` version, or a package whose name is
AMD's build of another (``onnxruntime-rocm``, ``onnxruntime-migraphx``, ``tensorflow-rocm``,
``jax-rocm``...). Only the installer's code is read, its string constants (fortieth re-run
F9: a comment naming ``+rocm6.0``, even "AMD is NOT supported", made a route): not comments,
docstrings or a string that says ROCm is not supported, however the denial is spelled
(routes_docs' ``NEGATION``: "aren't supported", "won't work", "no support for AMD"; forty-first
re-run F14); an installer Python cannot parse holds no route. Text only: nothing is imported
or run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from gpuport import fileio, pyparse, textre
from gpuport.scan.model import RouteEvidence
from gpuport.scan.project.routes_docs import NEGATION
from gpuport.scan.project.vendor_folders import amd_packages

__all__ = ["code_routes"]

_AMD_PACKAGE = (
    "a backend package for AMD/ROCm beside the NVIDIA one: the project loads it on AMD GPUs"
)
_INSTALLER = textre.compile(r"^(?:[\w-]*install[\w-]*|setup_env[\w-]*|launch[\w-]*)\.py$", re.I)
_ROCM_BUILD = textre.compile(
    r"download\.pytorch\.org/whl/rocm[\d.]*|repo\.radeon\.com|repo\.amd\.com/rocm|\+rocm\d[\d.]*"
    r"|[\"'](?:onnxruntime-(?:rocm|migraphx)|tensorflow-rocm|jax-rocm\w*|jax_rocm\w*"
    r"|cupy-rocm[\w-]*|paddlepaddle-rocm|pytorch-triton-rocm)[\"'=<>~!\s]",
    re.I,
)
_PIP = textre.compile(r"[\"']pip3?[\"']|\bpip3?\s+install\b|[\"']install[\"']")
_MAX_BYTES = 1 << 20
_MOST_FILES = 64


def code_routes(root: Path, python: list[str]) -> list[RouteEvidence]:
    """Route evidence from the project's Python files (see the module docstring)."""
    if not root.is_dir():
        return []
    out = [
        RouteEvidence(kind="code", path=f"{pkg}/", line=None, detail=_AMD_PACKAGE)
        for pkg in amd_packages(root, python)
    ]
    installers = [
        rel for rel in python if rel.count("/") <= 2 and _INSTALLER.match(rel.rsplit("/", 1)[-1])
    ]
    for rel in installers[:_MOST_FILES]:
        text = fileio.read_text_or_none(root / rel, limit=_MAX_BYTES, root=root)
        if text is None or not _PIP.search(text) or not _ROCM_BUILD.search(text):
            continue
        strings = _strings(text)
        if not any(_PIP.search(s) for _, s in strings):
            continue
        found = next(
            ((n, m) for n, s in strings if (m := _ROCM_BUILD.search(s)) and not NEGATION.search(s)),
            None,
        )
        if found is None:
            continue
        line, m = found
        what = m.group(0).strip("\"' =<>~!")
        out.append(
            RouteEvidence(
                kind="code",
                path=rel,
                line=line,
                detail=f"the project's installer installs a ROCm build ({what})",
                install=True,
            )
        )
    return out


def _strings(text: str) -> list[tuple[int, str]]:
    """The string constants of a Python text (line, the string quoted, as the patterns read
    it), docstrings and other bare string statements aside; none where it is not parsed."""
    try:
        tree = pyparse.parse(text)
    except SyntaxError:
        return []
    bare = {
        id(node.value)
        for node in pyparse.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        (node.lineno, f'"{node.value}"')
        for node in pyparse.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
    ]
