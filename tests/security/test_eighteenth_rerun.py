"""Issue 23: what the eighteenth independent re-run found (session 8), each asked of the code
that failed, timed against a bound scaled to this machine (see test_stalls.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_subprocess
from tests.security.test_malformed_input import _one_line_exit_2
from tests.security.test_stalls import _scan, _within

HUGE = "9" * 310


def test_makefiles_that_all_include_each_other() -> None:
    """F1: N Makefiles that each ``include *.mk`` (with a finding each): every Makefile matched
    its pattern against every build file and read the uses of every other one's text (200 KB of
    small files: 38 s, 400 KB past 120 s). Each pattern is matched once per scan and each
    file's uses read once now."""
    from gpuport.scan.project.on_route import make_flow_of

    n = 3_000
    files = {
        f"mk/f{i:05}.mk": f"include *.mk\nNVCCFLAGS{i} = -arch=sm_80 $(X{i})\n"
        f"k{i}.o: k{i}.cu\n\tnvcc $(NVCCFLAGS{(i + 1) % n}) -c $<\n"
        for i in range(n)
    }

    def flows() -> None:
        for rel, text in files.items():
            flow = make_flow_of(rel, text, files)
            # used by the next file's recipe, which every file includes: on the route
            assert not flow.unshown

    _within(flows, 2.0)


def _cuda_only_build(root: Path, sources: list[str]) -> None:
    (root / "CMakeLists.txt").write_text(
        "project(p LANGUAGES CXX)\nif(USE_ROCM)\nenable_language(HIP)\nadd_library(h hip/a.hip)\n"
        f"else()\nenable_language(CUDA)\nadd_library(x {' '.join(sources)})\nendif()\n"
    )
    (root / "hip").mkdir()
    (root / "hip" / "a.hip").write_text("int a;\n")


def test_a_chain_of_headers_under_a_cuda_only_source(tmp_path: Path) -> None:
    """F2: each header of a chain under a source the ROCm build leaves out took its includer's
    whole reason (3,000 headers: reasons of 90 KB, a 137 MB report, 590 MB) and one header was
    marked per pass over all of them. A worklist now, and each reason names the first file of
    its chain that is not a header."""
    n = 3_000
    _cuda_only_build(tmp_path, ["cuda/k.cu"])
    (tmp_path / "cuda").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "cuda" / "k.cu").write_text(f'#include "../inc/h{n - 1:05}.h"\n')
    for i in range(n):
        below = f'#include "h{i - 1:05}.h"\n' if i else ""
        (tmp_path / "inc" / f"h{i:05}.h").write_text(below + f"int v{i};\n")
    report = _scan(tmp_path)
    reasons = report.not_built  # type: ignore[attr-defined]
    assert len(reasons) == n + 1
    assert max(len(r) for r in reasons.values()) < 200
    assert reasons["inc/h00000.h"].endswith(" ... (only inc/h00001.h includes it)")
    assert " ... " not in reasons[f"inc/h{n - 2:05}.h"]
    assert "(only cuda/k.cu includes it)" in reasons["inc/h00000.h"]
    _within(lambda: _scan(tmp_path), 4.0)


def test_thousands_of_sources_listed_in_a_cuda_only_branch(tmp_path: Path) -> None:
    """Found beside F2: every listed source was tried against every listed path (16,000
    sources: 256 M tries). Paths and folders are looked up, globs tried from their folder."""
    n = 16_000
    _cuda_only_build(tmp_path, [f"src/k{i}.cu" for i in range(n)])
    (tmp_path / "src").mkdir()
    for i in range(n):
        (tmp_path / "src" / f"k{i}.cu").write_text(f"__global__ void k{i}(){{}}\n")
    report = _scan(tmp_path)
    assert len(report.not_built) == n  # type: ignore[attr-defined]
    _within(lambda: _scan(tmp_path), 8.0)


def test_a_call_chain_written_callee_last() -> None:
    """F3: relevance spread through device calls one link per pass over every function
    (a chain of 5,000 functions ending in a shuffle: 400 KB 11.6 s); a worklist now."""
    from gpuport.scan.cxx import lex
    from gpuport.scan.rules.native.warp_meaning import analyze

    n = 5_000
    text = "".join(f"__device__ int f{i:05}(int v);\n" for i in range(n))
    text += "".join(
        f"__device__ int f{i:05}(int v) {{ return f{i + 1:05}(v) + 1; }}\n" for i in range(n - 1)
    )
    text += f"__device__ int f{n - 1:05}(int v) {{ return __shfl_xor_sync(0xffffffff, v, 16); }}\n"
    text += "__global__ void k(int* o) { o[threadIdx.x] = f00000(threadIdx.x); }\n"
    files = {"k.cu": lex(text)}
    meaning = analyze(files)["k.cu"]
    assert meaning.spans and len(meaning.spans[0][2].units) >= n
    _within(lambda: analyze(files), 3.0)


