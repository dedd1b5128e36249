"""Issue 24's seventeenth sample for benchmarks/real_repos.py (``--set seventeenth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's seventeenth sample (held out, chosen 2026-11-29 09:57-10:15 UTC, after the
#: sixteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked against every benchmarks/real_repos*.py list and by grep -ril against
#: benchmarks/ and docs/ -- faiss, AutoGPTQ, sglang, lmdeploy, mscclpp, torchvision,
#: pytorch_sparse, deepmd-kit, frigate, open-webui, llm.c, GPT-SoVITS, CloverLeaf and others
#: were candidates dropped because they were named there; gromacs, abacus-develop, Castro and
#: Bonsai were dropped because a blob was absent from the stored mirror
#: (docs/reference-manual/analysis/plots/rama.svg, source/module_cell/module_paw/test/fort.19,
#: Exec/science/massive_star/15m_500_sec.aprox19.hse.10.00km, images/deepfield1.ppm);
#: xinference likewise (assets/demo.gif and others); specfem3d_globe and immich were over the
#: snapshot size limit; LMCache's stored snapshot (2024-10) predates its HIP build and has no
#: kernels), 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ particle-in-cell code on alpaka with a `hip` backend (PIConGPU), a
#: configure/Makefile C++ speech toolkit with `--use-rocm` and hipcc rules (kaldi), a PyTorch
#: CUDAExtension package whose setup.py builds for ROCm torch (pytorch_spline_conv; the same
#: author's template as the sixteenth's pytorch_cluster, noted), an MFEM mini-app with
#: makefile and CMake builds and documented HIP build steps (Laghos), and a CMake C++ AMReX
#: particle-in-cell code with WarpX_COMPUTE=HIP and a HIP CI workflow (WarpX). No route: a
#: Python sequence-modeling toolkit with optional CUDA extensions (fairseq), a PyTorch
#: CUDAExtension SLAM system (DROID-SLAM), a CMake C++/CUDA primitives library (cudpp), a
#: Python training framework with its own CUDA kernels built at install or run time and a CUDA
#: image (ColossalAI), and a 1-bit LLM inference project whose GPU path is an nvcc-built CUDA
#: kernel (BitNet). Status and allowed verdicts were written down from each repository's own
#: files (``file:line`` in the snapshot, ``SEVENTEENTH_COMMITS``) before gpuport was run on
#: any of them.
SEVENTEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "picongpu": (
        "ComputationalRadiationPhysics/picongpu",
        "CMake C++ particle-in-cell code on alpaka (vendored thirdParty/alpaka); 'ROCm/HIP ... "
        "required if you want to run on AMD GPUs' with rocm apt packages (INSTALL.rst:151-165, "
        "docs/source/install/dependencies.rst:151-159), pic-configure backends 'cuda, hip, "
        "omp2b, ...' (bin/pic-configure:48,99), PIC_BACKEND='hip:gfx90a' in the Frontier "
        "profile (etc/picongpu/frontier-ornl/batch_picongpu.profile.example:84), hipcc "
        "profiles (docs/source/install/profile.rst:72-75), cuda_memtest hip backend "
        "(include/picongpu/CMakeLists.txt:231-232)",
        ("ready", "minor work"),
    ),
    "kaldi": (
        "kaldi-asr/kaldi",
        "configure/Makefile C++ speech toolkit; '--use-rocm Build with ROCm', --rocm-dir, "
        "--rocm-targets (src/configure:77-79), configure_rocm finds hipcc and appends "
        "makefiles/hip_64bit.mk (src/configure:258-314,1426), hipcc rule for the CUDA sources "
        "(src/cudamatrix/Makefile:36-38), cudadecoder built under ROCm (src/Makefile:37-41, "
        "src/configure:1075-1079), src/hip/hipify.h; its Docker images are CUDA or CPU "
        "(docker/ubuntu22.04-cuda12/Dockerfile:1, docker/debian12-cpu/Dockerfile:1)",
        ("ready", "minor work"),
    ),
    "pytorch_spline_conv": (
        "rusty1s/pytorch_spline_conv",
        "PyTorch CUDAExtension spline-convolution package; WITH_CUDA when CUDA_HOME or "
        "torch.version.hip (setup.py:17-19), USE_ROCM define and __HIP_NO_HALF_CONVERSIONS__ "
        "undef on ROCm torch (setup.py:72-76), hipify work-around (setup.py:37-38,113-115), "
        "#ifdef USE_ROCM in csrc/version.cpp:5-6,22-23 and csrc/cuda/atomics.cuh:6; the README "
        "documents only CUDA wheels (README.md:29-41)",
        ("ready", "minor work"),
    ),
    "Laghos": (
        "CEED/Laghos",
        "C++ MFEM hydrodynamics mini-app with a makefile and a CMake build; 'Laghos (HIP)' "
        "build steps with -DCMAKE_HIP_COMPILER=$HIPCC after HIP builds of Umpire, hypre and "
        "MFEM (-DMFEM_USE_HIP=ON) (INSTALL_cmake.md:26-32,55-60,90-96,156-162), "
        "CMAKE_HIP_ARCHITECTURES gfx942 when MFEM_USE_HIP (CMakeLists.txt:60-63), "
        "Backend::HIP_MASK (laghos.cpp:800,941); MFEM is external",
        ("ready", "minor work"),
    ),
    "warpx": (
        "BLAST-WarpX/warpx",
        "CMake C++ AMReX particle-in-cell code with Python bindings; WarpX_COMPUTE "
        "NOACC/OMP/CUDA/SYCL/HIP (CMakeLists.txt:144-145, Docs/source/install/cmake.rst:426), "
        "'ROCm 6.0+ ... for AMD GPU support' (Docs/source/install/dependencies.rst:27), HIP CI "
        "workflow with hipcc and -DWarpX_COMPUTE=HIP (.github/workflows/hip.yml:1,32,48-58), "
        "Frontier/LUMI/Adastra install pages (Docs/source/install/hpc/); AMReX is fetched by "
        "CMake (cmake/dependencies/AMReX.cmake), not in the tree",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "fairseq": (
        "facebookresearch/fairseq",
        "none; Python sequence-modeling toolkit on PyTorch, 'For training new models, you'll "
        "also need an NVIDIA GPU and NCCL', optional NVIDIA apex (README.md:153,168-174); its "
        "CUDA extensions (libnat_cuda, ngram_repeat_block_cuda, alignment_train_cuda) are built "
        "only when CUDA_HOME is set (setup.py:105-126), and the lightconv/dynamicconv kernels "
        "are separate optional setups; the core is plain PyTorch, so (as OpenRLHF in the "
        "sixteenth) minor or major",
        ("minor work", "major work"),
    ),
    "DROID-SLAM": (
        "princeton-vl/DROID-SLAM",
        "none; PyTorch CUDAExtension droid_backends from src/droid_kernels.cu, "
        "correlation_kernels.cu, altcorr_kernel.cu (setup.py:8-20), 'Requires CUDA to be "
        "installed', nvidia-smi and torch.version.cuda checks (README.md:44-48); lietorch and "
        "pytorch_scatter are empty submodules in the tree",
        ("major work", "blocked"),
    ),
    "cudpp": (
        "cudpp/cudpp",
        "none; 'CUDPP is the CUDA Data Parallel Primitives Library' (README.md:7), CMake "
        "find_package(CUDA REQUIRED) and CUDA_NVCC_FLAGS (CMakeLists.txt:9,106-113), tested "
        "with CUDA 6.5 (README.md:115-116)",
        ("major work", "blocked"),
    ),
    "ColossalAI": (
        "hpcaitech/ColossalAI",
        "none; Python large-model training framework, requires CUDA >= 11.0 and NVIDIA compute "
        "capability >= 7.0 (README.md:473-474), its own CUDA kernels "
        "(extensions/csrc/kernel/cuda/*.cu) built with BUILD_EXT=1 or at run time "
        "(README.md:489-495,516-520; setup.py:16,70), 'Environment :: GPU :: NVIDIA CUDA' "
        "(setup.py:140), image FROM hpcaitech/cuda-conda:12.1 (docker/Dockerfile:1)",
        ("major work", "blocked"),
    ),
    "BitNet": (
        "microsoft/BitNet",
        "none; 1-bit LLM inference: bitnet.cpp on CPU (3rdparty/llama.cpp, an empty submodule "
        "here) and a GPU path of 'Custom CUDA kernels' (gpu/README.md:8) built by "
        "gpu/bitnet_kernels/compile.sh with nvcc -Xcudafe -gencode=arch=compute_80 -lcuda "
        "(gpu/README.md:13-30), tested on an NVIDIA A100 (gpu/README.md:78)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each seventeenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
SEVENTEENTH_COMMITS: dict[str, str] = {
    "picongpu": "b5d543484ead21847a426ef24cb771fbe97786ef",
    "kaldi": "f4007661023b98b8081fd875029f0dee62242fd1",
    "pytorch_spline_conv": "050f58a430e41f6beda90fe9ea5a348c0b8831a7",
    "Laghos": "97d75b3203284fbac66f555299214dcf57551d88",
    "warpx": "1b312c62376a06befd668af052a0333226ca8fb2",
    "fairseq": "3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99",
    "DROID-SLAM": "2dfd39f0dcad44012ca7bbb8aa70b55edbfa9c99",
    "cudpp": "9dc7357ee818498a87bc2f68f9d887c298e0e3f6",
    "ColossalAI": "4f9953be335ef371b3848719ddafe596c01ecd37",
    "BitNet": "16da220ae2b510caff437d403288882687f44ae5",
}
SEVENTEENTH_ROUTE = tuple(list(SEVENTEENTH_SET)[:5])  # the 5 with a documented route
