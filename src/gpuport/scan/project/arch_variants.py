"""Native code for one recent NVIDIA generation beside a variant for an older one.

Libraries that tune kernels per GPU generation keep a folder per generation and pick one at
build or run time from the compute capability: mirage's ``persistent_kernel/tasks/ampere``,
``hopper`` and ``blackwell`` (TMA, ``wgmma``, ``tcgen05``: features only those NVIDIA chips
have; issue 24, twentieth sample). A ROCm build, or a port of one, takes the variant written
for the older generation (plain CUDA, which hipcc compiles) and never the Hopper/Blackwell one.

So where a folder holds a folder named for Hopper or a later generation (``hopper``,
``blackwell``, ``sm90``, ``sm100a``...) and one named for an older generation or no
generation at all that also holds native code (``ampere``, ``sm80``, ``common``, ``generic``),
the files of the recent-generation folder are not built by a ROCm build. Without such a
sibling (a Hopper-only library: its Hopper code is the library) nothing is decided. Text
only, from paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuport import textre

__all__ = ["recent_generation_variants"]

_RECENT = textre.compile(
    r"^(?:hopper|blackwell|rubin|sm_?(?:9\d|1\d\d|2\d\d)[af]?|gb\d{3}|h100|h200|b200)$", re.I
)
_OLDER = textre.compile(
    r"^(?:ampere|ada|turing|volta|sm_?[5-8]\d|common|generic|default|portable|simt)$", re.I
)


def recent_generation_variants(native: Iterable[str]) -> dict[str, str]:
    """Native file -> why a ROCm build does not compile it (see the module docstring)."""
    native = list(native)
    folders: dict[str, set[str]] = {}  # parent -> child folders that hold native files
    for rel in native:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
    older = {
        parent: sorted(c for c in children if _OLDER.match(c))
        for parent, children in folders.items()
        if any(_RECENT.match(c) for c in children)
    }
    out: dict[str, str] = {}
    for rel in native:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            siblings = older.get(parent)
            if siblings and _RECENT.match(parts[depth]):
                where = f"{parent}/{siblings[0]}" if parent else siblings[0]
                out[rel] = (
                    f"{'/'.join(parts[: depth + 1])}/ is a variant for a recent NVIDIA "
                    f"generation beside {where}/: a ROCm build compiles that one"
                )
                break
    return out
