"""Issue 24 (fifth round): a function-like macro whose arguments are per-backend
alternatives (AMReX's ``AMREX_HIP_OR_CUDA(hip_expr, cuda_expr)``, defined as its first
parameter in the ROCm branch): the arguments a ROCm build drops are not compiled there."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.cxx import lex
from gpuport.scan.model import ScanReport
from gpuport.scan.project.cxx_selectors import dropped_spans, selector_macros
from tests.scan.project_files import scan_files

SELECT = (
    "#if defined(P_USE_HIP)\n#define P_HIP_OR_CUDA(a,b) a\n"
    "#elif defined(P_USE_CUDA)\n#define P_HIP_OR_CUDA(a,b) b\n"
    "#else\n#define P_HIP_OR_CUDA(a,b) ((void)0);\n#endif\n"
)
PTX = 'asm volatile("membar.gl;")'


def _ptx(r: ScanReport) -> list[Severity]:
    return [f.severity for f in r.findings if f.rule_id == "GP301"]


def _kernel(call: str) -> str:
    return f'#include "sel.h"\n__global__ void k(int* x) {{\n  {call};\n}}\n'


def test_the_argument_rocm_drops_is_not_compiled(tmp_path: Path) -> None:
    files = {"sel.h": SELECT, "k.cu": _kernel(f"P_HIP_OR_CUDA(x[0] = 1,\n    {PTX})")}
    report = scan_files(tmp_path, files)
    assert _ptx(report) == [Severity.INFO]
    assert "P_HIP_OR_CUDA" in next(f.message for f in report.findings if f.rule_id == "GP301")


def test_the_argument_rocm_keeps_still_counts(tmp_path: Path) -> None:
    files = {"sel.h": SELECT, "k.cu": _kernel(f"P_HIP_OR_CUDA({PTX},\n    x[0] = 1)")}
    assert _ptx(scan_files(tmp_path, files)) == [Severity.BLOCKER]


def test_a_macro_not_chosen_by_a_rocm_test_is_ordinary(tmp_path: Path) -> None:
    plain = "#define PICK(a,b) b\n"
    files = {"sel.h": plain, "k.cu": _kernel(f"PICK(x[0] = 1,\n    {PTX})")}
    assert _ptx(scan_files(tmp_path, files)) == [Severity.BLOCKER]


def test_selectors_need_one_parameter_on_every_rocm_definition() -> None:
    mixed = SELECT + "#ifdef P_USE_HIP\n#define P_HIP_OR_CUDA(a,b) b\n#endif\n"
    assert selector_macros({"sel.h": SELECT}) == {"P_HIP_OR_CUDA": (0, "sel.h:2")}
    assert selector_macros({"sel.h": mixed}) == {}
    both = "#ifdef P_USE_HIP\n#define SUM(a,b) a + b\n#endif\n"
    assert selector_macros({"s.h": both}) == {}
    code = "P_HIP_OR_CUDA(f(1, 2), g(3))"
    spans = dropped_spans(lex(code), {"P_HIP_OR_CUDA": (0, "sel.h:2")})
    assert [code[a:b].strip() for a, b, _ in spans] == ["g(3)"]
