"""PyTorch's shuffles (``WARP_SHFL*`` of ``ATen/cuda/DeviceUtils.cuh``) read as shuffles by the
wave64 analysis (issue 25, second independent sample: apex's layer norm was left as "correct on
a 64-lane wavefront as written" while its odd 32-lane rows read the even rows' lanes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.hipify.translate import translate
from gpuport.hipify.wave64 import MARK

FIXTURE = Path(__file__).parent.parent / "fixtures" / "hipify" / "wave64" / "aten_warp_shfl.cu"
INCLUDE = '#include "ATen/cuda/DeviceUtils.cuh"\n'


def _text() -> str:
    return FIXTURE.read_text(encoding="utf-8")


@pytest.mark.parametrize("unsafe", [False, True])
def test_aten_shuffles_from_32_lane_sources_get_cudas_width(unsafe: bool) -> None:
    done = translate(_text(), hip_version="5.2", wave64="fix", path="k.cu", unsafe=unsafe)
    out = done.text.splitlines()
    ring = next(ln for ln in out if "s += WARP_SHFL(" in ln)
    bcast = next(ln for ln in out if "s = WARP_SHFL(" in ln)
    assert "WARP_SHFL(s, src, 32);" in ring and MARK in ring
    assert "WARP_SHFL(s, 0, 32);" in bcast and MARK in bcast
    assert {c.kind for c in done.wave64} == {"width"}
    assert not any(c.unsafe for c in done.wave64)
    # the lane number itself is left, in either mode: the stride 32 is a row of 32 threads
    assert "& 31;" in next(ln for ln in out if "int src" in ln)
    assert [w.line for w in done.wave64_left] == [11]
    assert "correct once the shuffles have CUDA's width" in done.wave64_left[0].reason
    again = translate(done.text, hip_version="5.2", wave64="fix", path="k.cu", unsafe=unsafe)
    assert again.text == done.text


def test_without_the_aten_header_warp_shfl_is_an_unknown_function() -> None:
    text = _text().replace(INCLUDE, "")
    done = translate(text, hip_version="5.2", wave64="fix", path="k.cu")
    assert "WARP_SHFL(s, src)" in done.text and not done.wave64
    assert any("passes a lane or warp number to `WARP_SHFL`" in w.reason for w in done.wave64_left)


def test_a_project_macro_named_warp_shfl_is_not_read_as_atens() -> None:
    own = INCLUDE + "#define WARP_SHFL(v, l) my_shuffle(v, l)\n"
    done = translate(_text().replace(INCLUDE, own), hip_version="5.2", wave64="fix", path="k.cu")
    assert "WARP_SHFL(s, src)" in done.text and not done.wave64


def test_hardware_wavefront_code_keeps_atens_default_width() -> None:
    text = (
        INCLUDE
        + "__global__ void k(float* out) {\n"
        + "  float v = out[threadIdx.x];\n"
        + "  for (int o = warpSize / 2; o > 0; o /= 2) v += WARP_SHFL_DOWN(v, o);\n"
        + "  v = WARP_SHFL(v, 0);\n"
        + "  if (threadIdx.x % warpSize == 0) out[threadIdx.x / warpSize] = v;\n"
        + "}\n"
    )
    done = translate(text, hip_version="5.2", wave64="fix", path="k.cu")
    assert "WARP_SHFL(v, 0);" in done.text and not done.wave64
