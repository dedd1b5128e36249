"""HIP's own NVIDIA-platform headers bundled by a project.

HIP maps its API onto CUDA's when it targets NVIDIA GPUs, in headers under
``hip/nvidia_detail/`` (``nvidia_hip_runtime_api.h``: ``#define __shfl(...)
__shfl_sync(0xffffffff, __VA_ARGS__)``, ``cuModuleLoad`` wrappers). ``hip_runtime.h`` includes
them only under ``__HIP_PLATFORM_NVIDIA__``, so a ROCm build never compiles them: a project
that bundles a copy (Orochi's ``nvidia_hip_runtime_api_oro.h``, issue 24 twenty-third sample)
carries CUDA code by design, not a blocker. Known by HIP's own include guard, read as text.
"""

from __future__ import annotations

import re

from gpuport import textre

__all__ = ["hip_nvidia_headers"]

_GUARD = textre.compile(
    r"^[ \t]*\#[ \t]*ifndef[ \t]+(HIP_INCLUDE_HIP_NVIDIA_DETAIL_\w+)[ \t]*\r?\n"
    r"[ \t]*\#[ \t]*define[ \t]+(HIP_INCLUDE_HIP_NVIDIA_DETAIL_\w+)",
    re.M,
)


def hip_nvidia_headers(texts: dict[str, str]) -> dict[str, str]:
    """Relative path -> why, for every file guarded as one of HIP's NVIDIA-platform headers."""
    out: dict[str, str] = {}
    for rel, text in texts.items():
        if "HIP_INCLUDE_HIP_NVIDIA_DETAIL_" not in text:
            continue
        m = _GUARD.search(text)
        if m is not None and m.group(1) == m.group(2):
            out[rel] = (
                f"a copy of HIP's NVIDIA-platform header (guard {m.group(1)}): HIP includes it "
                "only where it targets NVIDIA GPUs, never in a ROCm build"
            )
    return out
