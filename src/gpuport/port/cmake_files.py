"""The CMake files of a project as ``port``'s CMake fix reads them: once per run, sorted, each
with whether it has a CUDA lookup of its own (twenty-second re-run: read again for every file
with a lookup, 4,000 ``.cmake`` files took past two minutes)."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.port.cmake_project import names_a_hook
from gpuport.port.context import PortContext

__all__ = ["handled_files", "hook_texts", "tensorrt_lookup"]

_Index = tuple[list[str], dict[str, tuple[str, bool]], dict[str, dict[str, str]]]


def _index(ctx: PortContext, own_lookup: Callable[[str], bool], shim: str) -> _Index:
    got = ctx.cache.get("cmake-index")
    if got is None:
        entries: dict[str, tuple[str, bool]] = {}
        for rel in sorted(ctx.files_of("cmake")):
            if rel.endswith(shim) or not rel.endswith(("CMakeLists.txt", ".cmake")):
                continue
            text = ctx.read(rel)
            if text is not None:
                entries[rel] = (text, own_lookup(text))
        got = ctx.cache["cmake-index"] = (sorted(entries), entries, {})
    return got  # type: ignore[return-value]


def _folder(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return "" if parent == "." else parent


def handled_files(
    ctx: PortContext, path: str, folder: str, own_lookup: Callable[[str], bool], shim: str
) -> dict[str, str]:
    """``path`` and the CMake files under ``folder`` without a CUDA lookup of their own
    (``own_lookup``) and not under a folder whose file has one. The files under a folder are
    found by bisection in the sorted index and kept per folder."""
    names, entries, per_folder = _index(ctx, own_lookup, shim)
    prefix = f"{folder}/" if folder else ""
    under = per_folder.get(prefix)
    if under is None:
        lo = bisect.bisect_left(names, prefix) if prefix else 0
        hi = bisect.bisect_left(names, folder + chr(ord("/") + 1)) if prefix else len(names)
        inside = names[lo:hi]
        own = {f"{_folder(r)}/" for r in inside if entries[r][1]} - {prefix, "/"}
        under = {}
        for rel in inside:
            text, has_own = entries[rel]
            parts = rel.split("/")[:-1]
            if has_own or any("/".join(parts[:k]) + "/" in own for k in range(1, len(parts) + 1)):
                continue
            under[rel] = text
        per_folder[prefix] = under
    out = {path: ctx.read(path) or ""}
    out.update((rel, text) for rel, text in under.items() if rel != path)
    return out


def hook_texts(ctx: PortContext) -> list[tuple[str, str]]:
    """(file, text) of the CMake files that name a project-include hook, read once."""
    got = ctx.cache.get("cmake-hooks")
    if got is None:
        got = ctx.cache["cmake-hooks"] = [
            (r, t) for r in ctx.files_of("cmake") if names_a_hook(t := ctx.read(r) or "")
        ]
    return got  # type: ignore[return-value]


#: TensorRT required outside a comment (NVIDIA's inference library has no ROCm build): a
#: REQUIRED lookup, or a FATAL_ERROR message naming it; an optional one (found if present,
#: HOT-Step-CPP's H2) does not stop a configure without it
_TENSORRT = textre.compile(
    r"(?im)^[^#\n]*?\b(find_package[ \t]*\([ \t]*TensorRT\b[^)]*\bREQUIRED|"
    r"find_library[ \t]*\([^)]*\bnv(?:infer|onnxparser)\b[^)]*\bREQUIRED|"
    r"message[ \t]*\([ \t]*FATAL_ERROR[^)]*TensorRT)"
)


def tensorrt_lookup(handled: dict[str, str]) -> tuple[str, str] | None:
    """(file, what) of the first lookup a handled CMake file makes that requires TensorRT (J51:
    a ``find_package(CUDA)`` serving a required TensorRT gets no HIP branch)."""
    for rel, text in handled.items():
        if (m := _TENSORRT.search(text)) is not None:
            return rel, " ".join(m.group(1).split())
    return None
