"""Issue 24's nineteenth sample for benchmarks/real_repos.py (``--set nineteenth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's nineteenth sample (held out, chosen 2026-11-29 12:21-12:45 UTC, after the
#: eighteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked against every benchmarks/real_repos*.py list, benchmarks/*.toml,
#: benchmarks/port_fresh*.md and by grep -ril against benchmarks/ and docs/ -- zfp, libCEED,
#: faiss, OpenSplat, AITemplate, hashcat, Cabana, sundials, ginkgo, mfem, AutoAWQ, torchsparse,
#: nvdiffrast, MinkowskiEngine, thundersvm, AMGX, torch-ngp, SageAttention, llm.c, pytorch3d,
#: kaolin, GPUMD, XSBench, miniBUDE, STRUMPACK, nekRS, Castro, gromacs, warp-ctc and others were
#: candidates dropped because they were named there; Mooncake, ceres-solver, ScaleLLM, sw4 and
#: QUICK (merzlab) were dropped because a blob was absent from the stored mirror; miniWeather
#: was dropped because its C++ code is YAKL, an empty submodule in the snapshot, and YAKL
#: because it is now a thin Kokkos layer with no device code of its own; NATTEN (whose
#: docs/backends.md:194 documents ROCm for its flex backend) and libSGM were fetched as spares
#: and not used), 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ scientific-data compressor with CUDA/HIP/SYCL backends (MGARD), an
#: autotools C fabric library whose GPU-memory support has CUDA and ROCr backends (libfabric),
#: a Python+Triton operator library with an AMD vendor backend and an optional CMake C++
#: extension (FlagGems), a CMake GPU lossy compressor with a PSZ_BACKEND=HIP option whose HIP
#: CMake file names sources that are not in the snapshot (cuSZ), and a Makefile Monte Carlo
#: transport proxy app whose active Makefile configuration is the HIP build (Quicksilver).
#: No route: a PyTorch visual-odometry system with three required CUDAExtensions (DPVO), a
#: Makefile C MRI-reconstruction toolbox with an optional CUDA=1 backend (bart), a CMake C++
#: LLM serving engine on CUTLASS/FlashInfer/MSCCL++ (Nanoflow), a CMake FindCUDA SIFT library
#: (popsift), and a CMake Levenberg-Marquardt curve-fitting library (Gpufit). Status and
#: allowed verdicts were written down from each repository's own files (``file:line`` in the
#: snapshot, ``NINETEENTH_COMMITS``) before gpuport was run on any of them.
NINETEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "MGARD": (
        "CODARcode/MGARD",
        "CMake C++ error-bounded compressor; MGARD-X runs on 'AMD GPUs | Yes | MI-100, "
        "MI-250X', 'ROCm 4.5.0+' (doc/MGARD-X.md:22,55-57), option MGARD_ENABLE_HIP 'Enable "
        "portable GPU compression/decompression with HIP on AMD GPUs' (doc/MGARD-X.md:85; "
        "CMakeLists.txt:38,204-222 enable_language(HIP), hipcub/rocprim), Frontier build "
        "script with -DMGARD_ENABLE_HIP=ON and gfx90a (build_scripts/"
        "build_mgard_hip_frontier.sh:12,70-71); the legacy CUDA code (MGARD_ENABLE_LEGACY_CUDA, "
        "CMakeLists.txt:40,178-199, src/cuda, include/cuda) is CUDA-only and not on the route",
        ("ready", "minor work"),
    ),
    "libfabric": (
        "ofiwg/libfabric",
        "autotools C fabric library (OFI); heterogeneous-memory support with --with-cuda "
        "(configure.ac:772-801) and --with-rocr 'Enable ROCR/HSA build' (configure.ac:"
        "1104-1141), src/hmem_rocr.c next to src/hmem_cuda.c in every build (Makefile.am:"
        "47-50), FI_HMEM_ROCR documented for AMD GPUs (man/fi_mr.3.md:819,854; the CXI "
        "provider supports FI_HMEM_CUDA, FI_HMEM_ROCR and FI_HMEM_ZE, man/fi_cxi.7.md:706); the "
        "CI does not yet build ROCm (.github/workflows/pr-ci.yml:123-126 TODO); the EFA GDA "
        "test kernel (fabtests/prov/efa/src/efagda/efa_gda_kernels.cu) is CUDA-only",
        ("ready", "minor work"),
    ),
    "FlagGems": (
        "FlagOpen/FlagGems",
        "Python operator library 'written in Triton' (pyproject.toml:9); an AMD vendor backend "
        "(src/flag_gems/runtime/backend/_amd/__init__.py:3-5, vendor 'amd', device 'cuda', "
        "detected by rocm-smi, device.py:100-108, or GEMS_VENDOR=amd, :97), hygon (a ROCm-"
        "derived DCU) in the supported-platforms table (README.md:102); 'By default, the C "
        "extensions are not built' (docs/installation.md:34), the CMake C extension with "
        "find_package(CUDAToolkit REQUIRED) only when FLAGGEMS_BUILD_C_EXTENSIONS is ON "
        "(CMakeLists.txt:33,37-45)",
        ("ready", "minor work"),
    ),
    "cuSZ": (
        "szcompressor/cuSZ",
        "CMake GPU lossy compressor; PSZ_BACKEND 'CUDA/cuda, HIP/hip and ONEAPI/1api' "
        "(CMakeLists.txt:2,7-9), 'HIP-ROCm backend has been selected' with include(cmake/"
        "hip.cmake) (CMakeLists.txt:38-40), .hip kernel sources in psz/src and codec/hf/src; "
        "but the README says it 'primarily focuses on CUDA backend support, with other "
        "GPU-parallel backends in development' (README.md:11), and cmake/hip.cmake names "
        "sources under src/ (src/stat/extrema.hip, src/kernel/l23.hip ..., cmake/hip.cmake:"
        "58-88) that do not exist in the snapshot (the code moved to psz/src/): the documented "
        "HIP route does not configure as it stands, so minor or major work",
        ("minor work", "major work"),
    ),
    "Quicksilver": (
        "LLNL/Quicksilver",
        "Makefile C++ Monte Carlo transport proxy app; '-DHAVE_HIP Define this to enable the "
        "HIP build. Quicksilver assumes that HIP is targeting AMD GPUs' (src/Makefile:44-45), "
        "and the active (uncommented) configuration is 'AMD with HIP': ROCM_ROOT, -DHAVE_HIP "
        "-x hip --offload-arch=gfx90a (src/Makefile:110-115); the CUDA configurations are "
        "commented out (src/Makefile:172-214); HAVE_HIP shares the device code with HAVE_CUDA "
        "(gpuPortability.hh:21, QS_atomics.hh:76, qs_assert.hh:3)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "DPVO": (
        "princeton-vl/DPVO",
        "none; PyTorch deep visual odometry 'tested on Ubuntu 20/22 and Cuda 11/12' "
        "(README.md:33), installed with 'conda env create -f environment.yml' (pytorch-cuda=12.1, "
        "environment.yml:13) and 'pip install .' (README.md:42,52); setup.py builds three "
        "CUDAExtensions (cuda_corr, cuda_ba, lietorch_backends, setup.py:13-36) that the "
        "network and bundle adjustment call; optional viewer/loop-closure C++ packages "
        "(Pangolin, DBoW2, DPRetrieval); the GPU path needs a port",
        ("major work", "blocked"),
    ),
    "bart": (
        "mrirecon/bart",
        "none; Makefile C MRI-reconstruction toolbox; CUDA is optional and off by default "
        "(CUDA?=0, Makefile:60; -DUSE_CUDA, cuFFT/cuBLAS/cuDNN libraries and nvcc only when "
        "CUDA=1, Makefile:489-518; every */*.cu compiled only then, :738-745), 'optionally "
        "CUDA' and a bart-cuda package (README:54-56,75,105); the default CPU build runs "
        "anywhere, the GPU backend needs a hipFFT/hipBLAS port: minor or major, not blocked",
        ("minor work", "major work"),
    ),
    "Nanoflow": (
        "efeslab/Nanoflow",
        "none; C++/CUDA LLM serving engine ('We implement NanoFlow on NVIDIA GPUs', "
        "README.md:79) on CUTLASS, FlashInfer and MSCCL++ (README.md:46; pipeline/CMakeLists.txt:8 "
        "CMAKE_CUDA_ARCHITECTURES 80, :14-21 LANGUAGES CUDA), run in "
        "nvcr.io/nvidia/nvhpc:23.11-devel-cuda (README.md:85) and set up by setup.sh "
        "(README.md:100); 3rdparty/ submodules not in the snapshot",
        ("major work", "blocked"),
    ),
    "popsift": (
        "alicevision/popsift",
        "none; CMake C++ 'implementation of the SIFT algorithm in CUDA' (README.md:7) for "
        "'NVidia cards of compute capability >= 3.0' (README.md:14), CUDA >= 8.0 (README.md:24), "
        "find_package(CUDA 7.0 REQUIRED) (CMakeLists.txt:77), images FROM nvidia/cuda "
        "(Dockerfile_deps:3)",
        ("major work", "blocked"),
    ),
    "Gpufit": (
        "gpufit/Gpufit",
        "none; CMake 'Levenberg Marquardt curve fitting in CUDA' (README.md:3, CMakeLists.txt:1), "
        "find_package(CUDA 6.5 REQUIRED) and cuda_add_library(Gpufit) (Gpufit/CMakeLists.txt:"
        "37,180), optional cuBLAS (:195-223), 'requires only a CUDA-capable graphics card' "
        "(docs/installation.rst:25); Cpufit is a separate CPU library (CMakeLists.txt:135-137)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each nineteenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
NINETEENTH_COMMITS: dict[str, str] = {
    "MGARD": "e42072707201876cbead11f6b1090d9dde317d2b",
    "libfabric": "af8ddbe92f033b7deb9c4e4f47197d1fd4bcf150",
    "FlagGems": "532ff438c70343d7aec9becdabb76a71225a0553",
    "cuSZ": "d3cde38aec71a3ae2a7f80eef7707a27b3bc3d1d",
    "Quicksilver": "eb68bb8d6fc53de1f65011d4e79ff2ed0dd60f3b",
    "DPVO": "859bbbfdac6c6185f345003b3c473901fcd13ace",
    "bart": "731bfd3ec4f09ffa59b497ded1274a2c0357c8af",
    "Nanoflow": "d6b381e58110a8b5d08cfabd4a55c0d5d0ebef57",
    "popsift": "4b4b2478d5f0cdb6c4215a031572e951c0c2502e",
    "Gpufit": "a0bd66c365468c7fca4b8f0511597907cf2c0274",
}
NINETEENTH_ROUTE = tuple(list(NINETEENTH_SET)[:5])  # the 5 with a documented route
