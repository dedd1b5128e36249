"""A reader that goes away (`gpuport scan . | head`) is not a failure and prints no error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "src" / "gpuport" / "scan" / "rules" / "native" / "fixtures"


def _closed_reader(*args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuport", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first byte is written
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


@pytest.mark.parametrize(
    "args",
    [
        ("scan", str(FIXTURES), "--no-progress"),
        ("scan", str(FIXTURES), "--no-progress", "-f", "json"),
        ("rules",),
    ],
)
def test_closed_stdout_ends_quietly_with_exit_0(args: tuple[str, ...]) -> None:
    code, err = _closed_reader(*args)
    assert code == 0
    assert "Traceback" not in err and "Broken pipe" not in err and "Exception" not in err


def test_closed_stdout_keeps_fail_on_meaning() -> None:
    code, err = _closed_reader("scan", str(FIXTURES), "--no-progress", "--fail-on", "blocker")
    assert code == 1  # the fixtures hold blockers: --fail-on tripped, not the pipe
    assert "Traceback" not in err
