"""Run a snippet in a fresh interpreter with only the environment a test gives it (the
start-up re-runs: a project's variables, gpuport's source on the import path)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def run_python(cwd: Path, code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in ``cwd``, a HOME beside it, PATH the system's, plus ``env``."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(cwd.parent / "h"), **env},
        check=False,
    )  # fmt: skip
