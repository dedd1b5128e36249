"""Issue 24's twenty-first sample for benchmarks/real_repos.py (``--set twentyfirst``), kept
apart so the script stays short."""

from __future__ import annotations

#: Issue 24's twenty-first sample (held out, chosen 2026-11-29 15:26-15:35 UTC, after the
#: twentieth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked against every benchmarks/real_repos*.py list, benchmarks/*.toml,
#: benchmarks/port_fresh*.md and by grep -ril against benchmarks/ and docs/ -- faiss, horovod,
#: AutoGPTQ, zfp, miniBUDE, magma, qmcpack, Castro, vllm, sglang, torchvision, llama.cpp,
#: koboldcpp, AdaptiveCpp, slate, nekRS, lammps, cp2k, InvokeAI, stable-diffusion-webui,
#: ComfyUI, FlexFlow, DCNv2, AMGX, ccminer, pycuda, FlashMLA, punica, lmdeploy,
#: llama-cpp-python, AliceVision, warp-ctc, Pointcept, bevfusion, ThunderKittens, flashinfer,
#: HeCBench, lbann, CHAI, Ascent, mpich, specfem, fbgemm, torchaudio, pytorch_scatter, natten,
#: axolotl, xinference, kohya, EETQ, TensorRT-LLM, FasterTransformer, ScaleLLM, onnxruntime,
#: gromacs, dealii and others were candidates dropped because they were named there, and gamer
#: because the string occurs there (ProGamerGov in port_fresh7.md); three fetched candidates
#: were dropped on their own files: Retrieval-based-Voice-Conversion-WebUI (AMD on Linux is its
#: CPU path, README.md:86-90, and it has no CUDA code of its own), GPUJPEG (its AMD route is
#: ZLUDA running the CUDA build, ZLUDA.md:1-30 -- neither a ROCm/HIP route nor none) and
#: gpumembench (an OpenCL implementation beside every CUDA one, README.md:5, which makes its
#: AMD status ambiguous); h2ogpt ("Untested AMD support", docs/FAQ.md:2732-2734) and
#: ElasticFusion were fetched as spares and not used), 5 whose own files document a ROCm/HIP
#: route and 5 whose files document none.
#: Route: a PyTorch/JAX JIT kernel generator with a HIP backend for every kernel
#: (OpenEquivariance), a CMake C++ distributed tensor library with H2_ENABLE_ROCM and ROCm CI
#: jobs on LLNL's AMD machines (DiHydrogen), an AMReX cosmology code with a HIP GPU backend and
#: a HIP CI job (Nyx), a Python diffusion-transformer serving engine with a ROCm image and AITER
#: backends (xDiT), and a Kokkos C++ AMR framework with Frontier machine files and a ROCm/HIP
#: CI job (parthenon).
#: No route: a PyTorch neural-network potential with an opt-in cuAEV CUDAExtension (torchani),
#: a CMake C++ RGB-D SLAM library with an optional CUDA engine (InfiniTAM), an LLM serving system
#: on CUDA virtual-memory APIs with a modified NVIDIA UVM driver (vattention), a Makefile CUDA
#: Smith-Waterman protein database search with DPX kernels (CUDASW4), and a CMake/pybind11/MATLAB
#: MRI NUFFT library on cuFFT and texture references (gpuNUFFT). Status and allowed verdicts
#: were written down from each repository's own files (``file:line`` in the snapshot,
#: ``TWENTYFIRST_COMMITS``) before gpuport was run on any of them.
TWENTYFIRST_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "OpenEquivariance": (
        "PASSIONLab/OpenEquivariance",
        "PyTorch/JAX package; 'a CUDA and HIP kernel generator' (README.md:9), JAX on AMD with "
        "'JAX_HIP=1 pip install openequivariance_extjax' (README.md:43-47), 'A Linux system "
        "equipped with an NVIDIA / AMD graphics card' with 'CUDA or RocM support' and an OLCF "
        "Frontier (MI250x) install tab (docs/installation.rst:10-13,126-128), every operation "
        "marked HIP-supported (docs/supported_ops.rst:9-32), tested on MI250x and MI300x "
        "(docs/tests_and_benchmarks.rst:105-106); the JIT extension takes a HIP branch "
        "(-DHIP_BACKEND, kernel text rewritten for HIP: "
        "openequivariance/openequivariance/_torch/extlib/__init__.py:23-32,103-105) and the "
        "CMake stable extension builds torch_stable_hip (openequivariance/CMakeLists.txt:"
        "119-177)",
        ("ready", "minor work"),
    ),
    "DiHydrogen": (
        "LLNL/DiHydrogen",
        "CMake C++ distributed tensor library for LBANN; option H2_ENABLE_ROCM 'Search for and "
        "enable ROCm/HIP language features', exclusive with CUDA (CMakeLists.txt:43-58), "
        "enable_language(HIP) 'to compile .cu files as HIP files', hipcub and rocm_smi "
        "(CMakeLists.txt:255-307); GitLab CI builds and tests it with amdclang on ROCm 6.2.1 "
        "(Tioga, MI250X, .gitlab/build-and-test-tioga.yml:19-32, the legacy DistConv too) and "
        "ROCm 6.0.2 (Corona, .gitlab/build-and-test-corona.yml:26-29) with -D "
        "H2_ENABLE_ROCM and CMAKE_HIP_ARCHITECTURES (.gitlab/configure_h2.sh:20-23,28); the "
        "README documents no build",
        ("ready", "minor work"),
    ),
    "Nyx": (
        "AMReX-Astro/Nyx",
        "AMReX cosmological hydrodynamics code; MPI + 'CUDA/HIP/DPC++' and 'HIP-Clang' "
        "(README.md:28,40), Nyx_GPU_BACKEND NONE,SYCL,CUDA,HIP (Docs/sphinx_documentation/"
        "source/getting_started/BuildingCMake.rst:88-89; cmake/NyxSetupAMReX.cmake:28-31), GNU "
        "make USE_HIP=TRUE 'under development' (BuildingGMake.rst:92), SUNDIALS 'with HIP "
        "support (with ROCm 4.5)' (NyxSundials.rst:83-107), a CI job 'HIP ROCm@4.3' building "
        "with -DNyx_GPU_BACKEND=HIP -DAMReX_AMD_ARCH=gfx908 and hipcc (.github/workflows/"
        "linux.yml:164-200); no .cu files (AMReX ParallelFor); subprojects/amrex and sundials "
        "submodules not in the snapshot",
        ("ready", "minor work"),
    ),
    "xDiT": (
        "xdit-project/xDiT",
        "Python diffusion-transformer inference engine (xfuser); 'For running with AMD GPUs "
        "(MI300X or newer), a monthly image with validated support ... rocm/pytorch-xdit' "
        "(README.md:200), AITER attention backends 'recommended' on MI300X (README.md:275-286), "
        "platform 'rocm' from torch.version.hip and AITER GroupNorm set up on HIP "
        "(xfuser/envs.py:54-56,143-147,218-236,405-418); pure Python (setup.py:28-42, "
        "flash-attn an extra); its own Dockerfile is NVIDIA's (docker/Dockerfile:3)",
        ("ready", "minor work"),
    ),
    "parthenon": (
        "parthenon-hpc-lab/parthenon",
        "Kokkos C++ adaptive-mesh-refinement framework; machine file for OLCF Frontier/Crusher "
        "with MACHINE_VARIANT hip-mpi default, Kokkos_ENABLE_HIP, Kokkos_ARCH_VEGA90A, hipcc "
        "(cmake/machinecfg/FrontierAndCrusher.cmake:18-47), likewise Spock (gfx908, "
        "cmake/machinecfg/Spock.cmake:19-39), a GitHub CI job CI-Rocm-HIP building with hipcc in "
        "a rocm5.4.3 image (.github/workflows/check-compilers.yml:46-72, continue-on-error) via "
        "cmake/machinecfg/GitHubActions.cmake:31-34; Kokkos and Catch2 submodules (external/) "
        "not in the snapshot",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "torchani": (
        "aiqm/torchani",
        "none; PyTorch ANI neural-network potentials; 'can be run in CUDA-enabled GPUs' and "
        "'**untested** with AMD GPUs (ROCm | HIP)' (README.md:129-132); the cuAEV CUDA "
        "extension (torchani/csrc/aev.cu, cuaev.cpp, CUB) is opt-in -- 'built manually if "
        "installed from GitHub' (README.md:134-139), only with the 'ext' flag (setup.py:43-80, "
        "164-186, nvcc -gencode per SM) -- and uses full-mask 32-lane shuffles "
        "(__shfl_down_sync(0xFFFFFFFF, ...), aev.cu:715-720,749-751); the pure-PyTorch core "
        "runs on any torch device",
        ("minor work", "major work"),
    ),
    "InfiniTAM": (
        "victorprad/InfiniTAM",
        "none; CMake C++ RGB-D SLAM library; 'CUDA ... OPTIONAL but REQUIRED for all GPU "
        "accelerated code' with the CPU part compiling without (README.md:40-43); "
        "WITH_CUDA defaults to CUDA_FOUND, else -DCOMPILE_WITHOUT_CUDA (InfiniTAM/cmake/"
        "UseCUDA.cmake:5-7,58), legacy FindCUDA CUDA_ADD_LIBRARY (cmake/SetCUDALibTarget.cmake:"
        "7-8); the GPU engine is 7 .cu files (ITMLib/Trackers/CUDA, Engines/*/CUDA) with "
        "warp-synchronous volatile reductions (ITMLib/Utils/ITMCUDAUtils.h:5-13); a Metal "
        "path for Apple",
        ("major work", "blocked"),
    ),
    "vattention": (
        "microsoft/vattention",
        "none; LLM serving system (Sarathi-Serve) with a KV-cache memory manager on 'CUDA "
        "virtual memory APIs' (README.md:3; cuMemCreate/cuMemMap in vattention/"
        "cudaInternal.h:32-77), a modified NVIDIA UVM driver (README.md:13, "
        "nvidia-vattn-uvm-driver/), 'PyTorch 2.3.0 and CUDA 12.1 ... tested ... A100' "
        "(README.md:19), vattention built as a CUDAExtension linked with -lcuda "
        "(vattention/setup.py:10-12), sarathi-lean on flashinfer 0.0.6 and flash-attn 2.5.9 "
        "(sarathi-lean/requirements.txt:18,22) with nvcc checks (sarathi-lean/setup.py:28-88), "
        "pod_attn sm80 CUTLASS kernels",
        ("major work", "blocked"),
    ),
    "CUDASW4": (
        "asbschmidt/CUDASW4",
        "none; CUDASW++4.0 Smith-Waterman protein database search; 'CUDA Toolkit 12.2 or "
        "newer', 'A modern CUDA-capable GPU ... Ampere (sm_80), Ada Lovelace (sm_89), and "
        "Hopper (sm_90)' (Readme.md:10,16), DPX kernels for Hopper (Readme.md:103; "
        "src/dpx_s16_kernels.cuh), Makefile with COMPILER = nvcc, -arch=native, "
        "-lnvToolsExt (Makefile:7,11)",
        ("major work", "blocked"),
    ),
    "gpuNUFFT": (
        "andyschwarzl/gpuNUFFT",
        "none; MRI non-uniform FFT library with MATLAB mex files and a pybind11 module; needs "
        "'CUDA capable graphics card and working installation of CUDA Toolkit' (README.md:15), "
        "FIND_PACKAGE(CUDA REQUIRED) and cuFFT (CUDA/CMakeLists.txt:26,149), cuda_add_library "
        "for the Python module (CUDA/src/gpu/python/CMakeLists.txt:12) built by setup.py's "
        "CMakeBuild (setup.py:16-112), legacy texture references (CUDA/inc/cuda_utils.cuh:10-12; "
        "tex1Dfetch in CUDA/src/gpu/atomic/texture_gpuNUFFT_kernels.cu:90)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each twenty-first-sample tree was extracted from (HEAD of the stored mirror).
#: OpenEquivariance, DiHydrogen, parthenon, InfiniTAM, xDiT and CUDASW4 are complete; torchani
#: (2 .pdb files under dataset/), Nyx (3 .nyx initial-condition files under Exec/), vattention
#: (2 trace .csv files and 1 .png) and gpuNUFFT (2 .mat demo files) were extracted by walking
#: ls-tree with cat-file because those data blobs were absent from the stored mirror.
TWENTYFIRST_COMMITS: dict[str, str] = {
    "OpenEquivariance": "1bfa74e1078780f9f98e54281beff12fccfcf536",
    "DiHydrogen": "d7d6e9c704e4ae7dab7e006d8867db4748d1f303",
    "Nyx": "05ccb5950c4fc9979dec253b89319ae5ae58bac8",
    "xDiT": "175e0bfec974d0b44a0be9fa511df2f9f5ead080",
    "parthenon": "79d5d301068cf34603c5194a796cdcbd3a134dae",
    "torchani": "800dcdd368bed6952e79c745bc23ef5ba4f81dfa",
    "InfiniTAM": "4156547e7f118c3a303d0b3c20f4da2aa3bfc9c9",
    "vattention": "ef3fff25dbe4e10f5897da8648718c53df6a20ea",
    "CUDASW4": "37a394c372e35086e7ac7da844e262d9645565e3",
    "gpuNUFFT": "350fc322ce0e259efc8b1dfd49e7339163ca7f2f",
}
TWENTYFIRST_ROUTE = tuple(list(TWENTYFIRST_SET)[:5])  # the 5 with a documented route
