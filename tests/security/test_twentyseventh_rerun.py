"""Issue 23: the twenty-seventh re-run (short) on the start-up cleaning: the project's
environment could say "already cleaned" (GPUPORT_CLEAN_START=1), and LD_LIBRARY_PATH entries the
loader reads otherwise than gpuport did (``$LIB``, ``;``) passed the check. Each case is run with
GPUPORT_CLEAN_START=1, so what start-up finds left to undo ends the command (exit 2) instead of
starting it again: the project's libffi would otherwise load at ``import ctypes``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.parametrize(
    "value",
    ["{proj}/lib", "/usr/lib;{proj}/lib", "{parent}/cuda-$LIB"],
    ids=["inside", "semicolon", "loader-token"],
)
def test_an_interpreter_setting_into_the_project_is_never_taken_as_undone(
    tmp_path: Path, value: str
) -> None:
    proj = tmp_path / "cuda-lib"
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    env = {
        "HOME": str(tmp_path / "home"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": SRC,
        "GPUPORT_CLEAN_START": "1",
        "LD_LIBRARY_PATH": value.format(proj=proj, parent=tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "gpuport", "scan", "."], cwd=proj, env=env,
        capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "still names the project" in done.stderr


def _scan_in(proj: Path, env: dict[str, str], python: str = sys.executable) -> None:
    subprocess.run(
        [python, "-m", "gpuport", "scan", "."], cwd=proj, env=env,
        capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_an_import_path_above_the_project_does_not_import_it_by_its_folder_name(
    tmp_path: Path,
) -> None:
    # F3: PYTHONPATH=~ with the checkout ~/typer: `import typer` was the project's __init__.py
    proj = tmp_path / "typer"
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k() {}\n")
    marker = tmp_path / "MARKER"
    (proj / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    _scan_in(proj, {**env, "PYTHONPATH": f"{SRC}:{tmp_path}"})
    assert not marker.exists()


def test_a_project_inside_the_interpreters_prefix_is_not_the_interpreters_own(
    tmp_path: Path,
) -> None:
    # F6: `pip install -e git+...` clones into $VIRTUAL_ENV/src/<name>: the prefix exemption
    # kept the project's PYTHONPATH entry, and its typer.py ran
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    proj = venv / "src" / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k() {}\n")
    marker = tmp_path / "MARKER"
    (proj / "typer.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nraise ImportError('x')\n"
    )
    import typer  # the real one: where this test's interpreter finds gpuport's dependencies

    site = str(Path(typer.__file__).resolve().parents[1])
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    _scan_in(proj, {**env, "PYTHONPATH": f"{SRC}:{proj}:{site}"}, str(venv / "bin" / "python"))
    assert not marker.exists()


def test_a_tmpdir_through_proc_self_cwd_and_a_project_link_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # F4: TMPDIR=/proc/self/cwd/tmp (the project's .envrc) and the project's `tmp -> elsewhere`
    import tempfile

    from gpuport import subproc

    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (proj / "tmp").symlink_to(elsewhere)
    monkeypatch.chdir(proj)
    monkeypatch.setenv("TMPDIR", "/proc/self/cwd/tmp")
    monkeypatch.setattr(tempfile, "tempdir", None)
    subproc.neutral_tempdir([proj])
    used = Path(tempfile.gettempdir()).resolve()
    assert not used.is_relative_to(elsewhere) and not used.is_relative_to(proj)
