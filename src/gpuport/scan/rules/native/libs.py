"""GP315 and GP316: which NVIDIA libraries a CUDA/C++ file really uses.

The rules are registered in :mod:`.api`; :mod:`.checker` runs
:func:`check_libraries` after every other pass, and :func:`cutlass_match` first,
to fold the per-line PTX and warp findings of CUTLASS/CuTe files into GP315.

A library is reported once per file, at its first piece of evidence outside a
ROCm branch when there is one. GP315 (no ROCm build) takes any mention of the
library. GP316 (a ROCm twin exists) needs evidence of the real library, because
projects name their own code after the libraries they wrap
(``cudnnDepthwiseKernel()``, ``struct cublasCommonArgs``, ``ncclId``):

* an ``#include`` of one of its headers (``<cublas_v2.h>``, ``<cub/...>``);
* one of its types (``cublasHandle_t``, ``ncclComm_t``, ``cufftHandle``, ...),
  unless this file declares that name itself (``typedef void* ncclComm_t;``);
* a call of one of its functions (``cublasSgemm(``, ``ncclAllReduce(``), that is
  a ``cublas...(`` not written as a declaration (``Type cudnnFoo(``), not a
  member or qualified call (``x.ncclFoo(``, ``ns::cudnnFoo(``), not a name
  ending in ``_`` (a data member) and not a name this file declares;
* for the C++ libraries, their namespace (``cub::``, ``thrust::``), unless
  qualified by another namespace (``at::cuda::cub::``).

Files that include a ROCm library outside a ROCm branch (``<hipblaslt/...>``,
``<miopen/...>``, ``<rccl.h>``, ``<hipcub/...>``), files that include
``<hip/...>`` and no CUDA header, and files under a ``hip``/``rocm``/``miopen``
folder are ROCm code: GP316 says nothing there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.rules.native.common import Sink, first_unlowered, iter_words

# -- GP315 -----------------------------------------------------------------------------------

_NO_TWIN: tuple[tuple[str, str, str], ...] = (
    ("CUTLASS", r"cutlass::|<cutlass/", "Composable Kernel (CK) or hipBLASLt"),
    ("CuTe", r"cute::|<cute/", "CK-Tile / Composable Kernel"),
    ("the cuDNN frontend", r"cudnn_frontend\b|<cudnn_frontend", "MIOpen (different API)"),
    # a call, a type or the header: a project variable named nvshmem_pages_ is not the API
    # (the call last: the keyword prefilter reads alternatives up to the first parenthesis)
    ("NVSHMEM", r"<nvshmem|nvshmemx?_\w+_t\b|nvshmemx?_[a-z]\w*\s*\(", "rocSHMEM (partial API)"),
    ("libcu++ cuda::ptx", r"cuda::ptx::|<cuda/ptx>", "HIP intrinsics (no equivalent)"),
    ("TensorRT", r"<NvInfer\w*\.h>|nvinfer1::", "MIGraphX (different API)"),
    ("OptiX", r"<optix\w*\.h>|optix[A-Z]\w*\s*\(", "HIP RT (different API)"),
)
_CUTE_FAMILY = ("CUTLASS", "CuTe")
#: What a CUTLASS/CuTe file's GP315 stands for: PTX and warp findings there are noise.
FOLDED_BY_CUTLASS = frozenset({"GP301", "GP302", "GP303", "GP304"})


def _keywords(pattern: str) -> tuple[str, ...]:
    """The literal words a library pattern starts with: a cheap substring prefilter."""
    alternatives, depth, start = [], 0, 0
    for i, ch in enumerate(pattern):
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            alternatives.append(pattern[start:i])
            start = i + 1
    alternatives.append(pattern[start:])
    return tuple(
        {
            textre.match(r"<?(\w+)", alt).group(1)  # type: ignore[union-attr]
            for alt in alternatives
        }
    )


_NO_TWIN_RE = tuple((name, _keywords(p), textre.compile(p), alt) for name, p, alt in _NO_TWIN)


def _shown(sink: Sink, m: re.Match[str]) -> str:
    """How a library match reads in a message: the whole header for an include."""
    if m.group().startswith("<"):
        end = sink.code.find(">", m.start())
        if end != -1 and "\n" not in sink.code[m.start() : end]:
            return sink.code[m.start() : end + 1]
    return m.group()


def _no_twin_matches(sink: Sink) -> list[tuple[str, re.Match[str], str]]:
    found = []
    for name, keys, pattern, alt in _NO_TWIN_RE:
        if any(k in sink.code for k in keys):
            m = first_unlowered(sink, pattern)
            if m is not None:
                found.append((name, m, alt))
    return found


def cutlass_match(sink: Sink) -> re.Match[str] | None:
    """The CUTLASS/CuTe use GP315 reports in this file, when it is outside any ROCm or
    NVIDIA-only branch and GP315 is enabled; its per-line PTX/warp findings fold into it."""
    if not sink.wants("GP315") or ("cutlass" not in sink.code and "cute" not in sink.code):
        return None
    for name, m, _ in _no_twin_matches(sink):
        if name in _CUTE_FAMILY and not sink.lowered_at(m.start()):
            return m
    return None


def _check_no_twin(sink: Sink) -> None:
    folded_into: str | None = None
    for name, m, alt in _no_twin_matches(sink):
        message = (
            f"this file uses {name} (`{_shown(sink, m)}`), "
            f"which has no ROCm build; the AMD route is {alt}"
        )
        if folded_into is None and name in _CUTE_FAMILY and sink.folded:
            folded_into = name
            n = sink.folded
            message += (
                f"; {n} more PTX/warp finding{'s' if n != 1 else ''} in this file "
                f"{'are' if n != 1 else 'is'} folded into this one"
            )
        sink.hit("GP315", m.start(), message)


# -- GP316 -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Twin:
    name: str
    key: str  # a substring every piece of evidence contains (a cheap prefilter)
    header: re.Pattern[str]  # fullmatch on the name an #include gives
    ident: re.Pattern[str] | None  # the library's identifiers (types and functions)
    types: re.Pattern[str] | None  # fullmatch on an identifier: one of its types
    namespace: re.Pattern[str] | None  # its C++ namespace (cub::, thrust::)
    alt: str
    severity: Severity


def _twin(
    name: str,
    key: str,
    header: str,
    alt: str,
    *,
    ident: str | None = None,
    types: str = r"\w+_t",
    namespace: str | None = None,
    severity: Severity = Severity.MINOR,
) -> _Twin:
    return _Twin(
        name,
        key,
        textre.compile(header),
        textre.compile(ident) if ident else None,
        textre.compile(types) if ident else None,
        textre.compile(namespace) if namespace else None,
        alt,
        severity,
    )


_TWINS: tuple[_Twin, ...] = (
    _twin("cuBLASLt", "cublasLt", r"cublasLt\.h", "hipBLASLt", ident=r"cublasLt[A-Z]\w*"),
    _twin(
        "cuBLAS",
        "cublas",
        r"cublas(?:_v2|_api|Xt)?\.h",
        "hipBLAS (or rocBLAS)",
        ident=r"cublas(?!Lt[A-Z])[A-Z]\w*",
    ),
    _twin("cuSPARSELt", "cusparseLt", r"cusparseLt\.h", "hipSPARSELt", ident=r"cusparseLt\w+"),
    _twin(
        "cuSPARSE", "cusparse", r"cusparse\.h", "hipSPARSE", ident=r"cusparse(?!Lt[A-Z])[A-Z]\w*"
    ),
    _twin(
        "cuFFT",
        "cufft",
        r"cufft\w*\.h",
        "hipFFT",
        ident=r"cufft[A-Z]\w*",
        types=r"\w+_t|cufft(?:Handle|Result|Type|(?:Double)?(?:Complex|Real))",
    ),
    _twin(
        "cuRAND",
        "curand",
        r"curand\w*\.h",
        "hipRAND / rocRAND",
        ident=r"curand(?:[A-Z]\w*|_[a-z]\w*)",
        types=r"\w+_t|curandState\w*",
    ),
    _twin("cuSOLVER", "cusolver", r"cusolver\w*\.h", "hipSOLVER", ident=r"cusolver[A-Z]\w*"),
    _twin(
        "cuTENSOR",
        "cutensor",
        r"cutensor(?:Mg)?\.h|cutensor/.+",
        "hipTENSOR",
        ident=r"cutensor[A-Z]\w*",
    ),
    _twin(
        "NCCL",
        "nccl",
        r"nccl(?:_net)?\.h",
        "RCCL (same nccl* API)",
        ident=r"nccl[A-Z]\w*",
        types=r"\w+_t|ncclUniqueId",
    ),
    _twin("CUB", "cub", r"cub/.+", "hipCUB (hipcub:: namespace)", namespace=r"cub::"),
    _twin("Thrust", "thrust", r"thrust/.+", "rocThrust (same thrust:: API)", namespace=r"thrust::"),
    _twin(
        "NVTX",
        "nvtx",
        r"nvToolsExt\w*\.h|nvtx3/.+",
        "roctx",
        ident=r"nvtx[A-Z]\w*",
        namespace=r"nvtx3::",
    ),
    _twin(
        "NVRTC",
        "nvrtc",
        r"nvrtc\.h",
        "hipRTC",
        ident=r"nvrtc[A-Z]\w*",
        types=r"\w+_t|nvrtc(?:Program|Result)",
    ),
    _twin("NVML", "nvml", r"nvml\.h", "AMD SMI (amdsmi, different API)", ident=r"nvml[A-Z]\w*"),
    _twin("nvJPEG", "nvjpeg", r"nvjpeg\.h", "rocJPEG", ident=r"nvjpeg[A-Z]\w*"),
    _twin(
        "libcu++", "cuda", r"cuda/std/.+", "libhipcxx (keeps cuda::std)", namespace=r"cuda::std::"
    ),
    _twin(
        "cuDNN",
        "cudnn",
        r"cudnn(?!_frontend)\w*\.h",
        "MIOpen (different API)",
        ident=r"cudnn(?!_frontend)[A-Z]\w*",
        severity=Severity.MAJOR,
    ),
)

_INCLUDE = textre.compile(r"\#[ \t]*include(?:_next)?[ \t]*[<\"](?P<name>[^>\"\n]+)[>\"]")
_ROCM_LIBRARY = textre.compile(
    r"(?:^|/)(?:hipblas\w*|rocblas|miopen|rccl|hipcub|rocprim|rocthrust|hipfft\w*|rocfft|"
    r"hiprand|rocrand|hipsparse\w*|rocsparse|hipsolver\w*|rocsolver|hiptensor|roctx\w*|"
    r"roctracer|hiprtc|rocjpeg|amd_smi|rocm_smi)(?:[/.]|$)",
    re.I,
)
_CUDA_HEADER = textre.compile(r"cuda\w*\.h|cuda/.+|crt/.+")
_ROCM_DIRS = frozenset({"hip", "rocm", "miopen"})
_DECLARED = textre.compile(
    r"\b(?:struct|class|union|enum|namespace)\s+(?:class\s+|struct\s+)?(?P<tag>[A-Za-z_]\w*)"
    r"|\btypedef\b[^;{}]*?(?:\(\s*\*\s*(?P<fn>\w+)\s*\)|(?P<td>[A-Za-z_]\w*)\s*;)"
    r"|\}\s*(?P<after>[A-Za-z_]\w*)\s*;"
    r"|\busing\s+(?P<alias>[A-Za-z_]\w*)\s*="
    r"|\#[ \t]*define[ \t]+(?P<macro>\w+)"
)
_PAREN = textre.compile(r"[ \t]*\(")
#: Words after which ``name(`` is an expression (a call), not a declaration.
_EXPR_WORDS = frozenset(
    {
        "return",
        "case",
        "else",
        "do",
        "throw",
        "co_return",
        "co_await",
        "co_yield",
        "new",
        "delete",
        "sizeof",
        "not",
        "and",
        "or",
    }
)


def _includes(sink: Sink) -> list[tuple[re.Match[str], bool]]:
    """Every #include outside ``#if 0``, with whether it sits in a lowered branch."""
    out = []
    for m in _INCLUDE.finditer(sink.code):
        if not sink.src.dead_at(m.start()):
            out.append((m, sink.lowered_at(m.start())))
    return out


