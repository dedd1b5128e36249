"""Issue 24's ninth sample for benchmarks/real_repos.py (``--set ninth``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's ninth sample (held out, chosen 2026-11-28 13:53-13:57 UTC after the eighth sample
#: had been seen and used for fixing classes): 8 public repositories never used by gpuport as
#: scan inputs (not in any set or list of benchmarks/ -- real_repos*.py, effort_ports.toml,
#: port_backtest.toml, port_fresh*.md, kb_spotcheck_pool --, not under /work/trees before, not in
#: docs/scan.md), 6 whose own files document a ROCm/HIP route and contain native CUDA code with
#: its build files, and 2 whose files document none, of mixed kinds: a sparse 3D FFT library with
#: a CUDA/ROCM CMake backend switch (SpFFT), a molecular-dynamics code built by a CUDA makefile
#: and a HIP makefile over one source tree (GPUMD), an electronic-structure library with CUDA/ROCm
#: options (SIRIUS), a distributed dense linear algebra library with DLAF_WITH_CUDA/HIP
#: (DLA-Future), a performance suite with per-backend kernel variant files (RAJAPerf), an LLM
#: training library with JIT-built fused CUDA kernels hipified on ROCm (gpt-neox), a CUDA
#: gradient-boosting library (ThunderGBM) and a CUDA mining plugin (xmrig-cuda). Status and
#: allowed verdicts were written down from each repository's own files (``file:line`` in the
#: snapshot, ``NINTH_COMMITS``) before gpuport was run on any of them. Run only twice: before
#: the change (main c6834f9) and on the final code.
NINTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "SpFFT": (
        "eth-cscs/SpFFT",
        "C++ sparse 3D FFT; 'support for MPI, OpenMP, CUDA and ROCm' (README.md:7), ROCm 5.0+ "
        "for AMD hardware (README.md:50), SPFFT_GPU_BACKEND OFF/CUDA/ROCM (README.md:66; "
        "CMakeLists.txt:51,83-88)",
        ("ready", "minor work"),
    ),
    "GPUMD": (
        "brucefan1983/GPUMD",
        "CUDA/HIP molecular dynamics; 'Building for AMD GPUs (ROCm/HIP)': make -f makefile.hip "
        "(doc/installation.rst:23,64-77), CUDA and HIP APIs in src/utilities/gpu_macro.cuh "
        "(developers/readme.md:23,51-53), src/makefile.hip",
        ("ready", "minor work"),
    ),
    "SIRIUS": (
        "electronic-structure/SIRIUS",
        "C++17 electronic structure with 'CUDA/ROCm programming models' (README.md:30), "
        "'Build with ROCm support for AMD GPUs' (README.md:71-72), SIRIUS_USE_ROCM "
        "(CMakeLists.txt:24,203)",
        ("ready", "minor work"),
    ),
    "DLA-Future": (
        "eth-cscs/DLA-Future",
        "distributed dense linear algebra; HIP/ROCm 'AMD GPUs only' (BUILD.md:71), +rocm "
        "amdgpu_target (BUILD.md:22), DLAF_WITH_HIP (BUILD.md:109; CMakeLists.txt:38,113)",
        ("ready", "minor work"),
    ),
    "RAJAPerf": (
        "LLNL/RAJAPerf",
        "performance suite; FOO-Hip.cpp 'contains HIP GPU variants' (docs/sphinx/dev_guide/"
        "kernel_class.rst:40), HIP back-end build (docs/sphinx/user_guide/build.rst:27,162-168), "
        "ENABLE_HIP (CMakeLists.txt:12,166,218)",
        ("ready", "minor work"),
    ),
    "gpt-neox": (
        "EleutherAI/gpt-neox",
        "LLM training; 'We now support AMD GPUs (MI100, MI250X) through JIT fused-kernel "
        "compilation' (README.md:31,125-132), torch.version.hip branches "
        "(megatron/fused_kernels/__init__.py:39,71,96-101)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "thundergbm": (
        "Xtra-Computing/thundergbm",
        "none; GPU gradient boosting on CUDA 9+ (README.md:40-44), CUDA wheels only (README.md:50)",
        ("major work", "blocked"),
    ),
    "xmrig-cuda": (
        "xmrig/xmrig-cuda",
        "none; 'the CUDA plugin for the XMRig miner, which provides support for NVIDIA GPUs' "
        "(README.md:2), CUDA versions only (README.md:11)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each ninth-sample tree was extracted from (HEAD of the stored mirror; blobs
#: absent from the mirror left out: 2 in GPUMD, 1 in RAJAPerf, 1 in thundergbm; RAJAPerf's
#: RAJA and BLT submodules are not in its snapshot).
NINTH_COMMITS: dict[str, str] = {
    "SpFFT": "17ddf73fe65547f93a5439185baf10cd7b49532f",
    "GPUMD": "d98135deee27068f4f30605fbc581d4c613fff99",
    "SIRIUS": "bc02c48c2df71b2a1e819a420699828d0c27e269",
    "DLA-Future": "0765fdab368d4226c28dac88a1695894f5d46ea7",
    "RAJAPerf": "9af20b3fceeaf6e4cc5ab48cb002f8927fb4c124",
    "gpt-neox": "ea7aefd8f8e183256992d9fede4d7c71a46d67a5",
    "thundergbm": "e3f824e4bdeba9230f4230b121f87119f63c425c",
    "xmrig-cuda": "01d534864b5d82c2ab153af4d995414e419ed069",
}
NINTH_ROUTE = tuple(list(NINTH_SET)[:6])  # the 6 with a documented route
