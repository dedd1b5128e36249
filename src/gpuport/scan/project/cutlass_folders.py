"""NVIDIA-only components written on CUTLASS/CuTe (folders of kernels a ROCm build can only
replace or leave out), and which of them the ROCm build already leaves out.

:func:`left_out` is applied again once every fact about what the ROCm route does not compile
is known (HIP twins in a ``rocm/`` folder beside ``cuda/``, headers only such files include):
MegEngine's ``dnn/src/cuda/rng/`` has ``dnn/src/rocm/rng/`` beside it, which the ROCm build
compiles instead, so there is nothing to replace or drop (issue 24, twenty-sixth sample: ten
such 8-hour items were 80 of the 130 hours of its effort).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuport import textre
from gpuport.scan.cxx_ints import nearest
from gpuport.scan.model import ComponentInfo as Component

__all__ = ["cutlass_folders", "host_binding", "left_out"]

_CUTLASS_USE = textre.compile(r"cutlass::|cute::|include[ \t]*[<\"](?:cutlass|cute)/")
_MIN_KERNEL_FILES = 3
_DEVICE_CODE = textre.compile(r"__global__|__device__|<<<|\bthreadIdx\b")


def host_binding(rel: str, text: str) -> bool:
    """A host-only C++ source (the torch binding of an op): no device code of its own."""
    return rel.endswith((".cpp", ".cc", ".cxx")) and _DEVICE_CODE.search(text) is None


def cutlass_folders(
    native: Mapping[str, str], includes: dict[str, frozenset[str]]
) -> list[Component]:
    """Folders whose every CUDA/C++ file builds on CUTLASS/CuTe, directly or through a header
    of the project that does, beside at most host-only bindings (DeepSpeed's Evoformer op:
    its .cu entry points include CUTLASS kernel headers, its attention.cpp only declares
    them to torch): kernels written on an NVIDIA-only library, which a ROCm build can only
    replace or leave out. The topmost such folder with a CUTLASS .cu source and at least
    three files is one NVIDIA-only component. Its files must use CUTLASS through files of the
    folder itself: a project-wide utility header outside it that includes
    ``cutlass/cutlass.h`` for an error-check macro (MegEngine's ``dnn/src/cuda/utils.cuh``)
    does not make a folder of kernels that includes it "built on CUTLASS" (issue 24,
    twenty-sixth sample)."""
    direct = {rel for rel, text in native.items() if "cut" in text and _CUTLASS_USE.search(text)}
    if not direct:
        return []
    uses = set(direct)
    owners: dict[str, list[str]] = {}
    for rel in native:
        owners.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    # a file that includes one that uses CUTLASS uses it too: a worklist from the users to
    # their includers, each include looked at once (passes over every file until none changed
    # took a pass per header of a chain written against the files' order: eighteenth re-run,
    # 800 KB 54.5 s)
    includers: dict[str, list[str]] = {}
    for rel in native:
        for name in includes.get(rel, frozenset()):
            for target in nearest(rel, owners.get(name, [])):
                includers.setdefault(target, []).append(rel)
    _spread(uses, includers, "")
    by_folder: dict[str, list[str]] = {}
    for rel in native:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            by_folder.setdefault("/".join(parts[:i]), []).append(rel)
    found: list[Component] = []
    for folder in sorted(by_folder, key=lambda f: f.count("/")):
        inside = by_folder[folder]
        if any(folder.startswith(c.path + "/") for c in found):
            continue
        if not (
            len(inside) >= _MIN_KERNEL_FILES
            and all(r in uses or host_binding(r, native[r]) for r in inside)
            and any(r.endswith(".cu") and r in uses for r in inside)
        ):
            continue
        local = _spread({r for r in inside if r in direct}, includers, folder + "/")
        if all(r in local or host_binding(r, native[r]) for r in inside) and any(
            r.endswith(".cu") and r in local for r in inside
        ):
            found.append(
                Component(
                    path=folder,
                    packaging="",
                    nvidia_only=True,
                    builds_native=True,
                    evidence=f"all {len(inside)} of its C/C++ files build on CUTLASS/CuTe",
                )
            )
    return found


def _spread(users: set[str], includers: Mapping[str, list[str]], under: str) -> set[str]:
    """``users`` and every file under ``under`` that includes one of them, transitively (a
    worklist: each include looked at once)."""
    todo = list(users)
    while todo:
        for rel in includers.get(todo.pop(), ()):
            if rel not in users and rel.startswith(under):
                users.add(rel)
                todo.append(rel)
    return users


def left_out(
    components: list[Component], native: Mapping[str, str], not_built: Mapping[str, str]
) -> list[Component]:
    """``components`` less the NVIDIA-only ones whose every C/C++ file the ROCm build leaves
    out (or is a host-only binding): a folder the ROCm build already leaves out has nothing
    to replace or drop."""
    out = []
    for c in components:
        inside = [r for r in native if r.startswith(c.path + "/")]
        if (
            c.nvidia_only
            and inside
            and all(r in not_built or host_binding(r, native[r]) for r in inside)
        ):
            continue
        out.append(c)
    return out
