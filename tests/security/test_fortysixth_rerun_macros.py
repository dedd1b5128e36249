"""Forty-sixth re-run F4 (see /work/redteam46/FINDINGS.md): a project macro defined on both
sides of a ROCm test (``WS`` 64 under ``__HIP_PLATFORM_AMD__``, 32 otherwise) is defined on
ROCm too, so ``#ifdef WS`` is compiled there: the inline PTX and the 32-bit ballot mask under
it stay blockers. Only a test of its value (``WS == 64``) tells the platforms apart
(``scan.project.rocm_defines``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

_KERNEL = """\
#include <cuda_runtime.h>
#if defined(__HIP_PLATFORM_AMD__)
#define WS 64
#else
#define WS 32
#endif
__global__ void k(int *a) {{
#{test}
  unsigned m = __ballot_sync(0xffffffff, a[threadIdx.x]);
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(a[1]));
  a[0] = m;
#endif
}}
"""


def _blockers(root: Path) -> list[str]:
    report = scan_path(root, ScanOptions(jobs=1))
    return sorted(f.rule_id for f in report.findings if f.severity.value == "blocker")


def test_f4_ifdef_of_a_macro_defined_on_both_sides_is_compiled_on_rocm(tmp_path: Path) -> None:
    for i, test in enumerate(("ifdef WS", "if defined(WS)")):
        got = _blockers(write(tmp_path / str(i), {"k.cu": _KERNEL.format(test=test)}))
        assert got == ["GP301", "GP302"], (test, got)
    # a test of the value is the ROCm test it stands for: both sides are judged as such
    assert _blockers(write(tmp_path / "v", {"k.cu": _KERNEL.format(test="if WS == 64")})) == []
