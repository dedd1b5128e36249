"""Tests of build-file rewriting (issue 3, item 5): CMake and Makefile CUDA settings to HIP."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpuport.hipify.buildfiles import build_kind, rewrite_build_file, unresolved
from gpuport.scan.rules import FileKind

BUILD = Path(__file__).resolve().parent.parent / "fixtures" / "hipify" / "build"
CASES = [("CMakeLists.txt", FileKind.CMAKE), ("Makefile", FileKind.MAKEFILE)]


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_rewrite_matches_expected_and_is_idempotent(name: str, kind: FileKind) -> None:
    text = (BUILD / name).read_text()
    new, changes = rewrite_build_file(text, kind, "gfx942")
    assert new == (BUILD / f"{name}.expected").read_text()
    assert changes
    for line, before, after in changes:
        assert text.splitlines()[line - 1] == before
        assert new.splitlines()[line - 1] == after
    again, more = rewrite_build_file(new, kind, "gfx942")
    assert again == new
    assert more == []


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_comments_are_untouched(name: str, kind: FileKind) -> None:
    text = (BUILD / name).read_text()
    new, _ = rewrite_build_file(text, kind, "gfx942")

    def comments(t: str) -> list[str]:
        return [ln[ln.index("#") :] for ln in t.splitlines() if "#" in ln]

    assert comments(new) == comments(text)
    assert "nvcc -arch=sm_80" in new or kind is FileKind.CMAKE


def test_target_arch_is_used() -> None:
    new, _ = rewrite_build_file("set(CMAKE_CUDA_ARCHITECTURES 80)\n", FileKind.CMAKE, "gfx90a")
    assert new == "set(CMAKE_HIP_ARCHITECTURES gfx90a)\n"
    new, _ = rewrite_build_file("\tnvcc -arch sm_70 a.cu\n", FileKind.MAKEFILE, "gfx90a")
    assert new == "\thipcc --offload-arch=gfx90a a.cu\n"


def test_non_arch_values_keep_their_value() -> None:
    new, _ = rewrite_build_file("set(CMAKE_CUDA_ARCHITECTURES native)\n", FileKind.CMAKE, "gfx942")
    assert new == "set(CMAKE_HIP_ARCHITECTURES native)\n"


def test_unresolved_reports_unknown_targets_and_cu_sources() -> None:
    text = (BUILD / "CMakeLists.txt.expected").read_text()
    notes = unresolved(text, FileKind.CMAKE)
    assert any("CUDA::cuda_driver" in msg for _, msg in notes)
    assert any("saxpy.cu" in msg for _, msg in notes)
    make = unresolved((BUILD / "Makefile.expected").read_text(), FileKind.MAKEFILE)
    assert [line for line, _ in make] == [5]


def test_build_kind() -> None:
    assert build_kind("a/CMakeLists.txt") is FileKind.CMAKE
    assert build_kind("x.cmake") is FileKind.CMAKE
    assert build_kind("Makefile") is FileKind.MAKEFILE
    assert build_kind("kernel.cu") is None


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(BUILD / "CMakeLists.txt", src / "CMakeLists.txt")
    shutil.copy(BUILD / "Makefile", src / "Makefile")
    (src / "k.cu").write_text("#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n")
    return src


def test_cli_out_dir_reports_build_files_without_flag(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _tree(tmp_path)
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4")
    assert res.code == 0, res.err
    assert "2 build files would change; --build-files rewrites them" in res.err
    assert (out / "CMakeLists.txt").read_text() == (BUILD / "CMakeLists.txt").read_text()
    assert (out / "Makefile").read_text() == (BUILD / "Makefile").read_text()


def test_cli_out_dir_rewrites_with_build_files(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _tree(tmp_path)
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4", "--build-files")
    assert res.code == 0, res.err
    assert "would change" not in res.err
    assert (out / "CMakeLists.txt").read_text() == (BUILD / "CMakeLists.txt.expected").read_text()
    assert (out / "Makefile").read_text() == (BUILD / "Makefile.expected").read_text()
    assert (src / "Makefile").read_text() == (BUILD / "Makefile").read_text()


def test_cli_in_place_and_diff_with_build_files(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _tree(tmp_path)
    res = cli("hipify", str(src), "--diff", "--hip-version", "6.4", "--build-files")
    assert res.code == 0, res.err
    assert "b/CMakeLists.txt" in res.out
    assert "+enable_language(HIP)" in res.out
    res = cli("hipify", str(src), "--in-place", "--hip-version", "6.4", "--build-files")
    assert res.code == 0, res.err
    assert (src / "Makefile").read_text() == (BUILD / "Makefile.expected").read_text()
    assert (src / "Makefile.gpuport.bak").read_text() == (BUILD / "Makefile").read_text()
