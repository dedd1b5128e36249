"""The engine: diff vs apply, backups and links, select/ignore, verification, idempotence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport.models import GpuportError
from tests.port.helpers import project, run

KERNEL = "__device__ int f(int v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"
REQS = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.2.1+cu121\n"


def test_diff_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL, "requirements.txt": REQS})
    before = sorted(p.name for p in root.iterdir())
    report = run(root)
    assert report.mode == "diff" and report.written == []
    assert sorted(p.name for p in root.iterdir()) == before
    diff = report.diff()
    assert "--- a/k.cu\n+++ b/k.cu\n" in diff
    assert "--- /dev/null\n+++ b/requirements-rocm.txt\n" in diff
    # every hunk names what it fixes
    for f in report.files:
        for h in f.hunks:
            assert h.findings and h.header().startswith("@@ -") and "gpuport: GP" in h.header()


def test_apply_writes_backs_up_and_verifies(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL, "requirements.txt": REQS})
    report = run(root, apply=True)
    assert sorted(report.written) == ["k.cu", "requirements-rocm.txt"]
    assert report.backups == ["k.cu.gpuport.bak"]
    assert (root / "k.cu.gpuport.bak").read_text() == KERNEL
    assert not (root / "requirements.txt.gpuport.bak").exists()  # untouched: no backup
    v = report.verification
    assert v is not None and v.addressed >= 3
    assert v.still_reported == [] and v.new_findings == []
    again = run(root)
    assert again.files == [] and again.fixes == []


def test_the_diff_applies_with_patch(tmp_path: Path) -> None:
    import shutil
    import subprocess

    patch = shutil.which("patch")
    if patch is None:
        pytest.skip("patch not installed")
    root = project(tmp_path / "a", {"k.cu": KERNEL, "requirements.txt": REQS})
    diff = run(root).diff()
    copy = project(tmp_path / "b", {"k.cu": KERNEL, "requirements.txt": REQS})
    done = subprocess.run([patch, "-p1", "-s"], input=diff, text=True, cwd=copy, check=False)
    assert done.returncode == 0
    run(root, apply=True, verify=False)
    assert (copy / "k.cu").read_text() == (root / "k.cu").read_text()
    assert (copy / "requirements-rocm.txt").read_text() == (
        root / "requirements-rocm.txt"
    ).read_text()


def test_never_writes_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    root = project(tmp_path / "p", {"k.cu": KERNEL, "requirements.txt": REQS})
    os.symlink(outside, root / "requirements-rocm.txt")
    report = run(root)  # the route file's place is taken by a link: that fix is left out
    assert not any(f.path == "requirements-rocm.txt" for f in report.files)
    assert outside.read_text() == "keep\n"


def test_a_foreign_backup_stops_the_run_before_anything_is_written(tmp_path: Path) -> None:
    root = project(
        tmp_path, {"k.cu": KERNEL, "requirements.txt": REQS, "k.cu.gpuport.bak": "other\n"}
    )
    with pytest.raises(GpuportError, match="not a copy"):
        run(root, apply=True)
    assert (root / "k.cu").read_text() == KERNEL
    assert not (root / "requirements-rocm.txt").exists()


def test_select_and_ignore(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL, "requirements.txt": REQS})
    only = run(root, select=frozenset({"GP3"}))
    assert [f.path for f in only.files] == ["k.cu"]
    none = run(root, ignore=frozenset({"GP302"}))
    assert [f.path for f in none.files] == ["requirements-rocm.txt"]


def test_counts_for_assess(tmp_path: Path) -> None:
    root = project(tmp_path, {"k.cu": KERNEL, "requirements.txt": REQS})
    report = run(root)
    assert 0 < report.findings_with_safe_fix <= report.findings_with_fix <= report.findings_total


def test_needs_a_folder(tmp_path: Path) -> None:
    f = tmp_path / "k.cu"
    f.write_text(KERNEL)
    with pytest.raises(GpuportError, match="folder"):
        run(f)
