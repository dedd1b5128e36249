"""The GP4xx rule table: what each build-file rule means, why, and how to fix it.

Detection lives in :mod:`gpuport.scan.rules.build.checker` (CMake, Makefiles) and
:mod:`gpuport.scan.rules.build.setup_py` (setup.py); this module is only the
registry metadata (``gpuport rules`` / ``gpuport explain`` read it).
"""

from __future__ import annotations

from functools import partial

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule, table_rule

_TORCHMCUBES = "https://github.com/tatsy/torchmcubes/issues/31"
_GGUF_PR = "https://github.com/vllm-project/vllm-gguf-plugin/pull/85"
_FUSED_SSIM = "https://github.com/rahul-goel/fused-ssim/pull/29"
_TEXT_KINDS = "CMakeLists.txt/*.cmake, Makefile/*.mk, setup.py"


_rule = partial(table_rule, Family.BUILD)


BUILD_RULES: tuple[Rule, ...] = (
    _rule(
        "GP401",
        "cmake-cuda-only",
        "CMake enables CUDA without a HIP path",
        Severity.MAJOR,
        4.0,
        "all targets; CMake files",
        "enable_language(CUDA), project(... CUDA), find_package(CUDA/CUDAToolkit) and "
        "check_language(CUDA) look for nvcc and the CUDA toolkit. On a ROCm machine they "
        "fail, or the project quietly configures a CPU-only build (torchmcubes #31: "
        "'NO CUDA INSTALLATION FOUND, TRYING TO INSTALL CPU VERSION ONLY!').",
        "Add a HIP path: enable_language(HIP) and find_package(hip) (plus hipblas etc.) "
        "under if(USE_ROCM), and compile the .cu sources as LANGUAGE HIP.",
        _TORCHMCUBES,
    ),
    _rule(
        "GP402",
        "nvcc-only-flag",
        "nvcc-only compiler flag",
        Severity.MAJOR,
        0.5,
        f"all targets; {_TEXT_KINDS}",
        "Flags such as --use_fast_math, --expt-relaxed-constexpr or -gencode exist only in "
        "nvcc: hipcc and clang++ stop with 'unknown argument' (vllm-gguf-plugin PR #85 on "
        "ROCm 7.2; also measured with Debian's hipcc, HIP 5.2), so the build fails before "
        "compiling a kernel. The single-dash spellings -use_fast_math, -lineinfo and -Xptxas "
        "were accepted by that hipcc but do nothing for AMD code; they are reported as minor.",
        "Drop the flag or use its clang/hipcc equivalent under a ROCm branch (see message).",
        _GGUF_PR,
    ),
    _rule(
        "GP403",
        "cuda-arch-list-only",
        "GPU architectures listed for NVIDIA only",
        Severity.MAJOR,
        0.5,
        f"all targets (the fix names the selected gfx); {_TEXT_KINDS}",
        "CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, -gencode/sm_XX name NVIDIA "
        "architectures; the file names no AMD target. Code built without the device's gfx "
        "fails at run time with 'HIP error: invalid device function' or "
        "hipErrorNoBinaryForGpu.",
        "Name the AMD target as well: GPU_TARGETS / CMAKE_HIP_ARCHITECTURES, "
        "PYTORCH_ROCM_ARCH for torch extensions, --offload-arch for hipcc.",
        "https://github.com/pytorch/pytorch/pull/61706",
        "https://github.com/pytorch/pytorch/pull/80498",
        "https://github.com/ggml-org/llama.cpp/pull/15994",
        "https://github.com/microsoft/onnxruntime/issues/16566",
    ),
    _rule(
        "GP404",
        "torch-cuda-extension",
        "PyTorch CUDAExtension: kernels are hipified on ROCm",
        Severity.MINOR,  # advice: the kernels' own findings are the work (issue 24)
        2.0,
        "all targets; setup.py",
        "On a ROCm build of PyTorch, CUDAExtension runs hipify over the sources and builds "
        "them with hipcc. That works only if the kernels are portable: inline PTX, 32-lane "
        "warp assumptions and CUDA-only libraries break it (mmcv #1898).",
        "Keep CUDAExtension (it is the right class on ROCm too) and check the kernel sources "
        "with the GP3xx rules; run `gpuport hipify` on them to see what does not translate.",
        "https://github.com/open-mmlab/mmcv/issues/1898",
        _FUSED_SSIM,
    ),
    _rule(
        "GP405",
        "cpp-extension-cuda-sources",
        "CUDA sources built as a CppExtension/Extension",
        Severity.BLOCKER,
        1.0,
        "all targets; setup.py",
        "CppExtension (or a plain Extension built by BuildExtension) with .cu sources is "
        "not hipified on ROCm and gets no HIP include paths or libraries. The build fails "
        "(fused-ssim PR #29: cooperative_groups.h not found).",
        "Build the .cu sources with torch.utils.cpp_extension.CUDAExtension.",
        _FUSED_SSIM,
    ),
    _rule(
        "GP406",
        "cuda-half-operator-macros",
        "CUDA half/bfloat16 operator macros",
        Severity.MINOR,
        0.25,
        f"all targets; {_TEXT_KINDS}",
        "-U__CUDA_NO_HALF_OPERATORS__ and friends are rewritten on ROCm into "
        "-D/-U__HIP_NO_HALF_* macros, which can switch the half operators off instead of on "
        "(ROCm/hip #3764). Kernels then fail to compile or pick other overloads.",
        "Under a ROCm branch pass -U__HIP_NO_HALF_OPERATORS__ -U__HIP_NO_HALF_CONVERSIONS__ "
        "explicitly, or drop the macros there.",
        "https://github.com/ROCm/hip/issues/3764",
    ),
    _rule(
        "GP407",
        "cuda-library-link",
        "Links CUDA libraries by name",
        Severity.MAJOR,
        1.0,
        f"all targets; {_TEXT_KINDS}",
        "-lcudart, -lcublas, CUDA::cublas or ${CUDA_LIBRARIES} name NVIDIA libraries that "
        "do not exist on a ROCm system; the link step fails. Each has a ROCm counterpart "
        "with a different name (and, for cuDNN, a different API).",
        "Link the ROCm libraries under a ROCm branch: hip::host, roc::hipblas, "
        "roc::hipblaslt, hip::hipfft, hip::hiprand, roc::hipsparse, roc::hipsolver, RCCL, "
        "MIOpen.",
        "https://github.com/ROCm/HIPIFY",
        "https://github.com/Arist12/AMD-Skills",
    ),
    _rule(
        "GP408",
        "nvcc-invoked",
        "Build invokes nvcc directly",
        Severity.MAJOR,
        1.0,
        f"all targets; {_TEXT_KINDS}",
        "A build that calls nvcc (NVCC ?= nvcc, $(NVCC), CMAKE_CUDA_COMPILER, a path to "
        "bin/nvcc) cannot run where only ROCm is installed. Builds that probe for nvcc fall "
        "back to CPU-only without saying so (torchmcubes #31).",
        "Use hipcc (or CMAKE_HIP_COMPILER / amdclang++) when building for ROCm.",
        _TORCHMCUBES,
    ),
    _rule(
        "GP409",
        "cuda-home-gate",
        "GPU build gated on CUDA_HOME",
        Severity.MAJOR,
        0.5,
        "all targets; setup.py",
        "torch.utils.cpp_extension.CUDA_HOME is None on a ROCm machine without nvcc. A "
        "setup.py that builds its GPU extension only when CUDA_HOME is set installs a "
        "CPU-only package on ROCm without an error (torchmcubes #31).",
        "Also accept ROCm: `if CUDA_HOME is not None or ROCM_HOME is not None` (both from "
        "torch.utils.cpp_extension), or test IS_HIP_EXTENSION.",
        _TORCHMCUBES,
    ),
    _rule(
        "GP410",
        "native-code-generated-at-build",
        "Native code generated at build time (not in the tree a scan reads)",
        Severity.MAJOR,
        8.0,
        f"all targets; {_TEXT_KINDS}",
        "Some projects write their CUDA while they build: a code generator imported by "
        "setup.py (spconv's kernels come from cumm/pccm), a kernel-template script, a CMake "
        "add_custom_command whose OUTPUT is .cu source. A static scan of the tree never sees "
        "that code, so it cannot call the project ready. A generator the knowledge base knows "
        "takes its ROCm status (no ROCm backend: blocker); an unknown one is major until the "
        "generated sources are read.",
        "Build once and run `gpuport scan` on the generated sources, or check that the "
        "generator has a HIP/ROCm backend; a generator without one must be replaced.",
        "https://github.com/traveller59/spconv",
        "https://github.com/FindDefinition/cumm",
    ),
)
