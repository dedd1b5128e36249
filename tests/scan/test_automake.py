"""Issue 24, fourteenth sample (ucx): an Automake project. ``Makefile.am`` files are build
files: a folder whose ``Makefile.am`` builds only ``if HAVE_CUDA`` (or under a conditional
whose block uses CUDA's make variables) is a component a ROCm build leaves out, and one built
``if HAVE_ROCM`` is the project's ROCm route. An include guard named for ROCm
(``#ifndef UCT_ROCM_COPY_EP_H``) is no platform test."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.cxx import INCLUDE_GUARD, lex
from tests.scan.project_files import scan_files

_TOP = "SUBDIRS = cuda gda rocm\n"
_CUDA_AM = (
    "if HAVE_CUDA\nlib_LTLIBRARIES = libx_cuda.la\nlibx_cuda_la_SOURCES = ipc.c\n"
    "noinst_HEADERS = ipc.cuh\nendif\n"
)
_GDA_AM = (
    "if HAVE_GDA\nlibg_la_CPPFLAGS = $(CUDA_CPPFLAGS)\nlibg_la_SOURCES = gda.c\n"
    "noinst_HEADERS = gda.cuh\nendif\n"
)
_ROCM_AM = "if HAVE_ROCM\nlib_LTLIBRARIES = libx_rocm.la\nlibx_rocm_la_SOURCES = copy.c\nendif\n"
_PTX = '#pragma once\n__device__ void f() { asm volatile("membar.gl;"); }\n'


def _project() -> dict[str, str]:
    return {
        "configure.ac": "AC_INIT([x], [1])\n",
        "Makefile.am": _TOP,
        "cuda/Makefile.am": _CUDA_AM,
        "cuda/ipc.c": "int x;\n",
        "cuda/ipc.cuh": _PTX,
        "gda/Makefile.am": _GDA_AM,
        "gda/gda.c": "int y;\n",
        "gda/gda.cuh": _PTX,
        "rocm/Makefile.am": _ROCM_AM,
        "rocm/copy.c": '#include "copy.h"\nint z;\n',
        "rocm/copy.h": "#ifndef X_ROCM_COPY_H\n#define X_ROCM_COPY_H\nint w;\n#endif\n",
    }


def test_an_automake_cuda_component_is_not_built_and_a_rocm_one_is_a_route(
    tmp_path: Path,
) -> None:
    r = scan_files(tmp_path, _project())
    assert any(x.path == "rocm/Makefile.am" and x.counts for x in r.routes), r.routes
    not_built = dict(r.not_built) if not isinstance(r.not_built, dict) else r.not_built
    assert "cuda/ipc.cuh" in not_built and "gda/gda.cuh" in not_built
    assert "rocm/copy.h" not in not_built
    core = [f for f in r.findings if f.scope == "core" and f.severity is Severity.BLOCKER]
    assert not [f for f in core if f.location.path.endswith(".cuh")]


def test_an_include_guard_named_for_rocm_is_no_platform_test() -> None:
    src = lex("#ifndef X_ROCM_COPY_H\n#define X_ROCM_COPY_H\nint w;\n#endif\n")
    assert src.directives[0].expr == INCLUDE_GUARD and not src.directives[0].rocm
    # a real test of the platform stays one, also when a define follows with another name
    for text in ("#ifndef USE_ROCM\nint cuda_only;\n#endif\n",
                 "#ifndef USE_ROCM\n#define USE_CUDA 1\n#endif\n"):  # fmt: skip
        assert lex(text).directives[0].expr == "USE_ROCM"
