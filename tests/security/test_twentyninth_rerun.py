"""Issue 23: the twenty-ninth re-run (full, a ninth reviewer, on the twenty-eighth's fixes).
A ``HOME`` that holds the checkout (named ``.local``) gave ROCm's Python tools the project's
``usercustomize.py``; library roots (``ROCM_PATH``) into the project were left in gpuport's
own process for ``amdsmi`` to load from; a 5,000-digit ``hip_version`` and a 200,000-part
glob ended runs with exit 4. Each test fails on the code before its fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpuport import subproc

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(cwd: Path, code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", **env}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_library_roots_and_a_home_holding_the_project_leave_gpuports_process(
    tmp_path: Path,
) -> None:
    """F3, F4: HOME = the folder holding a checkout named .local; ROCM_PATH and a CUDA tool
    hook into the project."""
    proj = tmp_path / ".local"
    (proj / ".git").mkdir(parents=True)
    code = (
        "import os; from gpuport.startup import clean_start; clean_start(); "
        "print(os.environ.get('HOME')); print(os.environ.get('ROCM_PATH')); "
        "print(os.environ.get('CUDA_INJECTION64_PATH')); print(os.environ.get('CUDA_HOME'))"
    )
    out = _run(proj, code, {"HOME": str(tmp_path), "ROCM_PATH": str(proj / "rocm"),
                            "CUDA_INJECTION64_PATH": str(proj / "inj.so"),
                            "CUDA_HOME": "/usr/local/cuda"}).split("\n")  # fmt: skip
    home = os.path.realpath(subproc.stops()[-1])
    assert out[0] == home and out[0] != str(tmp_path)
    assert out[1] == "None" and out[2] == "None"
    assert out[3] == "/usr/local/cuda"  # outside the project: the user's own


def test_a_home_holding_the_project_is_not_given_to_programs(tmp_path: Path) -> None:
    proj = tmp_path / ".local"
    (proj / ".git").mkdir(parents=True)
    env = subproc.safe_env(avoid=[proj], base={"HOME": str(tmp_path), "PATH": "/usr/bin"})
    assert env["HOME"] != str(tmp_path)


def _gp(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, capture_output=True, text=True,
        timeout=240, check=False, stdin=subprocess.DEVNULL,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(cwd.parent / "h")},
    )  # fmt: skip


def test_a_huge_hip_version_setting_is_a_clear_error(tmp_path: Path) -> None:
    """F1: [tool.gpuport] hip_version = "6.<5000 nines>": ValueError, exit 4."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    (proj / "pyproject.toml").write_text(f'[tool.gpuport]\nhip_version = "6.{"9" * 5000}"\n')
    done = _gp(proj, "assess", ".")
    assert done.returncode == 2 and "hip_version" in done.stderr, done.stderr[-300:]


def test_a_glob_of_200000_parts_is_no_internal_error(tmp_path: Path) -> None:
    """F2: $(wildcard */*/...*.cu) with 200,000 parts in a Makefile.am: RE2 refused the
    pattern, exit 4."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    glob = "/".join(["*"] * 200_000) + ".cu"
    (proj / "Makefile.am").write_text(f"if HAVE_ROCM\nSRCS = $(wildcard {glob})\nendif\n")
    done = _gp(proj, "scan", ".")
    assert done.returncode in (0, 1), done.stderr[-300:]
