"""Issue 24's twelfth sample for benchmarks/real_repos.py (``--set twelfth``), kept apart so
the script stays short."""

from __future__ import annotations

#: Issue 24's twelfth sample (held out, chosen 2026-11-29 04:05-04:10 UTC, after the eleventh
#: sample had been seen): 10 public repositories never used by gpuport as inputs (names checked
#: by grep -ril against benchmarks/ and docs/ -- stdgpu, heffte, LightGBM, exllamav2, koboldcpp,
#: ktransformers, whisper.cpp, stable-diffusion.cpp, hoomd, tabby, cycles, gpt-neox, deepmd,
#: GPUMD, rwkv.cpp, chatglm.cpp and others were candidates dropped because they were named
#: there), 5 whose own files document a ROCm/HIP route and 5 whose files document none. Route:
#: a CMake C++ distributed matrix-multiplication library with a ROCm GPU backend (COSMA;
#: Tiled-MM/COSTA are submodules, absent from the snapshot), a Kokkos-based CMake C++
#: geometric-search library built with Kokkos' HIP backend and tested on ROCm in its CI
#: (ArborX), a molecular-simulation library with its own HIP platform (OpenMM), a Python
#: inference engine that generates CUDA/HIP C++ and ships a ROCm container (AITemplate;
#: cutlass/composable_kernel are submodules, absent), and an LLM library (Python bindings
#: over ggml with its own CUDA kernels) with a hipBLAS build (ctransformers; its ggml/llama.cpp
#: submodules are absent, a vendored ggml copy is present). No route: a quantization library
#: with CUDA kernels (quip-sharp), a training/inference engine with its own CUDA kernels and
#: Triton-server containers (lightseq), a header-only CMake C++ CUDA library (moderngpu), a
#: PyTorch CUDA-extension library (torch-harmonics) and a 3D (radiance-field) PyTorch CUDA
#: extension (svox2). quip-sharp's only ROCm words are comments copied from HF's llama model
#: code ("Flash Attention for RoCm", model/llama.py:438), not a route. Status and allowed
#: verdicts were written down from each repository's own files (``file:line`` in the snapshot,
#: ``TWELFTH_COMMITS``) before gpuport was run on any of them.
TWELFTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "COSMA": (
        "eth-cscs/COSMA",
        "CMake C++ distributed matmul library; 'GPU acceleration: supports both NVIDIA and AMD "
        "GPUs' (README.md:64), COSMA_BLAS 'ROCM: rocBLAS is used for AMD GPUs' (README.md:90), "
        "GPU backends 'CUDA' 'ROCM' (CMakeLists.txt:20), find_package(hip REQUIRED) "
        "(CMakeLists.txt:133); Tiled-MM/COSTA are submodules, absent from the snapshot",
        ("ready", "minor work"),
    ),
    "ArborX": (
        "arborx/ArborX",
        "Kokkos-based CMake C++ geometric-search library; 'Add support for Kokkos HIP backend' "
        "(CHANGELOG.md:330), rocThrust option under Kokkos_ENABLE_HIP (CMakeLists.txt:29-36), "
        "CI stage 'HIP-6.2.4' built with hipcc on rocm/dev-ubuntu (.jenkins/continuous.groovy:"
        "348-367)",
        ("ready", "minor work"),
    ),
    "openmm": (
        "openmm/openmm",
        "molecular-simulation library; 'To use the HIP platform (recommended), you also need to "
        "install HIP/ROCm' and 'pip install openmm[hip6]' (docs-source/usersguide/application/"
        "01_getting_started.rst:55-58,93-97), HIP platform built when HIP is found "
        "(CMakeLists.txt:347-358, platforms/hip/CMakeLists.txt)",
        ("ready", "minor work"),
    ),
    "AITemplate": (
        "facebookincubator/AITemplate",
        "Python inference engine that renders networks into 'CUDA (NVIDIA GPU) / HIP (AMD GPU) "
        "C++ code' (README.md:9); ROCm container 'DOCKER_BUILDKIT=1 ./docker/build.sh rocm' "
        "(README.md:74, docker/Dockerfile.rocm), 'ROCm: We tested on ROCm 5.2.3' (README.md:83); "
        "cutlass/composable_kernel are submodules, absent from the snapshot",
        ("ready", "minor work"),
    ),
    "ctransformers": (
        "marella/ctransformers",
        "LLM library (Python bindings over ggml, models/ggml/ggml-cuda.cu); 'To enable ROCm "
        "support ... CT_HIPBLAS=1 pip install ctransformers --no-binary ctransformers' "
        "(README.md:134-139), CT_HIPBLAS option with hip::device and GGML_USE_HIPBLAS "
        "(CMakeLists.txt:14,167-188); ggml/llama.cpp submodules absent from the snapshot",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "quip-sharp": (
        "Cornell-RelaxML/quip-sharp",
        "none; quantization library, 'CUDA kernels for fast inference' (README.md:7), 'Build and "
        "install the CUDA inference kernels' (README.md:28), CUDAExtension (quiptools/setup.py:7)",
        ("major work", "blocked"),
    ),
    "lightseq": (
        "bytedance/lightseq",
        "none; training/inference library 'implemented in CUDA', built on cuBLAS, Thrust, CUB "
        "(README.md:37,41-43), project(LightSeq LANGUAGES C CXX CUDA) (CMakeLists.txt:2), "
        "Triton-server containers (docker/Tritonserver)",
        ("major work", "blocked"),
    ),
    "moderngpu": (
        "moderngpu/moderngpu",
        "none; 'a header-only C++ library written for CUDA' (README.md:2), "
        "LANGUAGES CXX CUDA (CMakeLists.txt:14)",
        ("major work", "blocked"),
    ),
    "torch-harmonics": (
        "NVIDIA/torch-harmonics",
        "none; PyTorch CUDA-extension library, wheels per CUDA toolkit (README.md:82-95), "
        "'custom CPU and CUDA kernels' (README.md:113), CUDAExtension (setup.py:177,207)",
        ("major work", "blocked"),
    ),
    "svox2": (
        "sxyu/svox2",
        "none; 3D radiance-field (Plenoxels) library, 'includes a CUDA extension' "
        "(README.md:52), CUDAExtension (setup.py:38)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twelfth-sample tree was extracted from (HEAD of the stored mirror, with
#: /work/notes/extract.py, which left out blobs absent from a mirror: openmm 4,
#: ctransformers 2, none in the others).
TWELFTH_COMMITS: dict[str, str] = {
    "COSMA": "2df0432ce9b2863c556bb634f7b2c7d1f5b6fc1e",
    "ArborX": "1112ce6e5fd50bcc816da5e82631fd31d3a6d0f6",
    "openmm": "1a47c2f68439c579e27666e5f985ea1a46dd105a",
    "AITemplate": "c8aad3774cddca8934f06281755aff5d7e5def40",
    "ctransformers": "ed02cf4b9322435972ff3566fd4832806338ca3d",
    "quip-sharp": "1d8f873e9a2a8b86b12bb1064c312c5689b77d98",
    "lightseq": "a7ab0dabe63ede35016ab151c5adfdf1b86f2eb4",
    "moderngpu": "267cc8d02c03f00f1656f1205c61c946a1e530b0",
    "torch-harmonics": "9e9fa5373bc66add241638ef7a481da2e5c80d32",
    "svox2": "ee80e2c4df8f29a407fda5729a494be94ccf9234",
}
TWELFTH_ROUTE = tuple(list(TWELFTH_SET)[:5])  # the 5 with a documented route
