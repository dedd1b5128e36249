"""CUDA toolkit headers HIP does not ship and the compatibility header does not map.

``gpuport_hip_compat.h`` stands in for the CUDA headers the API map knows a HIP twin of
(``cuda_runtime.h`` -> ``hip/hip_runtime.h``); ``vector_types.h``, ``vector_functions.h``,
``device_launch_parameters.h``, ``driver_types.h`` and the like have none, and ROCm has no file
of that name, so a source or header of the HIP build that includes one outside any
preprocessor conditional stops the opt-in HIP build (fresh13's J46, mcx: ``mcx_utils.h``
includes ``<vector_types.h>``, included by the kernel and by the host C units). ``fix_cmake``
makes such a HIP build an unsafe fix, naming the include. An include inside a conditional
(other than the file's include guard) is left: which side the HIP build takes is not read
here. A project file of the same name (its own ``vector_types.h``) is not the toolkit's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuport import textre
from gpuport.port.context import PortContext

__all__ = ["UNSHIPPED", "unshipped_include"]

#: CUDA toolkit headers with no file of that name in ROCm and no HIP twin in the API map
UNSHIPPED = frozenset(
    {
        "vector_types.h",
        "vector_functions.h",
        "device_launch_parameters.h",
        "driver_types.h",
        "builtin_types.h",
        "host_defines.h",
        "device_functions.h",
        "math_constants.h",
        "texture_fetch_functions.h",
        "sm_20_atomic_functions.h",
        "sm_32_intrinsics.h",
        "sm_60_atomic_functions.h",
    }
)
_DIRECTIVE = textre.compile(
    r"^[ \t]*#[ \t]*(include|if|ifdef|ifndef|elif|else|endif|define)\b[ \t]*([^\n]*)", re.M
)
_TARGET = textre.compile(r"[<\"]([^>\"]+)[>\"]")


def unshipped_include(ctx: PortContext, files: Iterable[str]) -> tuple[str, int, str] | None:
    """(file, line, header) of the first include of an :data:`UNSHIPPED` header outside any
    conditional in ``files``, or None."""
    own = {rel.rsplit("/", 1)[-1] for rel in ctx.files_of("cuda/c++")}
    for rel in files:
        text = ctx.read(rel)
        if text is None or "include" not in text:
            continue
        depth = 0
        guard = ""  # the include guard's name: its #ifndef is not a conditional that counts
        first = True
        line_of = textre.line_finder(text)
        for m in _DIRECTIVE.finditer(text):
            kind, rest = m.group(1), m.group(2).strip()
            if first and kind == "ifndef":
                guard = rest.split()[0] if rest else ""
                first = False
                continue
            if kind == "define" and guard and not rest.startswith(guard):
                guard = ""  # not a guard after all
            first = False
            if kind in ("if", "ifdef", "ifndef"):
                depth += 1
            elif kind == "endif":
                depth = max(0, depth - 1)
            elif kind == "include" and depth == 0:
                target = _TARGET.search(rest)
                name = target.group(1).rsplit("/", 1)[-1] if target else ""
                if name in UNSHIPPED and name not in own:
                    return rel, line_of(m.start()), name
    return None
