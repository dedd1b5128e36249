"""Constructed snapshots of machines we do not have: MI300X and MI210 nodes, Radeon desktops
(with and without an APU), H100 and RTX 5090 boxes, and a CPU-only VM.

Each builder returns a plain dict in the snapshot's JSON shape, so a test breaks a machine
with :func:`change` (a deep merge) and builds the snapshot with :func:`snap`. Tool output
(rocminfo, nvidia-smi, amd-smi) is written the way those tools print it.
"""

from __future__ import annotations

import copy
from typing import Any

from gpuport.doctor.snapshot import Snapshot

Machine = dict[str, Any]

ROCM_ARCHS_62 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
ROCM_ARCHS_72 = [*ROCM_ARCHS_62, "gfx950", "gfx1101", "gfx1200", "gfx1201"]
CUDA_ARCHS_124 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def change(base: Machine, **updates: Any) -> Machine:
    """A deep copy of ``base`` with nested dicts merged and everything else replaced."""
    out = copy.deepcopy(base)
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "env":
            out[key] = change(out[key], **value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def snap(machine: Machine) -> Snapshot:
    return Snapshot.model_validate(machine).with_id()


def tool(stdout: str, returncode: int = 0, stderr: str = "", argv: str = "tool") -> dict[str, Any]:
    return {"argv": argv.split(), "returncode": returncode, "stdout": stdout, "stderr": stderr}


def rocminfo(agents: list[dict[str, str]], cpu: str = "AMD EPYC 9654 96-Core Processor") -> str:
    """rocminfo's layout: a header, then one block per agent (CPU first)."""
    out = [
        "ROCk module is loaded",
        "=====================",
        "HSA System Attributes",
        "=====================",
        "Runtime Version:         1.14",
        "==========",
        "HSA Agents",
        "==========",
        "*******",
        "Agent 1",
        "*******",
        f"  Name:                    {cpu}",
        "  Uuid:                    CPU-XX",
        f"  Marketing Name:          {cpu}",
        "  Vendor Name:             CPU",
        "  Device Type:             CPU",
        "  Compute Unit:            192",
    ]
    for i, agent in enumerate(agents, start=2):
        chip = int(agent["chip"], 16)
        out += [
            "*******",
            f"Agent {i}",
            "*******",
            f"  Name:                    {agent['gfx']}",
            f"  Uuid:                    {agent.get('uuid', f'GPU-{i:016x}')}",
            f"  Marketing Name:          {agent['name']}",
            "  Vendor Name:             AMD",
            "  Device Type:             GPU",
            f"  Chip ID:                 {chip}(0x{agent['chip']})",
            f"  Compute Unit:            {agent.get('cus', 96)}",
            "  ISA Info:",
            "    ISA 1",
            f"      Name:                    amdgcn-amd-amdhsa--{agent['gfx']}:sramecc+:xnack-",
        ]
    return "\n".join(out) + "\n"


def _pci(address: str, vendor: str, device: str, driver: str | None, klass: str) -> dict[str, Any]:
    return {
        "address": address,
        "vendor": vendor,
        "device": device,
        "class_code": klass,
        "driver": driver,
    }


def _node(path: str, group: str = "render", ok: bool = True) -> dict[str, Any]:
    return {"path": path, "mode": "crw-rw----", "group": group, "accessible": ok}


def _probes(names: list[str]) -> list[dict[str, Any]]:
    layers = {
        "system": "hardware",
        "pci": "hardware",
        "modules": "driver",
        "nodes": "device nodes",
        "user": "device nodes",
        "rocminfo": "runtime",
        "nvidia-smi": "runtime",
        "smoke": "runtime",
        "python": "python stack",
        "torch": "python stack",
        "env": "environment",
    }
    return [{"name": n, "layer": layers[n], "status": "ok", "duration_s": 0.05} for n in names]


_PROBE_NAMES = ["system", "pci", "modules", "nodes", "user", "rocminfo", "nvidia-smi"]
_ALL_PROBES = _probes([*_PROBE_NAMES, "smoke", "python", "torch", "env"])


def _user(*groups: str) -> dict[str, Any]:
    return {
        "uid": 1000,
        "is_root": False,
        "process_groups": list(groups),
        "configured_groups": list(groups),
    }


def mi300x(count: int = 8) -> Machine:
    """A healthy MI300X node: ROCm 7.2, amdgpu 30.30.3, torch 2.9.1+rocm7.2."""
    agents = [
        {"gfx": "gfx942", "name": "AMD Instinct MI300X", "chip": "74a1", "cus": 304}
        for _ in range(count)
    ]
    return {
        "probes": _ALL_PROBES,
        "system": {
            "os_name": "Ubuntu 24.04.2 LTS",
            "kernel": "6.8.0-60-generic",
            "machine": "x86_64",
            "cpu": "AMD EPYC 9654 96-Core Processor",
            "secure_boot": False,
            "numa_balancing": 0,
            "numa_nodes": 2,
        },
        "pci": [
            _pci(f"0000:{0x11 + 0x20 * i:02x}:00.0", "1002", "74a1", "amdgpu", "0x120000")
            for i in range(count)
        ],
        "modules": {"loaded": ["amdgpu"], "amdgpu_version": "30.30.3"},
        "nodes": [_node("/dev/kfd")] + [_node(f"/dev/dri/renderD{128 + i}") for i in range(count)],
        "user": _user("mlops", "render", "video"),
        "tools": {
            "rocminfo": tool(rocminfo(agents), argv="rocminfo"),
            "amd-smi": tool(
                "AMDSMI Tool: 26.2.1+12ab | AMDSMI Library version: 26.2.1 | ROCm version: 7.2.0 "
                "| amdgpu version: 30.30.3 | amd_hsmp version: N/A\n",
                argv="amd-smi version",
            ),
        },
        "installs": {"rocm_version": "7.2.0-43", "rocm_path": "/opt/rocm -> rocm-7.2.0"},
        "env": {},
        "python": {
            "distributions": {
                "torch": "2.9.1+rocm7.2",
                "torchvision": "0.24.1+rocm7.2",
                "pytorch-triton-rocm": "3.5.1",
            },
            "torch_bundles": ["rocm"],
        },
        "torch": {"version": "2.9.1+rocm7.2", "hip": "7.2.26015", "arch_list": ROCM_ARCHS_72},
        "smoke": {
            "stage": "compute",
            "available": True,
            "device_count": count,
            "devices": [
                {"index": i, "name": "AMD Instinct MI300X", "arch": "gfx942:sramecc+:xnack-"}
                for i in range(count)
            ],
            "ok": True,
            "returncode": 0,
        },
    }


def radeon(gfx: str = "gfx1100", chip: str = "744c", name: str = "Radeon RX 7900 XTX") -> Machine:
    """A healthy Radeon desktop: one dGPU, ROCm 6.2, torch 2.5.1+rocm6.2."""
    agents = [{"gfx": gfx, "name": f"AMD {name}", "chip": chip}]
    return {
        "probes": _ALL_PROBES,
        "system": {
            "os_name": "Ubuntu 22.04.5 LTS",
            "kernel": "6.8.0-45-generic",
            "cpu": "AMD Ryzen 9 7950X 16-Core Processor",
            "secure_boot": False,
            "numa_balancing": 0,
        },
        "pci": [_pci("0000:03:00.0", "1002", chip, "amdgpu", "0x030000")],
        "modules": {"loaded": ["amdgpu"], "amdgpu_version": "6.8.5"},
        "nodes": [
            _node("/dev/kfd"),
            _node("/dev/dri/renderD128"),
            _node("/dev/dri/card0", "video"),
        ],
        "user": _user("alice", "render", "video"),
        "tools": {"rocminfo": tool(rocminfo(agents, "AMD Ryzen 9 7950X"), argv="rocminfo")},
        "installs": {"rocm_version": "6.2.0-66", "rocm_path": "/opt/rocm"},
        "env": {},
        "miopen_dirs": [
            {"path": "~/.config/miopen", "exists": True, "writable": True},
            {"path": "~/.cache/miopen", "exists": True, "writable": True},
        ],
        "python": {
            "distributions": {"torch": "2.5.1+rocm6.2", "pytorch-triton-rocm": "3.1.0"},
            "torch_bundles": ["rocm"],
        },
        "torch": {"version": "2.5.1+rocm6.2", "hip": "6.2.41133", "arch_list": ROCM_ARCHS_62},
        "smoke": {
            "stage": "compute",
            "available": True,
            "device_count": 1,
            "devices": [{"index": 0, "name": f"AMD {name}", "arch": gfx}],
            "ok": True,
            "returncode": 0,
        },
    }


def radeon_with_igpu() -> Machine:
    """A Ryzen 7000 desktop: the Raphael iGPU (gfx1036) enumerates first, then the 7900 XTX."""
    base = radeon()
    agents = [
        {"gfx": "gfx1036", "name": "AMD Radeon Graphics", "chip": "164e", "cus": 2,
         "uuid": "GPU-XX"},
        {"gfx": "gfx1100", "name": "AMD Radeon RX 7900 XTX", "chip": "744c",
         "uuid": "GPU-5b7c10e4c2a0d1f3"},
    ]  # fmt: skip
    return change(
        base,
        pci=[
            _pci("0000:03:00.0", "1002", "744c", "amdgpu", "0x030000"),
            _pci("0000:7c:00.0", "1002", "164e", "amdgpu", "0x030000"),
        ],
        tools={"rocminfo": tool(rocminfo(agents, "AMD Ryzen 9 7950X"), argv="rocminfo")},
        smoke={
            "stage": "compute",
            "available": True,
            "device_count": 2,
            "devices": [
                {"index": 0, "name": "AMD Radeon Graphics", "arch": "gfx1036"},
                {"index": 1, "name": "AMD Radeon RX 7900 XTX", "arch": "gfx1100"},
            ],
            "ok": False,
            "error": "RuntimeError: HIP error: invalid device function",
            "returncode": 0,
        },
    )


def h100(count: int = 1) -> Machine:
    """A healthy H100 box: driver 550.54.15 (CUDA 12.4), torch 2.5.1+cu124."""
    header = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |\n"
        "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |        0 |\n"
        "[processes omitted]\n"
    )
    query = "".join(
        f"{i}, NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 9.0, 00000000:{0x18 + i:02X}:00.0\n"
        for i in range(count)
    )
    return {
        "probes": _ALL_PROBES,
        "system": {
            "os_name": "Ubuntu 22.04.4 LTS",
            "kernel": "5.15.0-105-generic",
            "cpu": "Intel(R) Xeon(R) Platinum 8480+",
            "secure_boot": False,
            "numa_balancing": 1,
        },
        "pci": [
            _pci(f"0000:{0x18 + i:02x}:00.0", "10de", "2330", "nvidia", "0x030200")
            for i in range(count)
        ],
        "modules": {
            "loaded": ["nvidia", "nvidia_uvm"],
            "nvidia_version": "550.54.15",
            "nvidia_proc_version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15",
        },
        "nodes": [
            _node("/dev/nvidiactl", "root"),
            _node("/dev/nvidia-uvm", "root"),
            *(_node(f"/dev/nvidia{i}", "root") for i in range(count)),
        ],
        "user": _user("bob"),
        "tools": {
            "nvidia-smi": tool(header, argv="nvidia-smi"),
            "nvidia-smi-query": tool(query, argv="nvidia-smi --query-gpu"),
        },
        "env": {},
        "python": {
            "distributions": {
                "torch": "2.5.1+cu124",
                "nvidia-cublas-cu12": "12.4.5.8",
                "nvidia-cudnn-cu12": "9.1.0.70",
            },
        },
        "torch": {"version": "2.5.1+cu124", "cuda": "12.4", "arch_list": CUDA_ARCHS_124},
        "smoke": {
            "stage": "compute",
            "available": True,
            "device_count": count,
            "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "arch": "sm_90"}],
            "ok": True,
            "returncode": 0,
        },
    }


def cpu_only() -> Machine:
    """A VM without a GPU and with the CPU build of torch (like gpuport's dev machines)."""
    return {
        "probes": _ALL_PROBES,
        "system": {"os_name": "Debian GNU/Linux 12 (bookworm)", "cpu": "AMD EPYC"},
        "tools": {
            "rocminfo": tool(
                "\x1b[31mROCk module is NOT loaded, possibly no GPU devices\x1b[0m\n",
                returncode=1,
                argv="rocminfo",
            )
        },
        "user": {"uid": 0, "is_root": True, "process_groups": ["root"]},
        "python": {"distributions": {"torch": "2.13.0+cpu"}},
        "torch": {"version": "2.13.0+cpu", "arch_list": []},
    }