def _rocm_file(sink: Sink, includes: list[tuple[re.Match[str], bool]]) -> bool:
    """Whether the file is ROCm code: under a hip/rocm/miopen folder, including a ROCm
    library outside a ROCm branch, or including <hip/...> and no CUDA header."""
    if _ROCM_DIRS & set(sink.ctx.rel.lower().split("/")[:-1]):
        return True
    names = [m.group("name").strip() for m, lowered in includes if not lowered]
    if any(_ROCM_LIBRARY.search(n) for n in names):
        return True
    return any(n.startswith("hip/") for n in names) and not any(
        _CUDA_HEADER.fullmatch(n) for n in names
    )


def _word_before(code: str, end: int) -> tuple[int, str]:
    """The last non-blank character before ``end`` (line continuations skipped): its
    offset and, when it ends an identifier, the whole identifier (else the character)."""
    i = end - 1
    while i >= 0 and code[i] in " \t\r\n\\":
        i -= 1
    if i < 0:
        return -1, ""
    if code[i].isalnum() or code[i] == "_":
        j = i
        while j > 0 and (code[j - 1].isalnum() or code[j - 1] == "_"):
            j -= 1
        return j, code[j : i + 1]
    return i, code[i]


def _qualified(code: str, start: int) -> bool:
    """Whether ``start`` follows ``.``, ``->`` or ``name::`` (a member or another namespace)."""
    pos, before = _word_before(code, start)
    if before in (".", ">"):
        return True
    if before == ":" and pos > 0 and code[pos - 1] == ":":
        prev_pos, prev = _word_before(code, pos - 1)
        return prev_pos >= 0 and (prev[0].isalnum() or prev[0] == "_" or prev == ">")
    return False


