"""Issue 23: what the twenty-sixth independent re-run found: a project's environment acting on
gpuport's own process (its import path, bytecode cache, loader path, interactive flag), not
only on the programs it starts; and project files of environment managers not yet known."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuport import startup
from gpuport.bench.history import History

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(cwd.parent / "home"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, "-m", "gpuport", *args], cwd=cwd, env={**base, **env},
        capture_output=True, text=True, timeout=240, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "k.cu").write_text("__global__ void k(float* x) { x[0] = 1.f; }\n")
    return proj


def test_a_library_module_the_project_ships_on_pythonpath_is_not_imported(tmp_path: Path) -> None:
    """F3: PYTHONPATH=$PWD from the project's .envrc and a typer.py there: gpuport's own
    `import typer` ran it, before the command could drop the path."""
    proj, proof = _project(tmp_path), tmp_path / "ran"
    (proj / "typer.py").write_text(f"open({str(proof)!r}, 'a').write('x')\n")
    done = _run(proj, "scan", ".", env={"PYTHONPATH": f"{proj}{os.pathsep}{SRC}"})
    assert done.returncode in (0, 1), done.stderr
    assert not proof.exists()


def test_the_interactive_flag_a_project_sets_is_dropped(tmp_path: Path) -> None:
    """F8: PYTHONINSPECT from the project's environment left a prompt waiting on stdin after
    the command (and a traceback on an error)."""
    proj = _project(tmp_path)
    done = _run(proj, "scan", ".", env={"PYTHONPATH": SRC, "PYTHONINSPECT": "1"})
    assert done.returncode in (0, 1), done.stderr
    assert ">>>" not in done.stderr and ">>>" not in done.stdout


def test_a_bytecode_cache_reached_through_the_project_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F7: PYTHONPYCACHEPREFIX=$PWD/.pycache, a link the project ships: gpuport's bytecode was
    written through it, and bytecode the project put there was loaded."""
    proj = _project(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (proj / ".pycache").symlink_to(victim)
    monkeypatch.chdir(proj)
    monkeypatch.setattr(sys, "pycache_prefix", str(proj / ".pycache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv(startup.AGAIN, "1")  # no second start inside the test process
    startup.clean_start()
    assert sys.pycache_prefix is None and sys.dont_write_bytecode


def test_import_paths_of_the_current_project_are_dropped_but_gpuports_own_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = _project(tmp_path)
    monkeypatch.chdir(proj)
    monkeypatch.setattr(sys, "path", [str(proj), str(proj / "lib"), "", SRC, *sys.path])
    monkeypatch.setenv(startup.AGAIN, "1")
    startup.clean_start()
    assert str(proj) not in sys.path and str(proj / "lib") not in sys.path and "" not in sys.path
    assert SRC in sys.path


def test_a_mise_local_config_marks_a_project(tmp_path: Path) -> None:
    """F1: a project whose only environment file is .mise.local.toml (or .config/mise.toml)
    putting its bin/ on PATH: doctor run in it ran its programs."""
    for i, name in enumerate((".mise.local.toml", ".config/mise.toml", "devenv.nix")):
        proj = tmp_path / f"case{i}" / "proj"
        (proj / Path(name).parent).mkdir(parents=True, exist_ok=True)
        (proj / name).write_text("")
        (proj / "src").mkdir()
        assert startup.project_tops(str(proj / "src")) == [str(proj)], name


def test_bench_run_inside_a_project_does_not_use_a_history_reached_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F4: `gpuport bench` inside a project whose .envrc set HOME to it, and a .local link it
    ships: the history was made through the link (bench leaves no project out on its own)."""
    proj, victim = _project(tmp_path), tmp_path / "victim"
    victim.mkdir()
    (proj / ".local").symlink_to(victim)
    monkeypatch.chdir(proj)
    monkeypatch.setenv("GPUPORT_HISTORY", str(proj / ".local" / "share" / "gpuport" / "h.sqlite"))
    assert History().in_project()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GPUPORT_HISTORY", str(tmp_path / "h.sqlite"))
    assert not History().in_project()


def test_an_output_encoding_that_cannot_show_a_character_loses_no_report(tmp_path: Path) -> None:
    """F9: PYTHONIOENCODING=ascii (or a Latin-1 locale): the report's first non-ASCII character
    ended scan in an internal error (exit 4), the report unseen."""
    proj = _project(tmp_path)
    done = _run(proj, "scan", ".", env={"PYTHONPATH": SRC, "PYTHONIOENCODING": "ascii"})
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr
