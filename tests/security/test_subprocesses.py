"""Issue 14 item 9: programs gpuport starts see a sanitized PATH and a neutral folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuport import subproc
from gpuport.hipify import run as hipify_run


def _marker_tool(folder: Path, name: str, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!/bin/sh\ntouch {marker}\necho 'HIP version: 9.9-x'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)


def test_safe_path_drops_relative_empty_and_project_entries(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "bin").mkdir(parents=True)
    raw = os.pathsep.join([".", "", "bin", str(proj / "bin"), "/usr/bin", "/usr/bin", "/bin"])
    assert subproc.safe_path(raw, avoid=[proj]) == os.pathsep.join(["/usr/bin", "/bin"])


def test_hipcc_from_a_relative_path_entry_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The field trial: PATH="bin:..." run from a folder holding bin/hipcc (or bin/python3)."""
    marker = tmp_path / "ran"
    proj = tmp_path / "proj"
    _marker_tool(proj / "bin", "hipcc", marker)
    monkeypatch.chdir(proj)
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", ".", "", "/usr/bin", "/bin"]))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    hipify_run.detect_hip_version()
    assert not marker.exists()


def test_hipcc_inside_the_project_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    proj = tmp_path / "proj"
    _marker_tool(proj / "tools", "hipcc", marker)
    monkeypatch.setenv("PATH", os.pathsep.join([str(proj / "tools"), "/usr/bin", "/bin"]))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    hipify_run.detect_hip_version(avoid=(proj,))
    assert not marker.exists()
    assert hipify_run.detect_hip_version() == "9.9"  # the same tool outside a project is used
    assert marker.exists()


def test_hipcc_runs_in_a_neutral_folder_with_a_clean_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen"
    tools = tmp_path / "tools"
    tools.mkdir()
    tool = tools / "hipcc"
    tool.write_text(f'#!/bin/sh\npwd > {seen}\necho "$PATH" >> {seen}\necho "HIP version: 6.1"\n')
    tool.chmod(0o755)
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(tools), "/usr/bin", "/bin"]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no cached version
    monkeypatch.setattr(hipify_run, "find_include", lambda *a, **k: None)  # ask hipcc itself
    assert hipify_run.detect_hip_version() == "6.1"
    cwd, path = seen.read_text().splitlines()
    # a throw-away folder of gpuport's (or /), never the caller's folder inside the project
    assert not Path(cwd).resolve().is_relative_to(proj.resolve())
    assert cwd == subproc.NEUTRAL_CWD or Path(cwd).name.startswith("gpuport-")
    assert "." not in path.split(os.pathsep)


#: Modules that may import subprocess themselves, and why.
SUBPROCESS_ALLOWED = {
    "subproc.py": "the one door: argv only, sanitized PATH, stdin closed, limits",
    "bench/workloads/collectives.py": "starts gpuport's own collectives workers (several at "
    "once, each a python -m gpuport module), never a project's program",
    "scan/engine.py": "a pool of gpuport's own scan workers (multiprocessing), no program",
    "assess/portfolio.py": "a pool of gpuport's own assess workers (multiprocessing), no program",
    "startup.py": "starts this same interpreter and command again (os.execve of sys.executable "
    "with sys.orig_argv), once, without what a project's environment set for it",
}


def test_no_module_but_subproc_starts_programs() -> None:
    """Issue 23 item 3: every external program goes through gpuport.subproc.run."""
    import ast

    import gpuport

    src = Path(gpuport.__file__).parent
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        if "fixtures" in path.parts:
            continue
        rel = path.relative_to(src).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in ("subprocess", "pty", "multiprocessing"):
                    found.setdefault(rel, []).append(name)
            spawns = ("system", "popen", "execv", "execve", "execvp", "spawnv", "posix_spawn")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in spawns
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ):
                found.setdefault(rel, []).append(f"os.{node.attr}")
    unexpected = {k: v for k, v in found.items() if k not in SUBPROCESS_ALLOWED}
    assert not unexpected, f"modules that start programs outside gpuport.subproc: {unexpected}"
    assert set(SUBPROCESS_ALLOWED) <= set(found), "stale allow-list entry"


@pytest.mark.parametrize("command", [["scan", "."], ["assess", ".", "--no-progress"], ["doctor"]])
def test_a_repository_uname_never_runs(tmp_path: Path, command: list[str]) -> None:
    """``platform.platform()``/``processor()`` ran ``uname -p`` through the raw PATH: with a
    relative PATH entry, a scanned repository's ``bin/uname`` ran for ``gpuport scan .``."""
    from tests.conftest import run_subprocess

    marker = tmp_path / "ran"
    proj = tmp_path / "proj"
    for name in ("uname", "python3", "hipcc", "nvidia-smi", "rocminfo", "sh", "ldconfig"):
        _marker_tool(proj / "bin", name, marker)
    (proj / "train.py").write_text("import torch\ntorch.cuda.is_available()\n", encoding="utf-8")
    import sys

    path = os.pathsep.join(["bin", ".", str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    res = run_subprocess(*command, cwd=proj, env={"PATH": path})
    assert res.code in (0, 1), res.err
    assert not marker.exists(), f"a program of the repository ran for gpuport {command[0]}"


def test_a_program_gets_a_memory_limit(tmp_path: Path) -> None:
    """Red team: a macro bomb in a project file grew the compiler to 3 GB. ``max_memory``
    caps each program's data the moment it starts; without it the same program runs."""
    import sys

    grab = [sys.executable, "-c", "b = bytearray(600 << 20); print(len(b))"]
    done = subproc.run(grab, timeout_s=60, max_memory=300 << 20)
    assert done.returncode != 0 and "MemoryError" in done.text()
    done = subproc.run(grab, timeout_s=60)
    assert done.returncode == 0 and str(600 << 20) in done.text()


def test_the_compile_check_has_a_budget_for_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """N units that each stall (an #include of a FIFO) took N x 120 s: past the run's budget
    the rest are not compiled, and say why."""
    from gpuport.hipify import check, compiler

    calls: list[float] = []
    clock = [1000.0]

    def slow(*_a: object, timeout_s: float, **_k: object) -> compiler.Compiled:
        calls.append(timeout_s)
        clock[0] += timeout_s  # each compile stalls to its timeout
        return compiler.Compiled(False, f"timed out after {timeout_s:g} s", ["clang"])

    monkeypatch.setattr(check.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(check, "run_compile", slow)
    root = tmp_path / "p"
    root.mkdir()
    for i in range(4):
        (root / f"k{i}.cu").write_text("__global__ void k() {}\n")
    report = hipify_run.hipify_path(root, out_dir=tmp_path / "out")
    chain = compiler.Toolchain("/usr/bin/hipcc", "/usr/bin/clang", (), ())
    check.check_report(report, offload_archs=["gfx90a"], chain=chain, budget_s=300)
    statuses = [f.compile.status for f in report.files if f.compile]
    assert statuses.count("failed") == 3 and statuses.count("not compiled") == 1, statuses
    assert calls == [120, 120, 60]  # each compile gets at most what is left
    spent = [f.compile.error for f in report.files if f.compile and not f.compile.ok]
    assert any("time budget" in (e or "") for e in spent)


def test_a_limited_program_that_is_not_there_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        subproc.run([str(tmp_path / "none")], timeout_s=10, max_memory=1 << 30)
