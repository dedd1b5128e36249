"""Issue 24's eighth sample for benchmarks/real_repos.py (``--set eighth``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's eighth sample (held out, chosen 2026-11-28 11:00-11:15 UTC after the seventh sample
#: had been seen and used for fixing classes): 8 public repositories never used by gpuport as
#: scan inputs (not in any set of benchmarks/real_repos*.py, nor in any other benchmark list,
#: not under /work/trees before, not in docs/scan.md), 6 whose own files document a ROCm/HIP
#: route and 2 whose files document none, of mixed kinds: a finite-element operator library
#: with per-backend folders (libCEED), a neuron simulator with a CUDA/HIP CMake backend
#: selector (Arbor), an astrophysics hydro code built by Makefile host files for CUDA or HIP
#: (Cholla), a BLAS wrapper with cuBLAS/rocBLAS/oneMKL backends (BLAS++), Kokkos' math kernels
#: with CUDA and ROCm TPLs (Kokkos Kernels), a Python energy-measurement library with NVIDIA and
#: AMD GPU modules (Zeus), an NVIDIA 3D-reconstruction research app with CUDA extensions
#: (nvdiffrec) and a CUDA communication-overlap kernel library (Flux). Status and allowed
#: verdicts were written down from each repository's own files (``file:line`` in the snapshot,
#: ``EIGHTH_COMMITS``) before gpuport was run on any of them. Run only twice: before the change
#: and on the final code.
EIGHTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "libCEED": (
        "CEED/libCEED",
        "C library with CPU, CUDA, HIP, SYCL, MAGMA backends; 'To enable HIP support, add "
        "ROCM_DIR=/opt/rocm' (README.md:65), /gpu/hip/* backends, ROCm 4.2 or newer "
        "(README.md:171-209), ROCM_DIR in the Makefile (Makefile:50,80-81)",
        ("ready", "minor work"),
    ),
    "arbor": (
        "arbor-sim/arbor",
        "C++ neuron simulator; ARB_GPU=hip 'experimental GPU backend for AMD GPUs' "
        "(doc/install/build_install.rst:356-362,390-408), CMakeLists.txt:97,186",
        ("ready", "minor work"),
    ),
    "cholla": (
        "cholla-hydro/cholla",
        "C++/CUDA hydro code; 'designed to be run using (AMD or NVIDIA) GPUs' (README.md:16), "
        "HIP host files (builds/make.host.frontier:4-12, make.host.poplar.cce+hip)",
        ("ready", "minor work"),
    ),
    "blaspp": (
        "icl-utk-edu/blaspp",
        "C++ BLAS wrapper; gpu_backend auto/cuda/hip/sycl, 'hip: build with HIP/ROCm support' "
        "(INSTALL.md:39,98-100; CMakeLists.txt:59-61)",
        ("ready", "minor work"),
    ),
    "kokkos-kernels": (
        "kokkos/kokkos-kernels",
        "C++ math kernels on Kokkos; HIP execution space instantiation and ROCm TPLs "
        "(docs/source/cmake-keywords.rst:155-156,178), AMD MI210 CI (.github/workflows/mi210.yml)",
        ("ready", "minor work"),
    ),
    "zeus": (
        "ml-energy/zeus",
        "Python energy measurement; 'Zeus now supports ... AMD GPU' (README.md:22), AMD GPU "
        "module beside the NVIDIA one (zeus/device/gpu/amd.py, nvidia.py)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "nvdiffrec": (
        "NVlabs/nvdiffrec",
        "none; 'Requires ... Cuda 11.3+' (README.md:41-48), CUDA extensions (render/renderutils/"
        "c_src), tiny-cuda-nn and nvdiffrast (README.md:55-57)",
        ("major work", "blocked"),
    ),
    "flux": (
        "bytedance/flux",
        "none; CUDA comm-overlap kernels built for sm80/89/90 with NVSHMEM (README.md:52-61), "
        "wheels for CUDA 12.4 only (README.md:77)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each eighth-sample tree was extracted from (HEAD of the stored mirror; blobs
#: absent from the mirror left out: 3 in arbor, 1 in zeus, 2 in nvdiffrec).
EIGHTH_COMMITS: dict[str, str] = {
    "libCEED": "64e0491369518e158481079ef966c29e2fa4f8fd",
    "arbor": "e5c1bcd3432b9da988a546dacfc2179fcb260f4a",
    "cholla": "8478c9ede8a5e2cb72d6481a50023666d489a763",
    "blaspp": "b5d0761a0c3a45ed1bad73b697125c2e46ac1617",
    "kokkos-kernels": "2fc2af19fa7b74b64f3ce7a212c0728afd150c62",
    "zeus": "75a8b9398034eb9baf74ca0a830c2c31bcce52cd",
    "nvdiffrec": "a3e73909a01887c8a135235ff860dd23a045cc1b",
    "flux": "19831ca2d820e3e782ed1d15d8b52d0898b78b26",
}
EIGHTH_ROUTE = tuple(list(EIGHTH_SET)[:6])  # the 6 with a documented route
