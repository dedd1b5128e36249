"""Issue 23: what the twenty-fifth independent re-run found through the user's environment
inside a hostile project (F1-F7, F10, F12, F14; the DoS findings are in
test_twentyfifth_rerun.py). Each test runs gpuport as a user would, with a fake HOME, and
looks for a proof file the project's program would leave."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuport import subproc
from gpuport.bench.history import History
from gpuport.models import GpuportError

SRC = str(Path(__file__).resolve().parents[2] / "src")
KERNEL = "__global__ void k(float* x) { float* p; cudaMalloc(&p, 4); x[0] = 1.f; }\n"


def _tool(folder: Path, name: str, proof: Path, code: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\necho {name} >> {proof}\nexit {code}\n")
    (folder / name).chmod(0o755)


def _gpuport(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(cwd.parent / "home"), "PYTHONPATH": SRC, "LANG": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, env={**base, **env},
        capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_output_folder_is_left_out_of_the_checks_lookups(tmp_path: Path) -> None:
    """F12: the project's .envrc put ../out/bin on PATH; hipify copied its bin/hipcc there and
    --check, looking hipcc up after the writes, ran the copy."""
    proj, proof = tmp_path / "proj", tmp_path / "ran"
    (proj / "src").mkdir(parents=True)
    (proj / ".git").mkdir()
    (proj / "src" / "k.cu").write_text(KERNEL)
    _tool(proj / "bin", "hipcc", proof)
    _tool(tmp_path / "trusted", "hipcc", tmp_path / "trusted-ran", code=1)
    path = f"{tmp_path / 'out' / 'bin'}:{tmp_path / 'trusted'}:/usr/bin:/bin"
    _gpuport(proj, "hipify", ".", "-o", "../out", "--check", env={"PATH": path})
    assert (tmp_path / "out" / "bin" / "hipcc").exists()  # copied, as any other file
    assert not proof.exists()


def test_the_project_the_user_works_in_is_left_out_whatever_is_named(tmp_path: Path) -> None:
    """F14: `cd P && gpuport hipify /elsewhere/k.cu --check` ran P's bin/hipcc."""
    proj, other, proof = tmp_path / "proj", tmp_path / "other", tmp_path / "ran"
    (proj / ".git").mkdir(parents=True)
    other.mkdir()
    (other / "k.cu").write_text(KERNEL)
    _tool(proj / "bin", "hipcc", proof)
    _tool(tmp_path / "trusted", "hipcc", tmp_path / "trusted-ran", code=1)
    path = f"{proj / 'bin'}:{tmp_path / 'trusted'}:/usr/bin:/bin"
    _gpuport(proj, "hipify", str(other / "k.cu"), "--check", env={"PATH": path})
    assert not proof.exists()


def test_a_project_marked_only_by_its_environment_manager_is_a_project(tmp_path: Path) -> None:
    """F2: a tarball project whose only project file is mise.toml (which puts its bin/ on
    PATH): plain doctor run in it ran its rocminfo."""
    proj, proof = tmp_path / "proj", tmp_path / "ran"
    proj.mkdir()
    (proj / "mise.toml").write_text('[env]\n_.path = ["{{config_root}}/bin"]\n')
    _tool(proj / "bin", "rocminfo", proof)
    done = _gpuport(
        proj, "doctor", "--no-smoke-test", "--timeout", "2", "--format", "json",
        env={"PATH": str(proj / "bin")},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert not proof.exists()


@pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
                    reason="needs git to write an index")  # fmt: skip
def test_a_projects_module_on_pythonpath_is_not_imported_by_scan(tmp_path: Path) -> None:
    """F1: PYTHONPATH=$PWD from the project's .envrc; scan imported the project's dulwich/
    while reading the git index (assess already forgot the project's import paths)."""
    proj, proof = tmp_path / "proj", tmp_path / "ran"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "k.cu").write_text(KERNEL)
    subprocess.run(["git", "init", "-q", "."], cwd=proj, check=True)
    subprocess.run(["git", "add", "src"], cwd=proj, check=True)
    (proj / "dulwich").mkdir()
    (proj / "dulwich" / "__init__.py").write_text(f"open({str(proof)!r}, 'a').write('x')\n")
    for cmd in (["scan", "."], ["port", "."]):
        _gpuport(proj, *cmd, env={"PYTHONPATH": f"{proj}:{SRC}", "PATH": "/usr/bin:/bin"})
        assert not proof.exists(), cmd


