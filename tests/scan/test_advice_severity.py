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


def test_a_cuda_extension_built_by_a_module_is_advice_but_inline_cuda_is_not(
    tmp_path: Path,
) -> None:
    """Issue 24, twelfth sample (lightseq): `CUDAExtension(...)` in an op-builder module is the
    advice GP404 gives for setup.py (minor); `load_inline(cuda_sources=...)` holds kernels no
    other file has, so it stays a major."""
    builder = (
        "from torch.utils.cpp_extension import CUDAExtension, load_inline\n"
        "class Builder:\n"
        "    def builder(self):\n"
        "        return CUDAExtension(name='op', sources=self.sources())\n"
        "k = load_inline('k', cpp_sources='', cuda_sources='__global__ void k() {}')\n"
    )
    r = scan_files(tmp_path, {"pkg/builder.py": builder})
    gp211 = {f.location.line: f for f in r.findings if f.rule_id == "GP211"}
    assert gp211[4].severity is Severity.MINOR
    assert gp211[5].severity is Severity.MAJOR


def test_an_arch_name_in_a_lookup_table_is_no_flag_but_one_in_the_compile_args_is(
    tmp_path: Path,
) -> None:
    """Issue 24, twelfth sample (torch-harmonics setup.py:80-85): ``sm_90a`` in an alias table
    or a comparison names an architecture a user may ask for; it reaches no compiler. The same
    bare word in an extension's ``nvcc`` arguments, or in a list assigned for later flags, is
    one."""
    setup = (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        'ALIASES = {"9.0a": ("9.0a", "9a", "sm_90a", "compute_90a")}\n'
        'def wants(a):\n    return a == "sm_100a" or a in ["sm_103a"]\n'
        'ARCHS = ["sm_75"]\n'
        "FLAGS = {'nvcc': ['-O3', '-arch', 'sm_86']}\n"
        "setup(name='p', ext_modules=[CUDAExtension('p._ext', ['k.cu'],\n"
        "      extra_compile_args={'nvcc': ['-arch', 'sm_80']})],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )
    r = scan_files(tmp_path, {"setup.py": setup, "k.cu": "__global__ void k() {}\n"})
    lines = {f.location.line for f in r.findings if f.rule_id == "GP403"}
    assert lines == {6, 7, 9}
