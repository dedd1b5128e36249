"""Helpers for the assess tests: the fixture projects, the command registered, a runner.

``gpuport assess`` is registered in ``gpuport.cli.app`` by the lead; until then (and to keep
these tests independent of that edit) the command is added here when it is missing, both
in-process and in the subprocess runner.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuport.cli.app import app
from gpuport.cli.assess_cmd import register
from tests.conftest import REPO, Result

FIXTURES = REPO / "tests" / "fixtures" / "assess"
PORTABLE = FIXTURES / "portable"
MINOR = FIXTURES / "minor"
BLOCKED = FIXTURES / "blocked"

#: ``python RUNNER ARGS`` behaves like ``gpuport ARGS`` with ``assess`` registered.
RUNNER = (
    "import sys\n"
    "from gpuport.cli.app import app, main\n"
    "from gpuport.cli.assess_cmd import register\n"
    "if not any(c.name == 'assess' for c in app.registered_commands):\n"
    "    register(app)\n"
    "main(sys.argv[1:])\n"
)


def ensure_registered() -> None:
    if not any(c.name == "assess" for c in app.registered_commands):
        register(app)


@pytest.fixture(autouse=True)
def _assess_registered() -> None:
    ensure_registered()


def run_gpuport(*args: str, timeout: float = 120, cwd: Path = REPO) -> tuple[Result, float]:
    """``gpuport ARGS`` in a fresh interpreter; returns the result and the wall time."""
    import time

    env = {**os.environ, "COLUMNS": "120"}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr), time.perf_counter() - started


#: Text a hostile project plants in file names and code lines: none of it may become markup.
HOSTILE_NAME = "x<script>alert(1)<!--.py"
HOSTILE_CU = "k<img src=x onerror=alert(4)>.cu"
HOSTILE_SNIPPET = "<script>alert(2)</script>"


def hostile_project(root: Path) -> Path:
    """A project whose file names, requirement lines and code lines carry markup."""
    root.mkdir(parents=True)
    (root / HOSTILE_NAME).write_text(f"import pynvml  # {HOSTILE_SNIPPET}\n", encoding="utf-8")
    (root / "requirements.txt").write_text(
        "tensorrt-llm==0.12.0  # <script>alert(3)</script>\n", encoding="utf-8"
    )
    (root / HOSTILE_CU).write_text(
        "__global__ void k(int* o) {\n"
        '  asm("mov.u32 %0, %laneid; // </code><script>alert(5)</script>" : "=r"(o[0]));\n'
        "}\n",
        encoding="utf-8",
    )
    return root
