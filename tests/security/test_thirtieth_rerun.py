"""Issue 23: the thirtieth re-run (short, a tenth reviewer, on the twenty-ninth's fixes).
LD_LIBRARY_PATH holding a checkout named ``glibc-hwcaps`` (or ``x86_64``, ``tls``) made the
loader search the project; a 16 KB path in a library root or TMPDIR took minutes at start;
``COLUMNS=²`` ended every command with a traceback. Each test fails on the code before."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.startup_env import SRC, run_python


def test_a_loader_path_that_holds_the_project_is_undone(tmp_path: Path) -> None:
    proj = tmp_path / "glibc-hwcaps"
    (proj / ".git").mkdir(parents=True)
    code = (
        "import os, sys\n"
        "def fake(exe, argv, e):\n"
        "    sys.stdout.write(repr(e.get('LD_LIBRARY_PATH')) + '\\n'); sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "os.execve = fake\n"
        "from gpuport import startup; startup.clean_start(); print('not restarted')\n"
    )
    done = run_python(proj, code, {"LD_LIBRARY_PATH": f"{tmp_path}:/usr/lib"})
    assert done.stdout.strip() == "'/usr/lib'", done.stdout + done.stderr


@pytest.mark.parametrize("name", ["ROCM_PATH", "HOME", "LD_LIBRARY_PATH", "TMPDIR"])
def test_a_path_of_thousands_of_folders_does_not_stall_the_start(tmp_path: Path, name: str) -> None:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    long = "/a" * 8000
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "--version"], cwd=proj, capture_output=True,
        text=True, timeout=120, check=False,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"),
             name: long},
    )  # fmt: skip
    assert time.monotonic() - started < 20, name
    assert done.returncode == 0, done.stderr[-300:]


@pytest.mark.parametrize("name", ["COLUMNS", "LINES"])
def test_a_unicode_digit_in_the_terminal_size_is_no_traceback(tmp_path: Path, name: str) -> None:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "--version"], cwd=proj, capture_output=True,
        text=True, timeout=120, check=False,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"),
             name: "\u00b2"},
    )  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-300:]
