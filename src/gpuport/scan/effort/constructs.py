"""What the native findings say about the work: constructs, counted per file, and kernel
families.

A *construct* is one kind of thing to change (warp-32 assumptions, inline PTX, a library with
a different API ...). It is counted once per file however often it occurs there: a file's
32-lane reductions are fixed together, and twenty `__shfl_xor_sync` in one file are one job.

* *Mapped* constructs: hipify or a one-line shim handles them (cuBLAS, NCCL, Thrust, CUB,
  cuRAND, bf16 type names, CUDA version gates). Counted once per library per component.
* *Fix* constructs: hipify plus a real change (warp size, simple inline PTX, cooperative
  groups, texture references, WMMA, FP8 types, a library whose AMD twin has another API ...).
* *Family* constructs: kernels built on CUTLASS/CuTe, the cuDNN frontend, NVSHMEM, TensorRT
  (GP315), Hopper's async copies/TMA (GP312) or tensor-core PTX (``mma``, ``ldmatrix``,
  ``wgmma``, ``cp.async``). Their files are grouped into *kernel families* by folder; a lone
  file of tensor-core PTX is a fix (a few MFMA builtins), not a family.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from gpuport import textre
from gpuport.scan.finding import Finding

WARP_RULES = frozenset({"GP302", "GP303", "GP304", "GP305", "GP306", "GP307", "GP308"})
#: fix constructs by rule: the name a report shows
FIX_RULES: dict[str, str] = {
    **dict.fromkeys(WARP_RULES, "warp-32 assumptions"),
    "GP301": "inline PTX",
    "GP309": "texture references",
    "GP310": "dynamic parallelism",
    "GP311": "cooperative-groups grid sync",
    "GP313": "managed memory (XNACK)",
    "GP314": "__dp4a / SIMD video intrinsics",
    "GP318": "shared memory beyond the LDS",
    "GP320": "NVIDIA FP8 types",
    "GP321": "WMMA (to rocWMMA)",
    "GP322": "prebuilt NVIDIA binaries",
    "GP323": "PTX/cubin loading",
    "GP212": "Triton inline PTX",
}
#: mapped constructs: hipify renames them or a shim header covers them
MAPPED_RULES = frozenset({"GP317", "GP319"})
_TENSOR_PTX = textre.compile(
    r"\b(?:w?gmma|mma\.sync|mma\.sp|ldmatrix|stmatrix|cp\.async|tcgen05|mbarrier|"
    r"cp\.reduce\.async|setmaxnreg|elect\.sync)\b"
)
_LIBRARY = textre.compile(r"this file uses ([\w+ .:-]+?) \(")
#: folder names that hold sources rather than name a kernel family: the family is the
#: folder below the first of them (``csrc/flash_attn``, ``transformer_engine/common/gemm``)
CONTAINERS = frozenset(
    {"csrc", "src", "kernels", "kernel", "cuda", "ops", "lib", "native", "ext", "extensions"}
    | {"include", "cpp", "cu", "common", "gpu", "device"}
)
_DIFFERENT_API = "(different API)"


@dataclass
class NativeWork:
    """The constructs of one native component (a folder with packaging of its own, or the
    project): fix constructs by name with their files, mapped libraries."""

    component: str
    fixes: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    mapped: set[str] = field(default_factory=set)
    findings: int = 0

    @property
    def fix_files(self) -> int:
        """Distinct (construct, file) pairs: the count the range is made from."""
        return sum(len(files) for files in self.fixes.values())


@dataclass
class FamilyWork:
    """One kernel family: a folder of kernels built on a family construct."""

    folder: str
    files: set[str] = field(default_factory=set)
    libraries: set[str] = field(default_factory=set)
    constructs: set[str] = field(default_factory=set)
    findings: int = 0


@dataclass
class Constructs:
    native: dict[str, NativeWork] = field(default_factory=dict)
    families: dict[str, FamilyWork] = field(default_factory=dict)


def family_folder(path: str) -> str:
    """The folder that names a kernel family: the folder below the last source container
    that has one (``csrc/flash_attn/src/x.cu`` -> ``csrc/flash_attn``,
    ``src/ft/kernels/decoder_attn/x.cu`` -> ``src/ft/kernels/decoder_attn``); a file right in
    a container belongs to that container; else the top two folders."""
    parts = path.split("/")[:-1]
    below = [i for i, seg in enumerate(parts) if seg.lower() in CONTAINERS and i + 1 < len(parts)]
    if below:
        return "/".join(parts[: below[-1] + 2])
    if parts and parts[-1].lower() in CONTAINERS:
        return "/".join(parts)
    return "/".join(parts[:2])


def _family_construct(f: Finding) -> tuple[str, str] | None:
    """(construct, library) when ``f`` marks a file as part of a kernel family."""
    if f.rule_id == "GP315":
        m = _LIBRARY.search(f.message)
        lib = m.group(1) if m else "an NVIDIA-only library"
        lib = "CUTLASS" if lib == "CuTe" else lib
        return f"{lib} kernels", lib
    if f.rule_id == "GP312":
        return "Hopper async copies / TMA", ""
    if f.rule_id == "GP301" and _TENSOR_PTX.search(f.message):
        return "tensor-core PTX", ""
    return None


def collect(
    findings: Iterable[Finding], component_of: Callable[[str], str] | None = None
) -> Constructs:
    """The constructs of the native findings (GP3xx and GP212) above info."""
    out = Constructs()
    candidates: dict[str, list[tuple[Finding, str, str]]] = defaultdict(list)
    for f in findings:
        rid = f.rule_id
        if not (rid.startswith("GP3") or rid == "GP212"):
            continue
        fam = _family_construct(f)
        if fam is not None:
            candidates[f.location.path].append((f, *fam))
            continue
        _add_native(out, f, component_of)
    # a file joins a family through a library family or Hopper features; tensor-core PTX
    # needs company: two files of it in one family folder, or a library family there
    by_folder: dict[str, list[str]] = defaultdict(list)
    for path in candidates:
        by_folder[family_folder(path)].append(path)
    for folder, paths in by_folder.items():
        strong = [p for p in paths if any(c != "tensor-core PTX" for _, c, _ in candidates[p])]
        if not strong and len(paths) < 2:
            for f, _, _ in candidates[paths[0]]:
                _add_native(out, f, component_of)
            continue
        work = out.families.setdefault(folder, FamilyWork(folder))
        for p in paths:
            work.files.add(p)
            for _f, construct, lib in candidates[p]:
                work.constructs.add(construct)
                if lib:
                    work.libraries.add(lib)
                work.findings += 1
    _fold_nested(out)
    _drop_family_files(out)
    return out


def _drop_family_files(out: Constructs) -> None:
    """A file in a kernel family is rewritten or integrated with it: its other constructs
    (warp size, simple PTX) are part of that work, not fixes of their own."""
    in_family = {p for fam in out.families.values() for p in fam.files}
    for work in out.native.values():
        for name in list(work.fixes):
            work.fixes[name] -= in_family
            if not work.fixes[name]:
                del work.fixes[name]
    for comp in [c for c, w in out.native.items() if not w.fixes and not w.mapped]:
        del out.native[comp]


def _add_native(out: Constructs, f: Finding, component_of: Callable[[str], str] | None) -> None:
    comp = component_of(f.location.path) if component_of else ""
    work = out.native.setdefault(comp, NativeWork(comp))
    work.findings += 1
    if f.rule_id == "GP316":
        m = _LIBRARY.search(f.message)
        lib = m.group(1) if m else f.message
        if _DIFFERENT_API in f.message:
            work.fixes[f"{lib} (different API on ROCm)"].add(f.location.path)
        else:
            work.mapped.add(lib)
    elif f.rule_id in MAPPED_RULES:
        work.mapped.add({"GP317": "CUDA version gates", "GP319": "bf16/half type names"}[f.rule_id])
    elif f.rule_id in FIX_RULES:
        name = FIX_RULES[f.rule_id]
        if f.rule_id == "GP301" and _TENSOR_PTX.search(f.message):
            name = "tensor-core PTX (MFMA builtins)"
        work.fixes[name].add(f.location.path)
    else:  # a native rule the model has no class for: a fix of its own
        work.fixes[f.rule_id].add(f.location.path)


def _fold_nested(out: Constructs) -> None:
    """A family folder inside another family's folder is part of it
    (``hopper/instantiations`` in ``hopper``), unless that folder is a source container
    (``transformer_engine/common`` holds many families)."""
    for folder in sorted(out.families, key=len, reverse=True):
        parent = next(
            (
                p
                for p in out.families
                if p != folder
                and folder.startswith(p + "/")
                and p.rsplit("/", 1)[-1].lower() not in CONTAINERS
            ),
            None,
        )
        if parent is None:
            continue
        child = out.families.pop(folder)
        host = out.families[parent]
        host.files |= child.files
        host.libraries |= child.libraries
        host.constructs |= child.constructs
        host.findings += child.findings


def describe_fixes(work: NativeWork, limit: int = 4) -> list[str]:
    """``warp-32 assumptions in 3 files`` per fix construct, most files first."""
    rows = sorted(work.fixes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    out = [f"{name} in {len(files)} file{'s' if len(files) != 1 else ''}" for name, files in rows]
    if len(out) > limit:
        out = [*out[:limit], f"{len(out) - limit} more kinds"]
    return out


def paths_of(families: Sequence[FamilyWork]) -> list[str]:
    return sorted(p for fam in families for p in fam.files)
