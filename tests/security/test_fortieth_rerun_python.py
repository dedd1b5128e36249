"""The fortieth re-run (on 17870de), release-workflow and Python findings: the ROCm release
workflow dropped the release step's quoted ``if:`` gate and published on every copied
trigger (F4); comparing the ``on:`` block's nodes followed every alias path (F11: a 761-byte
workflow stalled ``port``; F11b: deep nesting overflowed the recursion); the setup.py fix
added a top-level ``import torch`` to a file that imports torch only under ``try`` (F14: a
torch-less install stopped). A gate gpuport cannot copy as GitHub reads it now declines the
workflow; ``import torch`` goes only right after an import of torch that runs whenever the
edited code does, else the fix declines with the reason."""

from __future__ import annotations

import ast
import builtins
import time
import types
from pathlib import Path
from typing import Any

import yaml

from gpuport.knowledge.release_switches import load_release_switches
from gpuport.port.release_workflows import _same, compose_workflow, read_workflow
from tests.port.helpers import project, run

_PYPROJECT = '[project]\nname = "x"\nversion = "0.1"\n'
_WF = """\
name: Build Wheels (CUDA)

on:
  push:
  pull_request_target:

permissions:
  contents: write

jobs:
  build_wheels:
    name: Build Wheel
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - name: Build Wheel
        run: |
          CMAKE_ARGS="-DGGML_CUDA=on" python -m build --wheel
      - uses: softprops/action-gh-release@v2
        if: "startsWith(github.ref, 'refs/tags/')"
        with:
          files: dist/*
          tag_name: ${{ github.ref_name }}-cu124
        env:
          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
"""
_PLAIN_IF = "        if: startsWith(github.ref, 'refs/tags/')\n"
_QUOTED_IF = "        if: \"startsWith(github.ref, 'refs/tags/')\"\n"


def _reasons(report: object) -> list[str]:
    return [u.reason for u in report.unfixed]  # type: ignore[attr-defined]


def _port_workflow(root: Path, wf: str) -> tuple[str | None, list[str]]:
    project(root, {"pyproject.toml": _PYPROJECT, ".github/workflows/build-wheels-cuda.yaml": wf})
    report = run(root, apply=True, unsafe_fixes=True, verify=False)
    out = root / ".github/workflows/build-wheels-rocm.yaml"
    return (out.read_text(encoding="utf-8") if out.exists() else None), _reasons(report)


# F4 -------------------------------------------------------------------------------------


def test_f4_a_quoted_release_gate_declines_the_workflow(tmp_path: Path) -> None:
    written, reasons = _port_workflow(tmp_path, _WF)
    assert written is None
    assert any("`if:` gate" in r for r in reasons), reasons


def test_f4_a_plain_release_gate_is_still_copied(tmp_path: Path) -> None:
    written, _ = _port_workflow(tmp_path, _WF.replace(_QUOTED_IF, _PLAIN_IF))
    assert written is not None
    steps = yaml.safe_load(written)["jobs"]["build_wheels"]["steps"]
    release = next(s for s in steps if "action-gh-release" in s.get("uses", ""))
    assert release["if"] == "startsWith(github.ref, 'refs/tags/')"


def test_f4_gates_and_inputs_not_copied_decline(tmp_path: Path) -> None:
    plain = _WF.replace(_QUOTED_IF, _PLAIN_IF)
    variants = {
        "job if": plain.replace(
            "    runs-on:", "    if: github.ref == 'refs/heads/main'\n    runs-on:"
        ),
        "environment": plain.replace("    runs-on:", "    environment: release\n    runs-on:"),
        "matrix gate": plain.replace(_PLAIN_IF, "        if: matrix.os != 'windows-2022'\n"),
        "env gate": plain.replace(_PLAIN_IF, "        if: env.RELEASE != 'false'\n"),
        "draft": plain.replace(
            "          files: dist/*\n", "          files: dist/*\n          draft: true\n"
        ),
        "merged step": plain.replace(_PLAIN_IF, '        <<: {if: "false"}\n'),
        "build gate": plain.replace(
            "      - name: Build Wheel\n",
            "      - name: Build Wheel\n        if: github.event_name == 'push'\n",
        ),
    }
    for what, wf in variants.items():
        root = tmp_path / what.replace(" ", "_")
        written, reasons = _port_workflow(root, wf)
        assert written is None, what
        assert any("no ROCm workflow" in r for r in reasons), (what, reasons)


