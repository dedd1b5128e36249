"""The C/C++/CUDA lexer: a code view with comments and literals blanked, string spans,
ROCm guard regions, and position helpers."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from gpuport.knowledge import load_packages, resolve_target
from gpuport.models import Severity
from gpuport.scan.cxx import ROCM_MACRO, const_value, lex, within
from gpuport.scan.cxx_cond import nvidia_only_lines, without_cuda_arch
from gpuport.scan.engine import check_text
from gpuport.scan.rules.base import FileKind
from gpuport.scan.rules.native.warp import device_code


def code_of(text: str) -> str:
    src = lex(text)
    assert len(src.code) == len(text)
    assert [i for i, c in enumerate(src.code) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    return src.code


def test_line_comment_blanked_positions_kept() -> None:
    text = "int a; // __shfl_sync(0xffffffff)\nint b;\n"
    code = code_of(text)
    assert code.splitlines()[0] == "int a;" + " " * 27
    assert code.splitlines()[1] == "int b;"
    assert "shfl" not in code


def test_block_comment_spanning_lines() -> None:
    text = 'a /* one\ntwo asm("x")\nthree */ b\n'
    code = code_of(text)
    assert code.split("\n")[0] == "a       "
    assert code.split("\n")[2] == "         b"
    assert "asm" not in code


def test_unterminated_block_comment_runs_to_end() -> None:
    code = code_of("x /* never closed\n int y;")
    assert code.strip() == "x"


def test_line_comment_with_continuation() -> None:
    text = "// comment \\\nstill comment\nint live;\n"
    code = code_of(text)
    assert "still" not in code
    assert "int live;" in code


def test_string_body_blanked_quotes_kept_and_span_exposed() -> None:
    text = 'asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));'
    src = lex(text)
    assert src.code.startswith('asm volatile("')
    assert "laneid" not in src.code
    bodies = [src.string_body(s) for s in src.strings]
    assert bodies == ["mov.u32 %0, %%laneid;", "=r"]
    first = src.strings[0]
    assert text[first.start] == '"' and text[first.end - 1] == '"'


def test_escaped_quotes_and_prefixes() -> None:
    text = r'auto s = u8"a\"b // not a comment"; auto w = L"x"; int after;'
    src = lex(text)
    assert "not a comment" not in src.code
    assert src.code.endswith("int after;")
    assert [src.string_body(s) for s in src.strings] == [r"a\"b // not a comment", "x"]
    assert text[src.strings[0].start : src.strings[0].start + 2] == "u8"


def test_char_literals_blanked() -> None:
    code = code_of("char q = '\"'; char s = '\\''; int z = 1;")
    assert code.endswith("int z = 1;")
    assert '"' not in code


def test_digit_separators_are_not_char_literals() -> None:
    code = code_of("int n = 1'000'000; long h = 0xFF'FF'FFu; char c = 'x';")
    assert "1'000'000" in code
    assert "0xFF'FF'FFu" in code
    assert "'x'" not in code and "' '" in code


def test_raw_string_with_quotes_and_newlines() -> None:
    text = 'auto r = R"delim(a "quote" )" and\n// no comment)delim"; int tail;\n'
    src = lex(text)
    assert src.code.rstrip("\n").endswith("int tail;")
    assert "quote" not in src.code
    (lit,) = src.strings
    assert lit.raw
    assert src.string_body(lit) == 'a "quote" )" and\n// no comment'
    assert src.code.count("\n") == text.count("\n")


def test_raw_prefix_needs_word_boundary() -> None:
    src = lex('FOOR"(x)"; int k;')
    assert not src.strings[0].raw


def test_include_header_name_kept() -> None:
    src = lex('#include "cublas_v2.h"  // c\n#  include <cub/cub.cuh>\nconst char* p = "cufft.h";')
    assert 'cublas_v2.h"' in src.code
    assert "<cub/cub.cuh>" in src.code
    assert "cufft" not in src.code


def test_line_continuation_in_string() -> None:
    text = 'const char* s = "abc\\\ndef"; int x;\n'
    src = lex(text)
    assert "def" not in src.code
    assert "int x;" in src.code


def test_unterminated_string_stops_at_newline() -> None:
    code = code_of('const char* s = "oops\nint x;\n')
    assert "int x;" in code


def test_line_col_and_offsets() -> None:
    text = "ab\ncde\n\nf"
    src = lex(text)
    assert src.line_col(0) == (1, 1)
    assert src.line_col(3) == (2, 1)
    assert src.line_col(5) == (2, 3)
    assert src.line_col(len(text) - 1) == (4, 1)
    assert src.offset_of(2, 3) == 5
    assert src.line_count == 4
    assert src.code_line(2) == "cde"
    assert src.line_span(4) == (8, 9)


GUARDED = """\
int a;
#ifdef USE_ROCM
int b;
#else
int c;
#endif
int d;
#ifndef __HIP_PLATFORM_AMD__
int e;
#  ifdef DEBUG
int f;
#  endif
#else
int g;
#endif
#if defined(FOO)
int h;
#elif defined(__HIPCC__)
int i;
#else
int j;
#endif
#ifdef DEBUG
int k;
#endif
#if CUDA_VERSION >= 11000 && \\
    !defined(USE_ROCM)
