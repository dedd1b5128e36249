"""Checks of the lower layers: hardware, kernel driver, device nodes (GP601-GP610)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport import textre
from gpuport.doctor.checks_base import check, diagnosis
from gpuport.doctor.facts import Facts, parse_version
from gpuport.doctor.model import Diagnosis
from gpuport.doctor.snapshot import PciDevice, ProbeStatus
from gpuport.models import Severity

_ROCM_RUN = (
    "docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
    "--security-opt seccomp=unconfined IMAGE"
)
# amdgpu driver release -> the ROCm user-space releases it supports (oldest, newest).
# Data, not logic: extend as AMD publishes windows (amdgpu-docs PR #97 for 30.30).
DRIVER_WINDOWS: dict[tuple[int, int], tuple[tuple[int, int], tuple[int, int]]] = {
    (30, 30): ((6, 3), (7, 2)),
}


def _dmesg(f: Facts, pattern: str) -> list[str]:
    rx = textre.compile(pattern, re.IGNORECASE)
    return [f"kernel log: {line}" for line in f.s.dmesg if rx.search(line)][:5]


def _rocminfo_lines(f: Facts, pattern: str) -> list[str]:
    rx = textre.compile(pattern, re.IGNORECASE)
    return [f"rocminfo: {ln.strip()}" for ln in f.rocminfo_text.splitlines() if rx.search(ln)][:3]


@check("GP601")
def no_gpu(f: Facts) -> Iterator[Diagnosis]:
    if f.gpus or (f.s.system.wsl and f.node("/dev/dxg") is not None):
        return
    pci = f.s.probe("pci")
    evidence = []
    if pci is None or pci.status is ProbeStatus.OK:
        evidence.append("no AMD (1002) or NVIDIA (10de) display/accelerator device on the PCI bus")
    else:
        evidence.append(f"PCI bus not readable ({pci.message}); the vendors' tools show no GPU")
    evidence += _rocminfo_lines(f, r"ROCk module is NOT loaded")
    if not any(
        n.path.startswith(("/dev/kfd", "/dev/dri/renderD", "/dev/nvidia")) for n in f.s.nodes
    ):
        evidence.append("no /dev/kfd, /dev/dri/renderD* or /dev/nvidia* device nodes")
    if f.torch_build:
        evidence.append(f.torch_label())
    cpu = f.s.system.cpu
    yield diagnosis(
        "GP601",
        evidence,
        "This machine has no GPU that ROCm or CUDA could use" + (f" (CPU: {cpu})." if cpu else "."),
        probes=("pci", "rocminfo", "nvidia-smi", "nvidia-smi-query", "amd-smi", "rocm-smi"),
    )


@check("GP602")
def pcie_atomics(f: Facts) -> Iterator[Diagnosis]:
    lines = _dmesg(f, r"PCI rejects atomics")
    if lines:
        yield diagnosis(
            "GP602",
            lines,
            "The GPU sits behind a PCIe root port or bridge that does not support atomic "
            "operations, so the ROCm kernel driver (KFD) refused to use it.",
            probes=("dmesg",),
        )


def unbound(f: Facts) -> list[tuple[str, PciDevice]]:
    """GPU functions without their compute driver: (vendor, device)."""
    out = []
    for dev in f.amd_pci:
        if dev.driver != "amdgpu":
            out.append(("amd", dev))
    for dev in f.nvidia_pci:
        if dev.driver != "nvidia":
            out.append(("nvidia", dev))
    return out


def _label(dev: PciDevice) -> str:
    return f"{dev.address} {dev.name or 'GPU'} ({dev.vendor}:{dev.device})"


@check("GP603")
def gpu_without_driver(f: Facts) -> Iterator[Diagnosis]:
    for vendor, module in (("amd", "amdgpu"), ("nvidia", "nvidia")):
        devices = [d for v, d in unbound(f) if v == vendor]
        if not devices:
            continue
        evidence = [
            f"{_label(d)}: " + (f"bound to {d.driver}" if d.driver else "no kernel driver bound")
            for d in devices
        ]
        loaded = f.loaded(module)
        if _probe_ok(f, "modules"):
            evidence.append(f"{module} module {'loaded' if loaded else 'not loaded'}")
        evidence += _rocminfo_lines(f, r"ROCk module is NOT loaded") if vendor == "amd" else []
        dkms = f.s.tool("dkms")
        lines = dkms.stdout.splitlines() if dkms is not None else []
        evidence += [f"dkms: {ln.strip()}" for ln in lines if module in ln][:2]
        holders = sorted({d.driver for d in devices if d.driver})
        fix = None
        if holders:
            cause = (
                f"Another driver ({', '.join(holders)}) holds the GPU, so {module} cannot "
                "drive it for compute."
            )
            command = None
            if "nouveau" in holders:
                fix = (
                    "Install the NVIDIA driver from your distribution or NVIDIA (its package "
                    "blacklists nouveau), then reboot so that nvidia claims the GPU."
                )
        elif loaded:
            cause = (
                f"The {module} module is loaded but did not claim the GPU: an unsupported "
                "device or a failed initialisation (see the kernel log)."
            )
            command = None
        else:
            cause = (
                f"The {module} kernel module is not loaded: it is not installed for the "
                f"running kernel ({f.s.system.kernel or 'unknown'}), failed to build, or was "
                "refused at load time."
            )
            command = f"sudo modprobe {module}"
        yield diagnosis(
            "GP603",
            evidence,
            cause,
            fix=fix,
            fix_command=command,
            probes=("pci", "modules", "rocminfo", "nvidia-smi", "nvidia-smi-query"),
        )


def _secure_boot(f: Facts) -> str | None:
    if f.s.system.secure_boot:
        return "Secure Boot is enabled (UEFI SecureBoot variable)"
    run = f.s.tool("mokutil")
    if run is not None and "SecureBoot enabled" in run.stdout:
        return "mokutil: SecureBoot enabled"
    return None


@check("GP604")
def secure_boot(f: Facts) -> Iterator[Diagnosis]:
    state = _secure_boot(f)
    missing = [
        (v, d)
        for v, d in unbound(f)
        if d.driver is None and not f.loaded("amdgpu" if v == "amd" else "nvidia")
    ]
    if state is None or not missing:
        return
    modules = sorted({"amdgpu" if v == "amd" else "nvidia" for v, _ in missing})
    evidence = [state, *(f"{m} module not loaded" for m in modules)]
    evidence += _dmesg(f, r"Key was rejected|module verification failed|Lockdown")
    yield diagnosis(
        "GP604",
        evidence,
        "With Secure Boot on, an unsigned or self-built (DKMS) driver module is refused at "
        "load time until its signing key is enrolled.",
        fix_command="sudo mokutil --import /var/lib/dkms/mok.pub",
        probes=("system", "mokutil", "dmesg"),
    )


_NVSMI_FAIL = textre.compile(
    r"couldn't communicate with the NVIDIA driver|Driver/library version mismatch|"
    r"No devices were found|NVIDIA-SMI has failed|Failed to initialize NVML",
    re.IGNORECASE,
)


@check("GP605")
def nvidia_smi_failed(f: Facts) -> Iterator[Diagnosis]:
    run = f.s.tool("nvidia-smi")
    if run is None or run.returncode in (0, None) or not f.nvidia_pci:
        return
    line = next(
        (ln.strip() for ln in f.nvidia_smi_text.splitlines() if _NVSMI_FAIL.search(ln)), None
    )
    if line is None:
        return
    evidence = [f"nvidia-smi: {line}"]
    if f.s.modules.nvidia_proc_version:
        evidence.append(f"kernel module: {f.s.modules.nvidia_proc_version}")
    evidence += _dmesg(f, r"NVRM")
    if "mismatch" in line.lower():
        cause = (
            "The NVIDIA user-space driver was upgraded while the previous kernel module is "
            "still loaded; the two versions must match."
        )
        fix, command = "Reboot (or unload and reload every nvidia module).", "sudo reboot"
    elif "No devices were found" in line:
        cause = (
            "The driver is loaded but initialised no GPU (see the NVRM lines of the kernel log)."
        )
        fix, command = "Read `sudo dmesg | grep -i nvrm`; reseat or reinstall as it says.", None
    else:
        cause = (
            "The nvidia kernel module is not running: not built for this kernel after an "
            "update, refused by Secure Boot, or displaced by nouveau."
        )
        fix = "Rebuild and load the module for the running kernel, then check the kernel log."
        command = "sudo dkms autoinstall && sudo modprobe nvidia"
    yield diagnosis(
        "GP605",
        evidence,
        cause,
        fix=fix,
        fix_command=command,
        probes=("nvidia-smi", "nvidia-smi-query"),
    )


@check("GP606")
def rocm_driver_skew(f: Facts) -> Iterator[Diagnosis]:
    driver = parse_version(f.amd_driver_version)
    if driver is None or not f.has_amd:
        return
    window = DRIVER_WINDOWS.get((driver[0], driver[1]))
    if window is None:
        return
    low, high = window
    outside = []
    for source, text in f.rocm_user_versions.items():
        version = parse_version(text)
        if version is not None and not low <= (version[0], version[1]) <= high:
            outside.append(f"ROCm user space {text} ({source})")
    if not outside:
        return
    evidence = [
        f"amdgpu driver {f.amd_driver_version}: supports ROCm {low[0]}.{low[1]} to "
        f"{high[0]}.{high[1]}",
        *outside,
    ]
    yield diagnosis(
        "GP606",
        evidence,
        "The kernel driver and the ROCm libraries in use come from releases further apart than "
        "AMD supports.",
        probes=("modules", "amd-smi", "rocm-smi", "installs", "torch"),
    )


def _probe_ok(f: Facts, name: str) -> bool:
    record = f.s.probe(name)
    return record is None or record.status is ProbeStatus.OK


def _missing_nodes(f: Facts) -> dict[str, list[str]]:
    """Per vendor whose driver is loaded: the expected device files that do not exist.

    AMD counts only for GPUs ROCm computes on (not a Ryzen iGPU next to an NVIDIA card),
    and not at all when the NVIDIA side is what torch uses. NVIDIA GPUs that demonstrably
    work (nvidia-smi answered, the smoke test saw them) have their nodes, whatever the
    nodes probe saw when it ran (nvidia-smi creates them on first use).
    """
    out: dict[str, list[str]] = {}
    if not _probe_ok(f, "nodes"):
        return out
    nv_in_use = bool(f.nvidia_nodes) and f.torch_build == "cuda"
    amd_compute = [d for d in f.amd_pci if f.pci_rocm_compute(d)]
    if not amd_compute and f.torch_build == "rocm":
        amd_compute = list(f.amd_pci)  # an APU-only machine that runs ROCm on purpose
    amd_driven = f.loaded("amdgpu") or any(d.driver == "amdgpu" for d in amd_compute)
    if amd_driven and amd_compute and not nv_in_use and f.node("/dev/kfd") is None:
        out["amd"] = ["/dev/kfd"] + ([] if f.render_nodes else ["/dev/dri/renderD*"])
    nv_works = f.nvidia_smi_ok or (f.torch_build == "cuda" and f.smoke_saw_gpu)
    nv_driven = f.loaded("nvidia") or any(d.driver == "nvidia" for d in f.nvidia_pci)
    if nv_driven and f.nvidia_pci and not f.nvidia_nodes and not nv_works:
        out["nvidia"] = ["/dev/nvidiactl", "/dev/nvidia0"]
    return out


@check("GP607")
def device_nodes_missing(f: Facts) -> Iterator[Diagnosis]:
    if f.s.system.container or f.s.system.wsl:
        return
    for vendor, paths in _missing_nodes(f).items():
        module = "amdgpu" if vendor == "amd" else "nvidia"
        evidence = [f"{module} is loaded", f"missing: {', '.join(paths)}"]
        evidence += _dmesg(f, r"kfd|amdgpu" if vendor == "amd" else r"NVRM")
        evidence += _rocminfo_lines(f, r"Unable to open /dev/kfd") if vendor == "amd" else []
        yield diagnosis(
            "GP607",
            evidence,
            "The kernel driver is loaded but did not set the GPU up for compute, or udev did "
            "not create its device files.",
            fix_command="sudo nvidia-modprobe -u -c=0" if vendor == "nvidia" else None,
            probes=("nodes", "rocminfo", "nvidia-smi"),
        )


# Groups a fix may add the user to: never root (gid 0) or any other group.
_GPU_GROUPS = ("render", "video")
_AMD_UDEV = (
    'printf \'%s\\n\' \'KERNEL=="kfd", GROUP="render", MODE="0660"\' '
    '\'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0660"\' '
    "| sudo tee /etc/udev/rules.d/70-amdgpu.rules && sudo udevadm control --reload-rules "
    "&& sudo udevadm trigger"
)
_NV_GID = (
    'echo "options nvidia NVreg_DeviceFileGID=$(getent group video | cut -d: -f3) '
    'NVreg_DeviceFileMode=0660" | sudo tee /etc/modprobe.d/nvidia-device-files.conf'
)


@check("GP608")
def device_permission(f: Facts) -> Iterator[Diagnosis]:
    if f.s.user.is_root:
        return
    candidates = []
    kfd = f.node("/dev/kfd")
    if kfd is not None and not kfd.accessible:
        candidates.append(kfd)
    render = f.amd_render_nodes
    if render and not any(n.accessible for n in render):
        candidates.append(render[0])
    candidates += [n for n in f.nvidia_nodes if not n.accessible][:2]
    denied = _rocminfo_lines(f, r"Permission denied")
    if not candidates and not denied:
        return
    user = f.s.user
    owners = {n.group for n in candidates if n.group}
    wanted = {g for g in owners if g in _GPU_GROUPS}
    if kfd is not None and (kfd in candidates or denied) and (kfd.group in _GPU_GROUPS):
        wanted |= set(_GPU_GROUPS)  # ROCm's own instructions: render and video
    wanted -= set(user.process_groups)  # never suggest a group the user is already in
    pending = sorted(g for g in wanted if g in user.configured_groups)
    missing = sorted(wanted - set(pending))
    root_owned = [n for n in candidates if n.group in (None, "root", "0")]
    others = sorted(owners - set(_GPU_GROUPS) - {"root", "0"})
    evidence = [
        f"{n.path} {n.mode or ''} group {n.group}: no read/write access" for n in candidates
    ]
    evidence += denied
    evidence.append(f"this session's groups: {', '.join(user.process_groups) or 'unknown'}")
    fix: str | None = None
    command: str | None = None
    if f.s.system.container:
        cause = "The container's user is not in the group that owns the GPU device files."
        if missing or pending:
            adds = " ".join(f"--group-add {g}" for g in sorted(wanted))
            fix = f"Start the container with {adds}."
        else:
            fix = (
                "Pass the devices with the host's render/video groups (`--group-add render "
                "--group-add video`), and check the nodes' owner and mode on the host."
            )
    elif pending:
        cause = (
            f"You are in {', '.join(pending)} according to /etc/group, but this login "
            "session started before that was added."
        )
        fix, command = (
            "Log out and in again (or start a shell with the new group).",
            f"newgrp {pending[0]}",
        )
    elif missing:
        cause = "The user is not in the group that owns the GPU device files."
        command = f"sudo usermod -aG {','.join(missing)} $USER"
        fix = "Add the user to the group and log in again."
    elif root_owned or not others:
        amd = any(n.path == "/dev/kfd" or n.path.startswith("/dev/dri/") for n in candidates)
        cause = (
            "The device files do not give any group you could join read/write access "
            f"({', '.join(sorted({n.mode or '?' for n in candidates}))}, group "
            f"{', '.join(sorted({n.group or '?' for n in candidates}))})"
            + ("; joining root is not the fix." if root_owned else ".")
        )
        if amd or (denied and not f.nvidia_nodes):
            fix = (
                "Have udev give the ROCm device files to the render group (AMD's udev rule "
                "below); the user needs to be in render and video (log in again after "
                "joining)."
            )
            command = _AMD_UDEV
        else:
            fix = (
                "The NVIDIA driver creates its device files as root; have it give them to "
                "the video group (NVreg_DeviceFileGID/NVreg_DeviceFileMode, below), rebuild "
                "the initramfs, reboot, and add the user to video."
            )
            command = _NV_GID
    else:
        cause = (
            f"The GPU device files belong to {', '.join(others)}, a site-specific group "
            "the user is not in."
        )
        fix = f"Ask the administrator to add you to {', '.join(others)}, then log in again."
    yield diagnosis(
        "GP608", evidence, cause, fix=fix, fix_command=command, probes=("nodes", "user", "rocminfo")
    )


@check("GP609")
def container_devices(f: Facts) -> Iterator[Diagnosis]:
    if not f.s.system.container:
        return
    for vendor, paths in _missing_nodes(f).items():
        module = "amdgpu" if vendor == "amd" else "nvidia"
        evidence = [
            f"running in a container ({f.s.system.container})",
            f"host driver {module} is loaded, but {', '.join(paths)} missing here",
        ]
        evidence += _rocminfo_lines(f, r"Unable to open /dev/kfd")
        command = _ROCM_RUN if vendor == "amd" else "docker run --gpus all IMAGE"
        yield diagnosis(
            "GP609",
            evidence,
            "The container was started without passing the GPU device files in.",
            fix_command=command,
            probes=("nodes", "rocminfo", "nvidia-smi"),
        )


@check("GP610")
def wsl_rocm(f: Facts) -> Iterator[Diagnosis]:
    system = f.s.system
    if not system.wsl or f.node("/dev/dxg") is None:
        return
    amd_side = f.torch_build == "rocm" or "WSL environment detected" in f.rocminfo_text
    blind = f.smoke_no_device or (
        f.smoke_failure is not None and f.smoke_failure.value == "no-device"
    )
    if not amd_side or not blind:
        return
    evidence = ["WSL2: /dev/dxg present, no /dev/kfd", "torch sees no GPU"]
    unset = "HSA_ENABLE_DXG_DETECTION" not in f.env
    if unset:
        evidence.append("HSA_ENABLE_DXG_DETECTION is not set")
    yield diagnosis(
        "GP610",
        evidence,
        "Under WSL2 ROCm reaches the GPU through /dev/dxg; the runtime in use is not set up "
        "for it (wrong wheels for WSL, or DXG detection off).",
        fix_command="export HSA_ENABLE_DXG_DETECTION=1" if unset else None,
        severity=Severity.MAJOR,
        probes=("smoke", "rocminfo", "nodes"),
    )
