"""The forty-second re-run (on 862ddfa), port findings: the *safe* 64-bit full-mask rewrite
was applied to a mask constant also used as data, when the data use went through a
``#define`` alias, shared a line with another constant's declaration, or sat in a host ``.c``
file (F6); the unsafe ROCm release workflow dropped a release job's step gating on the branch
by ``git branch --show-current`` or, in ``actions/github-script``, on ``context.ref``, so
the copy published on every tag push (F7). Both now decline with the reason."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortReport
from tests.port.helpers import fix_ids, project, run

# F6 -------------------------------------------------------------------------------------

_KERNEL = """\
#include <cuda_runtime.h>
#include "masks.h"
__global__ void k(unsigned *out, const float *in) {
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(FULL_MASK, v, o);
  unsigned bits = out[threadIdx.x];
  USE
}
"""


def _masks(root: Path, files: dict[str, str]) -> PortReport:
    project(root, files)
    return run(root, apply=True, verify=False)


def _reasons(report: PortReport) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.path == "masks.h"]


def test_f6_a_mask_also_used_as_data_anywhere_keeps_its_32_bits(tmp_path: Path) -> None:
    header = "#pragma once\n#define FULL_MASK 0xffffffff\n"
    alias = header + "#define ALL_SET FULL_MASK\n"
    forms = {
        "alias": {
            "masks.h": alias,
            "k.cu": _KERNEL.replace("USE", "if (bits == ALL_SET) out[threadIdx.x] = (unsigned)v;"),
        },
        "declaration on the line": {
            "masks.h": header,
            "k.cu": _KERNEL.replace(
                "USE", "const unsigned none = ~0u; if (bits == FULL_MASK) out[0] = none;"
            ),
        },
        "host c file": {
            "masks.h": header,
            "k.cu": _KERNEL.replace("USE", "out[threadIdx.x] = (unsigned)v + bits;"),
            "host.c": '#include "masks.h"\nint all_set(unsigned b) { return b == FULL_MASK; }\n',
        },
    }
    for what, files in forms.items():
        root = tmp_path / what.replace(" ", "_")
        report = _masks(root, files)
        assert "full-mask:masks.h" not in fix_ids(report), what
        assert (root / "masks.h").read_text() == files["masks.h"], what
        assert any("used" in r and "as data" in r for r in _reasons(report)), what
    # an alias used only as a mask, and guarded / tested definitions, are still widened
    guarded = (
        "#pragma once\n#ifndef FULL_MASK\n#define FULL_MASK 0xffffffff\n#endif\n"
        "#if defined(FULL_MASK)\n#define ALL_SET (FULL_MASK)\n#endif\n"
    )
    root = tmp_path / "mask_only"
    report = _masks(
        root,
        {
            "masks.h": guarded,
            "k.cu": _KERNEL.replace("USE", "v += __shfl_xor_sync(ALL_SET, v, 1); out[0] = bits;"),
            "host.c": "int f(int a) { return a; }\n",
        },
    )
    assert "full-mask:masks.h" in fix_ids(report, applied=True)
    assert "#define FULL_MASK GPUPORT_FULL_MASK" in (root / "masks.h").read_text()


# F7 -------------------------------------------------------------------------------------

_PYPROJECT = '[project]\nname = "x"\nversion = "0.1"\n'
_WF = """\
name: Build Wheels (CUDA)
on:
  push:
    tags: ["v*"]
  workflow_dispatch:
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


def _release(root: Path, gate: str) -> tuple[str | None, list[str]]:
    wf = _WF.replace("GATE\n", gate)
    project(root, {"pyproject.toml": _PYPROJECT, ".github/workflows/build-wheels-cuda.yaml": wf})
    report = run(root, apply=True, unsafe_fixes=True, verify=False)
    out = root / ".github/workflows/build-wheels-rocm.yaml"
    return (out.read_text() if out.exists() else None), [u.reason for u in report.unfixed]


def test_f7_a_branch_gate_asked_of_git_or_a_script_declines_the_rocm_release(
    tmp_path: Path,
) -> None:
    gates = {
        "git branch": '      - run: |\n          [ "$(git branch --show-current)" = main ] '
        "|| exit 1\n",
        "rev-parse": '      - run: test "$(git rev-parse --abbrev-ref HEAD)" = main\n',
        "github-script": "      - uses: actions/github-script@v7\n        with:\n"
        "          script: |\n            if (context.ref !== 'refs/heads/main') "
        "core.setFailed('not main')\n",
        "script destructuring": "      - uses: actions/github-script@v7\n        with:\n"
        "          script: |\n            const { ref } = context\n"
        "            if (ref !== 'refs/heads/main') core.setFailed('no')\n",
    }
    for what, gate in gates.items():
        written, reasons = _release(tmp_path / what.replace(" ", "_"), gate)
        assert written is None, what
        assert any("no ROCm workflow" in r for r in reasons), (what, reasons)
    # setup steps that use git without asking which branch or tag HEAD is: still copied
    setup = (
        "      - run: |\n          apt-get install -y git cmake\n"
        "          git config --global --add safe.directory '*'\n"
        "          git submodule update --init\n"
        '          echo "SHA=$(git rev-parse --short HEAD)" >> "$GITHUB_ENV"\n'
    )
    written, _ = _release(tmp_path / "setup", setup)
    assert written is not None and "-rocm" in written
