"""Issue 24's fourteenth sample for benchmarks/real_repos.py (``--set fourteenth``), kept apart
so the script stays short."""

from __future__ import annotations

#: Issue 24's fourteenth sample (held out, chosen 2026-11-29 06:58-07:05 UTC, after the
#: thirteenth sample had been seen): 10 public repositories never used by gpuport as inputs
#: (names checked by grep -ril against benchmarks/ and docs/ -- faiss, deepmd-kit, AutoGPTQ,
#: horovod, magma, marian, candle, nerfacc, gsplat, pytorch_scatter, FasterTransformer,
#: lmdeploy and others were candidates dropped because they were named there; nekRS was dropped
#: because a large blob (examples/pb146/pb.re2.tgz) was absent from the stored mirror;
#: warp-ctc, whose CMake has a WITH_ROCM option (CMakeLists.txt:26-31), was a spare for the
#: route group, not needed), 5 whose own files document a ROCm/HIP route and 5 whose files
#: document none. Route: a CMake C/C++ distributed sparse direct solver with a HIP option and
#: its own HIP sources (superlu_dist), an autotools C communication framework with ROCm
#: transports beside its CUDA ones (ucx), a Monte Carlo neutron-transport proxy app with
#: separate CUDA, HIP, OpenCL, SYCL and OpenMP versions, each with its own Makefile (XSBench),
#: a PyTorch mixture-of-experts package (setup.py CUDAExtension + run-time JIT kernels) that
#: lists ROCm as a supported GPU (tutel), and a Python-only text-to-speech model whose README
#: installs ROCm PyTorch wheels (F5-TTS). No route: a C++/CUDA deep-learning framework with
#: CMake and a Makefile (caffe), a C++/CUDA transformer inference engine with Python bindings
#: (TurboTransformers; its only AMD word is an AMD *CPU* BLAS remark, README.md:215), a
#: quantum-chemistry Python package with a CMake-built CUDA library (gpu4pyscf), a Python
#: package that JIT-compiles CUDA kernels with nvrtc (keops), and a PyTorch extension package
#: of CUDA attention kernels (fast-transformers). Status and allowed verdicts were written down
#: from each repository's own files (``file:line`` in the snapshot, ``FOURTEENTH_COMMITS``)
#: before gpuport was run on any of them.
FOURTEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "superlu_dist": (
        "xiaoyeli/superlu_dist",
        "CMake C/C++ distributed sparse direct solver; 'You can enable (AMD) GPU with HIP with "
        "the following cmake option: -DTPL_ENABLE_HIPLIB=TRUE' (README.md:171-173), option "
        "TPL_ENABLE_HIPLIB with enable_language(HIP), hipblas/rocblas/rocsolver "
        "(CMakeLists.txt:50,311-382), its own HIP sources (SRC/hip, CMakeLists.txt:631)",
        ("ready", "minor work"),
    ),
    "ucx": (
        "openucx/ucx",
        "autotools C communication framework; 'AMD GPU support - requires ROCm version >= 4.0' "
        "(docs/source/faq.md:85), supported transport ROCm (README.md:175), configure "
        "--with-rocm (config/m4/rocm.m4:53-58) building src/uct/rocm (rocm_copy, rocm_ipc; "
        "docs/source/faq.md:222), CI build with --with-rocm (buildlib/tools/builds.sh:337)",
        ("ready", "minor work"),
    ),
    "XSBench": (
        "ANL-CESAR/XSBench",
        "Monte Carlo transport proxy app; 'XSBench/hip: This version of XSBench is written in "
        "HIP' (README.md:57-58), its own Makefile with COMPILER = amd, CC = hipcc "
        "(hip/Makefile:5,36-38)",
        ("ready", "minor work"),
    ),
    "tutel": (
        "microsoft/tutel",
        "PyTorch mixture-of-experts package; 'Supported GPUs: CUDA(fp64/fp32/fp16/bfp16), "
        "ROCm(fp64/fp32/fp16)' (README.md:6), 'Linux Pytorch for AMD ROCm' wheel index "
        "(README.md:88-89), IS_HIP_EXTENSION branch linking rccl (setup.py:22-24,70-78), "
        "run-time hipcc for its JIT kernels (tutel/custom/custom_kernel.cpp:77-80)",
        ("ready", "minor work"),
    ),
    "F5-TTS": (
        "SWivid/F5-TTS",
        "Python-only text-to-speech model; 'AMD GPU: Install pytorch with your ROCm version "
        "(Linux only)', torch==2.9.1+rocm7.2 from the rocm7.2 wheel index (README.md:55-62)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "caffe": (
        "BVLC/caffe",
        "none; C++/CUDA deep-learning framework, 'CUDA is required for GPU mode' "
        "(docs/installation.md:34), 'Caffe requires the CUDA nvcc compiler to compile its GPU "
        "code' (docs/installation.md:58), CUDA unless CPU_ONLY (CMakeLists.txt:30-31, "
        "Makefile.config.example:8,30)",
        ("major work", "blocked"),
    ),
    "TurboTransformers": (
        "Tencent/TurboTransformers",
        "none; C++/CUDA transformer inference engine with Python bindings, project(... CUDA) "
        "and TT_WITH_CUDA under WITH_GPU (CMakeLists.txt:35-43), GPU build in an nvidia-docker "
        "CUDA image (README.md:123-132); 'Better performance on AMD CPU' (README.md:215) is a "
        "CPU BLAS remark",
        ("major work", "blocked"),
    ),
    "gpu4pyscf": (
        "pyscf/gpu4pyscf",
        "none; quantum-chemistry Python package, wheels per CUDA version gpu4pyscf-cuda11x/12x/"
        "13x (README.md:16-22), project(gpu4pyscf C CXX CUDA Fortran) with "
        "CMAKE_CUDA_ARCHITECTURES (gpu4pyscf/lib/CMakeLists.txt:16,23-27)",
        ("major work", "blocked"),
    ),
    "keops": (
        "getkeops/keops",
        "none; Python/R/Matlab kernel-operations library, 'KeOpsCore library which is written "
        "in C++/CUDA', requirement 'The Cuda toolkit: version >=10.0' "
        "(doc/python/installation.rst:4,12), run-time nvrtc compilation "
        "(keopscore/keopscore/config/cuda.py:40-61)",
        ("major work", "blocked"),
    ),
    "fast-transformers": (
        "idiap/fast-transformers",
        "none; PyTorch attention-kernel package, dependency 'CUDA toolchain (if you want to "
        "compile for GPUs)' (README.rst:83-87), CUDAExtension kernels when the CUDA toolkit is "
        "found (setup.py:33,136-161)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each fourteenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
FOURTEENTH_COMMITS: dict[str, str] = {
    "superlu_dist": "1fd66dad5a1dfa0c4906010883a7fed92883555e",
    "ucx": "9466d104a317c8ffddd9734e72055d8bbda021b3",
    "XSBench": "ba08e5221af6106252b866e50ea123c69d31a4e2",
    "tutel": "82af7aad9fc3ec981395ba97e7242a480984a55e",
    "F5-TTS": "2ae2c9bd9b64dab2cb069c4b97e5e7673c521e01",
    "caffe": "9b891540183ddc834a02b2bd81b31afae71b2153",
    "TurboTransformers": "6c7cf638019a6aee4a19649b8d573230bfe8b9ee",
    "gpu4pyscf": "5025fc4a1d3a9a41873ba07d6b3d550d5bca1139",
    "keops": "0152630876ea76d48c4668a79ddadec7b36225e3",
    "fast-transformers": "2ad36b97e64cb93862937bd21fcc9568d989561f",
}
FOURTEENTH_ROUTE = tuple(list(FOURTEENTH_SET)[:5])  # the 5 with a documented route
