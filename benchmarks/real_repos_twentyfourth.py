"""Issue 24's twenty-fourth sample for benchmarks/real_repos.py (``--set twentyfourth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-fourth sample (held out, chosen 2026-11-30 00:33-00:45 UTC, after the
#: twenty-third sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ with
#: /work/notes/excl24x.py, and no folder of that name under /work/trees/scan/*/ -- ginkgo,
#: hypre, mfem, quda, Grid, YAKL, stdgpu, mscclpp, hoomd-blue, deepmd-kit, Castro, rtp-llm,
#: cupy, exllamav2, HIPRT, SIRIUS, COSMA, DLA-Future, SpFFT, heffte, bitsandbytes, punica,
#: lmdeploy, EETQ, SqueezeLLM, AQLM, hqq, nerfacc, colmap, moderngpu, AMGX, ggnn, finufft,
#: gpu4pyscf, VPTQ, BitNet, SageAttention, nunchaku, DeepGEMM, FlashMLA, xmrig-cuda, pytorch3d,
#: mmcv, Open3D, AliceVision, amgcl, lightseq, GPTQ-for-LLaMa, torchsparse, pytorch_spline_conv,
#: text-embeddings-inference, miniWeather, gsplat, dgl, fairseq, warp, taichi, fp6_llm, ERF,
#: qsim, qulacs, ceres-solver, marian, kaldi, warp-ctc, catboost, thundersvm, thundergbm,
#: CUDASW4, openfold, Uni-Core, ColossalAI, tutel, LMCache, ktransformers, Mooncake, sam2,
#: OpenPCDet, bevfusion, pbrt-v4, Swin-Transformer, aphrodite-engine, mlc-llm, sglang, LocalAI,
#: ollama, llama.cpp, llm.c, llm-awq, gptq, QQQ, Atom, omniserve, QuaRot,
#: intel-extension-for-pytorch, vllm, TensorRT-LLM, FastVideo, SpargeAttn, VMamba,
#: flash-linear-attention, TurboTransformers, flashinfer, fastllm, ik_llama.cpp, OpenSplat,
#: HOT-Step-CPP, CV-CUDA, CuMesh, cubvh, cholla, GPUMD, occa, FlexFlow, legion, DAIN, dlib,
#: mxnet, Pointcept, DCNv4, petsc, torchmd-net, gamer, genn, QUICK, Smilei, BitBLAS, tilelang,
#: ScaleLLM, bart, RTK, quokka, Nanoflow, composable_kernel, cugraph, ThunderKittens,
#: mlcommons/inference, blaspp, hpx, TeaLeaf, Comb, ascent, gpu-burn, HPCTrainingExamples and
#: ekuznetsov139/colmap were candidates dropped because they were named there; none of the
#: twenty-third module's dropped list was taken). Dropped on their own files or snapshots:
#: ABQ-LLM (vendors a FasterTransformer tree, fastertransformer/, 768 .cu -- an earlier
#: input, as the twenty-third's cupla), gaussian-opacity-fields (its GPU code is all in copies
#: of diff-gaussian-rasterization and simple-knn under submodules/), mistral.rs (most of its
#: CUDA is vendored from earlier inputs: flash-attention kernels, marlin, DeepGEMM), KVQuant
#: (vendors a transformers tree, 13,451 files), lapackpp (no kernels of its own: wrappers of
#: cuSOLVER/rocSOLVER), awp-odc-os (the cuda_to_hip.h a search found is not in the stored
#: HEAD, which is CUDA-only), FastDeploy (the stored snapshot, 2024-03, is the 11,270-file
#: vision-deployment tree), flexflow-serve (a fork of FlexFlow, an earlier input); TAMM,
#: changa, nest-gpu, Anime4KCPP, gpt4all, Kangaroo and openMVS were not needed.
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ AMReX plasma particle-in-cell code with HiPACE_COMPUTE=HIP, a LUMI page
#: and a HIP CI job (hipace), a VapourSynth BM3D video-denoising plugin whose separate HIP
#: implementation is built by ENABLE_HIP in Linux and Windows CI (VapourSynth-BM3DCUDA), a
#: CMake C++ distributed tensor library with TA_HIP and .hip thrust kernels (tiledarray), a
#: Python CFD framework whose HIP backend compiles Mako-templated kernels with hiprtc (PyFR),
#: and a CMake C++ seismology code with DEVICE_BACKEND=hip, LUMI/Frontier pages and HIP CI
#: (SeisSol). No route: a single-GPU LLM inference engine in C/CUDA (calm), a KV-cache
#: quantization library with a CUDAExtension (KIVI), NVIDIA's robot-motion library whose
#: kernels are compiled at run time by cuda.core (curobo), a CMake molecular-docking program
#: that requires CUDA 12 (gnina), and a CMake medical-image reconstruction framework with
#: optional CUDA toolboxes and CUDA/no-CUDA Docker images (gadgetron). hipace and PyFR have no
#: .cu files: hipace's GPU code is AMReX ParallelFor lambdas in .cpp compiled as CUDA or HIP
#: plus cuFFT/rocFFT wrappers, PyFR's kernels are Mako templates compiled at run time (NVRTC or
#: hiprtc). Status and allowed verdicts were written down from each repository's own files
#: (``file:line`` in the snapshot, ``TWENTYFOURTH_COMMITS``) before gpuport was run on any of
#: them.
TWENTYFOURTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "hipace": (
        "Hi-PACE/hipace",
        "CMake C++ quasi-static particle-in-cell code on AMReX, 'portable GPU-capable' "
        "(README.md:9,21); 'ROCm 5.2+: for AMD GPU support' (docs/source/building/"
        "building.rst:43-44) and HiPACE_COMPUTE NOACC/CUDA/SYCL/HIP/OMP (building.rst:189; "
        "CMakeLists.txt:94-96); the LUMI page loads rocm/6.0.3, sets gfx90a and configures "
        "-DHiPACE_COMPUTE=HIP (docs/source/building/platforms/lumi_csc.rst:22,28-29,45); a "
        "'HIP SP' GitHub CI build with -DAMReX_AMD_ARCH=gfx900 -DHiPACE_COMPUTE=HIP "
        "(.github/workflows/hip.yml:14,55-56); rocFFT under HIP (cmake/dependencies/"
        "FFT.cmake:52-54; src/fields/fft_poisson_solver/fft/WrapRocFFT.cpp beside "
        "WrapCuFFT.cpp); no .cu files; last commit 2024-10",
        ("ready", "minor work"),
    ),
    "VapourSynth-BM3DCUDA": (
        "WolframRhodium/VapourSynth-BM3DCUDA",
        "VapourSynth BM3D denoising plugin 'implemented in CUDA' (README.md:5,19; the README "
        "names no HIP build); ENABLE_HIP adds hip_source (CMakeLists.txt:9,21-23), a "
        "separate HIP implementation (project(BM3DHIP), find_package(HIP), "
        "-mno-wavefrontsize64 -mcumode: hip_source/CMakeLists.txt:3,5,26; kernel.hip.cpp "
        "beside source/kernel.cu and the NVRTC rtc_source); Linux CI installs ROCm 7.0 and "
        "builds ENABLE_CUDA=OFF ENABLE_HIP=ON for RDNA gfx10/11/12 with amdclang++ "
        "(.github/workflows/linux.yml:58-80), Windows CI builds it with the HIP SDK and "
        "uploads the DLLs (.github/workflows/windows.yml:102-128,180-186)",
        ("ready", "minor work"),
    ),
    "tiledarray": (
        "ValeevGroup/tiledarray",
        "CMake C++ distributed block-sparse tensor library; 'HIP/ROCm compiler and runtime "
        "-- for execution on AMD's ROCm-enabled accelerators' (INSTALL.md:84), TA_HIP "
        "'to turn on HIP/ROCm support' (INSTALL.md:348,353; CMakeLists.txt:129-130,339-340) "
        "enables the HIP language with hipblas/rocthrust (external/hip.cmake:5,14-15) and "
        "builds mult_kernel.hip and reduce_kernel.hip, while the four .cu files are listed "
        "only under TILEDARRAY_HAS_CUDA (src/CMakeLists.txt:271-295); 'initial HIP/ROCm "
        "support' (CHANGES:144); no HIP CI job (.github/workflows/ci.yml)",
        ("ready", "minor work"),
    ),
    "PyFR": (
        "PyFR/PyFR",
        "Python flux-reconstruction CFD framework with CUDA, HIP, Metal, OpenCL and OpenMP "
        "backends (pyfr/backends/__init__.py:1-6); 'The HIP backend targets AMD GPUs which "
        "are supported by the ROCm stack', ROCm >= 6.4.1 and rocBLAS (doc/src/"
        "installation.rst:141-149; doc/src/backends/backend-hip.rst; HIP-aware MPI, "
        "doc/src/performance_tuning.rst:90-108); the HIP backend compiles its Mako kernels "
        "with hiprtc (pyfr/backends/hip/compiler.py:22,38-42) and uses rocBLAS "
        "(pyfr/backends/hip/rocblas.py:22); the CUDA backend (pyfr/backends/cuda, NVRTC, "
        "cuBLASLt) is the NVIDIA path; no .cu files",
        ("ready", "minor work"),
    ),
    "SeisSol": (
        "SeisSol/SeisSol",
        "CMake C++ seismic-wave and earthquake simulation code; DEVICE_BACKEND none/cuda/hip/"
        "acpp/oneapi (cmake/process_users_input.cmake:75-77; CMakeLists.txt:94-98,401-405); "
        "architecture table with hip for gfx900 and later (docs/build-archs.rst:301-330); "
        "LUMI and Frontier pages build 'As device backend, we use HIP' with rocm modules "
        "and -DDEVICE_BACKEND=hip -DDEVICE_ARCH=gfx90a (docs/lumi.rst:24-25,77,207; "
        "docs/frontier.rst:26-27,54-71); GitHub CI builds backend hip for gfx906 in an AMD "
        "container (.github/workflows/build-seissol-gpu.yml:82-95); the hand-written device "
        "kernels are shared CUDA/HIP files (src/Kernels/LinearCK/DeviceAux/cudahip/"
        "KernelsAux.cpp, src/Kernels/DeviceAux/cudahip/PlasticityAux.cpp, "
        "src/Kernels/PointSourceClusterCudaHip.cpp, src/DynamicRupture/FrictionLaws/GpuImpl/"
        "BaseFrictionSolverCudaHip.cpp); the generated kernels come from submodules "
        "(yateto, Device) not in the tree; no .cu files",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "calm": (
        "zeux/calm",
        "none; single-GPU single-batch LLM inference in C with a CUDA backend (Linux) and "
        "experimental Metal (README.md:3,84,126-127); the Makefile compiles src/*.cu with "
        "nvcc on every non-Darwin system and links -lcudart (Makefile:5,16-18,39,86); "
        "src/infer.cu has inline PTX (atom.add.release.gpu, ld.acquire.gpu, %globaltimer: "
        ":342,346,395) and 32-lane ballots and shuffles (:498-509; src/helpers.cuh:18-34); "
        "last commit 2025-04",
        ("major work", "blocked"),
    ),
    "KIVI": (
        "jy-yuan/KIVI",
        "none; tuning-free 2/4/8-bit KV-cache quantization for LLMs; 'Then install our CUDA "
        "implementation: cd quant && pip install -e .' (README.md:54-57) builds the "
        "CUDAExtension kivi_gemv from csrc/gemv_cuda.cu with nvcc flags "
        "(quant/setup.py:14-44), imported by quant/gemv.py:12; the KV packing is Triton "
        "(quant/new_pack.py, models/llama_kivi.py:9-10); pins torch==2.4.1 and flash-attn "
        "(pyproject.toml)",
        ("minor work", "major work"),
    ),
    "curobo": (
        "NVlabs/curobo",
        "none; 'CUDA Accelerated Robot Library' built on PyTorch, CUDA and Warp "
        "(README.md:5,13-14); its 42 .cu/.cuh kernels (curobo/_src/curobolib/kernels) are "
        "compiled at run time with cuda.core by default (setup.py:21-24; "
        "curobo/_src/runtime.py:48-51; curobo/_src/curobolib/backends/__init__.py:8,30), "
        "the pybind CUDAExtensions are deprecated and opt-in (CUROBO_USE_PYBIND=1, "
        "setup.py:24-88); extras cu12/cu13 pin cuda-core and nvidia-cuda-runtime, warp-lang "
        "is a dependency (pyproject.toml:37,44-67)",
        ("major work", "blocked"),
    ),
    "gnina": (
        "gnina/gnina",
        "none; molecular docking with CNN scoring; 'install the latest version of CUDA "
        "(>= 12.0 is required)' (README.md:60), project(gnina C CXX CUDA) and "
        "find_package(CUDA 12.0 REQUIRED) (CMakeLists.txt:2,38); libtorch and libmolgrid are "
        "fetched at configure time (README.md:120); Docker images FROM nvidia/cuda "
        "(docker/ubuntu-22.04/Dockerfile:4, docker/ubuntu-24.04/Dockerfile:4; README.md:47); "
        "9 .cu files in gninasrc/lib; last commit 2025-03",
        ("major work", "blocked"),
    ),
    "gadgetron": (
        "gadgetron/gadgetron",
        "none; CMake C++ medical-image (MRI) reconstruction framework (README.md:3); "
        "option(USE_CUDA ... On) builds the GPU toolboxes (CMakeLists.txt:219-236; 42 .cu "
        "files under toolboxes/*/gpu: core, nfft, mri/pmri, registration, operators, "
        "solvers); the conda environment pins CUDA 12.3 (environment.yml:5,17-25); the "
        "Dockerfile has CUDA and no-CUDA build and runtime stages (Dockerfile:64,73,82,97,"
        "112,126) -- on AMD only the CPU build runs; last commit 2024-11",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-fourth-sample tree was extracted from (HEAD of the stored mirror).
#: hipace, VapourSynth-BM3DCUDA, tiledarray, PyFR, calm, KIVI and gadgetron are complete (git
#: archive); SeisSol (4 codegen/matrices .json, 2 docs figures), curobo (1 .STL mesh, 2 .webm)
#: and gnina (1 .ipynb, 1 .html, 3 test .binmap) were extracted by walking ls-tree with
#: cat-file because those blobs were absent from the stored mirror.
TWENTYFOURTH_COMMITS: dict[str, str] = {
    "hipace": "133a21c666a63b3930cff1baa3d1c8fcb91b8105",
    "VapourSynth-BM3DCUDA": "f613b0a1d1dc2549e4ad74303f1029d03d36b5d7",
    "tiledarray": "84411a6c966bc7aa75b36a09635aa84c13b104bf",
    "PyFR": "2dc378a4fe2c9c809662b835f31aed9e6c919019",
    "SeisSol": "dc06c5c7b5ff8f6ce4c60d42d5f0e05a68f112ef",
    "calm": "cab0b7b44965e7deeb12a6a188b7d64ce224498e",
    "KIVI": "876b4d2d08e3b1d5f70d0969c299d8c7c42ddfb6",
    "curobo": "a35a708ecfbb26eb9ab2d7ef22c65919c4fae4a9",
    "gnina": "25e64dafe2171ad44a655528748dbc38b0a3dfb6",
    "gadgetron": "846ed3fb57b235390ab0fb953edd17af86935d61",
}
TWENTYFOURTH_ROUTE = tuple(list(TWENTYFOURTH_SET)[:5])  # the 5 with a documented route
