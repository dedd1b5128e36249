"""Issue 24's twenty-sixth sample for benchmarks/real_repos.py (``--set twentysixth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-sixth sample (held out, chosen 2026-11-30 05:31-05:42 UTC, after the
#: twenty-fifth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ with
#: /work/notes/excl24x.py, and no folder of that name under /work/trees/scan/*/ -- stdgpu,
#: hoomd-blue, deepmd-kit, tutel, OpenSplat, ktransformers, LightGBM, stable-diffusion.cpp,
#: heffte, slate, Cabana, ArborX, popsift, libSGM, cupoch, Kangaroo, xmrig-cuda, cudpp,
#: lightseq, llm-awq, cufinufft, caffe, Uni-Dock, cudasw4, moderngpu, whisper.cpp, xgboost,
#: sppark, torchmd-net, tiny-cuda-nn, gsplat, gptq, QuaRot, fast-hadamard-transform, mlc-llm,
#: cuSZ, Umpire, RAJA, CHAI, Laghos, mfem, hypre, amrex, amr-wind, PeleC, qmcpack, Grid, quda,
#: icicle, ethminer, hashcat, AutoDock-GPU, openfold, Uni-Core, pytorch3d, torchsparse,
#: OpenPCDet, detectron2, mmcv, nerfacc, pytorch_cluster, pytorch_sparse, dgl, megablocks,
#: AMGX, kokkos-kernels, cubecl, taichi, koboldcpp, TurboTransformers, SageAttention,
#: flash-fft-conv, tilelang, SIRIUS, SpFFT, spla, DLA-Future, COSMA, gridtools, alpaka, cupla,
#: cholla, gamer, cycles, VapourSynth-BM3DCUDA, fastllm, aphrodite-engine, lmdeploy, k2, kaldi,
#: GASAL2, gnina, MMseqs2, ElasticFusion,
#: InfiniTAM, nvblox, pbrt-v4, CV-CUDA, EETQ, nunchaku, amgcl, colmap, openMVS, SIMULATeQCD,
#: GPUMD, oidn, nekRS, occa, ERF, Castro, impactx, quokka, llm.c, exllamav3, llamafile, PyFR,
#: fp6_llm, SqueezeLLM, AQLM, vattention, Orochi, mscclpp, uccl, rtp-llm, lightllm, audio,
#: faiss, text-generation-inference, ColossalAI, RWKV-LM, Mooncake, flux, FBGEMM, TNN,
#: onnxruntime, QUICK, papi, TAMM, RAJAPerf, gpu4pyscf and VTK-m were candidates dropped
#: because they were named there). Dropped on their own files: celerity/ndzip (its AMD path
#: is SYCL through hipSYCL, neither a HIP route of its own nor none), ecrc/h2opus
#: (config/make.inc.hip builds with hipcc but only for AMD CPUs with AOCL, no GPU: neither
#: kind cleanly); hornet, kblas-gpu, foldseek, CGBN, cuFHE, alephium/gpu-miner, kaspa-miner,
#: Hetu, oneflow, BMTrain, cuda_hgemm, flash_attention_inference, nvbio, FZ-GPU, LULESH,
#: Caliper, likwid, futhark and axom passed the name check but were not needed.
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ VapourSynth video-denoise plugin with hipFFT and HIPRTC backends built by
#: ENABLE_HIP in its Linux CI (vs-dfttest2), a CMake C++ finite-element electromagnetics solver
#: with PALACE_WITH_HIP and a spack +rocm variant, its GPU code coming through MFEM/libCEED
#: (palace), a make-based C++ high-order CFD/DG solver collection whose kernels are OCCA .okl
#: run in a HIP thread model (libparanumal), a CMake C++/Python deep-learning framework with
#: a separate dnn/src/rocm backend under MGE_WITH_ROCM (MegEngine), and a CMake C++ real-space
#: DFT code whose Gpufuncs have .hip.cpp twins built by hip_add_library, with a Frontier
#: (MI250X, rocm/6.3.1) build script (rmgdft). No route: a CMake CUDA homomorphic-encryption
#: library with inline PTX (HEonGPU), a Makefile CUDA X-drop sequence aligner (LOGAN), a CMake
#: C++23/CUDA 3D Gaussian-splatting application (LichtFeld-Studio), a FindCUDA RNN-Transducer
#: loss with PyTorch/TensorFlow bindings (warp-transducer), and a W4A8KV4 LLM serving system
#: whose CUDAExtension kernels use inline PTX and mma (qserve). palace and libparanumal have no
#: .cu files; rmgdft vendors Tiled-MM and zfp (names used before) beside its own Gpufuncs.
#: Status and allowed verdicts were written down from each repository's own files
#: (``file:line`` in the snapshot, ``TWENTYSIXTH_COMMITS``) before gpuport was run on any of
#: them.
TWENTYSIXTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "vs-dfttest2": (
        "AmusementClub/vs-dfttest2",
        "CMake C++ VapourSynth DFTTest plugin 'CUDA and x86' (README.md:2,14 documents only "
        "ENABLE_CUDA/ENABLE_CPU); option ENABLE_HIP (CMakeLists.txt:8) builds dfttest2_hip "
        "(hipFFT) and dfttest2_hiprtc from hip_source/ and hiprtc_source/ linked to hip::host, "
        "hip::hipfft, hiprtc (CMakeLists.txt:72-96); the Linux CI installs ROCm 6.4.3 and "
        "builds -D ENABLE_HIP=ON (.github/workflows/linux.yml:57-80); the Python wrapper "
        "offers Backend.hipFFT and Backend.HIPRTC (dfttest2.py:35-44,56-59); no .cu files "
        "(CUDA kernels are NVRTC strings in cuda_source/ and nvrtc_source/)",
        ("ready", "minor work"),
    ),
    "palace": (
        "awslabs/palace",
        "CMake C++ parallel finite-element electromagnetics solver; 'hardware acceleration "
        "using NVIDIA or AMD GPUs ... using pure CUDA and HIP code as well as MAGMA' "
        "(README.md:43-44,70); PALACE_WITH_HIP 'Use HIP for AMD or NVIDIA GPU support' "
        "exclusive with PALACE_WITH_CUDA (CMakeLists.txt:26-27,61-62), enable_language(HIP) "
        "with CMAKE_HIP_ARCHITECTURES (CMakeLists.txt:91-100); documented in "
        "docs/src/install.md:123-124,171-173,189-190; spack package ROCmPackage with +rocm "
        "(spack_repo/local/packages/palace/package.py:7,12,318-326); GPU kernels come from "
        "MFEM/libCEED (cmake/ExternalMFEM.cmake, ExternalLibCEED.cmake); no .cu files",
        ("ready", "minor work"),
    ),
    "libparanumal": (
        "paranumal/libparanumal",
        "make-based C++ high-order finite-element CFD solvers (acoustics, advection, bns, cns, "
        "elliptic, ins, lbs ...) whose kernels are OCCA .okl; 'OCCA will try to detect ... "
        "OpenMP, CUDA, OpenCL, HIP, and/or SYCL' (README.md:80-81); THREAD MODEL setting "
        "accepts HIP (libs/core/platformSettings.cpp:43,70) and maps it to OCCA mode 'HIP' "
        "(libs/core/platformDeviceConfig.cpp:66-67,81); the test driver runs HIP "
        "(test/test.py:73); OCCA is a submodule, not in the tree (.gitmodules); no .cu files; "
        "last commit 2023-10",
        ("ready", "minor work"),
    ),
    "MegEngine": (
        "MegEngine/MegEngine",
        "CMake C++/Python deep-learning framework; 'Inference ... on x86, Arm, CUDA, and "
        "RoCM' (README.md:19); option(MGE_WITH_ROCM) (CMakeLists.txt:96,1083-1084 "
        "cmake/rocm.cmake with FindHIP, HIP >= 3.0) builds the separate backend "
        "dnn/src/rocm/*.cpp and *.cpp.hip with hip_add_library-style objects "
        "(dnn/src/CMakeLists.txt:73-100,301-302) and a ROCm comp node "
        "(src/core/impl/comp_node/rocm/comp_node.cpp); MGE_WITH_CUDA defaults ON "
        "(CMakeLists.txt:73) and the 124 dnn/src/cuda folders are the CUDA backend, not the "
        "ROCm one; no build script or CI for ROCm in the tree, the route is hcc-era (cmake/"
        "rocm.cmake:1-25, dnn/include/hcc_detail); 6,107 files; last commit 2024-10",
        ("ready", "minor work"),
    ),
    "rmgdft": (
        "RMGDFT/rmgdft",
        "CMake C++ real-space multigrid DFT code; RMG_HIP_ENABLED exclusive with "
        "RMG_CUDA_ENABLED (CMakeLists.txt:71,93-94), -DHIP_ENABLED=1 and FindHIP "
        "(CMakeLists.txt:258-259,281-317); the Frontier script loads rocm/6.3.1 and "
        "craype-accel-amd-gfx90a and runs cmake -DRMG_HIP_ENABLED=1 (frontier.sh:11-12,19-22); "
        "Gpufuncs/ holds each .cu kernel with a .hip.cpp twin built by hip_add_library "
        "(Gpufuncs/CMakeLists.txt:72-86); 'Gpufuncs/ Cuda and HIP code' (README.md:116-117); "
        "vendors Tiled-MM and zfp (CMakeLists.txt:812,839); last commit 2025-11",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "HEonGPU": (
        "Alisah-Ozcan/HEonGPU",
        "none; GPU homomorphic-encryption library (BFV/CKKS/TFHE) 'leveraging ... CUDA' "
        "(README.md:1-8), requires the CUDA Toolkit >= 11.4 and CMAKE_CUDA_ARCHITECTURES "
        "80;86;89;90 (README.md:131-148); project(HEonGPU LANGUAGES C CXX CUDA ASM) "
        "(CMakeLists.txt:7); inline PTX carry chains add.cc.u64/addc (src/include/heongpu/"
        "util/bigintegerarith.cuh:79-100) and a 32-bit-mask shuffle reduction "
        "(src/include/heongpu/util/util.cuh:312); GPU-NTT/GPU-FFT/RNGonGPU are submodules "
        "not in the tree; 98 .cu/.cuh",
        ("major work", "blocked"),
    ),
    "LOGAN": (
        "albertozeni/LOGAN",
        "none; GPU X-drop pairwise alignment 'optimized to run on the NVIDIA Tesla V100 ... "
        "can run on any NVIDIA GPU', requires CUDA 10 (README.md:14-23); Makefile with "
        "COMPILER = nvcc, -maxrregcount=32, -Xcompiler -fopenmp, -dc and -arch=sm_70 under "
        "v100 (Makefile:1-17); a volatile warp-synchronous max reduction over 32 lanes "
        "(src/logan_functions.cu:21-43), no shuffles or PTX; 4 .cu files; last commit 2022-09",
        ("minor work", "major work"),
    ),
    "LichtFeld-Studio": (
        "MrNeRF/LichtFeld-Studio",
        "none; 'A high-performance C++ and CUDA implementation of 3D Gaussian Splatting', "
        "CUDA 12.8+ (README.md:4,10,46); project(LichtFeld-Studio LANGUAGES CUDA CXX C) with "
        "CUDA_ARCH from nvidia-smi or 86 (CMakeLists.txt:15,119-135) and TORCH_CUDA_ARCH_LIST "
        "(:195-233); rasterizer ballots with 0xffffffffu (src/rendering/cuda/rasterization/"
        "include/kernels_forward.cuh:69,174,240,280); gsplat/ and fastgs/ CUDA backends; "
        "weights/lpips_vgg.pt absent from the mirror; last commit 2025-10",
        ("major work", "blocked"),
    ),
    "warp-transducer": (
        "HawkAaron/warp-transducer",
        "none; RNN-Transducer loss on CPU and GPU, benchmarked on a GTX 1080 Ti, built with "
        "CMake FindCUDA (README.md:2,6-7,35-64); FIND_PACKAGE(CUDA), -gencode sm_30..sm_75 in "
        "CUDA_NVCC_FLAGS, CUDA_ADD_LIBRARY(warprnnt src/rnnt_entrypoint.cu -> .cpp symlink) "
        "(CMakeLists.txt:20,44-73,98); const int warp_size = 32 and a shuffle reduction "
        "guarded by `#if CUDART_VERSION < 9000` __shfl_down `#else` __shfl_down_sync(0xFFFFFFFF) "
        "(include/detail/reduce.h:5,32-37); pytorch/tensorflow bindings link the built "
        "library (pytorch_binding/setup.py:7,33-38); last commit 2020-04",
        ("minor work", "major work"),
    ),
    "qserve": (
        "mit-han-lab/qserve",
        "none; W4A8KV4 LLM serving on L40S/A100 (README.md:5,23), conda cuda-toolkit from "
        "the nvidia channel and `cd kernels; python setup.py install` (README.md:69,95,"
        "112-118); kernels/setup.py builds CUDAExtensions for 'Supported NVIDIA GPU "
        "architectures' 8.0-9.0 (kernels/setup.py:11,15-16,59-72); inline PTX cvta/ldmatrix/"
        "mma in the W4A8 GEMMs (kernels/csrc/qgemm/w4a8_per_group/gemm_cuda.cu:83,120); 13 "
        ".cu files; last commit 2025-01",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-sixth-sample tree was extracted from (HEAD of the stored mirror).
#: vs-dfttest2, libparanumal, MegEngine, HEonGPU, LOGAN, warp-transducer and qserve are
#: complete (git archive); palace (docs assets and example meshes), rmgdft (Examples' data,
#: XC/vdW_kernel_table*) and LichtFeld-Studio (weights/lpips_vgg.pt) were extracted by walking
#: ls-tree with cat-file because those blobs were absent from the stored mirror.
TWENTYSIXTH_COMMITS: dict[str, str] = {
    "vs-dfttest2": "1b5c8c060f8aac1f63f479a4d80de84bee49655e",
    "palace": "86810b1909f3e05e0bf1fd78f485e59d55582b6d",
    "libparanumal": "5f96a9a5e7f316ea3c030a6c5c32f1c4aff6a7ab",
    "MegEngine": "47952c075d868665e1116214bea760d786144081",
    "rmgdft": "4b97d352064bdcab426eab1d00dc91c96f83a0b2",
    "HEonGPU": "f91381a1b73da33118b0a1d511b4e81bf943ed83",
    "LOGAN": "336907643a8404798ceaa33c7f0db05fcce6e030",
    "LichtFeld-Studio": "0ff1dc239f9fff48fd3b2130ad3ea00162e0aac3",
    "warp-transducer": "f546575109111c455354861a0567c8aa794208a2",
    "qserve": "de6a2ec6b5248ce71f3d738c6c41c45195b2fb4e",
}
TWENTYSIXTH_ROUTE = tuple(list(TWENTYSIXTH_SET)[:5])  # the 5 with a documented route
