"""Project macros that nothing defines: code under ``#ifdef NAME`` is then not compiled.

S-LoRA's vendored ``vec_dtypes.cuh`` puts its FP8 types under ``#ifdef FLASHINFER_USE_FP8``,
and nothing in S-LoRA defines that macro: no ``#define``, no ``-D`` in a build file, no
script that builds the extension names it (issue 24, eleventh sample). Such a block is
compiled by no build of the project, for CUDA or ROCm; its findings are not blockers.

A name counts only when it looks like a project's own feature switch (upper case, with an
``_``), not a backend switch (``PROJ_USE_HIP``: the ROCm build defines it, often where gpuport
cannot see), is not one a compiler, toolkit or well-known library defines (``__CUDA_ARCH__``,
``CUDART_VERSION``, ``TORCH_...``, ``NDEBUG``...), is not the prefix of a header the project
includes from outside (``#include <flashinfer/...>`` with no such folder here: the library's
build may define it), and no file gpuport reads names it other than in a conditional test.
Only text is read; when the other files to look through are more than
:data:`MAX_READ` bytes, nothing is decided (every such block stays compiled).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from gpuport import textre
from gpuport.scan.project.files import Candidate, read_text
from gpuport.scan.rules.base import FileKind

__all__ = ["MAX_READ", "project_undefined", "undefined_macros"]

T = TypeVar("T")

#: bytes of other files (scripts, build files) read to look for the names, at most
MAX_READ = 16 << 20

_TEST = textre.compile(
    r"^[ \t]*\#[ \t]*(?:ifdef[ \t]+|if[ \t]+defined[ \t]*\(?[ \t]*)"
    r"(?P<name>[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])[ \t]*\)?[ \t]*(?://[^\n]*)?$",
    re.M,
)
#: a line that only tests or closes: `#ifdef X`, `#if defined(X)`, `#endif // X`, `#else // X`
_TEST_LINE = textre.compile(r"^[ \t]*\#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b[^\n]*$", re.M)
#: a whole-line `//` comment: a commented-out `#define` defines nothing (KeyHunt-Cuda's
#: `//#define ASSEMBLY_SIGMA`; issue 24, twenty-second sample)
_COMMENT_LINE = textre.compile(r"^[ \t]*//[^\n]*$", re.M)
_KNOWN_PREFIX = textre.compile(
    r"^(?:CUDA|CUDART|CUB|THRUST|NV|NVCC|NVTX|CUTLASS|CUTE|CUBLAS|CUDNN|NCCL|HIP|ROCM|USE_ROCM"
    r"|HIPCUB|ROCPRIM|TORCH|C10|AT|ATEN|PYBIND11|PY|GOOGLE|GTEST|EIGEN|BOOST|FMT|SPDLOG|GLOG"
    r"|ABSL|OMP|MPI|OPENMP|WIN|WIN32|WIN64|APPLE|LINUX|ANDROID|MSC|GNUC|CLANG|LLVM|NDEBUG"
    r"|DEBUG|TRITON|MKL|OPENCV|CV|QT|GL|VK|VULKAN|SYCL|OPENCL|CL|ONNX|TF|TENSORFLOW|XLA)_"
)
#: every character that cannot be in an identifier, mapped to a space (names by str.split)
_NOT_NAME = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
_TEXT_KINDS = frozenset(
    {FileKind.PYTHON, FileKind.SETUP_PY, FileKind.SETUP_CFG, FileKind.PYPROJECT, FileKind.CMAKE,
     FileKind.MAKEFILE, FileKind.DOCKERFILE, FileKind.REQUIREMENTS, FileKind.CONDA_ENV,
     FileKind.COMPOSE}
)  # fmt: skip
#: a backend switch (``PROJ_USE_HIP``, ``X_CUDA_ENABLED``): the build of that backend defines
#: it, often where gpuport cannot see (a build system it does not read, a user's -D)
_BACKEND = textre.compile(r"HIP|ROCM|AMD|CUDA|NVIDIA|GPU|CUBLAS|CUDNN|NCCL|TRITON|SYCL|METAL")
#: a developer's switch, given with -D by hand when needed (spconv's TV_DEBUG): never "undefined"
_DEV_SWITCH = textre.compile(r"DEBUG|TRACE|VERBOSE|PROFIL|LOG|TEST|ASSERT|CHECK|BENCH|DUMP")
_INCLUDE_DIR = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*[<"]([A-Za-z0-9_]+)/', re.M)


def undefined_macros(
    native: Mapping[str, str],
    others: Iterable[T],
    read: Callable[[T], str | None],
    root: Path,
) -> dict[str, str]:
    """Macros tested by ``#ifdef`` in ``native`` (relative path -> text) that nothing defines
    -> where the first test is (``file:line``). ``others``: the project's other files, each
    given to ``read`` (its text, or None when it cannot be read: then nothing is decided)."""
    tested: dict[str, str] = {}
    for rel, text in native.items():
        if "#" not in text:
            continue
        line_of = textre.line_finder(text)  # one index per file, not a count per match
        for m in _TEST.finditer(text):
            name = m.group("name")
            if (
                name not in tested
                and not _KNOWN_PREFIX.match(name)
                and not _BACKEND.search(name)
                and not _DEV_SWITCH.search(name)
            ):
                line = line_of(m.start())
                tested[name] = f"{rel}:{line}: tested there, and nothing in this project defines it"
    if not tested:
        return {}
    here = {part for rel in native for part in rel.split("/")[:-1]}  # folders of the project
    included = {d for text in native.values() for d in _INCLUDE_DIR.findall(text)}
    outside = {d.lower() for d in included if d not in here and not (root / d).is_dir()}
    tested = {n: w for n, w in tested.items() if n.split("_", 1)[0].lower() not in outside}
    used: set[str] = set()
    for text in native.values():  # identifiers by one split per file, however many names
        if "#" in text:  # tests and whole-line comments (`//#define ASSEMBLY_SIGMA`) say nothing
            text = _COMMENT_LINE.sub("", _TEST_LINE.sub("", text))
        used |= _names_in(text, tested)
    budget = MAX_READ
    for item in others:
        if len(used) == len(tested):
            break
        got = read(item)
        if got is None:
            return {}  # a file that could not be read may name one: decide nothing
        budget -= len(got)
        if budget < 0:
            return {}  # too much to look through: decide nothing
        used |= _names_in(got, tested)
    return {n: w for n, w in tested.items() if n not in used}


def _names_in(text: str, tested: Mapping[str, str]) -> set[str]:
    """The names of ``tested`` that ``text`` holds as words (``-DNAME`` reads as ``DNAME``);
    the words are made a set in C, and only the distinct ones are looked at."""
    words = set(text.translate(_NOT_NAME).split())
    found = words.intersection(tested)
    found.update(w[1:] for w in words if w[:1] == "D" and w[1:] in tested)
    return found


def project_undefined(
    native: Mapping[str, str], candidates: Sequence[Candidate], max_bytes: int, root: Path
) -> dict[str, str]:
    """:func:`undefined_macros` over the project's candidate files (its native files' texts
    given, every other candidate read through :func:`read_text`)."""

    def read(c: Candidate) -> str | None:
        got = read_text(c.path, max_bytes)
        return got if isinstance(got, str) else None

    others = [c for c in candidates if c.kind in _TEXT_KINDS]
    return undefined_macros(native, others, read, root)
