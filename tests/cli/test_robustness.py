"""Inputs that once crashed or hung the scanner: each now gives a clear result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpuport.scan import scan_path
from gpuport.scan.rules import CHECKERS, FileKind


def test_include_with_a_too_long_name_or_a_loop_is_reported(tmp_path: Path) -> None:
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    (tmp_path / "requirements.txt").write_text("-r " + "a" * 300 + "\n-r l1\n")
    report = scan_path(tmp_path)
    messages = [f.message for f in report.findings if f.rule_id == "GP110"]
    assert len(messages) == 2
    assert "File name too long" in messages[0]
    assert "symbolic link loop" in messages[1]


def test_deeply_nested_yaml_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "environment.yml").write_text("dependencies:\n  - pip:\n    - " + "[" * 3000 + "\n")
    report = scan_path(tmp_path)
    assert [s.path for s in report.skipped] == ["environment.yml"]


def test_a_checker_bug_skips_one_file_and_the_scan_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx: object) -> None:
        raise ValueError("boom")

    monkeypatch.setitem(CHECKERS, FileKind.CMAKE, [broken])
    monkeypatch.delenv("GPUPORT_DEBUG", raising=False)
    (tmp_path / "CMakeLists.txt").write_text("project(x)\n")
    (tmp_path / "requirements.txt").write_text("tensorrt\n")
    report = scan_path(tmp_path)
    assert [f.rule_id for f in report.findings] == ["GP101"]
    skip = report.skipped[0]
    assert "could not analyse it (internal error, ValueError)" in skip.reason and skip.internal
    assert "not analysed because of a gpuport error" in report.verdict_reason


def test_long_cmake_word_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text("#x\n" + "a" * 200_000 + "\n")
    started = time.perf_counter()
    scan_path(tmp_path)
    assert time.perf_counter() - started < 30  # a hang guard; it takes well under a second


def test_path_that_is_a_symlink_loop_or_a_fifo_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    res = cli("scan", str(loop))
    assert res.code == 2
    assert "symbolic link loop" in res.err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    res = cli("scan", str(fifo))
    assert res.code == 2
    assert "not a folder or a regular file" in res.err


def test_debug_mode_shows_the_traceback_and_keeps_the_bug_exit_code(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "CMakeLists.txt").write_text("project(x)\n")
    code = (
        "from gpuport.scan.rules import CHECKERS, FileKind\n"
        "def broken(ctx):\n    raise ValueError('boom')\n"
        "CHECKERS[FileKind.CMAKE] = [broken]\n"
        "from gpuport.cli.app import main\n"
        f"main(['scan', {str(tmp_path)!r}, '--format', 'json'])\n"
    )
    env = {**os.environ, "GPUPORT_DEBUG": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 4  # not 1, which means "findings at --fail-on"
    assert "Traceback" in proc.stderr and "ValueError: boom" in proc.stderr
