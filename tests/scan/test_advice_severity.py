"""Issue 24, eleventh sample (Pointnet2_PyTorch): advice is not a defect. TORCH_CUDA_ARCH_LIST in
a torch extension's setup.py is never read by torch's ROCm build, so nothing breaks: info, with
the advice kept. An nvcc ``-gencode``/``sm_XX`` given to the compiler stays a finding."""

from __future__ import annotations

from pathlib import Path

from gpuport.models import Severity
from tests.scan.project_files import scan_files

_SETUP = (
    "import os\nfrom setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    'os.environ["TORCH_CUDA_ARCH_LIST"] = "3.7+PTX;5.0;6.0;7.0;7.5"\n'
    "setup(name='p', ext_modules=[CUDAExtension('p._ext', ['src/k.cu'],\n"
    "      extra_compile_args={'nvcc': ['-gencode=arch=compute_80,code=sm_80']})],\n"
    "      cmdclass={'build_ext': BuildExtension})\n"
)


def test_torch_cuda_arch_list_is_advice_and_a_gencode_flag_is_not(tmp_path: Path) -> None:
    r = scan_files(tmp_path, {"setup.py": _SETUP, "src/k.cu": "__global__ void k() {}\n"})
    arch = {f.location.line: f for f in r.findings if f.rule_id == "GP403"}
    assert arch[4].severity is Severity.INFO
    assert "ROCm build ignores it" in arch[4].message
    flag = [f for f in r.findings if f.rule_id == "GP402" and f.location.line == 6]
    assert flag and flag[0].severity is Severity.MAJOR  # the flag, counted once for the line
