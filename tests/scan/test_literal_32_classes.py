"""Issue 24's "a literal 32 with no warp meaning" class, from the tenth sample (llamafile):
a warp-size define that no file reads, a logical warp whose helper host code calls, and a
macro parameter named ``warpSize`` (the last two as fixtures beside the warp rules)."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.finding import Finding
from tests.scan.project_files import write

_KERNEL = (
    '#include "common.h"\n'
    "__global__ void k(float* x) {\n"
    "    if (threadIdx.x % WARPSIZE == 0) x[threadIdx.x / WARPSIZE] = 0.f;\n"
    "}\n"
)
_TOOL = '#include "common.h"\n__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n'
_HEADER = "#pragma once\n#define WARPSIZE 32\n"


def _gp303(root: Path, files: dict[str, str]) -> dict[str, Finding]:
    report = scan_path(write(root, files), ScanOptions(jobs=1, target="gfx942"))
    return {f.location.path: f for f in report.findings if f.rule_id == "GP303"}


def test_a_warp_define_no_file_reads_is_info(tmp_path: Path) -> None:
    hits = _gp303(tmp_path, {"common.h": _HEADER, "tool.cu": _TOOL})
    assert hits["common.h"].severity is Severity.INFO
    assert "neither this file nor the 1 files that include it use it" in hits["common.h"].message


def test_a_warp_define_a_kernel_reads_stays_a_hazard(tmp_path: Path) -> None:
    hits = _gp303(tmp_path, {"common.h": _HEADER, "tool.cu": _TOOL, "kern.cu": _KERNEL})
    assert hits["common.h"].severity is Severity.MAJOR


def test_a_use_in_a_directive_counts(tmp_path: Path) -> None:
    user = '#include "common.h"\n#if WARPSIZE == 32\n#define HALF 16\n#endif\n' + _TOOL
    hits = _gp303(tmp_path, {"common.h": _HEADER, "tool.cu": user})
    assert hits["common.h"].severity is Severity.MAJOR


def test_a_use_in_a_file_that_does_not_include_it_is_another_define(tmp_path: Path) -> None:
    """llamafile: tinyblas.cu defines and uses its own WARPSIZE; cuda.h's is read by nobody."""
    own = "#define WARPSIZE 32\n" + _KERNEL.replace('#include "common.h"\n', "")
    hits = _gp303(tmp_path, {"common.h": _HEADER, "tool.cu": _TOOL, "own.cu": own})
    assert hits["common.h"].severity is Severity.INFO


def test_a_warp_define_its_own_source_file_never_reads_is_info(tmp_path: Path) -> None:
    """Fourteenth sample (gpu4pyscf pbc/contract_ft_ao.cu:24): a .cu that defines WARP_SIZE
    and never names it again; one that reads it keeps the hazard."""
    unused = "#define WARP_SIZE 32\n" + _TOOL.replace('#include "common.h"\n', "")
    used = "#define WARP_SIZE 32\n" + _KERNEL.replace('#include "common.h"\n', "").replace(
        "WARPSIZE", "WARP_SIZE"
    )
    hits = _gp303(tmp_path, {"unused.cu": unused, "used.cu": used})
    assert hits["unused.cu"].severity is Severity.INFO
    assert "nothing in this file uses it" in hits["unused.cu"].message
    assert "nothing in this file uses it" not in hits["used.cu"].message