int l;
#endif
int m;
"""


def test_guard_regions() -> None:
    src = lex(GUARDED)
    by_name = {}
    for line in range(1, src.line_count + 1):
        hit = re.search(r"int (\w);", src.code_line(line))
        if hit:
            by_name[hit.group(1)] = src.guarded(line)
    assert by_name == {
        "a": False,
        "b": True,
        "c": True,
        "d": False,
        "e": True,
        "f": True,
        "g": True,
        "h": True,
        "i": True,
        "j": True,
        "k": False,
        "l": True,
        "m": False,
    }
    # the directive lines themselves belong to the region
    assert src.guarded(2) and src.guarded(6)


def test_guard_in_comment_does_not_count() -> None:
    src = lex("#ifdef DEBUG // USE_ROCM\nint x;\n#endif\n")
    assert not src.guarded(2)


def test_unterminated_conditional_runs_to_end() -> None:
    src = lex("#ifdef USE_ROCM\nint x;\nint y;")
    assert src.guarded(2) and src.guarded(3)


def test_directives_listed() -> None:
    src = lex("#if CUDA_VERSION > 1\n#elif defined(USE_ROCM)\n#endif\n")
    assert [(d.line, d.kind, d.rocm) for d in src.directives] == [
        (1, "if", False),
        (2, "elif", True),
        (3, "endif", False),
    ]


DEAD = """\
int a;
#if 0
int b;
#ifdef USE_ROCM
int c;
#else
int d;
#endif
#else
int e;
#endif
#if false
int f;
#elif defined(X)
int g;
#endif
#if 0 && defined(__CUDACC__)
int h;
#endif
#ifdef USE_ROCM
#if (0)
int i;
#else
int j;
#endif
#endif
#if 1
int k;
#elif X
int l;
#else
int m;
#endif
#if defined(X) || 0
int n;
#endif
#if !1
int o;
#endif
int p;
#if 0
int q;
"""


def test_dead_regions() -> None:
    src = lex(DEAD)
    dead = {}
    guarded = {}
    for line in range(1, src.line_count + 1):
        hit = re.search(r"int (\w);", src.code_line(line))
        if hit:
            dead[hit.group(1)] = src.dead(line)
            guarded[hit.group(1)] = src.guarded(line)
    assert {name for name, is_dead in dead.items() if is_dead} == {
        "b",
        "c",
        "d",
        "f",
        "h",
        "i",
        "l",
        "m",
        "o",
        "q",
    }
    # the guard map is unchanged by dead regions
    assert guarded["i"] and guarded["j"] and not guarded["e"]
    # directive lines belong to the enclosing region: #if 0 and its #else are live,
    # a directive nested in a dead branch is dead
    assert not src.dead(2) and not src.dead(9) and not src.dead(11)
    assert src.dead(4) and src.dead(8)
    assert src.dead_at(src.offset_of(3)) and not src.dead_at(src.offset_of(10))


def test_no_dead_regions_without_constant_conditions() -> None:
    src = lex("#ifdef X\nint a;\n#else\nint b;\n#endif\n#if 0 // not code\n")
    assert not any(src.dead(line) for line in range(1, 6))
    assert lex("#if FOO\nint a;\n#endif\n")._dead is None


def test_dead_region_condition_in_comment_or_continued() -> None:
    src = lex("#if 0 /* off */ \\\n    && defined(Y)\nint a;\n#endif\nint b;\n")
    assert src.dead(3) and not src.dead(5)
    assert not lex("// #if 0\nint a;\n").dead(2)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("0", False),
        ("false", False),
        ("(0)", False),
        ("0L", False),
        ("0x0", False),
        ("!1", False),
        ("0 && defined(X)", False),
        ("defined(X) && (0)", False),
        ("0 || 0", False),
        ("1", True),
        ("true", True),
        ("1 || X", True),
        ("X", None),
        ("0 || X", None),
        ("(A) || (B)", None),
        ("!defined(X)", None),
        ("X == 0", None),
    ],
)
def test_const_value(expr: str, value: bool | None) -> None:
    assert const_value(expr) is value


def test_native_rules_skip_dead_branches() -> None:
    text = '#if 0\nasm volatile("bar.sync 0;");\n#else\nasm volatile("bar.sync 1;");\n#endif\n'
    findings, _ = check_text(
        "k.cu", text, FileKind.NATIVE, resolve_target("gfx942"), load_packages()
    )
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP301", 4)]


@pytest.mark.parametrize(
    ("kind", "expr", "value"),
    [
        ("ifdef", "__CUDA_ARCH__", False),
        ("ifndef", "__CUDA_ARCH__", True),
        ("elifdef", "__CUDA_ARCH__", False),
        ("ifdef", "USE_CUDA", None),
        ("if", "defined(__CUDA_ARCH__)", False),
        ("if", "defined __CUDA_ARCH__", False),
        ("if", "defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", False),
        ("if", "defined(__CUDA_ARCH__) && defined(X)", False),
        ("if", "__CUDA_ARCH__ >= 700", False),
        ("if", "700 <= __CUDA_ARCH__", False),
        ("if", "__CUDA_ARCH__", False),
        ("if", "!defined(__CUDA_ARCH__)", True),
        ("if", "!defined(__CUDA_ARCH__) || defined(X)", True),
        ("if", "__CUDA_ARCH__ < 800", True),
        ("elif", "defined(__CUDA_ARCH__)", False),
        ("if", "defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)", None),
        ("if", "!defined(__CUDA_ARCH__) && defined(X)", None),
        ("if", "__CUDA_ARCH__ / 100 >= 7", None),
        ("if", "CUDA_VERSION >= 11000", False),  # undefined or TORCH_HIP_VERSION on ROCm
        ("if", "0", None),
    ],
)
def test_without_cuda_arch(kind: str, expr: str, value: bool | None) -> None:
    assert without_cuda_arch(kind, expr) is value


NVIDIA_ONLY = """\
int a;
#ifdef __CUDA_ARCH__
int b;
#else
int c;
#endif
#if !defined(__CUDA_ARCH__)
int d;
#elif __CUDA_ARCH__ >= 800
int e;
#else
int f;
#endif
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
int g;
#endif
#if defined(__CUDA_ARCH__) && \\
    __CUDA_ARCH__ >= 700
