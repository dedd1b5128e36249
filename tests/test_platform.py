"""gpuport.platform: device detection on CPU, CUDA and ROCm (the GPU cases with a fake torch).

The fakes mimic only what detect() reads: torch.cuda.{is_available, device_count,
get_device_properties, get_device_name, nccl.version}, torch.version.{hip, cuda} and
torch.backends.{cudnn.version, cuda.preferred_blas_library}.
"""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest

import gpuport.platform as plat
from gpuport.bench.model import DeviceInfo
from gpuport.models import GpuportError


@pytest.fixture(autouse=True)
def _isolated_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real NVML/amdsmi and no UUIDs left over from another test."""
    monkeypatch.setattr(plat, "_libs", {"nvml": None, "amdsmi": None})
    monkeypatch.setattr(plat, "_uuids", {})
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)


def _raise(*_: object, **__: object) -> Any:
    raise RuntimeError("probe failed")


def fake_torch(
    props: object,
    *,
    hip: str | None = None,
    cuda: str | None = "12.4",
    count: int = 8,
    available: bool = True,
    cudnn: Any = lambda: 90100,
    nccl: Any = lambda: (2, 21, 5),
    blas: Any = lambda: "_BlasBackend.Cublaslt",
) -> Any:
    return SimpleNamespace(
        __version__="2.5.1+rocm6.2" if hip else "2.5.1+cu124",
        version=SimpleNamespace(hip=hip, cuda=None if hip else cuda),
        cuda=SimpleNamespace(
            is_available=lambda: available,
            device_count=lambda: count,
            get_device_properties=lambda i: props,
            get_device_name=lambda i: getattr(props, "name", "fallback name"),
            nccl=SimpleNamespace(version=nccl),
        ),
        backends=SimpleNamespace(
            cudnn=SimpleNamespace(version=cudnn),
            cuda=SimpleNamespace(preferred_blas_library=blas),
        ),
    )


H100_PROPS = SimpleNamespace(
    name="NVIDIA H100 80GB HBM3",
    major=9,
    minor=0,
    multi_processor_count=132,
    total_memory=85_031_501_824,
    warp_size=32,
    L2_cache_size=52_428_800,
    uuid="58be6ab6-7a4a-2b3c-9d8e-1f2a3b4c5d6e",
)
# torch on ROCm: major/minor describe gfx9.4, the arch is in gcnArchName; older torch
# has no warp_size attribute.
MI300X_PROPS = SimpleNamespace(
    name="AMD Instinct MI300X",
    major=9,
    minor=4,
    gcnArchName="gfx942:sramecc+:xnack-",
    multi_processor_count=304,
    total_memory=206_141_652_992,
    L2_cache_size=4_194_304,
)


class FakeNvml:
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0

    def __init__(self) -> None:
        self.uuids: list[str] = []

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"550.54.15"

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> str:
        self.uuids.append(uuid)
        return "handle"

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        return f"handle{index}"

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:
        return 1980 if kind == self.NVML_CLOCK_SM else 2619

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:
        return 612_500

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: str) -> int:
        return 700_000

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> int:
        return 61

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: str) -> int:
        return 0x4 | 0x40


# ----------------------------------------------------------------------- CPU


def test_this_machine_is_detected_as_cpu() -> None:
    info = plat.detect()
    assert info.backend == "cpu"
    assert info.name.strip()
    assert info.count == 0
    assert info.arch is None and info.spec_key is None
    assert plat.telemetry(info) is None
    assert plat.fp8_dtype_name(info) is None


def test_without_torch_it_is_a_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plat, "_import_torch", lambda: None)
    info = plat.detect()
    assert info.backend == "cpu" and info.torch is None and info.name


def test_torch_without_a_gpu_is_a_cpu_with_the_torch_version() -> None:
    info = plat.detect(0, fake_torch(H100_PROPS, available=False))
    assert info.backend == "cpu"
    assert info.torch == "2.5.1+cu124"


def test_is_available_raising_is_a_cpu() -> None:
    torch = fake_torch(H100_PROPS)
    torch.cuda.is_available = _raise
    assert plat.detect(0, torch).backend == "cpu"


def test_importing_platform_does_not_import_torch() -> None:
    code = "import sys, gpuport.platform; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ----------------------------------------------------------------------- CUDA and ROCm


def test_cuda_h100(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml()
    monkeypatch.setitem(plat._libs, "nvml", nvml)
    info = plat.detect(0, fake_torch(H100_PROPS))
    assert info.backend == "cuda"
    assert info.name == "NVIDIA H100 80GB HBM3"
    assert info.arch == "sm_90"
    assert info.count == 8
    assert info.multiprocessors == 132
    assert info.memory_bytes == 85_031_501_824
    assert info.warp_size == 32
    assert info.l2_bytes == 50 * 1024 * 1024
    assert info.runtime == "CUDA 12.4"
    assert info.driver == "550.54.15"
    assert info.torch == "2.5.1+cu124"
    assert info.libraries["cudnn"] == "90100"
    assert info.libraries["nccl"] == "2.21.5"
    assert info.libraries["blas_backend"] == "cublaslt"
    assert info.spec_key == "h100-sxm"
    assert plat.fp8_dtype_name(info) == "float8_e4m3fn"
    # Telemetry finds the same GPU by its UUID, whatever CUDA_VISIBLE_DEVICES says.
    reading = plat.telemetry(info)
    assert reading is not None
    assert nvml.uuids == ["GPU-58be6ab6-7a4a-2b3c-9d8e-1f2a3b4c5d6e"]
    assert reading.sm_clock_mhz == 1980 and reading.mem_clock_mhz == 2619
    assert reading.power_w == pytest.approx(612.5)
    assert reading.power_limit_w == 700
    assert reading.temperature_c == 61
    assert reading.throttle_reasons == ["sw_power_cap", "hw_thermal_slowdown"]


def test_cuda_h100_pcie_is_not_the_sxm_part() -> None:
    props = SimpleNamespace(**{**vars(H100_PROPS), "name": "NVIDIA H100 PCIe"})
    assert plat.detect(0, fake_torch(props)).spec_key == "h100-pcie"


def test_rocm_mi300x() -> None:
    info = plat.detect(0, fake_torch(MI300X_PROPS, hip="6.2.41133-dd7f95766"))
    assert info.backend == "rocm"
    assert info.arch == "gfx942"
    assert info.warp_size == 64  # no props.warp_size: CDNA is wave64
    assert info.runtime == "HIP 6.2.41133-dd7f95766"
    assert info.multiprocessors == 304
    assert info.l2_bytes == 4 * 1024 * 1024
    assert "miopen" in info.libraries and "cudnn" not in info.libraries
    assert info.libraries["rccl"] == "2.21.5"
    assert info.spec_key == "mi300x"
    assert plat.fp8_dtype_name(info) == "float8_e4m3fnuz"


def test_rocm_mi300x_vf_is_an_mi300x() -> None:
    props = SimpleNamespace(**{**vars(MI300X_PROPS), "name": "AMD Instinct MI300X VF"})
    assert plat.detect(0, fake_torch(props, hip="6.2.41133")).spec_key == "mi300x"


def test_rocm_mi300a_is_not_an_mi300x() -> None:
    props = SimpleNamespace(**{**vars(MI300X_PROPS), "name": "AMD Instinct MI300A"})
    info = plat.detect(0, fake_torch(props, hip="6.2.41133"))
    assert info.arch == "gfx942" and info.spec_key == "mi300a"  # its own catalog entry


@pytest.mark.parametrize(
    ("gcn", "arch", "warp"),
    [
        ("gfx942:sramecc+:xnack-", "gfx942", 64),
        ("gfx90a:sramecc+:xnack-", "gfx90a", 64),
        ("gfx950:sramecc+:xnack-", "gfx950", 64),
        ("gfx1100", "gfx1100", 32),
        ("gfx1201", "gfx1201", 32),
        ("gfx906:sramecc-:xnack-", "gfx906", 64),  # not in targets.toml: gfx9 rule
        ("gfx1030", "gfx1030", 32),  # not in targets.toml: RDNA rule
    ],
)
def test_gcn_arch_name_and_warp_size_fallback(gcn: str, arch: str, warp: int) -> None:
    props = SimpleNamespace(name="AMD Radeon Graphics", gcnArchName=gcn)
    info = plat.detect(0, fake_torch(props, hip="6.3.0"))
    assert (info.arch, info.warp_size) == (arch, warp)


def test_reported_warp_size_wins() -> None:
    props = SimpleNamespace(**{**vars(MI300X_PROPS), "warp_size": 64})
    assert plat.detect(0, fake_torch(props, hip="6.4.0")).warp_size == 64
    cuda_props = SimpleNamespace(name="NVIDIA A100-SXM4-80GB", major=8, minor=0)
    info = plat.detect(0, fake_torch(cuda_props))
    assert (info.arch, info.warp_size, info.spec_key) == ("sm_80", 32, "a100-sxm-80gb")


def test_device_index_out_of_range_is_a_usage_error() -> None:
    with pytest.raises(GpuportError, match="GPU index 3 does not exist: 2 GPU"):
        plat.detect(3, fake_torch(H100_PROPS, count=2))


# ----------------------------------------------------------------------- failing probes


class Exploding:
    """Device properties where everything but the name raises on access."""

    name = "NVIDIA H100 80GB HBM3"

    def __getattr__(self, attr: str) -> Any:
        raise RuntimeError(f"no {attr}")


def test_failing_probes_leave_fields_none() -> None:
    torch = fake_torch(Exploding(), cudnn=_raise, nccl=_raise, blas=_raise)
    torch.cuda.device_count = _raise
    torch.version = SimpleNamespace(hip=None)  # no .cuda attribute at all
    info = plat.detect(0, torch)
    assert info.backend == "cuda"
    assert info.name == "NVIDIA H100 80GB HBM3"
    assert info.arch is None
    assert info.count == 0
    assert info.multiprocessors is None and info.memory_bytes is None
    assert info.l2_bytes is None and info.runtime is None and info.driver is None
    assert info.warp_size == 32
    assert info.libraries == {}
    assert info.spec_key == "h100-sxm"  # the name alone still identifies it
    assert plat.fp8_dtype_name(info) is None  # no arch, no claim


def test_properties_raising_falls_back_to_device_name() -> None:
    torch = fake_torch(H100_PROPS)
    torch.cuda.get_device_properties = _raise
    torch.cuda.get_device_name = lambda i: "NVIDIA H200"
    info = plat.detect(0, torch)
    assert info.name == "NVIDIA H200" and info.arch is None and info.spec_key == "h200"


def test_everything_raising_still_gives_a_gpu() -> None:
    torch = fake_torch(H100_PROPS)
    torch.cuda.get_device_properties = _raise
    torch.cuda.get_device_name = _raise
    info = plat.detect(0, torch)
    assert info.backend == "cuda" and info.name == "unknown GPU" and info.spec_key is None


def test_old_torch_nccl_version_as_int() -> None:
    info = plat.detect(0, fake_torch(H100_PROPS, nccl=lambda: 21805))
    assert info.libraries["nccl"] == "21805"


# ----------------------------------------------------------------------- fp8 flavour


@pytest.mark.parametrize(
    ("backend", "arch", "expected"),
    [
        ("cuda", "sm_80", None),
        ("cuda", "sm_86", None),
        ("cuda", "sm_89", "float8_e4m3fn"),
        ("cuda", "sm_90", "float8_e4m3fn"),
        ("cuda", "sm_100", "float8_e4m3fn"),
        ("cuda", "sm_120", "float8_e4m3fn"),
        ("rocm", "gfx942", "float8_e4m3fnuz"),
        ("rocm", "gfx950", "float8_e4m3fn"),
        ("rocm", "gfx1201", "float8_e4m3fn"),
        ("rocm", "gfx90a", None),
        ("rocm", "gfx1100", None),
        ("rocm", "gfx906", None),  # unknown target: make no claim
        ("cuda", None, None),
    ],
)
def test_fp8_dtype_name(backend: str, arch: str | None, expected: str | None) -> None:
    info = DeviceInfo(backend=backend, name="x", arch=arch)  # type: ignore[arg-type]
    assert plat.fp8_dtype_name(info) == expected


def test_fp8_dtype_name_cpu() -> None:
    assert plat.fp8_dtype_name(DeviceInfo(backend="cpu", name="cpu")) is None


# ----------------------------------------------------------------------- telemetry


def test_telemetry_is_none_without_a_library() -> None:
    info = DeviceInfo(backend="cuda", name="NVIDIA H100 80GB HBM3", arch="sm_90")
    assert plat.telemetry(info) is None
    assert plat.telemetry(info.model_copy(update={"backend": "rocm"})) is None


def test_telemetry_with_every_nvml_call_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = SimpleNamespace(
        nvmlDeviceGetHandleByIndex=lambda i: "handle",
        nvmlDeviceGetHandleByUUID=_raise,
    )
    monkeypatch.setitem(plat._libs, "nvml", nvml)
    reading = plat.telemetry(DeviceInfo(backend="cuda", name="x", arch="sm_90"))
    assert reading is not None
    assert reading.sm_clock_mhz is None and reading.power_w is None
    assert reading.throttle_reasons == []


def test_telemetry_gives_up_on_a_hung_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml()
    nvml.nvmlDeviceGetHandleByIndex = lambda i: time.sleep(5)  # type: ignore[method-assign]
    monkeypatch.setitem(plat._libs, "nvml", nvml)
    monkeypatch.setattr(plat, "TELEMETRY_TIMEOUT_S", 0.2)
    started = time.perf_counter()
    assert plat.telemetry(DeviceInfo(backend="cuda", name="x", arch="sm_90")) is None
    assert time.perf_counter() - started < 2


def test_telemetry_follows_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    nvml = FakeNvml()
    nvml.nvmlDeviceGetHandleByIndex = lambda i: seen.append(i) or "h"  # type: ignore[method-assign,func-returns-value]
    monkeypatch.setitem(plat._libs, "nvml", nvml)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert plat.telemetry(DeviceInfo(backend="cuda", name="x", index=1)) is not None
    assert seen == [6]


def test_decode_nvml_reasons() -> None:
    assert plat.decode_nvml_reasons(0) == []
    assert plat.decode_nvml_reasons(0x1) == ["gpu_idle"]
    assert plat.decode_nvml_reasons(0x4 | 0x20 | 0x1000) == [
        "sw_power_cap",
        "sw_thermal_slowdown",
        "bit_0x1000",
    ]


class FakeAmdSmi:
    AmdSmiClkType = SimpleNamespace(GFX="gfx", MEM="mem")
    AmdSmiTemperatureType = SimpleNamespace(EDGE="edge", HOTSPOT="hotspot")
    AmdSmiTemperatureMetric = SimpleNamespace(CURRENT="current")

    def amdsmi_get_processor_handles(self) -> list[str]:
        return ["gpu0", "gpu1"]

    def amdsmi_get_clock_info(self, handle: str, kind: str) -> dict[str, object]:
        return {"clk": 2100, "min_clk": 500} if kind == "gfx" else {"cur_clk": "1300"}

    def amdsmi_get_power_info(self, handle: str) -> dict[str, object]:
        return {"current_socket_power": "N/A", "average_socket_power": 640, "power_limit": 750}

    def amdsmi_get_gpu_metrics_info(self, handle: str) -> dict[str, object]:
        return {"throttle_status": 0}

    def amdsmi_get_temp_metric(self, handle: str, kind: str, metric: str) -> int:
        if kind == "hotspot":
            raise RuntimeError("not supported")
        return 55


def test_amdsmi_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(plat._libs, "amdsmi", FakeAmdSmi())
    reading = plat.telemetry(DeviceInfo(backend="rocm", name="AMD Instinct MI300X", index=1))
    assert reading is not None
    assert reading.sm_clock_mhz == 2100 and reading.mem_clock_mhz == 1300
    assert reading.power_w == 640 and reading.power_limit_w == 750
    assert reading.temperature_c == 55  # hotspot unreadable here, edge used
    assert reading.throttle_reasons == []


def test_amdsmi_index_beyond_the_handles_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(plat._libs, "amdsmi", FakeAmdSmi())
    assert plat.telemetry(DeviceInfo(backend="rocm", name="x", index=5)) is None


def test_amdsmi_driver_version(monkeypatch: pytest.MonkeyPatch) -> None:
    amdsmi = FakeAmdSmi()
    amdsmi.amdsmi_get_gpu_driver_info = lambda h: {"driver_version": "6.8.5"}  # type: ignore[attr-defined]
    monkeypatch.setitem(plat._libs, "amdsmi", amdsmi)
    info = plat.detect(0, fake_torch(MI300X_PROPS, hip="6.2.41133"))
    assert info.driver == "6.8.5"


# ----------------------------------------------------------------------- fingerprint


def test_fingerprint_carries_the_gpu_fields() -> None:
    info = plat.detect(0, fake_torch(MI300X_PROPS, hip="6.2.41133"))
    fp = plat.fingerprint(info)
    assert fp.gpu_name == "AMD Instinct MI300X"
    assert fp.gpu_arch == "gfx942"
    assert fp.runtime == "HIP 6.2.41133"
    assert fp.torch == "2.5.1+rocm6.2"
    assert fp.libraries == info.libraries
    assert fp.gpuport_version and fp.hostname_hash


def test_fingerprint_on_cpu_has_no_gpu_name() -> None:
    fp = plat.fingerprint(DeviceInfo(backend="cpu", name="AMD EPYC", torch="2.13.0+cpu"))
    assert fp.gpu_name is None and fp.torch == "2.13.0+cpu"
