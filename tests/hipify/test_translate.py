"""Tests of the CUDA -> HIP translator core (issue 3, items 2 and 3)."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuport.hipify import Translation, Unsupported, translate
from gpuport.hipify.translate import MASK_DROPPED
from gpuport.models import GpuportError
from gpuport.scan.cxx import lex

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hipify"
FULL = FIXTURES / "runtime_blas_rand.cu"
WARP = FIXTURES / "warp_reduce.cu"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _hidden(text: str) -> str:
    """The non-blank characters of comments and string bodies, in order (the lexer blanks
    them in its code view), without the comments the translator adds itself."""
    text = _SHIM_BLOCK.sub("", text)  # the shims hipify writes (issue 25) are its own text
    code = lex(text).code
    hidden = "".join(t for t, c in zip(text, code, strict=True) if t != c)
    return hidden.replace(MASK_DROPPED.replace(" ", ""), "")


_SHIM_BLOCK = re.compile(
    r"(?:// gpuport: shim[^\n]*\n)?\#(?:if|ifndef)[^\n]*GPUPORT_SHIM_\w+.*?\n\#endif\n", re.S
)


def _identifiers(text: str) -> list[str]:
    return re.findall(r"(?<![\w.])[A-Za-z_]\w*", lex(text).code)


# -- the realistic fixture --------------------------------------------------------------------


@pytest.mark.parametrize("version", ["6.4", "6.1"])
def test_fixture_matches_expected(version: str) -> None:
    result = translate(_read(FULL), hip_version=version)
    expected = _read(FIXTURES / f"runtime_blas_rand.hip{version}.hip")
    assert result.text == expected
    assert result.unsupported == []
    assert not result.added_include  # cuda_runtime.h is mapped to hip/hip_runtime.h
    assert result.replacements["cudaMalloc"] == 3
    assert result.replacements["cuda_runtime.h"] == 1
    assert result.replacements["cub::"] == 1
    assert result.replacements["cublasSgemm"] == 1


def test_fixture_content() -> None:
    out64 = translate(_read(FULL), hip_version="6.4").text
    out61 = translate(_read(FULL), hip_version="6.1").text
    for out in (out64, out61):
        assert "#include <hip/hip_runtime.h>" in out
        assert '#include "hipblas/hipblas.h"' in out
        assert "#include <hiprand/hiprand.h>" in out
        assert "#include <hipcub/hipcub.hpp>" in out
        assert "hipcub::DeviceReduce::Sum" in out
        assert "saxpy<float><<<grid, block, 0, stream>>>(n, 2.0f, d_x, d_y);" in out
        assert "hipblasSgemm(handle, HIPBLAS_OP_N" in out
        assert "hiprandCreateGenerator(&gen, HIPRAND_RNG_PSEUDO_DEFAULT)" in out
        assert "my_cudaMalloc_wrapper" in out
        assert "stats.cudaMallocCount" in out
        assert "__shared__ float partial[32];" in out
        assert not re.search(r"\bcuda(Malloc|Memcpy|Free|Stream|Event)\w*\(", lex(out).code)
    assert "__shfl_xor_sync(0xffffffffffffffffull, v, offset)" in out64
    assert f"__shfl_xor(v, offset) {MASK_DROPPED};" in out61


@pytest.mark.parametrize("version", ["6.4", "6.1", "5.2"])
def test_comments_strings_and_user_identifiers_unchanged(version: str) -> None:
    text = _read(FULL)
    out = translate(text, hip_version=version).text
    assert _hidden(out) == _hidden(text)
    assert "// The host code calls cudaMalloc (this comment must stay as it is)." in out
    assert '"cudaMalloc calls: %d, time %.3f ms\\n"' in out


@pytest.mark.parametrize("path", [FULL, WARP])
@pytest.mark.parametrize("version", ["6.4", "6.2", "6.1", "5.2"])
def test_idempotent_on_fixtures(path: Path, version: str) -> None:
    once = translate(_read(path), hip_version=version)
    twice = translate(once.text, hip_version=version)
    assert twice.text == once.text
    assert not twice.added_include


# -- identifiers ------------------------------------------------------------------------------


def test_whole_identifiers_only() -> None:
    text = (
        "void f() {\n"
        "  int cudaMallocCount = 0; my_cudaMalloc_wrapper(); xcudaFree(); cudaFree_(p);\n"
        "  s.cudaMalloc(1); s->cudaFree(2); cudaMalloc(&p, 4);\n"
        "}\n"
    )
    result = translate(text)
    assert result.text.splitlines()[0] == "#include <hip/hip_runtime.h>"
    assert result.text.splitlines()[2] == text.splitlines()[1]
    assert result.text.splitlines()[3] == "  s.cudaMalloc(1); s->cudaFree(2); hipMalloc(&p, 4);"
    assert result.replacements == {"cudaMalloc": 1}


def test_comments_and_strings_are_not_rewritten() -> None:
    text = (
        "/* cudaMalloc(&p, n); */\n"
        "// cudaFree(p)\n"
        'const char* s = "cudaMemcpy"; char c = \'c\'; auto r = R"x(cudaFree)x";\n'
        "cudaMalloc(&p, n);\n"
    )
    out = translate(text).text
    assert out.splitlines()[:4] == [
        "/* cudaMalloc(&p, n); */",
        "// cudaFree(p)",
        "#include <hip/hip_runtime.h>",
        'const char* s = "cudaMemcpy"; char c = \'c\'; auto r = R"x(cudaFree)x";',
    ]
    assert out.splitlines()[4] == "hipMalloc(&p, n);"


def test_include_paths_both_forms() -> None:
    text = (
        '#include "cuda_runtime.h"\n#include <curand_kernel.h>\n'
        "#include <thrust/sort.h>\n#include <my/cuda_utils.h>\n"
        '// #include <cublas_v2.h>\nconst char* h = "cufft.h";\n'
    )
    result = translate(text)
    assert result.text.splitlines() == [
        '#include "hip/hip_runtime.h"',
        "#include <hiprand/hiprand_kernel.h>",
        "#include <thrust/sort.h>",
        "#include <my/cuda_utils.h>",
        "// #include <cublas_v2.h>",
        'const char* h = "cufft.h";',
    ]
    assert result.replacements == {"cuda_runtime.h": 1, "curand_kernel.h": 1}
    assert not result.added_include


def test_cub_namespace() -> None:
    text = "using namespace cub;\ncub::BlockReduce<float, 128> r; ::cub :: WarpReduce<int> w;\n"
    text += "int cub = 3; x.cub::y; my_cub::z;\n"
    out = translate(text).text.splitlines()
    assert out[0] == "using namespace hipcub;"
    assert out[1] == "hipcub::BlockReduce<float, 128> r; ::hipcub :: WarpReduce<int> w;"
    assert out[2] == "int cub = 3; x.cub::y; my_cub::z;"


def test_launch_syntax_kept() -> None:
    text = "__global__ void k(int);\nvoid f() { k<<<dim3(1, 2), 64, 0, s>>>(1); k<<<1, 1>>>(2); }\n"
    result = translate(text)
    assert result.text.endswith(text.splitlines(keepends=True)[1])


def test_unsupported_reported_with_position_and_left_as_is() -> None:
    text = "void f() {\n  cudaMalloc(&p, 4);\n    cudaGraphInstantiateWithParams(&g, h, &p);\n}\n"
    result = translate(text, hip_version="6.1")
    assert result.unsupported == [
        Unsupported("cudaGraphInstantiateWithParams", 3, 5, "not available before HIP 6.2.0")
    ]
    assert "cudaGraphInstantiateWithParams(&g, h, &p)" in result.text
    assert "hipMalloc(&p, 4)" in result.text
    newer = translate(text, hip_version="6.4")
    assert newer.unsupported == []
    assert "hipGraphInstantiateWithParams(&g, h, &p)" in newer.text


def test_no_hip_equivalent_reported() -> None:
    from gpuport.knowledge.api_map import load_api_map

    amap = load_api_map()
    name = next(n for n in amap.unsupported() if re.fullmatch(r"cuda[A-Za-z]\w*", n))
    result = translate(f"void f() {{ {name}(); }}\n")
    assert result.unsupported == [Unsupported(name, 1, 12, "no HIP equivalent")]
    assert f"{name}();" in result.text


def test_bad_hip_version() -> None:
    with pytest.raises(GpuportError, match="not a HIP version"):
        translate("int x;", hip_version="six")


# -- warp intrinsics --------------------------------------------------------------------------


WARP_SRC = (
    "__device__ int f(float v, int p, unsigned m) {\n"
    "  v = __shfl_sync(0xffffffff, v, 0);\n"
    "  v = __shfl_xor_sync(0xFFFFFFFFu, v, 1, 32);\n"
    "  v = __shfl_up_sync(m, v, 1) + __shfl_down_sync(m, __shfl_xor_sync(m, v, 2), 1);\n"
    "  int b = __ballot_sync(0xffffffff, p > 0) + __any_sync(m, p) + __all_sync(m,\n"
    "      (p > 1));\n"
    "  __syncwarp();\n"
    "  return b;\n"
    "}\n"
)


def test_warp_below_62_drops_mask() -> None:
    result = translate(WARP_SRC, hip_version="6.1", shims=False)
    lines = result.text.splitlines()
    c = " " + MASK_DROPPED
    assert lines[2] == f"  v = __shfl(v, 0){c};"
    assert lines[3] == f"  v = __shfl_xor(v, 1, 32){c};"
    assert lines[4] == f"  v = __shfl_up(v, 1){c} + __shfl_down(__shfl_xor(v, 2){c}, 1){c};"
    assert lines[5] == f"  int b = __ballot(p > 0){c} + __any(p){c} + __all((p > 1)){c};"
    assert lines[6] == "  __syncwarp();"
    assert [u.name for u in result.unsupported] == ["__syncwarp"]
    assert result.unsupported[0][1:3] == (7, 3)
    assert result.replacements["__shfl_xor_sync"] == 2
    assert result.added_include
    # by default (issue 25) a shim stands for __syncwarp below 6.2, and it is not unsupported
    shimmed = translate(WARP_SRC, hip_version="6.1")
    assert [s.name for s in shimmed.shims] == ["__syncwarp"] and shimmed.unsupported == []
    assert "GPUPORT_SHIM_SYNCWARP" in shimmed.text and "  __syncwarp();" in shimmed.text


def test_warp_from_62_keeps_sync_and_widens_full_mask() -> None:
    result = translate(WARP_SRC, hip_version="6.2")
    lines = result.text.splitlines()
    assert lines[2] == "  v = __shfl_sync(0xffffffffffffffffull, v, 0);"
    assert lines[3] == "  v = __shfl_xor_sync(0xffffffffffffffffull, v, 1, 32);"
    assert lines[4] == WARP_SRC.splitlines()[3]
    assert lines[5].startswith("  int b = __ballot_sync(0xffffffffffffffffull, p > 0)")
    assert "__syncwarp();" in result.text
    assert result.unsupported == []


def test_unparsable_warp_call_does_not_crash() -> None:
    for version in ("6.1", "6.4"):
        result = translate(
            "__device__ void f() { __shfl_xor_sync(0xffffffff, v", hip_version=version
        )
        assert "__shfl_xor_sync(" in result.text


# -- the hip_runtime include ------------------------------------------------------------------


def test_include_added_after_comments_and_pragma_once() -> None:
    text = (
        "// header\n/* more\n   lines */\n#pragma once\n#include <vector>\n__global__ void k();\n"
    )
    result = translate(text)
    assert result.added_include
    assert result.text.splitlines()[3:5] == ["#pragma once", "#include <hip/hip_runtime.h>"]


def test_include_added_after_include_guard() -> None:
    text = "#ifndef K_H\n#define K_H\nvoid f() { cudaDeviceSynchronize(); }\n#endif\n"
    out = translate(text).text
    assert out.splitlines()[:3] == ["#ifndef K_H", "#define K_H", "#include <hip/hip_runtime.h>"]


def test_include_added_before_first_code() -> None:
    text = "/* licence */\n\n#include <cstdio>\nvoid f() { cudaFree(0); }"
    out = translate(text).text
    assert out == (
        "/* licence */\n\n#include <hip/hip_runtime.h>\n#include <cstdio>\nvoid f() { hipFree(0); }"
    )


def test_include_not_added_without_cuda_or_when_present() -> None:
    assert not translate("int main() { return 0; }\n").added_include
    assert not translate('#include "cuda.h"\n__global__ void k() {}\n').added_include
    host_only = translate("// uses cudaMalloc in a comment only\nint x;\n")
    assert not host_only.added_include
    assert host_only.text == "// uses cudaMalloc in a comment only\nint x;\n"


# -- robustness and properties ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/* unterminated cudaMalloc",
        '"unterminated cudaFree',
        "'x",
        "k<<<",
        "k<<<1, 2>>",
        "#include <cuda_runtime.h",
        "#include",
        "__shfl_sync(",
        "__shfl_sync(0xffffffff",
        "cub::",
        "x." * 10,
        "cudaMalloc(" * 2000,
        ")" * 100 + "(" * 100,
        "a" * 200_000 + " cudaFree(p);",
        "cudaMalloc \\\n(p)",
        "\udcff\udcfe cudaFree(p);",
        "#pragma once",
        "#ifndef A\n#define A",
        "__global__",
    ],
)
def test_never_crashes(text: str) -> None:
    for version in ("6.4", "6.1"):
        result = translate(text, hip_version=version)
        assert isinstance(result, Translation)
        assert translate(result.text, hip_version=version).text == result.text


_CUDA_TOKENS = [
    "cudaMalloc",
    "cudaFree",
    "cudaMemcpy",
    "cudaStream_t",
    "cudaGraphInstantiateWithParams",
    "cublasSgemm",
    "curand_init",
    "__shfl_xor_sync",
    "__shfl_sync",
    "__ballot_sync",
    "__syncwarp",
    "__activemask",
    "__global__",
    "__shared__",
    "cub",
    "::",
]
_USER_TOKENS = [
    "my_cudaMalloc_wrapper",
    "cudaMallocCount",
    "xcudaFree",
    "hipMalloc",
    "foo",
    "value",
    "cuda",
    "CUDA",
    "0xffffffff",
    "0xFFFFFFFFu",
    "42",
    "1.5f",
]
_PUNCT = ["(", ")", ",", ";", "{", "}", "<<<", ">>>", "<", ">", ".", "->", "=", "+", " ", "\n"]
_COMMENTS = ["// cudaMalloc here\n", "/* cudaFree(p) */", "/* __shfl_sync(0xffffffff, v, 1) */"]
_STRINGS = ['"cudaMemcpy"', '"__shfl_xor_sync(0xffffffff)"', "'c'", 'R"(cudaFree)"', '"a\\"b"']
_DIRECTIVES = ["#include <cuda_runtime.h>\n", '#include "curand.h"\n', "#pragma once\n"]


def _soup(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 60)):
        pool = rng.choices(
            [_CUDA_TOKENS, _USER_TOKENS, _PUNCT, _COMMENTS, _STRINGS, _DIRECTIVES],
            weights=[5, 4, 8, 1, 1, 1],
        )[0]
        token = rng.choice(pool)
        if pool is _DIRECTIVES:
            token = "\n" + token
        parts.append(token)
        if rng.random() < 0.5:
            parts.append(" ")
    return "".join(parts)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("version", ["6.4", "6.1"])
def test_random_token_soups(seed: int, version: str) -> None:
    """Property test (no hypothesis in the venv): 250 random soups per seed."""
    rng = random.Random(seed * 7919 + len(version))  # noqa: S311
    for _ in range(250):
        text = _soup(rng)
        result = translate(text, hip_version=version)
        # idempotent
        assert translate(result.text, hip_version=version).text == result.text, text
        # comments and string literals survive unchanged (added ones are ours)
        assert _hidden(result.text) == _hidden(text), text
        # user identifiers are never rewritten
        for user in ("my_cudaMalloc_wrapper", "cudaMallocCount", "xcudaFree"):
            assert _identifiers(result.text).count(user) == _identifiers(text).count(user), text
        # nothing unavailable was emitted
        if version == "6.1":
            assert "hipGraphInstantiateWithParams" not in lex(result.text).code
            code = lex(result.text).code
            reported = {u.name for u in result.unsupported}
            for left in re.finditer(r"\b(__(?:shfl|ballot)\w*_sync)\s*\(", code):
                before = code[: left.start()].rstrip()
                if not before.endswith((".", "->")):  # a member is a user's name
                    assert left.group(1) in reported, text  # unbalanced calls stay, reported


# -- compile check with Debian's hipcc --------------------------------------------------------


@pytest.mark.hipcc
def test_translation_compiles_with_hipcc(tmp_path: Path) -> None:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (install Debian's hipcc; CI sets GPUPORT_REQUIRE_HIPCC=1)")
    # Debian's hipcc is HIP 5.2: translate for it (maskless warp forms).
    result = translate(_read(WARP), hip_version="5.2")
    assert result.unsupported == []
    source = tmp_path / "warp_reduce.hip"
    source.write_text(result.text, encoding="utf-8")
    proc = subprocess.run(
        [hipcc, "--offload-arch=gfx90a", "-c", str(source), "-o", str(tmp_path / "w.o")],
        capture_output=True,
        text=True,
        env={**os.environ, "HIP_PLATFORM": "amd"},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "w.o").stat().st_size > 0
