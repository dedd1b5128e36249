"""Issue 24's fifteenth sample for benchmarks/real_repos.py (``--set fifteenth``), kept apart
so the script stays short."""

from __future__ import annotations

#: Issue 24's fifteenth sample (held out, chosen 2026-11-29 07:38-07:45 UTC, after the
#: fourteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked by grep -ril against benchmarks/ and docs/ -- heffte, VkFFT, stdgpu,
#: kernel_tuner, stable-diffusion.cpp, GPUMD, hashcat, occa, thundersvm, kaolin, AMGX,
#: cholla, SpFFT, tinygrad, hoomd and others were candidates dropped because they were named
#: there; miniBUDE and ccminer were dropped because a blob was absent from the stored mirror
#: (utils/matrix_plotter/gpu_example/data.tgz, compat/curl-for-windows/.../libcurl.x64.lib);
#: tabbyAPI was dropped because its own files contradict themselves on AMD (an "AMD ROCm"
#: issue-template choice, but "AMD GPUs are not supported" for its exllamav3 backend,
#: backends/exllamav3/model.py:310); CloverLeaf was a spare, not needed, too like TeaLeaf),
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none. Route: an
#: autotools Fortran/C dense eigensolver with AMD GPU kernels (elpa), a CMake/BLT C++
#: deterministic-transport mini-app on RAJA with a HIP option and MI250X/MI100 host-configs
#: (Kripke), a CMake C++ heat-conduction mini-app with one model per programming model,
#: HIP among them (TeaLeaf), a Python-only LLM fine-tuning framework with a ROCm container
#: (LLaMA-Factory), and a Python package that JIT-compiles kernels through LLVM with an AMDGPU
#: backend and an AMDGPU CI job (taichi). No route: a Go micromagnetic simulator whose CUDA
#: kernels a Makefile compiles with nvcc (mumax3), a CMake C++/CUDA FSA library with Python
#: bindings (k2), a PyTorch CUDAExtension of CUTLASS 4-bit kernels (QuaRot), a PyTorch
#: CUDAExtension of Lie-group kernels (lietorch), and a plain-Makefile CUDA SPH fluid code
#: (gpusph). Status and allowed verdicts were written down from each repository's own files
#: (``file:line`` in the snapshot, ``FIFTEENTH_COMMITS``) before gpuport was run on any of them.
FIFTEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "elpa": (
        "marekandreas/elpa",
        "autotools Fortran/C dense eigensolver; configure --enable-amd-gpu-kernels / "
        "--enable-amd-gpu 'EXPERIMENTAL: build AMD GPU kernels' (documentation/INSTALL.md:66,77), "
        "'Building for AMD GPUs' with CXX=hipcc and rocblas (documentation/INSTALL.md:594-600), "
        "'GPU support of AMD ... introduced' (documentation/INSTALL.md:214-219), hipblas/hipcub "
        "switches (configure.ac:2623-2660)",
        ("ready", "minor work"),
    ),
    "Kripke": (
        "LLNL/Kripke",
        "CMake/BLT C++ transport mini-app on RAJA; 'CMake ... 3.23 or later for HIP support' "
        "(README.md:78), host-config llnl-toss4-MI250X-rocm5-vernal.cmake (README.md:170), "
        "ENABLE_HIP -> KRIPKE_USE_HIP, KRIPKE_ARCH HIP (CMakeLists.txt:237-243), ENABLE_HIP On "
        "with CMAKE_HIP_ARCHITECTURES gfx90a (host-configs/llnl-toss4-MI250X-rocm5-vernal.cmake:"
        "21,24)",
        ("ready", "minor work"),
    ),
    "TeaLeaf": (
        "UoB-HPC/TeaLeaf",
        "CMake C++ heat-conduction mini-app; implemented in CUDA, HIP, OpenMP, StdPar, Kokkos, "
        "SYCL (README.md:19-28), register_model(hip USE_HIP ...) (CMakeLists.txt:253), its own "
        "src/hip model with 'the AMD HIP C++ compiler' (src/hip/model.cmake:3)",
        ("ready", "minor work"),
    ),
    "LLaMA-Factory": (
        "hiyouga/LLaMA-Factory",
        "Python-only LLM fine-tuning framework; 'Documentation (AMD GPU)' (README.md:71), 'For "
        "AMD ROCm users: cd docker/docker-rocm/; docker compose up -d' (README.md:726-731, "
        "776-779), ROCm PyTorch base image (docker/docker-rocm/Dockerfile:1-2)",
        ("ready", "minor work"),
    ),
    "taichi": (
        "taichi-dev/taichi",
        "Python package with LLVM-JIT kernels; option TI_WITH_AMDGPU 'Build with the AMDGPU "
        "backend' (cmake/TaichiCore.cmake:6,108-111,207-213; docs/lang/articles/contribution/"
        "dev_install.md:405), 'Build and Test (AMDGPU)' CI job with -DTI_WITH_AMDGPU:BOOL=ON "
        "(.github/workflows/testing.yml:273-289), ti.amdgpu arch (python/taichi/lang/misc.py:"
        "121-122)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "mumax3": (
        "mumax/3",
        "none; Go micromagnetic simulator, building needs 'an NVIDIA driver, Go, CUDA (<=12.9) "
        "and C' (README.md:25), CUDA kernels compiled with nvcc (cuda/Makefile:4,25-30; "
        "Makefile:18-19)",
        ("major work", "blocked"),
    ),
    "k2": (
        "k2-fsa/k2",
        "none; CMake C++/CUDA FSA library with Python bindings, 'Most of the code is in C++ and "
        "CUDA' (README.md:35), CUDA language enabled when nvcc is found (CMakeLists.txt:33-49); "
        "its only ROCm word is DLPack's device enum (k2/python/host/csrc/dlpack.h:56-57)",
        ("major work", "blocked"),
    ),
    "QuaRot": (
        "spcl/QuaRot",
        "none; PyTorch 4-bit quantization package, 'Compile the QuaRot kernels' (README.md:15-20), "
        "CUDAExtension quarot._CUDA with CUTLASS includes (setup.py:3,52-63)",
        ("major work", "blocked"),
    ),
    "lietorch": (
        "princeton-vl/lietorch",
        "none; PyTorch Lie-group package, 'Requires torch >= 2 and CUDA >= 11' (README.md:28), "
        "TORCH_CUDA_ARCH_LIST (README.md:41), CUDAExtension lietorch_backends/lietorch_extras "
        "(setup.py:3,14,27)",
        ("major work", "blocked"),
    ),
    "gpusph": (
        "GPUSPH/gpusph",
        "none; CUDA SPH fluid simulator, 'using NVIDIA CUDA' (README.rst:10), 'requires a recent "
        "version of the NVIDIA CUDA SDK' (README.rst:25), plain Makefile that errors without "
        "bin/nvcc (Makefile:188-200)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each fifteenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
FIFTEENTH_COMMITS: dict[str, str] = {
    "elpa": "2f09197d8342243f431025686ed59f7bbf2cc6fa",
    "Kripke": "ddcac43cdad999f0346eb682065ef0af1847029d",
    "TeaLeaf": "e70261c0be40537da75b258108ed2898f84f3c58",
    "LLaMA-Factory": "ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30",
    "taichi": "ba0e81dce559fb63a5958bf82feb1d00c55c02fe",
    "mumax3": "a0c5126ac5477b02ee321bebfb2ed5e2d76368b0",
    "k2": "a741ae88abc6995345aa166464a239b7d270dd4c",
    "QuaRot": "5008669b08c1f11f9b64d52d16fddd47ca754c5a",
    "lietorch": "e7df86554156b36846008d8ddbcc4d8521a16554",
    "gpusph": "08ffd94ddc4a076361f0e5f6e2bfde7874ba087f",
}
FIFTEENTH_ROUTE = tuple(list(FIFTEENTH_SET)[:5])  # the 5 with a documented route
