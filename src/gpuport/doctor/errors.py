"""Error text from a GPU job -> what kind of failure it is.

The strings are the ones users paste into issue trackers (research notes, scanning.md
section 4.2): each kind is what a check needs to pick the diagnosis and the fix. The
order matters: the first match wins, most specific first.
"""

from __future__ import annotations

import enum
import re

from gpuport import textre


class Failure(enum.StrEnum):
    NO_BINARY = "no-binary"  # ROCm: no code object for this gfx
    NO_KERNEL_IMAGE = "no-kernel-image"  # CUDA: no sm_XX kernels
    DRIVER_TOO_OLD = "driver-too-old"
    NO_NVIDIA_DRIVER = "no-nvidia-driver"
    AMDSMI_NAMEERROR = "amdsmi-nameerror"
    HSA_INIT = "hsa-init"
    MEMORY_FAULT = "memory-fault"
    INVALID_ORDINAL = "invalid-ordinal"
    NO_DEVICE = "no-device"
    OUT_OF_MEMORY = "out-of-memory"
    WRONG_RESULT = "wrong-result"
    CRASH = "crash"
    OTHER = "other"


_PATTERNS: tuple[tuple[Failure, re.Pattern[str]], ...] = tuple(
    (kind, textre.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            Failure.NO_BINARY,
            r"hipErrorNoBinaryForGpu|invalid device function|hipErrorInvalidImage|"
            r"device kernel image is invalid|TensileLibrary|Unable to find code object",
        ),
        (
            Failure.NO_KERNEL_IMAGE,
            r"no kernel image is available|not compatible with the current PyTorch installation",
        ),
        (
            Failure.DRIVER_TOO_OLD,
            r"driver version is insufficient|NVIDIA driver on your system is too old",
        ),
        (Failure.NO_NVIDIA_DRIVER, r"Found no NVIDIA driver"),
        (Failure.AMDSMI_NAMEERROR, r"name 'amdsmi' is not defined"),
        (Failure.HSA_INIT, r"HSA_STATUS_ERROR_OUT_OF_RESOURCES|hsa_init"),
        (Failure.MEMORY_FAULT, r"Memory access fault by GPU"),
        (Failure.INVALID_ORDINAL, r"invalid device ordinal"),
        (
            Failure.NO_DEVICE,
            r"no CUDA-capable device|hipErrorNoDevice|No HIP GPUs are available|"
            r"no ROCm-capable device",
        ),
        (Failure.OUT_OF_MEMORY, r"out of memory|OutOfMemoryError"),
        (Failure.WRONG_RESULT, r"differs from the CPU"),
    )
)


def classify(text: str, returncode: int | None = None) -> Failure | None:
    """The failure kind named by ``text``; CRASH for a signal death it does not name."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    if returncode is not None and returncode < 0:
        return Failure.CRASH
    return Failure.OTHER if text.strip() else None


def matching_line(text: str, kind: Failure) -> str | None:
    """The first line that names ``kind``, trimmed: evidence for the report."""
    pattern = next((p for k, p in _PATTERNS if k is kind), None)
    if pattern is None:
        return None
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()[:240]
    return None