def _is_call(code: str, start: int, end: int) -> bool:
    """Whether the identifier at ``start:end`` is called here (``f(`` in an expression),
    not declared (``Type f(``), a member (``x.f(``) or qualified (``ns::f(``)."""
    k = end
    while k < len(code) and code[k] in " \t":
        k += 1
    if k >= len(code) or code[k] != "(":
        return False
    if _qualified(code, start):
        return False
    _, before = _word_before(code, start)
    if not before:
        return True
    if before[0].isalnum() or before[0] == "_":
        return before in _EXPR_WORDS
    return before not in ("*", "&", "~", ">", ".")


class _Evidence:
    """Finds the evidence of each library in one file (declared names computed once)."""

    def __init__(self, sink: Sink, includes: list[tuple[re.Match[str], bool]]) -> None:
        self.sink = sink
        self.includes = includes
        self._declared: set[str] | None = None

    @property
    def declared(self) -> set[str]:
        if self._declared is None:
            names: set[str] = set()
            for m in _DECLARED.finditer(self.sink.code):
                names.update(v for v in m.groupdict().values() if v)
            self._declared = names
        return self._declared

    def first(self, twin: _Twin) -> tuple[int, str] | None:
        """Offset and text of the first evidence (outside a lowered branch if any)."""
        sink, code = self.sink, self.sink.code
        found: list[tuple[int, str]] = [
            (m.start(), "<" + m.group("name").strip() + ">")
            for m, _ in self.includes
            if twin.header.fullmatch(m.group("name").strip())
        ]
        if twin.ident is not None and twin.types is not None:
            calls: list[tuple[int, str]] = []
            declared_here: set[str] = set()
            for m in iter_words(twin.ident, code):
                name = m.group()
                if sink.src.dead_at(m.start()):
                    continue
                if twin.types.fullmatch(name):
                    found.append((m.start(), name))
                elif _is_call(code, m.start(), m.end()):
                    if not name.endswith("_"):
                        calls.append((m.start(), name))
                elif _PAREN.match(code, m.end()):
                    declared_here.add(name)  # `Type name(`: a function this file declares
            found += [c for c in calls if c[1] not in declared_here]
            found = [f for f in found if f[1].startswith("<") or f[1] not in self.declared]
        if twin.namespace is not None:
            for m in iter_words(twin.namespace, code):
                if not sink.src.dead_at(m.start()) and not _qualified(code, m.start()):
                    found.append((m.start(), m.group()))
                    break
        if not found:
            return None
        found.sort()
        for offset, text in found:
            if not sink.lowered_at(offset):
                return offset, text
        return found[0]


