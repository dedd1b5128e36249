"""A project shaped like a real CUDA-first library, written on the fly for the output tests.

What made real reports unreadable (issue 29) was their shape, not their content: about 500
files, package paths of 60-90 characters, one NVIDIA-only import repeated across dozens of
kernel files, warp masks on many lines, a CUDA Dockerfile in ``docker/`` and blockers in
``examples/`` and ``tests/`` beside a core that is judged. This builds that shape (no code
from any real project), with a core that is clean or not.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = "src/acme_fused_kernels_for_large_language_models"
KERNEL_DIR = f"{PACKAGE}/ops/cute_dsl/fused_linear_cross_entropy"
CSRC_DIR = f"{PACKAGE}/csrc/attention/flash_forward_split_kv_kernels"

_CU = """#include <cuda_runtime.h>

__device__ float warp_sum_{i}(float v) {{
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}}

__global__ void kernel_{i}(const float* x, float* y) {{
  int lane = threadIdx.x & 31;
  float s = warp_sum_{i}(x[threadIdx.x]);
  if (lane == 0) y[blockIdx.x] = s;
}}
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(root: Path, *, clean_core: bool = False, files: int = 500) -> Path:
    """Write the project under ``root``; ``clean_core`` leaves NVIDIA-only code only in
    ``docker/``, ``examples/`` and ``tests/``."""
    _write(
        root,
        "pyproject.toml",
        '[project]\nname = "acme-fused-kernels"\nversion = "1.0"\n'
        'dependencies = ["numpy>=1.26", "triton>=3.0"]\n',
    )
    _write(root, f"{PACKAGE}/__init__.py", '"""acme."""\n')
    written = 2
    if not clean_core:
        for i in range(40):
            _write(
                root,
                f"{KERNEL_DIR}/_fused_linear_cross_entropy_forward_sm90_persistent_variant_{i}.py",
                "import cutlass\nfrom cuda import bindings\n\n\ndef run():\n    return 1\n",
            )
        for i in range(30):
            name = f"flash_fwd_split_kv_hdim128_bf16_sm80_part_{i}.cu"
            _write(root, f"{CSRC_DIR}/{name}", _CU.format(i=i))
        written += 70
    _write(root, "docker/Dockerfile", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    _write(
        root,
        "examples/serving/Dockerfile",
        "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install tensorrt\n",
    )
    _write(root, "examples/serving/app.py", "import tensorrt\nimport pynvml\n")
    _write(root, "tests/test_nvml.py", "import pynvml\n\n\ndef test_x():\n    pynvml.nvmlInit()\n")
    written += 4
    i = 0
    while written < files:
        _write(
            root,
            f"{PACKAGE}/models/transformer_blocks/module_with_a_long_descriptive_name_{i}.py",
            f"import numpy as np\n\n\ndef f{i}(x):\n    return np.tanh(x)\n",
        )
        written += 1
        i += 1
    return root


def scope_blockers(root: Path) -> int:
    """Blockers outside core in the project at ``root`` (the ones a gate must not count)."""
    from gpuport.models import Severity
    from gpuport.scan import ScanOptions, scan_path

    report = scan_path(root, ScanOptions())
    return sum(1 for f in report.findings if f.severity is Severity.BLOCKER and f.scope != "core")


FEW_PACKAGE = "acme"

_FLA_GATE = """import torch


def pick_{i}():
    if torch.cuda.get_device_capability()[0] >= 9:
        return "hopper"
    return "ampere"
"""

_FLA_ASM = """import triton
import triton.language as tl


@triton.jit
def fast_exp_{i}(x):
    return tl.inline_asm_elementwise(
        "ex2.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
    )
"""


def build_few(root: Path, *, kernels: bool = False, files: int = 500) -> Path:
    """A ~500-file library with few findings, the shape where the fixed part of a report
    dominates (issue 29: trl, flash-linear-attention): a documented ROCm route, one package in
    core that needs a ROCm-specific install, the same package in an extra, a script, an
    example and a test; ``kernels`` adds Triton inline PTX and capability gates to core."""
    _write(
        root,
        "pyproject.toml",
        '[project]\nname = "acme-trainers"\nversion = "1.0"\n'
        'dependencies = ["accelerate>=1.0", "numpy>=1.26"]\n\n'
        "[project.optional-dependencies]\n"
        'vllm = ["vllm>=0.10"]\nvision = ["torchvision>=0.19"]\n',
    )
    _write(
        root,
        "README.md",
        "# acme-trainers\n\n## Features\n\n"
        "- Works on Linux and Windows; NVIDIA GPUs and AMD GPUs (ROCm 6.2)\n",
    )
    _write(root, f"{FEW_PACKAGE}/__init__.py", '"""acme."""\n')
    _write(
        root,
        f"{FEW_PACKAGE}/generation/vllm_client.py",
        "def client():\n    import vllm\n\n    return vllm.LLM\n",
    )
    _write(root, f"{FEW_PACKAGE}/scripts/vllm_serve.py", "import vllm\n")
    _write(root, "examples/scripts/eval_generation.py", "import vllm\n")
    _write(root, "tests/conftest.py", "import vllm\n")
    written = 8
    if kernels:
        for i in range(2):
            _write(root, f"{FEW_PACKAGE}/ops/utils/op_{i}.py", _FLA_ASM.format(i=i))
        for i in range(9):
            _write(
                root,
                f"{FEW_PACKAGE}/ops/generalized_delta_rule/backends/tilelang/gate_{i}.py",
                _FLA_GATE.format(i=i),
            )
        written += 11
    i = 0
    while written < files:
        _write(
            root,
            f"{FEW_PACKAGE}/trainers/experimental/module_with_a_long_descriptive_name_{i}.py",
            f"import numpy as np\n\n\ndef f{i}(x):\n    return np.tanh(x)\n",
        )
        written += 1
        i += 1
    return root
