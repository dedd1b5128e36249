"""Portable shims for APIs the target HIP lacks (issue 25, item 4): written once, marked,
reported, idempotent, and the output compiles with Debian's HIP 5.2 for wave64 and wave32."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuport.hipify.shims import MARK
from gpuport.hipify.translate import translate

SOURCE = """\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void k(const float* in, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = in[threadIdx.x];
  __syncwarp();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> t = cg::tiled_partition<16>(block);
  float v = cg::reduce(t, s[threadIdx.x], cg::plus<float>());
  float m = cg::reduce(t, v, cg::greater<float>());
  __syncwarp(0xffffffff);
  out[threadIdx.x] = v + m;
  if (in[threadIdx.x] > 0.f) {  // a group of any size: gsplat's labeled groups are coalesced
    cg::coalesced_group c = cg::coalesced_threads();
    out[threadIdx.x] += cg::reduce(c, v, cg::plus<float>());
  }
}
"""


def test_shims_replace_unsupported_apis_and_are_reported() -> None:
    done = translate(SOURCE, hip_version="5.2")
    assert {s.name for s in done.shims} == {"__syncwarp", "cooperative_groups/reduce.h"}
    assert [u.name for u in done.unsupported] == []
    out = done.text
    assert out.count(MARK) == 2 and "GPUPORT_SHIM_SYNCWARP" in out
    assert "#include <cooperative_groups/reduce.h>" not in out
    # the shims follow the includes and come before the first use
    assert out.index("GPUPORT_SHIM_CG_REDUCE") > out.rindex("#include")
    assert out.index("GPUPORT_SHIM_SYNCWARP") < out.index("__global__")
    assert translate(out, hip_version="5.2").text == out  # idempotent


def test_no_shim_where_hip_has_the_api_or_the_project_its_own() -> None:
    newer = translate(SOURCE, hip_version="6.4")
    assert "GPUPORT_SHIM_SYNCWARP" not in newer.text
    assert [s.name for s in newer.shims] == ["cooperative_groups/reduce.h"]
    own = "#define __syncwarp()\n__global__ void k() { __syncwarp(); }\n"
    assert translate(own, hip_version="5.2").shims == []
    kept = translate(SOURCE, hip_version="5.2", shims=False)
    assert kept.shims == [] and {u.name for u in kept.unsupported} >= {"__syncwarp"}


def test_cli_lists_the_shims(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "k.cu"
    src.write_text(SOURCE, encoding="utf-8")
    res = cli("hipify", str(src), "--hip-version", "5.2", "--format", "json")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert report["totals"]["shims"] == 2
    assert "__syncwarp: __syncwarp is not in HIP 5.2" in report["files"][0]["shims"]


@pytest.mark.hipcc
def test_shimmed_output_compiles(tmp_path: Path) -> None:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (CI sets GPUPORT_REQUIRE_HIPCC=1)")
    source = tmp_path / "k.cu"
    source.write_text(translate(SOURCE, hip_version="5.2").text, encoding="utf-8")
    for arch in ("gfx90a", "gfx1030"):
        proc = subprocess.run(
            [
                hipcc,
                f"--offload-arch={arch}",
                "-x",
                "hip",
                "-c",
                str(source),
                "-o",
                str(tmp_path / "x.o"),
            ],
            capture_output=True,
            text=True,
            errors="replace",
            env={**os.environ, "HIP_PLATFORM": "amd", "TMPDIR": str(tmp_path)},
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"{arch}: {proc.stderr[-2000:]}"
