"""Issue 24's thirteenth sample for benchmarks/real_repos.py (``--set thirteenth``), kept apart
so the script stays short."""

from __future__ import annotations

#: Issue 24's thirteenth sample (held out, chosen 2026-11-29 06:40-06:50 UTC, after the twelfth
#: sample had been seen): 10 public repositories never used by gpuport as inputs (names checked
#: by grep -ril against benchmarks/ and docs/ -- QuEST, alpaka, dbcsr, hypre, nccl, pycuda,
#: astra-toolbox, llm.c, ThunderKittens, Pointcept, gunrock, spconv and others were candidates
#: dropped because they were named there; kokkos-fft, openfold and FlexFlow were dropped because
#: a large blob (a GIF, an alignment file) was absent from the stored mirror; zfp was dropped
#: because its only HIP traces are a GitLab job whose ``.hip`` template is commented out
#: (tests/gitlab/gitlab-ci.yml:127-130) and no HIP option in its CMake, so its status is not
#: clear from its files; k2 and AMGX were spares, not needed), 5 whose own files document a
#: ROCm/HIP route and 5 whose files document none. Route: a CMake C++ sparse direct solver
#: with a HIP build option (STRUMPACK; SLATE/MAGMA are outside dependencies), a GPU
#: micro-benchmark with separate CUDA, HIP, OpenCL and SYCL implementations (mixbench), a
#: cryo-EM application with a HIP build option and its own HIP sources (relion), a quantum
#: circuit simulator (Python over C++/Thrust) with a ROCm Thrust backend (qiskit-aer), and a
#: JIT-compiled deep-learning framework that lists AMD ROCm as a supported GPU stack (jittor).
#: No route: an SVM library on CUDA (thundersvm), a CMake C++ sparse-kernel library for deep
#: learning (sputnik), a C/CUDA neural-network framework and YOLO detector (darknet), a
#: nonuniform-FFT library whose GPU part is cuFINUFFT (finufft) and a 3D-detection PyTorch
#: project with CUDA extensions (OpenPCDet). k2 (CMake + PyTorch) was the spare for the last;
#: its only ROCm word is the kDLROCM enum in a vendored dlpack.h. Status and allowed verdicts
#: were written down from each repository's own files (``file:line`` in the snapshot,
#: ``THIRTEENTH_COMMITS``) before gpuport was run on any of them.
THIRTEENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "STRUMPACK": (
        "pghysels/STRUMPACK",
        "CMake C++ sparse direct solver; option STRUMPACK_USE_HIP 'Use HIP for AMD or NVIDIA GPU "
        "acceleration' (CMakeLists.txt:8,140-147), 'HIP Support for AMD GPUs ... through HIP and "
        "the ROCm libraries', cmake -DSTRUMPACK_USE_HIP=ON -DCMAKE_HIP_ARCHITECTURES=gfx90a "
        "(doc/doxygen/pages/GPU_support.txt:52-59, INSTALL.txt:153-161)",
        ("ready", "minor work"),
    ),
    "mixbench": (
        "ekondis/mixbench",
        "GPU micro-benchmark; 'CUDA, HIP, OpenCL and SYCL implementations', 'HIP: mixbench-hip' "
        "(README.md:2,8), 'This is the HIP (AMD ROCm) implementation of mixbench' "
        "(mixbench-hip/README.md:3), its own CMake with hipcc (mixbench-hip/CMakeLists.txt:24,45)",
        ("ready", "minor work"),
    ),
    "relion": (
        "3dem/relion",
        "cryo-EM application; option(HIP 'Enable HIP GPU acceleration') with AMDGPU_TARGETS "
        "(CMakeLists.txt:86-101), its own HIP sources src/acc/hip and src/jaz/hip built by "
        "hip_add_library (src/apps/CMakeLists.txt:295,329-330)",
        ("ready", "minor work"),
    ),
    "qiskit-aer": (
        "Qiskit/qiskit-aer",
        "quantum circuit simulator (Python over C++/Thrust); 'GPU access is supported either via "
        "CUDA or ROCm (AMD GPUs)', 'Building with ROCm support' -DAER_THRUST_BACKEND=ROCM "
        "(CONTRIBUTING.md:543,615-631), ROCM backend (CMakeLists.txt:405-441), 'Now Aer "
        "supports AMD's GPUs based on ROCm' "
        "(releasenotes/notes/0.13/release_0.13.0-456c0b054ea30a1b.yaml:22)",
        ("ready", "minor work"),
    ),
    "jittor": (
        "Jittor/jittor",
        "JIT-compiled deep-learning framework; GPU requirements 'Nvidia CUDA >= 10.0 ... or AMD "
        "ROCm >= 4.0' (README.md:99), ROCm backend compiling its CUDA sources with -DIS_ROCM "
        "(python/jittor/extern/rocm/rocm_compiler.py:36-56, python/jittor/compiler.py:1262-1263)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "thundersvm": (
        "Xtra-Computing/thundersvm",
        "none; SVM library, 'If you want to use GPUs, you also need to install CUDA' "
        "(README.md:38-40), option USE_CUDA, find_package(CUDA REQUIRED) (CMakeLists.txt:13,31-33)",
        ("major work", "blocked"),
    ),
    "sputnik": (
        "google-research/sputnik",
        "none; sparse GPU kernels for deep learning, 'depends on the CUDA toolkit (v10.1+) and "
        "supports SM70+' (README.md:7), project(SPUTNIK CUDA CXX C) (CMakeLists.txt:3)",
        ("major work", "blocked"),
    ),
    "darknet": (
        "AlexeyAB/darknet",
        "none; C/CUDA neural-network framework (YOLO), requirements 'CUDA >= 10.2', 'GPU with "
        "CC >= 3.0' (README.md:264,267), option ENABLE_CUDA (CMakeLists.txt:11), NVCC=nvcc "
        "(Makefile:93)",
        ("major work", "blocked"),
    ),
    "finufft": (
        "flatironinstitute/finufft",
        "none; nonuniform-FFT library that 'now also integrates the GPU CUDA library cuFINUFFT' "
        "(README.md:24), option FINUFFT_USE_CUDA (CMakeLists.txt:26), 'installation and "
        "compilation for GPU (CUDA)' (README.md:68)",
        ("major work", "blocked"),
    ),
    "OpenPCDet": (
        "open-mmlab/OpenPCDet",
        "none; 3D object-detection PyTorch project, 'CUDA 9.0 or higher' and spconv "
        "(docs/INSTALL.md:8-9), CUDAExtension ops (setup.py:5,17-18)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each thirteenth-sample tree was extracted from (HEAD of the stored mirror, with
#: git archive; no blob was absent from these ten mirrors).
THIRTEENTH_COMMITS: dict[str, str] = {
    "STRUMPACK": "cfba574f60b792433ee87e7e2a874eeb96c74d1f",
    "mixbench": "236a0be007a5937e9ffb4a6c7eb1fafed6108e80",
    "relion": "73f0a3c0c9dfa513ca0456ef8f66dd3eb5c35cdb",
    "qiskit-aer": "837c3ef3c39248aae936580360c22224dcefb265",
    "jittor": "06f5d3d271555682c95aa3505518f47eeab2bd9c",
    "thundersvm": "5c6a056ac7f474b085d5415c81c5d48a1419642a",
    "sputnik": "bbf5840ba5efccf01f862855c785f71bcc6ff1f0",
    "darknet": "59596d7880f6504768df41d6daa586f5cb2b932f",
    "finufft": "9810998d273b504de6d61896047cc691738cd94c",
    "OpenPCDet": "8cacccec11db6f59bf6934600c9a175dae254806",
}
THIRTEENTH_ROUTE = tuple(list(THIRTEENTH_SET)[:5])  # the 5 with a documented route
