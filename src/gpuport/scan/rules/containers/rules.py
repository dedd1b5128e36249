"""The GP5xx rule table: what each container rule means, why, and how to fix it.

Detection lives in :mod:`gpuport.scan.rules.containers.checker` (Dockerfiles, docker
run in Makefiles) and :mod:`gpuport.scan.rules.containers.compose` (compose and
Kubernetes YAML); this module is only the registry metadata.
"""

from __future__ import annotations

from functools import partial

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule, table_rule
from gpuport.scan.rules.containers.common import VLLM_IMAGE

_VLLM_DOC = "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/vllm.html"
_MATRIX = "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html"
_KFD_ISSUE = "https://github.com/ROCm/ROCm/issues/1798"
_DOCKER_116 = "https://github.com/ROCm/ROCm-docker/issues/116"
_DOCKER_93 = "https://github.com/ROCm/ROCm-docker/pull/93"
_RUN_FLAGS = (
    "--device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
    "--security-opt seccomp=unconfined"
)
_KINDS = "Dockerfiles, compose files"


_rule = partial(table_rule, Family.CONTAINERS)


CONTAINER_RULES: tuple[Rule, ...] = (
    _rule(
        "GP501",
        "nvidia-base-image",
        "Container image built on NVIDIA CUDA",
        Severity.BLOCKER,
        2.0,
        f"all targets; {_KINDS}",
        "nvidia/cuda, nvcr.io/nvidia/* and *-cuda tagged images ship the CUDA user-space "
        "stack and CUDA builds of PyTorch and friends. Nothing in them can drive an AMD GPU, "
        "so the image has to change, not just the run flags.",
        "Start from a ROCm image: rocm/pytorch (PyTorch), "
        f"{VLLM_IMAGE} (vLLM serving on CDNA) or rocm/dev-ubuntu-24.04 (ROCm base); pin a tag "
        "that supports the target GPU.",
        _VLLM_DOC,
        _MATRIX,
    ),
    _rule(
        "GP502",
        "nvidia-container-runtime",
        "NVIDIA container runtime or GPU request",
        Severity.MAJOR,
        0.5,
        f"all targets; {_KINDS}, docker run lines in Makefiles",
        "--gpus, runtime: nvidia, NVIDIA_VISIBLE_DEVICES, compose device reservations with "
        "driver: nvidia / capabilities: [gpu] and nvidia.com/gpu resources all go through "
        "the NVIDIA container toolkit. On an AMD host they fail ('could not select device "
        "driver') or give a container without /dev/kfd, where ROCm finds no GPU.",
        f"Pass the AMD devices instead: {_RUN_FLAGS}; in compose `devices: [/dev/kfd, "
        "/dev/dri]`, `group_add: [video, render]`; in Kubernetes request amd.com/gpu; "
        "select GPUs with HIP_VISIBLE_DEVICES.",
        _KFD_ISSUE,
        _DOCKER_116,
        _DOCKER_93,
        _VLLM_DOC,
    ),
    _rule(
        "GP503",
        "cuda-packages-in-image",
        "Image installs CUDA toolkit packages",
        Severity.MAJOR,
        1.0,
        "all targets; Dockerfiles",
        "apt/yum/conda packages such as cuda-toolkit-*, libcudnn*, libnccl*, tensorrt or "
        "cudatoolkit are NVIDIA's user-space libraries. On ROCm they are dead weight at best; "
        "at worst builds in the image find them and compile for CUDA.",
        "Install the ROCm counterparts (rocm-dev/rocm-libs, miopen-hip, rccl, migraphx) or "
        "start from a rocm/* image that has them.",
        _MATRIX,
        "https://github.com/pytorch/pytorch/issues/118457",
    ),
    _rule(
        "GP504",
        "cuda-env-paths",
        "CUDA paths or variables in the image environment",
        Severity.MINOR,
        0.25,
        f"all targets; {_KINDS}",
        "CUDA_HOME, /usr/local/cuda in PATH or LD_LIBRARY_PATH and TORCH_CUDA_ARCH_LIST "
        "point builds and loaders at a CUDA install that is not there on ROCm. Extension "
        "builds then look for nvcc or miss the AMD architecture.",
        "Use ROCM_PATH=/opt/rocm and /opt/rocm/bin in PATH, PYTORCH_ROCM_ARCH for extension "
        "builds; do not prepend /opt/rocm/lib when the torch wheel brings its own ROCm libs.",
        "https://github.com/ROCm/pytorch/issues/1340",
        "https://github.com/pytorch/pytorch/issues/118457",
    ),
    _rule(
        "GP505",
        "rocm-container-without-devices",
        "ROCm container started without /dev/kfd and /dev/dri",
        Severity.MAJOR,
        0.25,
        "all targets; compose files",
        "A ROCm container sees the GPU only through /dev/kfd and /dev/dri, and a non-root "
        "user needs the video/render groups. Without them rocminfo says 'Unable to open "
        "/dev/kfd read-write' and PyTorch reports no GPU.",
        "Add `devices: [/dev/kfd, /dev/dri]` and `group_add: [video, render]` (docker run: "
        f"{_RUN_FLAGS}).",
        _KFD_ISSUE,
        _DOCKER_116,
        _DOCKER_93,
        "https://github.com/ROCm/ROCm/issues/4208",
    ),
)
