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


def _planted(project: Path, where: str, proof: Path) -> None:
    """A ``rocminfo`` the project ships at ``where`` that leaves ``proof`` when it runs."""
    tool = project / where / "rocminfo"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text(f"#!/bin/sh\necho ran > {proof}\n")
    tool.chmod(0o755)


def _doctor(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return subprocess.run(
        [sys.executable, "-m", "gpuport", "doctor", "--no-smoke-test", "--timeout", "2",
         "--format", "json", "--verbose"],
        env={"PATH": str(cwd / "nobin"), "HOME": str(cwd), "PYTHONPATH": src, **env},
        cwd=cwd, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


def test_plain_doctor_runs_no_tool_of_the_project_it_is_started_in(tmp_path: Path) -> None:
    """F7: ``cd proj && gpuport doctor`` with the project's ``.envrc`` putting ``GPUPORT_DOCTOR_
    ROOT``, ``ROCM_PATH`` or its ``bin/`` on PATH: doctor ran the project's rocminfo."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    proof = tmp_path / "ran"
    _planted(project, "opt/rocm/bin", proof)
    _planted(project, "r/bin", proof)
    _planted(project, "bin", proof)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for env in (
        {"GPUPORT_DOCTOR_ROOT": str(project)},
        {"ROCM_PATH": str(project / "r")},
        {"PATH": str(project / "bin")},
    ):
        done = _doctor(project, env)
        assert done.returncode in (0, 1), done.stderr
        assert not proof.exists(), env
        if "ROCM_PATH" not in env:  # since the twenty-ninth re-run ROCM_PATH into the
            # project is dropped at start: the project's rocminfo is not even found
            assert "rocminfo not run: found only at" in done.stdout, env
    # the install root in a project is refused from outside it too
    done = _doctor(outside, {"ROCM_PATH": str(project / "r")})
    assert done.returncode in (0, 1), done.stderr
    assert not proof.exists()


def test_plain_doctor_outside_any_project_still_runs_the_install_roots_tools(
    tmp_path: Path,
) -> None:
    """What the fix must keep: a ROCm install found by ROCM_PATH, outside any project, runs."""
    install = tmp_path / "rocm-7.0"
    proof = tmp_path / "ran"
    _planted(install, "bin", proof)
    work = tmp_path / "work"
    work.mkdir()
    done = _doctor(work, {"ROCM_PATH": str(install)})
    assert done.returncode in (0, 1), done.stderr
    assert proof.exists()


def test_the_user_cache_is_not_written_through_the_projects_link(tmp_path: Path) -> None:
    """F8: ``HOME`` set to the project and a ``.cache`` link it ships to a folder of the user's:
    hipify wrote its cache files there. With the project avoided, the cache is not used."""
    project, victim = tmp_path / "proj", tmp_path / "victim"
    (project / ".git").mkdir(parents=True)
    victim.mkdir()
    (project / ".cache").symlink_to(victim)
    code = (
        "from gpuport import subproc, usercache; "
        f"subproc.avoid_always([{str(project)!r}]); print(usercache.cache_dir())"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    for extra in ({"HOME": str(project)}, {"XDG_CACHE_HOME": str(project / ".cache")}):
        out = subprocess.run(
            [sys.executable, "-c", code], env={**env, **extra}, cwd=tmp_path,
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        assert out == "None", extra
    # no project at hand: the cache folder is used as before
    free = "from gpuport import usercache; print(usercache.cache_dir())"
    out = subprocess.run(
        [sys.executable, "-c", free], env={**env, "HOME": str(project)}, cwd=tmp_path,
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert out.endswith("gpuport")
