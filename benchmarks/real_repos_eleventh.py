"""Issue 24's eleventh sample for benchmarks/real_repos.py (``--set eleventh``), kept apart so
the script stays short."""

from __future__ import annotations

#: Issue 24's eleventh sample (held out, chosen 2026-11-29 01:04-01:08 UTC, after the tenth
#: sample had been seen): 10 public repositories never used by gpuport as inputs (names checked
#: by grep -i against benchmarks/*.py, *.md, *.toml, benchmarks/results/* and docs/*.md --
#: comfy-kitchen, AutoAWQ_kernels, causal-conv1d, nerfacc, torchao, GPTQModel and others were
#: candidates dropped because they were named there), 5 whose own files document a ROCm/HIP
#: route and 5 whose files document none. Route: an LLM runtime built with hipBLAS (PowerInfer),
#: an LLM serving engine with its own quantized CUDA kernels and a USE_ROCM build (fastllm), a
#: CMake C++ graph library with an AMD backend (gunrock), a combustion simulation code on AMReX
#: (PeleC; AMReX is a submodule, absent from the snapshot), a quantum-circuit simulator with a
#: HIP build of its GPU part (qulacs). No route: a multi-LoRA serving engine with a CUDA kernel
#: (S-LoRA), a quantization library with a CUDA kernel (SqueezeLLM), a PyTorch CUDA-extension
#: research repo (Pointnet2_PyTorch), a 3D renderer (CMake C++) whose GPU path is CUDA+OptiX
#: (pbrt-v4) and a CMake C++ CUDA hashing library (warpcore). Two candidates were dropped as
#: ambiguous: VPTQ (README says "early ROCm support", but its CMake build needs the CUDA
#: toolkit) and lorax (ROCm bits in server Makefiles, no documented route). No app shipped
#: with containers is in the sample. Status and allowed verdicts were written down from each
#: repository's own files (``file:line`` in the snapshot, ``ELEVENTH_COMMITS``) before gpuport
#: was run on any of them.
ELEVENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "PowerInfer": (
        "SJTU-IPADS/PowerInfer",
        "LLM runtime (llama.cpp-based); 'We now provide support for AMD devices with ROCm' "
        "(README.md:17), 'If you have an AMD GPU: ... cmake -S . -B build -DLLAMA_HIPBLAS=ON "
        "-DAMDGPU_TARGETS=gfx1100' (README.md:122-125), LLAMA_HIPBLAS option "
        "(CMakeLists.txt:92,349)",
        ("ready", "minor work"),
    ),
    "fastllm": (
        "ztxz16/fastllm",
        "LLM inference/serving engine with its own quantized CUDA kernels ('ftllm server', "
        "README.md:112-115); 'supports ROCm, AMD GPU' (README.md:40), ROCm build guide "
        "'bash install.sh -DUSE_ROCM=ON' (docs/rocm.md:42), USE_ROCM option with hipify and "
        "enable_language(HIP) (CMakeLists.txt:11,449-451)",
        ("ready", "minor work"),
    ),
    "gunrock": (
        "gunrock/gunrock",
        "CMake C++ graph-analytics library; 'CUDA Toolkit ... or ROCm/HIP (AMD) version 6.4+' "
        "(README.md:24), 'For AMD/ROCm Backend: cmake ... -DESSENTIALS_AMD_BACKEND=ON "
        "-DCMAKE_HIP_ARCHITECTURES=gfx950' (README.md:49-56)",
        ("ready", "minor work"),
    ),
    "PeleC": (
        "AMReX-Combustion/PeleC",
        "compressible combustion simulation on AMReX; 'MPI + GPU (CUDA/HIP/DPC++)' "
        "(README.rst:9), PELE_ENABLE_HIP option (CMakeLists.txt:36); AMReX/PelePhysics are "
        "submodules, absent from the snapshot",
        ("ready", "minor work"),
    ),
    "qulacs": (
        "qulacs/qulacs",
        "quantum-circuit simulator (CMake C++ with Python binding); HIP build of the GPU part: "
        "'if (USE_GPU AND USE_HIP) # ROCm HIP for AMD Instinct Accelerator, project(qulacs "
        "LANGUAGES HIP)' (src/gpusim/CMakeLists.txt:8-10), USE_HIP passed by setup.py:59-60",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "S-LoRA": (
        "S-LoRA/S-LoRA",
        "none; multi-LoRA serving engine, 'CUDA 11.8 compatible GPU' (README.md:44), 'custom "
        "CUDA kernels' (README.md:29), CUDAExtension (setup.py:29) of "
        "slora/csrc/bgmv/bgmv_all.cu",
        ("major work", "blocked"),
    ),
    "SqueezeLLM": (
        "SqueezeAILab/SqueezeLLM",
        "none; quantization library with a CUDA kernel (squeezellm/quant_cuda_kernel.cu), "
        "built by 'python setup_cuda.py install' (README.md:38)",
        ("major work", "blocked"),
    ),
    "Pointnet2_PyTorch": (
        "erikwijmans/Pointnet2_PyTorch",
        "none; PyTorch CUDA-extension research repo, 'custom ops ... ONLY supported on the GPU "
        "using CUDA' (README.rst:18), pointnet2_ops_lib/pointnet2_ops/_ext-src/src/*_gpu.cu",
        ("major work", "blocked"),
    ),
    "pbrt-v4": (
        "mmp/pbrt-v4",
        "none; 3D renderer (CMake C++); 'rendering on GPUs is available on systems that have "
        "CUDA and OptiX' (README.md:51,188-191); CPU path builds without a GPU",
        ("major work", "blocked"),
    ),
    "warpcore": (
        "sleeepyjack/warpcore",
        "none; CMake C++ hashing library 'on CUDA-accelerators' (README.md:3,6), needs a "
        "'CUDA-capable device' and 'NVIDIA CUDA toolkit' (README.md:27-28)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each eleventh-sample tree was extracted from (HEAD of the stored mirror;
#: PowerInfer, fastllm, PeleC, pbrt-v4 and warpcore were extracted with /work/notes/extract.py,
#: which left out 1-3 blobs absent from each mirror).
ELEVENTH_COMMITS: dict[str, str] = {
    "PowerInfer": "d3ebd7c5666348cf43c22f0d62dfbc9a763cffb8",
    "fastllm": "d3aea32f809b8b89b152643a202068c35acffbf9",
    "gunrock": "01f125c85498c52ab0a1b8d33c2716d0b0dc3a57",
    "PeleC": "203736c2009bc114b6aecdfdf40ef46eeb4859f8",
    "qulacs": "4f6de32cca807ec4cabf1107e3806786cb953c56",
    "S-LoRA": "c1ddf488781ea7f551cd0bb07bfd097124c93411",
    "SqueezeLLM": "a5fd71f353bf569feb7b55737c1c1493e78e8f31",
    "Pointnet2_PyTorch": "b5ceb6d9ca0467ea34beb81023f96ee82228f626",
    "pbrt-v4": "5f7a606806a4ac7b939131ded9d7a30ebd02416e",
    "warpcore": "3745e9da0697db4bcbb116ec73c2ab49106cef10",
}
ELEVENTH_ROUTE = tuple(list(ELEVENTH_SET)[:5])  # the 5 with a documented route
