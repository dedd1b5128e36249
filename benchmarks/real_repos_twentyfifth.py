"""Issue 24's twenty-fifth sample for benchmarks/real_repos.py (``--set twentyfifth``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-fifth sample (held out, chosen 2026-11-30 03:12-03:20 UTC, after the
#: twenty-fourth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (owner/name and bare name checked by grep -ril against benchmarks/ and docs/ with
#: /work/notes/excl24x.py, and no folder of that name under /work/trees/scan/*/ -- zfp,
#: BabelStream, miniBUDE, CloverLeaf, XSBench, RSBench, dbcsr, VkFFT, superlu_dist, STRUMPACK,
#: sundials, MGARD, AutoGPTQ, exllama, AutoAWQ_kernels, causal-conv1d, mamba, pytorch_scatter,
#: marlin, nccl-tests, nvdiffrast, MinkowskiEngine, ccminer, cuCollections, NATTEN, quip-sharp,
#: flute, torch-ngp, openmm, darknet (AlexeyAB and pjreddie), neko, DCA, arbor, Tiled-MM,
#: mixbench, horovod, gloo, ucc, zero-rk, libCEED, jittor, AITemplate, octotiger, hiop,
#: specfem3d, elpa, DualSPHysics, FLAMEGPU2, mumax 3, DeepEP, brian2cuda, gunrock, shoc,
#: warpcore, grouped_gemm, EET, CTranslate2, candle, gpusph, GPUJPEG, parsec, Aluminum,
#: DiHydrogen, Quicksilver, lbann, lc0, qiskit-aer, QuEST, realm, traccc, celeritas,
#: pixeltrack-standalone, sw4, ChASE, gpt-neox, apex, abacus-develop, xformers, sphexa,
#: DeepSpeed, torch-harmonics, OpenEquivariance, torchani, optimum-quanto, VanitySearch,
#: CudaSift and GenomeWorks were candidates dropped because they were named there). Dropped
#: on their own files or snapshots: madgraph4gpu (28,842 files in the stored HEAD, over the
#: size bound), microsoft/Megatron-DeepSpeed (a fork of NVIDIA/Megatron-LM, a dev-set input:
#: the same megatron/fused_kernels), lightvector/KataGo (its AMD route is the in-tree OpenCL
#: backend, README.md:89,94 -- neither a ROCm/HIP route nor none, as the twenty-second's
#: mfakto and the twenty-third's BitCrack), yuhc/gpu-rodinia (an OpenCL implementation beside
#: every CUDA benchmark, opencl/ -- the same), charmplusplus/charm (6,352 files, no HIP
#: route of its own), LBL-CAMERA/ADEPT and openfpm/openfpm (no stored snapshot); Kilosort,
#: CARLsim6, arrayfire, h2o4gpu, llama2.cu, CudaMiner, nheqminer and BSGS were not needed.
#: 5 whose own files document a ROCm/HIP route and 5 whose files document none.
#: Route: LLNL's CMake C++ distributed dense linear-algebra library (Hydrogen, a GPU fork of
#: Elemental) with Hydrogen_ENABLE_ROCM building its .cu BLAS kernels with hip_add_library
#: (Elemental), an autotools C task-based runtime with a HIP driver and a HIP CI profile
#: (starpu), a CMake C++ real-space DFT code whose device kernels in .cc files are compiled as
#: CUDA or HIP by GPU_LANG with a Crusher (MI250X) setup script (dftfe), a small CMake/Make
#: tensor-transpose library (cuTT's successor) with `make hip`, ENABLE_HIP and an MI100 GitLab
#: CI stage (Librett), and a Python/CMake quantum-circuit simulator whose Kokkos device is
#: built with Kokkos HIP and shipped as lightning.amdgpu wheels for MI300 (pennylane-lightning;
#: its two .cu files belong to the NVIDIA-only lightning.gpu/lightning.tensor devices). No
#: route: a CMake CUDA fully-homomorphic-encryption library with inline PTX on by default
#: (phantom-fhe), a CMake Thrust CUDA/OpenMP amplitude-analysis fitting framework (GooFit), a
#: CMake PyTorch-ops library of molecular-ML kernels (NNPOps), an AlphaFold training/inference
#: package with a CUDAExtension (FastFold), and a Makefile C/CUDA proof-of-work solver
#: collection with inline PTX (cuckoo). dftfe and Librett have no .cu files: their GPU code is
#: .cc/.cpp compiled as CUDA or HIP. Status and allowed verdicts were written down from each
#: repository's own files (``file:line`` in the snapshot, ``TWENTYFIFTH_COMMITS``) before
#: gpuport was run on any of them.
TWENTYFIFTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "Elemental": (
        "LLNL/Elemental",
        "CMake C++ distributed dense linear algebra, 'Hydrogen', a fork of Elemental 'ported to "
        "make use of GPGPU accelerators' (README.md:3-8; the README documents only "
        "Hydrogen_ENABLE_CUDA, README.md:75); option(Hydrogen_ENABLE_ROCM 'Search for ROCm/HIP "
        "support') exclusive with CUDA (CMakeLists.txt:157-167), find_package(HIP) and hipCUB "
        "(CMakeLists.txt:409-468), hip_add_library(Hydrogen_ROCM STATIC "
        "${HYDROGEN_GPU_SOURCES}) building the six src/hydrogen/blas/gpu/*.cu kernels "
        "(CMakeLists.txt:650; src/hydrogen/blas/gpu/CMakeLists.txt:1-8), which include "
        "hip/hip_runtime.h under HYDROGEN_HAVE_ROCM (src/hydrogen/blas/gpu/Axpy.cu:11-13; "
        "include/El/core.hpp:63-64); no CI in the tree; last commit 2021-06",
        ("ready", "minor work"),
    ),
    "starpu": (
        "starpu-runtime/starpu",
        "autotools C task-based runtime for heterogeneous machines; --enable-hip 'Enable the "
        "minimal-support HIP driver (only for testing)', exclusive with CUDA "
        "(configure.ac:2208-2249, hipconfig, STARPU_USE_HIP_ROC on amd); the HIP driver "
        "src/drivers/hip/driver_hip.c with hipBLAS/hipSOLVER helpers (src/Makefile.am:364-368; "
        "include/starpu_hip.h); 'Driver for HIP-based GPUs' (ChangeLog:198); a CI profile "
        "compiles --disable-cuda --enable-hip (ci/profiles/tests.py:35-36); FAQ 'StarPU does "
        "not see my HIP device' (doc/doxygen/chapters/starpu_faq/faq.doxy:389-392); .hip "
        "examples beside the .cu ones (examples/Makefile.am:516-518); the 62 .cu files are "
        "CUDA codelets of examples, tests and starpufft",
        ("ready", "minor work"),
    ),
    "dftfe": (
        "dftfeDevelopers/dftfe",
        "CMake C++ real-space finite-element Kohn-Sham DFT code; WITH_GPU with GPU_LANG "
        "cuda/hip enables the CUDA or HIP language (CMakeLists.txt:20-29), the same *Device*.cc "
        "kernel sources get LANGUAGE HIP and -D__HIP_PLATFORM_AMD__ (CMakeLists.txt:193-233), "
        "hipBLAS and RCCL under hip (CMakeLists.txt:322-326,563-568; utils/*.hip.cc beside "
        "*.cu.cc); the OLCF Crusher script sets gpuLang=hip, gfx90a and -lamdhip64 "
        "(helpers/Crusher/setupUserCrusher.sh:35,53,92-104); the manual loads rocm/5.1.0 'if "
        "installing for AMD GPUs' (doc/manual/installation.tex:8,15); no .cu files; last "
        "commit 2024-03",
        ("ready", "minor work"),
    ),
    "Librett": (
        "victor-anisimov/Librett",
        "small tensor-transpose library for 'nVidia, AMD, and Intel GPU accelerators', the "
        "successor of cuTT with hipTT's AMD port and 'warpsize 64' (README.md:3,12-14); `make "
        "hip` (README.md:44-58; Makefile:13-14; Makefile.hip:29 hipcc) and CMake ENABLE_HIP "
        "with CMAKE_HIP_ARCHITECTURES gfx908 (CMakeLists.txt:19,43-47); a GitLab CI stage "
        "builds `make hip` on MI100 nodes with rocm/5.5.0 (.gitlab-ci.yml:94-118); no .cu "
        "files (src/*.cpp compiled per platform)",
        ("ready", "minor work"),
    ),
    "pennylane-lightning": (
        "PennyLaneAI/pennylane-lightning",
        "Python/C++ quantum-circuit simulators; lightning.kokkos runs on 'CUDA or HIP' and "
        "'lightning.amdgpu: a state-vector simulator specifically for AMD GPUs' (README.md:"
        "69-71), pre-built wheels for MI300 with ROCm 7.0 (README.md:88-95); Frontier build "
        "page (doc/lightning_kokkos/installation_hpc.rst:9,32); a ROCm wheel workflow builds "
        "Kokkos with Kokkos_ENABLE_HIP and hipcc for lightning_amdgpu (.github/workflows/"
        "wheel_linux_x86_64_rocm.yml:53-55,76,96,99,114); the two .cu files belong to "
        "lightning.gpu (cuStateVec) and lightning.tensor (cuTensorNet), NVIDIA-only devices "
        "(pennylane_lightning/core/simulators/lightning_gpu, lightning_tensor)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "phantom-fhe": (
        "encryptorion-lab/phantom-fhe",
        "none; 'A CUDA-Accelerated Fully Homomorphic Encryption Library', 'Native GPU "
        "acceleration (for NVIDIA GPUs)', tested on A100/30xx/4090/Xavier (README.md:1,9-10,"
        "19); project(Phantom LANGUAGES CXX CUDA) with PHANTOM_USE_CUDA_PTX ON by default and "
        "CMAKE_CUDA_ARCHITECTURES native (CMakeLists.txt:3-13); inline PTX "
        "(include/uintmath.cuh:40,49,186-229); 64 .cu/.cuh; pybind module under python/; last "
        "commit 2025-01",
        ("major work", "blocked"),
    ),
    "GooFit": (
        "GooFit/GooFit",
        "none; amplitude-analysis fitting framework 'written using Thrust for CUDA and "
        "OpenMP' (README.md:15,35-49); GOOFIT_DEVICE CUDA/OMP/CPP/TBB selects the Thrust "
        "device system (CMakeLists.txt:187-199,270) -- on AMD only the OpenMP/TBB CPU builds "
        "run; 108 .cu files of PDFs built as CUDA; device-symbol copies through "
        "cudaMemcpyFromSymbol (include/goofit/GlobalCudaDefines.h:63-70); no warp intrinsics "
        "or inline PTX in src/ and include/; extern/ (thrust, MCBooster, Minuit2 ...) are "
        "submodules not in the tree",
        ("minor work", "major work"),
    ),
    "NNPOps": (
        "openmm/NNPOps",
        "none; high-performance operations for neural-network potentials with 'both CPU (pure "
        "C++) and CUDA implementations' (README.md:17-19), installed from conda-forge or built "
        "with the CUDA Toolkit (README.md:29-44); option(ENABLE_CUDA ... ON) enables the CUDA "
        "language and the .cu kernels (CMakeLists.txt:6-9,18-30); torch.ops.load_library of "
        "the built library (src/pytorch/__init__.py:14); 32-bit ballots and shuffles "
        "(src/ani/CudaANISymmetryFunctions.cu:230,461; src/schnet/CudaCFConv.cu:117-121,"
        "273-280,330)",
        ("major work", "blocked"),
    ),
    "FastFold": (
        "hpcaitech/FastFold",
        "none; AlphaFold training and inference on GPU clusters; requires 'NVIDIA CUDA 11.3 "
        "or above', conda environment.yml then `python setup.py install` (README.md:33-49; "
        "environment.yml:21,24 cudatoolkit=11.3), Triton kernels optional (README.md:54-59), "
        "Intel Habana path separate (README.md:189-196); setup.py builds the CUDAExtensions "
        "from fastfold/model/fastnn/kernel/cuda_native/csrc when CUDA_HOME is set, running "
        "nvcc -V and -gencode sm_70/sm_80 (setup.py:12-20,86-111); 32-lane shuffles "
        "(layer_norm_cuda_kernel.cu:50-58, softmax_cuda_kernel.cu:20,27); last commit 2023-07",
        ("major work", "blocked"),
    ),
    "cuckoo": (
        "tromp/cuckoo",
        "none; Cuckoo Cycle proof-of-work solvers in C/C++ with CUDA miners (README.md:117, "
        "'mean_miner.cu is a reasonably optimal GPU miner'; the AMD RX 6900 XT named in a "
        "speed bounty, README.md:153, is not a route); per-variant Makefiles call `nvcc` with "
        "-arch sm_35 (src/cuckatoo/Makefile:15,112-121); inline PTX ld.global.cs/st.global.cg "
        "(src/cuckarooz/mean.cu:60-71); 15 .cu files under src/cuck*/",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-fifth-sample tree was extracted from (HEAD of the stored mirror).
#: Elemental, starpu, dftfe, Librett, pennylane-lightning, phantom-fhe, NNPOps and FastFold
#: are complete (git archive); GooFit (examples' toy-MC .txt data files) and cuckoo
#: (private/found25) were extracted by walking ls-tree with cat-file because those blobs were
#: absent from the stored mirror.
TWENTYFIFTH_COMMITS: dict[str, str] = {
    "Elemental": "d0d7f56cf1e11b2ae2878c78609803f97e60195f",
    "starpu": "3f3cc82a6fe5fd0b919f8c6954ac8254b1fb3190",
    "dftfe": "352ded07682779bbbce301b1e781add117fe8fc2",
    "Librett": "07b4d392f60076d3277d4c2ba71b2f62ffdab57a",
    "pennylane-lightning": "de1210fc5664ce5b459e0136439eff48b3cad9a5",
    "phantom-fhe": "1f4a198443b3af77118e51f53d5b8f332154b875",
    "GooFit": "7af21b66a3d06a25998457dc9b7709c5b7dad8e9",
    "NNPOps": "cc46c13ea1e45f62a19a0664e0010496877b77f0",
    "FastFold": "eba496808a91bbcd9661cf832349a418b197015f",
    "cuckoo": "86c77bc0b2f520852b8f81828e05fbbe626fb7e3",
}
TWENTYFIFTH_ROUTE = tuple(list(TWENTYFIFTH_SET)[:5])  # the 5 with a documented route
