"""The forty-first re-run (on b7c98ce), port findings: the unsafe ROCm release workflow kept
only a job's own ``if:``/``environment:`` as gates, so a release job gated through ``needs:``
on a tag-checking job, or through a step that fails off tags (``test "$GITHUB_REF_TYPE" =
tag``), was copied into a workflow that publishes on every push (F1); the safe setup.py
flag edit read ``torch.version.hip`` in a function whose own later ``import
torch.utils.cpp_extension`` makes ``torch`` a local, so ``python setup.py`` raised
UnboundLocalError (F16). Such a gate now declines the workflow with the reason, and the edit
goes only where ``torch`` is the import's name."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path
from typing import Any

import yaml

from gpuport.port.fix_setup import torch_imports
from tests.port.helpers import project, run

_PYPROJECT = '[project]\nname = "x"\nversion = "0.1"\n'
_WF = """\
name: Build Wheels (CUDA)

on:
  push:
  workflow_dispatch:

permissions:
  contents: write

jobs:
  build_wheels:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - name: Build Wheel
        run: |
          export CMAKE_ARGS="-DGGML_CUDA=on"
          python -m build --wheel
      - uses: softprops/action-gh-release@v2
        if: startsWith(github.ref, 'refs/tags/')
        with:
          files: dist/*
          tag_name: ${{ github.ref_name }}-cu124
"""
_NEEDS = """\
  check_tag:
    runs-on: ubuntu-latest
    if: startsWith(github.ref, 'refs/tags/v')
    steps:
      - run: echo "releasing ${{ github.ref_name }}"

  build_wheels:
    needs: check_tag
"""
_CHECKOUT = "      - uses: actions/checkout@v4\n"


def _port_workflow(root: Path, wf: str) -> tuple[str | None, list[str]]:
    project(root, {"pyproject.toml": _PYPROJECT, ".github/workflows/build-wheels-cuda.yaml": wf})
    report = run(root, apply=True, unsafe_fixes=True, verify=False)
    out = root / ".github/workflows/build-wheels-rocm.yaml"
    written = out.read_text(encoding="utf-8") if out.exists() else None
    return written, [u.reason for u in report.unfixed]


# F1 -------------------------------------------------------------------------------------


def test_f1_a_release_gated_through_needs_declines(tmp_path: Path) -> None:
    written, _ = _port_workflow(tmp_path / "plain", _WF)  # the ungated-by-needs one is copied
    assert written is not None
    release = yaml.safe_load(written)["jobs"]["build_wheels"]["steps"][-1]
    assert release["if"] == "startsWith(github.ref, 'refs/tags/')"
    written, reasons = _port_workflow(tmp_path / "needs", _WF.replace("  build_wheels:\n", _NEEDS))
    assert written is None
    assert any("no ROCm workflow" in r and "needs:" in r for r in reasons), reasons


def test_f1_gate_steps_and_trigger_reads_decline(tmp_path: Path) -> None:
    variants = {
        "ref type step": _CHECKOUT + '      - run: test "$GITHUB_REF_TYPE" = tag\n',
        "powershell ref": _CHECKOUT
        + "      - run: if ($env:github_ref -notlike 'refs/tags/*') { exit 1 }\n",
        "step if": _CHECKOUT + "      - if: github.ref_type != 'tag'\n        run: exit 1\n",
        "input step": _CHECKOUT + '      - run: test "${{ inputs.publish }}" = true\n',
        "tagged head": _CHECKOUT + "      - run: git describe --exact-match --tags HEAD\n",
        "step env": _CHECKOUT
        + "      - env:\n          REF: ${{ github.ref }}\n        run: ./check.sh\n",
    }
    wfs = {what: _WF.replace(_CHECKOUT, step) for what, step in variants.items()}
    wfs["workflow env"] = _WF.replace(
        "permissions:",
        "env:\n  IS_TAG: ${{ startsWith(github.ref, 'refs/tags/') }}\n\npermissions:",
    ).replace(_CHECKOUT, _CHECKOUT + '      - run: test "$IS_TAG" = true\n')
    for what, wf in wfs.items():
        written, reasons = _port_workflow(tmp_path / what.replace(" ", "_"), wf)
        assert written is None, what
        assert any("no ROCm workflow" in r for r in reasons), (what, reasons)
    # a runner-only step condition is no gate on the Linux job: still copied
    runner = _WF.replace(
        _CHECKOUT, _CHECKOUT + "      - if: runner.os == 'Windows'\n        run: echo win\n"
    )
    written, _ = _port_workflow(tmp_path / "runner", runner)
    assert written is not None


# F16 ------------------------------------------------------------------------------------

_SHADOW_SETUP = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


def get_extensions():
    nvcc_flags = ["-O3", "--use_fast_math", "-Xptxas=-v"]
    import torch.utils.cpp_extension
    print("building with", torch.utils.cpp_extension.CUDA_HOME)
    return [CUDAExtension("k", ["k.cu"], extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_flags})]


setup(name="k", version="1", ext_modules=get_extensions(), cmdclass={"build_ext": BuildExtension})
"""
_KERNEL = "__global__ void k(float* x) { x[0] = 1; }\n"


def _run_with_stub_torch(text: str) -> dict[str, Any]:
    """Run a setup.py text with a stand-in CUDA torch and setuptools."""
    torch: Any = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip=None, cuda="12.1")
    utils: Any = types.ModuleType("torch.utils")
    ext: Any = types.ModuleType("torch.utils.cpp_extension")
    ext.CUDA_HOME, ext.BuildExtension = "/usr/local/cuda", object
    ext.CUDAExtension = lambda *a, **k: (a, k)
    torch.utils, utils.cpp_extension = utils, ext
    called: dict[str, Any] = {}
    tools: Any = types.ModuleType("setuptools")
    tools.setup = lambda **kw: called.update(kw)
    stubs = {"torch": torch, "torch.utils": utils, "torch.utils.cpp_extension": ext}
    saved = {n: sys.modules.get(n) for n in [*stubs, "setuptools"]}
    sys.modules.update({**stubs, "setuptools": tools})
    try:
        exec(compile(text, "setup.py", "exec"), {"__name__": "__main__"})  # noqa: S102
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m
    return called


def test_f16_no_flag_edit_where_a_function_binds_torch_itself(tmp_path: Path) -> None:
    no_top = _SHADOW_SETUP.replace("import torch\nfrom setuptools", "from setuptools")
    for what, setup in (("bound", _SHADOW_SETUP), ("inserted", no_top)):
        root = tmp_path / what
        assert _run_with_stub_torch(setup)["version"] == "1"
        project(root, {"setup.py": setup, "k.cu": _KERNEL})
        report = run(root, apply=True, verify=False)
        text = (root / "setup.py").read_text(encoding="utf-8")
        assert _run_with_stub_torch(text)["version"] == "1", what  # no UnboundLocalError
        assert text == setup, what
        assert any("binds `torch` itself" in u.reason for u in report.unfixed), what
    # without the local import the function reads the module's torch: the edit is made
    plain = _SHADOW_SETUP.replace("    import torch.utils.cpp_extension\n", "")
    project(tmp_path / "plain", {"setup.py": plain, "k.cu": _KERNEL})
    run(tmp_path / "plain", apply=True, verify=False)
    text = (tmp_path / "plain" / "setup.py").read_text(encoding="utf-8")
    assert "torch.version.hip" in text
    assert _run_with_stub_torch(text)["version"] == "1"


def test_f16_torch_imports_checks_each_scope_around_the_edit() -> None:
    shadows = {
        "argument": "import torch\ndef f(torch):\n    x = 1\n",
        "global": "import torch\ndef f():\n    global torch\n    x = 1\n    torch = 2\n",
        "nested": "import torch\ndef f():\n    def g():\n        x = 1\n    import torch.nn\n"
        "    return torch\n",
        "lambda": "import torch\nh = lambda torch: [\n    1]\n",
        "rebound": "import torch\ntorch = None\nx = 1\n",
        "except": "import torch\ndef f():\n    try:\n        pass\n    except E as torch:\n"
        "        pass\n    x = 1\n",
    }
    for what, text in shadows.items():
        tree = ast.parse(text)
        line = next(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant))
        got = torch_imports(tree, text, _starts(text), [(line, line)])
        assert isinstance(got, str), (what, got)
    ok = "import torch\ndef f():\n    import torch.nn\n    x = 1\n"  # its own import first
    assert torch_imports(ast.parse(ok), ok, _starts(ok), [(4, 4)]) == []


def _starts(text: str) -> list[int]:
    out = [0]
    for i, c in enumerate(text):
        if c == "\n":
            out.append(i + 1)
    return out
