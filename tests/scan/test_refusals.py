"""Issue 24: kernels a project refuses on ROCm at run time: their JIT extension is not built
and their Python is not run there; a kernel that lists ROCm as supported keeps its findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import Severity
from gpuport.scan.model import ScanReport
from tests.scan.project_files import scan_files

PTX = '__global__ void k(float* x) { asm volatile("membar.gl;"); }\n'
LOAD = "from torch.utils.cpp_extension import load\nimport os\nHERE = os.path.dirname(__file__)\n"
STYLES = {
    "raise-in-function": LOAD
    + (
        "def build():\n"
        "    if torch.version.hip:\n"
        "        raise NotImplementedError('fp8 attention is not supported on ROCm')\n"
        "    return load(name='attn', sources=[os.path.join(HERE, 'csrc/attn.cu')])\n"
    ),
    "check-method": LOAD
    + (
        "class Fp8Attention:\n"
        "    def can_implement(self):\n"
        "        if is_hip():\n"
        "            return False, 'no HIP kernel'\n"
        "        return True, ''\n"
        "    def __init__(self):\n"
        "        self.ext = load('attn', ['csrc/attn.cu'])\n"
    ),
    "support-list": LOAD
    + (
        "class Fp8Attention:\n"
        "    SUPPORTED_DEVICES = ('cuda',)\n"
        "    def __init__(self):\n"
        "        self.ext = load(name='attn', sources=['csrc/attn.cu'])\n"
    ),
    "module-refusal": LOAD
    + (
        "if IS_ROCM:\n    raise ImportError('this backend needs CUDA')\n"
        "ext = load(name='attn', sources=['csrc/attn.cu'])\n"
    ),
}


def _scan_ops(root: Path, ops: str) -> ScanReport:
    return scan_files(root, {"pkg/ops.py": ops, "pkg/csrc/attn.cu": PTX, "pkg/__init__.py": ""})


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_refused_kernel_is_not_built_on_rocm(tmp_path: Path, style: str) -> None:
    r = _scan_ops(tmp_path, STYLES[style])
    ptx = [f for f in r.findings if f.rule_id == "GP301"]
    assert ptx and ptx[0].severity is Severity.INFO, ptx
    assert "refused on ROCm at run time: pkg/ops.py:" in (ptx[0].not_built or "")
    assert "pkg/csrc/attn.cu" in r.not_built


@pytest.mark.parametrize(
    "ops",
    [
        STYLES["support-list"].replace("('cuda',)", "('cuda', 'rocm')"),
        STYLES["raise-in-function"].replace("if torch.version.hip:", "if torch.version.cuda:"),
        STYLES["module-refusal"].replace("raise ImportError('this backend needs CUDA')", "pass"),
        # the refusal is in another function than the load
        LOAD
        + (
            "def fast():\n    if IS_ROCM:\n        raise RuntimeError('no')\n"
            "ext = load(name='attn', sources=['csrc/attn.cu'])\n"
        ),
    ],
)
def test_a_kernel_that_runs_on_rocm_keeps_its_blockers(tmp_path: Path, ops: str) -> None:
    r = _scan_ops(tmp_path, ops)
    ptx = [f for f in r.findings if f.rule_id == "GP301"]
    assert ptx and ptx[0].severity is Severity.BLOCKER


def test_python_of_a_refused_kernel_is_not_run(tmp_path: Path) -> None:
    ops = (
        "import triton\nimport triton.language as tl\n"
        "class Fp8Quant:\n"
        "    supported_backends = ['cuda']\n"
        "    @staticmethod\n"
        "    @triton.jit\n"
        "    def kernel(x):\n"
        "        tl.inline_asm_elementwise('cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;', '=h,r,r',"
        " [x, x], dtype=tl.int16, is_pure=True, pack=1)\n"
    )
    r = _scan_ops(tmp_path, ops)
    asm = [f for f in r.findings if f.rule_id == "GP212"]
    assert asm and asm[0].severity is Severity.INFO
    assert "not run on ROCm" in asm[0].message
