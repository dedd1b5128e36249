"""GP402 severity follows what hipcc and clang were measured to do with each nvcc flag.

Debian's hipcc (HIP 5.2, clang 15) compiling for gfx90a, 2026-11-22: --use_fast_math,
--expt-relaxed-constexpr and -gencode are rejected; -use_fast_math, -lineinfo and -Xptxas=-v
are accepted (and do nothing useful for AMD code).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import scan_path


def test_rejected_flags_are_major_and_accepted_spellings_minor(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(
        "A := --use_fast_math\nB := -use_fast_math\nC := -lineinfo\nD := --expt-relaxed-constexpr\n"
        "E := -Xptxas=-v\n"
    )
    found = {
        f.location.line: f.severity for f in scan_path(tmp_path).findings if f.rule_id == "GP402"
    }
    assert found == {
        1: Severity.MAJOR,
        2: Severity.MINOR,
        3: Severity.MINOR,
        4: Severity.MAJOR,
        5: Severity.MINOR,
    }


def test_setup_py_flags_follow_the_same_measurement(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('x', ['x.cu'], extra_compile_args={'nvcc': [\n"
        "    '-use_fast_math',\n"
        "    '--use_fast_math',\n"
        "]})\n"
    )
    found = {
        f.location.line: f.severity for f in scan_path(tmp_path).findings if f.rule_id == "GP402"
    }
    assert found == {3: Severity.MINOR, 4: Severity.MAJOR}
