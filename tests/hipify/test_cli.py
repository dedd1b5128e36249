"""Tests of `gpuport hipify` (issue 3, items 4-6): the CLI and the hipify_path core."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from gpuport.hipify import run as hipify_run
from gpuport.hipify import translate
from gpuport.hipify.run import HipifyReport
from gpuport.models import load_result

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hipify"
WARP = FIXTURES / "warp_reduce.cu"
PTX = FIXTURES / "inline_ptx.cu"


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        digest.update(p.relative_to(root).as_posix().encode())
        if p.is_file():
            digest.update(p.read_bytes())
    return digest.hexdigest()


def _project(tmp_path: Path) -> Path:
    src = tmp_path / "proj"
    (src / "kernels" / "sub").mkdir(parents=True)
    shutil.copy(WARP, src / "kernels" / "warp_reduce.cu")
    shutil.copy(PTX, src / "kernels" / "sub" / "inline_ptx.cu")
    (src / "README.txt").write_text("not CUDA\n", encoding="utf-8")
    return src


def _need_hipcc() -> None:
    if shutil.which("hipcc") is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (install Debian's hipcc; CI sets GPUPORT_REQUIRE_HIPCC=1)")


def test_single_file_to_stdout_equals_translate(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(WARP), "--hip-version", "6.4")
    assert res.code == 0, res.err
    # the default target (gfx942) runs 64-lane wavefronts: --wave64 fix is the default
    expected = translate(WARP.read_text(encoding="utf-8"), hip_version="6.4", wave64="fix").text
    assert res.out == expected
    assert "gpuport hipify" in res.err


def test_tree_to_out_dir_mirrors_layout_and_leaves_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _project(tmp_path)
    before = _tree_hash(src)
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out), "--hip-version", "6.4", "--format", "json")
    assert res.code == 0, res.err
    assert _tree_hash(src) == before
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["README.txt", "kernels/sub/inline_ptx.cu", "kernels/warp_reduce.cu"]
    warp = (out / "kernels" / "warp_reduce.cu").read_text(encoding="utf-8")
    assert warp == translate(WARP.read_text(encoding="utf-8"), hip_version="6.4", wave64="fix").text
    report = json.loads(res.out)
    assert report["kind"] == "gpuport.hipify"
    assert report["totals"]["files"] == 2


def test_folder_without_out_dir_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(_project(tmp_path)))
    assert res.code == 2
    assert "-o" in res.err


@pytest.mark.parametrize("inside", ["out", "kernels/out", "."])
def test_out_dir_inside_input_is_refused(cli, tmp_path: Path, inside: str) -> None:  # type: ignore[no-untyped-def]
    src = _project(tmp_path)
    before = _tree_hash(src)
    res = cli("hipify", str(src), "-o", str(src / inside))
    assert res.code == 2
    assert "inside the input" in res.err
    assert _tree_hash(src) == before


def test_single_file_out_dir_cannot_overwrite_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _project(tmp_path) / "kernels" / "warp_reduce.cu"
    before = src.read_bytes()
    res = cli("hipify", str(src), "-o", str(src.parent))
    assert res.code == 2
    assert src.read_bytes() == before


def test_json_report_validates(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = _project(tmp_path)
    report_file = tmp_path / "report.json"
    res = cli(
        "hipify", str(src), "-o", str(tmp_path / "out"), "--format", "json", "--output",
        str(report_file), "--hip-version", "5.2",
    )  # fmt: skip
    assert res.code == 0, res.err
    report = load_result(report_file, HipifyReport)
    assert report.hip_version == "5.2"
    assert {f.path for f in report.files} == {"kernels/warp_reduce.cu", "kernels/sub/inline_ptx.cu"}
    assert all(f.text is None for f in report.files)  # the text is not in the JSON
    assert report.totals["replacements"] > 0


def test_hazards_come_from_the_scan_rules(tmp_path: Path) -> None:
    report = hipify_run.hipify_path(PTX, hip_version="6.4")
    ids = {h.rule_id for f in report.files for h in f.hazards}
    assert "GP301" in ids
    hazard = next(h for f in report.files for h in f.hazards if h.rule_id == "GP301")
    assert (hazard.location.line, hazard.location.column) == (6, 3)


def test_fail_on_hazard_and_stats(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(PTX), "--stats", "--fail-on", "hazard", "--hip-version", "6.4")
    assert res.code == 1
    assert "GP301" in res.out
    assert "#include" not in res.out  # --stats replaces the text
    assert cli("hipify", str(WARP), "--fail-on", "unsupported", "--hip-version", "6.4").code == 0


def test_markdown_report(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(PTX), "--format", "markdown", "--hip-version", "6.4")
    assert res.code == 0, res.err
    assert "| inline\\_ptx.cu |" in res.out  # escaped Markdown text, not a code span
    assert "**GP301**" in res.out


def test_bad_options(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("hipify", str(WARP), "--fail-on", "sometimes").code == 2
    assert cli("hipify", str(WARP), "--hip-version", "six").code == 2
    assert cli("hipify", str(FIXTURES / "missing.cu")).code == 2


def test_check_without_hipcc_is_an_environment_problem(cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(hipify_run.subproc, "which", lambda name, *a, **k: None)
    res = cli("hipify", str(WARP), "--check", "--hip-version", "5.2")
    assert res.code == 3
    assert "hipcc" in res.err


def test_default_hip_version_without_hipcc(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # no HIP headers, no hipcc, no ROCm install: nothing to detect (the machine may have hipcc)
    monkeypatch.setattr(hipify_run, "find_include", lambda *a, **k: None)
    monkeypatch.setattr(hipify_run.subproc, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(hipify_run, "_rocm_install_version", lambda: None)
    assert hipify_run.detect_hip_version() is None


@pytest.mark.hipcc
def test_check_compiles_warp_reduction(cli) -> None:  # type: ignore[no-untyped-def]
    _need_hipcc()
    res = cli("hipify", str(WARP), "--check", "--hip-version", "5.2", "--format", "json")
    assert res.code == 0, res.err
    report = TypeAdapter(HipifyReport).validate_json(res.out)
    result = report.files[0].compile
    assert result is not None and result.ok, result
    assert result.offload_archs == ["gfx90a"]


@pytest.mark.hipcc
def test_check_fails_on_inline_ptx(cli) -> None:  # type: ignore[no-untyped-def]
    _need_hipcc()
    res = cli(
        "hipify", str(PTX), "--check", "--hip-version", "5.2", "--format", "json",
        "--fail-on", "unsupported",
    )  # fmt: skip
    assert res.code == 1
    report = TypeAdapter(HipifyReport).validate_json(res.out)
    result = report.files[0].compile
    assert result is not None and not result.ok
    assert result.error is not None and "error:" in result.error
    assert "gpuport-hipify-" not in result.error  # the temp folder is not shown


@pytest.mark.hipcc
def test_detect_hip_version_reads_hipcc() -> None:
    _need_hipcc()
    version = hipify_run.detect_hip_version()
    assert version is not None and version.count(".") == 1


@pytest.mark.hipcc
def test_a_failed_compile_exits_1_by_default(cli) -> None:  # type: ignore[no-untyped-def]
    """Issue 29: `hipify --check` exited 0 on a translation that does not compile."""
    _need_hipcc()
    res = cli("hipify", str(PTX), "--check", "--hip-version", "5.2", "--stats")
    assert res.code == 1
    assert "1 translation(s) failed to compile (exit 1" in res.err
    assert (
        cli("hipify", str(PTX), "--check", "--hip-version", "5.2", "--fail-on", "never").code == 0
    )
    assert cli("hipify", str(WARP), "--check", "--hip-version", "5.2", "--stats").code == 0


@pytest.mark.parametrize("content", [None, "README.txt", "setup.py"])
def test_nothing_to_translate_is_exit_2_and_writes_nothing(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, content: str | None
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    if content:
        (src / content).write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    res = cli("hipify", str(src), "-o", str(out))
    assert res.code == 2
    assert "nothing to translate" in res.err and res.err.count("\n") == 1
    assert not out.exists()


def test_the_hip_version_and_where_it_came_from(monkeypatch, cli) -> None:  # type: ignore[no-untyped-def]
    """One assumption for every command: the given version, else the installed HIP's, else
    the default, and the report says which."""
    monkeypatch.setattr(hipify_run, "detect_hip_version", lambda avoid=(), run=True: "6.1")
    assert hipify_run.resolve_hip_version(None) == ("6.1", "installed")
    assert hipify_run.resolve_hip_version("6.4") == ("6.4", "given")
    res = cli("hipify", str(WARP), "--format", "json")
    report = json.loads(res.out)
    assert (report["hip_version"], report["hip_version_origin"]) == ("6.1", "installed")
    monkeypatch.setattr(hipify_run, "detect_hip_version", lambda avoid=(), run=True: None)
    assert hipify_run.resolve_hip_version(None) == (hipify_run.DEFAULT_HIP_VERSION, "default")
    res = cli("hipify", str(WARP), "--stats")
    assert "gpuport's default: no HIP installed here" in " ".join((res.out + res.err).split())


def test_a_tree_of_many_files_prints_one_plain_line_per_file(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Past TABLE_ROWS files the per-file counts are plain lines, each file once: a rich table
    of 6,666 rows took 10 s of CPU to lay out (fifteenth re-run); nothing is left out."""
    from gpuport.render.hipify_terminal import TABLE_ROWS

    src = tmp_path / "src"
    src.mkdir()
    n = TABLE_ROWS + 5
    for i in range(n):
        (src / f"k{i}.cu").write_text("__global__ void k(float *x) { cudaDeviceSynchronize(); }\n")
    monkeypatch.setenv("COLUMNS", "400")
    res = cli("hipify", str(src), "-o", str(tmp_path / "out"))
    assert res.code == 0, res.err
    lines = [x for x in str(res.out).splitlines() if " -> " in x and ": replaced " in x]
    table_rows = [x for x in str(res.out).splitlines() if "│" in x and ".cu" in x]
    assert len(lines) == n and not table_rows  # no per-file table (the family table stays)
    assert "k7.cu -> " in str(res.out) and "replaced 1, unsupported 0, hazards 1" in lines[0]
