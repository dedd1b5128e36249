"""The one place that knows which GPU platform, runtime, arch and warp size is present.

Every other module asks here instead of poking at torch, NVML or amdsmi itself, so the
CUDA/ROCm differences (``torch.version.hip``, ``gcnArchName``, wave64 on CDNA, the two
FP8 flavours) are decided once. torch is imported inside :func:`detect` only, never at
module import, so ``gpuport scan`` never pays for it.

Every probe is best-effort: a library that is missing, old, or raises leaves its field
``None`` (or its library out of ``libraries``) rather than failing a benchmark run over
a version string. The one thing :func:`detect` refuses is a device index that does not
exist, which is the user's input, not a probe.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import threading
from collections.abc import Callable
from functools import partial
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from gpuport import textre
from gpuport.bench.model import DeviceInfo, Telemetry
from gpuport.models import EnvFingerprint, GpuportError

T = TypeVar("T")

# NVML clock-event ("throttle") reason bits, named as nvidia-smi's -q output names them.
# The values are part of NVML's stable ABI (nvml.h, nvmlClocksEventReason*).
NVML_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}
# A hung driver can block NVML/amdsmi calls; telemetry gives up after this long.
TELEMETRY_TIMEOUT_S = 2.0

_lock = threading.Lock()
_libs: dict[str, ModuleType | None] = {}  # "nvml" / "amdsmi" -> initialised module, or None
_uuids: dict[int, str] = {}  # torch device index -> NVML UUID, filled by detect()


def detect(
    device_index: int = 0,
    torch_module: ModuleType | None = None,
    knowledge_dir: Path | None = None,
) -> DeviceInfo:
    """Describe the GPU at ``device_index`` (or the CPU when there is no usable GPU).

    ``torch_module`` lets callers that already imported torch (and tests with a fake)
    pass it in; otherwise torch is imported here, and its absence means "cpu".
    ``knowledge_dir`` is the user's ``--knowledge`` folder, so a GPU they added to
    the catalog is recognised.
    """
    torch = torch_module if torch_module is not None else _import_torch()
    torch_version = _probe(lambda: str(torch.__version__)) if torch is not None else None
    if torch is None or not _probe(lambda: bool(torch.cuda.is_available())):
        return DeviceInfo(backend="cpu", name=cpu_name(), torch=torch_version)
    count = _probe(lambda: int(torch.cuda.device_count()))
    if count is not None and not 0 <= device_index < count:
        raise GpuportError(
            f"GPU index {device_index} does not exist: {count} GPU(s) visible (0..{count - 1})"
        )
    hip = _probe(lambda: torch.version.hip)
    backend = "rocm" if hip else "cuda"
    props: Any = _probe(lambda: torch.cuda.get_device_properties(device_index))
    name = _probe(lambda: str(props.name)) or _probe(
        lambda: str(torch.cuda.get_device_name(device_index))
    )
    arch = _rocm_arch(props) if backend == "rocm" else _cuda_arch(props)
    uuid = _probe(lambda: str(props.uuid))
    if backend == "cuda" and uuid:
        _uuids[device_index] = uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
    name = name or "unknown GPU"
    return DeviceInfo(
        backend=backend,
        name=name,
        arch=arch,
        index=device_index,
        count=count or 0,
        multiprocessors=_probe(lambda: int(props.multi_processor_count)),
        memory_bytes=_probe(lambda: int(props.total_memory)),
        warp_size=_warp_size(props, backend, arch),
        l2_bytes=_probe(lambda: int(props.L2_cache_size)),
        driver=_driver_version(backend),
        runtime=_runtime(torch, backend, hip),
        torch=torch_version,
        libraries=_libraries(torch, backend),
        spec_key=_spec_key(name, arch, knowledge_dir),
    )


def telemetry(info: DeviceInfo) -> Telemetry | None:
    """Clocks, power, temperature and throttle reasons now, from NVML or amdsmi.

    None on the CPU, when neither library is usable, or when the read takes longer than
    ``TELEMETRY_TIMEOUT_S`` (a wedged driver must not stall a benchmark). Never raises.
    """
    if info.backend == "cpu":
        return None
    reader = _nvml_telemetry if info.backend == "cuda" else _amdsmi_telemetry
    try:
        return _with_timeout(lambda: reader(info.index), TELEMETRY_TIMEOUT_S)
    except Exception:
        return None


def fingerprint(info: DeviceInfo) -> EnvFingerprint:
    """The machine fingerprint every result file carries, with the GPU fields filled in."""
    on_gpu = info.backend != "cpu"
    return dataclasses.replace(
        EnvFingerprint.collect(),
        gpu_name=info.name if on_gpu else None,
        gpu_arch=info.arch,
        driver=info.driver,
        runtime=info.runtime,
        torch=info.torch,
        libraries=dict(info.libraries),
    )


def fp8_dtype_name(info: DeviceInfo, user_dir: Path | None = None) -> str | None:
    """The torch FP8 (e4m3) dtype this device computes in, or None where it has none.

    NVIDIA (sm_89 and later) and AMD targets with OCP FP8 (gfx950, gfx1201) use
    ``float8_e4m3fn``; MI300-class gfx942 uses the ``fnuz`` variant, whose bias and
    NaN encoding differ, so the same bytes mean different numbers. The AMD answer comes
    from targets.toml, so a new target is a data change, not a code change.
    """
    if info.backend == "cpu" or not info.arch:
        return None
    if info.backend == "cuda":
        cc = _compute_capability(info.arch)
        return "float8_e4m3fn" if cc is not None and cc >= (8, 9) else None
    from gpuport.knowledge import load_targets

    target = load_targets(user_dir).get(info.arch.split(":", 1)[0].lower())
    if target is None:
        return None
    return {"ocp": "float8_e4m3fn", "fnuz": "float8_e4m3fnuz"}.get(target.fp8)


def cpu_name() -> str:
    """The CPU model: /proc/cpuinfo's "model name", else the machine name from ``os.uname``."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    return os.uname().machine or "CPU"  # never platform.processor(): it runs `uname -p`


