"""Every GP6xx diagnosis: a snapshot of a broken machine that triggers it, and a close
healthy one that does not (AMD MI300X/MI210/Radeon and NVIDIA H100/RTX 5090 machines)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpuport.doctor import CheckStatus, run_checks
from gpuport.doctor.model import Diagnosis
from gpuport.scan.rules import RULES
from gpuport.scan.rules.base import Family
from tests.doctor.machines import (
    CUDA_ARCHS_124,
    ROCM_ARCHS_62,
    Machine,
    change,
    cpu_only,
    h100,
    mi300x,
    radeon,
    radeon_with_igpu,
    rocminfo,
    snap,
    tool,
)

NOT_LOADED = tool("ROCk module is NOT loaded, possibly no GPU devices\n", 1, argv="rocminfo")


def _no_amdgpu() -> Machine:
    return change(
        radeon(),
        pci=[{"address": "0000:03:00.0", "vendor": "1002", "device": "744c",
              "class_code": "0x030000", "driver": None}],
        modules={"loaded": [], "amdgpu_version": None},
        nodes=[],
        tools={"rocminfo": NOT_LOADED},
        smoke={"available": False, "device_count": 0, "devices": [], "ok": None},
    )  # fmt: skip


def _nouveau() -> Machine:
    machine = h100()
    machine["pci"][0]["driver"] = "nouveau"
    return change(machine, modules={"loaded": ["nouveau"]}, nodes=[], tools={})


def _nvidia_smi_broken(message: str) -> Machine:
    return change(h100(), tools={"nvidia-smi": tool(message, 9, argv="nvidia-smi")})


def _kfd_missing(container: str | None) -> Machine:
    return change(
        radeon(),
        system={"container": container},
        nodes=[],
        tools={"rocminfo": tool("", 1, "Unable to open /dev/kfd read-write: No such file or "
                                "directory\n", argv="rocminfo")},
    )  # fmt: skip


def _nv_nodes_missing(container: str | None) -> Machine:
    """No /dev/nvidia*: nvidia-smi cannot reach the GPUs and torch sees none."""
    failed = tool("Failed to initialize NVML: Unknown Error\n", 255, argv="nvidia-smi")
    return change(
        h100(),
        system={"container": container},
        nodes=[],
        tools={"nvidia-smi": failed, "nvidia-smi-query": failed},
        smoke={"available": False, "device_count": 0, "devices": [], "ok": None},
    )


def _no_permission(pending: bool) -> Machine:
    denied = [
        {"path": "/dev/kfd", "mode": "crw-rw----", "group": "render", "accessible": False},
        {"path": "/dev/dri/renderD128", "mode": "crw-rw----", "group": "render",
         "accessible": False},
    ]  # fmt: skip
    configured = ["alice", "render", "video"] if pending else ["alice"]
    return change(
        radeon(),
        nodes=denied,
        user={"process_groups": ["alice"], "configured_groups": configured},
        tools={"rocminfo": tool("ROCk module is loaded\nUnable to open /dev/kfd read-write: "
                                "Permission denied\n", 1, argv="rocminfo")},
    )  # fmt: skip


def _wsl(ok: bool) -> Machine:
    smoke = (
        {"available": True, "device_count": 1, "ok": True}
        if ok
        else {"available": False, "device_count": 0, "ok": None, "devices": []}
    )
    return change(
        radeon(),
        system={"wsl": True},
        pci=[],
        modules={"loaded": []},
        nodes=[{"path": "/dev/dxg", "mode": "crw-rw-rw-", "group": "root", "accessible": True}],
        tools={"rocminfo": tool("WSL environment detected.\n" + rocminfo(
            [{"gfx": "gfx1100", "name": "AMD Radeon RX 7900 XTX", "chip": "744c"}]))},
        smoke=smoke,
    )  # fmt: skip


def _hsa_init() -> Machine:
    return change(
        radeon(),
        tools={"rocminfo": tool("ROCk module is loaded\nhsa api call failure at: rocminfo.cc:1306"
                                "\nCall returned HSA_STATUS_ERROR_OUT_OF_RESOURCES\n", 1)},
        dmesg=["kfd kfd: amdgpu: skipped device 1002:744c, not supported"],
    )  # fmt: skip


def _rx9070_on_rocm62() -> Machine:
    base = radeon("gfx1201", "7550", "Radeon RX 9070 XT")
    return change(
        base,
        smoke={"ok": False, "error": "RuntimeError: HIP error: invalid device function"},
    )


def _rtx5090_cu124() -> Machine:
    machine = h100()
    machine["tools"]["nvidia-smi-query"] = tool(
        "0, NVIDIA GeForce RTX 5090, 570.124.06, 32607 MiB, 12.0, 00000000:01:00.0\n"
    )
    return change(
        machine,
        smoke={"ok": False, "error": "RuntimeError: CUDA error: no kernel image is available "
               "for execution on the device",
               "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "arch": "sm_120"}]},
    )  # fmt: skip


def _old_driver(cuda: str) -> Machine:
    driver = {"11.8": "520.61.05", "12.2": "535.183.01"}[cuda]
    header = f"| NVIDIA-SMI {driver}   Driver Version: {driver}   CUDA Version: {cuda} |\n"
    query = f"0, NVIDIA H100 80GB HBM3, {driver}, 81559 MiB, 9.0, 00000000:18:00.0\n"
    return change(h100(), tools={"nvidia-smi": tool(header), "nvidia-smi-query": tool(query)})


def _torch(machine: Machine, version: str, **torch: object) -> Machine:
    dists = dict(machine["python"]["distributions"], torch=version)
    return change(machine, torch={"version": version, **torch}, python={"distributions": dists})


def _cuda_torch_on_amd() -> Machine:
    machine = _torch(radeon(), "2.12.0+cu130", cuda="13.0", hip=None, arch_list=["sm_75"])
    machine["python"]["distributions"]["nvidia-cublas-cu13"] = "13.0.0.19"
    machine["python"]["torch_bundles"] = []
    return change(
        machine,
        smoke={"ok": False, "available": False, "devices": [],
               "error": "RuntimeError: Found no NVIDIA driver on your system."},
    )  # fmt: skip


def _extension(machine: Machine, name: str, backends: list[str]) -> Machine:
    machine = change(machine)
    machine["python"]["distributions"][name] = "0.0.28"
    machine["python"]["extension_backends"] = {name: backends}
    machine["python"]["extension_evidence"] = {name: [f"_C.so needs lib{backends[0]}.so"]}
    return machine


def _dist(machine: Machine, **dists: str) -> Machine:
    machine = change(machine)
    machine["python"]["distributions"].update(dists)
    return machine


def _override(machine: Machine, value: str) -> Machine:
    return change(machine, env={"HSA_OVERRIDE_GFX_VERSION": value})


def _mi210_overridden() -> Machine:
    agents = [{"gfx": "gfx1030", "name": "AMD Instinct MI210", "chip": "740f"}]
    machine = change(
        mi300x(1),
        tools={"rocminfo": tool(rocminfo(agents))},
        smoke={"ok": False, "returncode": -6, "error": None,
               "stderr_tail": "Memory access fault by GPU node-2 (Agent handle: 0x55d1) on "
               "address (nil). Reason: Unknown.\n"},
    )  # fmt: skip
    return _override(machine, "10.3.0")


def _rx6700_override() -> Machine:
    machine = radeon("gfx1030", "73df", "Radeon RX 6700 XT")  # rocminfo shows the override
    return _override(machine, "10.3.0")


def _miopen(writable: bool) -> Machine:
    return change(
        radeon(),
        miopen_dirs=[{"path": "~/.config/miopen", "exists": True, "writable": writable}],
    )


def _timed_out(status: str) -> Machine:
    machine = mi300x()
    machine["probes"] = [
        *machine["probes"],
        {"name": "amd-smi", "layer": "runtime", "status": status,
         "message": "no answer after 3 s; killed" if status == "timeout" else "amd-smi not found",
         "duration_s": 3.0},
    ]  # fmt: skip
    return machine


CASES: list[tuple[str, str, Callable[[], Machine], Callable[[], Machine]]] = [
    ("GP601", "cpu-only VM", cpu_only, mi300x),
    ("GP602", "PCIe atomics", lambda: change(radeon(), dmesg=[
        "kfd kfd: amdgpu: skipped device 1002:744c, PCI rejects atomics 730<0"]), radeon),
    ("GP603", "amdgpu not loaded", _no_amdgpu, radeon),
    ("GP603", "nouveau holds H100", _nouveau, h100),
    ("GP604", "secure boot", lambda: change(_no_amdgpu(), system={"secure_boot": True}),
     _no_amdgpu),
    ("GP605", "nvidia-smi no driver", lambda: _nvidia_smi_broken(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.\n"), h100),
    ("GP605", "nvml mismatch", lambda: _nvidia_smi_broken(
        "Failed to initialize NVML: Driver/library version mismatch\n"), h100),
    ("GP606", "driver skew", lambda: change(mi300x(), installs={"rocm_version": "6.2.4-120",
     "rocm_path": "/opt/rocm -> rocm-6.2.4"}), mi300x),
    ("GP607", "kfd missing", lambda: _kfd_missing(None), radeon),
    ("GP607", "nvidia nodes missing", lambda: _nv_nodes_missing(None), h100),
    ("GP608", "not in render", lambda: _no_permission(False), radeon),
    ("GP608", "needs re-login", lambda: _no_permission(True), radeon),
    ("GP609", "container without kfd", lambda: _kfd_missing("docker"),
     lambda: change(radeon(), system={"container": "docker"})),
    ("GP609", "container without nvidia", lambda: _nv_nodes_missing("docker"),
     lambda: change(h100(), system={"container": "docker"})),
    ("GP610", "WSL no device", lambda: _wsl(False), lambda: _wsl(True)),
    ("GP611", "HSA out of resources", _hsa_init, radeon),
    ("GP612", "RX 9070 on rocm6.2 wheel", _rx9070_on_rocm62, radeon),
    ("GP613", "RTX 5090 on cu124", _rtx5090_cu124, h100),
    ("GP614", "driver CUDA 11.8", lambda: _old_driver("11.8"), h100),
    ("GP614", "driver CUDA 12.2 (minor)", lambda: _old_driver("12.2"), h100),
    ("GP615", "APU iGPU first", radeon_with_igpu,
     lambda: change(radeon_with_igpu(), env={"ROCR_VISIBLE_DEVICES": "GPU-5b7c10e4c2a0d1f3"},
                    smoke={"ok": True, "error": None})),
    ("GP616", "out of memory", lambda: change(mi300x(), smoke={"ok": False,
     "error": "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB"}), mi300x),
    ("GP617", "numa balancing", lambda: change(mi300x(), system={"numa_balancing": 1}), mi300x),
    ("GP618", "torch import fails", lambda: change(radeon(), torch={"version": None,
     "import_error": "OSError: libamdhip64.so.6: cannot open shared object file"}), radeon),
    ("GP619", "CUDA torch on Radeon", _cuda_torch_on_amd, radeon),
    ("GP620", "ROCm torch on H100", lambda: _torch(h100(), "2.5.1+rocm6.2", cuda=None,
     hip="6.2.41133", arch_list=ROCM_ARCHS_62), h100),
    ("GP621", "CPU torch on MI300X", lambda: _torch(mi300x(), "2.9.1+cpu", hip=None,
     arch_list=[]), mi300x),
    ("GP621", "CPU torch on H100", lambda: _torch(h100(), "2.5.1+cpu", cuda=None, arch_list=[]),
     h100),
    ("GP622", "nvidia wheels", lambda: _dist(radeon(), **{"nvidia-cublas-cu12": "12.4.5.8"}),
     radeon),
    ("GP623", "CUDA xformers on ROCm", lambda: _extension(radeon(), "xformers", ["cuda"]),
     lambda: _extension(radeon(), "xformers", ["rocm"])),
    ("GP623", "ROCm flash-attn on CUDA", lambda: _extension(h100(), "flash-attn", ["rocm"]),
     lambda: _extension(h100(), "flash-attn", ["cuda"])),
    ("GP624", "pynvml + torch 2.4", lambda: _dist(_torch(radeon(), "2.4.1+rocm6.1",
     hip="6.1.40091", arch_list=ROCM_ARCHS_62), pynvml="11.5.0"),
     lambda: _dist(radeon(), pynvml="11.5.0")),
    ("GP625", "onnxruntime-gpu on AMD", lambda: _dist(radeon(), **{"onnxruntime-gpu": "1.23.2"}),
     lambda: _dist(radeon(), **{"onnxruntime-migraphx": "1.23.2"})),
    ("GP626", "system ROCm 6.4 libs", lambda: change(radeon(), env={
        "LD_LIBRARY_PATH": "/opt/rocm-6.4.0/lib:/usr/lib"}),
     lambda: change(radeon(), env={"LD_LIBRARY_PATH": "/opt/rocm-6.2.0/lib"})),
    ("GP626", "system CUDA 12.1 libs", lambda: change(h100(), env={
        "LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64"}),
     lambda: change(h100(), env={"LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64"})),
    ("GP627", "10.3.0 on MI210", _mi210_overridden, _rx6700_override),
    ("GP627", "redundant override", lambda: _override(radeon(), "11.0.0"), radeon),
    ("GP628", "ROCR and HIP both set", lambda: change(mi300x(), env={
        "ROCR_VISIBLE_DEVICES": "2,3", "HIP_VISIBLE_DEVICES": "0,1"}),
     lambda: change(mi300x(), env={"ROCR_VISIBLE_DEVICES": "2,3"})),
    ("GP628", "index beyond H100 count", lambda: change(h100(), env={
        "CUDA_VISIBLE_DEVICES": "4"}), lambda: change(h100(), env={"CUDA_VISIBLE_DEVICES": "0"})),
    ("GP629", "MIOpen db read-only", lambda: _miopen(False), lambda: _miopen(True)),
    ("GP630", "amd-smi hung", lambda: _timed_out("timeout"), lambda: _timed_out("missing")),
]  # fmt: skip


def _fired(machine: Machine, rule_id: str) -> list[Diagnosis]:
    return [d for d in run_checks(snap(machine)) if d.rule_id == rule_id]


@pytest.mark.parametrize(
    ("rule_id", "broken", "healthy"),
    [(r, b, h) for r, _, b, h in CASES],
    ids=[f"{r}-{name}" for r, name, _, _ in CASES],
)
def test_rule_triggers_on_the_broken_machine_only(
    rule_id: str, broken: Callable[[], Machine], healthy: Callable[[], Machine]
) -> None:
    fired = _fired(broken(), rule_id)
    assert fired, f"{rule_id} did not fire"
    d = fired[0]
    assert d.evidence and d.cause and d.fix and d.references
    assert d.title == RULES[rule_id].title
    assert _fired(healthy(), rule_id) == []


def test_every_environment_rule_has_a_case_and_a_check() -> None:
    from gpuport.doctor.checks_base import CHECKS

    env_rules = {r.id for r in RULES.values() if r.family is Family.ENVIRONMENT}
    assert {rule for rule, *_ in CASES} == env_rules
    assert set(CHECKS) | {"GP616", "GP630"} == env_rules  # those two run after the others


@pytest.mark.parametrize("machine", [mi300x, radeon, h100, cpu_only], ids=lambda f: f.__name__)
def test_healthy_machines_have_no_failures(machine: Callable[[], Machine]) -> None:
    # The H100 box has NUMA balancing on: only MI300-class hosts are warned about it.
    bad = [d.rule_id for d in run_checks(snap(machine())) if d.status is not CheckStatus.INFO]
    assert bad == []


def test_fix_commands_are_specific() -> None:
    perm = _fired(_no_permission(False), "GP608")[0]
    assert perm.fix_command == "sudo usermod -aG render,video $USER"
    relogin = _fired(_no_permission(True), "GP608")[0]
    assert relogin.fix_command == "newgrp render"
    igpu = _fired(radeon_with_igpu(), "GP615")[0]
    assert igpu.fix_command == "export ROCR_VISIBLE_DEVICES=GPU-5b7c10e4c2a0d1f3"
    assert any("cuda:0 is the integrated GPU" in e for e in igpu.evidence)
    wrong = _fired(_cuda_torch_on_amd(), "GP619")[0]
    assert wrong.fix_command is not None
    assert "download.pytorch.org/whl/rocm6.2" in wrong.fix_command
    assert "nvidia-cublas-cu13" in wrong.fix_command
    # issue 29: torchvision and torchaudio come from the same index, installed or not
    assert "pip uninstall -y torch torchvision torchaudio nvidia-cublas-cu13" in wrong.fix_command
    assert "pip install torch torchvision torchaudio --index-url" in wrong.fix_command


def test_severity_follows_the_case() -> None:
    major = _fired(_old_driver("11.8"), "GP614")[0]
    minor = _fired(_old_driver("12.2"), "GP614")[0]
    assert (major.status, minor.status) == (CheckStatus.FAIL, CheckStatus.WARN)
    cross = _fired(_mi210_overridden(), "GP627")[0]
    assert cross.status is CheckStatus.FAIL
    assert any("gfx90a" in e and "gfx1030" in e for e in cross.evidence)
    assert any("Memory access fault" in e for e in cross.evidence)
    redundant = _fired(_override(radeon(), "11.0.0"), "GP627")[0]
    assert redundant.status is CheckStatus.WARN


def test_one_fault_is_reported_once() -> None:
    """The iGPU's 'invalid device function' is GP615's, not also GP612's or GP616's."""
    ids = {d.rule_id for d in run_checks(snap(radeon_with_igpu()))}
    assert ids == {"GP615"}
    # A permission problem also shows as OUT_OF_RESOURCES on some ROCm versions: one cause.
    perm = change(_no_permission(False), tools={"rocminfo": tool(
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES\n", 1)})  # fmt: skip
    ids = {d.rule_id for d in run_checks(snap(perm))}
    assert "GP608" in ids and "GP611" not in ids


def test_override_that_is_needed_is_left_alone() -> None:
    ids = {d.rule_id for d in run_checks(snap(_rx6700_override()))}
    assert "GP627" not in ids and "GP612" not in ids


def test_cuda_arch_rules() -> None:
    from gpuport.doctor.checks_runtime import cuda_arch_covered

    assert cuda_arch_covered((8, 9), CUDA_ARCHS_124)  # sm_86 cubins run on sm_89
    assert not cuda_arch_covered((12, 0), CUDA_ARCHS_124)
    assert cuda_arch_covered((12, 0), [*CUDA_ARCHS_124, "compute_90"])  # PTX JIT
    assert not cuda_arch_covered((6, 1), ["sm_75", "sm_80"])


def test_the_summary_names_the_toolkits_and_their_versions() -> None:
    """Issue 29: doctor did not say which nvcc and HIP it found."""
    from gpuport.doctor.diagnose import diagnose
    from tests.doctor.machines import change, snap, tool

    machine = change(
        radeon(),
        tools={
            "hipconfig": tool("6.2.41133-dd7f95766\n", argv="hipconfig --version"),
            "nvcc": tool("Cuda compilation tools, release 12.4, V12.4.131\n", argv="nvcc"),
        },
    )
    report = diagnose(snap(machine))
    assert "Toolkits: HIP 6.2.41133 (hipconfig); CUDA 12.4 (nvcc, V12.4.131)." in report.summary
    bare = diagnose(snap(change(radeon(), tools={})))
    assert any(line.startswith("Toolkits: ") for line in bare.summary)


def test_a_torch_import_that_runs_out_of_time_is_not_called_broken() -> None:
    """Issue 29's trial: on a loaded machine `import torch` took over its 20 s and doctor said
    FAIL GP618 "PyTorch cannot be imported". Not finished is not failed: GP630 says the probe
    did not answer in time and what to do; a real import error is still GP618."""
    machine = change(radeon())  # a deep copy: the machines share their probe records
    for record in machine["probes"]:
        if record["name"] == "torch":
            record.update(status="timeout", message="timed out after 20 s", duration_s=20.0)
    machine = change(machine, torch={"version": None, "import_error": "timed out after 20 s"})
    found = {d.rule_id: d for d in run_checks(snap(machine))}
    assert "GP618" not in found
    assert "`import torch` did not finish in time" in found["GP630"].cause
    assert "--timeout" in found["GP630"].cause
    broken = change(radeon(), torch={"version": None, "import_error": "OSError: libamdhip64.so"})
    assert "GP618" in {d.rule_id for d in run_checks(snap(broken))}
