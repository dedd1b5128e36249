"""Issue 24's twentieth sample for benchmarks/real_repos.py (``--set twentieth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twentieth sample (held out, chosen 2026-11-29 13:16-13:35 UTC, after the
#: nineteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked against every benchmarks/real_repos*.py list, benchmarks/*.toml,
#: benchmarks/port_fresh*.md and by grep -ril against benchmarks/ and docs/ -- heffte, stdgpu,
#: stable-diffusion.cpp, exllamav2, hypre, VkFFT, superlu_dist, occa, alpaka, tilelang,
#: whisper.cpp, mlc-llm, xgboost, colmap, OpenPCDet, Deformable-DETR, GroundingDINO, Umpire,
#: COSMA, SpFFT, qsim, hoomd-blue, deepmd-kit, aphrodite-engine, kaldi, CloverLeaf, Laghos,
#: WarpX, DBCSR, qiskit-aer, cholla, sphexa, thundergbm, sputnik, TIGRE, astra-toolbox,
#: darknet, marian, nunchaku, marlin, DualSPHysics, LMCache, gemlite, hqq, megablocks, BitBLAS,
#: openfold, jittor, PowerInfer, ktransformers, nerfacc, gsplat and others were candidates
#: dropped because they were named there, and UCC because the string "ucc" occurs there;
#: SV-Sim, dynet and NWQ-Sim were dropped because a blob was absent from the stored mirror;
#: FlagAttention was dropped because its files document no AMD route and it has no CUDA code
#: of its own (pure Triton); hwloc and cuda_voxelizer were fetched as spares and not used),
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a Python deep-learning compiler with a HIP runtime/hipcc backend and an opt-in ROCm
#: CI job (hidet), an autotools C performance-counter library with rocm/rocp_sdk/amd_smi
#: components next to its cuda/nvml ones (papi), a CMake C++ FFT benchmark with a rocFFT
#: backend whose CMake still asks for HCC (gearshifft), a Makefile C++/Python
#: particle-in-cell code whose config=gpu_amd compiles its .cu kernels with -x hip (Smilei),
#: and a CMake C++ communication library with ALUMINUM_ENABLE_ROCM and RCCL (Aluminum).
#: No route: a Makefile bitcoin vanity-address searcher with inline-PTX CUDA (VanitySearch),
#: a PyTorch CUDAExtension LUT-quantized GEMM on CUTLASS/CuTe (flute), a CMake+pybind11 room
#: impulse response simulator with CUDA and cuRAND (gpuRIR), a CMake C++20/CUDA graph
#: nearest-neighbour search library (ggnn), and a CMake+Python LLM megakernel
#: superoptimizer on CUTLASS (mirage). Status and allowed verdicts were written down from each
#: repository's own files (``file:line`` in the snapshot, ``TWENTIETH_COMMITS``) before
#: gpuport was run on any of them.
TWENTIETH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "hidet": (
        "hidet-org/hidet",
        "Python DL compiler; a HIP backend beside CUDA: hip-python-fork 'for hip runtime api' "
        "(pyproject.toml:43), python/hidet/hip/ runtime, hipcc found and used to build "
        "kernels (python/hidet/backend/build.py:209-251), hip.arch option 'e.g., gfx1100' "
        "(python/hidet/option.py:332), a ROCm torch device mapped to 'hip' "
        "(python/hidet/graph/frontend/torch/utils.py:130-131), src/hidet/runtime/hip/"
        "context.cpp in the runtime library (CMakeLists.txt:24), and an opt-in CI job "
        "run-test-amdgpu on a [self-hosted, rocm] runner in rocm/dev-ubuntu-22.04 with ROCm 6.2 "
        "torch running the test suite (.github/workflows/tests.yaml:330-364); the README says "
        "it 'focuses on optimizing the inference workloads on NVIDIA GPUs' (README.md:15-17) "
        "and cuBLAS/cuDNN ops are CUDA-only",
        ("ready", "minor work"),
    ),
    "papi": (
        "icl-utk-edu/papi",
        "autotools C performance-counter library; the ROCM component 'exposes numerous "
        "performance events on AMD GPUs', enabled with ./configure --with-components=rocm "
        "(src/components/rocm/README.md:3,14), likewise rocp_sdk (src/components/rocp_sdk/"
        "README.md:3,13) and amd_smi (src/components/amd_smi/README.md:92); the cuda and nvml "
        "components (and their .cu tests) are built only with --with-components=cuda "
        "(src/components/cuda/README.md:15-17); the default build adds only sysdetect "
        "(src/configure.in:1687-1693), whose AMD and NVIDIA probes dlopen the vendor "
        "libraries under HAVE_ROCM/HAVE_CUDA (src/components/sysdetect/amd_gpu.c:21,245)",
        ("ready", "minor work"),
    ),
    "gearshifft": (
        "mpicbg-scicomp/gearshifft",
        "CMake C++ FFT benchmark; supported libraries include 'rocFFT (ROCm)' (README.md:17-21), "
        "option GEARSHIFFT_BACKEND_ROCFFT ON 'requires HCC as compiler' (cmake/"
        "gearshifft_options.cmake:16), inc/libraries/rocfft/ on the HIP runtime API; but the "
        "backend is enabled only 'if(hip_FOUND AND hcc_DIR)' and links hip::hip_hcc "
        "(CMakeLists.txt:269-298), and HCC is gone from current ROCm, so the documented rocFFT "
        "route does not configure as it stands (the FFTW and clFFT backends build on any "
        "host); the cuFFT backend is CUDA-only and not on the route: minor or major work",
        ("minor work", "major work"),
    ),
    "Smilei": (
        "SmileiPIC/Smilei",
        "Makefile C++/Python particle-in-cell code; 'Both AMD's GPUs and Nvidia's GPUs are "
        "supported' (doc/Sphinx/Understand/GPU_offloading.rst:16), 'make config=gpu_amd # For "
        "AMD GPU acceleration' with hipcc/clang from ROCm (doc/Sphinx/Use/installation.rst:"
        "26-27,115,167,183), the gpu_amd configuration compiles every src/*.cu with -x hip "
        "-DSMILEI_ACCELERATOR_GPU_OMP (makefile:216-225), a machine file for Adastra's MI250X "
        "(scripts/compile_tools/machine/adastra:1-20); gpu_nvidia uses nvcc and OpenACC "
        "(makefile:202-214)",
        ("ready", "minor work"),
    ),
    "Aluminum": (
        "LLNL/Aluminum",
        "CMake C++ MPI/GPU communication library; 'HIP/ROCm support (for AMD GPUs): -D "
        "ALUMINUM_ENABLE_ROCM=YES', RCCL with -D ALUMINUM_ENABLE_NCCL=YES (docs/build.rst:"
        "17,22,72-74), 'NCCL ... or AMD's RCCL library for AMD GPUs', HostTransfer on 'the "
        "CUDA or HIP runtime' (README.md:24-25), option ALUMINUM_ENABLE_ROCM with "
        "enable_language(HIP), RCCL and rocm_smi (CMakeLists.txt:61,407-477); CUDA and ROCm "
        "are mutually exclusive (CMakeLists.txt:63-66)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "VanitySearch": (
        "JeanLucPons/VanitySearch",
        "none; Makefile C++ bitcoin vanity-address searcher with 'CUDA optimisation via inline "
        "PTX assembly' (README.md:15; asm blocks in GPU/GPUMath.h, e.g. :354); the default "
        "'make all' is CPU-only, the GPU engine is built with 'make gpu=1 CCAP=...' (README.md:"
        "190-213) by nvcc -gencode=arch=compute_$(ccap) (Makefile:34-36,59-65) and linked "
        "with -lcudart (Makefile:46); Docker images per CUDA compute capability (README.md:249); "
        "the GPU engine needs its PTX rewritten",
        ("major work", "blocked"),
    ),
    "flute": (
        "HanGuo97/flute",
        "none; PyTorch LUT-quantized GEMM kernels; wheels 'For CUDA 12.1/11.8/12.4' "
        "(README.md:40-45), GPUs 'A100 A6000 RTX 4090 | H100 (unoptimized)' (README.md:230), "
        "setup.py builds one CUDAExtension from flute/csrc/*.cu (setup.py:15,90-101) against "
        "CUTLASS (CUTLASS_PATH, setup.py:24); the kernels are CuTe/CUTLASS (flute/csrc/"
        "config.hpp:5, conversion_utils.hpp:3-4)",
        ("major work", "blocked"),
    ),
    "gpuRIR": (
        "DavidDiazGuerra/gpuRIR",
        "none; Python room-impulse-response simulator 'using CUDA GPUs' (README.md:4), needs "
        "'the NVIDIA CUDA Toolkit ... that includes cuRAND' (README.md:24), pip install via "
        "setup.py's CMakeBuild (setup.py:13-22) of project(gpuRIR LANGUAGES CXX CUDA), "
        "find_package(CUDA), src/gpuRIR_cuda.cu, CUDA_ARCHITECTURES all-major and "
        "CUDA_curand_LIBRARY (CMakeLists.txt:5-6,18,21,52)",
        ("major work", "blocked"),
    ),
    "ggnn": (
        "cgtuebingen/ggnn",
        "none; 'GGNN performs nearest-neighbor computations on CUDA-capable GPUs' (README.md:3), "
        "'implemented in C++20/CUDA', needs CUDA Toolkit 12+ and 'a CUDA-capable GPU is "
        "required' (README.md:29-33), pip install . (README.md:24); CMake LANGUAGES CXX CUDA, "
        "find_package(CUDAToolkit 12 REQUIRED), CUDA architectures from TORCH_CUDA_ARCH_LIST "
        "(CMakeLists.txt:5,13,71-77)",
        ("major work", "blocked"),
    ),
    "mirage": (
        "mirage-project/mirage",
        "none; tensor-algebra superoptimizer and Mirage Persistent Kernel, 'a fused GPU kernel' "
        "for multi-GPU LLM inference (README.md:10-14), 'CUDA 11.0 or higher and CUDNN 8.0' "
        "(INSTALL.md:22), wheels 'compiled with CUDA 12.2' (INSTALL.md:11), config.cmake "
        "USE_CUDA ON / USE_NKI OFF (an AWS Neuron backend, config.cmake:1,4), project LANGUAGES "
        "C CXX CUDA with CMAKE_CUDA_ARCHITECTURES 75-90 and CUTLASS (CMakeLists.txt:12-13,28,54; "
        "setup.py:103-104), nvshmem tensors for multi-GPU (README.md:81); deps/ submodules "
        "(cutlass, json, z3) not in the snapshot",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twentieth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
TWENTIETH_COMMITS: dict[str, str] = {
    "hidet": "f962fc32f6c67b581c125d68134d0de0599d4041",
    "papi": "48842c66dc2907899a50efcdcfd2ed7ca1c7e525",
    "gearshifft": "c753cf4dad3b7234b2e4ce608171dbdcb42f2c59",
    "Smilei": "2379109c3d55a5b857c23a93545053bf290fc84c",
    "Aluminum": "e9bfa94e0db5c0c6c9a93867cd6f1bf906c424d2",
    "VanitySearch": "c8d48ce5f03f5357c0e87cbdb3e1e93cd50af88b",
    "flute": "9eb83a12d56949bbe7fe9c836ba97a67bd1e3761",
    "gpuRIR": "fd8af43a4a113d3c2c05f0085a0119ecb1f1a484",
    "ggnn": "4f8088f10747c827b3051336da6541317e2dc9bf",
    "mirage": "de8745d965c9c5ad7eb14c87b11d2f6a54eb0244",
}
TWENTIETH_ROUTE = tuple(list(TWENTIETH_SET)[:5])  # the 5 with a documented route
