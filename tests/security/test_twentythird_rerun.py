"""Issue 23: what the twenty-third independent re-run found (session 10), the code-execution
half: where "the project" is taken to end, and what of the environment reaches a program
gpuport starts (see test_twentysecond_rerun.py for the first half of this class)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuport import subproc
from tests.conftest import run_subprocess


def test_the_project_top_is_found_past_folders_without_project_files(tmp_path: Path) -> None:
    """F5: a folder with no project file between the folder named and the project's top (no
    .git): the walk stopped there and the top's ``bin/hipcc`` ran."""
    top = tmp_path / "proj"
    (top / "a" / "b").mkdir(parents=True)
    (top / "CMakeLists.txt").write_text("project(x)\n")
    (top / "a" / "b" / "CMakeLists.txt").write_text("add_library(b b.cu)\n")  # a: none
    assert str(top.resolve()) in subproc.avoided([top / "a" / "b"])


def test_a_submodule_is_not_the_top(tmp_path: Path) -> None:
    """F8: a submodule's ``.git`` file ended the walk; the superproject's ``bin/`` stayed."""
    top = tmp_path / "super"
    (top / ".git").mkdir(parents=True)
    (top / "third_party" / "lib").mkdir(parents=True)
    (top / "third_party" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    found = subproc.avoided([top / "third_party" / "lib"])
    assert str(top.resolve()) in found


def test_a_home_set_to_the_project_does_not_hide_it(tmp_path: Path) -> None:
    """F6: ``HOME`` set to the project (its ``.envrc``) stopped the walk at the project, taken
    for the home folder. The home folder is the password database's now."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    code = (
        "from gpuport import subproc; import sys; "
        f"sys.exit(0 if {str(project.resolve())!r} in subproc.avoided([{str(project / 'src')!r}]) "
        "else 1)"
    )
    env = {**os.environ, "HOME": str(project)}
    assert subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


def test_the_environment_of_a_program_is_an_allow_list() -> None:
    """F14, F15: ``PERL5OPT=-d`` with a ``PERL5DB`` that names the project in escapes, and a
    ``PERL5LIB`` relative to ``/`` (where the tools run), passed the filter of project paths.
    With a project at hand a program now gets the allow-listed variables only, without
    relative entries in those that list folders."""
    proj = "/tmp/gpuport-twentythird/proj"
    base = {
        "PATH": "/usr/bin",
        "PERL5OPT": "-d",
        "PERL5DB": 'BEGIN{require "\\x2ftmp\\x2fgpuport-twentythird\\x2fproj\\x2fd.pl"}',
        "PERL5LIB": "tmp/gpuport-twentythird/proj/lib",
        "PYTHONSTARTUP": "/opt/x.py",
        "LD_PRELOAD": "/opt/x.so",
        "LD_LIBRARY_PATH": "../proj/lib:/opt/rocm/lib",
        "ROCM_PATH": "/opt/rocm",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "HIP_VISIBLE_DEVICES": "0",
    }
    env = subproc.safe_env(base=base, avoid=[proj])
    assert env["PATH"] == "/usr/bin" and env["ROCM_PATH"] == "/opt/rocm"
    assert env["LD_LIBRARY_PATH"] == "/opt/rocm/lib"
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C" and env["HIP_VISIBLE_DEVICES"] == "0"
    for gone in ("PERL5OPT", "PERL5DB", "PERL5LIB", "PYTHONSTARTUP", "LD_PRELOAD"):
        assert gone not in env
    assert subproc.safe_env(base=base)["PERL5OPT"] == "-d"  # no project: the user's own


def test_assess_hipify_check_leaves_the_project_out_of_its_probe(tmp_path: Path) -> None:
    """F1: ``ROCM_PATH=$P/rocm assess $P --hipify-check``: the probe that picks the target
    architecture was compiled with no project to leave out, so the system hipcc ran the
    project's clang and loaded its Perl modules (and the toolchain was then kept)."""
    project, marks = tmp_path / "proj", tmp_path / "marks"
    marks.mkdir()
    for name in ("clang++", "clang", "clang++-15", "clang-15"):
        exe = project / "rocm" / "llvm" / "bin" / name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text(f'#!/bin/sh\necho "$0 $*" >> {marks / name}\n')
        exe.chmod(0o755)
    (project / "perl" / "File").mkdir(parents=True)
    (project / "perl" / "File" / "Basename.pm").write_text(
        f'open(my $f, ">", "{marks / "perl"}"); 1;\n'
    )
    (project / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    env = {"ROCM_PATH": str(project / "rocm"), "PERL5LIB": str(project / "perl")}
    result = run_subprocess(
        "assess", str(project), "--hipify-check", "--no-progress", env=env, timeout=300
    )
    assert result.code in (0, 1, 2), result.err
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_bench_workers_of_an_assessed_project_get_no_project_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F9: ``assess --run-bench``'s collectives workers were given the user's PYTHONPATH with
    its entry into the project (their ``import torch`` would load the project's): only the
    in-process import path was cleaned. ``assess PROJECT`` now leaves the project out of every
    program's environment for the whole run."""
    from typer.testing import CliRunner

    from gpuport.cli.app import app

    project = tmp_path / "proj"
    (project / "py").mkdir(parents=True)
    (project / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    monkeypatch.setattr(subproc, "_ALWAYS", [])
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", str(project / "py"))
    CliRunner().invoke(app, ["assess", str(project), "--no-progress"])
    from gpuport.bench.workloads import collectives

    env = collectives._worker_env(0, 2, 12345, "gloo")
    assert str(project / "py") not in env.get("PYTHONPATH", "")


def test_a_copy_drops_set_user_id_bits(tmp_path: Path) -> None:
    """F16: ``hipify -o`` copied a project program's set-user-ID bit (run as root: a
    root-owned set-user-ID copy)."""
    from gpuport import fileio

    src = tmp_path / "p" / "tool"
    src.parent.mkdir()
    src.write_text("#!/bin/sh\n")
    src.chmod(0o4755)
    out = tmp_path / "o" / "tool"
    out.parent.mkdir()
    fileio.copy_atomic(src, out, src_root=src.parent)
    assert out.stat().st_mode & 0o7777 == 0o755


def test_an_output_named_like_a_backup_is_refused(tmp_path: Path) -> None:
    """F13: ``--output k.cu.gpuport.bak`` replaced the backup the same run had just written."""
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    result = run_subprocess("scan", str(tmp_path), "-o", str(tmp_path / "k.cu.gpuport.bak"))
    assert result.code == 2 and "keeps for its backups" in result.err


def test_a_portfolio_list_with_a_nul_byte_is_a_one_line_error(tmp_path: Path) -> None:
    """F4: a NUL byte in a line of ``--projects FILE`` ended as an internal error (exit 4)."""
    listing = tmp_path / "projects.txt"
    listing.write_bytes(b"a\x00b\n")
    result = run_subprocess("assess", "--projects", str(listing), "--no-progress")
    assert result.code == 2 and "NUL" in result.err, result.err


_K = "__global__ void k(float* x) { x[0] = __shfl_down_sync(0xffffffff, x[1], 1); }\n"


def test_hipify_writes_through_no_link_the_project_ships(tmp_path: Path) -> None:
    """F2, F7: ``hipify P/csrc -o P/out/gen`` with ``out`` a link the project ships wrote
    outside; ``hipify P/csrc --in-place`` and ``port P/csrc --apply`` with ``csrc`` such a link
    rewrote (and backed up) files outside."""
    project, victim = tmp_path / "p", tmp_path / "victim"
    (project / "csrc").mkdir(parents=True)
    victim.mkdir()
    (project / "csrc" / "k.cu").write_text(_K)
    (project / "out").symlink_to(victim)
    result = run_subprocess("hipify", str(project / "csrc"), "-o", str(project / "out" / "gen"))
    assert result.code == 2 and "goes through a link in the project" in result.err
    outside = tmp_path / "outside-src"
    outside.mkdir()
    (outside / "k.cu").write_text(_K)
    linked = tmp_path / "q"
    linked.mkdir()
    (linked / "csrc").symlink_to(outside)
    for args in (
        ("hipify", str(linked / "csrc"), "--in-place"),
        ("port", str(linked / "csrc"), "--apply"),
    ):
        result = run_subprocess(*args)
        assert result.code == 2 and "goes through a link in the project" in result.err, args
    assert sorted(p.name for p in victim.iterdir()) == []
    assert sorted(p.name for p in outside.iterdir()) == ["k.cu"]
    assert (outside / "k.cu").read_text() == _K


def test_hipify_does_not_write_a_tree_into_the_home_folder(tmp_path: Path) -> None:
    """F10: ``hipify P -o ~`` copied the project's ``.bashrc`` and ``.gitconfig`` (with
    ``core.fsmonitor``) over the user's."""
    project, home = tmp_path / "p", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "k.cu").write_text(_K)
    (project / ".gitconfig").write_text('[core]\n\tfsmonitor = "touch pwned"\n')
    (home / ".gitconfig").write_text("[user]\n\tname = me\n")
    result = run_subprocess("hipify", str(project), "-o", str(home), env={"HOME": str(home)})
    assert result.code == 2 and "home folder" in result.err
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = me\n"


def test_a_portfolio_report_is_checked_like_a_single_one(tmp_path: Path) -> None:
    """F12: ``assess A B -o A/requirements.txt`` replaced the project's file (and wrote through
    a link the project ships): the portfolio skipped every check of ``--output``."""
    first, second = tmp_path / "a", tmp_path / "b"
    for project in (first, second):
        project.mkdir()
        (project / "requirements.txt").write_text("torch\n")
    result = run_subprocess(
        "assess", str(first), str(second), "-o", str(first / "requirements.txt"), "--no-progress"
    )
    assert result.code == 2, result.err
    assert (first / "requirements.txt").read_text() == "torch\n"
