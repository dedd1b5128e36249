"""Issue 24's twenty-seventh sample for benchmarks/real_repos.py (``--set twentyseventh``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-seventh sample (held out, chosen 2026-11-30 06:01-06:08 UTC, after the
#: twenty-sixth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ with
#: /work/notes/excl24x.py, and no folder of that name under /work/trees/scan/*/ -- VkFFT,
#: exllamav2, CTranslate2, AutoGPTQ, HIPRT, MGARD, BabelStream, miniBUDE, pytorch_scatter,
#: PowerInfer, ik_llama.cpp, curobo, gunrock, hornet, FZ-GPU, warp (NVIDIA), DualSPHysics,
#: marlin, calm, BitBLAS, chrono, llama.cpp, celeritas, madgraph4gpu, WarpX, MAESTROeX, Nyx,
#: picongpu, warp-ctc, sglang, ao, AutoAWQ, hqq, punica, Atom, flute, mistral.rs, candle,
#: flashinfer, DeepSpeed, FasterTransformer, ollama, tvm, MatX, cuCollections, nccl-tests,
#: rwkv.cpp, chatglm.cpp, ggml, BitNet, vllm, openfpm, laghos, cutlass, openmm, arbor,
#: LMCache, causal-conv1d, mamba, llama-cpp-python, tabby, pcl, nvdiffrast, genn, nest-gpu,
#: gpusph, FlashMLA, DeepEP, Quest, SpargeAttn, Open3D, apex, xformers, brian2cuda, sundials,
#: hiop, libCEED, magma, ascent, petsc, lorax, TensorRT-LLM and ginkgo were candidates
#: dropped because they were named there). Dropped on their own files or for the mix:
#: microsoft/onnxruntime-genai (its ROCm build was removed; only ThirdPartyNotices and a
#: test mention ROCm -- neither kind cleanly), Genesis-Embodied-AI/quadrants (a ROCm route
#: -- README.md:10, QD_WITH_AMDGPU -- but a fork of taichi, which an earlier sample used and
#: re-ran), openfpm_pdata (the openfpm name is used), omega_h, ExaMPM and miniVite (no GPU
#: code of their own or no HIP evidence in the tree), espresso, dietgpu, cuSZp, graphblast,
#: warp-rnnt (an RNN-T loss like the twenty-sixth's warp-transducer), CPM.cu,
#: ByteTransformer, LuxCore, HugeCTR, cuda-quantum, LuisaCompute and ramsesGPU passed the
#: name check but were not needed.
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: a CMake C++ wind-energy CFD code on Trilinos/Kokkos with ENABLE_ROCM and
#: KOKKOS_ENABLE_HIP branches (nalu-wind), a Bazel/Python ML compiler (TensorFlow/PyTorch
#: plugin) whose README lists AMD GPU and Hygon DCU support and whose AMD CI builds a
#: ROCm 5.2 docker (BladeDISC), a lossless/lossy compression-algorithm framework whose README
#: says "A HIP version is also included", with __HIPCC__ guards and a wave64 WS in its code
#: generator (LC-framework), a CMake C++ nonlinear solid-mechanics code on MFEM/RAJA/Umpire
#: with SERAC_ENABLE_HIP, HIP host-configs and a spack ROCmPackage (serac), and a C++ LLM
#: inference engine on a vendored ggml whose own CI builds -DGGML_HIP=ON (chatllm.cpp).
#: No route: a header-only CUDA key-value store for recommender embeddings with inline PTX
#: (HierarchicalKV), a header-only CUDA MPPI robot-control library (MPPI-Generic), a
#: multi-GPU CUDA material-point-method physics simulator (claymore), a FindCUDA multi-GPU
#: asynchronous graph-analytics framework (groute), and a C++ ML library with a CUDA/cuDNN
#: backend and a speech-recognition package (flashlight).
#: nalu-wind and serac's GPU code is mostly in their dependencies (Trilinos/Kokkos; MFEM,
#: RAJA, Umpire, submodules not in the tree); chatllm.cpp's CUDA is all ggml's (a name used
#: before, vendored here, as rmgdft's Tiled-MM in the twenty-sixth); flashlight vendors
#: warpctc (warp-ctc, a name used before) in flashlight/pkg/speech/third_party/warpctc.
#: Status and allowed verdicts were written down from each repository's own files
#: (``file:line`` in the snapshot, ``TWENTYSEVENTH_COMMITS``) before gpuport was run on any of
#: them.
TWENTYSEVENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "nalu-wind": (
        "Exawind/nalu-wind",
        "CMake C++ wind-energy CFD solver on Trilinos/STK/Kokkos (project(Nalu-Wind CXX), "
        'CMakeLists.txt:3); option(ENABLE_ROCM "Enable build targeting AMD GPU") beside '
        "ENABLE_CUDA (CMakeLists.txt:8-9); ENABLE_ROCM does find_package(hip) and links "
        "HIP_LIBRARIES (CMakeLists.txt:67-71) and adds -fgpu-rdc (CMakeLists.txt:137-139); "
        "ENABLE_CUDA links CUDA::cusparse/curand/cudart/cublas/nvToolsExt (CMakeLists.txt:"
        "55-65); the sources branch on KOKKOS_ENABLE_HIP (include/KokkosInterface.h:38-48, "
        "src/Simulation.C:49-52, src/matrix_free/StkSimdGatheredElementData.C:36); the bug "
        "template offers 'rocm (AMD)' (.github/ISSUE_TEMPLATE/bug_report.md:20); no .cu files; "
        "wind-utils and reg_tests/mesh are submodules not in the tree; last commit 2026-03",
        ("ready", "minor work"),
    ),
    "BladeDISC": (
        "alibaba/BladeDISC",
        "Bazel/C++/Python dynamic-shape ML compiler (TensorFlow/PyTorch plugin); backend "
        "support matrix 'AMD GPU | Yes', 'Hygon DCU | Yes' (README.md:76-82); the AMD workflow "
        "builds docker/dev/Dockerfile.rocm5.2 and runs scripts/ci/build_and_test.sh "
        "--rocm_path /opt/rocm-5.2.0 --rocm on an amd-gpu runner (.github/workflows/amd.yml:"
        "9,21-36), which passes ${ROCM} to configure/build_tao_bridge/build_tao_compiler "
        "(scripts/ci/build_and_test.sh:34-36); build:rocm --define=using_rocm=true "
        "(.bazelrc:46-47); pytorch_blade's torch_dcu_rocm config (pytorch_blade/bazel_build.py:"
        "135-136); GPU kernels are generated by the compiler (nvvm or rocm, docs/developers/"
        "pass_pipeline.md:815-819); custom .cu.h kernels in tao_compiler/mlir/custom_ops; the "
        "cutlass and tf_community submodules are not in the tree; the route is ROCm-5.2 era; "
        "last commit 2024-08",
        ("ready", "minor work"),
    ),
    "LC-framework": (
        "burtscher/LC-framework",
        "C++/CUDA framework that searches and generates lossless and lossy compression "
        "pipelines; 'The GPU code is written in CUDA. A HIP version is also included' "
        "(README.md:26); built by hand with nvcc -DUSE_GPU (README.md:61,184-185), no "
        "build-system file; the CUDA-only <cuda/std/limits> and <cuda/atomic> are guarded "
        "by #if !defined(__HIPCC__) ('cannot be automatically replaced by HIPIFY', "
        "framework.h:79-83, compressor-framework.cu:55-58); the code generator writes "
        "WS 64 when __AMDGCN_WAVEFRONT_SIZE == 64 (generate_Device_LC-Framework.py:101-105); "
        "components use the unmasked __shfl_xor of HIP style (components/d_BIT_4.h:56); 3 .cu "
        "files, 165 component headers; last commit 2026-06",
        ("ready", "minor work"),
    ),
    "serac": (
        "LLNL/serac",
        "CMake (BLT) C++ nonlinear implicit thermal-structural FE code on MFEM, RAJA, Umpire "
        "and axom; cmake_dependent_option SERAC_ENABLE_HIP 'Enables Serac with HIP support' "
        "on ENABLE_HIP (cmake/SeracBasics.cmake:31-32), blt::hip as the device dependency "
        "(cmake/thirdparty/SetupSeracThirdParty.cmake:43-47); HIP host-configs for LLNL's "
        "MI250X machines with /opt/rocm-5.7.1 amdclang (host-configs/tioga-toss_4_x86_64_ib_"
        "cray-clang@17.0.0_hip.cmake:32-36, rzvernal-...hip.cmake); spack package class "
        "Serac(CachedCMakePackage, CudaPackage, ROCmPackage) with conflicts('+cuda', "
        "when='+rocm') (scripts/spack/packages/serac/package.py:33,232); its own device "
        "annotations branch on __CUDACC__ (src/serac/infrastructure/accelerator.hpp:16); "
        "2 .cu test files; axom, mfem, tribol, blt, tests are submodules not in the tree; "
        "last commit 2024-10",
        ("ready", "minor work"),
    ),
    "chatllm.cpp": (
        "foldl/chatllm.cpp",
        "C++ LLM inference engine on a vendored ggml (add_subdirectory(ggml), CMakeLists.txt:"
        "39); 'all backends supported by GGML are available', CUDA/RPC/Vulkan listed "
        "(docs/gpu.md:5-14,25-30); the project's own CI builds it with ROCm 6.1.2 and "
        "-DGGML_HIP=ON -DGGML_HIP_ROCWMMA_FATTN=ON (.github/workflows/build.yml:538-566) and "
        "on Windows with the HIP SDK (.github/workflows/build.yml:1123-1187, .github/actions/"
        "windows-setup-rocm/action.yml); all 234 .cu/.cuh are ggml/src/ggml-cuda, built for "
        "HIP by ggml/src/ggml-hip; no CUDA of its own in src/; last commit 2026-08",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "HierarchicalKV": (
        "NVIDIA-Merlin/HierarchicalKV",
        "none; NVIDIA Merlin's header-only GPU hash table for recommender-system embeddings "
        "('The strategies are implemented by CUDA kernels', README.md:9-11,29); requires CUDA "
        ">= 11.2 and 'NVIDIA GPU with compute capability 8.0, 8.6, 8.7 or 9.0' (README.md:"
        "180-183); project(merlin-hkvs LANGUAGES CXX CUDA) with -gencode per arch, default "
        'sm_80 (CMakeLists.txt:17,63-76); inline PTX mov.u64 %%globaltimer with an "=l" '
        "operand (include/merlin/utils.cuh:78), __shfl_sync with a uint32_t mask "
        "(include/merlin/core_kernels/kernel_utils.cuh:41-45), cooperative_groups tiles; "
        "49 .cu/.cuh; last commit 2026-05",
        ("major work", "blocked"),
    ),
    "MPPI-Generic": (
        "ACDSLab/MPPI-Generic",
        "none; 'C++/CUDA header-only library' for Model Predictive Path Integral robot "
        "control, requires 'An NVIDIA GPU' and CUDA 10+ (README.md:2,18-22,31); "
        "project(MPPI-Generic LANGUAGES C CXX CUDA) with MPPI_CUDA_ARCH_LIST (CMakeLists.txt:"
        "2,16); texture objects and tex2D cost maps (include/mppi/cost_functions/autorally/"
        "ar_standard_cost.cu:176,190), cuRAND in the controllers, a volatile warp-synchronous "
        "reduction (include/mppi/core/mppi_common.cu:1162-1175); no shuffles, ballots or PTX; "
        "187 .cu/.cuh (kernels in .cu files included as headers); last commit 2024-09",
        ("minor work", "major work"),
    ),
    "claymore": (
        "penn-graphics-research/claymore",
        "none; SIGGRAPH 2020 multi-GPU Material Point Method physics simulator, 'a "
        "cross-platform C++/CUDA cmake project ... The required CUDA version is 10.2 or 11' "
        "(README.md:1,45); project(Mn LANGUAGES CXX CUDA) (CMakeLists.txt:6-9); "
        "__shfl_down_sync(ACTIVE_MASK, vel_sqr, iter, 32) with constexpr unsigned ACTIVE_MASK "
        "= 0xffffffff (Projects/MGSP/mgmpm_kernels.cuh:250,298; Projects/GMPM/"
        "mgmpm_kernels.cuh:329,394); 37 .cu/.cuh; Data is a submodule and four docs images "
        "were absent from the mirror; last commit 2023-05",
        ("major work", "blocked"),
    ),
    "groute": (
        "groute/groute",
        "none; 'a multi-GPU programming model and framework, implemented over CUDA' for "
        "asynchronous graph analytics (BFS, SSSP, PageRank, CC samples) (README.md:1-6); "
        "find_package(CUDA 7 REQUIRED) and CUDA_NVCC_FLAGS -gencode sm_35..sm_52 "
        "(CMakeLists.txt:7,56-58); warp-aggregated worklists store "
        "__ballot_sync(__activemask(), ...) in an int/unsigned (include/groute/worklist.h:56,"
        "149; include/groute/fused_distributed_worklist.h:152-154); cub, gflags, googletest "
        "are submodules not in the tree; 14 .cu/.cuh; last commit 2021-06",
        ("major work", "blocked"),
    ),
    "flashlight": (
        "flashlight/flashlight",
        "none; C++ ML library (ArrayFire tensors) with speech-recognition (asr), LM and "
        "vision packages; backends 'CUDA and CPU' via vcpkg flashlight-cuda / flashlight-cpu, "
        "the CUDA backend needing CUDA >= 9.2, cuDNN and NCCL (README.md:131-144,155-161); "
        "option FL_USE_CUDA (CMakeLists.txt:92) -> FL_BACKEND_CUDA (CMakeLists.txt:115); "
        "FL_USE_OPENCL is declared (CMakeLists.txt:94) but never turned into FL_BACKEND_OPENCL "
        "(only read in flashlight/fl/autograd/tensor/backend/onednn/DnnlUtils.cpp:13) -- no "
        "ROCm/HIP route; cuDNN autograd backend (flashlight/fl/autograd/tensor/backend/cudnn/"
        "); vendored warpctc with const int warp_size = 32 and __shfl_down_sync(0xffffffff, ...) "
        "(flashlight/pkg/speech/third_party/warpctc/src/reduce.cu:16,44); 13 .cu; last commit "
        "2026-02",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-seventh-sample tree was extracted from (HEAD of the stored mirror).
#: nalu-wind, LC-framework, serac, chatllm.cpp, HierarchicalKV, MPPI-Generic, groute and
#: flashlight are complete (git archive); BladeDISC (tao/third_party/ptxas/10.2/ptxas, a
#: binary) and claymore (four docs/Clips images) were extracted by walking ls-tree with
#: cat-file because those blobs were absent from the stored mirror.
TWENTYSEVENTH_COMMITS: dict[str, str] = {
    "nalu-wind": "a40e39cc2abd7626a88e0d7ea33d80eed7168975",
    "BladeDISC": "58efe1a138cf32b11380710b51593642a0db18a4",
    "LC-framework": "f72e323d52e9c5d1b996d37f81c72b0491c5efb7",
    "serac": "6357a07c8caad21f85ec0a54f21ecb1aeb863f45",
    "chatllm.cpp": "4a4310e165cad9232a347dd299593b8ebaae1ac1",
    "HierarchicalKV": "ae24eecde0b42a90b2c83db15eba0294b5cc2928",
    "MPPI-Generic": "03e6bcc3e9fc7f2b74a88d9c80cdff10ec6cb337",
    "claymore": "3b19462f15892bd12291189e997f5b052784cf61",
    "groute": "5ce16044e4a6e11b9729e4ded01bd2c4a20b7c85",
    "flashlight": "f5f717f337e8cbb4e2239ff5470169aa46d3c708",
}
TWENTYSEVENTH_ROUTE = tuple(list(TWENTYSEVENTH_SET)[:5])  # the 5 with a documented route