# ------------------------------------------------------------------------- detect helpers


def _probe(fn: Callable[[], T]) -> T | None:
    """``fn()``, or None if it raises anything (old torch, missing library, driver error)."""
    try:
        return fn()
    except Exception:
        return None


def _import_torch() -> ModuleType | None:
    # OSError too: a CUDA wheel on a machine with broken or missing libraries fails that way.
    try:
        return importlib.import_module("torch")
    except (ImportError, OSError):
        return None


def _cuda_arch(props: Any) -> str | None:
    return _probe(lambda: f"sm_{int(props.major)}{int(props.minor)}")


def _rocm_arch(props: Any) -> str | None:
    """``gfx942:sramecc+:xnack-`` -> ``gfx942``: the feature flags are not the target."""
    raw = _probe(lambda: str(props.gcnArchName))
    if not raw:
        return None
    return raw.split(":", 1)[0].strip().lower() or None


def _compute_capability(arch: str) -> tuple[int, int] | None:
    """``sm_90`` -> (9, 0); ``sm_120`` -> (12, 0); ``sm_90a`` -> (9, 0)."""
    digits = "".join(
        ch for ch in arch.lower().removeprefix("sm_").removeprefix("sm") if ch.isdigit()
    )
    if len(digits) < 2:
        return None
    return int(digits[:-1]), int(digits[-1])


def _warp_size(props: Any, backend: str, arch: str | None) -> int | None:
    """torch's own figure where it has one; else wave64 for gfx9 (GCN/CDNA), 32 otherwise."""
    reported = _probe(lambda: int(props.warp_size))
    if reported:
        return reported
    if backend == "cuda":
        return 32
    if arch is None:
        return None
    from gpuport.knowledge import load_targets

    target = _probe(lambda: load_targets().get(arch))
    if target is not None:
        return target.wave_size
    return 64 if arch.startswith("gfx9") else 32


def _runtime(torch: Any, backend: str, hip: object) -> str | None:
    if backend == "rocm":
        return f"HIP {hip}"
    cuda = _probe(lambda: torch.version.cuda)
    return f"CUDA {cuda}" if cuda else None


def _libraries(torch: Any, backend: str) -> dict[str, str]:
    """Versions of the libraries that change numbers: DNN, collectives, BLAS."""
    rocm = backend == "rocm"
    found: dict[str, str | None] = {
        "miopen" if rocm else "cudnn": _probe(lambda: _str_or_none(torch.backends.cudnn.version())),
        "rccl" if rocm else "nccl": _probe(lambda: _dotted(torch.cuda.nccl.version())),
        "blas_backend": _probe(lambda: _blas_backend(torch)),
    }
    if rocm:
        found["rocm"] = _rocm_install_version()
    else:
        found["cublas"] = _dist_version("nvidia-cublas-cu12", "nvidia-cublas-cu13", "nvidia-cublas")
    return {key: value for key, value in found.items() if value}


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def _dotted(version: object) -> str | None:
    """NCCL's version comes as (2, 21, 5) in new torch and as 22105 in old torch."""
    if version is None:
        return None
    if isinstance(version, tuple | list):
        return ".".join(str(part) for part in version)
    return str(version)


