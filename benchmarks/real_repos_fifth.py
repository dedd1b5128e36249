"""Issue 24's fifth sample for benchmarks/real_repos.py (``--set fifth``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's fifth sample (held out, chosen 2026-11-28 after the fourth sample had been seen
#: and used for fixing classes): 9 public repositories never used by gpuport as scan inputs,
#: 6 whose own files document a ROCm route and 3 whose files document none, of mixed kinds:
#: CMake C++ performance-portability libraries (RAJA, Umpire, heFFTe), a benchmark with one
#: implementation per programming model (BabelStream), a C program with CUDA/HIP/OpenCL
#: backends loaded at run time (hashcat), a Python serving engine with a native kernel package
#: (ktransformers), Python packages with one CUDA extension (sam2, fast-hadamard-transform) and
#: NVIDIA's sample collection (cuda-samples). Status and allowed verdicts were written down
#: from each repository's own files (``file:line`` in the snapshot, ``FIFTH_COMMITS``) before
#: gpuport was run on any of them. Candidates dropped before that, also before any run:
#: alpaka, torchvision and ComfyUI (their snapshots are over the fetch limit). Run only twice:
#: on main's code before this round (ef1c5ff) and on the final code.
FIFTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "RAJA": (
        "LLNL/RAJA",
        "CMake C++ portability library; ENABLE_HIP build option "
        "(docs/sphinx/user_guide/config_options.rst:192), hipcc build script "
        "(scripts/lc-builds/toss4_hipcc.sh:14-26), HIP back-end in the release notes "
        "(RELEASE_NOTES.md:59-68,150)",
        ("ready", "minor work"),
    ),
    "BabelStream": (
        "UoB-HPC/BabelStream",
        "benchmark, one implementation per model; HIP among the models (README.md:35, "
        "src/hip/), CUDA, SYCL, Kokkos ... beside it (README.md:105)",
        ("ready", "minor work"),
    ),
    "hashcat": (
        "hashcat/hashcat",
        "C program with run-time CUDA/HIP/OpenCL/Metal backends; AMD GPUs on Linux need "
        "ROCm 5.0+, on Windows the HIP SDK (docs/readme.txt:13-14)",
        ("ready", "minor work"),
    ),
    "heffte": (
        "icl-utk-edu/heffte",
        "CMake C++ FFT library; Heffte_ENABLE_ROCM, the HIP and rocFFT backend "
        "(CMakeLists.txt:7, doxygen/installation.md:68,128-131)",
        ("ready", "minor work"),
    ),
    "ktransformers": (
        "kvcache-ai/ktransformers",
        "Python serving engine + native kernel package; ROCm on AMD GPU, beta (README.md:45, "
        "doc/en/ROCm.md:1-6), kt-kernel built with CPUINFER_USE_ROCM=1 "
        "(doc/en/ROCm.md:71-76, kt-kernel/setup.py:709)",
        ("minor work", "major work"),
    ),
    "Umpire": (
        "LLNL/Umpire",
        "CMake C++ memory-resource library; ENABLE_HIP option "
        "(docs/sphinx/advanced_configuration.rst:24), HIP DeviceAllocator "
        "(src/umpire/CMakeLists.txt:54-58)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "sam2": (
        "facebookresearch/sam2",
        "none; PyTorch model with one optional CUDA extension (setup.py:67-72: "
        "SAM2_BUILD_CUDA=0 skips it, build errors allowed by default)",
        ("ready", "minor work"),
    ),
    "fast-hadamard-transform": (
        "Dao-AILab/fast-hadamard-transform",
        "none; one CUDA extension with 32-bit masks to __shfl_xor_sync "
        "(csrc/fast_hadamard_transform_common.h:65,74)",
        ("major work", "blocked"),
    ),
    "cuda-samples": (
        "NVIDIA/cuda-samples",
        "none; NVIDIA's samples for the CUDA Toolkit 13.0 (README.md:3,17)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each fifth-sample tree was extracted from (HEAD of the stored mirror; blobs
#: absent from the mirror left out: 2 in hashcat, 4 in ktransformers, 4 in sam2, 7 in
#: cuda-samples).
FIFTH_COMMITS: dict[str, str] = {
    "RAJA": "dd5eb76ad8979c21943a75a16bf6168fd39ad752",
    "BabelStream": "57637d572532fc028b6c0964944f1afc27ff5436",
    "hashcat": "d3983edaf22f5370d1bb136c930460bcad2d9f6e",
    "heffte": "4d8d4597b479d1e4709a2b1b4cd7d8922600045f",
    "ktransformers": "95009ea6856c0799e517e93cb12be5e8494bc7ce",
    "Umpire": "5bf5bc182f1e6ee3f6be1d953b68451d3ddc35f5",
    "sam2": "2b90b9f5ceec907a1c18123530e92e794ad901a4",
    "fast-hadamard-transform": "e7706faf8d1c3b9f241e36860640ad1dac644ede",
    "cuda-samples": "c94ff366aed18c797b8a85dfaac7817b0228b420",
}
FIFTH_ROUTE = tuple(list(FIFTH_SET)[:6])  # the 6 with a documented route
