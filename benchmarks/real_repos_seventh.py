"""Issue 24's seventh sample for benchmarks/real_repos.py (``--set seventh``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's seventh sample (held out, chosen 2026-11-28 08:53-08:57 UTC after the sixth sample
#: had been seen and used for fixing classes): 8 public repositories never used by gpuport as
#: scan inputs (not in any set of benchmarks/real_repos*.py, not under /work/trees before, not
#: in docs/scan.md), 6 whose own files document a ROCm/HIP route and 2 whose files document
#: none, of mixed kinds: an image-generation app on ggml (stable-diffusion.cpp), a denoising
#: library with per-vendor devices (Open Image Denoise), a portable kernel runtime with CUDA/HIP/
#: SYCL/OpenCL/Metal backends (OCCA), a numerical ODE/DAE solver suite (SUNDIALS), a header-only
#: FFT library with six backends (VkFFT), a lattice-QCD library with CUDA/HIP/SYCL targets
#: (QUDA), NVIDIA's 3D deep-learning library (Kaolin) and a sparse-convolution library
#: (spconv). Status and allowed verdicts were written down from each repository's own files
#: (``file:line`` in the snapshot, ``SEVENTH_COMMITS``) before gpuport was run on any of them.
#: Run only twice: on main's code before the change and on the final code.
SEVENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "stable-diffusion.cpp": (
        "leejet/stable-diffusion.cpp",
        "C++ app on ggml (a submodule, absent from the snapshot); 'Build with HipBLAS ... AMD "
        "GPU ... ROCm toolkit', -DSD_HIPBLAS=ON (docs/build.md:67-78), SD_HIPBLAS option "
        "'sd: rocm backend' (CMakeLists.txt:89,126-128)",
        ("ready", "minor work"),
    ),
    "oidn": (
        "RenderKit/oidn",
        "C++ denoising library with CPU/SYCL/CUDA/HIP/Metal devices; 'HIP device for AMD GPUs', "
        "AMD ROCm (HIP SDK) (README.md:246-253), OIDN_DEVICE_HIP option (README.md:411, "
        "CMakeLists.txt:33)",
        ("ready", "minor work"),
    ),
    "occa": (
        "libocca/occa",
        "C++ portable kernel runtime; backends 'CUDA, HIP, Data Parallel C++, OpenCL, OpenMP, "
        "Metal' (README.md:28,47), OCCA_ENABLE_HIP on by default (INSTALL.md:41, "
        "CMakeLists.txt:33,195)",
        ("ready", "minor work"),
    ),
    "sundials": (
        "LLNL/sundials",
        "C/C++ ODE/DAE solver suite with CUDA, HIP, SYCL, RAJA vectors; HIP build with ROCm "
        "(doc/shared/sundials/Install.rst:216-236), ENABLE_HIP (cmake/SundialsBuildOptionsPost."
        "cmake:26)",
        ("ready", "minor work"),
    ),
    "VkFFT": (
        "DTolm/VkFFT",
        "header-only FFT library; 'supports Vulkan, CUDA, HIP, OpenCL, Level Zero and Metal' "
        "(README.md:1,24), VKFFT_BACKEND=2 for HIP (README.md:37, CMakeLists.txt:14,22)",
        ("ready", "minor work"),
    ),
    "quda": (
        "lattice/quda",
        "C++/CUDA lattice-QCD library; target types CUDA, HIP, SYCL (CMakeLists.txt:67-79), "
        "HIP target sources (lib/targets/hip/, include/targets/hip/)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "kaolin": (
        "NVIDIAGameWorks/kaolin",
        "none; NVIDIA's PyTorch 3D library with CUDA extensions, wheels per CUDA version "
        "(README.md:3,196-206)",
        ("major work", "blocked"),
    ),
    "spconv": (
        "traveller59/spconv",
        "none; sparse convolution, wheels per CUDA version (README.md:55-58), kernels generated "
        "by cumm",
        ("major work", "blocked"),
    ),
}

#: The snapshot each seventh-sample tree was extracted from (HEAD of the stored mirror; blobs
#: absent from the mirror left out: 13 in stable-diffusion.cpp, 3 in sundials, 6 in kaolin, all
#: images, models or documents).
SEVENTH_COMMITS: dict[str, str] = {
    "stable-diffusion.cpp": "97d2990807fe6d558e395f8764198d7c7e7b411c",
    "oidn": "e050ac80deca5c2f76633f0054b73c6cb7d2d251",
    "occa": "c0c601f80eff8f4eb7cc453a6a9db5bdd6554495",
    "sundials": "c8dabcea90ca8bf195474da120e4f3dd39aa711f",
    "VkFFT": "066a17c17068c0f11c9298d848c2976c71fad1c1",
    "quda": "9521952ca730316ea1cdd6330408d933ef88e308",
    "kaolin": "d52da9f86d460e8abcd99037e21ff0bec57997ed",
    "spconv": "263d6b47425ef843c82f997b12d8b714013d216c",
}
SEVENTH_ROUTE = tuple(list(SEVENTH_SET)[:6])  # the 6 with a documented route
