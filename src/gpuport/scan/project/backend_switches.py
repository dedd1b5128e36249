"""The CUDA side of a project's own backend switches: off in its ROCm build.

A project with a HIP backend of its own selects it with a switch of its own beside the CUDA
one: ``RAJA_CUDA_ACTIVE`` / ``RAJA_HIP_ACTIVE``, ``MFEM_USE_CUDA`` / ``MFEM_USE_HIP``,
``KOKKOS_ENABLE_CUDA`` / ``KOKKOS_ENABLE_HIP``, ``USE_CUDA`` / ``USE_ROCM``. Its ROCm build
turns the HIP/ROCm switch on and the CUDA one off, so code under ``#ifdef RAJA_CUDA_ACTIVE``
(and a header included only there) is not compiled by that route (issue 24, sixth round).

A name counts when it has ``CUDA`` as one part between underscores, a switch word
(``USE``, ``ENABLE``, ``HAVE``, ``WITH``, ``BUILD``, ``BACKEND``, ``ACTIVE`` ...) as another
and no negation (``NO``, ``NOT``, ``DISABLE`` ...), and the project itself names the same
switch with ``HIP`` or ``ROCM`` in place of ``CUDA`` (a preprocessor test, a ``#define``, a
``#cmakedefine`` or a build definition). It does not count where the ROCm side turns the CUDA
switch on too: a build file that defines it near a HIP/ROCm test or in a HIP/ROCm folder
(ggml's ``ggml-hip/CMakeLists.txt`` defines ``GGML_USE_CUDA``: the HIP build compiles the CUDA
sources), or a test that wants both at once (``defined(USE_CUDA) && defined(USE_ROCM)``).
A plain ``#define`` of it outside a CUDA branch keeps it too (:mod:`cxx_facts` checks).

Text only: nothing is compiled or run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from gpuport import textre

__all__ = [
    "build_defined",
    "counterparts",
    "cuda_switches",
    "nvidia_library_switches",
    "rocm_side_defines",
    "switch_strings",
]

_DIRECTIVE = textre.compile(
    r"^[ \t]*\#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|define|cmakedefine01|cmakedefine)"
    r"\b([^\n]*)",
    re.M,
)
_NAME = textre.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_SWITCH_PARTS = frozenset(
    {"USE", "USES", "ENABLE", "ENABLED", "HAVE", "HAS", "WITH", "BUILD", "BACKEND", "ACTIVE",
     "SUPPORT", "SUPPORTED", "COMPILE", "TARGET", "DEVICE", "GPU", "PLATFORM", "ARCH"}
)  # fmt: skip
_NEGATION = frozenset({"NO", "NOT", "DISABLE", "DISABLED", "WITHOUT", "SKIP", "NONE"})
_ROCM_NEAR = textre.compile(r"rocm|hip(?![a-z])", re.I)
_DEFINES = textre.compile(
    r"(?:-D\s*|\bdefine_macros\b|compile_definitions\s*\(|add_definitions\s*\()", re.I
)
_NEAR_LINES = 15
_BARE_DEFINE = textre.compile(r"^[ \t]+(\w+)[ \t]*(?:[01][ \t]*)?(?://.*|/\*.*)?$")
_COMPARISON = textre.compile(r"[\w.]+\s*(?:==|!=|<=|>=|<|>)\s*[\w.]+")
#: the last part of an include guard (``GKO_CUDA_BASE_DEVICE_HPP_``)
_GUARD_PARTS = frozenset({"H", "HPP", "HH", "HXX", "CUH", "INL", "INCLUDED", "GUARD"})


def counterparts(name: str) -> list[str]:
    """The HIP/ROCm spellings of a CUDA switch name, or [] when ``name`` is not one."""
    parts = name.split("_")
    upper = [p.upper() for p in parts]
    at = [i for i, p in enumerate(upper) if p == "CUDA"]
    if len(at) != 1 or _NEGATION & set(upper) or not (_SWITCH_PARTS & set(upper)):
        return []
    if _GUARD_PARTS & {p for p in upper if p}:
        return []
    i = at[0]
    written = parts[i]
    if written.isupper():
        subs = ["HIP", "ROCM", "AMDGPU"]
    elif written.islower():
        subs = ["hip", "rocm", "amdgpu"]
    else:
        subs = ["Hip", "Rocm", "HIP", "ROCm", "AMDGPU"]
    return ["_".join([*parts[:i], s, *parts[i + 1 :]]) for s in subs]


def _rocm_side_defines(build_files: Mapping[str, str]) -> dict[str, str]:
    """Every name a build file defines on the ROCm side (in a HIP/ROCm folder, or within a
    few lines of a HIP/ROCm word) -> the first ``file:line``. One pass over the build files:
    reading them again for each CUDA switch was quadratic (red-team re-run 11: 800 KB of
    paired switch definitions, 46 s)."""
    found: dict[str, str] = {}
    for rel, text in build_files.items():
        rocm_file = _ROCM_NEAR.search(rel) is not None
        lines = text.splitlines()
        for k, line in enumerate(lines):
            if not _DEFINES.search(line):
                continue
            new = [n for n in _NAME.findall(line.replace("-D", " ")) if n not in found]
            if not new:
                continue
            near = rocm_file or _ROCM_NEAR.search("\n".join(lines[max(0, k - _NEAR_LINES) : k + 1]))
            if near:
                for n in new:
                    found[n] = f"{rel}:{k + 1}"
    return found


def cuda_switches(native: Mapping[str, str], build_files: Mapping[str, str]) -> dict[str, str]:
    """The project's CUDA backend switches that its ROCm build leaves off -> the evidence
    (the HIP/ROCm switch beside it and where the project names that)."""
    names: dict[str, str] = {}  # every name in a directive -> first "file:line"
    together: list[str] = []  # directive expressions that name a CUDA switch with &&
    for rel, text in native.items():
        if "#" not in text:
            continue
        for m in _DIRECTIVE.finditer(text):
            expr = m.group(1)
            if m.group(0).lstrip().lstrip("#").lstrip().startswith("define"):
                # a switch is defined bare or as 0/1, not as a value or a function
                got = _BARE_DEFINE.match(expr)
                found = [got.group(1)] if got else []
            else:
                # names compared with a value are enum-like constants, not switches
                # (THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA)
                found = _NAME.findall(_COMPARISON.sub(" ", expr))
            if not found:
                continue
            line = 0
            for n in found:
                if n not in names:
                    line = line or textre.line_finder(text)(m.start())
                    names[n] = f"{rel}:{line}"
            if "&&" in expr and "CUDA" in expr.upper():
                together.append(expr)
    for rel, text in build_files.items():
        if "CUDA" not in text.upper():
            continue
        line_of = textre.line_finder(text)  # one line index per file
        for start, rest in _define_rests(text):
            for n in _NAME.findall(rest):
                if n not in names:
                    names[n] = f"{rel}:{line_of(start)}"
    rocm_side = _rocm_side_defines(build_files)
    # the words of each `&&` directive, found from each of its words (every name against
    # every such directive was quadratic: 800 KB of them, 4.6 s and rising)
    paired: dict[str, list[frozenset[str]]] = {}
    for expr in together:
        for words in _wanted_together(expr):
            for w in words:
                paired.setdefault(w, []).append(words)
    out: dict[str, str] = {}
    for name in sorted(names):
        if "CUDA" not in name.upper():
            continue
        rocm = next((c for c in counterparts(name) if c in names), None)
        if rocm is None:
            continue
        if any(rocm in words for words in paired.get(name, ())):
            continue
        if name in rocm_side:  # defined on the ROCm side too: not a CUDA-only switch
            continue
        out[name] = (
            f"{name} is the CUDA side of the project's backend switch; its ROCm build sets "
            f"{rocm} ({names[rocm]})"
        )
    return out


_NEGATED = textre.compile(r"!\s*(?:defined\s*\(\s*\w+\s*\)|defined\s+\w+|\w+)")


def _wanted_together(expr: str) -> list[frozenset[str]]:
    """The names each ``||`` alternative of a test wants at once: ``defined(X_CUDA) &&
    defined(X_HIP)`` wants both, ``!defined(X_CUDA) && !defined(X_HIP)`` (neither backend, a
    host-only branch) wants none of them, so it pairs nothing (issue 24, ninth round)."""
    alts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and expr.startswith("||", i):
            alts.append(expr[start:i])
            start = i + 2
    alts.append(expr[start:])
    return [frozenset(_NAME.findall(_NEGATED.sub(" ", alt))) for alt in alts]


def rocm_side_defines(build_files: Mapping[str, str]) -> frozenset[str]:
    """The macros a build file defines on the ROCm side (see :func:`_rocm_side_defines`)."""
    return frozenset(_rocm_side_defines(build_files))


def build_defined(build_files: Mapping[str, str]) -> frozenset[str]:
    """Every macro a build file defines (``-DX``, ``add_compile_definitions(X)``...), in
    whatever branch: a macro the build may define is not one only a CUDA branch defines."""
    out: set[str] = set()
    for text in build_files.values():
        for _, rest in _define_rests(text):
            out.update(_NAME.findall(rest))
    return frozenset(out)


def _define_rests(text: str) -> Iterator[tuple[int, str]]:
    """For each line of ``text`` with a define (``-D``, ``add_compile_definitions(``...):
    where its first define starts, and the rest of the line after it (``-D`` made a space).
    A later define on the same line names nothing the first one's rest does not: the line is
    read once, not once per define (a line of thousands of ``-D`` flags was quadratic:
    50 KB 28 s; fourteenth re-run, F8)."""
    done = -1  # the end of the last line read
    for m in _DEFINES.finditer(text):
        if m.start() < done:
            continue
        end = text.find("\n", m.end())
        done = end if end != -1 else len(text)
        yield m.start(), text[m.end() : done].replace("-D", " ")


def switch_strings(strings: set[str]) -> frozenset[str]:
    """Of a file's string constants, the CUDA switches whose HIP/ROCm twin is among them too
    (``"CPUINFER_USE_CUDA"`` beside ``"CPUINFER_USE_ROCM"``): environment settings or
    options the ROCm route leaves off."""
    return frozenset(
        s for s in strings if "CUDA" in s.upper() and any(c in strings for c in counterparts(s))
    )


#: Word parts that name an NVIDIA-only library: a ROCm build cannot enable code that needs one
#: (NCCL is left out: RCCL provides it under the same name).
_NV_LIBRARY_PARTS = frozenset(
    {"NVSHMEM", "CUTLASS", "CUDNN", "TENSORRT", "CUBLASLT", "CUSPARSELT", "NVJPEG", "CUFILE"}
)
_TESTED = textre.compile(r"^[ \t]*\#[ \t]*(?:if|ifdef|elif)\b([^\n]*)", re.M)


def nvidia_library_switches(
    native: Mapping[str, str], build_files: Mapping[str, str]
) -> dict[str, str]:
    """Macros the project tests that are named for an NVIDIA-only library (``NVSHMEM_COMMS``,
    ``MYLIB_USE_CUTLASS``, ``HAVE_CUDNN``; no negation) -> the evidence: a ROCm build has no
    such library, so they are off there unless a build file defines them on the ROCm side
    (:mod:`cxx_facts` keeps one a live ``#define`` gives)."""
    found: dict[str, str] = {}
    for rel, text in native.items():
        if "#" not in text:
            continue
        for m in _TESTED.finditer(text):
            for name in _NAME.findall(m.group(1)):
                if name in found or name == "defined":
                    continue
                parts = set(name.upper().split("_"))
                if _NV_LIBRARY_PARTS & parts and not _NEGATION & parts:
                    line = textre.line_finder(text)(m.start())
                    found[name] = f"{name} names an NVIDIA-only library ({rel}:{line})"
    if not found:
        return {}
    rocm_side = _rocm_side_defines(build_files)
    return {n: ev for n, ev in found.items() if n not in rocm_side}
