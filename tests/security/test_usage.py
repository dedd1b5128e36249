"""Issue 14 item 10 (usage parts): no option is silently ignored; usage errors are one line."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_bench_step_with_a_workload_list_without_user_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "ran"
    step = tmp_path / "step.py"
    step.write_text(f"open({str(marker)!r}, 'w').close()\ndef main():\n    pass\n")
    res = cli("bench", "--step", f"{step}:main", "-w", "gemm")
    assert res.code == 2
    assert "--step" in res.err and "user" in res.err
    assert not marker.exists()  # refused before the step was loaded


@pytest.mark.parametrize(
    "args",
    [
        ("scan", "--bogus"),
        ("nocommand",),
        ("scan", "--format", "xml", "."),
        ("hipify",),
        ("cost", "--gpus"),
    ],
)
def test_click_usage_errors_are_one_line_exit_2(cli, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    res = cli(*args)
    assert res.code == 2
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert lines[0].startswith("gpuport") and "error:" in lines[0]
    assert "╭" not in res.err
