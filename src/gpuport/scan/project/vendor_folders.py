"""Python packages per accelerator vendor, beside an AMD/ROCm one: the ROCm run loads only that.

A library that runs on many vendors' chips keeps one package per vendor under a common folder
and imports the one its start-up detects: FlagGems' ``runtime/backend/_nvidia``, ``_amd``,
``_kunlunxin``, ``_ascend``, ``_cambricon``..., loaded by ``importlib.import_module(
f"_{vendor_name}.ops")`` once ``rocm-smi`` (or ``nvidia-smi``...) answered (issue 24,
nineteenth sample). Where such a folder holds a package named for AMD/ROCm (``amd``, ``_amd``,
``rocm``, ``hip``) and one named for NVIDIA (``nvidia``, ``cuda``), the NVIDIA package is the
NVIDIA side of the split and every other sibling named the same way (a vendor word, or the
leading ``_`` the AMD one has) is another vendor's backend: a ROCm run loads neither.

The AMD package is then evidence of a ROCm route in its own right (:func:`amd_packages`): the
project picks it on AMD GPUs by itself. Both vendor packages must exist; shared code of the
folder (``backend_utils.py``, a ``common/`` package with no vendor name) stays read as the
ROCm run's. Python files only: native backends per vendor are :mod:`.backend_siblings`'s.
Each folder is listed once a scan.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["amd_packages", "vendor_package_of"]

_AMD = frozenset({"amd", "rocm", "hip"})
_NVIDIA = frozenset({"nvidia", "cuda", "nv"})
#: accelerator vendors and device kinds that name a backend package (not AMD's)
_OTHER = frozenset(
    {
        "kunlunxin", "ascend", "cambricon", "mthreads", "iluvatar", "metax", "hygon", "aipu",
        "arm", "xpu", "npu", "mlu", "musa", "hpu", "habana", "gaudi", "intel", "tpu", "mps",
        "sycl", "neuron", "enflame", "biren", "moore_threads", "sunrise", "tsingmicro",
    }
)  # fmt: skip


def _vendor(name: str) -> str:
    return name.lstrip("_").lower()


def vendor_package_of(root: Path, path: str, seen: dict[str, tuple[str, str] | None]) -> str | None:
    """Why ``path`` (a ``.py`` file) is not loaded by a ROCm run, when it lies in a vendor
    package beside an AMD/ROCm one (see the module docstring); else None. ``seen`` caches
    each folder's AMD package and its naming (a leading ``_`` or not)."""
    if not path.endswith(".py"):
        return None
    parts = path.split("/")
    for depth in range(len(parts) - 2, -1, -1):
        name = parts[depth]
        vendor = _vendor(name)
        if vendor in _AMD:
            return None  # inside the AMD package itself
        parent = "/".join(parts[:depth])
        if parent not in seen:
            seen[parent] = _amd_package(root, parent)
        found = seen[parent]
        if found is None:
            continue
        amd, prefix = found
        where = f"{parent}/{amd}" if parent else amd
        if vendor in _NVIDIA:
            return f"the NVIDIA side of a vendor split: {where}/ is the AMD/ROCm one"
        if vendor in _OTHER or (prefix and name.startswith(prefix) and len(name) > 1):
            return f"another vendor's backend package, beside the AMD/ROCm one ({where}/)"
    return None


def _amd_package(root: Path, folder: str) -> tuple[str, str] | None:
    """The AMD/ROCm package of ``folder`` and its name's prefix (``_`` or none), when an
    NVIDIA package sits beside it."""
    try:
        names = [p.name for p in (root / folder).iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return None
    amd = sorted(n for n in names if _vendor(n) in _AMD)
    if not amd or not any(_vendor(n) in _NVIDIA for n in names):
        return None
    return amd[0], "_" if amd[0].startswith("_") else ""


def amd_packages(root: Path, python_files: list[str]) -> list[str]:
    """The AMD/ROCm vendor packages (folders) that hold some of ``python_files`` and have an
    NVIDIA package beside them, in path order."""
    seen: dict[str, tuple[str, str] | None] = {}
    found: set[str] = set()
    for path in python_files:
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            if _vendor(parts[depth]) not in _AMD:
                continue
            parent = "/".join(parts[:depth])
            if parent not in seen:
                seen[parent] = _amd_package(root, parent)
            if seen[parent] is not None and seen[parent][0] == parts[depth]:  # type: ignore[index]
                found.add("/".join(parts[: depth + 1]))
    return sorted(found)
