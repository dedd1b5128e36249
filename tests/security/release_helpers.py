"""The CUDA release workflow the security re-runs of the unsafe ROCm release fix start from
(``port/release_gates``): a wheel job on tags and dispatch that publishes with
``softprops/action-gh-release``, with a gate step put in place of ``GATE``."""

from __future__ import annotations

from pathlib import Path

from tests.port.helpers import project, run

PYPROJECT = '[project]\nname = "x"\nversion = "0.1"\n'
CUDA_RELEASE = """\
name: Build Wheels (CUDA)
on:
  workflow_dispatch:
  push:
    tags: ["v*"]
permissions:
  contents: write
jobs:
  build_wheels:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
GATE
      - name: Build Wheel
        run: |
          export CMAKE_ARGS="-DGGML_CUDA=on"
          python -m build --wheel
      - uses: softprops/action-gh-release@v2
        with:
          files: dist/*
          tag_name: ${{ github.ref_name }}-cu124
"""


def release(root: Path, gate: str, files: dict[str, str]) -> tuple[str | None, list[str]]:
    """Write the project, run ``port --unsafe-fixes --apply``: the ROCm workflow written (or
    None) and the reasons of what was left."""
    wf = CUDA_RELEASE.replace("GATE\n", gate)
    project(
        root,
        {"pyproject.toml": PYPROJECT, ".github/workflows/build-wheels-cuda.yaml": wf, **files},
    )
    report = run(root, apply=True, unsafe_fixes=True, verify=False)
    out = root / ".github/workflows/build-wheels-rocm.yaml"
    return (out.read_text() if out.exists() else None), [u.reason for u in report.unfixed]


def declined(root: Path, gate: str, files: dict[str, str]) -> None:
    """The ROCm release workflow is not written, and the report says why."""
    text, reasons = release(root, gate, files)
    assert text is None, root.name
    assert any("no ROCm workflow" in r for r in reasons), (root.name, reasons)


def written(root: Path, gate: str, files: dict[str, str]) -> None:
    """The ROCm release workflow is written."""
    text, reasons = release(root, gate, files)
    assert text is not None and "-rocm" in text, (root.name, reasons)
