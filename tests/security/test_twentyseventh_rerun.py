"""Issue 23: the twenty-seventh re-run (short) on the start-up cleaning: the project's
environment could say "already cleaned" (GPUPORT_CLEAN_START=1), and LD_LIBRARY_PATH entries the
loader reads otherwise than gpuport did (``$LIB``, ``;``) passed the check. Each case is run with
GPUPORT_CLEAN_START=1, so what start-up finds left to undo ends the command (exit 2) instead of
starting it again: the project's libffi would otherwise load at ``import ctypes``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.parametrize(
    "value",
    ["{proj}/lib", "/usr/lib;{proj}/lib", "{parent}/cuda-$LIB"],
    ids=["inside", "semicolon", "loader-token"],
)
def test_an_interpreter_setting_into_the_project_is_never_taken_as_undone(
    tmp_path: Path, value: str
) -> None:
    proj = tmp_path / "cuda-lib"
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": SRC,
        "GPUPORT_CLEAN_START": "1",
        "LD_LIBRARY_PATH": value.format(proj=proj, parent=tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "scan", "."], cwd=proj, env=env,
        capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "still names the project" in done.stderr
