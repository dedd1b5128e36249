"""Issue 24's twenty-second sample for benchmarks/real_repos.py (``--set twentysecond``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-second sample (held out, chosen 2026-11-29 18:20-18:35 UTC, after the
#: twenty-first sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ -- Cabana,
#: ArborX, PeleC, heFFTe, MFEM, ginkgo, hypre, sundials, exllamav2, tabbyAPI, aphrodite,
#: causal-conv1d, Fooocus, text-generation-webui, gpu-burn, libSGM, thundersvm, MinkowskiEngine,
#: torchsparse, pytorch3d, colmap, VanitySearch, xmrig-cuda, instant-ngp, tiny-cuda-nn,
#: nvdiffrast, gsplat, kaolin, Liger-Kernel, cholla, QUDA, SIRIUS, stdgpu, alpaka, picongpu,
#: tutel, hqq, BitBLAS, tilelang, ColossalAI, torchtitan, GPT-SoVITS, F5-TTS, fish-speech,
#: ramalama, gpustack, llamafile, OCCA, VkFFT, RAJA, WarpX, AMReX, ktransformers, LMCache,
#: mlc-llm, whisper.cpp, tinygrad, mmcv, cupy, darknet, OpenPCDet, nerfacc, RWKV, lightseq,
#: megablocks, marlin, lietorch, GPUMD, hoomd, deepmd and others were candidates dropped because
#: they were named there, and verl because the string occurs there; two fetched candidates were
#: dropped on their own files: torchmd-net (its kernels are now NVIDIA Warp Python kernels,
#: torchmdnet/extensions/warp_kernels/, no native CUDA code) and mfaktc (its AMD route is a
#: separate OpenCL port, mfakto, README.txt:54-55 -- neither a ROCm/HIP route nor none);
#: ExaCA, Remhos, Deep-Live-Cam and FastVideo were fetched as spares and not used), 5 whose own
#: files document a ROCm/HIP route and 5 whose files document none.
#: Route: a PyTorch mixture-of-experts CUDAExtension with a ROCm branch in setup.py (fastmoe), an
#: AMReX radiation-hydrodynamics code with a HIP CI job and Crusher/Setonix machine files
#: (quokka), a CMake C++ visualization toolkit with a Kokkos/HIP device adapter and ROCm CI on
#: Radeon runners and Frontier (VTK-m), a CMake C/C++ power-grid optimizer on RAJA/Umpire with
#: EXAGO_ENABLE_HIP and a clang-hip CI build on PNNL's AMD machine (ExaGO), and a Python face
#: manipulation app on ONNX Runtime whose installer offers onnxruntime-rocm and
#: onnxruntime-migraphx (facefusion).
#: No route: a CMake C++ GPU signed-distance-field mapping library on CUDA and NPP (nvblox), a
#: detectron2 segmentation model whose MSDeformAttn CUDA op must be compiled (Mask2Former), a
#: Python HNSW nearest-neighbour library built by its own nvcc build_ext (cuhnsw), a Makefile
#: CUDA secp256k1 key search with PTX carry-chain arithmetic (KeyHunt-Cuda), and a vision
#: state-space model with selective-scan CUDA kernels and a PyTorch fallback (VMamba). Status and
#: allowed verdicts were written down from each repository's own files (``file:line`` in the
#: snapshot, ``TWENTYSECOND_COMMITS``) before gpuport was run on any of them.
TWENTYSECOND_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "fastmoe": (
        "laekov/fastmoe",
        "PyTorch mixture-of-experts package with the fmoe_cuda CUDAExtension (setup.py:51-69); "
        "'ROCm supported' since v0.3.0 (doc/release-note.md:58): setup.py detects ROCm torch "
        "(torch.version.hip and ROCM_HOME, setup.py:19-22), links rccl instead of nccl "
        "(:27-30) and defines FMOE_USE_HIP (:35-36), under which the kernels take a 64-wide "
        "warp and __shfl_down (cuda/local_exchange.cuh:30-34,59-63) and rocBLAS status names "
        "(cuda/utils/helper_cuda.h:54-58); the README still says 'PyTorch with CUDA is "
        "required' (README.md:16-17); last commit 2024-06",
        ("ready", "minor work"),
    ),
    "quokka": (
        "quokka-astro/quokka",
        "AMReX C++17 radiation-hydrodynamics code; 'ROCm 5.2.0+ (optional, for AMD GPUs)' "
        "(README.md:37), 'AMD GPUs (experimental, use at your own risk)': compile with "
        "-DAMReX_GPU_BACKEND=HIP, tested on MI100 and MI250X with known compiler issues "
        "(docs/docs/installation.md:90-92); a GitHub CI job 'HIP ROCm C++17' building with "
        "-DAMReX_GPU_BACKEND=HIP -DAMReX_AMD_ARCH=gfx908 (.github/workflows/hip.yml:17-64), an "
        "Azure job on an amdgpu pool (.ci/azure-pipelines-amdgpu.yml:15-23), Crusher and "
        "Setonix machine files (cmake/crusher.cmake:12-13, cmake/setonix.cmake:4-5); no .cu "
        "files (AMReX ParallelFor); extern/amrex, Microphysics and other submodules not in the "
        "snapshot",
        ("ready", "minor work"),
    ),
    "VTK-m": (
        "Kitware/VTK-m",
        "CMake C++ visualization toolkit with device adapters; 'Kokkos Device Adapter' with "
        "'hipcc when using Kokkos device adapter with HIP (ROCM>=6)' beside a CUDA one "
        "(README.md:93-99; VTKm_ENABLE_CUDA / VTKm_ENABLE_KOKKOS, CMakeLists.txt:90-91), "
        "enable_language(HIP) and vtkm_kokkos_hip when Kokkos has HIP "
        "(CMake/VTKmDeviceAdapters.cmake:342-352); GitLab CI builds and tests "
        "kokkos+hip on Radeon runners (gfx900, .gitlab/ci/ubuntu2204.yml:23-65) and on "
        "Frontier with Kokkos_ARCH_VEGA90A and hipcc (.gitlab/ci/frontier.yml:19-54); the "
        "CUDA adapter (vtkm/cont/cuda, 14 .cu files) is the NVIDIA path",
        ("ready", "minor work"),
    ),
    "ExaGO": (
        "pnnl/ExaGO",
        "CMake C/C++ power-grid optimization (OPFLOW/SOPFLOW/SCOPFLOW) on PETSc, HiOp, RAJA and "
        "Umpire; option EXAGO_ENABLE_HIP beside EXAGO_ENABLE_CUDA under EXAGO_ENABLE_GPU "
        "(CMakeLists.txt:66-78), find_package(hip) (:204-207), RAJA hip_exec/hip_reduce "
        "policies (include/private/raja_exec_config.h:26-37); 'OPFLOW, SOPFLOW, and SCOPFLOW "
        "can run on AMD GPUs (requires HIP)' and 'CI on Incline ... (AMD / HIP GPU machine at "
        "PNNL)' (CHANGELOG.md:61,107); the clang-hip build (buildsystem/clang-hip/cache.cmake, "
        "EXAGO_ENABLE_HIP ON; crusher/base.sh:14-25, rocm/5.7.1, gfx90a) run by the Incline CI "
        "jobs (.gitlab/pnnl/incline.gitlab-ci.yml:1-15); INSTALL.md:69 still says CUDA 'because "
        "other GPU platforms are under development'; no .cu files; tpl/ submodules not in the "
        "snapshot",
        ("ready", "minor work"),
    ),
    "facefusion": (
        "facefusion/facefusion",
        "Python face-manipulation app (gradio UI, headless and batch modes) on ONNX Runtime; "
        "its installer (python install.py ONNXRUNTIME, facefusion/installer.py:37-40) offers "
        "onnxruntime-migraphx and onnxruntime-rocm on Linux (facefusion/installer.py:31-33), "
        "execution providers 'rocm' and 'migraphx' (facefusion/choices.py:110-121) set up with "
        "device ids and a MIGraphX model cache (facefusion/execution.py:71-86); device listing "
        "only via nvidia-smi (facefusion/execution.py:142-156); pure Python (requirements.txt), "
        "installation documented off-repo (README.md:19)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "nvblox": (
        "nvidia-isaac/nvblox",
        "none; CMake C++ library for signed distance fields 'on NVIDIA GPUs' (README.md:3), "
        "written 'with the NVIDIA jetson in mind' (README.md:44), 'CUDA 11.0 - 11.8' and "
        "stdgpu downloaded at build (README.md:83-85); project(nvblox LANGUAGES CXX CUDA) and "
        "find_package(CUDA REQUIRED) (nvblox/CMakeLists.txt:4,46), NPP libraries "
        "(CUDA::nppc ... nppidei, :200-204), 51 .cu/.cuh files with CUB/Thrust; CUDA and "
        "Jetson Dockerfiles (docker/)",
        ("major work", "blocked"),
    ),
    "Mask2Former": (
        "facebookresearch/Mask2Former",
        "none; detectron2 segmentation model; 'compile CUDA kernel for MSDeformAttn' with "
        "CUDA_HOME set (INSTALL.md:12-19), PyTorch 1.9 with cudatoolkit 11.1 (INSTALL.md:32); "
        "the op's setup.py builds a CUDAExtension only when CUDA_HOME is set and raises "
        "otherwise (mask2former/modeling/pixel_decoder/ops/setup.py:39-54), the import raises "
        "if it is not built (ops/functions/ms_deform_attn_func.py:21-29), a pure-PyTorch core "
        "is used only when the op call fails (ops/modules/ms_deform_attn.py:116-121); the "
        "kernel includes THC/THCAtomics.cuh (ops/src/cuda/ms_deform_im2col_cuda.cuh:24)",
        ("minor work", "major work"),
    ),
    "cuhnsw": (
        "js1010/cuhnsw",
        "none; 'Efficient CUDA implementation of Hierarchical Navigable Small World' "
        "(README.md:5), pip or setup.py install (README.md:33-56); a setuptools Extension "
        "linked with cudart and curand (setup.py:74-89) compiled by its own nvcc build_ext "
        "(cuda_setup.py:73-115, CUDA_HOME/nvcc lookup, -arch per CUDA version); warp-32 "
        "reductions with __activemask and __shfl_down_sync (cpp/include/"
        "cuda_utils_kernels.cuh:17-20,54-57); json11 and spdlog submodules not in the "
        "snapshot",
        ("major work", "blocked"),
    ),
    "KeyHunt-Cuda": (
        "Qalander/KeyHunt-Cuda",
        "none; secp256k1 address/key search; 'Cuda only' (README.md:18); KeyHunt-Cuda/Makefile "
        "builds GPU/GPUEngine.cu with nvcc -gencode=arch=compute_$(ccap) when gpu=1 "
        "(KeyHunt-Cuda/Makefile:35-37,60-67) and links -lcudart (:47); the 256-bit field "
        "arithmetic is PTX inline asm carry chains (add.cc.u64/addc.cc.u64, "
        "KeyHunt-Cuda/GPU/GPUMath.h:32-37); a Visual Studio solution with committed Windows "
        "build outputs",
        ("major work", "blocked"),
    ),
    "VMamba": (
        "MzeroMiko/VMamba",
        "none; vision state-space model; 'one file' route installs a "
        "mamba_ssm-2.2.4+cu12 wheel (README.md:15-20), the full install builds "
        "kernels/selective_scan (README.md:161-166), a CUDAExtension in MODE oflex "
        "(kernels/selective_scan/setup.py:45,116-135) with -arch=sm_<cc of the local GPU> "
        "(:30-33,68); when no selective-scan extension imports, the models fall back to "
        "selective_scan_torch ('This affects speed', classification/models/csms6s.py:9-22,"
        "124-125); Triton cross-scan kernels (csm_triton)",
        ("minor work", "major work"),
    ),
}

#: The snapshot each twenty-second-sample tree was extracted from (HEAD of the stored mirror).
#: fastmoe, quokka, VTK-m, facefusion, nvblox, Mask2Former and cuhnsw are complete; ExaGO
#: (viz/README.pdf and 2 viz/data .json files), VMamba (1 .png) and KeyHunt-Cuda (a Windows
#: .obj, .exe and .lib) were extracted by walking ls-tree with cat-file because those blobs were
#: absent from the stored mirror.
TWENTYSECOND_COMMITS: dict[str, str] = {
    "fastmoe": "ee3c5615a5588c65273a512de82f19ca287e1bdf",
    "quokka": "781f834da0640dd6851dc9b6a54e51ac74033437",
    "VTK-m": "2cd5a5e168124787192f4f857e7e7df58793a67a",
    "ExaGO": "b1401ec0db7eb5f45136e080534bd0d904e2bb8a",
    "facefusion": "33cc6b40a4a538023e12893a0439ce5062e56e36",
    "nvblox": "7c76f90749aa26b89faeca2044fbdcabd910d0a6",
    "Mask2Former": "9b0651c6c1d5b3af2e6da0589b719c514ec0d69a",
    "cuhnsw": "7115e222a8b0406a5c371eff720f8280f335f2cc",
    "KeyHunt-Cuda": "7d048db73e090ff3a93137dd039bc3ec16713756",
    "VMamba": "2ed52ead062a51a64521ed3871d52914bf532876",
}
TWENTYSECOND_ROUTE = tuple(list(TWENTYSECOND_SET)[:5])  # the 5 with a documented route
