"""Issue 23: the twenty-eighth re-run (full, an eighth reviewer). A path that *holds* the
project (not only one inside it) reached gpuport and its programs; files a project link names
were read into the doctor snapshot; outputs went through the current project's links; git
metadata made hipify's output a repository through ``commondir``; the start-up refusal left a
prompt; a huge ``COLUMNS`` took gigabytes. Each test fails on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuport import subproc

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _gp(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(cwd.parent / "home"), "PATH": "/usr/bin:/bin", "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, env={**base, **env},
        capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _project(tmp_path: Path, name: str = "proj") -> Path:
    proj = tmp_path / name
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    return proj


def test_a_root_that_holds_the_project_is_not_given_to_programs(tmp_path: Path) -> None:
    """F6, F15: PYTHONPATH (a checkout named torch) and ROCM_PATH (one named llvm) set to the
    folder holding the checkout: a child joins names below them and finds the project."""
    proj = _project(tmp_path, "torch")
    base = {
        "PYTHONPATH": f"{tmp_path}:/usr/lib/python3/dist-packages",
        "ROCM_PATH": str(tmp_path),
        "HOME": str(subproc.stops()[-1]),  # the user's own home folder holds projects: kept
    }
    env = subproc.safe_env(avoid=[proj], base=base)
    assert env["PYTHONPATH"] == "/usr/lib/python3/dist-packages"
    assert "ROCM_PATH" not in env or env["ROCM_PATH"] == ""
    assert env["HOME"] == str(subproc.stops()[-1])


def test_a_bytecode_prefix_from_a_projects_environment_is_never_used(tmp_path: Path) -> None:
    """F10: PYTHONPYCACHEPREFIX set to the folder holding the checkout (named like the first
    folder of gpuport's install path) loaded the project's bytecode for typer."""
    proj = _project(tmp_path)
    code = (
        "import sys; from gpuport.startup import clean_start; clean_start(); "
        "print(repr(sys.pycache_prefix))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=proj, capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"),
             "PYTHONPYCACHEPREFIX": str(tmp_path)}, check=False,
    )  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "None", done.stderr


def test_the_refusal_at_start_leaves_no_prompt(tmp_path: Path) -> None:
    """F12: PYTHONINSPECT=1 with GPUPORT_CLEAN_START=1: SystemExit under PYTHONINSPECT opened
    the interactive prompt; stdin here is a pipe that stays open, so it would wait."""
    proj = _project(tmp_path)
    env = {"HOME": str(tmp_path / "h"), "PATH": "/usr/bin:/bin", "PYTHONPATH": SRC,
           "PYTHONINSPECT": "1", "GPUPORT_CLEAN_START": "1"}  # fmt: skip
    with subprocess.Popen(
        [sys.executable, "-m", "gpuport", "scan", "."], cwd=proj, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as p:  # fmt: skip
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            pytest.fail("gpuport waited at an interactive prompt")
    assert p.returncode == 2 and "still names the project" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("columns", ["1500000000", "99999999999999999999"])
def test_a_huge_terminal_width_is_bounded(tmp_path: Path, columns: str) -> None:
    """F2: rich padded every line to COLUMNS (3 GB, or an OverflowError, exit 4)."""
    proj = _project(tmp_path)
    (proj / "k.cu").write_text(
        "__global__ void k(float*x){ x[threadIdx.x]=__shfl_down_sync(0xffffffff, 1.0f, 1);}\n"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", 'ulimit -v 2000000; exec "$0" -m gpuport scan .', sys.executable],
        cwd=proj, capture_output=True, text=True, timeout=120, check=False,
        env={"HOME": str(tmp_path / "h"), "PATH": "/usr/bin:/bin", "PYTHONPATH": SRC,
             "COLUMNS": columns},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-400:]
    assert max(len(line) for line in done.stdout.splitlines()) <= 1000


def test_doctor_keeps_only_a_version_from_the_rocm_version_file(tmp_path: Path) -> None:
    """F7: ROCM_PATH/.info/version a project link to /proc/self/environ: the environment
    (secrets) went into the snapshot as the ROCm version."""
    proj = _project(tmp_path)
    (proj / "rocm" / ".info").mkdir(parents=True)
    (proj / "rocm" / ".info" / "version").symlink_to("/proc/self/environ")
    snap = tmp_path / "m.json"
    env = {"ROCM_PATH": str(proj / "rocm"), "AWS_SECRET_ACCESS_KEY": "rt28-SECRET"}
    _gp(proj, "doctor", "--no-smoke-test", "--save-snapshot", str(snap), env=env)
    text = snap.read_text()
    assert "rt28-SECRET" not in text
    assert json.loads(text)["installs"]["rocm_version"] is None


def test_doctor_reads_no_device_and_nothing_outside_a_fake_root(tmp_path: Path) -> None:
    """F13 and F7's second route: GPUPORT_DOCTOR_ROOT into the project, with links to
    /dev/zero (read without end) and /proc/self/environ (into system.kernel)."""
    from gpuport.doctor.context import read_small

    root = tmp_path / "root"
    (root / "sys/module/amdgpu").mkdir(parents=True)
    (root / "sys/module/amdgpu/version").symlink_to("/dev/zero")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").symlink_to("/proc/self/environ")
    (root / "etc").mkdir()
    (root / "etc/hostname").write_text("box\n")
    assert read_small(root / "sys/module/amdgpu/version", root) is None
    assert read_small(root / "proc/sys/kernel/osrelease", root) is None
    assert read_small(root / "etc/hostname", root) == "box\n"
    os.mkfifo(root / "fifo")
    assert read_small(root / "fifo", root) is None  # and returns at once


def test_hipify_copies_no_commondir_and_no_head_beside_one(tmp_path: Path) -> None:
    """F5: src/HEAD + src/commondir (-> ../cdir, a bare repository whose config sets a pager)
    made `hipify src -o hip-src` a git directory."""
    proj = _project(tmp_path)
    src = proj / "src"
    src.mkdir()
    (src / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    (src / "HEAD").write_text("ref: refs/heads/main\n")
    (src / "commondir").write_text("../cdir\n")
    (src / "notes.txt").write_text("kept\n")
    done = _gp(proj, "hipify", "src", "-o", "hip-src", env={})
    assert done.returncode in (0, 1), done.stderr
    out = proj / "hip-src"
    assert (out / "notes.txt").exists() and (out / "k.cu").exists()
    assert not (out / "commondir").exists() and not (out / "HEAD").exists()


@pytest.mark.parametrize("args", [
    ("doctor", "--no-smoke-test", "--save-snapshot", "reports/m.json"),
    ("doctor", "--no-smoke-test", "--output", "reports/d.md"),
    ("cost", "-m", "qwen3-30b-a3b", "-g", "h100", "--output", "reports/c.md"),
])  # fmt: skip
def test_no_output_goes_through_a_link_of_the_current_project(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """F8: the commands that name no project wrote through the current project's links."""
    proj = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (proj / "reports").symlink_to(elsewhere)
    done = _gp(proj, *args, env={})
    assert done.returncode == 2 and "goes through a link" in done.stderr, done.stderr
    assert list(elsewhere.iterdir()) == []


def test_pythonwarnings_from_the_project_is_not_passed_on(tmp_path: Path) -> None:
    """Observation: PYTHONWARNINGS=ignore::mod.Cat imports ``mod`` at an interpreter's start;
    inside a project it is undone by the restart (here: refused, as restarted already)."""
    proj = _project(tmp_path)
    env = {"PYTHONWARNINGS": "ignore::DeprecationWarning", "GPUPORT_CLEAN_START": "1"}
    done = _gp(proj, "scan", ".", env=env)
    assert done.returncode == 2 and "PYTHONWARNINGS" in done.stderr


def test_a_compiler_in_the_users_home_is_confined_to_its_folder_whatever_home_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Observation: install_root's "never the home folder" rule read $HOME, which a project's
    environment can set; the password database's home counts too."""
    from gpuport.hipify import compiler

    home = subproc.stops()[-1]
    monkeypatch.setenv("HOME", str(tmp_path))
    program = home / "bin" / "hipcc"
    assert compiler.install_root(str(program)) == Path(os.path.realpath(home / "bin"))
