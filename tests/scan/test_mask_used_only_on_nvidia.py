"""Issue 24, thirteenth sample (darknet ``src/dark_cuda.h:19``): a ``#define FULL_MASK
0xffffffff`` whose every ``*_sync`` use sits under ``#if CUDART_VERSION >= 9000`` (false under
hip-clang, whose ``#else`` calls ``__shfl(val, lane)``) breaks nothing on ROCm: no GP302 on the
definition. One live use elsewhere keeps it."""

from __future__ import annotations

from pathlib import Path

from tests.scan.project_files import scan_files

_H = "#pragma once\n#define FULL_MASK 0xffffffff\n"
_GATED = """\
#include "dark.h"
__device__ float shfl(float v, int lane) {
#if CUDART_VERSION >= 9000
  return __shfl_sync(FULL_MASK, v, lane);
#else
  return __shfl(v, lane);
#endif
}
"""
_LIVE = (
    '#include "dark.h"\n__device__ float s2(float v) { return __shfl_xor_sync(FULL_MASK, v, 1); }\n'
)


def _define_hits(tmp_path: Path, files: dict[str, str]) -> list[int]:
    r = scan_files(tmp_path, files)
    return [
        f.location.line for f in r.findings if f.rule_id == "GP302" and f.location.path == "dark.h"
    ]


def test_a_mask_used_only_on_nvidias_side_is_not_reported_where_it_is_defined(
    tmp_path: Path,
) -> None:
    assert _define_hits(tmp_path / "a", {"dark.h": _H, "k.cu": _GATED}) == []
    assert _define_hits(tmp_path / "b", {"dark.h": _H, "k.cu": _GATED, "l.cu": _LIVE}) == [2]