def test_copied_files_never_make_the_output_a_git_directory(tmp_path: Path) -> None:
    """F3: HEAD and config beside *executable files* named objects and refs: git takes the
    folder for a repository (it only asks that those be executable) and ran the config's
    core.fsmonitor on `git status` in the output."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "k.cu").write_text(KERNEL)
    (proj / "HEAD").write_text("ref: refs/heads/main\n")
    (proj / "config").write_text("[core]\n\tfsmonitor = touch /tmp/never\n")
    for name in ("objects", "refs"):
        (proj / name).write_text("#!/bin/sh\n")
        (proj / name).chmod(0o755)
    done = _gpuport(tmp_path, "hipify", "proj", "-o", "out", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode in (0, 1), done.stderr
    assert (tmp_path / "out" / "src").is_dir()
    assert not (tmp_path / "out" / "HEAD").exists()
    assert not (tmp_path / "out" / "config").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_for_the_rocm_version_file_does_not_hang_hipify(tmp_path: Path) -> None:
    """F5: ROCM_PATH from the project's .envrc; its .info/version a FIFO: hipify blocked in
    open() for ever on a machine without hipcc."""
    proj = tmp_path / "proj"
    (proj / ".info").mkdir(parents=True)
    (proj / ".git").mkdir()
    (proj / "k.cu").write_text(KERNEL)
    os.mkfifo(proj / ".info" / "version")
    started = time.monotonic()
    _gpuport(
        proj, "hipify", ".", "-o", "../out",
        env={"PATH": str(tmp_path / "nobin"), "ROCM_PATH": str(proj)},
    )  # fmt: skip
    assert time.monotonic() - started < 120


def test_a_history_file_that_is_not_a_plain_history_is_refused_quickly(tmp_path: Path) -> None:
    """F7: schema_version as a view over an endless recursive query hung assess --bench; a
    trigger would run the file's own SQL on gpuport's INSERT."""
    bad = tmp_path / "h.sqlite"
    conn = sqlite3.connect(bad)
    conn.execute(
        "CREATE VIEW schema_version AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
        "SELECT x + 1 FROM c) SELECT x AS version FROM c WHERE x < 0"
    )
    conn.commit()
    conn.close()
    started = time.monotonic()
    with pytest.raises(GpuportError, match="view"):
        History(bad).list()
    assert time.monotonic() - started < 30


def test_a_history_file_in_the_avoided_project_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F4: HOME set to the project (and a .local link it ships): assess --run-bench wrote the
    history where the project chose. (A file named on the command line is the user's.)"""
    proj, victim = tmp_path / "proj", tmp_path / "victim"
    (proj / ".git").mkdir(parents=True)
    victim.mkdir()
    (proj / ".local").symlink_to(victim)
    chosen = proj / ".local" / "share" / "gpuport" / "history.sqlite"
    monkeypatch.setenv("GPUPORT_HISTORY", str(chosen))
    history = History()
    assert not History(chosen).in_project()
    assert not history.in_project()
    subproc.avoid_always([proj])
    assert history.in_project()
    with pytest.raises(GpuportError, match="lies in the project"):
        history.add(None)  # type: ignore[arg-type]  # refused before the run is read
    assert not any(victim.rglob("*"))  # no folder made through the link
    (victim / "share" / "gpuport").mkdir(parents=True)
    sqlite3.connect(victim / "share" / "gpuport" / "history.sqlite").close()
    with pytest.raises(GpuportError, match="lies in the project"):
        history.list()


def test_a_file_named_through_a_link_of_a_markerless_project_is_not_rewritten(
    tmp_path: Path,
) -> None:
    """F10: `hipify proj/src/k.cu --in-place` from the folder above a project with no project
    file, `src` a link to a folder of the user's: the file there was rewritten."""
    victim = tmp_path / "victim" / "src"
    victim.mkdir(parents=True)
    (victim / "k.cu").write_text(KERNEL)
    (tmp_path / "dl" / "proj").mkdir(parents=True)
    (tmp_path / "dl" / "proj" / "README").write_text("see src/\n")
    (tmp_path / "dl" / "proj" / "src").symlink_to(victim)
    done = _gpuport(
        tmp_path / "dl", "hipify", "proj/src/k.cu", "--in-place", env={"PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 2, done.stderr
    assert "goes through a link" in done.stderr
    assert (victim / "k.cu").read_text() == KERNEL
    assert not list(victim.glob("*.gpuport.bak"))


def test_a_compile_check_run_unconfined_by_the_environment_says_so(tmp_path: Path) -> None:
    """F6: GPUPORT_UNCONFINED_COMPILE=1 from a project's .envrc switched the compile
    confinement off. It is taken only when gpuport starts outside any project (said on
    stderr); inside one it is not taken, and that is said too."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text(KERNEL)
    env = {"PATH": str(tmp_path / "nobin"), "GPUPORT_UNCONFINED_COMPILE": "1"}
    done = _gpuport(tmp_path, "hipify", "proj", "-o", "out", "--check", env=env)
    assert "the compile check runs unconfined" in done.stderr
    plain = _gpuport(tmp_path, "hipify", "proj", "-o", "out2", env=env)
    assert "unconfined" not in plain.stderr
    # from inside the project (where its .envrc sets it) the switch is not taken at all
    (proj / ".envrc").write_text("export GPUPORT_UNCONFINED_COMPILE=1\n")
    inside = _gpuport(proj, "hipify", ".", "-o", str(tmp_path / "out3"), "--check", env=env)
    assert "is not taken inside a project folder" in inside.stderr
    assert "runs unconfined" not in inside.stderr