int h;
#if FOO
int i;
#else
int j;
#endif
#endif
#ifndef __CUDA_ARCH__
int k;
#elif defined(BAR)
int l;
#endif
int m;
#if __CUDA_ARCH__ < 800
int n;
#else
int o;
#endif
#if defined(__CUDA_ARCH__)
int p;
"""


def test_nvidia_only_branches() -> None:
    src = lex(NVIDIA_ONLY)
    nv = nvidia_only_lines(src.directives, src.line_count)
    assert nv is not None
    names = {}
    for line in range(1, src.line_count + 1):
        hit = re.search(r"int (\w);", src.code_line(line))
        if hit:
            names[hit.group(1)] = bool(nv[line])
    assert {name for name, only in names.items() if only} == {
        "b",
        "e",
        "f",
        "h",
        "i",
        "j",
        "l",
        "o",
        "p",
    }
    # the directive lines are not part of a branch (GP317 reports the test itself),
    # and neither is the continuation of a directive
    directive_lines = [d.line for d in src.directives]
    assert not any(nv[line] for line in directive_lines[:3])
    assert src.code_line(18).strip() == "__CUDA_ARCH__ >= 700" and not nv[18]
    assert src.code_line(20) == "#if FOO" and nv[20]  # nested in an NVIDIA-only branch
    assert nvidia_only_lines(lex("#ifdef X\nint a;\n#endif\n").directives, 3) is None


def _native(text: str, rel: str = "k.cu", **kw: frozenset[str]) -> list[tuple[str, int, str, bool]]:
    findings, _ = check_text(
        rel, text, FileKind.NATIVE, resolve_target("gfx942"), load_packages(), **kw
    )
    return [(f.rule_id, f.location.line or 0, f.severity.value, f.guarded) for f in findings]


def test_cuda_arch_branch_lowers_its_findings_not_its_gate() -> None:
    text = (
        "__device__ __host__ unsigned bits(unsigned val, int pos, int len) {\n"
        "#if !defined(__CUDA_ARCH__)\n"
        "  return (val >> pos) & ((1u << len) - 1u);\n"
        "#else\n"
        "  unsigned ret;\n"
        '  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(ret) : "r"(val), "r"(pos), "r"(len));\n'
        "  return ret;\n"
        "#endif\n"
        "}\n"
    )
    assert sorted(_native(text)) == [
        ("GP301", 6, "info", True),
        ("GP317", 2, "minor", False),
    ]
    findings, _ = check_text(
        "k.cu", text, FileKind.NATIVE, resolve_target("gfx942"), load_packages()
    )
    ptx = next(f for f in findings if f.rule_id == "GP301")
    assert ptx.default_severity is Severity.BLOCKER


def test_library_evidence_and_cudnn_severity() -> None:
    lookalike = (
        "enum class CuDNNDepthwiseKernel { Default };\n"
        "struct Context { CuDNNDepthwiseKernel cudnnDepthwiseKernel() const; };\n"
        "struct cublasCommonArgs { int m; };\n"
        "void f(const std::map<int, int>& m) { for (const auto& [ncclId, v] : m) {} }\n"
    )
    assert _native(lookalike, "Context.h") == []
    real = lookalike + "cudnnStatus_t check(cudnnHandle_t h);\n"
    assert _native(real, "Context.h") == [("GP316", 5, "major", False)]
    hip = "#include <miopen/miopen.h>\n" + real
    assert _native(hip, "Context.h") == []
    rocm_only = "#include <hip/hip_runtime.h>\nvoid g(cublasHandle_t h);\n"
    assert _native(rocm_only, "ops.h") == []
    assert _native(rocm_only.replace("hip/hip_runtime", "cuda_runtime"), "ops.h") == [
        ("GP316", 2, "minor", False)
    ]
    assert _native("void g(cublasHandle_t h);\n", "src/hip/ops.h") == []


CUTLASS = (
    "#include <cutlass/cutlass.h>\n"
    "static constexpr int kWarpSize = 32;\n"
    "CUTLASS_DEVICE void f(unsigned* lock, int s, int tid, float& v) {\n"
    '  asm volatile("st.global.cg.b32 [%0], %1;" : : "l"(lock), "r"(s));\n'
    "  int lane = tid % 32;\n"
    "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"
    "}\n"
)


def test_cutlass_file_folds_ptx_and_warp_findings_into_gp315() -> None:
    findings, _ = check_text(
        "attn.h", CUTLASS, FileKind.NATIVE, resolve_target("gfx942"), load_packages()
    )
    by_rule = {f.rule_id: f for f in findings}
    assert sorted(by_rule) == ["GP301", "GP302", "GP303", "GP304", "GP315"]
    for rid in ("GP301", "GP302", "GP303", "GP304"):
        assert by_rule[rid].guarded and by_rule[rid].severity is Severity.INFO
    gp315 = by_rule["GP315"]
    assert gp315.severity is Severity.BLOCKER and not gp315.guarded
    assert gp315.message.endswith(
        "; 4 more PTX/warp findings in this file are folded into this one"
    )
    # without GP315 nothing is folded: the findings keep their own severity
    kept = _native(CUTLASS, "attn.h", ignore=frozenset({"GP315"}))
    assert ("GP301", 4, "blocker", False) in kept
    # nor when the CUTLASS use sits in a ROCm branch
    guarded = "#ifndef USE_ROCM\n" + CUTLASS.replace("\nstatic", "\n#endif\nstatic", 1)
    assert ("GP301", 6, "blocker", False) in _native(guarded, "attn.h")


@pytest.mark.parametrize(
    ("rel", "code", "device"),
    [
        ("k.cu", "int x;", True),
        ("k.cuh", "int x;", True),
        ("ops.h", "__global__ void k();", True),
        ("ops.h", "int lane = threadIdx.x & 31;", True),
        ("ops.h", "#include <hip/hip_runtime.h>", True),
        ("ops.h", "CUTLASS_DEVICE void f();", True),
        ("aten/cuda/ops.h", "int x;", True),
        ("ops.h", "uint lane = lid & 31u;", False),
        ("ops.h", "constexpr int kWarpSize = 32; sycl::queue q;", False),
        ("ops.hpp", "__kernel void k(__global float* p) { get_local_id(0); }", False),
        ("aten/mps/kernels/Sort.h", "uint lane = lid & 31u; __shfl(x);", False),
        ("Sort.h", "void k(uint lid [[thread_index_in_simdgroup]]) { __shfl(x); }", False),
        ("k.metal", "int x;", False),
    ],
)
def test_device_code(rel: str, code: str, device: bool) -> None:
    assert device_code(rel, code) is device


@pytest.mark.parametrize(
    ("name", "rocm"),
    [
        ("__HIP_PLATFORM_AMD__", True),
        ("__HIP_PLATFORM_HCC__", True),
        ("__HIPCC__", True),
        ("__HIP__", True),
        ("USE_ROCM", True),
        ("__HIP_DEVICE_COMPILE__", True),
        ("HIP_PLATFORM", True),
        ("GGML_USE_HIP", True),
        ("__gfx942__", True),
        ("__GFX9__", True),
        ("__AMDGCN__", True),
        ("OWNERSHIP", False),
        ("CHIP_ID", False),
        ("CUDA_VERSION", False),
        ("__CUDA_ARCH__", False),
    ],
)
def test_rocm_macro_names(name: str, rocm: bool) -> None:
    assert (ROCM_MACRO.search(name) is not None) is rocm


def test_brackets_and_call_args() -> None:
    text = 'f(a, g(b, c), x[1, 2], /* , */ "s,t", {d, e});'
    src = lex(text)
    close = src.match_close(1)
    assert close == len(text) - 2
    args = [text[s:e].strip() for s, e in src.call_args(1)]
    assert args == ["a", "g(b, c)", "x[1, 2]", '/* , */ "s,t"', "{d, e}"]
    assert lex("h()").call_args(1) == []
    assert lex("h(").match_close(1) is None


def test_function_bodies() -> None:
    text = (
        "__global__ void k(int* p) { p[0] = 1; }\n"
        "__device__ int counter = 0;\n"
        "__host__ __device__ int both(int x) { return x; }\n"
        "__device__ void f();\n"
        "template <typename T> __device__ T g(T x) { if (x) { return x; } return x; }\n"
        "void host() { }\n"
    )
    src = lex(text)
    spans = src.function_bodies(
        re.compile(r"\b__global__\b|\b__device__\b"), exclude=re.compile(r"\b__host__\b")
    )
    assert len(spans) == 2
    assert within(spans, text.index("p[0]"))
    assert within(spans, text.index("if (x)"))
    assert not within(spans, text.index("return x; }\n__device__ void"))
    assert not within(spans, text.index("void host"))


def test_lexing_a_megabyte_finishes() -> None:
    chunk = (
        "// comment with \"quotes\" and 'ticks'\n"
        "__global__ void k(const float* in, float* out, int n) {\n"
        '  const char* s = "a string // not a comment";\n'
        "  char c = 'x'; int big = 1'000'000;\n"
        "  /* block\n     comment */ out[threadIdx.x] = in[threadIdx.x] * 2.0f;\n"
        "}\n"
    )
    text = chunk * (1_000_000 // len(chunk))
    started = time.perf_counter()
    src = lex.__wrapped__(text)
    elapsed = time.perf_counter() - started
    assert len(src.code) == len(text)
    assert elapsed < 20.0  # a hang guard (catastrophic backtracking), not a timing claim


def test_native_checker_on_a_megabyte_finishes() -> None:
    """All GP3xx passes finish on 1 MB of hazard-dense CUDA (every fixture, repeated).

    About 3 s of CPU on the 2-core dev machine (2026-11-28); the bound only guards against a
    pathological regex. CPU time, not wall time: a CI run sharing the machine with other jobs
    took 40 s of wall time for the same 3 s of work."""
    fixtures = Path(__file__).resolve().parents[2] / "src/gpuport/scan/rules/native/fixtures"
    base = "".join(p.read_text(encoding="utf-8") for p in sorted(fixtures.glob("*.cu")))
    text = (base * (1_000_000 // len(base) + 1))[:1_000_000]
    text = text[: text.rfind("\n") + 1] + "// unique tail\n"
    target, packages = resolve_target("gfx942"), load_packages()
    started = time.process_time()
    findings, _ = check_text("big.cu", text, FileKind.NATIVE, target, packages)
    elapsed = time.process_time() - started
    assert findings
    assert elapsed < 30.0


def test_both_branches_of_a_conditional_opening_a_block_leave_later_brackets_paired() -> None:
    """fastllm: `#if A` `if (x) {` `#else` `if (y) {` `#endif` ... `}`: counting both branches
    left the function's own brace, and every bracket after it in the file, unpaired."""
    text = (
        "void f(int k) {\n"
        "#if A\n"
        "    if (k == 1) {\n"
        "#else\n"
        "    if (k == 1 || k == 2) {\n"
        "#endif\n"
        "        k = 0;\n"
        "    }\n"
        "}\n"
        "void g() { h(); }\n"
    )
    src = lex(text)
    f_open = text.index("{")
    assert src.match_close(f_open) == text.index("}\nvoid g")
    g_open = text.index("{", text.index("void g"))
    assert src.match_close(g_open) == text.rindex("}")
    # the block the first branch opens is the one the shared `}` closes
    assert src.match_close(text.index("{", text.index("#if A"))) == text.index("}\n}")
