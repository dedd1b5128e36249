"""What doctor knows about AMD GPU architectures without asking the driver.

Needed because the driver's own answer can be wrong on purpose: with
``HSA_OVERRIDE_GFX_VERSION`` set, rocminfo and torch report the overridden ISA, so the
real chip has to come from the PCI device ID (rocminfo's "Chip ID") or the marketing name.
The ID table is best-effort (the common Instinct and Radeon parts, from pci.ids and
LLVM's AMDGPUUsage processor table); anything not in it is simply "unknown".
"""

from __future__ import annotations

import re

from gpuport import textre

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
    "73ef": "gfx1032",  # Radeon RX 6650 XT / 6700S / 6800S
    "743f": "gfx1034",  # Radeon RX 6400 / 6500 XT
    # APU graphics (pci.ids codenames); all of these are integrated GPUs.
    "15dd": "gfx902",  # Raven Ridge
    "15d8": "gfx902",  # Picasso / Raven 2
    "1636": "gfx90c",  # Renoir
    "1638": "gfx90c",  # Cezanne (Ryzen 5000 APUs)
    "164c": "gfx90c",  # Lucienne
    "15e7": "gfx90c",  # Barcelo
    "163f": "gfx1033",  # Van Gogh (Steam Deck)
    "1681": "gfx1035",  # Rembrandt (Radeon 680M)
    "164e": "gfx1036",  # Raphael (Ryzen 7000 desktop iGPU)
    "13c0": "gfx1036",  # Granite Ridge (Ryzen 9000 desktop iGPU)
    "1506": "gfx1037",  # Mendocino
    "15bf": "gfx1103",  # Phoenix1 (Radeon 780M)
    "15c8": "gfx1103",  # Phoenix2
    "150e": "gfx1150",  # Strix Point (Radeon 880M / 890M)
    "1586": "gfx1151",  # Strix Halo (Radeon 8050S / 8060S)
    "1114": "gfx1152",  # Krackan Point (Radeon 840M / 860M)
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

# Integrated GPUs that ROCm supports as compute devices in their own right (Ryzen AI Max,
# "Strix Halo"): a machine with only such a GPU is treated like one with a discrete GPU.
ROCM_APUS = frozenset({"gfx1151"})

# pci.ids / marketing codenames of APU graphics: a hint where the device ID is not in the
# table above (a new APU), so that it is not taken for a discrete GPU.
_APU_NAME = textre.compile(
    r"\b(raven|picasso|renoir|cezanne|lucienne|barcelo|van ?gogh|rembrandt|raphael|"
    r"granite ridge|mendocino|phoenix\d?|hawk point|strix|krackan|radeon (\d{3}m|graphics))\b",
    re.IGNORECASE,
)

MI300_CLASS = frozenset({"gfx942", "gfx950"})

_OVERRIDE = textre.compile(r"(\d+)\.(\d+)\.(\d+)")


def base_gfx(arch: str | None) -> str | None:
    """``gfx942:sramecc+:xnack-`` -> ``gfx942``; None for anything that is not a gfx name."""
    if not arch:
        return None
    head = arch.strip().lower().split(":", 1)[0]
    return head if textre.fullmatch(r"gfx[0-9a-f]{3,4}", head) else None


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
    """Binary-compatible group, as LLVM's generic targets draw them: gfx10-1 (gfx101x),
    gfx10-3 (gfx103x), gfx11 (gfx110x and the RDNA 3.5 APUs gfx115x), gfx12 (gfx120x).

    CDNA/GCN (gfx9xx) targets are each their own: gfx90a code does not run on gfx942.
    """
    digits = gfx.removeprefix("gfx")
    if len(digits) == 4 and digits[:2] == "10":
        return gfx[:6]
    if len(digits) == 4 and digits[:2] in ("11", "12"):
        return gfx[:5]
    return gfx


def is_apu(gfx: str | None) -> bool:
    return gfx is not None and gfx in APU_GFX


def apu_name(name: str | None) -> bool:
    """The name is that of APU graphics ("Cezanne", "AMD Radeon Graphics", "Radeon 780M")."""
    return bool(name) and _APU_NAME.search(name or "") is not None
