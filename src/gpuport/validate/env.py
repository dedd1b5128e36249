"""What a capture records about its machine and model, so machine B can tell what differs.

* :func:`numeric_settings`: the switches that change numbers without changing code (TF32,
  reduced-precision reductions, deterministic algorithms, kernel-selection env vars).
* :func:`model_identity`: a signature over parameter/buffer *names, shapes and dtypes* (is B's
  model the same architecture?) and a checksum over their *values* (did B load the same
  weights? if not, every module differs and the report says why).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import os
import warnings
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gpuport.models import EnvFingerprint, EnvironmentProblem, GpuportError
from gpuport.validate.gpv import tensor_bytes
from gpuport.validate.model import NumericSettings

# Environment variables that select kernels or change their numerics (research A.7).
ENV_VARS = (
    "NVIDIA_TF32_OVERRIDE",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUBLASLT_WORKSPACE_SIZE",
    "TORCH_BLAS_PREFER_HIPBLASLT",
    "TORCH_BLAS_PREFER_CUBLASLT",
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_TUNABLEOP_TUNING",
    "PYTORCH_TUNABLEOP_FILENAME",
    "MIOPEN_FIND_MODE",
    "MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL",
    "ROCBLAS_LAYER",
    "HIPBLASLT_ALLOW_TF32",
    "HSA_OVERRIDE_GFX_VERSION",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)


def resolve_device(torch: Any, spec: str) -> Any:
    """``cpu``, ``cuda``, ``cuda:1`` → a torch device that exists here, or a clear error."""
    try:
        device = torch.device(spec)
    except (RuntimeError, ValueError):
        raise GpuportError(f"--device must be cpu, cuda or cuda:N, not {spec!r}") from None
    if device.type == "cpu":
        return device
    if device.type != "cuda":
        raise GpuportError(f"--device must be cpu, cuda or cuda:N, not {spec!r}")
    if not torch.cuda.is_available():
        raise EnvironmentProblem(
            f"--device {spec}: this torch sees no CUDA/ROCm GPU (torch {torch.__version__})"
        )
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index >= torch.cuda.device_count():
        raise EnvironmentProblem(
            f"--device {spec}: only {torch.cuda.device_count()} GPU(s) visible here"
        )
    return torch.device("cuda", index)


def _flag(get: Any) -> Any:
    """Read a torch flag that may be missing or deprecated in this torch, without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return get()
        except Exception:
            return None


