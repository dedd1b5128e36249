"""The forty-third re-run (on 6a25bc3), port findings F1 and F17: the unsafe ROCm release
workflow dropped a release gate that lived in a project script the CUDA job runs
(``./scripts/check_release.sh`` running ``git describe --exact-match``) or in a local
composite action, so the copy published from any dispatched branch (F1); the *safe* 64-bit
full-mask rewrite missed a data use of the mask in a file ``#include``d under another suffix
(``check.def``, ``.cuinc``, ``.cu.inc``) (F17). Both now decline with the reason."""

from __future__ import annotations

from pathlib import Path

from gpuport.port import PortReport
from tests.port.helpers import fix_ids, project, run
from tests.security.release_helpers import release as _release

# F1 -------------------------------------------------------------------------------------

_CHECK = (
    "#!/bin/sh\n# only publish from release tags\n"
    "git describe --exact-match --tags HEAD || exit 1\n"
)


def test_f1_a_release_gate_in_a_project_script_or_local_action_declines_the_rocm_release(
    tmp_path: Path,
) -> None:
    action = (
        "name: check-tag\nruns:\n  using: composite\n  steps:\n"
        "    - shell: bash\n      run: git describe --exact-match --tags HEAD\n"
    )
    nested = '#!/bin/bash\nset -e\nbash "$(dirname "$0")/lib/tag.sh"\n'
    forms = {
        "script": (
            "      - run: ./scripts/check_release.sh\n",
            {"scripts/check_release.sh": _CHECK},
        ),
        "script via bash": (
            "      - run: bash scripts/check_release.sh\n",
            {"scripts/check_release.sh": _CHECK},
        ),
        "script calling a script": (
            "      - run: ./ci/check\n",
            {"ci/check": nested, "ci/lib/tag.sh": _CHECK},
        ),
        "python script": (
            "      - run: python tools/check_tag.py\n",
            {
                "tools/check_tag.py": "import subprocess\n"
                'subprocess.run(["git", "describe", "--exact-match"], check=True)\n'
            },
        ),
        "local action": (
            "      - uses: ./.github/actions/check-tag\n",
            {".github/actions/check-tag/action.yml": action},
        ),
        "local action calling a script": (
            "      - uses: ./.github/actions/check-tag\n",
            {
                ".github/actions/check-tag/action.yml": action.replace(
                    "git describe --exact-match --tags HEAD",
                    "${{ github.action_path }}/check.sh",
                ),
                ".github/actions/check-tag/check.sh": _CHECK,
            },
        ),
        "unreadable script": ("      - run: ./scripts/missing.sh\n", {}),
        "unreadable action": ("      - uses: ./.github/actions/gone\n", {}),
    }
    for what, (gate, files) in forms.items():
        written, reasons = _release(tmp_path / what.replace(" ", "_"), gate, files)
        assert written is None, what
        assert any("no ROCm workflow" in r for r in reasons), (what, reasons)
    # a setup script and a local action that do not ask which branch or tag HEAD is: copied
    setup = {
        "scripts/setup.sh": "#!/bin/sh\napt-get install -y cmake\ngit submodule update --init\n",
        ".github/actions/deps/action.yml": "name: deps\nruns:\n  using: composite\n  steps:\n"
        "    - shell: bash\n      run: pip install -r requirements.txt\n",
        "requirements.txt": "numpy\n",
    }
    gate = "      - run: ./scripts/setup.sh\n      - uses: ./.github/actions/deps\n"
    written, _ = _release(tmp_path / "setup", gate, setup)
    assert written is not None and "-rocm" in written


# F17 ------------------------------------------------------------------------------------

_KERNEL = """\
#include "mask.h"
__global__ void red(float* a) {
  float v = a[threadIdx.x];
  v += __shfl_xor_sync(FULL_MASK, v, 16);
  a[threadIdx.x] = v;
}
#include "INC"
"""
_HEADER = "#pragma once\n#define FULL_MASK 0xffffffff\n"
_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k src/k.cu)\n"
)


def _masks(root: Path, inc: str, body: str) -> PortReport:
    project(
        root,
        {
            "CMakeLists.txt": _CMAKE,
            "src/mask.h": _HEADER,
            "src/k.cu": _KERNEL.replace("INC", inc),
            f"src/{inc}": body,
        },
    )
    return run(root, apply=True, verify=False)


def test_f17_a_data_use_in_an_included_file_of_any_suffix_keeps_the_mask_32_bit(
    tmp_path: Path,
) -> None:
    data = "__device__ bool all_set(unsigned long long bits) { return bits == FULL_MASK; }\n"
    for inc in ("check.def", "check.cuinc", "check.cu.inc", "detail/check.x"):
        root = tmp_path / inc.replace("/", "_")
        report = _masks(root, inc, data)
        assert "full-mask:src/mask.h" not in fix_ids(report), inc
        assert (root / "src/mask.h").read_text() == _HEADER, inc
        reasons = [u.reason for u in report.unfixed if u.finding.path == "src/mask.h"]
        assert any("as data" in r for r in reasons), (inc, reasons)
    # an included file that uses the mask only as a mask: still widened
    root = tmp_path / "mask_only"
    report = _masks(
        root,
        "more.def",
        "__device__ float f(float v) { return __shfl_xor_sync(FULL_MASK, v, 1); }\n",
    )
    assert "full-mask:src/mask.h" in fix_ids(report, applied=True)
    assert "#define FULL_MASK GPUPORT_FULL_MASK" in (root / "src/mask.h").read_text()
