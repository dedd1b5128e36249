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


@pytest.mark.parametrize(
    "command",
    [
        ["scan", "PROJ", "--format", "json"],
        ["hipify", "PROJ/k.cu", "--hip-version", "6.4", "--format", "json"],
        ["assess", "PROJ", "--format", "json", "--no-progress"],
        ["rules", "--format", "json"],
    ],
)
@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_output_onto_a_special_file_is_refused_and_it_stays(
    cli, tmp_path: Path, command: list[str], kind: str
) -> None:  # type: ignore[no-untyped-def]
    """Issue 23 item 5: the atomic rename went over any target that is not a link or folder;
    ``--output /dev/null`` as root turned the machine's /dev/null into a regular file. The
    same check stands for a FIFO and a socket here (a test must not risk /dev/null)."""
    import socket
    import stat

    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text(CUDA)
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    args = [a.replace("PROJ", str(proj)) for a in command]
    res = cli(*args, "--output", str(target))
    assert res.code == 2, res.err
    assert "not a regular file" in res.err
    _one_line(res.err)
    mode = os.lstat(target).st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISSOCK(mode), "target replaced"


def test_write_atomic_refuses_a_device_before_touching_it(tmp_path: Path) -> None:
    """The check reads only the target's type: /dev/null is refused, never opened or renamed
    over (os.replace would fail for a non-root user, and succeed for root)."""
    before = os.lstat("/dev/null")
    with pytest.raises(GpuportError, match="not a regular file"):
        fileio.check_writable(Path("/dev/null"))
    assert os.lstat("/dev/null").st_ino == before.st_ino


def test_a_sparse_file_is_copied_sparse(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``hipify -o`` copies the tree's other files; a sparse file was written out dense."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "k.cu").write_text(CUDA)
    big = proj / "data.bin"
    with big.open("wb") as fh:
        fh.write(b"head")
        fh.seek(512 * 1024 * 1024)  # 512 MiB apparent size
        fh.write(b"tail")
    if os.stat(big).st_blocks * 512 > 16 * 1024 * 1024:
        pytest.skip("this file system does not keep holes")
    res = cli("hipify", str(proj), "-o", str(tmp_path / "out"), "--hip-version", "6.4")
    assert res.code in (0, 1), res.err
    copied = tmp_path / "out" / "data.bin"
    assert copied.stat().st_size == big.stat().st_size
    assert copied.stat().st_blocks * 512 <= 16 * 1024 * 1024, "copied dense"
    with copied.open("rb") as fh:
        assert fh.read(4) == b"head"
        fh.seek(512 * 1024 * 1024)
        assert fh.read(4) == b"tail"


def _remove_deep(top: Path) -> None:
    """Remove a deep tree level by level (shutil.rmtree recurses once per level, and pytest's
    own clean-up of old temporary folders would crash on it)."""
    folders: list[Path] = []
    stack = [top]
    while stack:  # os.walk recurses too (before Python 3.12)
        here = stack.pop()
        folders.append(here)
        for entry in os.scandir(here):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                Path(entry.path).unlink()
    for folder in reversed(folders[1:]):
        folder.rmdir()


def test_a_source_990_folders_deep_is_said_not_a_crash(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``hipify -o`` crashed with RecursionError creating the output folders. Folders past
    MOST_FOLDER_DEPTH are not walked now (a path's length bounds every match and link check;
    fourteenth review): the source at 990 is said to be too deep, one a level above the bound
    is translated."""
    from gpuport.scan.project.files import MOST_FOLDER_DEPTH

    folder = tmp_path / "proj"
    folder.mkdir()
    try:
        for level in range(990):  # one level at a time: os.makedirs recurses too
            folder = folder / "d"
            folder.mkdir()
            if level + 1 == MOST_FOLDER_DEPTH:
                (folder / "k.cu").write_text(CUDA)
        (folder / "deep.cu").write_text(CUDA)
        res = cli(
            "hipify", str(tmp_path / "proj"), "-o", str(tmp_path / "out"), "--hip-version", "6.4"
        )
        assert res.code in (0, 1), res.err
        kept = tmp_path / "out" / Path(*(["d"] * MOST_FOLDER_DEPTH)) / "k.cu"
        assert "hipMalloc" in kept.read_text()
        assert not (kept.parent / "d").exists()
        assert f"more than {MOST_FOLDER_DEPTH} folders deep" in res.out + res.err
    finally:
        _remove_deep(tmp_path)
