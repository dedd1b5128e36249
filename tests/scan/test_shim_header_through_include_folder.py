"""Issue 24, thirteenth sample (qiskit-aer ``src/misc/hipify.hpp``): a header of HIP shims
(``#define __shfl_xor_sync(...) __shfl_xor(...)``) included only under ``#ifdef
AER_THRUST_ROCM`` through an include folder (``"misc/hipify.hpp"`` from
``src/simulators/...``) is a ROCm branch as a whole: the shuffles it redefines are safe at
their call sites."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_SHIM = (
    "#ifndef __HIPIFY_H__\n#define __HIPIFY_H__\n"
    "#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, 64)\n"
    "#endif\n"
)
_CONTAINER = '#ifdef AER_THRUST_ROCM\n#include "misc/hipify.hpp"\n#endif\n'
_KERNEL = (
    '#include "container.hpp"\n'
    "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1, 32); }\n"
)


def test_a_shim_header_reached_through_an_include_folder_is_a_rocm_branch(
    tmp_path: Path,
) -> None:
    files = {"src/misc/hipify.hpp": _SHIM, "src/sim/container.hpp": _CONTAINER,
             "src/sim/kern.cu": _KERNEL}  # fmt: skip
    r = scan_files(tmp_path, files)
    hits = [f for f in r.findings if f.location.path == "src/sim/kern.cu" and f.rule_id == "GP302"]
    assert hits and all(f.severity is Severity.INFO for f in hits), hits