def _blas_backend(torch: Any) -> str | None:
    """torch's preferred BLAS (cublas, cublaslt, hipblaslt, ck), without the enum prefix."""
    value = torch.backends.cuda.preferred_blas_library()
    text = str(getattr(value, "name", value))
    return text.rsplit(".", 1)[-1].lower() or None


def _dist_version(*names: str) -> str | None:
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(name)
    return None


def version_text(text: str | None) -> str | None:
    """The first line of ``text`` when it is a version (``6.2.4-120``, ``7.0.1``), else None:
    a ROCm version file may be a link to anything (``/proc/self/environ``), and only a
    version may go into a snapshot or fingerprint (twenty-eighth re-run F7)."""
    first = (text or "").strip().split("\n", 1)[0].strip()
    if len(first) <= 64 and _VERSION.fullmatch(first):
        return first
    return None


_VERSION = textre.compile(r"\d+(?:\.\d+){0,4}(?:[-+~][0-9A-Za-z.+~-]{1,40})?")


def _rocm_install_version() -> str | None:
    from gpuport import fileio, subproc

    # not into an avoided project, and never a FIFO that blocks (twenty-fifth re-run F5)
    for root in (subproc.safe_env().get("ROCM_PATH"), "/opt/rocm"):
        if root:
            got = version_text(
                fileio.read_text_or_none(Path(root) / ".info" / "version", limit=256)
            )
            if got:
                return got
    return None


def _spec_key(name: str, arch: str | None, knowledge_dir: Path | None) -> str | None:
    from gpuport.knowledge.gpus import match_device

    spec = _probe(lambda: match_device(name, arch, knowledge_dir))
    return spec.key if spec is not None else None


def _driver_version(backend: str) -> str | None:
    if backend == "cuda":
        nvml = _lib("nvml")
        return _probe(lambda: _text(nvml.nvmlSystemGetDriverVersion())) if nvml else None
    amdsmi = _lib("amdsmi")
    if amdsmi is not None:
        version = _probe(
            lambda: amdsmi.amdsmi_get_gpu_driver_info(amdsmi.amdsmi_get_processor_handles()[0])[
                "driver_version"
            ]
        )
        if version:
            return str(version)
    with contextlib.suppress(OSError):
        return Path("/sys/module/amdgpu/version").read_text().strip() or None
    return None


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# ---------------------------------------------------------------------- NVML and amdsmi


def _lib(which: str) -> ModuleType | None:
    """The initialised NVML (pynvml) or amdsmi module, or None; tried once per process.

    Initialisation is remembered, failure included, so per-case telemetry does not retry
    a missing library hundreds of times.
    """
    with _lock:
        if which not in _libs:
            _libs[which] = _with_timeout(lambda: _init_lib(which), TELEMETRY_TIMEOUT_S)
        return _libs[which]


def _init_lib(which: str) -> ModuleType | None:
    try:
        if which == "nvml":
            module = importlib.import_module("pynvml")
            module.nvmlInit()
        else:
            module = importlib.import_module("amdsmi")
            module.amdsmi_init()
    except Exception:
        return None
    return module


def _with_timeout(fn: Callable[[], T], seconds: float) -> T | None:
    """``fn()`` in a daemon thread; None if it raises or is still running after ``seconds``."""
    box: list[T] = []

    def target() -> None:
        with contextlib.suppress(Exception):
            box.append(fn())

    thread = threading.Thread(target=target, name="gpuport-probe", daemon=True)
    thread.start()
    thread.join(seconds)
    return box[0] if box else None


def _visible_index(index: int) -> int | str:
    """Map torch's device index through *_VISIBLE_DEVICES to the management library's view.

    NVML and amdsmi enumerate every GPU in the machine; torch only the visible ones.
    Returns a physical index, or a UUID string where the variable lists UUIDs.
    """
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        raw = os.environ.get(var)
        if raw:
            items = [item.strip() for item in raw.split(",") if item.strip()]
            if index < len(items):
                item = items[index]
                return int(item) if item.isdigit() else item
    return index


def _nvml_telemetry(index: int) -> Telemetry | None:
    nvml = _lib("nvml")
    if nvml is None:
        return None
    handle = _nvml_handle(nvml, index)
    if handle is None:
        return None
    return nvml_reading(nvml, handle)


