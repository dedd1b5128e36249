"""Per-machine build configurations: the NVIDIA alternatives of a choice whose AMD one exists.

HPC codes keep one CMake initial-cache file per machine (``cmake -C cmake/summit.cmake ..``):
quokka's ``cmake/`` holds ``summit.cmake`` and ``gadi_gcc_cuda.cmake`` (``AMReX_GPU_BACKEND
CUDA``, ``CMAKE_CUDA_COMPILER nvcc``) beside ``crusher.cmake`` and ``delta_gcc_hip.cmake``
(``AMReX_GPU_BACKEND HIP``, ``gfx90a``). A user picks one; the NVIDIA machines' files are never
part of a ROCm build, so their GP4xx findings describe the CUDA alternative, not a blocker
(issue 24, twenty-second sample: all 14 of quokka's core findings; Smilei's ``gpu_nvidia``
machine switch in the twentieth was the same choice).

A file is such an alternative when it is a ``.cmake`` file no other build file names (an
initial-cache file, read only through ``cmake -C``), holds only ``set``/``option``/``message``
commands, never mentions HIP, ROCm or an AMD GPU, and a sibling of the same kind in its
folder selects HIP: a ``set()`` gives a HIP value (``AMReX_GPU_BACKEND HIP``, ``gfx90a``,
``hipcc``) or turns a HIP setting on (``Kokkos_ENABLE_HIP ON``, ``AMReX_AMD_ARCH gfx908``),
not a word in a ``message()`` nor a HIP setting turned off (fortieth re-run F18: a CPU-only
``cpu.cmake`` whose message said "no CUDA, no HIP" was the sibling that "chose HIP"). Text
only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpuport import textre

__all__ = ["cuda_config_variants"]

#: a HIP/ROCm selection in a configuration file
_HIP = textre.compile(
    r"\bhip\b|\brocm\b|\bamdgpu\b|\bgfx\d{3,4}[a-z]?\b|enable_hip\b|_hip_|amd_arch\b", re.I
)
#: a value that selects HIP, or a setting that does when it is on
_HIP_VALUE = textre.compile(
    r"\bhip\b|\brocm\b|\bamdgpu\b|\bgfx\d{3,4}[a-z]?\b|\bhipcc\b|\bamdclang", re.I
)
#: `set(NAME VALUE`: the first value, quoted or not
_SET = textre.compile(
    r"^[ \t]*set[ \t]*\([ \t]*([\w.+-]+)[ \t]+(\"[^\"]*\"|[^\s\")]+)", re.M | re.I
)
#: a value that turns a setting off
_OFF = textre.compile(r"^(?:off|0|false|no|n|ignore|notfound|.*-notfound|)$", re.I)
#: a command other than set/option/message/comments: the file does more than choose values
_COMMAND = textre.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)
_PLAIN = frozenset({"set", "option", "message", "unset"})
_WORD = textre.compile(r"[\w.+-]+")


def _is_cache(text: str) -> bool:
    """Only set/option/message commands (an initial-cache file, not a module)."""
    return all(m.group(1).lower() in _PLAIN for m in _COMMAND.finditer(_strip(text)))


def _strip(text: str) -> str:
    return textre.sub(r"#[^\n]*", "", text)


def _selects_hip(text: str) -> bool:
    """Whether a ``set()`` of ``text`` selects HIP (see the module docstring)."""
    for m in _SET.finditer(_strip(text)):
        name, value = m.group(1), m.group(2).strip('"').strip()
        if _HIP_VALUE.search(value) or (_HIP.search(name) and not _OFF.match(value)):
            return True
    return False


def cuda_config_variants(build_files: Mapping[str, str]) -> dict[str, str]:
    """``.cmake`` initial-cache files that choose CUDA beside a sibling that chooses HIP ->
    the sibling (see the module docstring)."""
    caches = {
        rel: text
        for rel, text in build_files.items()
        if rel.lower().endswith(".cmake") and _is_cache(text)
    }
    if len(caches) < 2:
        return {}
    named: set[str] = set()
    for rel, text in build_files.items():
        if rel not in caches:
            named |= set(_WORD.findall(_strip(text)))
    by_folder: dict[str, list[str]] = {}
    for rel in caches:
        if rel.rsplit("/", 1)[-1] in named or rel.rsplit("/", 1)[-1][:-6] in named:
            continue  # included by a build file: part of a build, not a -C choice
        by_folder.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else "", []).append(rel)
    out: dict[str, str] = {}
    for members in by_folder.values():
        hip = sorted(rel for rel in members if _selects_hip(caches[rel]))
        if not hip:
            continue
        for rel in members:
            text = _strip(caches[rel])
            if rel not in hip and not _HIP.search(text) and "cuda" in text.lower():
                out[rel] = hip[0]
    return out
