"""Issue 23: what the twenty-second independent re-run found (session 10). Every finding was
a code execution through the environment a user works in while inside a project: a PATH entry
into the project when one *file* of it is named, and the other variables that name places in
the project (ROCM_PATH/HIP_PATH read by Debian's hipcc and hipconfig, PYTHONPATH read by
doctor's `import torch` and by gpuport itself, LD_LIBRARY_PATH and PERL5LIB read by perl)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gpuport import subproc
from tests.conftest import run_subprocess


def _canary(path: Path, marks: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {marks / path.name}\n')
    path.chmod(0o755)


def _marks(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


def test_a_file_of_a_project_leaves_the_whole_project_out(tmp_path: Path) -> None:
    """F1: ``cd proj && gpuport hipify csrc/k.cu --check`` with the project's ``.venv/bin`` on
    PATH ran the project's ``hipcc``: only the file named was left out of the lookup."""
    project, marks = tmp_path / "proj", tmp_path / "marks"
    marks.mkdir()
    _canary(project / ".venv" / "bin" / "hipcc", marks)
    (project / "csrc").mkdir()
    (project / "csrc" / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    path = os.pathsep.join([str(project / ".venv" / "bin"), os.environ.get("PATH", "")])
    for cwd in (project, tmp_path):  # from inside the project, and (a .venv marks it) outside
        result = run_subprocess(
            "hipify", str(project / "csrc" / "k.cu"), "--check", cwd=cwd, env={"PATH": path}
        )
        assert result.code in (0, 1, 2, 3), result.err
        assert _marks(marks) == []


def test_avoided_reaches_the_project_a_file_sits_in(tmp_path: Path) -> None:
    git = tmp_path / "repo"
    (git / ".git").mkdir(parents=True)
    (git / "src" / "deep").mkdir(parents=True)
    (git / "src" / "deep" / "k.cu").write_text("")
    assert str(git.resolve()) in subproc.avoided([git / "src" / "deep" / "k.cu"])
    plain = tmp_path / "plain"  # no git: the run of folders with project files
    (plain / "sub").mkdir(parents=True)
    (plain / "CMakeLists.txt").write_text("")
    (plain / "sub" / "CMakeLists.txt").write_text("")
    (plain / "sub" / "inner").mkdir()
    assert str(plain.resolve()) in subproc.avoided([plain / "sub" / "inner"])
    assert str(tmp_path.resolve()) not in subproc.avoided([plain / "sub" / "inner"])


def test_safe_env_drops_what_names_the_project() -> None:
    """F2-F4, F6: every variable's entries inside the project go, whatever the variable."""
    proj = "/tmp/gpuport-twentysecond/proj"
    base = {
        "PATH": f"{proj}/bin:/usr/bin",
        "ROCM_PATH": f"{proj}/rocm",
        "HIP_PATH": f"{proj}/rocm",
        "PYTHONPATH": f"/opt/lib:{proj}/src",
        "LD_LIBRARY_PATH": f"{proj}/build/lib:/opt/rocm/lib",
        "PERL5LIB": f"{proj}/perl5",
        "PERL5OPT": f"-I{proj}/lib -MEvil",
        "LANG": "C.UTF-8",
        "HOME": "/root",
    }
    env = subproc.safe_env(base=base, avoid=[proj])
    assert env == {
        "PATH": "/usr/bin",
        "PYTHONPATH": "/opt/lib",
        "LD_LIBRARY_PATH": "/opt/rocm/lib",
        "LANG": "C.UTF-8",
        "HOME": "/root",
    }
    assert subproc.safe_env(base=base)["ROCM_PATH"] == f"{proj}/rocm"  # no project: kept


def test_assess_doctor_with_rocm_path_and_pythonpath_in_the_project(tmp_path: Path) -> None:
    """F3, F4: ``ROCM_PATH=$P/rocm assess --doctor`` let the system hipconfig (a perl script
    that runs ``$ROCM_PATH/llvm/bin/clang++ --version``) run the project's clang;
    ``PYTHONPATH=$P/src`` let doctor's torch probe import the project's ``torch.py``; both in
    programs gpuport started with the user's environment. LD_LIBRARY_PATH and PERL5LIB, read
    by perl, likewise (F6)."""
    project, marks = tmp_path / "proj", tmp_path / "marks"
    marks.mkdir()
    for name in ("clang++", "clang", "clang++-15", "clang-15", "hipconfig", "hipcc"):
        _canary(project / "rocm" / "llvm" / "bin" / name, marks)
        _canary(project / "rocm" / "bin" / name, marks)
    (project / "src").mkdir()
    (project / "src" / "torch.py").write_text(f"open({str(marks / 'torch')!r}, 'w')\n")
    (project / "perl5" / "File").mkdir(parents=True)
    (project / "perl5" / "File" / "Basename.pm").write_text(
        f'open(my $f, ">", "{marks / "perl"}"); 1;\n'
    )
    (project / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    env = {
        "ROCM_PATH": str(project / "rocm"),
        "HIP_PATH": str(project / "rocm"),
        "PYTHONPATH": str(project / "src"),
        "PERL5LIB": str(project / "perl5"),
    }
    result = run_subprocess("assess", "--doctor", str(project), "--no-progress", env=env)
    assert result.code in (0, 1), result.err
    assert _marks(marks) == []


def test_gpuport_itself_forgets_import_paths_inside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F4b: ``PYTHONPATH=$P/lib assess --run-bench`` imported the project's ``torch.py`` in
    gpuport's own process. A project's folders leave ``sys.path`` before assess goes on."""
    monkeypatch.chdir(tmp_path)  # not this checkout: the current folder's project is left out too
    inside = tmp_path / "proj" / "lib"
    inside.mkdir(parents=True)
    saved = list(sys.path)
    try:
        sys.path[:] = [str(inside), *saved]
        subproc.forget_imports_from([tmp_path / "proj"])
        assert str(inside) not in sys.path
        assert sys.path == saved
    finally:
        sys.path[:] = saved


def test_a_portfolio_leaves_every_listed_project_out(tmp_path: Path) -> None:
    """F1 (portfolio): ``assess A B --hipify-check`` with A's ``.venv/bin`` on PATH ran A's
    hipcc while B was assessed: only the project at hand was left out."""
    marks = tmp_path / "marks"
    marks.mkdir()
    first, second = tmp_path / "a", tmp_path / "b"
    _canary(first / ".venv" / "bin" / "hipcc", marks)
    for project in (first, second):
        project.mkdir(exist_ok=True)
        (project / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    path = os.pathsep.join([str(first / ".venv" / "bin"), os.environ.get("PATH", "")])
    result = run_subprocess(
        "assess", str(first), str(second), "--hipify-check", "--no-progress", env={"PATH": path}
    )
    assert result.code in (0, 1, 2), result.err
    assert _marks(marks) == []


def test_scan_starts_no_more_workers_than_it_has_work_or_cores(tmp_path: Path) -> None:
    """F7: ``scan -j 100000`` forked a hundred thousand workers before any work (killed after
    a minute); ``-j 1000`` took 5.8 s for 300 files."""
    import time

    for i in range(300):
        (tmp_path / f"m{i}.py").write_text("import torch\n")
    started = time.monotonic()
    result = run_subprocess("scan", str(tmp_path), "-j", "100000", "-f", "compact")
    assert result.code in (0, 1), result.err
    assert time.monotonic() - started < 60


def test_hipify_copies_no_git_directory_into_its_output(tmp_path: Path) -> None:
    """F9: a project whose root holds ``HEAD``, ``config`` (with ``core.fsmonitor``),
    ``objects/`` and ``refs/`` as plain files was copied whole into ``-o OUT``; OUT, with no
    ``.git`` of its own, was then a bare repository to git, and ``git status`` there ran the
    project's command. HEAD and config are left out, and said."""
    project, out = tmp_path / "p", tmp_path / "out"
    (project / "objects" / "info").mkdir(parents=True)
    (project / "refs" / "heads").mkdir(parents=True)
    (project / "objects" / "info" / "packs").write_text("\n")
    (project / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (project / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "config").write_text('[core]\n\tfsmonitor = "touch pwned"\n')
    (project / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    result = run_subprocess("hipify", str(project), "-o", str(out), "-f", "json")
    assert result.code == 0, result.err
    assert not (out / "HEAD").exists() and not (out / "config").exists()
    assert (out / "refs" / "heads" / "main").exists()  # the rest is copied
    assert "would make the output folder a git repository" in result.out


def test_bad_paths_are_one_line_errors(tmp_path: Path) -> None:
    """F10: a name over 255 bytes given as a path or an output, and a project setting
    ``model_config = "~nosuchuser/x"``, ended in 'internal error' (exit 4)."""
    long = "a" * 300
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    for args in (
        ("scan", str(tmp_path), "-o", str(tmp_path / f"{long}.json")),
        ("hipify", long),
        ("port", long),
    ):
        result = run_subprocess(*args, cwd=tmp_path)
        assert result.code == 2, (args, result.err)
        assert "internal error" not in result.err and "file name too long" in result.err
    (tmp_path / "gpuport.toml").write_text('model_config = "~nosuchuser-gpuport/config.json"\n')
    result = run_subprocess("assess", str(tmp_path), "--no-progress")
    assert result.code == 2, result.err
    assert "internal error" not in result.err


def test_the_action_runs_python_isolated() -> None:
    """F8: the composite action ran ``python -c``/``python -m pip`` in the checked-out
    repository, where a ``secrets.py`` or ``pip.py`` of the pull request would be imported
    (and a fixed token would void the report's stop-commands guard)."""
    from tests.conftest import REPO

    action = (REPO / "action.yml").read_text()
    runs = [line.strip() for line in action.splitlines() if "python " in line and "-" in line]
    calls = [line for line in runs if "python -" in line]
    assert calls and all("python -I " in line for line in calls), calls


def test_a_write_removes_only_its_own_stale_temporary_files(tmp_path: Path) -> None:
    """F11: any write (a read-only ``scan -o report.json`` into the project's folder) removed
    every file of the folder named like a gpuport temporary file, the project's own too. Only
    what a killed run left for the same target goes."""
    from gpuport import fileio

    mine = tmp_path / ".report.json.gpuport-0123abcd.tmp"
    theirs = tmp_path / ".notes.txt.gpuport-89abcdef.tmp"
    mine.write_text("left by a killed run")
    theirs.write_text("a project file of that shape")
    fileio.write_atomic(tmp_path / "report.json", "{}")
    assert not mine.exists()
    assert theirs.read_text() == "a project file of that shape"


def test_port_with_thousands_of_cmake_files_each_with_a_cuda_lookup(tmp_path: Path) -> None:
    """Second reviewer, F1: a root ``project(x LANGUAGES CXX CUDA)`` and N small ``.cmake``
    files each with ``find_package(CUDA)``: the CMake fix read every CMake file again for
    each one (2,000 files 30 s CPU; 4,000 past two minutes). Read once, kept per folder."""
    from gpuport.port import PortOptions, port_path
    from tests.security.test_stalls import _within

    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
    )
    for i in range(2_000):
        (tmp_path / f"c{i}.cmake").write_text(f"find_package(CUDA)\nset(V{i} 1)\n")
    # about 6 s CPU on the reference VM (session 14's and 15's code alike, 2026-11-29), so a
    # bound of 6 failed a loaded CI run by 1.2 s; the stall it guards took 30 s
    _within(lambda: port_path(tmp_path, PortOptions()), 12.0)
