"""Issue 23, the thirtieth re-run's F2 (LOW): from a folder the shell reached through a link
the project ships (``cd P/sub``, ``sub`` -> a folder outside), ``--output ../x`` means ``P/x``
to the user, but the kernel resolves ``..`` from the link's target. gpuport refuses such a
path (one line, exit 2, nothing written) for report outputs, ``hipify -o`` and ``port ..
--apply``; the same path with no link on the way, or an absolute one, is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    """P (a git project) with ``sub`` a link to ``outside/target``; returns (P, outside)."""
    proj, outside = tmp_path / "P", tmp_path / "outside"
    (outside / "target").mkdir(parents=True)
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k() {}\n")
    (outside / "target" / "j.cu").write_text("__global__ void j() {}\n")
    (proj / "sub").symlink_to(outside / "target")
    return proj, outside


def _run(cwd: Path, pwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, capture_output=True, text=True,
        timeout=300, check=False,
        env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin", "HOME": str(cwd.parent / "h"),
             "PWD": pwd},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "made"),
    [
        (("scan", ".", "--format", "json", "--output", "../scan.json"), "scan.json"),
        (("hipify", ".", "-o", "../out"), "out"),
    ],
)
def test_dot_dot_from_a_linked_folder_is_refused(
    tmp_path: Path, args: tuple[str, ...], made: str
) -> None:
    proj, outside = _layout(tmp_path)
    done = _run(proj / "sub", str(proj / "sub"), *args)
    assert done.returncode == 2, done.stdout[-300:] + done.stderr[-300:]
    assert "climbs out of" in done.stderr and "Traceback" not in done.stderr
    assert not (outside / made).exists() and not (proj / made).exists()


def test_port_apply_on_dot_dot_from_a_linked_folder_is_refused(tmp_path: Path) -> None:
    proj, outside = _layout(tmp_path)
    done = _run(proj / "sub", str(proj / "sub"), "port", "..", "--apply")
    assert done.returncode == 2 and "climbs out of" in done.stderr
    assert not list(outside.rglob("*.gpuport.bak"))  # nothing written beside the target


def test_dot_dot_without_a_link_on_the_way_is_written(tmp_path: Path) -> None:
    proj, _ = _layout(tmp_path)
    (proj / "real").mkdir()
    (proj / "real" / "r.cu").write_text("__global__ void r() {}\n")
    done = _run(proj / "real", str(proj / "real"), "scan", ".", "--format", "json",
                "--output", "../scan.json")  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-300:]
    assert (proj / "scan.json").is_file()
    # an absolute output from the linked folder: the user named it exactly
    done = _run(proj / "sub", str(proj / "sub"), "scan", ".", "--format", "json",
                "--output", str(proj / "abs.json"))  # fmt: skip
    assert done.returncode in (0, 1) and (proj / "abs.json").is_file()