# F11 / F11b -----------------------------------------------------------------------------


def _aliased(levels: int) -> str:
    rows = ["      l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [
        f"      l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels)
    ]
    return _WF.replace(_QUOTED_IF, _PLAIN_IF).replace(
        "on:\n  push:\n  pull_request_target:\n",
        "on:\n  workflow_dispatch:\n    inputs:\n" + "\n".join(rows) + "\n",
    )


def test_f11_nested_aliases_in_on_are_compared_in_linear_time() -> None:
    text = _aliased(8)  # 10^8 paths through the aliases
    start = time.monotonic()
    wf = read_workflow(".github/workflows/w.yaml", text, load_release_switches())
    assert time.monotonic() - start < 3
    assert wf is not None and wf.on_block and wf.on_block[0] == "on:"


def test_f11b_a_deep_on_block_is_no_recursion_error() -> None:
    deep = "[" * 330 + "]" * 330
    text = _WF.replace(_QUOTED_IF, _PLAIN_IF).replace(
        "on:\n  push:\n  pull_request_target:\n", f"on:\n  workflow_dispatch:\n    x: {deep}\n"
    )
    wf = read_workflow(".github/workflows/w.yaml", text, load_release_switches())
    assert wf is not None and wf.on_block


def test_same_pairs_aliases_alike() -> None:
    a = compose_workflow("a: &x [1, 2]\nb: *x\n")
    b = compose_workflow("a: [1, 2]\nb: [1, 2]\n")
    c = compose_workflow("a: &y [1, 2]\nb: *y\n")
    d = compose_workflow("a: &y [1, 2]\nb: [1, 3]\n")
    assert a is not None and b is not None and c is not None and d is not None
    assert _same(a, c) and not _same(a, b) and not _same(c, d)


# F14 ------------------------------------------------------------------------------------

_TRY_SETUP = """\
from setuptools import setup

try:
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
    ext = [CUDAExtension("fastk", ["k.cu"], extra_compile_args={"nvcc": ["--use_fast_math"]})]
    cmd = {"build_ext": BuildExtension}
except ImportError:  # no torch: the pure-Python fallback is installed
    ext, cmd = [], {}

setup(name="fastk", version="0.1", py_modules=["fastk_py"], ext_modules=ext, cmdclass=cmd)
"""
_KERNEL = "#include <cuda_runtime.h>\n__global__ void k(float* x) { x[0] = 1; }\n"