_NS_ALIAS = textre.compile(r"\bnamespace\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?:::)?hip\w+\s*;")


def _aliased(sink: Sink, twin: _Twin) -> int | None:
    """Offset of ``namespace cub = hipcub;`` in a ROCm branch of this file: the twin's
    namespace is its ROCm counterpart there, so the file's ``cub::`` uses are ported."""
    if twin.namespace is None:
        return None
    name = twin.namespace.pattern.removesuffix("::")
    for m in _NS_ALIAS.finditer(sink.code):
        if m.group("name") == name and sink.lowered_at(m.start()):
            return m.start()
    return None


def _check_twins(sink: Sink) -> None:
    code = sink.code
    twins = [t for t in _TWINS if t.key in code]
    if not twins:
        return
    includes = _includes(sink)
    if _rocm_file(sink, includes):
        return
    evidence = _Evidence(sink, includes)
    for twin in twins:
        hit = evidence.first(twin)
        if hit is not None:
            offset, text = hit
            alias = _aliased(sink, twin)
            if alias is not None:
                offset = alias  # reported where the port is: a ROCm branch (info)
            sink.hit(
                "GP316",
                offset,
                f"this file uses {twin.name} (`{text}`); on ROCm use {twin.alt}",
                severity=twin.severity,
            )


def check_libraries(sink: Sink) -> None:
    """Run GP315 and GP316 when enabled (after the passes GP315 folds)."""
    if sink.wants("GP315"):
        _check_no_twin(sink)
    if sink.wants("GP316"):
        _check_twins(sink)
