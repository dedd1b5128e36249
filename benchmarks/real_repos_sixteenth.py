"""Issue 24's sixteenth sample for benchmarks/real_repos.py (``--set sixteenth``), kept apart
so the script stays short."""

from __future__ import annotations

#: Issue 24's sixteenth sample (held out, chosen 2026-11-29 09:22-09:26 UTC, after the
#: fifteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked against every benchmarks/real_repos*.py list and by grep -ril against
#: benchmarks/ and docs/ -- verl, ComfyUI, hypre, dbcsr, gsplat, vllm, llama.cpp, koboldcpp and
#: others were candidates dropped because they were named there; InternImage, DualSPHysics and
#: mip-splatting were dropped because a blob was absent from the stored mirror
#: (docs/figs/intern_pipeline.png, bin/linux/GenCase_linux64, media/bicycle_3dgs_vs_ours.gif);
#: BEVFormer was dropped because it holds no CUDA code of its own; Swin-Transformer and DCNv2
#: were spares, not needed), 5 whose own files document a ROCm/HIP route and 5 whose files
#: document none. Route: a plain-Makefile HPC mini-app with one source tree per programming
#: model, a hipcc-built hip/ among them (RSBench), a CMake C++ AMReX wind-energy code with an
#: AMR_WIND_ENABLE_ROCM option and a GPU-HIP CI job (amr-wind), a container recipe with an
#: AMD_GPU build target and ROCm images (ai-dock comfyui), a PyTorch CUDAExtension package whose
#: setup.py builds for ROCm torch (pytorch_cluster), and a Python model-serving cluster manager
#: with AMD GPU support and a ROCm stage in its image (gpustack). No route: a CMake C++/CUDA
#: agent-based simulation library with Python bindings (FLAMEGPU2), a Makefile/Dockerfile CUDA
#: stress test on the driver API (gpu-burn), a Jupyter container on nvidia/cuda with CUDA wheels
#: (gpu-jupyter), a Python RLHF training framework on an NGC PyTorch container (OpenRLHF), and
#: a PyTorch CUDAExtension of sparse convolutions (SparseConvNet). Status and allowed verdicts
#: were written down from each repository's own files (``file:line`` in the snapshot,
#: ``SIXTEENTH_COMMITS``) before gpuport was run on any of them.
SIXTEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "RSBench": (
        "ANL-CESAR/RSBench",
        "plain-Makefile C/CUDA/HIP HPC mini-app, one source tree per model; 'RSBench/hip ... "
        "written in HIP ... derived from CUDA using an automatic conversion tool' "
        "(README.md:44-45), hip/Makefile COMPILER = amd -> CC = hipcc (hip/Makefile:5,34-35)",
        ("ready", "minor work"),
    ),
    "amr-wind": (
        "Exawind/amr-wind",
        "CMake C++ AMReX wind-energy code; option AMR_WIND_ENABLE_ROCM 'Enable ROCm/HIP' "
        "(CMakeLists.txt:35,71-72), AMReX_GPU_BACKEND HIP (cmake/set_amrex_options.cmake:38), "
        "'CUDA to target NVIDIA GPUs, ROCM for AMD GPUs' (README.md:98), AMR_WIND_ENABLE_ROCM "
        "'Enable AMD ROCM GPU builds' (docs/sphinx/user/build.rst:91-93), GPU-HIP CI job with "
        "rocm-dev and hipcc (.github/workflows/ci.yml:295,322-336); amrex/AMReX-Hydro are empty "
        "submodules in the tree",
        ("ready", "minor work"),
    ),
    "comfyui-docker": (
        "ai-dock/comfyui",
        "container recipe for ComfyUI; 'Supported Platforms: NVIDIA CUDA, AMD ROCm, CPU' and "
        ":rocm-[x.x.x-runtime] tags (README.md:26-27,35), XPU_TARGET AMD_GPU -> layer0/amd.sh "
        "(build/COPY_ROOT_0/opt/ai-dock/bin/build/layer0/init.sh:11-12), torch from the "
        "whl/rocm index (build/COPY_ROOT_0/opt/ai-dock/bin/build/layer0/amd.sh:9-13), amd-base CI "
        "matrix rocm 6.0-runtime (.github/workflows/docker-build.yml:185-191,262)",
        ("ready", "minor work"),
    ),
    "pytorch_cluster": (
        "rusty1s/pytorch_cluster",
        "PyTorch CUDAExtension graph-clustering package; WITH_CUDA when CUDA_HOME or "
        "torch.version.hip (setup.py:17-19), USE_ROCM define and __HIP_NO_HALF_CONVERSIONS__ "
        "undef on ROCm torch (setup.py:77-81), hipify work-around (setup.py:37-38,120-123), "
        "#ifdef USE_ROCM in csrc/version.cpp:9,29; the README documents only CUDA wheels "
        "(README.md:35-45)",
        ("ready", "minor work"),
    ),
    "gpustack": (
        "gpustack/gpustack",
        "Python GPU-cluster manager for model serving; 'Supported Accelerators: ... AMD GPU' "
        "(README.md:55-59), 'AMD GPU Driver that supports AMD ROCm 7.0 or higher' and the AMD "
        "container runtime (docs/installation/requirements.md:38,78-83), a rocm/dev-ubuntu "
        "stage vendored into the image (pack/Dockerfile:26,295,564)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "FLAMEGPU2": (
        "FLAMEGPU/FLAMEGPU2",
        "none; CMake C++/CUDA agent-based simulation library with Python bindings, 'optimised "
        "CUDA code' (README.md:13), requires CUDA >= 12.0 (README.md:61-62), "
        "enable_language(CUDA) (CMakeLists.txt:45-47); no ROCm/HIP word in the tree",
        ("major work", "blocked"),
    ),
    "gpu-burn": (
        "wilicc/gpu-burn",
        "none; 'Multi-GPU CUDA stress test' (README.md:3), Makefile that finds nvcc and builds "
        "compare.fatbin with nvcc -fatbin (Makefile:1-8,43,49-50), loaded with the CUDA driver "
        "API cuModuleLoad (gpu_burn-drv.cpp:33,244), links -lcuda -lcublas (Makefile:19,26); "
        "nvidia/cuda base images (Dockerfile:5,15)",
        ("major work", "blocked"),
    ),
    "gpu-jupyter": (
        "iot-salzburg/gpu-jupyter",
        "none; Jupyter container 'based on NVIDIA's official CUDA Docker image' (README.md:19), "
        "needs an NVIDIA GPU, CUDA and the NVIDIA Container Toolkit (README.md:41-44), FROM "
        "nvidia/cuda:12.9.1-cudnn-runtime (custom/header.Dockerfile), tensorflow[and-cuda], "
        "torch from whl/cu128, cuda-nvcc (custom/gpulibs.Dockerfile)",
        ("major work", "blocked"),
    ),
    "OpenRLHF": (
        "OpenRLHF/OpenRLHF",
        "none; Python RLHF training framework, NVIDIA container only (README.md:294-295, 316; "
        "dockerfile/Dockerfile:1 nvcr.io/nvidia/pytorch), pins deepspeed==0.19.5, "
        "flash-attn==2.8.3, pynvml (requirements.txt:5,7,18); no kernels of its own, and its "
        "heavy dependencies have ROCm builds, so (as lightllm in the fourteenth) minor or major",
        ("minor work", "major work"),
    ),
    "SparseConvNet": (
        "facebookresearch/SparseConvNet",
        "none; PyTorch sparse-convolution package, 'Tested with PyTorch 1.3, CUDA 10.0' "
        "(README.md:119-122), CUDAExtension sparseconvnet.SCN with sparseconvnet/SCN/cuda.cu "
        "when CUDA is available (setup.py:8,27-30)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each sixteenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
SIXTEENTH_COMMITS: dict[str, str] = {
    "RSBench": "34b644787ea9af4fb188e1253da72e09bbed9989",
    "amr-wind": "2cfeff87b5ba6bbe96afe0b7e46af1fed1f95879",
    "comfyui-docker": "199ee29c1a799a2a7bdab65b558dbfb26bcc1bf9",
    "pytorch_cluster": "3d1d9e3967c77c757a68d8aad37d0171e93018e2",
    "gpustack": "47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d",
    "FLAMEGPU2": "1a11aea7f7620825233810f2410b08bca0fd6e4e",
    "gpu-burn": "3ead140434da9473582b68452f7115967a7a0581",
    "gpu-jupyter": "20efdb2e9a3f4f00b4d42c11b176527eba06f736",
    "OpenRLHF": "3c3be6234e0cb353e76bb8019947db9dfe99fca7",
    "SparseConvNet": "cf251d058959a9dbaccb25fc919dc4f4548be232",
}
SIXTEENTH_ROUTE = tuple(list(SIXTEENTH_SET)[:5])  # the 5 with a documented route
