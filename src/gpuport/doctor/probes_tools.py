"""Probes that ask the vendors' tools: rocminfo, amd-smi, rocm-smi, nvidia-smi and friends.

Their output is stored raw (parsing happens in :mod:`gpuport.doctor.facts`, so old
snapshots benefit from better parsers), with two privacy cuts: nvidia-smi's process
table (other people's command lines) and everything in the kernel log that is not about
the GPU drivers.

The GPU tools run without the visibility variables and without
``HSA_OVERRIDE_GFX_VERSION``: doctor wants every GPU and its real architecture, and judges
those variables itself (GP627, GP628). ``ToolRun.unset`` records what was removed.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.doctor.context import ProbeContext, ProbeFn, ProbeResult
from gpuport.doctor.snapshot import ProbeStatus
from gpuport.doctor.tools import MAX_OUTPUT, tool_probe_result

NVIDIA_QUERY = [
    "nvidia-smi",
    "--query-gpu=index,name,driver_version,memory.total,compute_cap,pci.bus_id",
    "--format=csv,noheader",
]
_DMESG_KEEP = textre.compile(
    r"kfd|amdgpu|NVRM|nvidia|nouveau|module verification failed|Key was rejected|"
    r"unsigned module loading is restricted|PCI rejects atomics",
    re.IGNORECASE,
)
_DMESG_DENIED = ("Operation not permitted", "Permission denied")
# What the GPU tools must not see: filters that hide GPUs, and the ISA override.
GPU_TOOL_UNSET = (
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION",
)
GPU_TOOLS = frozenset({"rocminfo", "amd-smi", "rocm-smi", "nvidia-smi", "nvidia-smi-query"})
# Output kept per stream where the default (tools.MAX_OUTPUT) is too small: rocminfo prints
# ~8 kB per GPU agent, and an 8x MI300X node in CPX mode has 64 agents.
OUTPUT_LIMITS = {"rocminfo": 2_000_000}
_DMESG_LIMIT = 32 << 20  # the kernel log buffer's maximum; only GPU lines are kept


def make_tool_probe(key: str, argv: list[str]) -> ProbeFn:
    """A probe that runs one command and stores its output under ``tools[key]``."""
    unset = GPU_TOOL_UNSET if key in GPU_TOOLS else ()

    def probe(ctx: ProbeContext) -> ProbeResult:
        result, _ = tool_probe_result(
            ctx, key, argv, unset=unset, max_output=OUTPUT_LIMITS.get(key, MAX_OUTPUT)
        )
        return result

    probe.__name__ = f"probe_{key.replace('-', '_')}"
    return probe


def probe_nvidia_smi(ctx: ProbeContext) -> ProbeResult:
    result, run = tool_probe_result(ctx, "nvidia-smi", ["nvidia-smi"], unset=GPU_TOOL_UNSET)
    if run is not None:
        cut = run.model_copy(update={"stdout": strip_processes(run.stdout)})
        result.data["tools"] = {"nvidia-smi": cut}
    return result


def strip_processes(text: str) -> str:
    """nvidia-smi's table up to the "Processes:" box, which names other users' programs."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "Processes:" in line:
            return "\n".join(lines[: max(i - 1, 0)]) + "\n[processes omitted]\n"
    return text


def probe_dmesg(ctx: ProbeContext) -> ProbeResult:
    result, run = tool_probe_result(
        ctx, "dmesg", ["dmesg"], denied=_DMESG_DENIED, keep=False, max_output=_DMESG_LIMIT
    )
    if run is not None and result.status is ProbeStatus.OK:
        lines = [ln.strip() for ln in run.stdout.splitlines() if _DMESG_KEEP.search(ln)]
        result.data["dmesg"] = lines[-200:]
    return result


TOOL_COMMANDS: dict[str, list[str]] = {
    "rocminfo": ["rocminfo"],
    "amd-smi": ["amd-smi", "version"],
    "rocm-smi": ["rocm-smi", "--showdriverversion"],
    "nvidia-smi-query": NVIDIA_QUERY,
    "hipconfig": ["hipconfig", "--version"],
    "nvcc": ["nvcc", "--version"],
    "mokutil": ["mokutil", "--sb-state"],
    "dkms": ["dkms", "status"],
}
