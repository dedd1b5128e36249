"""What doctor knows about AMD GPU architectures without asking the driver.

Needed because the driver's own answer can be wrong on purpose: with
``HSA_OVERRIDE_GFX_VERSION`` set, rocminfo and torch report the overridden ISA, so the
real chip has to come from the PCI device ID (rocminfo's "Chip ID") or the marketing name.
The ID table is best-effort (the common Instinct and Radeon parts, from pci.ids and
LLVM's AMDGPUUsage processor table); anything not in it is simply "unknown".
"""

from __future__ import annotations

import re

# PCI device ID (hex, no 0x) -> gfx target.
DEVICE_GFX: dict[str, str] = {
    "74a0": "gfx942",  # Instinct MI300A
    "74a1": "gfx942",  # Instinct MI300X
    "74a5": "gfx942",  # Instinct MI325X
    "740c": "gfx90a",  # Instinct MI250X / MI250
    "740f": "gfx90a",  # Instinct MI210
    "738c": "gfx908",  # Instinct MI100
    "744c": "gfx1100",  # Radeon RX 7900 XTX / XT / GRE
    "7448": "gfx1100",  # Radeon PRO W7900
    "747e": "gfx1101",  # Radeon RX 7800 XT / 7700 XT
    "7480": "gfx1102",  # Radeon RX 7600
    "73bf": "gfx1030",  # Radeon RX 6800 / 6900
    "73df": "gfx1031",  # Radeon RX 6700 XT
    "73ff": "gfx1032",  # Radeon RX 6600
    "7550": "gfx1201",  # Radeon RX 9070 / 9070 XT
    "15bf": "gfx1103",  # Phoenix APU graphics (Radeon 780M)
    "164e": "gfx1036",  # Raphael APU graphics (Ryzen 7000 iGPU)
    "1681": "gfx1035",  # Rembrandt APU graphics (Radeon 680M)
}

# Targets that only exist as the graphics part of an APU (LLVM AMDGPUUsage: "APU").
APU_GFX = frozenset(
    {
        "gfx902",
        "gfx909",
        "gfx90c",
        "gfx1013",
        "gfx1033",
        "gfx1035",
        "gfx1036",
        "gfx1037",
        "gfx1103",
        "gfx1150",
        "gfx1151",
        "gfx1152",
        "gfx1153",
    }
)

MI300_CLASS = frozenset({"gfx942", "gfx950"})

_OVERRIDE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def base_gfx(arch: str | None) -> str | None:
    """``gfx942:sramecc+:xnack-`` -> ``gfx942``; None for anything that is not a gfx name."""
    if not arch:
        return None
    head = arch.strip().lower().split(":", 1)[0]
    return head if re.fullmatch(r"gfx[0-9a-f]{3,4}", head) else None


def override_target(value: str) -> str | None:
    """``HSA_OVERRIDE_GFX_VERSION`` -> the gfx it claims: 10.3.0 -> gfx1030, 9.0.10 -> gfx90a."""
    match = _OVERRIDE.fullmatch(value.strip())
    if match is None:
        return None
    major, minor, step = (int(g) for g in match.groups())
    if step > 15 or minor > 15:
        return None
    return f"gfx{major}{minor:x}{step:x}"


def family(gfx: str) -> str:
    """Binary-compatible group: RDNA parts share code within gfx103x/gfx110x/gfx115x/gfx120x.

    CDNA/GCN (gfx9xx) targets are each their own: gfx90a code does not run on gfx942.
    """
    digits = gfx.removeprefix("gfx")
    if len(digits) == 4 and digits[:2] in ("10", "11", "12"):
        return gfx[:6]
    return gfx


def is_apu(gfx: str | None) -> bool:
    return gfx is not None and gfx in APU_GFX