def _nvml_handle(nvml: Any, index: int) -> Any:
    uuid = _uuids.get(index)
    if uuid is not None:
        handle = _probe(lambda: nvml.nvmlDeviceGetHandleByUUID(uuid))
        if handle is not None:
            return handle
    where = _visible_index(index)
    if isinstance(where, str):
        return _probe(lambda: nvml.nvmlDeviceGetHandleByUUID(where))
    return _probe(lambda: nvml.nvmlDeviceGetHandleByIndex(where))


def nvml_reading(nvml: Any, handle: Any) -> Telemetry:
    """One Telemetry from an NVML device handle; each unreadable field stays None."""
    mw_to_w = 1000.0
    power = _probe(lambda: nvml.nvmlDeviceGetPowerUsage(handle) / mw_to_w)
    limit = _probe(lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(handle) / mw_to_w)
    reasons = _probe(lambda: int(nvml.nvmlDeviceGetCurrentClocksEventReasons(handle)))
    if reasons is None:
        reasons = _probe(lambda: int(nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)))
    return Telemetry(
        sm_clock_mhz=_probe(lambda: float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))),
        mem_clock_mhz=_probe(
            lambda: float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM))
        ),
        power_w=power,
        temperature_c=_probe(
            lambda: float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
        ),
        power_limit_w=limit,
        throttle_reasons=decode_nvml_reasons(reasons or 0),
    )


def decode_nvml_reasons(mask: int) -> list[str]:
    """NVML's clock-event bitmask as short names; unknown bits as ``bit_0x...``."""
    names = [name for bit, name in NVML_REASONS.items() if mask & bit]
    rest = mask & ~sum(NVML_REASONS)
    names.extend(f"bit_{1 << i:#x}" for i in range(rest.bit_length()) if rest & (1 << i))
    return names


def _amdsmi_telemetry(index: int) -> Telemetry | None:
    amdsmi = _lib("amdsmi")
    if amdsmi is None:
        return None
    handles = _probe(amdsmi.amdsmi_get_processor_handles) or []
    where = _visible_index(index)
    if not isinstance(where, int) or where >= len(handles):
        return None
    return amdsmi_reading(amdsmi, handles[where])


def amdsmi_reading(amdsmi: Any, handle: Any) -> Telemetry:
    """One Telemetry from an amdsmi processor handle; each unreadable field stays None.

    amdsmi's dictionaries changed keys and units between ROCm releases ("clk" vs
    "cur_clk", power limit in W or uW), hence the tolerant lookups.
    """
    clk = amdsmi.AmdSmiClkType
    gfx = _probe(lambda: amdsmi.amdsmi_get_clock_info(handle, clk.GFX))
    mem = _probe(lambda: amdsmi.amdsmi_get_clock_info(handle, clk.MEM))
    power = _probe(lambda: amdsmi.amdsmi_get_power_info(handle)) or {}
    limit = _number(power.get("power_limit"))
    if limit is not None and limit > 100_000:
        limit /= 1_000_000  # reported in microwatts
    metrics = _probe(lambda: amdsmi.amdsmi_get_gpu_metrics_info(handle)) or {}
    throttled = _number(metrics.get("throttle_status"))
    return Telemetry(
        sm_clock_mhz=_first_number(gfx, "cur_clk", "clk"),
        mem_clock_mhz=_first_number(mem, "cur_clk", "clk"),
        power_w=_first_number(power, "current_socket_power", "average_socket_power"),
        temperature_c=_amd_temperature(amdsmi, handle),
        power_limit_w=limit,
        throttle_reasons=["throttled"] if throttled else [],
    )


def _amd_temperature(amdsmi: Any, handle: Any) -> float | None:
    """Hotspot first (MI300-class boards have no edge sensor), then edge."""

    def read(sensor: str) -> object:
        kind = getattr(amdsmi.AmdSmiTemperatureType, sensor)
        current = amdsmi.AmdSmiTemperatureMetric.CURRENT
        return amdsmi.amdsmi_get_temp_metric(handle, kind, current)

    for sensor in ("HOTSPOT", "JUNCTION", "EDGE"):
        number = _number(_probe(partial(read, sensor)))
        if number is not None:
            return number
    return None


def _first_number(data: object, *keys: str) -> float | None:
    if not isinstance(data, dict):
        return None
    for key in keys:
        value = _number(data.get(key))
        if value is not None:
            return value
    return None


def _number(value: object) -> float | None:
    """A float from amdsmi's mixed values: numbers, numeric strings, "N/A"."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None
