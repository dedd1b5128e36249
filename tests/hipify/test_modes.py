"""Tests of `gpuport hipify` modes (issue 3, items 4-5): --annotate, --diff, --in-place, copies."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from gpuport import fileio
from gpuport.hipify.annotate import annotate, comment_for
from gpuport.hipify.run import hipify_path
from gpuport.models import Location
from gpuport.scan.finding import Finding
from gpuport.scan.model import Severity

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hipify"
WARP = FIXTURES / "warp_reduce.cu"
PTX = FIXTURES / "inline_ptx.cu"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    return dst


# --annotate ---------------------------------------------------------------------------------


def test_annotate_puts_comment_above_hazard_with_indent_and_ptx_suggestion(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(PTX), "--hip-version", "6.4", "--annotate")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    i = next(n for n, ln in enumerate(lines) if "asm volatile" in ln)
    assert lines[i - 1] == "  // gpuport: GP301 Inline PTX assembly — replace with __lane_id()"


def test_annotate_every_hazard_and_no_comments_without_flag(cli) -> None:  # type: ignore[no-untyped-def]
    plain = cli("hipify", str(WARP), "--hip-version", "5.2")
    assert "// gpuport: GP3" not in plain.out
    res = cli("hipify", str(WARP), "--hip-version", "5.2", "--annotate")
    report = hipify_path(WARP, hip_version="5.2")
    comments = [ln.strip() for ln in res.out.splitlines() if "// gpuport: GP3" in ln]
    assert sorted(comments) == sorted(comment_for(h) for h in report.files[0].hazards)
    assert {c.split()[2] for c in comments} == {"GP302", "GP304", "GP305"}


@pytest.mark.parametrize("version", ["5.2", "6.4"])
def test_annotate_is_idempotent(cli, tmp_path: Path, version: str) -> None:  # type: ignore[no-untyped-def]
    for fixture in (WARP, PTX):
        once = cli("hipify", str(fixture), "--hip-version", version, "--annotate").out
        src = tmp_path / fixture.name
        src.write_text(once, encoding="utf-8")
        twice = cli("hipify", str(src), "--hip-version", version, "--annotate").out
        assert twice == once


def test_annotate_keeps_macro_continuations_whole() -> None:
    text = '#define K(x) \\\n  asm("bfe.u32 %0;" : "=r"(x))\nint y;\n'
    finding = Finding(
        rule_id="GP301",
        title="Inline PTX assembly",
        severity=Severity.BLOCKER,
        location=Location(path="k.cu", line=2, column=3),
        message="inline PTX; replace with bit operations",
        fix="",
    )
    out = annotate(text, [finding])
    assert (
        out.splitlines()[0] == "// gpuport: GP301 Inline PTX assembly — replace with bit operations"
    )
    assert out.splitlines()[1] == "#define K(x) \\"
    moved = dataclasses.replace(finding, location=Location(path="k.cu", line=3, column=3))
    assert annotate(out, [moved]) == out


# --diff ---------------------------------------------------------------------------------------


def test_diff_single_file_is_unified_diff_of_translation(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(PTX), "--hip-version", "6.4", "--diff")
    assert res.code == 0, res.err
    assert res.out.startswith("--- a/inline_ptx.cu\n+++ b/inline_ptx.cu\n@@ ")
    assert "-#include <cuda_runtime.h>\n+#include <hip/hip_runtime.h>\n" in res.out


def test_diff_tree_needs_no_out_dir_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "proj"
    (src / "sub").mkdir(parents=True)
    shutil.copy(WARP, src / "warp_reduce.cu")
    shutil.copy(PTX, src / "sub" / "inline_ptx.cu")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    res = cli("hipify", str(src), "--hip-version", "6.4", "--diff")
    assert res.code == 0, res.err
    assert "--- a/warp_reduce.cu\n" in res.out
    assert "--- a/sub/inline_ptx.cu\n" in res.out
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_diff_of_unchanged_file_is_empty(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "plain.cpp"
    f.write_text("int main() { return 0; }", encoding="utf-8")
    res = cli("hipify", str(f), "--diff")
    assert res.code == 0, res.err
    assert res.out == ""


# --in-place -----------------------------------------------------------------------------------


def test_in_place_rewrites_and_backs_up(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = _copy(PTX, tmp_path)
    original = f.read_bytes()
    res = cli("hipify", str(f), "--hip-version", "6.4", "--in-place")
    assert res.code == 0, res.err
    assert (tmp_path / "inline_ptx.cu.gpuport.bak").read_bytes() == original
    assert "#include <hip/hip_runtime.h>" in f.read_text(encoding="utf-8")


def test_in_place_tree_without_out_dir(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "proj"
    (src / "sub").mkdir(parents=True)
    shutil.copy(PTX, src / "sub" / "inline_ptx.cu")
    res = cli("hipify", str(src), "--hip-version", "6.4", "--in-place")
    assert res.code == 0, res.err
    assert (src / "sub" / "inline_ptx.cu.gpuport.bak").is_file()
    assert "hip/hip_runtime.h" in (src / "sub" / "inline_ptx.cu").read_text(encoding="utf-8")


def test_in_place_refuses_existing_backup_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "proj"
    src.mkdir()
    a = _copy(PTX, src)
    b = _copy(WARP, src)
    (src / "warp_reduce.cu.gpuport.bak").write_text("old backup", encoding="utf-8")
    before = {p: p.read_bytes() for p in (a, b)}
    res = cli("hipify", str(src), "--hip-version", "6.4", "--in-place")
    assert res.code == 2
    assert "backup already exists" in res.err
    assert {p: p.read_bytes() for p in (a, b)} == before
    assert not (src / "inline_ptx.cu.gpuport.bak").exists()
    assert (src / "warp_reduce.cu.gpuport.bak").read_text(encoding="utf-8") == "old backup"


def test_in_place_and_out_dir_are_exclusive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = _copy(PTX, tmp_path)
    res = cli("hipify", str(f), "--in-place", "-o", str(tmp_path / "out"))
    assert res.code == 2
    assert "cannot be used together" in res.err
    assert not (tmp_path / "out").exists()
    assert f.read_bytes() == PTX.read_bytes()


def test_in_place_interrupted_write_leaves_original_intact(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    f = _copy(PTX, tmp_path)
    original = f.read_bytes()
    real_write_all = fileio._write_all
    calls: list[int] = []

    def dying_write_all(fd: int, data: bytes) -> None:
        calls.append(len(data))
        if len(calls) == 1:  # the backup
            return real_write_all(fd, data)
        real_write_all(fd, data[: len(data) // 2])  # half of the translation, then disk full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio, "_write_all", dying_write_all)
    res = cli("hipify", str(f), "--hip-version", "6.4", "--in-place")
    assert res.code == 2
    assert "No space left" in res.err
    assert f.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "inline_ptx.cu",
        "inline_ptx.cu.gpuport.bak",
    ]


# tree copies ----------------------------------------------------------------------------------


def test_tree_copies_non_cuda_files_with_skip_rules(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "proj"
    (src / "sub").mkdir(parents=True)
    (src / "node_modules").mkdir()
    (src / ".hidden").mkdir()
    shutil.copy(PTX, src / "sub" / "inline_ptx.cu")
    (src / "README.md").write_text("readme\n", encoding="utf-8")
    (src / "sub" / "CMakeLists.txt").write_text("project(x)\n", encoding="utf-8")
    (src / "sub" / "data.bin").write_bytes(b"\x00\xff\xfe")
    (src / "node_modules" / "x.js").write_text("x", encoding="utf-8")
    (src / ".hidden" / "y").write_text("y", encoding="utf-8")
    (src / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (src / "run.log").write_text("log", encoding="utf-8")
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4", "--format", "json")
    assert res.code == 0, res.err
    got = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert got == [
        ".gitignore",
        "README.md",
        "sub/CMakeLists.txt",
        "sub/data.bin",
        "sub/inline_ptx.cu",
    ]
    assert (out / "sub" / "data.bin").read_bytes() == b"\x00\xff\xfe"
    assert "hip/hip_runtime.h" in (out / "sub" / "inline_ptx.cu").read_text(encoding="utf-8")
