"""Probes that ask the vendors' tools: rocminfo, amd-smi, rocm-smi, nvidia-smi and friends.

Their output is stored raw (parsing happens in :mod:`gpuport.doctor.facts`, so old
snapshots benefit from better parsers), with two privacy cuts: nvidia-smi's process
table (other people's command lines) and everything in the kernel log that is not about
the GPU drivers.
"""

from __future__ import annotations

import re

from gpuport.doctor.context import ProbeContext, ProbeFn, ProbeResult
from gpuport.doctor.snapshot import ProbeStatus, ToolRun
from gpuport.doctor.tools import tool_probe_result

NVIDIA_QUERY = [
    "nvidia-smi",
    "--query-gpu=index,name,driver_version,memory.total,compute_cap,pci.bus_id",
    "--format=csv,noheader",
]
_DMESG_KEEP = re.compile(
    r"kfd|amdgpu|NVRM|nvidia|nouveau|module verification failed|Key was rejected|"
    r"unsigned module loading is restricted|PCI rejects atomics",
    re.IGNORECASE,
)
_DMESG_DENIED = ("Operation not permitted", "Permission denied")


def make_tool_probe(key: str, argv: list[str]) -> ProbeFn:
    """A probe that runs one command and stores its output under ``tools[key]``."""

    def probe(ctx: ProbeContext) -> ProbeResult:
        result, _ = tool_probe_result(ctx, key, argv)
        return result

    probe.__name__ = f"probe_{key.replace('-', '_')}"
    return probe


def probe_nvidia_smi(ctx: ProbeContext) -> ProbeResult:
    result, run = tool_probe_result(ctx, "nvidia-smi", ["nvidia-smi"])
    if run is not None:
        cut = ToolRun(
            argv=run.argv,
            returncode=run.returncode,
            stdout=strip_processes(run.stdout),
            stderr=run.stderr,
        )
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
    result, run = tool_probe_result(ctx, "dmesg", ["dmesg"], denied=_DMESG_DENIED, keep=False)
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
