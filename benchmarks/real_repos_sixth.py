"""Issue 24's sixth sample for benchmarks/real_repos.py (``--set sixth``), kept apart so the
script stays short."""

from __future__ import annotations

#: Issue 24's sixth sample (held out, chosen 2026-11-28 after the fifth sample had been seen
#: and used for fixing classes): 10 public repositories never used by gpuport as scan inputs
#: (not in any set of benchmarks/real_repos*.py nor in docs/scan.md), 8 whose own files
#: document a ROCm route and 2 whose files document none, of mixed kinds: a serving engine
#: (aphrodite-engine), a kernel DSL/compiler with CUDA and HIP code generators (tilelang), a
#: quantization toolkit with many CUDA extensions (GPTQModel), CMake C++ libraries with a HIP
#: backend (stdgpu, mfem), 3D/graphics (Blender's Cycles renderer, COLMAP), an app with
#: containers and per-backend builds (ollama), an expert-parallel communication library
#: (DeepEP) and a CUDA neural-network framework (tiny-cuda-nn). Status and allowed verdicts
#: were written down from each repository's own files (``file:line`` in the snapshot,
#: ``SIXTH_COMMITS``) before gpuport was run on any of them. Candidates dropped before that,
#: also before any run: vllm and sglang (their snapshots are over the fetch limit). Run only
#: twice: on this branch's code before the change (main 30f6f3f) and on the final code.
SIXTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "aphrodite-engine": (
        "aphrodite-engine/aphrodite-engine",
        "Python serving engine (vLLM lineage); 'supports AMD GPUs using ROCm 6.1', Dockerfile.rocm "
        "(docs/src/content/docs/installation/installation-rocm.md:5,15), HIP as the GPU "
        "language (CMakeLists.txt:125-126)",
        ("ready", "minor work"),
    ),
    "tilelang": (
        "tile-ai/tilelang",
        "kernel DSL with CUDA, HIP and Metal code generators; target `hip`: 'AMD GPUs via "
        "ROCm' (docs/get_started/targets.md:15,18), ROCm path and AMD GPUs in the news "
        "(README.md:36,73)",
        ("ready", "minor work"),
    ),
    "GPTQModel": (
        "ModelCloud/GPTQModel",
        "quantization toolkit; 'hw acceleration support for NVIDIA CUDA, AMD ROCm' "
        "(README.md:7,244), ROCm mapped at run time (gptqmodel/utils/importer.py:349-351)",
        ("ready", "minor work"),
    ),
    "stdgpu": (
        "stotko/stdgpu",
        "CMake C++ GPU containers library; CUDA, OpenMP and HIP (experimental) backends "
        "(README.md:49, CMakeLists.txt:31-34)",
        ("ready", "minor work"),
    ),
    "mfem": (
        "mfem/mfem",
        "CMake/Make C++ finite-element library; HIP needs ROCm, `make hip`, "
        "-DMFEM_USE_HIP=YES (INSTALL:46-47,93-95,134-137)",
        ("ready", "minor work"),
    ),
    "cycles": (
        "blender/cycles",
        "Blender's path-tracing renderer; WITH_CYCLES_DEVICE_HIP on by default "
        "(CMakeLists.txt:178-181), HIP device sources (src/device/CMakeLists.txt:54-58)",
        ("ready", "minor work"),
    ),
    "colmap": (
        "colmap/colmap",
        "CMake C++ 3D-reconstruction app; 'AMD GPUs are supported via HIP/ROCm when building "
        "from source' (README.md:31, doc/install.rst:122-124), HIP_ENABLED option "
        "(CMakeLists.txt:41)",
        ("ready", "minor work"),
    ),
    "ollama": (
        "ollama/ollama",
        "Go app with native backends and containers; ROCm backends rocm_v7_1/rocm_v7_2 "
        "(docs/development.md:42,50-51), `docker build --build-arg FLAVOR=rocm` "
        "(docs/development.md:164-167), ollama/ollama:rocm image (docs/docker.mdx:65-68)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "DeepEP": (
        "deepseek-ai/DeepEP",
        "none on this branch; ROCm only on a separate mori-ep branch and in community forks "
        "(README.md:419-420,426-429)",
        ("major work", "blocked"),
    ),
    "tiny-cuda-nn": (
        "NVlabs/tiny-cuda-nn",
        "none; a C++/CUDA framework (README.md:1-13), fully fused MLPs on tensor cores",
        ("major work", "blocked"),
    ),
}

#: The snapshot each sixth-sample tree was extracted from (HEAD of the stored mirror; blobs
#: absent from the mirror left out: 1 in aphrodite-engine, 2 in ollama, 1 in tiny-cuda-nn).
SIXTH_COMMITS: dict[str, str] = {
    "aphrodite-engine": "b42eeec22c42d9a485bab4a8784b26abccf44515",
    "tilelang": "a35008a42531c62b976ae4cec3855d4383db0f3c",
    "GPTQModel": "f4c327a17eb3e24524d5a97a3d682e3696ae6a28",
    "stdgpu": "22599cfdcc185c2ed721d78c792e3193cf84cc01",
    "mfem": "5581b0c0797915e1eb554841e39111d8df807703",
    "cycles": "97dbe6f57cdf4ede2d2b75ebdda507c8712edb7a",
    "colmap": "5d968cf38aa2574fd284b0dc86c3d58d124940b3",
    "ollama": "fb30760996871fa9460115c753afd2c60d4ab0f7",
    "DeepEP": "dd758caf451848bd150e1046af3d0a73e5fff38d",
    "tiny-cuda-nn": "6ee3546bda615f51abe684ce9edefeb414689135",
}
SIXTH_ROUTE = tuple(list(SIXTH_SET)[:8])  # the 8 with a documented route
