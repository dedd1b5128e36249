"""Issue 23: what the twenty-fourth independent re-run found (session 10, a short pass): values
of allow-listed variables that name the project in ways the path check did not read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gpuport import subproc


def test_an_install_folder_with_shell_syntax_is_dropped() -> None:
    """F2: ``ROCM_PATH='/x;sh $(echo ...|base64 -d);:'`` names no path of the project, so it was
    kept, and Debian's hipcc put it in backticks for /bin/sh: the project's script ran."""
    bad = "/nonexistent;sh $(echo L3RtcC9ldmlsLnNo|base64 -d);:"
    env = subproc.safe_env(base={"PATH": "/usr/bin", "ROCM_PATH": bad}, avoid=["/tmp/gp24/p"])
    assert "ROCM_PATH" not in env
    good = subproc.safe_env(base={"PATH": "/usr/bin", "ROCM_PATH": "/opt/rocm-6.2.0"}, avoid=["/x"])
    assert good["ROCM_PATH"] == "/opt/rocm-6.2.0"


def test_a_space_in_a_folder_above_the_project_does_not_split_the_check(tmp_path: Path) -> None:
    """F4: ``/.../My Projects/proj/lib`` was split at the space and neither half was inside the
    project: perl loaded the project's ``libcrypt.so.1`` through LD_LIBRARY_PATH."""
    project = tmp_path / "My Projects" / "proj"
    (project / "lib").mkdir(parents=True)
    base = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": f"{project / 'lib'}:/opt/rocm/lib"}
    env = subproc.safe_env(base=base, avoid=[project])
    assert env["LD_LIBRARY_PATH"] == "/opt/rocm/lib"


def test_a_loader_token_is_not_a_folder(tmp_path: Path) -> None:
    """F5: ``$LIB`` in LD_LIBRARY_PATH is one folder to realpath (removed by the next ``..``)
    and two to ld.so: the entry named the project's ``lib2`` where the check saw another."""
    project = tmp_path / "p"
    value = f"{project}/$LIB/../../lib2"
    env = subproc.safe_env(base={"PATH": "/usr/bin", "LD_LIBRARY_PATH": value}, avoid=[project])
    assert "LD_LIBRARY_PATH" not in env


def test_a_tmpdir_through_a_link_the_project_ships_is_not_used(tmp_path: Path) -> None:
    """F6: ``TMPDIR=$PWD/t`` with ``t`` a link the project ships to a folder outside: only the
    resolved folder was checked, so gpuport's temporary folders went through the link."""
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / ".git").mkdir()
    (project / "t").symlink_to(outside)
    (project / "k.cu").write_text("")
    code = (
        "import tempfile; from gpuport import subproc; "
        f"subproc.neutral_tempdir([{str(project / 'k.cu')!r}]); print(tempfile.gettempdir())"
    )
    env = {**os.environ, "TMPDIR": str(project / "t")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert not out.startswith(str(project)) and not out.startswith(str(outside))
