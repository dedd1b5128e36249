"""Shared helpers: run the real CLI in-process or as a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuport.cli.entry import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "llm-service"


def require_tool(name: str, env: str) -> str:
    """``name`` on PATH; else the test fails when ``env`` is ``1`` (CI) and is skipped, saying
    why, otherwise."""
    exe = shutil.which(name)
    if exe is None:
        if os.environ.get(env) == "1":
            pytest.fail(f"{env}=1 but {name} is not on PATH")
        pytest.skip(f"{name} not on PATH (CI sets {env}=1)")
    return exe


@dataclass
class Result:
    code: int
    out: str
    err: str


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of bench and validate needs torch: marked so. ``make test-lite`` (which sets
    GPUPORT_TEST_LITE=1 and has no torch) skips the marked tests with that reason, listed in
    the run's summary; everywhere else a missing torch fails them."""
    lite = os.environ.get("GPUPORT_TEST_LITE") == "1"
    for item in items:
        parts = Path(str(item.fspath)).relative_to(REPO).parts
        if parts[:2] in (("tests", "bench"), ("tests", "validate")):
            item.add_marker(pytest.mark.torch)
        if lite and item.get_closest_marker("torch") is not None:
            item.add_marker(pytest.mark.skip(reason="needs torch: make test-lite leaves it out"))


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Call ``gpuport ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args: str) -> Result:
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_subprocess(
    *args: str, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 120
) -> Result:
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "gpuport", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(autouse=True)
def _no_project_left_avoided():  # type: ignore[no-untyped-def]
    """A command run in this process (CliRunner) leaves its project out of every later
    lookup (``subproc.avoid_always``, meant for one command per process): not past a test."""
    from gpuport import subproc

    saved = list(subproc._ALWAYS)
    # and the import path: a command run in this process leaves the projects it avoids (the
    # current folder's among them: this checkout) out of sys.path (subproc.forget_imports_from)
    path = list(sys.path)
    yield
    subproc._ALWAYS[:] = saved
    sys.path[:] = path


@pytest.fixture(autouse=True)
def _private_history(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Bench runs made by tests go to a throw-away history, never the user's own."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite"
    monkeypatch.setenv("GPUPORT_HISTORY", str(path))
    return path