def test_a_chain_of_headers_ending_in_cutlass(tmp_path: Path) -> None:
    """F4: a file that includes a CUTLASS user was found one per pass over every file
    (800 KB of headers: 54.5 s); a worklist from the users to their includers now."""
    from gpuport.scan.project.cutlass_folders import cutlass_folders as _cutlass_folders

    n = 12_000
    native = {f"inc/h{i:05}.h": f'#include "h{i + 1:05}.h"\n' for i in range(n - 1)}
    native[f"inc/h{n - 1:05}.h"] = "cutlass::half_t x;\n"
    native.update({f"inc/k{i}.cu": '#include "h00000.h"\n' for i in range(3)})
    includes = {rel: frozenset({f"h{int(rel[5:10]) + 1:05}.h"}) for rel in native if "/h" in rel}
    includes.update({f"inc/k{i}.cu": frozenset({"h00000.h"}) for i in range(3)})
    found = _cutlass_folders(native, includes)
    assert [c.path for c in found] == ["inc"]
    _within(lambda: _cutlass_folders(native, includes), 1.0)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["scan", ".", "--max-file-size", "1e303"], "--max-file-size"),  # F5
        (
            ["validate", "capture", "--model", "m:build", "--out", "c.gpv", "--max-bytes", HUGE],
            "--max-bytes",
        ),  # F6
    ],
)
def test_a_size_that_overflows_is_a_usage_error(argv: list[str], needle: str) -> None:
    """F5, F6: a finite size whose bytes overflow a float was an internal error (exit 4)."""
    _one_line_exit_2(run_subprocess(*argv), needle)


def test_a_setup_py_that_doubles_a_list_over_and_over(tmp_path: Path) -> None:
    """F7: ``S = S + S`` on 10,000 lines: every use of ``S`` pushed all of its values again
    (100 KB: 18 s and 486 MB); each name is expanded once per expression now."""
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\nS = ['k.cu', '-use_fast_math']\n"
        + "S = S + S\n" * 10_000
        + "e = CUDAExtension('x', S)\n"
    )
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    report = _scan(tmp_path)
    assert any(f.rule_id == "GP402" for f in report.findings)  # type: ignore[attr-defined]
    _within(lambda: _scan(tmp_path), 3.0)


def test_thousands_of_files_of_one_name(tmp_path: Path) -> None:
    """Found beside F2 (session 8): an include of a name thousands of files share was
    resolved by searching all of them, per include (each of 4,000 folders with its own
    ``x.h`` and a source including ``x.h`` and ``common/x.h``: 21 s). Each name's paths are
    indexed once per scan; more than 64 equally near files make the include ambiguous."""
    from gpuport.scan.cxx_ints import MOST_TIES, nearest
    from gpuport.scan.project.include_paths import owners_by_name, resolve_one

    files = [f"d{i}/x.h" for i in range(8_000)] + ["top/k.cu"]
    owners = owners_by_name(files)

    def resolve() -> None:
        for i in range(8_000):
            assert resolve_one(f"d{i}/k.cu", "x.h", owners) == {f"d{i}/x.h"}
            assert resolve_one(f"d{i}/k.cu", "common/x.h", owners) == {f"d{i}/x.h"}

    _within(resolve, 1.0)
    assert resolve_one("top/k.cu", "x.h", owners) == set()  # 8,000 equally near: ambiguous
    few = [f"d{i}/x.h" for i in range(MOST_TIES)]
    assert nearest("top/k.cu", few) == set(few)


@pytest.mark.parametrize("shape", ["parens", "mod-chain"])
def test_one_shuffle_of_a_huge_lane_expression(shape: str, tmp_path: Path) -> None:
    """F8: a lane argument of 25,000 nested parentheses (one level stripped per pass over the
    rest: 50 KB 75 s) or a ``% 32 % 32 ...`` chain (split once per operator: 18 s). The
    parentheses go in one pass; an expression deeper than 32 operators or longer than 2,000
    characters is of no known kind."""
    n = 12_000
    lane = (
        "(" * n + "threadIdx.x % 32" + ")" * n if shape == "parens" else "threadIdx.x" + " % 32" * n
    )
    (tmp_path / "k.cu").write_text(
        "__global__ void k(float* x) { float v = x[0]; "
        f"v += __shfl_sync(0xffffffff, v, {lane}); x[0] = v; }}\n"
    )
    _within(lambda: _scan(tmp_path), 2.0)


def test_parentheses_and_casts_come_off_as_before() -> None:
    from gpuport.scan.rules.native.warp_base import _strip

    assert _strip(" (int)( ( threadIdx.x % 32 ) ) ") == "threadIdx.x % 32"
    assert _strip("static_cast<int>(i % 32)") == "i % 32"
    assert _strip("((x % 32) + (y - 1))") == "(x % 32) + (y - 1)"
    assert _strip("((a + b)") == "((a + b)" and _strip("(a + b))") == "(a + b))"
    assert _strip("([x])") == "[x]"
