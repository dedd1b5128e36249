"""Issue 24's tenth sample for benchmarks/real_repos.py (``--set tenth``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's tenth sample (held out, chosen 2026-11-28 23:06-23:14 UTC, after the ninth sample
#: and session 9's changes): 8 public repositories never used by gpuport as scan inputs (names
#: checked by grep against benchmarks/*.py, benchmarks/*.md and docs/*.md -- stdgpu,
#: cuCollections, oidn, gpt-fast and sundials were candidates dropped because they were named
#: there), 4 whose own files document a ROCm/HIP route and 4 whose files document none, of mixed
#: kinds: a code-assistant server shipped as containers with a ROCm image (tabby; its llama.cpp
#: is a git submodule, absent from the snapshot), a single-file LLM app that builds its
#: vendored ggml-cuda with hipcc on AMD machines (llamafile), a CMake C++ optimization library
#: with HIOP_USE_HIP (hiop), a CMake C++ Kokkos particle library with a HIP device (Cabana), an
#: LLM serving engine with a CUDA container and CUDA-only kernel wheels (lightllm), a
#: quantization library with a CUDA kernel (AQLM), a 3D NeRF code with five CUDA extensions
#: (torch-ngp) and a CMake C++ CUDA memory library (rmm). Status and allowed verdicts were
#: written down from each repository's own files (``file:line`` in the snapshot,
#: ``TENTH_COMMITS``) before gpuport was run on any of them. Run only twice: before (session
#: start code, 6b28ddd) and after (main at 23:20 UTC).
TENTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "tabby": (
        "TabbyML/tabby",
        "Rust code-assistant server; 'To run Tabby locally with ROCm (AMD): cargo run --features "
        "rocm serve ... --device rocm' (CONTRIBUTING.md:65-68), rocm feature "
        "(crates/llama-cpp-server/Cargo.toml:11; build.rs:33,54), ROCm image "
        "(docker/Dockerfile.rocm:5-9)",
        ("ready", "minor work"),
    ),
    "llamafile": (
        "Mozilla-Ocho/llamafile",
        "single-file LLM app; GPU support for 'NVIDIA's CUDA SDK or AMD's ROCm HIP SDK' "
        "(README.md:454), 'ROCm users need to install the HIP SDK', hipcc detected on PATH "
        "(README.md:464-465), ROCm paths in llamafile/cuda.c:191-211",
        ("ready", "minor work"),
    ),
    "hiop": (
        "LLNL/hiop",
        "CMake C++ HPC optimization solver; 'support for offloading computations to AMD GPU ... "
        "-DHIOP_USE_GPU and -DHIOP_USE_HIP' (doc/src/techrep_main.tex:295,297), HIOP_USE_HIP "
        "option (CMakeLists.txt:88)",
        ("ready", "minor work"),
    ),
    "Cabana": (
        "ECP-copa/Cabana",
        "CMake C++ particle library on Kokkos; supported devices include HIP (CMakeLists.txt:51)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "lightllm": (
        "ModelTC/lightllm",
        "none; LLM serving engine (Triton kernels, no .cu in tree) with a CUDA container "
        "(docker/Dockerfile:1, nvcr.io tritonserver) and CUDA-only pins sgl-kernel==0.1.4, "
        "vllm==0.8.5 (requirements.txt:86,88)",
        ("minor work", "major work"),
    ),
    "AQLM": (
        "Vahe1994/AQLM",
        "none; quantization library with a CUDA kernel "
        "(inference_lib/src/aqlm/inference_kernels/cuda_kernel.cu), CUDA rows in its kernel "
        "table (README.md:115)",
        ("major work", "blocked"),
    ),
    "torch-ngp": (
        "ashawkey/torch-ngp",
        "none; NeRF/3D with five CUDA extensions (raymarching, gridencoder, freqencoder, "
        "shencoder, ffmlp src/*.cu), tested on CUDA only (readme.md:69-71)",
        ("major work", "blocked"),
    ),
    "rmm": (
        "rapidsai/rmm",
        "none; CMake C++ RAPIDS memory manager for 'NVIDIA CUDA' (README.md:28), CUDA/GPU "
        "requirements only (README.md:39,59)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each tenth-sample tree was extracted from (HEAD of the stored mirror; torch-ngp's
#: archive stopped at a blob absent from the mirror -- its 5 .cu files and setup scripts are
#: present; tabby's llama.cpp submodule is not in its snapshot).
TENTH_COMMITS: dict[str, str] = {
    "tabby": "21b29048d7bcf6b94f9f482f2d0fd05efadfd19f",
    "llamafile": "cfa861a69cb9fb3b1101d1c435ec6c2bfa35365c",
    "hiop": "7ccfa86a71fdb670ae690199ac676f3c1365799a",
    "Cabana": "c1dcec9a182ccb1732bc02fcfe5bf61ecc3946fc",
    "lightllm": "fc72ffab9a3455cfb571f22d45ab777cc29de0de",
    "AQLM": "e79a896ed6656fe4ed06193d42d004e7d0bbdbb2",
    "torch-ngp": "b6e080468925f0bb44827b4f8f0ed08291dcf8a9",
    "rmm": "5d50a37b9612e29d53f8202fba792b1a36f88a79",
}
TENTH_ROUTE = tuple(list(TENTH_SET)[:4])  # the 4 with a documented route
