"""Issue 14 item 3: FIFOs, devices and huge files are refused with one line, never read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuport import fileio
from gpuport.models import GpuportError

from .conftest import fails_if_it_hangs

CUDA = "__global__ void k(float* x) { x[0] = 1.0f; }\nvoid f() { cudaMalloc(0, 0); }\n"


def _one_line(err: str) -> None:
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_hipify_a_fifo_or_a_device_is_a_usage_error(cli, fifo: Path, special: str) -> None:  # type: ignore[no-untyped-def]
    target = str(fifo) if special == "fifo" else special
    with fails_if_it_hangs(fifo):
        res = cli("hipify", target, "--hip-version", "6.4")
    assert res.code == 2
    assert "not a regular file" in res.err
    _one_line(res.err)


def test_gitignore_linking_to_dev_zero_or_a_fifo_is_not_read(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for name, make in (
        ("zero", lambda p: p.symlink_to("/dev/zero")),
        ("pipe", os.mkfifo),
    ):
        proj = tmp_path / name
        proj.mkdir()
        (proj / "k.cu").write_text(CUDA)
        make(proj / ".gitignore")
        with fails_if_it_hangs(proj / ".gitignore"):
            res = cli("scan", str(proj), "--format", "json")
        assert res.code in (0, 1), res.err
        assert ".gitignore" in res.out and "ignore rules were not applied" in res.out


def test_settings_named_files_are_bounded_and_regular(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text(CUDA)
    (proj / "config.json").symlink_to("/dev/zero")
    (proj / "gpuport.toml").write_text('model_config = "config.json"\n')
    res = cli("assess", str(proj), "--format", "json")
    assert res.code == 2  # /dev/zero is outside the project: refused before any read
    _one_line(res.err)
    (proj / "config.json").unlink()
    os.mkfifo(proj / "config.json")
    with fails_if_it_hangs(proj / "config.json"):
        res = cli("assess", str(proj), "--format", "json")
    assert res.code == 2
    assert "not a regular file" in res.err
    _one_line(res.err)


@pytest.mark.parametrize(
    "args",
    [
        ("cost", "--model-config", "{}", "--gpus", "mi300x"),
        ("doctor", "--from-snapshot", "{}"),
        ("compare", "{}", "{}"),
    ],
)
def test_user_named_fifo_is_refused_not_waited_on(cli, fifo: Path, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    argv = [a.replace("{}", str(fifo)) for a in args]
    with fails_if_it_hangs(fifo):
        res = cli(*argv)
    assert res.code == 2, res.err
    assert "not a regular file" in res.err or "is not a file" in res.err
    _one_line(res.err)


def test_validate_diff_with_a_fifo_is_refused(cli, fifo: Path) -> None:  # type: ignore[no-untyped-def]
    # exit 3 (one line) where gpuport[validate] is not installed: still no hang
    with fails_if_it_hangs(fifo):
        res = cli("validate", "diff", str(fifo), str(fifo))
    assert res.code in (2, 3), res.err
    _one_line(res.err)


@pytest.mark.parametrize("args", [("cost", "--model-config", "/dev/zero", "--gpus", "mi300x")])
def test_dev_zero_is_refused_not_read_into_memory(cli, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    res = cli(*args)
    assert res.code == 2
    assert "not a regular file" in res.err
    _one_line(res.err)


def test_read_bytes_is_bounded_even_when_the_file_grows(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(fileio.ReadRefused, match="too large"):
        fileio.read_bytes(big, limit=1000)
    assert fileio.read_bytes(big, limit=2000) == b"x" * 2000
    with pytest.raises(GpuportError, match="not a regular file"):
        fileio.read_bytes(Path("/dev/zero"), limit=10)


def test_settings_file_that_is_a_fifo_or_links_out_is_said_not_skipped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text(CUDA)
    os.mkfifo(proj / "gpuport.toml")
    with fails_if_it_hangs(proj / "gpuport.toml"):
        res = cli("assess", str(proj), "--format", "json")
    assert res.code == 2
    assert "gpuport.toml" in res.err and "not a regular file" in res.err
    _one_line(res.err)
    (proj / "gpuport.toml").unlink()
    outside = tmp_path / "pyproject.toml"
    outside.write_text('[tool.gpuport]\ntargets = ["gfx942"]\n')
    (proj / "pyproject.toml").symlink_to(outside)
    res = cli("assess", str(proj), "--format", "json")
    assert res.code in (0, 1), res.err
    assert "outside" in res.out  # a note in the report: its settings are not used
