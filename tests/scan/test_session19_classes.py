"""Issue 24 classes taken up in session 19.

A README sentence wrapped over two lines is read to its end: mcx's "requires NVIDIA GPUs
(support for AMD/Intel CPUs/GPUs via ROCm is still / under development)" is a promise, and
"A more portable OpenCL implementation of MCX, i.e. MCXCL, / was announced ... and supports
almost all NVIDIA/AMD/Intel CPU and GPU / models" gives AMD support through OpenCL, another
program's route: neither is a ROCm route (``scan.project.routes_docs``)."""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"


def _routes(root: Path, readme: str) -> list[tuple[int | None, bool, str]]:
    r = scan_path(write(root, {"README.md": readme, "k.cu": KERNEL}), ScanOptions(jobs=1))
    return [(e.line, e.counts, e.why) for e in r.routes if e.path == "README.md"]


def test_a_promise_wrapped_onto_the_next_line_is_no_route(tmp_path: Path) -> None:
    got = _routes(
        tmp_path,
        "# m\n\nM is written in C/CUDA\n"
        "and requires NVIDIA GPUs (support for AMD GPUs via ROCm is still\n"
        "under development). More text here.\n",
    )
    assert got and not any(c for _l, c, _w in got), got
    assert "promises it for later" in got[0][2]


def test_amd_support_through_opencl_is_no_rocm_route(tmp_path: Path) -> None:
    got = _routes(
        tmp_path,
        "# m\n\nUse CUDA. A more portable OpenCL implementation of M, i.e. MCL,\n"
        "was announced in 2012 and supports almost all NVIDIA/AMD/Intel CPU and GPU\n"
        "models.\n",
    )
    assert got == [(4, False, got[0][2])] and "another API" in got[0][2], got


def test_a_claim_naming_rocm_beside_opencl_and_a_plain_claim_still_count(tmp_path: Path) -> None:
    assert any(
        c
        for _l, c, _w in _routes(
            tmp_path / "a", "# m\n\nM runs on AMD GPUs through ROCm and on others\nvia OpenCL.\n"
        )
    )
    assert any(
        c
        for _l, c, _w in _routes(
            tmp_path / "b", "# m\n\nM supports AMD Instinct GPUs. Our OpenCL port is\nplanned.\n"
        )
    )
