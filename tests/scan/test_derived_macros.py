"""Issue 24, twelfth sample (torch-harmonics): a macro nvcc's arch-feature tests set to 1 and
every other build to 0 makes ``#if X`` false on ROCm; the PTX under it is not compiled there.
A name some file tests with ``#ifdef``/``defined()`` is defined on ROCm too (as 0), and a
macro the other branch also sets to 1 is live: both keep their findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_GATE = (
    "#pragma once\n"
    "#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL)\n"
    "#define TC_SUPPORTED 1\n"
    "#else\n"
    "#define TC_SUPPORTED {other}\n"
    "#endif\n"
    "__device__ void wait_tc() {{\n"
    "#if TC_SUPPORTED\n"
    '    asm volatile("tcgen05.wait::ld.sync.aligned;");\n'
    "#endif\n"
    "}}\n"
)


def _ptx(tmp_path: Path, other: str, extra: dict[str, str]) -> Severity:
    files = {"k/gate.cuh": _GATE.format(other=other), **extra}
    files["k/k.cu"] = '#include "gate.cuh"\n__global__ void k() { wait_tc(); }\n'
    r = scan_files(tmp_path, files)
    hits = [f for f in r.findings if f.rule_id == "GP301" and f.location.line == 9]
    assert len(hits) == 1
    return hits[0].severity


def test_a_gate_nvcc_alone_sets_keeps_rocm_out_of_its_block(tmp_path: Path) -> None:
    assert _ptx(tmp_path, "0", {}) is Severity.INFO


@pytest.mark.parametrize(
    ("other", "extra"),
    [
        ("1", {}),  # the other branch sets it too: live
        ("0", {"k/use.cu": "#ifdef TC_SUPPORTED\nint x;\n#endif\n"}),  # tested as defined
    ],
    ids=["both-branches-one", "tested-with-ifdef"],
)
def test_a_gate_that_is_not_false_on_rocm_keeps_the_finding(
    tmp_path: Path, other: str, extra: dict[str, str]
) -> None:
    assert _ptx(tmp_path, other, extra) is Severity.BLOCKER
