"""Issue 14 item 7: backups and writes are atomic; a killed run can be resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuport import fileio

CUDA = "__global__ void k(float* x) { x[0] = 1.0f; }\nvoid f() { cudaMalloc(0, 0); }\n"


@pytest.mark.parametrize("partial", [b"", CUDA.encode()[:17]])
def test_empty_or_cut_off_backup_is_repaired_from_the_original(
    cli, tmp_path: Path, partial: bytes
) -> None:  # type: ignore[no-untyped-def]
    """What a kill -9 or a full disk left with the old copy2: the re-run repairs it."""
    src = tmp_path / "k.cu"
    src.write_text(CUDA)
    (tmp_path / "k.cu.gpuport.bak").write_bytes(partial)
    res = cli("hipify", str(src), "--in-place", "--hip-version", "6.4")
    assert res.code == 0, res.err
    assert (tmp_path / "k.cu.gpuport.bak").read_text() == CUDA
    assert "hipMalloc" in src.read_text()


def test_backup_identical_to_the_source_is_kept(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A kill between the backup and the rewrite: the re-run goes on."""
    src = tmp_path / "k.cu"
    src.write_text(CUDA)
    (tmp_path / "k.cu.gpuport.bak").write_text(CUDA)
    assert cli("hipify", str(src), "--in-place", "--hip-version", "6.4").code == 0
    assert "hipMalloc" in src.read_text()


def test_a_different_backup_is_never_overwritten(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "k.cu"
    src.write_text(CUDA)
    (tmp_path / "k.cu.gpuport.bak").write_text("someone's own file\n")
    res = cli("hipify", str(src), "--in-place", "--hip-version", "6.4")
    assert res.code == 2
    assert "different backup" in res.err
    assert (tmp_path / "k.cu.gpuport.bak").read_text() == "someone's own file\n"
    assert src.read_text() == CUDA


def test_backup_write_failing_leaves_no_partial_backup(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """ENOSPC during the backup: no cut-off .gpuport.bak, no temp file, source untouched."""
    src = tmp_path / "k.cu"
    src.write_text(CUDA)
    real = fileio._write_all

    def full_disk(fd: int, data: bytes) -> None:
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio, "_write_all", full_disk)
    res = cli("hipify", str(src), "--in-place", "--hip-version", "6.4")
    assert res.code == 2
    assert "No space left" in res.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu"]
    assert src.read_text() == CUDA


def test_stale_temp_files_are_recognised_and_cleaned(tmp_path: Path) -> None:
    target = tmp_path / "k.cu"
    target.write_text("old")
    stale = tmp_path / ".k.cu.gpuport-0123abcd.tmp"
    stale.write_text("half")
    other = tmp_path / ".k.cu.swp"
    other.write_text("not ours")
    assert fileio.is_temp_name(stale.name) and not fileio.is_temp_name(other.name)
    fileio.write_atomic(target, "new")
    assert target.read_text() == "new"
    assert not stale.exists() and other.exists()


def test_kill_9_during_in_place_leaves_no_temp_and_resumes(tmp_path: Path) -> None:
    """Many files, killed in the write phase: every source is whole (original or
    translated), no temp file is left, and a re-run completes the translation."""
    proj = tmp_path / "proj"
    proj.mkdir()
    body = CUDA + "// padding\n" * 2000
    for i in range(300):
        (proj / f"k{i:03d}.cu").write_text(body)
    cmd = [sys.executable, "-m", "gpuport", "hipify", str(proj), "--in-place"]
    cmd += ["--hip-version", "6.4", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(Path(fileio.__file__).parents[1])}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.endswith(".gpuport.bak") for p in proj.iterdir()):
            break  # the write phase has begun
        time.sleep(0.01)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL  # killed in the write phase, not finished
    names = [p.name for p in proj.iterdir()]
    # The data goes to an unnamed file that gets its temporary name only for the instant
    # before the rename: a kill in that instant can leave one, always of gpuport's own
    # pattern (never a half-written source), and the next write to the folder removes it.
    temps = [n for n in names if n.endswith(".tmp")]
    assert len(temps) <= 1 and all(fileio.is_temp_name(n) for n in temps), temps
    for i in range(300):
        text = (proj / f"k{i:03d}.cu").read_text()
        assert text == body or "hipMalloc" in text
        bak = proj / f"k{i:03d}.cu.gpuport.bak"
        assert not bak.exists() or bak.read_text() == body
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert all("hipMalloc" in (proj / f"k{i:03d}.cu").read_text() for i in range(300))
    assert not [p.name for p in proj.iterdir() if p.name.endswith(".tmp")]  # cleaned up
