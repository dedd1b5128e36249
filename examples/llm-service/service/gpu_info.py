"""What the /health endpoint reports about the GPUs."""

import os
import subprocess

import pynvml
import torch


def gpu_memory_report() -> list[dict]:
    """Used and total memory of every visible GPU, in MiB."""
    if torch.version.hip:
        # ROCm: torch knows the numbers itself; rocm-smi is not needed.
        out = []
        for i in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(i)
            out.append({"index": i, "used_mib": (total - free) // 2**20, "total_mib": total // 2**20})
        return out
    else:
        raw = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=index,memory.used,memory.total", "--format=csv,noheader,nounits"],
            text=True,
        )
        return [
            {"index": int(i), "used_mib": int(u), "total_mib": int(t)}
            for i, u, t in (line.split(", ") for line in raw.strip().splitlines())
        ]


def driver_version() -> str:
    pynvml.nvmlInit()
    return pynvml.nvmlSystemGetDriverVersion()


def pin_to_gpu(index: int) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = str(index)
