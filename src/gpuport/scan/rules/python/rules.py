"""The GP2xx rule table: what each Python-source rule means, why, and how to fix it.

Detection lives in :mod:`gpuport.scan.rules.python.visitor`; this module is
only the registry metadata (``gpuport rules`` / ``gpuport explain`` read it).
References are the issues and docs cited in the research notes.
"""

from __future__ import annotations

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule

_HIP_NOTES = "https://pytorch.org/docs/stable/notes/hip.html"
_PT_COMPAT = (
    "https://rocm.docs.amd.com/en/latest/compatibility/ml-compatibility/pytorch-compatibility.html"
)


def _rule(
    rid: str,
    name: str,
    title: str,
    severity: Severity,
    rationale: str,
    fix: str,
    references: tuple[str, ...],
    effort_hours: float,
    applies_note: str = "all targets",
) -> Rule:
    return Rule(
        id=rid,
        name=name,
        title=title,
        severity=severity,
        family=Family.PYTHON,
        rationale=rationale,
        fix=fix,
        references=references,
        effort_hours=effort_hours,
        applies_note=applies_note,
    )


PYTHON_RULES: tuple[Rule, ...] = (
    _rule(
        "GP201",
        "nvidia-only-import",
        "Import of an NVIDIA-only module",
        Severity.BLOCKER,
        "The module belongs to a package that the knowledge base marks as having no ROCm build "
        "(TensorRT, pycuda, numba.cuda, ...). On a ROCm machine the import "
        "fails, or loads CUDA libraries that are not there, and every call behind it needs an "
        "AMD replacement.",
        "Move to the ROCm route named in the finding (e.g. TensorRT -> MIGraphX or ONNX Runtime's "
        "MIGraphX EP, pycuda -> hip-python), or keep the import "
        "behind `try: ... except ImportError` with a ROCm code path.",
        (
            "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/migraphx.html",
            "https://rocm.docs.amd.com/projects/hip-python/en/latest/",
            "https://github.com/Dao-AILab/flash-attention",
        ),
        16.0,
    ),
    _rule(
        "GP202",
        "import-needs-rocm-build",
        "Import of a package that needs a ROCm-specific install",
        Severity.MINOR,
        "The package runs on ROCm, but only when installed from a ROCm index, a ROCm fork or a "
        "source build (xformers, flash-attn, cupy, apex, vLLM, ...); the PyPI wheel is built for "
        "CUDA and fails to load its extensions. The dependency rules (GP1xx) report the install "
        "line; this marks the code that depends on it.",
        "Install the package the ROCm way named in the finding and check that its ROCm build "
        "covers the features this code uses.",
        (
            "https://github.com/facebookresearch/xformers/issues/1365",
            "https://github.com/Dao-AILab/flash-attention",
        ),
        1.0,
    ),
    _rule(
        "GP203",
        "nvml-gpu-monitoring",
        "NVML / NVIDIA GPU-monitoring library",
        Severity.MAJOR,
        "pynvml (nvidia-ml-py), gpustat, GPUtil and nvitop read NVIDIA's NVML library. On an AMD "
        "host they raise NVMLError_LibraryNotFound or report no GPUs, and a pynvml that happens "
        "to be installed has even confused torch's own device counting on ROCm.",
        "Read AMD GPUs with the `amdsmi` Python library (shipped with ROCm and on PyPI); keep "
        "pynvml behind `if torch.version.cuda:` or a `try/except ImportError`.",
        (
            "https://github.com/pytorch/pytorch/issues/133259",
            "https://github.com/wookayin/gpustat/issues/90",
            "https://rocm.docs.amd.com/projects/amdsmi/en/latest/",
        ),
        4.0,
    ),
    _rule(
        "GP204",
        "nvidia-smi-call",
        "Runs nvidia-smi",
        Severity.MAJOR,
        "nvidia-smi is not installed on an AMD GPU host, so a subprocess, os.system or "
        "shutil.which call for it fails with FileNotFoundError or silently finds no GPU. Tools "
        "that parse its output crash on ROCm.",
        "Query the GPU with `amd-smi` (e.g. `amd-smi static --json`) or the amdsmi library on "
        "ROCm, chosen by `torch.version.hip`, or use torch.cuda APIs that work on both.",
        (
            "https://github.com/bytedance/xpu-perf/issues/196",
            "https://github.com/mila-iqia/milabench/issues/256",
            "https://rocm.docs.amd.com/projects/amdsmi/en/latest/",
        ),
        2.0,
    ),
    _rule(
        "GP205",
        "sm-capability-gate",
        "Feature gate on NVIDIA compute capability",
        Severity.MAJOR,
        "torch.cuda.get_device_capability() returns gfx-derived numbers on ROCm: (9, 0) for "
        "gfx90a, (9, 4) for gfx942, (9, 5) for gfx950, (11, x)/(12, 0) for Radeon. A gate "
        "written for SM numbers misfires (an MI300 looks like a Hopper, Navi passes an MI300 "
        "check), and get_arch_list() lists gfx names, never sm_XX. A gate is worked out with "
        "the number the target reports and with the NVIDIA class of its features (gfx942: "
        "(9, 4) and sm_89); only one that takes a different path on the two is reported.",
        "Branch on `torch.version.hip` first and test the AMD architecture by name: "
        "`torch.cuda.get_device_properties(i).gcnArchName` (e.g. startswith('gfx94')).",
        (
            "https://github.com/sgl-project/sglang/pull/28486",
            "https://github.com/huggingface/trl/pull/5917",
            "https://github.com/pytorch/torchtitan/pull/4778",
            "https://github.com/ROCm/pytorch/pull/1846",
            "https://github.com/vllm-project/vllm/issues/40620",
        ),
        3.0,
    ),
    _rule(
        "GP206",
        "cuda-version-as-gpu-check",
        "torch.version.cuda used to detect a GPU",
        Severity.MAJOR,
        "On a ROCm build of PyTorch torch.version.cuda is None and torch.version.hip is set, "
        "while torch.cuda.is_available() is True. Code that takes `torch.version.cuda is None` "
        "to mean 'no GPU' runs on the CPU or skips its GPU tests on AMD hardware.",
        "Test for a GPU with `torch.cuda.is_available()`; test for the platform with "
        "`torch.version.hip` / `torch.version.cuda` only where the two really differ.",
        ("https://github.com/huggingface/transformers/pull/37278", _HIP_NOTES),
        1.0,
    ),
    _rule(
        "GP207",
        "invalid-device-type",
        'Device type "hip" or "rocm"',
        Severity.BLOCKER,
        'ROCm builds of PyTorch reuse the "cuda" device type; "hip" and "rocm" are not valid '
        "device strings, so torch.device, .to(), autocast and device_type= raise at run time. "
        "A branch that chose ROCm on purpose does not make the string valid.",
        'Use "cuda" (or "cuda:N") on ROCm too; keep "hip" only for your own labels.',
        (_HIP_NOTES, "https://github.com/unslothai/unsloth/blob/main/unsloth/device_type.py"),
        0.5,
    ),
    _rule(
        "GP208",
        "fp8-flavour-mismatch",
        "FP8 dtype the target GPU does not use",
        Severity.BLOCKER,
        "AMD GPUs disagree on FP8: MI300 (gfx942) computes with the FNUZ types "
        "(float8_e4m3fnuz, max 240), MI350 (gfx950) and RDNA4 with the OCP types "
        "(float8_e4m3fn, max 448), and gfx90a/RDNA3 have no FP8. The wrong flavour fails in "
        "hipBLASLt ('Cannot convert ScalarType Float8_e4m3fn to hipDataType') or gives wrong "
        "numbers.",
        "Pick the FP8 dtype per GPU (gcnArchName gfx94x -> *fnuz, gfx950/gfx12 -> OCP) instead "
        "of hard-coding one, and make numeric tolerances dtype-aware.",
        (
            "https://github.com/pytorch/ao/issues/1066",
            "https://github.com/pytorch/FBGEMM/pull/4280",
            "https://github.com/ROCm/ROCm/issues/6019",
            "https://github.com/triton-lang/triton/pull/6850",
        ),
        4.0,
        "all targets; the OCP types are blockers on gfx942, the FNUZ types on gfx950/gfx1201, "
        "any FP8 type is major on gfx90a/gfx1100",
    ),
    _rule(
        "GP209",
        "unsupported-reduced-precision",
        "Reduced-precision matmul setting ROCm lacks",
        Severity.MAJOR,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction and "
        "allow_bf16_reduced_precision_reduction are listed as not supported on ROCm, and the "
        'fp32_precision mode "bfx9" is NVIDIA-only and raises. Results or settings silently '
        "differ from the CUDA run.",
        "Drop the setting on ROCm (guard it with `if torch.version.cuda:`); for TF32-like speed "
        'on MI300 use fp32_precision "tf32" through hipBLASLt.',
        (_PT_COMPAT, _HIP_NOTES),
        1.0,
    ),
    _rule(
        "GP210",
        "unsigned-int-dtype",
        "Unsigned 16/32/64-bit tensor dtype",
        Severity.MINOR,
        "torch.uint16, torch.uint32 and torch.uint64 are listed as 'not natively supported' "
        "on ROCm. Operations on them may be missing or fall back to slow paths, which breaks "
        "code that bit-casts through them (RNG state, packed weights).",
        "Use a signed dtype (int32/int64) with explicit masking, or keep the unsigned tensor on "
        "the CPU.",
        (_PT_COMPAT,),
        1.0,
    ),
    _rule(
        "GP211",
        "runtime-cuda-extension",
        "CUDA extension built at run time",
        Severity.MAJOR,
        "torch.utils.cpp_extension.load/load_inline/CUDAExtension compile the project's own "
        "CUDA sources. On ROCm torch hipifies them and builds with hipcc, which only works if "
        "the kernels are portable (no inline PTX, no 32-lane warp assumptions, HIP include "
        "paths).",
        "Scan the .cu sources with `gpuport scan` (GP3xx rules) or translate them with "
        "`gpuport hipify`, and build once on ROCm before relying on the JIT path.",
        (
            "https://github.com/rahul-goel/fused-ssim/pull/29",
            "https://github.com/open-mmlab/mmcv/issues/1898",
            _HIP_NOTES,
        ),
        8.0,
    ),
    _rule(
        "GP212",
        "triton-inline-ptx",
        "Triton inline assembly in PTX",
        Severity.BLOCKER,
        "tl.inline_asm_elementwise pastes the assembly string into the kernel as is. PTX "
        "cannot be assembled by the AMD backend, so the kernel fails to compile on ROCm.",
        "Replace the asm with tl.* operations, or add an AMDGCN variant selected on "
        "`torch.version.hip` (e.g. `v_...` instructions).",
        (
            "https://triton-lang.org/main/python-api/generated/triton.language.inline_asm_elementwise.html",
            "https://github.com/Dao-AILab/quack/pull/98",
        ),
        8.0,
    ),
    _rule(
        "GP213",
        "onnxruntime-cuda-provider",
        "ONNX Runtime CUDA/TensorRT execution provider",
        Severity.MAJOR,
        "CUDAExecutionProvider and TensorrtExecutionProvider exist only in NVIDIA builds of ONNX "
        "Runtime. On ROCm the session drops them with a warning and runs on the CPU.",
        'Install onnxruntime-migraphx and request "MIGraphXExecutionProvider" on AMD GPUs.',
        (
            "https://onnxruntime.ai/docs/execution-providers/MIGraphX-ExecutionProvider.html",
            "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/onnxruntime.html",
        ),
        2.0,
    ),
    _rule(
        "GP214",
        "onnxruntime-rocm-provider",
        "ONNX Runtime ROCMExecutionProvider (removed)",
        Severity.BLOCKER,
        "The ROCm execution provider was deleted from ONNX Runtime; ROCm 7.0 is the last AMD "
        "supported release of it and ORT 1.23+ no longer has it. Code that asks for it gets a "
        "CPU session or an error on a current install.",
        'Use "MIGraphXExecutionProvider" from onnxruntime-migraphx.',
        (
            "https://github.com/microsoft/onnxruntime/pull/25181",
            "https://github.com/microsoft/onnxruntime/pull/26211",
            "https://github.com/Fannovel16/comfyui_controlnet_aux/pull/594",
        ),
        2.0,
    ),
    _rule(
        "GP215",
        "cuda-graphs",
        "CUDA graph capture (hipGraph on ROCm)",
        Severity.MINOR,
        "torch.cuda.CUDAGraph, torch.cuda.graph and torch.compile modes that record graphs "
        "(reduce-overhead, max-autotune) run on hipGraph under ROCm. It has open issues: "
        "capture segfaults on large graphs, illegal ops swallowed during capture (wrong results "
        "at replay), degraded training with cudagraph trees on MI300X, stream-capture errors "
        "on gfx950.",
        "Validate the captured path on the AMD target against eager mode; fall back to "
        'mode="default" (or "max-autotune-no-cudagraphs") if results or speed differ.',
        (
            "https://github.com/pytorch/pytorch/issues/187715",
            "https://github.com/pytorch/pytorch/issues/193735",
            "https://github.com/pytorch/pytorch/issues/155720",
            "https://github.com/pytorch/pytorch/issues/185074",
        ),
        2.0,
    ),
    _rule(
        "GP216",
        "cudnn-benchmark-miopen",
        "cudnn.benchmark = True (MIOpen exhaustive find)",
        Severity.MINOR,
        "On ROCm the cudnn flags drive MIOpen. benchmark=True runs an exhaustive kernel search "
        "for every new convolution shape, which can take minutes per shape on a cold cache and "
        "recurs with dynamic shapes; one project cut a request from 2433 ms to 268 ms by turning "
        "MIOpen off on ROCm.",
        "Leave cudnn.benchmark False on ROCm or set MIOPEN_FIND_MODE=FAST, and keep the MIOpen "
        "user database on a persistent path.",
        (
            "https://github.com/pytorch/pytorch/pull/145294",
            "https://github.com/pytorch/pytorch/pull/179795",
            "https://github.com/remsky/Kokoro-FastAPI/pull/518",
            "https://github.com/comfyanonymous/ComfyUI/pull/10448",
        ),
        0.5,
    ),
    _rule(
        "GP217",
        "nvtx-ranges",
        "NVTX profiling ranges",
        Severity.MINOR,
        "The third-party `nvtx` package only talks to NVIDIA's NVTX library and does nothing "
        "useful (or fails to import) on ROCm. torch.cuda.nvtx is fine: on ROCm it maps to "
        "rocTX, so it is only reported as information.",
        "Use torch.cuda.nvtx.range_push/range_pop (rocTX on ROCm) or roctx directly; profile "
        "with rocprofv3 --marker-trace.",
        ("https://github.com/pytorch/pytorch/pull/92199",),
        1.0,
    ),
    _rule(
        "GP218",
        "cuda-visible-devices",
        "Sets CUDA_VISIBLE_DEVICES",
        Severity.INFO,
        "ROCm honours CUDA_VISIBLE_DEVICES with the same effect as HIP_VISIBLE_DEVICES, so this "
        "usually works. HIP numbers GPUs in its own order, which can differ from amd-smi's, and "
        "ROCR_VISIBLE_DEVICES (set by some schedulers) filters below it and re-indexes.",
        "Keep it, or set HIP_VISIBLE_DEVICES on ROCm; map indices with `amd-smi list` and do "
        "not also set ROCR_VISIBLE_DEVICES to the same index.",
        (
            "https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html",
            "https://github.com/pytorch/pytorch/issues/131901",
        ),
        0.25,
    ),
    _rule(
        "GP219",
        "hip-and-rocr-visible-devices",
        "Sets both HIP_ and ROCR_VISIBLE_DEVICES",
        Severity.MINOR,
        "ROCR_VISIBLE_DEVICES filters GPUs in the ROCr runtime and HIP_VISIBLE_DEVICES then "
        "indexes what is left. Setting both to the same index (say 3) asks for GPU 3 of a "
        "one-GPU list and can hide every GPU.",
        "Set one of them (HIP_VISIBLE_DEVICES for one process, ROCR_VISIBLE_DEVICES for "
        "containers); if both are needed, give HIP the index within the ROCR subset.",
        (
            "https://github.com/ollama/ollama/issues/15752",
            "https://github.com/ROCm/ROCR-Runtime/issues/155",
            "https://github.com/mcmonkeyprojects/SwarmUI/issues/565",
        ),
        0.5,
    ),
    _rule(
        "GP220",
        "cuda-env-var",
        "CUDA-named environment variable set from Python",
        Severity.INFO,
        "CUDA_LAUNCH_BLOCKING, CUDA_DEVICE_MAX_CONNECTIONS and TORCH_CUDA_ARCH_LIST have ROCm "
        "counterparts with other names (AMD_SERIALIZE_KERNEL=3 / HIP_LAUNCH_BLOCKING, "
        "GPU_MAX_HW_QUEUES, PYTORCH_ROCM_ARCH). On ROCm the CUDA name may do nothing.",
        "Set the ROCm equivalent named in the finding as well.",
        ("https://github.com/pytorch/pytorch/issues/132570", _HIP_NOTES),
        0.25,
    ),
)
