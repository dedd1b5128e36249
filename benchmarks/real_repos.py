"""Issue 13's dev set: `gpuport scan` on real public repositories, against their documented
ROCm status.

Give it a folder that holds the extracted trees (one folder per repository, named as below:
``nanoGPT``, ``litgpt``, ``mamba`` ...). For each it runs the scan in this process (default
options, target gfx942) and writes a Markdown table: gpuport's verdict, the judged (core)
counts, the effort range, the seconds it took, the documented status and whether the verdict
is one the documentation allows. With ``--sample N`` it also draws a seeded random sample of
N blocker/major core findings across the set, for a hand review of precision.

    python benchmarks/real_repos.py TREES [--out table.md] [--sample 40 --seed 13]
    python benchmarks/real_repos.py TREES --set second   # the 23 repositories beyond it
    python benchmarks/real_repos.py TREES --set third-b  # issue 24's held-out half
    python benchmarks/real_repos.py TREES --set fourth   # issue 24's fourth (held-out) sample
    python benchmarks/real_repos.py TREES --set fifth    # issue 24's fifth (held-out) sample
    python benchmarks/real_repos.py TREES --set sixth    # issue 24's sixth (held-out) sample
    python benchmarks/real_repos.py TREES --set seventh  # issue 24's seventh (held-out) sample
    python benchmarks/real_repos.py TREES --set eighth   # issue 24's eighth (held-out) sample
    python benchmarks/real_repos.py TREES --set ninth    # issue 24's ninth (held-out) sample
    python benchmarks/real_repos.py TREES --set tenth    # issue 24's tenth (held-out) sample
    python benchmarks/real_repos.py TREES --set eleventh # issue 24's eleventh (held-out) sample
    python benchmarks/real_repos.py TREES --set twelfth  # issue 24's twelfth (held-out) sample
    python benchmarks/real_repos.py TREES --set thirteenth  # issue 24's thirteenth (held-out)
    python benchmarks/real_repos.py TREES --set fourteenth  # issue 24's fourteenth (held-out)
    python benchmarks/real_repos.py TREES --set fifteenth  # issue 24's fifteenth (held-out)
    python benchmarks/real_repos.py TREES --set sixteenth  # issue 24's sixteenth (held-out)
    python benchmarks/real_repos.py TREES --set seventeenth  # issue 24's seventeenth (held-out)
    python benchmarks/real_repos.py TREES --set eighteenth  # issue 24's eighteenth (held-out)
    python benchmarks/real_repos.py TREES --set nineteenth  # issue 24's nineteenth (held-out)
    python benchmarks/real_repos.py TREES --set twentieth  # issue 24's twentieth (held-out)
    python benchmarks/real_repos.py TREES --set twentyfirst  # issue 24's twenty-first (held-out)
    python benchmarks/real_repos.py TREES --set twentysecond  # issue 24's twenty-second (held-out)
    python benchmarks/real_repos.py TREES --set twentythird  # issue 24's twenty-third (held-out)
    python benchmarks/real_repos.py TREES --set twentyfourth  # issue 24's twenty-fourth (held-out)
    python benchmarks/real_repos.py TREES --set twentyfifth  # issue 24's twenty-fifth (held-out)
    python benchmarks/real_repos.py TREES --set twentysixth  # issue 24's twenty-sixth (held-out)
    python benchmarks/real_repos.py TREES --set twentyseventh  # issue 24's 27th (held-out)

``--set second`` scans a second sample of public repositories that no rule was tuned on
(docs/scan.md, "A second sample"), to check that fixes are of classes, not of the dev set.
``--set third-a`` and ``--set third-b`` are the two halves of issue 24's third sample
(docs/scan.md, "A third sample"): ``third-a`` may be used to fix classes, ``third-b`` is held
out and run only before and after the work. ``--set fourth`` is a fourth sample, chosen after
the third sample's second half had been seen, and is likewise run only before and after;
``--set fifth`` is a fifth one, chosen after the fourth had been seen, and ``--set sixth`` a
sixth, chosen after the fifth had been seen, ``--set seventh`` a seventh, chosen after the
sixth had been seen, ``--set eighth`` an eighth, chosen after the seventh had been seen, and
``--set ninth`` a ninth, chosen after the eighth had been seen, ``--set tenth`` a tenth,
chosen after the ninth had been seen, and ``--set eleventh`` an eleventh, chosen after the
tenth had been seen.

Nothing in the trees is run; the scan reads them as text.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections.abc import Collection
from pathlib import Path

from real_repos_eighteenth import EIGHTEENTH_ROUTE, EIGHTEENTH_SET
from real_repos_eighth import EIGHTH_ROUTE, EIGHTH_SET
from real_repos_eleventh import ELEVENTH_ROUTE, ELEVENTH_SET
from real_repos_fifteenth import FIFTEENTH_ROUTE, FIFTEENTH_SET
from real_repos_fifth import FIFTH_ROUTE, FIFTH_SET
from real_repos_fourteenth import FOURTEENTH_ROUTE, FOURTEENTH_SET
from real_repos_nineteenth import NINETEENTH_ROUTE, NINETEENTH_SET
from real_repos_ninth import NINTH_ROUTE, NINTH_SET
from real_repos_seventeenth import SEVENTEENTH_ROUTE, SEVENTEENTH_SET
from real_repos_seventh import SEVENTH_ROUTE, SEVENTH_SET
from real_repos_sixteenth import SIXTEENTH_ROUTE, SIXTEENTH_SET
from real_repos_sixth import SIXTH_ROUTE, SIXTH_SET
from real_repos_tenth import TENTH_ROUTE, TENTH_SET
from real_repos_thirteenth import THIRTEENTH_ROUTE, THIRTEENTH_SET
from real_repos_twelfth import TWELFTH_ROUTE, TWELFTH_SET
from real_repos_twentieth import TWENTIETH_ROUTE, TWENTIETH_SET
from real_repos_twentyfifth import TWENTYFIFTH_ROUTE, TWENTYFIFTH_SET
from real_repos_twentyfirst import TWENTYFIRST_ROUTE, TWENTYFIRST_SET
from real_repos_twentyfourth import TWENTYFOURTH_ROUTE, TWENTYFOURTH_SET
from real_repos_twentysecond import TWENTYSECOND_ROUTE, TWENTYSECOND_SET
from real_repos_twentyseventh import TWENTYSEVENTH_ROUTE, TWENTYSEVENTH_SET
from real_repos_twentysixth import TWENTYSIXTH_ROUTE, TWENTYSIXTH_SET
from real_repos_twentythird import TWENTYTHIRD_ROUTE, TWENTYTHIRD_SET

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from gpuport.scan.verdict import judged

#: repository folder -> (GitHub name, documented ROCm status, verdicts the status allows)
DEV_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "nanoGPT": ("karpathy/nanoGPT", "pure PyTorch", ("ready",)),
    "litgpt": (
        "Lightning-AI/litgpt",
        "AMD code path; maintainers say it works",
        ("ready", "minor work"),
    ),
    "mamba": (
        "state-spaces/mamba",
        "README AMD prerequisites; HIP branch in setup.py (Mamba-3 parts NVIDIA-only)",
        ("minor work", "major work"),
    ),
    "bitsandbytes": (
        "bitsandbytes-foundation/bitsandbytes",
        "official ROCm wheels and CI",
        ("ready", "minor work"),
    ),
    "flash-attention": (
        "Dao-AILab/flash-attention",
        "CK and Triton ROCm backends for FA2",
        ("minor work",),
    ),
    "xformers": ("facebookresearch/xformers", "ROCm wheels, `hip_fmha`", ("minor work",)),
    "text-generation-inference": (
        "huggingface/text-generation-inference",
        "ROCm images, tested on MI300",
        ("minor work",),
    ),
    "DeepSpeed": ("microsoft/DeepSpeed", "ROCm CI, MI200 tested", ("minor work",)),
    "ao": ("pytorch/ao", "partial ROCm", ("minor work", "major work")),
    "unsloth": ("unslothai/unsloth", "AMD guide", ("minor work",)),
    "TransformerEngine": ("NVIDIA/TransformerEngine", "none upstream", ("blocked",)),
    "apex": ("NVIDIA/apex", "none upstream", ("blocked",)),
    "Megatron-LM": (
        "NVIDIA/Megatron-LM",
        "none upstream (fused kernels optional)",
        ("major work", "blocked"),
    ),
}


#: A second sample beyond the dev set (same layout: folder -> name, status, allowed verdicts).
SECOND_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "peft": ("huggingface/peft", "pure PyTorch", ("ready", "minor work")),
    "accelerate": (
        "huggingface/accelerate",
        "pure PyTorch, ROCm documented",
        ("ready", "minor work"),
    ),
    "trl": ("huggingface/trl", "pure PyTorch", ("ready", "minor work")),
    "diffusers": ("huggingface/diffusers", "pure PyTorch", ("ready", "minor work")),
    "pytorch-lightning": (
        "Lightning-AI/pytorch-lightning",
        "ROCm supported",
        ("ready", "minor work"),
    ),
    "torchtune": ("pytorch/torchtune", "ROCm wheels in CI", ("ready", "minor work")),
    "AutoAWQ": ("casper-hansen/AutoAWQ", "ROCm through an optional kernels extra", ("minor work",)),
    "causal-conv1d": ("Dao-AILab/causal-conv1d", "HIP branch in setup.py", ("minor work",)),
    "exllamav2": ("turboderp-org/exllamav2", "ROCm wheels", ("minor work",)),
    "Liger-Kernel": ("linkedin/Liger-Kernel", "AMD CI", ("minor work",)),
    "whisper.cpp": ("ggml-org/whisper.cpp", "ggml HIP backend", ("ready", "minor work")),
    "CTranslate2": ("OpenNMT/CTranslate2", "ROCm build (`WITH_HIP`)", ("minor work",)),
    "detectron2": ("facebookresearch/detectron2", "ops hipified by torch", ("minor work",)),
    "tinygrad": ("tinygrad/tinygrad", "native AMD backend", ("ready", "minor work")),
    "mmcv": ("open-mmlab/mmcv", "HIP branch in setup.py", ("minor work",)),
    "ggml": ("ggml-org/ggml", "HIP backend (ggml-hip)", ("ready", "minor work")),
    "optimum": ("huggingface/optimum", "pure PyTorch", ("ready", "minor work")),
    "NeMo": ("NVIDIA/NeMo", "none upstream (TE/apex/Megatron inside)", ("major work", "blocked")),
    "flash-linear-attention": ("fla-org/flash-linear-attention", "Triton, AMD CI", ("minor work",)),
    "SageAttention": ("thu-ml/SageAttention", "none", ("blocked",)),
    "DeepGEMM": ("deepseek-ai/DeepGEMM", "none (Hopper/Blackwell)", ("blocked",)),
    "llm-awq": ("mit-han-lab/llm-awq", "none", ("blocked",)),
    "quack": ("Dao-AILab/quack", "none (CuTe DSL)", ("blocked",)),
}

#: Issue 24's third sample: 24 public repositories never used in this project before (not in
#: the dev set, the second sample, the docs or the knowledge sources), 12 whose own files
#: document a ROCm route and 12 whose files document none, of varied kinds. Allowed verdicts
#: were written down from each project's documentation and a look at its code before gpuport
#: was run on any of them. Evidence is ``file:line`` in the snapshot (``THIRD_COMMITS``).
THIRD_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "mlc-llm": (
        "mlc-ai/mlc-llm",
        "serving engine; ROCm in the README's support table (README.md:34) and ROCm wheels "
        "(docs/install/mlc_llm.rst:54)",
        ("ready", "minor work"),
    ),
    "text-embeddings-inference": (
        "huggingface/text-embeddings-inference",
        "serving engine; experimental ROCm on Instinct (README.md:649-651, "
        "docs/source/en/amd_gpu.md:17)",
        ("ready", "minor work"),
    ),
    "gpt-fast": (
        "meta-pytorch/gpt-fast",
        "pure-PyTorch inference and int8/int4 quantization; 'Supports Nvidia and AMD GPUs' "
        "(README.md:11), MI-250x benchmarks (README.md:136)",
        ("ready", "minor work"),
    ),
    "Genesis": (
        "Genesis-Embodied-AI/Genesis",
        "3D physics and rendering; AMD GPUs (README.md:61), AMD image docker/Dockerfile.amdgpu "
        "(README.md:154-157)",
        ("ready", "minor work"),
    ),
    "kokkos": (
        "kokkos/kokkos",
        "CMake C++ library; HIP backend (README.md:12)",
        ("ready", "minor work"),
    ),
    "ginkgo": (
        "ginkgo-project/ginkgo",
        "CMake C++ library; HIP module on ROCm (README.md:55-58, INSTALL.md:157)",
        ("ready", "minor work"),
    ),
    "text-generation-webui": (
        "oobabooga/text-generation-webui",
        "app; ROCm torch wheel and requirements_amd.txt (README.md:188, README.md:214), "
        "'docs/11 - AMD Setup.md:1'",
        ("ready", "minor work"),
    ),
    "Fooocus": (
        "lllyasviel/Fooocus",
        "image-generation app; Linux AMD install with the ROCm torch index (readme.md:190-197)",
        ("ready", "minor work"),
    ),
    "LocalAI": (
        "mudler/LocalAI",
        "serving app with containers; ROCm image latest-gpu-hipblas (README.md:128-131), "
        "backend/README.md:72",
        ("ready", "minor work"),
    ),
    "LightGBM": (
        "microsoft/LightGBM",
        "CMake C++ ML library; ROCm build (docs/Installation-Guide.rst:752-770, "
        "CMakeLists.txt:7 USE_ROCM)",
        ("ready", "minor work"),
    ),
    "tvm": (
        "apache/tvm",
        "compiler, CMake C++; ROCm support (docs/install/from_source.rst:330-336)",
        ("ready", "minor work"),
    ),
    "FastChat": (
        "lm-sys/FastChat",
        "serving app; 'For AMD GPU users, please install ROCm and the ROCm version of PyTorch' "
        "(README.md:191)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route (no file mentions ROCm, HIP or an AMD GPU, unless said) ---
    "marlin": (
        "IST-DASLab/marlin",
        "none; FP16xINT4 kernel in PTX mma/ldmatrix/cp.async (marlin/marlin_cuda_kernel.cu)",
        ("blocked",),
    ),
    "nunchaku": (
        "mit-han-lab/nunchaku",
        "none; 4-bit diffusion inference, NVIDIA GPUs (README.md:32), inline PTX kernels",
        ("blocked",),
    ),
    "nvdiffrast": (
        "NVlabs/nvdiffrast",
        "none; NVIDIA rasterizer (README.md:21-25), warp intrinsics and PTX in csrc/common",
        ("major work", "blocked"),
    ),
    "instant-ngp": (
        "NVlabs/instant-ngp",
        "none; CMake C++ app on tiny-cuda-nn (README.md:8), NVIDIA only",
        ("major work", "blocked"),
    ),
    "diff-gaussian-rasterization": (
        "graphdeco-inria/diff-gaussian-rasterization",
        "none; plain CUDA extension (cooperative groups, CUB), no PTX",
        ("minor work", "major work"),
    ),
    "omniserve": (
        "mit-han-lab/omniserve",
        "none documented (an is_hip() helper, omniserve/utils/utils.py:55); W4A8 serving "
        "kernels with inline PTX",
        ("blocked",),
    ),
    "audiocraft": (
        "facebookresearch/audiocraft",
        "none; pure PyTorch (requirements.txt: torch==2.1.0, xformers<0.0.23)",
        ("ready", "minor work"),
    ),
    "bark": (
        "suno-ai/bark",
        "none; pure PyTorch, tested on CUDA (README.md:234)",
        ("ready", "minor work"),
    ),
    "LLaVA": (
        "haotian-liu/LLaVA",
        "none (Intel noted, README.md:38); pure PyTorch, deepspeed in the train extra "
        "(pyproject.toml:26)",
        ("ready", "minor work"),
    ),
    "cuCollections": (
        "NVIDIA/cuCollections",
        "none; header-only CUDA data structures on libcu++ (README.md:8-10)",
        ("major work", "blocked"),
    ),
    "MinkowskiEngine": (
        "NVIDIA/MinkowskiEngine",
        "none documented (two __HIP_PLATFORM_HCC__ tests, src/spmm.cu:84); CUDA extension "
        "with cuSPARSE",
        ("major work", "blocked"),
    ),
    "xgboost": (
        "dmlc/xgboost",
        "none; CUDA build with thrust/CUB/NCCL (no file mentions ROCm)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each third-sample tree was extracted from (HEAD of the stored mirror).
THIRD_COMMITS: dict[str, str] = {
    "mlc-llm": "79d603f085f50500e9509fa01785ffa7ecfaaa93",
    "text-embeddings-inference": "0d124dc9773be6ac5a9a57d8439aba9bbbf33273",
    "gpt-fast": "6ecad9b5b6b987d17ac4303965545873d0192086",
    "Genesis": "7bf5f6a7bf2946efc3a1e93667700011456078b5",
    "kokkos": "28848dfa8fc1411873b6a663c4d29ba05712510e",
    "ginkgo": "591cd136b603d47669e53ec5264ff9ed59231682",
    "text-generation-webui": "1dcde41d03d13fc768316f4d2256a8a6dd044268",
    "Fooocus": "59f183ab9b8e4a4bbf0fb8bc43886e19e8dfdfae",
    "LocalAI": "82c191afadf5f005281e798ccfa0ffd0d5805030",
    "LightGBM": "bae0b7ba953341a32b2a9c5c5c437a1b976f576f",
    "tvm": "5d4dc8721307cf9677becacf0395c19be130e206",
    "FastChat": "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
    "marlin": "2f6d7c10e124b3c5fa29ff8d77d568bd7af3274c",
    "nunchaku": "4132b3bffdb7d520ecb30ac6983ee482a39f9362",
    "nvdiffrast": "253ac4fcea7de5f396371124af597e6cc957bfae",
    "instant-ngp": "abe236ee00cf90cfca6e36e65c00435d5b21f50a",
    "diff-gaussian-rasterization": "59f5f77e3ddbac3ed9db93ec2cfe99ed6c5d121d",
    "omniserve": "02b2925aa6fa3b92b06316a1524b7f38922cd9c8",
    "audiocraft": "896ec7c47f5e5d1e5aa1e4b260c4405328bf009d",
    "bark": "f4f32d4cd480dfec1c245d258174bc9bde3c2148",
    "LLaVA": "c121f0432da27facab705978f83c4ada465e46fd",
    "cuCollections": "dc0f9fc20c2a544e53099e640a681b347532391a",
    "MinkowskiEngine": "02fc608bea4c0549b0a7b00ca1bf15dee4a0b228",
    "xgboost": "379b29f0836b9dbc313b993d8e5743bd452d4117",
}
THIRD_ROUTE = tuple(list(THIRD_SET)[:12])  # the 12 with a documented route


#: Issue 24's fourth sample (a new held-out set, chosen 2026-11-27/28 after the third sample's
#: second half had been seen): 12 public repositories never used in this project as scan
#: inputs (not in the dev set, the second sample or the third sample), 6 whose own files
#: document a ROCm route and 6 whose files document none: Python packages with extensions
#: (cupy, pytorch3d, torchsparse, Deformable-DETR, flash-fft-conv, stylegan3's JIT ops), CMake
#: C++ libraries (amrex, hoomd-blue, MatX), serving apps with containers (ramalama,
#: triton-server) and an application (sdnext). Status and allowed verdicts were written down
#: from each repository's own files (``file:line`` in the snapshot, ``FOURTH_COMMITS``) and a
#: look at its code before gpuport was run on any of them. Run only before and after the work.
FOURTH_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # --- a documented ROCm route ---
    "cupy": (
        "cupy/cupy",
        "Python + Cython/CUDA; AMD ROCm platform (README.md:21), `pip install cupy-rocm-7-0` "
        "(README.md:47), experimental AMD GPU support (docs/source/install.rst:416)",
        ("ready", "minor work"),
    ),
    "amrex": (
        "AMReX-Codes/amrex",
        "CMake C++ library; CUDA, HIP or SYCL backends (README.md:57, "
        "Docs/sphinx_documentation/source/GPU.rst:16,142), HIP CI (.github/workflows/hip.yml)",
        ("ready", "minor work"),
    ),
    "ramalama": (
        "containers/ramalama",
        "serving app with containers; ROCm image quay.io/ramalama/rocm (README.md:152), "
        "AMD GPU (rocm) supported (README.md:184), container-images/rocm/",
        ("ready", "minor work"),
    ),
    "hoomd-blue": (
        "glotzerlab/hoomd-blue",
        "CMake C++/Python; AMD ROCm with HIP (BUILDING.rst:98-105), HOOMD_GPU_PLATFORM=HIP "
        "(BUILDING.rst:117), with limitations: some kernels hit an HSA error, no unified-memory "
        "multi-GPU (BUILDING.rst:110-113)",
        ("minor work", "major work"),
    ),
    "sdnext": (
        "vladmandic/sdnext",
        "image-generation app; AMD GPUs with ROCm on Linux and Windows (README.md:98), ROCm "
        "Docker recipes (README.md:106), installer's ROCm path (installer.py:645)",
        ("ready", "minor work"),
    ),
    "pytorch3d": (
        "facebookresearch/pytorch3d",
        "Python + CUDA extension; HIP branch in setup.py (setup.py:56-58, torch.version.hip), "
        "ROCm build-only CI (.github/workflows/build.yml:25-29)",
        ("ready", "minor work"),
    ),
    # --- no documented ROCm route ---
    "torchsparse": (
        "mit-han-lab/torchsparse",
        "none (no file mentions ROCm/HIP); CUDA extension with mma PTX implicit GEMM "
        "(torchsparse/backend/convolution/convolution_forward_implicit_gemm_cuda.cu:150)",
        ("major work", "blocked"),
    ),
    "MatX": (
        "NVIDIA/MatX",
        "none (ROCm only in a vendored dlpack.h enum); header-only CUDA C++ on CUB, libcu++, "
        "cuBLASLt, cuTENSOR",
        ("major work", "blocked"),
    ),
    "triton-server": (
        "triton-inference-server/server",
        "none; serving app with containers (nvcr.io images, README.md:98), GPU through the "
        "CUDA runtime with TRITON_ENABLE_GPU on by default (CMakeLists.txt:42)",
        ("major work", "blocked"),
    ),
    "stylegan3": (
        "NVlabs/stylegan3",
        "none; pure PyTorch with JIT custom ops (torch_utils/ops/*.cu, masked __shfl_xor_sync "
        "in filtered_lrelu.cu:512) and reference fallbacks",
        ("minor work", "major work"),
    ),
    "Deformable-DETR": (
        "fundamentalvision/Deformable-DETR",
        "none (CUDA toolkit install, README.md:85); one plain CUDA extension op "
        "(models/ops, MultiScaleDeformableAttention)",
        ("minor work", "major work"),
    ),
    "flash-fft-conv": (
        "HazyResearch/flash-fft-conv",
        "none; CUDA extension on tensor cores (wmma/mma), tested on A100/H100 (README.md:36-37)",
        ("major work", "blocked"),
    ),
}

#: The snapshot each fourth-sample tree was extracted from (HEAD of the stored mirror;
#: the few blobs absent from the mirror were left out: 4 in pytorch3d, 1 in MatX, images
#: and binaries by their names).
FOURTH_COMMITS: dict[str, str] = {
    "cupy": "6b6d9563c4f7410cd1866a11b2f71a60dd45a68c",
    "amrex": "92679babfc2cc66ca06ee591a80001db57c89878",
    "ramalama": "8bc1f0a35c328e2d028ad7f3f06cec06012530e4",
    "hoomd-blue": "967b6a431e1a3f1b07f52f2990fc2c711b57e141",
    "sdnext": "058a7f0cf326f39c0135c6257d7b7e61073e51fd",
    "pytorch3d": "9381c4016376345bb795b97c45a6c2de66db354a",
    "torchsparse": "385f5ce8718fcae93540511b7f5832f4e71fd835",
    "MatX": "4d58c1a823a6a979e9c12d5a5b395f7e8ab48e8d",
    "triton-server": "e1db8a603d863b1317ee859bdeea2be19959462e",
    "stylegan3": "c233a919a6faee6e36a316ddd4eddababad1adf9",
    "Deformable-DETR": "11169a60c33333af00a4849f1808023eba96a931",
    "flash-fft-conv": "b8771028717f46d5b22cbb8e12833f35033d621b",
}
FOURTH_ROUTE = tuple(list(FOURTH_SET)[:6])  # the 6 with a documented route


#: The split: seeded, stratified (6 with a route and 6 without in each half), done once
#: when the list was committed. The first half is for fixing classes; the second half is run
#: only twice, before any change and at the end.
SPLIT_SEED = 24


def third_split() -> tuple[list[str], list[str]]:
    """(first half, second half) of the third sample, from SPLIT_SEED."""
    rng = random.Random(SPLIT_SEED)  # noqa: S311 -- a reproducible split, not a secret
    first: list[str] = []
    second: list[str] = []
    for group in (
        [n for n in THIRD_SET if n in THIRD_ROUTE],
        [n for n in THIRD_SET if n not in THIRD_ROUTE],
    ):
        picked = sorted(rng.sample(group, len(group) // 2))
        first += [n for n in group if n in picked]
        second += [n for n in group if n not in picked]
    return first, second


_FIRST, _SECOND = third_split()
SETS = {
    "dev": DEV_SET,
    "second": SECOND_SET,
    "third": THIRD_SET,
    "third-a": {n: THIRD_SET[n] for n in _FIRST},
    "third-b": {n: THIRD_SET[n] for n in _SECOND},
    "fourth": FOURTH_SET,
    "fifth": FIFTH_SET,
    "sixth": SIXTH_SET,
    "seventh": SEVENTH_SET,
    "eighth": EIGHTH_SET,
    "ninth": NINTH_SET,
    "tenth": TENTH_SET,
    "eleventh": ELEVENTH_SET,
    "twelfth": TWELFTH_SET,
    "thirteenth": THIRTEENTH_SET,
    "fourteenth": FOURTEENTH_SET,
    "fifteenth": FIFTEENTH_SET,
    "sixteenth": SIXTEENTH_SET,
    "seventeenth": SEVENTEENTH_SET,
    "eighteenth": EIGHTEENTH_SET,
    "nineteenth": NINETEENTH_SET,
    "twentieth": TWENTIETH_SET,
    "twentyfirst": TWENTYFIRST_SET,
    "twentysecond": TWENTYSECOND_SET,
    "twentythird": TWENTYTHIRD_SET,
    "twentyfourth": TWENTYFOURTH_SET,
    "twentyfifth": TWENTYFIFTH_SET,
    "twentysixth": TWENTYSIXTH_SET,
    "twentyseventh": TWENTYSEVENTH_SET,
}
#: repositories with a documented ROCm route, for --by-route
ROUTE_NAMES = (
    frozenset(THIRD_ROUTE)
    | frozenset(FOURTH_ROUTE)
    | frozenset(FIFTH_ROUTE)
    | frozenset(SIXTH_ROUTE)
    | frozenset(SEVENTH_ROUTE)
    | frozenset(EIGHTH_ROUTE)
    | frozenset(NINTH_ROUTE)
    | frozenset(TENTH_ROUTE)
    | frozenset(ELEVENTH_ROUTE)
    | frozenset(TWELFTH_ROUTE)
    | frozenset(THIRTEENTH_ROUTE)
    | frozenset(FOURTEENTH_ROUTE)
    | frozenset(FIFTEENTH_ROUTE)
    | frozenset(SIXTEENTH_ROUTE)
    | frozenset(SEVENTEENTH_ROUTE)
    | frozenset(EIGHTEENTH_ROUTE)
    | frozenset(NINETEENTH_ROUTE)
    | frozenset(TWENTIETH_ROUTE)
    | frozenset(TWENTYFIRST_ROUTE)
    | frozenset(TWENTYSECOND_ROUTE)
    | frozenset(TWENTYTHIRD_ROUTE)
    | frozenset(TWENTYFOURTH_ROUTE)
    | frozenset(TWENTYFIFTH_ROUTE)
    | frozenset(TWENTYSIXTH_ROUTE)
    | frozenset(TWENTYSEVENTH_ROUTE)
)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the scan's worker processes):
    on a shared machine it is steadier than the wall clock."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def scan_one(root: Path) -> tuple[ScanReport, float, float]:
    started, cpu = time.perf_counter(), cpu_seconds()
    report = scan_path(root, ScanOptions())
    return report, time.perf_counter() - started, cpu_seconds() - cpu


def row(
    entry: tuple[str, str, tuple[str, ...]], report: ScanReport, seconds: float, cpu: float
) -> tuple[str, bool]:
    repo, status, allowed = entry
    core = judged(report.findings, report.scope)
    counts = "/".join(str(sum(1 for f in core if f.severity is s)) for s in Severity)
    right = report.verdict.value in allowed
    route = "yes" if report.routes else "no"
    text = (
        f"| {repo} | {status} | {' / '.join(allowed)} | **{report.verdict.value}** | "
        f"{'yes' if right else '**no**'} | {counts} | {len(report.not_built)} | {route} | "
        f"{report.effort.low_days:g}–{report.effort.high_days:g} | {seconds:.1f} | {cpu:.1f} |"
    )
    return text, right


def sample(
    reports: dict[str, ScanReport], n: int, seed: int, only: Collection[str] | None = None
) -> list[dict[str, object]]:
    """A seeded random sample of blocker/major core findings (repos in name order, findings
    in report order), of the repositories in ``only`` when given."""
    population = []
    for name in sorted(reports):
        if only is not None and name not in only:
            continue
        report = reports[name]
        for f in judged(report.findings, report.scope):
            if f.severity in (Severity.BLOCKER, Severity.MAJOR):
                population.append(
                    {
                        "repo": name,
                        "severity": f.severity.value,
                        "rule": f.rule_id,
                        "where": f"{f.location.path}:{f.location.line}",
                        "message": f.message[:160],
                    }
                )
    rng = random.Random(seed)  # noqa: S311 -- a reproducible sample, not a secret
    picked = rng.sample(population, min(n, len(population)))
    for i, item in enumerate(picked, 1):
        item["n"] = i
    return picked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", type=Path, help="folder holding one extracted tree per repository")
    ap.add_argument("--out", type=Path, help="write the Markdown table here (else stdout)")
    ap.add_argument("--sample", type=int, default=0, help="draw this many blocker/major findings")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--sample-out", type=Path, help="write the sample as JSON here")
    ap.add_argument("--set", choices=sorted(SETS), default="dev", help="which repositories")
    ap.add_argument("--reports-out", type=Path, help="write each scan report (JSON) here")
    ap.add_argument(
        "--by-route",
        action="store_true",
        help="draw --sample findings from each group apart: repositories with a documented "
        "ROCm route and without (third and fourth samples)",
    )
    args = ap.parse_args()
    chosen = SETS[args.set]
    missing = [n for n in chosen if not (args.trees / n).is_dir()]
    if missing:
        print(
            f"real_repos: missing trees under {args.trees}: {', '.join(missing)}", file=sys.stderr
        )
        return 2
    lines = [
        "| repository | documented ROCm status | right verdict | gpuport | right? | "
        "core B/M/m/i | not built | route | effort (days) | wall s | CPU s |",
        "|---|---|---|---|---|---|---:|---|---|---:|---:|",
    ]
    reports: dict[str, ScanReport] = {}
    right = 0
    total_s = total_cpu = 0.0
    for name, entry in chosen.items():
        report, seconds, cpu = scan_one(args.trees / name)
        reports[name] = report
        if args.reports_out:
            args.reports_out.mkdir(parents=True, exist_ok=True)
            (args.reports_out / f"{name}.json").write_text(report.model_dump_json(indent=1))
        text, ok = row(entry, report, seconds, cpu)
        lines.append(text)
        right += ok
        total_s += seconds
        total_cpu += cpu
    lines += [
        "",
        f"{right}/{len(chosen)} verdicts right; {total_s:.1f} s wall, {total_cpu:.1f} s CPU "
        "for the whole set.",
    ]
    table = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(table)
    else:
        sys.stdout.write(table)
    if args.sample:
        if args.by_route:
            with_route = [n for n in reports if n in ROUTE_NAMES]
            without = [n for n in reports if n not in ROUTE_NAMES]
            picked_groups = {
                "route": sample(reports, args.sample, args.seed, with_route),
                "no route": sample(reports, args.sample, args.seed, without),
            }
            dump = json.dumps(picked_groups, indent=1) + "\n"
        else:
            dump = json.dumps(sample(reports, args.sample, args.seed), indent=1) + "\n"
        if args.sample_out:
            args.sample_out.write_text(dump)
        else:
            sys.stdout.write(dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
