"""--check: changed native files compiled by hipcc and nvcc; project flags validated first."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpuport.port.check import safe_flags
from tests.port.helpers import project, run


def test_safe_flags(tmp_path: Path) -> None:
    inside = tmp_path / "inc"
    inside.mkdir()
    flags = [
        f"-I{inside}",
        "-I/etc",
        "-isystem",
        str(inside),
        "-include",
        "/etc/passwd",
        "-DGOOD=1",
        "-D$(shell rm -rf /)",
        "-UX",
        "-std=c++17",
        "-std=evil",
        "-I",
        "-fplugin=x.so",
    ]
    kept = safe_flags(flags, tmp_path)
    assert kept == [f"-I{inside}", "-isystem", str(inside), "-DGOOD=1", "-UX", "-std=c++17"]


def test_check_compiles_the_changed_files_with_both_compilers(tmp_path: Path) -> None:
    for name, env in (("hipcc", "GPUPORT_REQUIRE_HIPCC"), ("nvcc", "GPUPORT_REQUIRE_NVCC")):
        if shutil.which(name) is None:
            if os.environ.get(env) == "1":
                pytest.fail(f"{env}=1 but {name} is not on PATH")
            pytest.skip(f"{name} not on PATH")
    src = (
        "#if defined(__HIPCC__)\n#include <hip/hip_runtime.h>\n#endif\n"
        '#include "mask.h"\n'
        "__global__ void k(int* x) { x[threadIdx.x] = (int)(FULL_MASK & 1u); }\n"
    )
    root = project(
        tmp_path, {"mask.h": "#define FULL_MASK 0xffffffff\n__device__ int f(int);\n", "k.cu": src}
    )
    report = run(root, check=True)  # diff mode: compiled in a throw-away copy
    assert report.written == []
    by = {(c.path, c.compiler): c for c in report.checks}
    assert by[("k.cu", "hipcc")].status == "ok", by[("k.cu", "hipcc")].error
    assert by[("k.cu", "nvcc")].status == "ok", by[("k.cu", "nvcc")].error
    assert not (root / "mask.h.gpuport.bak").exists()