def numeric_settings(torch: Any, device: Any) -> NumericSettings:
    """The current values of everything in A.7 that this torch exposes."""
    backends = torch.backends
    hip = getattr(torch.version, "hip", None)
    backend = "cpu" if device.type == "cpu" else ("rocm" if hip else "cuda")
    env = {k: os.environ[k] for k in ENV_VARS if k in os.environ}
    return NumericSettings(
        device=str(device),
        backend=backend,
        torch=str(torch.__version__),
        dtype_default=str(torch.get_default_dtype()).removeprefix("torch."),
        tf32_matmul=_flag(lambda: bool(backends.cuda.matmul.allow_tf32)),
        tf32_cudnn=_flag(lambda: bool(backends.cudnn.allow_tf32)),
        float32_matmul_precision=_flag(lambda: str(torch.get_float32_matmul_precision())),
        fp16_reduced_precision_reduction=_flag(
            lambda: bool(backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
        ),
        bf16_reduced_precision_reduction=_flag(
            lambda: bool(backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
        ),
        deterministic_algorithms=_flag(lambda: bool(torch.are_deterministic_algorithms_enabled())),
        cudnn_deterministic=_flag(lambda: bool(backends.cudnn.deterministic)),
        cudnn_benchmark=_flag(lambda: bool(backends.cudnn.benchmark)),
        num_threads=_flag(lambda: int(torch.get_num_threads())),
        sdpa_backends=_flag(lambda: _sdpa_enabled(torch)),
        env=env,
    )


_SDPA_FLAGS = {
    "flash": ("flash_sdp_enabled", "enable_flash_sdp"),
    "mem_efficient": ("mem_efficient_sdp_enabled", "enable_mem_efficient_sdp"),
    "math": ("math_sdp_enabled", "enable_math_sdp"),
    "cudnn": ("cudnn_sdp_enabled", "enable_cudnn_sdp"),
}


def _sdpa_enabled(torch: Any) -> list[str]:
    cuda = torch.backends.cuda
    return [name for name, (get, _set) in _SDPA_FLAGS.items() if getattr(cuda, get)()]


def _setters(torch: Any) -> dict[str, tuple[Any, Any]]:
    """field → (read now, set to a value) for every setting check can apply on B."""
    b = torch.backends
    cuda = b.cuda

    def set_sdpa(names: list[str]) -> None:
        for name, (_get, setter) in _SDPA_FLAGS.items():
            getattr(cuda, setter)(name in names)

    def set_det(value: bool) -> None:
        torch.use_deterministic_algorithms(value, warn_only=True)

    return {
        "tf32_matmul": (
            lambda: bool(cuda.matmul.allow_tf32),
            lambda v: setattr(cuda.matmul, "allow_tf32", v),
        ),
        "tf32_cudnn": (
            lambda: bool(b.cudnn.allow_tf32),
            lambda v: setattr(b.cudnn, "allow_tf32", v),
        ),
        "float32_matmul_precision": (
            lambda: str(torch.get_float32_matmul_precision()),
            torch.set_float32_matmul_precision,
        ),
        "fp16_reduced_precision_reduction": (
            lambda: bool(cuda.matmul.allow_fp16_reduced_precision_reduction),
            lambda v: setattr(cuda.matmul, "allow_fp16_reduced_precision_reduction", v),
        ),
        "bf16_reduced_precision_reduction": (
            lambda: bool(cuda.matmul.allow_bf16_reduced_precision_reduction),
            lambda v: setattr(cuda.matmul, "allow_bf16_reduced_precision_reduction", v),
        ),
        "deterministic_algorithms": (
            lambda: bool(torch.are_deterministic_algorithms_enabled()),
            set_det,
        ),
        "cudnn_deterministic": (
            lambda: bool(b.cudnn.deterministic),
            lambda v: setattr(b.cudnn, "deterministic", v),
        ),
        "cudnn_benchmark": (
            lambda: bool(b.cudnn.benchmark),
            lambda v: setattr(b.cudnn, "benchmark", v),
        ),
        "sdpa_backends": (lambda: _sdpa_enabled(torch), set_sdpa),
    }


@contextlib.contextmanager
def applied(torch: Any, a: NumericSettings) -> Iterator[list[str]]:
    """Run the block with A's numeric settings on B (restored afterwards).

    Yields one line per setting that B had otherwise ("tf32_matmul: B True → A's False"), so
    the report says what was changed; one that cannot be set says so too.
    """
    changed: list[str] = []
    restore: list[tuple[Any, Any]] = []
    try:
        for field, (get, put) in _setters(torch).items():
            want = getattr(a, field)
            if want is None:
                continue
            now = _flag(get)
            if now is None or now == want:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    put(want)
                except Exception as exc:
                    changed.append(f"{field}: A {want}, B {now}: could not apply A's ({exc})")
                    continue
            restore.append((put, now))
            why = f" ({_WHY[field]})" if field in _WHY else ""
            changed.append(f"{field}: B had {now}, ran this check with A's {want}{why}")
        yield changed
    finally:
        for put, value in reversed(restore):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with contextlib.suppress(Exception):
                    put(value)


_WHY = {
    "tf32_matmul": "TF32 rounds fp32 matmul inputs to 10 mantissa bits",
    "tf32_cudnn": "TF32 in cuDNN/MIOpen convolutions",
    "float32_matmul_precision": "'high'/'medium' allow TF32/bf16 inside fp32 matmuls",
    "fp16_reduced_precision_reduction": "fp16 GEMMs may accumulate in fp16",
    "bf16_reduced_precision_reduction": "bf16 GEMMs may accumulate in bf16",
    "deterministic_algorithms": "non-deterministic kernels (atomics, split-K) vary run to run",
    "cudnn_deterministic": "cuDNN/MIOpen may pick non-deterministic algorithms",
    "cudnn_benchmark": "autotuning picks different convolution algorithms",
    "dtype_default": "tensors created without a dtype differ",
    "sdpa_backends": "attention runs in other kernels (flash, mem_efficient, math, cudnn)",
}
_GPU_ONLY = frozenset(
    {
        "tf32_matmul",
        "tf32_cudnn",
        "fp16_reduced_precision_reduction",
        "bf16_reduced_precision_reduction",
        "cudnn_deterministic",
        "cudnn_benchmark",
        "sdpa_backends",
    }
)


def settings_warnings(a: NumericSettings, b: NumericSettings) -> list[str]:
    """One line per setting that differs between A and B, with why it matters.

    GPU-only switches are ignored when either side ran on the CPU, where they do nothing.
    """
    out: list[str] = []
    on_cpu = a.backend == "cpu" or b.backend == "cpu"
    for field, why in _WHY.items():
        if on_cpu and field in _GPU_ONLY:
            continue
        va, vb = getattr(a, field), getattr(b, field)
        if va is not None and vb is not None and va != vb:
            out.append(f"{field}: A {va}, B {vb} ({why}); pin it to the same value on both")
    for key in sorted(set(a.env) | set(b.env)):
        va, vb = a.env.get(key), b.env.get(key)
        if va != vb:
            out.append(f"environment {key}: A {va or '(unset)'}, B {vb or '(unset)'}")
    return out


def fingerprint(torch: Any, device: Any) -> EnvFingerprint:
    """The machine's fingerprint; GPU fields come from ``gpuport.platform`` when it is there."""
    base = dataclasses.replace(EnvFingerprint.collect(), torch=str(torch.__version__))
    if device.type == "cpu":
        return base
    with contextlib.suppress(Exception):  # platform detection is best effort here
        plat = importlib.import_module("gpuport.platform")
        fp = plat.fingerprint(plat.detect(device.index or 0, torch))
        if isinstance(fp, EnvFingerprint):
            return fp
    name = _flag(lambda: str(torch.cuda.get_device_name(device)))
    return dataclasses.replace(base, gpu_name=name)


def _entries(module: Any, recurse: bool) -> list[tuple[str, Any]]:
    named = list(module.named_parameters(recurse=recurse))
    named += [(n, b) for n, b in module.named_buffers(recurse=recurse) if b is not None]
    return sorted(named, key=lambda item: item[0])


def _describe(torch: Any, t: Any) -> str:
    return f"{list(t.shape)}:{str(t.dtype).removeprefix('torch.')}"


def model_identity(torch: Any, model: Any) -> tuple[str, dict[str, list[str]], str]:
    """(signature, structure, value checksum) of a model's parameters and buffers.

    The signature ignores values, so two machines that initialise differently still agree on
    *which* model it is; the checksum covers values, to warn when the weights differ. It is a
    sha256 over each tensor's name and CRC-32: enough to notice other weights (it is not a
    tamper check: the stored tensors have their own sha256), and at ~3 GB/s per core it keeps
    the fingerprint of a 100M-parameter model under a tenth of a second.
    """
    entries = _entries(model, recurse=True)
    text = "\n".join(f"{n}:{_describe(torch, t)}" for n, t in entries)
    signature = hashlib.sha256(text.encode()).hexdigest()
    structure: dict[str, list[str]] = {}
    for path, mod in model.named_modules():
        structure[path or "(model)"] = [
            f"{n}:{_describe(torch, t)}" for n, t in _entries(mod, recurse=False)
        ]

    def crc(t: Any) -> int:
        with torch.no_grad():
            return zlib.crc32(tensor_bytes(torch, t.detach().to("cpu").contiguous()))

    with ThreadPoolExecutor(max_workers=2) as pool:  # zlib releases the GIL
        crcs = list(pool.map(crc, [t for _, t in entries]))
    values = hashlib.sha256()
    for (name, _t), value in zip(entries, crcs, strict=True):
        values.update(f"{name}:{value:08x}\n".encode())
    return signature, structure, values.hexdigest()


def structure_diff(a: dict[str, list[str]], b: dict[str, list[str]]) -> list[str]:
    """Human-readable differences between two module structures, A first."""
    out: list[str] = []
    for path in sorted(set(a) | set(b)):
        if path not in b:
            out.append(f"{path} only in A")
        elif path not in a:
            out.append(f"{path} only in B")
        elif a[path] != b[path]:
            only_a = sorted(set(a[path]) - set(b[path]))
            only_b = sorted(set(b[path]) - set(a[path]))
            out.append(f"{path}: A has {only_a or 'nothing else'}, B has {only_b or 'nothing'}")
    return out
