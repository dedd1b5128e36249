"""Issue 24's twenty-third sample for benchmarks/real_repos.py (``--set twentythird``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-third sample (held out, chosen 2026-11-29 22:00-22:10 UTC, after the
#: twenty-second sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ with
#: /work/notes/excl24x.py -- pytorch_scatter, pytorch_sparse, pytorch_cluster,
#: stable-diffusion.cpp, mamba, faiss, xgboost, LightGBM, CTranslate2, AITemplate, FBGEMM,
#: diff-gaussian-rasterization, torch-ngp, AutoDock-GPU, cuSZ, sputnik, Pointnet2_PyTorch,
#: FasterTransformer, koboldcpp, exllama, openmm, hashcat, cycles, magma, superlu_dist,
#: STRUMPACK, cp2k, DeepSpeed, xformers, apex, candle, horovod, Umpire, libCEED, zfp, slate,
#: amr-wind, specfem3d, relion, abacus-develop, qmcpack, TIGRE, DualSPHysics, stylegan3, svox2,
#: GroundingDINO, Deformable-DETR, astra-toolbox, sppark, nekRS, CHAI, oidn,
#: pixeltrack-standalone, ucc, GPTQModel, AutoAWQ, text-generation-inference, optimum-quanto,
#: ao, flashinfer, tabby, exllamav3, lightllm, flux, lammps, gromacs, tvm, kokkos-kernels,
#: ThunderKittens, ccminer, RAJAPerf, BabelStream, miniBUDE, HVM, SparseConvNet, CloverLeaf,
#: DROID-SLAM, nvdiffrec, mip-splatting, k2, stable-dreamfusion were candidates dropped because
#: they were named there; none of the twenty-second module's dropped list was taken). Dropped on
#: their own files or snapshots: BitCrack (its AMD route is the in-tree OpenCL clBitCrack,
#: README.md:11-13 -- neither a ROCm/HIP route nor none, as the twenty-second's mfaktc),
#: Uni-Dock (ROCm only in v1.0, 'future updates will no longer support the ROCm platform',
#: unidock/README.md:273 -- a stale route), dorado (no native GPU source: its kernels come from
#: a prebuilt library), cupla (vendors the alpaka tree, alpaka/, an earlier input), HVM2 and
#: GASAL2 (no snapshot could be had); eg3d and 2d-gaussian-splatting were not needed.
#: FoundationPose's bundlesdf/mycuda/torch_ngp_grid_encoder/gridencoder.cu is a copy of one
#: torch-ngp kernel (a dropped input); the repository itself was never used.
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ HEP particle-transport code with CELERITAS_USE_HIP and Frontier/MI100
#: presets (celeritas), a CMake C++ HEP track-reconstruction chain whose AMD routes are
#: Alpaka-HIP and SYCL-on-ROCm CI jobs plus a small native HIP clusterization (traccc), a CMake
#: C++ memory-management library with a HIP library and HIP CI jobs (vecmem), a CMake C++/Rust
#: protein-search tool whose GPU library libmarv builds as HIP with ENABLE_HIP (ROCm 'preview',
#: a ROCm CI workflow and a rocm7 Docker image, MMseqs2), and a C++ library that loads HIP or
#: CUDA at run time and compiles its radix-sort kernels with hiprtc/nvrtc (Orochi).
#: No route: a PyTorch StyleGAN2 with two JIT-loaded CUDA ops (stylegan2-pytorch), a voxel
#: radiance-field model with JIT-loaded CUDA render ops (DirectVoxGO), a CMake CUDA library of
#: ZK-prover kernels (era-bellman-cuda), a ZK cryptography library whose in-tree GPU code is an
#: opt-in CUDA post-quantum backend (icicle), and an NVIDIA 6-DoF pose estimator with a
#: CUDAExtension (FoundationPose). Status and allowed verdicts were written down from each
#: repository's own files (``file:line`` in the snapshot, ``TWENTYTHIRD_COMMITS``) before
#: gpuport was run on any of them.
TWENTYTHIRD_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "celeritas": (
        "celeritas-project/celeritas",
        "CMake C++ GPU particle-transport code for HEP; CI-tested compilers include 'HIP-Clang "
        "15.0' (README.md:86), HIP listed as a runtime dependency for GPU computation "
        "(doc/introduction/installation.rst:42,67); CELERITAS_USE_HIP enables the HIP "
        "language (CMakeLists.txt:291-292, beside enable_language(CUDA) at :285-290) and "
        "hipRAND (:108); presets '.hip-mi100' (CMakePresets.json:63-68), ci-centos-rocm "
        "(scripts/cmake-presets/ci-centos-rocm.json:7-28, /opt/rocm/llvm/bin/clang++) and "
        "Frontier (scripts/cmake-presets/frontier.json:16-22, gfx90a); VecGeom is not "
        "available with HIP (CMakeLists.txt:119); 75 .cu files compiled as HIP",
        ("ready", "minor work"),
    ),
    "traccc": (
        "acts-project/traccc",
        "CMake C++20 track-reconstruction chain with CPU, CUDA, SYCL and Alpaka algorithm sets "
        "(README.md:10); option TRACCC_BUILD_HIP (CMakeLists.txt:68) and a native HIP "
        "clusterization (device/hip/src/clusterization/*.hip); presets hip-fp32/hip-fp64 "
        "and alpaka-fp32-hip (CMakePresets.json:57-72,129-130); GitHub CI builds 'SYCL AMD' "
        "and 'ALPAKA_HIP_SYCL' in a ROCm container with -Dalpaka_ACC_GPU_HIP_ENABLE=ON "
        "-DTRACCC_BUILD_HIP=ON (.github/workflows/builds.yml:77-110, run_tests false); the "
        "CUDA set (device/cuda) is the NVIDIA path",
        ("ready", "minor work"),
    ),
    "vecmem": (
        "acts-project/vecmem",
        "CMake C++ memory-management library with core, cuda, hip and sycl libraries "
        "(CMakeLists.txt:44-50: add_subdirectory(hip) under VECMEM_BUILD_HIP_LIBRARY); "
        "GitHub CI builds 'HIP' in ROCm containers (ubuntu2004_rocm, "
        ".github/workflows/builds.yml:118-130, -DVECMEM_BUILD_HIP_LIBRARY=TRUE at :194) and "
        "a SYCL 'AMD backend' job (:156-161); HIP tests in tests/hip/*.hip beside the CUDA "
        "ones; README.md names no backend list",
        ("ready", "minor work"),
    ),
    "MMseqs2": (
        "soedinglab/MMseqs2",
        "CMake C++ protein search with a GPU library (lib/libmarv); 'As a preview, CDNA2 "
        "generation or newer ROCm-enabled GPUs are also supported' with a master-rocm7 Docker "
        "tag (README.md:49,54); ENABLE_HIP implies the GPU build (CMakeLists.txt:22-29) and "
        "makes libmarv a HIP project with find_package(HIP) (lib/libmarv/src/"
        "CMakeLists.txt:3-17); a 'Test GPU ROCm' workflow on a self-hosted rocm runner "
        "(.github/workflows/test-gpu-rocm.yml:1-17) and a ROCm 7 Dockerfile with "
        "-DENABLE_HIP=1 (.github/workflows/Dockerfile.GPU-debian-slim-rocm7:80); 42 .cu/.cuh "
        "files compiled as HIP",
        ("ready", "minor work"),
    ),
    "Orochi": (
        "GPUOpen-LibrariesAndSDKs/Orochi",
        "C++ library (AMD GPUOpen) that loads HIP or CUDA dynamically so one binary runs on "
        "AMD and NVIDIA GPUs (README.md:5-15); HIP needs nothing at build time, the CUDA "
        "backend needs OROCHI_ENABLE_CUEW and the CUDA headers (README.md:19-25); HIP/CUDA "
        "version support table (README.md:36-40); the radix-sort kernels "
        "(ParallelPrimitives/RadixSortKernels.h) are compiled at run time with hiprtc or "
        "nvrtc (ParallelPrimitives/RadixSort.cpp:134,208); premake build, no .cu files",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "stylegan2-pytorch": (
        "rosinality/stylegan2-pytorch",
        "none; PyTorch StyleGAN2; 'CUDA 10.1/10.2' (README.md:9-14); op/fused_act.py:11-17 "
        "and op/upfirdn2d.py JIT-load (torch.utils.cpp_extension.load) the CUDA kernels "
        "fused_bias_act_kernel.cu and upfirdn2d_kernel.cu at import, which model.py:11 "
        "imports; last commit 2021-11",
        ("minor work", "major work"),
    ),
    "DirectVoxGO": (
        "sunset1995/DirectVoxGO",
        "none; voxel-grid radiance-field reconstruction; 'Pytorch cuda extention built "
        "just-in-time' (README.md:21); lib/grid.py:12-24 and lib/dvgo.py:15, lib/dcvgo.py:18 "
        "JIT-load render_utils, total_variation and ub360_utils CUDA kernels (lib/cuda/*.cu); "
        "torch_scatter required (README.md:40); last commit 2022-06",
        ("minor work", "major work"),
    ),
    "era-bellman-cuda": (
        "matter-labs/era-bellman-cuda",
        "none; 'GPU-accelerated cryptographic functionality for the zkSync prover' "
        "(README.md:10); project(bellman-cuda LANGUAGES CUDA CXX) with "
        "CMAKE_CUDA_ARCHITECTURES 80 by default (CMakeLists.txt:5-8; README.md:25-29); 50 "
        ".cu/.cuh files of finite-field, MSM and NTT kernels",
        ("major work", "blocked"),
    ),
    "icicle": (
        "ingonyama-zk/icicle",
        "none; ZK cryptography library for 'CPUs, GPUs, and other accelerators' (README.md:4) "
        "with a built-in CPU backend (README.md:217); the CUDA backend is installed "
        "separately (README.md:222-228); the in-tree GPU code is the CUDA post-quantum "
        "backend, option CUDA_PQC_BACKEND default OFF (icicle/CMakeLists.txt:27,50), 29 "
        ".cu/.cuh files with 32-lane __shfl_sync masks (icicle/backend/cuda_pqc/include/"
        "ml_kem/samplers/cuda_sample_helpers_5threads.cuh:12-17)",
        ("major work", "blocked"),
    ),
    "FoundationPose": (
        "NVlabs/FoundationPose",
        "none; 6-DoF object pose estimation and tracking; the recommended environment is an "
        "NVIDIA Docker image (readme.md:69-77, docker/dockerfile); build_all.sh builds mycpp "
        "(CMake, CPU) and bundlesdf/mycuda, two CUDAExtensions (common, gridencoder) with "
        "nvcc flags (bundlesdf/mycuda/setup.py:18-33); nvdiffrast and Kaolin are external "
        "dependencies (not in the tree)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-third-sample tree was extracted from (HEAD of the stored mirror).
#: celeritas, traccc, vecmem, DirectVoxGO and era-bellman-cuda are complete (git archive);
#: MMseqs2 (2 data files), Orochi (1 Vulkan header), stylegan2-pytorch (3 .png, 1 .pkl), icicle
#: (2 .gif, 6 test-data .txt) and FoundationPose (2 .mp4) were extracted by walking ls-tree
#: with cat-file because those blobs were absent from the stored mirror.
TWENTYTHIRD_COMMITS: dict[str, str] = {
    "celeritas": "03e90b2cbe036111585979f32573171ba7185fb3",
    "traccc": "12efc9d2bd2294c18a41964ef0b511f547dcd014",
    "vecmem": "b4379ef0ca942e431a2707c00a213e8dd502a092",
    "MMseqs2": "f71d0a6b57c19e3a8954d8557f065c0fe1f46142",
    "Orochi": "a6eb6134f9bb6d4220355682ed61a4cb6572673a",
    "stylegan2-pytorch": "bef283a1c24087da704d16c30abc8e36e63efa0e",
    "DirectVoxGO": "341e1fc4e96efff146d42cd6f31b8199a3e536f7",
    "era-bellman-cuda": "a87a309e7c07ef6b3fc5532e50d5d244aab9f4d0",
    "icicle": "625532a624e5aaa6e9d31a1c92587f1fcc30dc76",
    "FoundationPose": "bf2518348eb2ef8f1fdf786b79ed698db02e8703",
}
TWENTYTHIRD_ROUTE = tuple(list(TWENTYTHIRD_SET)[:5])  # the 5 with a documented route
