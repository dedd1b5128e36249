"""Forty-second re-run (red team 42), the scan's native lane findings F8, F9 and F13: the
GP304 lane-to-helper check reads a file once (not once per lane statement and helper), a
32-bit warp mask handed to a wrapper on the next line or behind a cast is still a lane mask
(GP302 major, not "data"), and a project's function-like macro that shuffles is a lane helper
like a function (GP304 major, not a "logical group").
"""

from __future__ import annotations

import time
from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from tests.scan.project_files import write


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _severities(report: ScanReport, rule: str, path: str) -> list[str]:
    return [
        f.severity.value for f in report.findings if f.rule_id == rule and f.location.path == path
    ]


def _lanes_and_helpers(body: str, lanes: int, helpers: int) -> dict[str, str]:
    util = "#pragma once\n" + "".join(
        f"__device__ float hf{i}(float v, int l) {{ {body} }}\n" for i in range(helpers)
    )
    kernel = (
        '#include "util.cuh"\n__global__ void k(float *o, const float *in) {\n'
        "  float v = in[threadIdx.x];\n"
        + "".join(f"  v += hf{i}(v, 1);\n" for i in range(helpers))
        + "".join(f"  int lane{j} = threadIdx.x % 32; o[lane{j}] = v;\n" for j in range(lanes))
        + f"  v += hf0(v, (lane{lanes - 1} + 1) % 32);\n  o[0] = v;\n}}\n"
    )
    return {"util.cuh": util, "kernel.cu": kernel}


def _timed(root: Path, files: dict[str, str]) -> tuple[float, ScanReport]:
    start = time.perf_counter()
    report = _scan(root, files)
    return time.perf_counter() - start, report


def test_f8_lane_statements_times_shuffling_helpers_scan_in_linear_time(tmp_path: Path) -> None:
    """800 lane statements and 200 shuffling helpers the file calls (44 KB): as fast, within
    a margin, as the same file whose helpers do not shuffle (was > 20 s against < 1 s)."""
    shuffling = _lanes_and_helpers("return __shfl_sync(__activemask(), v, l);", 800, 200)
    plain = _lanes_and_helpers("return v + l;", 800, 200)
    _scan(tmp_path / "warm", _lanes_and_helpers("return v;", 2, 2))
    fast, _ = _timed(tmp_path / "plain", plain)
    slow, report = _timed(tmp_path / "shfl", shuffling)
    assert slow < 3 * fast + 1.5, (slow, fast)
    # still judged: the last lane goes to hf0, which shuffles
    assert "major" in _severities(report, "GP304", "kernel.cu")


_MASKS_H = "#pragma once\n#define FULL_MASK 0xffffffff\n"
_SHFL_H = "#pragma once\n#define SHFL_DOWN(m, v, o) __shfl_down_sync(m, v, o)\n"
_RED = """\
#include "masks.h"
#include "shfl.h"
__global__ void red(float *out, const float *in) {
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += SHFL_DOWN({arg}, v, o);
  out[threadIdx.x] = v;
}
"""


def test_f9_a_warp_mask_a_wrapper_takes_on_the_next_line_or_cast_is_a_lane_mask(
    tmp_path: Path,
) -> None:
    for n, arg in enumerate(
        ("\n      FULL_MASK", "(unsigned)FULL_MASK", "static_cast<unsigned>(FULL_MASK)")
    ):
        files = {"masks.h": _MASKS_H, "shfl.h": _SHFL_H, "kernel.cu": _RED.replace("{arg}", arg)}
        got = _severities(_scan(tmp_path / str(n), files), "GP302", "masks.h")
        assert got == ["major"], (arg, got)
    # a mask the file only keeps as data (no call takes it, no shuffling helper called)
    data = '#include "masks.h"\nvoid fill(unsigned *x, int n) {\n  x[0] = FULL_MASK;\n}\n'
    got = _severities(
        _scan(tmp_path / "d", {"masks.h": _MASKS_H, "fill.cpp": data}), "GP302", "masks.h"
    )
    assert got == ["info"], got


_ROT = """\
#include "util.cuh"
__global__ void rot(float *out, const float *in) {
  int lane = threadIdx.x % 32;
  float v = in[threadIdx.x];
  out[threadIdx.x] = READ_LANE(v, (lane + 1) % 32);
}
"""


def test_f13_a_lane_passed_to_a_shuffling_project_macro_is_a_hardware_lane(
    tmp_path: Path,
) -> None:
    one_line = "#pragma once\n#define READ_LANE(v, l) __shfl_sync(__activemask(), v, l)\n"
    continued = "#pragma once\n#define READ_LANE(v, l) \\\n  __shfl_sync(__activemask(), v, l)\n"
    for n, util in enumerate((one_line, continued)):
        got = _severities(
            _scan(tmp_path / str(n), {"util.cuh": util, "kernel.cu": _ROT}), "GP304", "kernel.cu"
        )
        assert got and all(s == "major" for s in got), (util, got)
    # a macro that reads memory, not a lane: the lane still numbers logical groups
    plain = "#pragma once\n#define READ_LANE(v, l) ((v) + (l))\n"
    got = _severities(
        _scan(tmp_path / "p", {"util.cuh": plain, "kernel.cu": _ROT}), "GP304", "kernel.cu"
    )
    assert got and all(s == "info" for s in got), got
