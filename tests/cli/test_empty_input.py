"""Empty input is exit 2 for every command (issue 29): an empty folder, an empty file or an
empty result file is a usage error with one line, never a clean result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["scan", "{dir}"], "nothing to scan"),
        (["scan", "{dir}/empty.py"], "nothing to scan"),
        (["hipify", "{dir}", "-o", "{out}"], "nothing to translate"),
        (["hipify", "{dir}/empty.cu"], "nothing to translate"),
        (["assess", "{dir}"], "nothing to assess"),
        (["compare", "{dir}/empty.json", "{dir}/empty.json"], "is not JSON"),
        (["cost", "--model-config", "{dir}/empty.json"], "is not JSON"),
        (["doctor", "--from-snapshot", "{dir}/empty.json"], "is not a doctor snapshot"),
        pytest.param(
            ["validate", "diff", "{dir}/empty.gpv", "{dir}/empty.gpv"],
            "is not a gpuport capture",
            marks=pytest.mark.torch,
        ),
    ],
)
def test_empty_input_is_exit_2_with_one_line(
    cli: Any, tmp_path: Path, args: list[str], needle: str
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    out = tmp_path / "out"
    argv = [a.format(dir=folder, out=out) for a in args]
    for name in ("empty.py", "empty.cu", "empty.json", "empty.gpv"):
        if any(name in a for a in argv):
            (folder / name).write_bytes(b"")
    res = cli(*argv)
    assert res.code == 2, (res.out, res.err)
    assert needle in res.err and res.err.strip().count("\n") == 0
    assert not out.exists()