def _run_without_torch(text: str) -> dict[str, Any]:
    """Run a setup.py text where torch is not installed (setuptools stubbed)."""
    called: dict[str, Any] = {}
    stub = types.ModuleType("setuptools")
    stub.setup = lambda **kw: called.update(kw)  # type: ignore[attr-defined]
    real = builtins.__import__

    def fake(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return stub if name == "setuptools" else real(name, *args, **kwargs)

    scope = {"__builtins__": {**vars(builtins), "__import__": fake}}
    exec(compile(text, "setup.py", "exec"), scope)  # noqa: S102 (the test's own stubbed run)
    return called


def test_f14_import_torch_stays_inside_the_guarded_block(tmp_path: Path) -> None:
    project(tmp_path, {"setup.py": _TRY_SETUP, "k.cu": _KERNEL})
    run(tmp_path, apply=True, verify=False)
    text = (tmp_path / "setup.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert not any(
        isinstance(s, ast.Import | ast.ImportFrom) and "torch" in ast.dump(s) for s in tree.body
    )
    assert _run_without_torch(text)["version"] == "0.1"  # a torch-less install still runs
    if text != _TRY_SETUP:  # fixed: the flags chosen by torch.version.hip inside the try
        assert "    import torch  # gpuport" in text and "torch.version.hip" in text


def test_f14_flags_outside_the_guarded_import_decline(tmp_path: Path) -> None:
    setup = _TRY_SETUP.replace(
        '    ext = [CUDAExtension("fastk", ["k.cu"], extra_compile_args={"nvcc": '
        '["--use_fast_math"]})]\n',
        "",
    ).replace(
        'setup(name="fastk"',
        'FLAGS = ["-O3", "--use_fast_math"]\n'
        'ext = [CUDAExtension("fastk", ["k.cu"], extra_compile_args={"nvcc": FLAGS})] '
        "if cmd else []\n"
        'setup(name="fastk"',
    )
    project(tmp_path, {"setup.py": setup, "k.cu": _KERNEL})
    report = run(tmp_path, apply=True, verify=False)
    assert (tmp_path / "setup.py").read_text(encoding="utf-8") == setup
    assert any("import torch" in r for r in _reasons(report)), _reasons(report)


def test_f14_cuda_home_import_stays_inside_the_guarded_block(tmp_path: Path) -> None:
    setup = (
        "from setuptools import setup\n"
        "try:\n"
        "    from torch.utils.cpp_extension import CUDA_HOME\n"
        "    ext = ['k'] if CUDA_HOME is not None else []\n"
        "except ImportError:\n"
        "    ext = []\n"
        'setup(name="x", version="0.1")\n'
    )
    project(tmp_path, {"setup.py": setup, "k.cu": _KERNEL})
    run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    text = (tmp_path / "setup.py").read_text(encoding="utf-8")
    assert _run_without_torch(text)["version"] == "0.1"
    assert "    from torch.utils.cpp_extension import IS_HIP_EXTENSION  # gpuport" in text


def test_f14_a_load_module_with_a_guarded_import_is_not_given_one(tmp_path: Path) -> None:
    module = (
        "try:\n"
        "    from torch.utils.cpp_extension import load\n"
        "except ImportError:\n"
        "    load = None\n"
        "\n"
        "def build():\n"
        '    return load(name="k", sources=["k.cu"], extra_cuda_cflags=["--use_fast_math"])\n'
    )
    project(tmp_path, {"ext.py": module, "k.cu": _KERNEL})
    run(tmp_path, apply=True, verify=False)
    text = (tmp_path / "ext.py").read_text(encoding="utf-8")
    ast.parse(text)
    assert "\nimport torch" not in text and not text.startswith("import torch")


# F19 ------------------------------------------------------------------------------------


def test_f19_a_version_past_the_int_digit_limit_is_not_read(tmp_path: Path) -> None:
    digits = "1" * 5000
    for name, pin in (("vision", f"torchvision==0.{digits}"), ("bounded", f"torch~=2.{digits}")):
        root = tmp_path / name
        index = "--extra-index-url https://download.pytorch.org/whl/cu121\n"
        project(root, {"requirements.txt": index + pin + "\n", "k.cu": _KERNEL})
        run(root, verify=False)  # no ValueError from int() of the digits


# F21 ------------------------------------------------------------------------------------

_INDEX_ONE_LINE = """\
name: Wheels Index
on:
  workflow_run:
    workflows: ["Build Wheels (CUDA)"]
    types: [completed]
jobs:
  index:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Build index
        run: ./scripts/releases-to-pep-503.sh index/whl/cu124 '^[v]?[0-9]+-cu124$'
      - uses: actions/upload-pages-artifact@v3
"""


def test_f21_a_one_line_run_gets_no_second_run_key(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": _PYPROJECT,
        ".github/workflows/build-wheels-cuda.yaml": _WF.replace(_QUOTED_IF, _PLAIN_IF),
        ".github/workflows/generate-index.yaml": _INDEX_ONE_LINE,
        "scripts/releases-to-pep-503.sh": 'echo "<a href=\\"cu124/\\">CUDA 12.4</a><br>"\n',
    }
    project(tmp_path, files)
    report = run(tmp_path, apply=True, unsafe_fixes=True, verify=False)
    index = (tmp_path / ".github/workflows/generate-index.yaml").read_text(encoding="utf-8")
    assert index == _INDEX_ONE_LINE
    assert (tmp_path / ".github/workflows/build-wheels-rocm.yaml").exists()
    fix = next(f for f in report.fixes if f.id.startswith("rocm-release:"))
    assert "one-line `run:`" in (fix.note or "")
