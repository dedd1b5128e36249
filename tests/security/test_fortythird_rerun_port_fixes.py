"""The forty-third re-run (on 6a25bc3), port fixes: the safe setup.py library fix claimed a
line's only GP407 finding while ``-lcublas`` on that line stayed linked and unreported (F7);
it rewrote a bare tuple (``libraries = "cudart", "c10_cuda"``) into a tuple whose first item is
the conditional (F9); the unsafe ``#ifdef __CUDA_ARCH__`` fix missed a ``#define`` to
``__CUDA_ARCH__`` outside the branch, used inside it (F18)."""

from __future__ import annotations

import ast
import types
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from tests.port.helpers import fix_ids, project, run

_KERNEL = "__global__ void k(float* x) { x[0] = 1; }\n"
_HEAD = (
    "import torch\nfrom setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
)
_ONE_LINE = (
    _HEAD + "setup(\n"
    '    name="baker",\n'
    '    ext_modules=[CUDAExtension("baker._C", ["csrc/b.cu"], libraries=["cudart"]{sep}'
    'extra_link_args=["-lcublas"])],\n'
    '    cmdclass={{"build_ext": BuildExtension}},\n'
    ")\n"
)


def _torch(hip: str | None) -> object:
    return types.SimpleNamespace(version=types.SimpleNamespace(hip=hip))


def test_f7_a_line_that_also_links_cublas_keeps_its_gp407_finding(tmp_path: Path) -> None:
    root = project(
        tmp_path / "one",
        {"setup.py": _ONE_LINE.format(sep=", "), "csrc/b.cu": _KERNEL},
    )
    before = (root / "setup.py").read_text()
    report = run(root, apply=True, verify=False)
    assert "setup-hip-libs:setup.py" not in fix_ids(report)
    assert (root / "setup.py").read_text() == before
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP407"]
    assert any("-lcublas" in r for r in reasons), reasons
    after = scan_path(root, ScanOptions(jobs=1))
    gp407 = [f for f in after.findings if f.rule_id == "GP407"]
    assert gp407 and all(f.severity != Severity.INFO for f in gp407)
    # split over two lines, the cudart finding is its own and the fix still takes it
    split = project(
        tmp_path / "two",
        {"setup.py": _ONE_LINE.format(sep=",\n        "), "csrc/b.cu": _KERNEL},
    )
    assert "setup-hip-libs:setup.py" in fix_ids(run(split), applied=True)


def _value(text: str, hip: str | None) -> object:
    """What the module's last statement to ``libraries`` evaluates to, run for real."""
    ns: dict[str, object] = {"torch": _torch(hip)}
    body: list[ast.stmt] = [
        s
        for s in ast.parse(text).body
        if isinstance(s, ast.Assign | ast.AugAssign)
        and "libraries" in {getattr(t, "id", None) for t in ast.walk(s) if isinstance(t, ast.Name)}
    ]
    exec(compile(ast.Module(body=body, type_ignores=[]), "setup.py", "exec"), ns)  # noqa: S102
    return ns["libraries"]


def test_f9_a_bare_tuple_of_runtime_libraries_is_empty_on_rocm_and_unchanged_on_cuda(
    tmp_path: Path,
) -> None:
    forms = {
        "bare": ('libraries = "cudart", "c10_cuda"\n', ("cudart", "c10_cuda")),
        "augmented": ('libraries = ["m"]\nlibraries += "cudart",\n', ["m", "cudart"]),
    }
    for what, (code, cuda) in forms.items():
        setup = (
            _HEAD + code + 'setup(name="baker", ext_modules=[CUDAExtension("baker._C", '
            '["csrc/b.cu"], libraries=list(libraries))], cmdclass={"build_ext": BuildExtension})\n'
        )
        root = project(tmp_path / what, {"setup.py": setup, "csrc/b.cu": _KERNEL})
        report = run(root, apply=True, verify=False)
        assert "setup-hip-libs:setup.py" in fix_ids(report, applied=True), what
        text = (root / "setup.py").read_text()
        assert _value(text, None) == cuda, (what, text)
        rocm = _value(text, "6.2")
        assert not any(n in str(rocm) for n in ("cudart", "c10_cuda")), (what, text)
        assert type(rocm) is type(cuda), (what, text)


_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES CXX CUDA)\nadd_library(k src/k.cu)\n"
)
_ALIAS_KERNEL = """\
#include <cstdio>
#include "arch.h"
#define ARCH_NOW ARCH_RAW
__global__ void add(float* a, int n) {
  int i = threadIdx.x;
#ifdef __CUDA_ARCH__
  if (i == 0) printf("arch %d\\n", ARCH_NOW);
#endif
  if (i < n) a[i] += 1;
}
"""


def test_f18_a_macro_expanding_to_cuda_arch_used_in_the_branch_is_declined(
    tmp_path: Path,
) -> None:
    forms = {
        "same file": {
            "src/k.cu": _ALIAS_KERNEL.replace('#include "arch.h"\n', "").replace(
                "ARCH_NOW ARCH_RAW", "ARCH_NOW __CUDA_ARCH__"
            )
        },
        "through a header": {
            "src/k.cu": _ALIAS_KERNEL,
            "src/arch.h": "#pragma once\n#define ARCH_RAW __CUDA_ARCH__\n",
        },
    }
    cmake = _CMAKE
    for what, files in forms.items():
        root = project(tmp_path / what.replace(" ", "_"), {**files, "CMakeLists.txt": cmake})
        before = (root / "src/k.cu").read_text()
        report = run(root, apply=True, verify=False, unsafe_fixes=True)
        assert "cuda-arch-branch:src/k.cu" not in fix_ids(report, applied=True), what
        assert (root / "src/k.cu").read_text() == before, what
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP317"]
        assert any("ARCH_NOW" in r for r in reasons), (what, reasons)
    # a macro that does not expand to __CUDA_ARCH__ leaves the fix as it was
    plain = _ALIAS_KERNEL.replace('#include "arch.h"\n', "").replace(
        "ARCH_NOW ARCH_RAW", "ARCH_NOW 7"
    )
    root = project(tmp_path / "plain", {"src/k.cu": plain, "CMakeLists.txt": cmake})
    run(root, apply=True, verify=False, unsafe_fixes=True)
    assert "defined(__HIP_DEVICE_COMPILE__)" in (root / "src/k.cu").read_text()
