"""What the Dockerfile and compose checkers share: CUDA images and CUDA environment variables.

:func:`nvidia_image` decides whether an image reference is an NVIDIA CUDA
image, :func:`image_fix` names the ROCm image to use instead, and
:func:`env_var` reports the NVIDIA runtime and CUDA path variables wherever an
image sets them (Dockerfile ``ENV`` or a compose ``environment:``).
"""

from __future__ import annotations

from gpuport import textre
from gpuport.scan.rules.base import FileContext

VLLM_IMAGE = "rocm/vllm:rocm7.14.0_cdna_ubuntu24.04_py3.14_pytorch_2.11.0_vllm_0.23.0"
_NV_REGISTRY = textre.compile(
    r"^(?:(?:docker\.io|index\.docker\.io|registry\.hub\.docker\.com)/)?(?:nvidia/|nvcr\.io/)"
)
_NV_ENV = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA"}
_CUDA_ENV = {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDACXX"}
_PATH_ENV = {"PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CPLUS_INCLUDE_PATH"}


def nvidia_image(image: str) -> bool:
    low = image.lower()
    if "rocm" in low or not low:
        return False
    if _NV_REGISTRY.match(low):
        return True
    tag = low.rsplit("/", 1)[-1].partition(":")[2].split("@")[0]
    return "cuda" in tag or "cudnn" in tag


def image_fix(image: str, ctx: FileContext) -> str:
    low = image.lower()
    if any(w in low for w in ("vllm", "tensorrt-llm", "tritonserver", "/nim/")):
        if ctx.target.family == "CDNA":
            return f"Use AMD's vLLM image, e.g. {VLLM_IMAGE}."
        return (
            f"Use a rocm/vllm image built for {ctx.target.name} (the *_cdna_* tags are for "
            "Instinct GPUs)."
        )
    if "tensorflow" in low:
        return "Use a rocm/tensorflow image."
    if "jax" in low:
        return "Use a rocm/jax-community image."
    if "pytorch" in low or "torch" in low:
        return "Use rocm/pytorch (pin a rocm/pytorch tag that matches your ROCm and torch)."
    return (
        "Use rocm/dev-ubuntu-24.04 (ROCm base, pin a tag) or rocm/pytorch if the image runs "
        "PyTorch."
    )


def env_var(
    ctx: FileContext, key: str, value: str, line: int, col: int, rocm_arch: bool, guarded: bool
) -> None:
    if key in _NV_ENV:
        ctx.report(
            "GP502", line, col, message=f"{key} is read only by the NVIDIA runtime", guarded=guarded
        )
    elif key in _CUDA_ENV or (key in _PATH_ENV and "/usr/local/cuda" in value):
        ctx.report("GP504", line, col, message=f"{key} points at a CUDA install", guarded=guarded)
    elif key == "TORCH_CUDA_ARCH_LIST" and not rocm_arch:
        ctx.report(
            "GP504",
            line,
            col,
            message="TORCH_CUDA_ARCH_LIST is ignored by ROCm builds",
            fix=f"Set PYTORCH_ROCM_ARCH={ctx.target.name} for extension builds.",
            guarded=guarded,
        )
