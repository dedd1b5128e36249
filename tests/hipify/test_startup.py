"""Start-up of ``gpuport hipify`` (issue 18, item 4): a process started for one command
imports that command only; every other command still works from ``main(argv)``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
PROBE = """
import sys
sys.argv = ["gpuport", "hipify", "x.cu"]
import gpuport.cli.app as app
print(app._registered)
print("gpuport.cli.bench_cmd" in sys.modules, "gpuport.cli.assess_cmd" in sys.modules)
try:
    app.main(["cost", "--help"])
except SystemExit as exc:
    print("exit", exc.code)
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_hipify_process_imports_hipify_only_and_main_still_reaches_others() -> None:
    done = _run(PROBE)
    lines = done.stdout.splitlines()
    assert lines[0] == "['hipify']", done.stderr
    assert lines[1] == "False False"
    assert "Usage: gpuport cost" in done.stdout
    assert lines[-1] == "exit 0"


def test_plain_help_lists_every_command() -> None:
    done = _run(
        "import sys; sys.argv=['gpuport']; import gpuport.cli.app as a; print(a._registered)"
    )
    assert "'assess', 'scan', 'rules', 'hipify', 'bench'" in done.stdout, done.stderr
