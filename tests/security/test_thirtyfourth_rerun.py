"""Issue 23: the thirty-fourth re-run (targeted at the session's new code, a fourteenth
reviewer, on f9a7ee4): 7 findings, all stalls. F6: a 933-byte chain of ``#define``s, each a sum
of copies of the one before, used as a block size, was evaluated copy by copy (exponential) by
the launch check ``port`` and ``hipify`` run on every full mask. F1-F5: the lane-divergence
analysis and the warp reader on chained assignments, deep nesting and many callers
(quadratic time or memory). F7: the CI route reader, a copy of a line per match.

Each answer stays safe: what the divergence analysis does not judge is taken as divergent,
so the mask is left 32-bit and said why. The timed tests use the stall tests' CPU-time bound;
each input took minutes, or over 2 GB, on the code before."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.hipify import divergence
from gpuport.hipify.divergence import Divergence
from gpuport.scan.cxx import lex
from tests.security.test_stalls import _within

_SHFL = " v+=__shfl_xor_sync(0xffffffff, v, 1); o[0]=v;}\n"


def _answers(text: str) -> list[str | None]:
    files = {"a.cu": lex(text)}
    div = Divergence(files)
    code = files["a.cu"].code
    at = 0
    out = []
    while (at := code.find("__shfl_xor_sync", at + 1)) != -1:
        out.append(div.why("a.cu", at))
    return out


def test_f6_a_chain_of_defines_as_a_block_size() -> None:
    """Each name's value is worked out once per launch (40^6 evaluations before)."""
    lines = ["#define A0 32"]
    for d in range(1, 7):
        lines.append(f"#define A{d} ({'+'.join([f'A{d - 1}'] * 40)})")
    lines.append("__global__ void k(float*o){float v=o[0];" + _SHFL)
    lines.append("void h(float*o){ k<<<1, A6>>>(o); }")
    text = "\n".join(lines) + "\n"
    got = _answers(text)
    assert got and got[0] is None  # 40^6 x 32 threads: whole wavefronts
    _within(lambda: _answers(text), 2.0)


def test_f1_a_chain_of_assignments_in_a_kernel(tmp_path: Path) -> None:
    from gpuport.hipify.run import hipify_path

    src = tmp_path / "a.cu"
    src.write_text(
        "__global__ void k(float*o){float v=o[0]; int a=0;\n" + "a=" * 20_000 + "a;\n" + _SHFL
    )
    _within(lambda: hipify_path(src, target="gfx942", hip_version="6.2"), 4.0)


def test_f2_deep_nesting_around_many_returns_is_not_judged() -> None:
    n = 3000  # 9,000,000 enclosing regions over the exits: more than the analysis keeps
    text = (
        "__global__ void k(float*o, int x){float v=o[0];\n"
        + "if(x){" * n + "return;" * n + "}" * n + "\n" + _SHFL
    )  # fmt: skip
    got = _answers(text)
    assert got and got[0] is not None and got[0].startswith("not judged")
    _within(lambda: _answers(text), 3.0)


def test_f3_chained_compound_assignments_are_not_judged() -> None:
    text = "__global__ void k(float*o){float v=o[0]; int a=0;\n" + "a+=" * 20_000 + "a;\n" + _SHFL
    got = _answers(text)
    assert got and got[0] is not None and got[0].startswith("not judged")
    _within(lambda: _answers(text), 2.0)


def test_f4_the_caller_walks_have_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 helpers called from one function with 3,000 callers: every helper walked those
    callers again. Past the budget of call sites, a warp call is taken as divergent."""
    monkeypatch.setattr(divergence, "MOST_SITES_READ", 2_000)
    n = 300
    text = "".join(
        f"__device__ float w{i}(float v){{return __shfl_xor_sync(0xffffffff,v,1);}}\n"
        for i in range(n)
    )
    text += "__device__ float C(float v){\n" + "".join(f"v=w{i}(v);\n" for i in range(n))
    text += "return v;}\n" + "".join(
        f"__device__ float d{j}(float v){{return C(v);}}\n" for j in range(n)
    )
    got = _answers(text)
    assert got[0] is None  # the first questions are answered
    assert got[-1] is not None and "too many to follow" in got[-1]


def test_f7_a_long_ci_line_that_names_rocm_many_times(tmp_path: Path) -> None:
    from gpuport.scan.project.routes import _acting_match

    text = "jobs:\n  # " + "rocm " * 300_000 + "\n  build:\n    runs-on: ubuntu\n"
    assert _acting_match(text) is None
    assert _acting_match(text + "    container: rocm/dev-ubuntu-22.04\n") is not None
    _within(lambda: _acting_match(text), 1.0)
