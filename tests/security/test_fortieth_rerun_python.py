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
