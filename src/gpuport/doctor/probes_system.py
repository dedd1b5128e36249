"""Probes that read files: OS and kernel, PCI devices, modules, device nodes, groups, installs.

All of them go through :class:`ProbeContext` paths, so the same code reads ``/`` or a
fake machine in a test folder. None of them writes anything or needs privileges; what
cannot be read is left empty rather than guessed.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import stat
from pathlib import Path

from gpuport import textre
from gpuport.doctor.context import ProbeContext, ProbeResult, read_small
from gpuport.doctor.snapshot import (
    DeviceNode,
    DirState,
    Installs,
    KernelModules,
    PciDevice,
    ProbeStatus,
    SystemInfo,
    UserInfo,
)
from gpuport.platform import version_text

GPU_VENDORS = {"1002": "AMD", "10de": "NVIDIA"}
# PCI base classes of GPUs: 0x03 display controllers, 0x12 processing accelerators.
GPU_CLASSES = ("0x03", "0x12")
MODULES = ("amdgpu", "nvidia", "nvidia_uvm", "nvidia_drm", "nouveau", "radeon", "vfio_pci")
_SECURE_BOOT_VAR = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
# Kept from the environment: what GPU runtimes read. Everything else stays private.
ENV_PREFIXES = (
    "HIP_",
    "HSA_",
    "ROCR_",
    "ROCM_",
    "GPU_DEVICE_ORDINAL",
    "CUDA_",
    "NVIDIA_",
    "PYTORCH_",
    "TORCH_",
    "NCCL_",
    "RCCL_",
    "MIOPEN_",
    "AMD_",
    "HCC_",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
)
_CMDLINE_KEEP = (
    "amdgpu.",
    "amd_iommu",
    "intel_iommu",
    "iommu",
    "nouveau.",
    "nvidia",
    "radeon.",
    "pci=",
    "pcie_",
    "modprobe.blacklist",
    "module_blacklist",
    "rd.driver.blacklist",
)
_SECRET = textre.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CREDENTIAL|COOKIE", re.IGNORECASE)


def probe_system(ctx: ProbeContext) -> ProbeResult:
    os_release = ctx.read("/etc/os-release") or ""
    pretty = textre.search(r'^PRETTY_NAME="?([^"\n]*)"?', os_release, re.MULTILINE)
    proc_version = ctx.read("/proc/version") or ""
    kernel = (ctx.read("/proc/sys/kernel/osrelease") or "").strip() or (
        None if ctx.rooted else platform.release()
    )
    info = SystemInfo(
        os_name=pretty.group(1) if pretty else None,
        kernel=kernel,
        machine=None if ctx.rooted else platform.machine(),
        cpu=_cpu_name(ctx),
        cmdline=_gpu_cmdline(ctx.read("/proc/cmdline") or ""),
        wsl="microsoft" in proc_version.lower() or ctx.path("/dev/dxg").exists(),
        container=_container(ctx),
        secure_boot=_secure_boot(ctx),
        numa_balancing=_int(ctx.read("/proc/sys/kernel/numa_balancing")),
        numa_nodes=_numa_nodes(ctx),
    )
    return ProbeResult({"system": info})


def _gpu_cmdline(text: str) -> str | None:
    """The kernel parameters that matter to GPUs; the rest of the command line stays private."""
    kept = [t for t in text.split() if t.startswith(_CMDLINE_KEEP)]
    return " ".join(kept) or None


def _cpu_name(ctx: ProbeContext) -> str | None:
    """/proc/cpuinfo under the probed root; on the live machine, gpuport.platform's answer."""
    if not ctx.rooted:
        from gpuport.platform import cpu_name

        return cpu_name()
    for line in (ctx.read("/proc/cpuinfo", limit=65536) or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return None


def _container(ctx: ProbeContext) -> str | None:
    if ctx.env.get("APPTAINER_CONTAINER") or ctx.env.get("SINGULARITY_CONTAINER"):
        return "apptainer"
    if ctx.path("/run/.containerenv").exists():
        return "podman"
    if ctx.path("/.dockerenv").exists():
        return "docker"
    cgroup = ctx.read("/proc/1/cgroup") or ""
    if "kubepods" in cgroup:
        return "k8s"
    return "docker" if "/docker/" in cgroup else None


def _secure_boot(ctx: ProbeContext) -> bool | None:
    """The UEFI variable: 4 attribute bytes, then 1 = enabled. No EFI at all means off."""
    if not ctx.path("/sys/firmware/efi").exists():
        return None if ctx.rooted else False
    try:
        raw = (ctx.path("/sys/firmware/efi/efivars") / _SECURE_BOOT_VAR).read_bytes()
    except OSError:
        return None
    return bool(raw[4]) if len(raw) >= 5 else None


def _numa_nodes(ctx: ProbeContext) -> int | None:
    base = ctx.path("/sys/devices/system/node")
    try:
        return sum(1 for p in base.iterdir() if textre.fullmatch(r"node\d+", p.name))
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None


def probe_pci(ctx: ProbeContext) -> ProbeResult:
    base = ctx.path("/sys/bus/pci/devices")
    if not base.is_dir():
        return ProbeResult(status=ProbeStatus.MISSING, message="no /sys/bus/pci")
    devices = []
    for entry in sorted(base.iterdir()):
        vendor = _hex(ctx, entry / "vendor")
        klass = (_read(ctx, entry / "class") or "").strip().lower()
        if not vendor or not klass.startswith(GPU_CLASSES):
            continue
        driver = None
        with contextlib.suppress(OSError):
            driver = (entry / "driver").readlink().name
        devices.append(
            PciDevice(
                address=entry.name,
                vendor=vendor,
                device=_hex(ctx, entry / "device") or "",
                class_code=klass,
                driver=driver,
                numa_node=_int(_read(ctx, entry / "numa_node")),
                boot_vga=None if (bv := _int(_read(ctx, entry / "boot_vga"))) is None else bv == 1,
            )
        )
    names = _pci_names(ctx, {(d.vendor, d.device) for d in devices if d.vendor in GPU_VENDORS})
    named = [d.model_copy(update={"name": names.get((d.vendor, d.device))}) for d in devices]
    return ProbeResult({"pci": named})


def _read(ctx: ProbeContext, path: Path) -> str | None:
    return read_small(path, ctx.root, 1 << 16)  # bounded, regular files only (F13)


def _hex(ctx: ProbeContext, path: Path) -> str | None:
    text = (_read(ctx, path) or "").strip().lower()
    return text.removeprefix("0x") or None


def _pci_names(ctx: ProbeContext, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Marketing names from the pci.ids database, for the GPU functions only."""
    if not wanted:
        return {}
    vendors = {v for v, _ in wanted}
    for candidate in ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"):
        text = ctx.read(candidate, limit=8 << 20)
        if text is not None:
            break
    else:
        return {}
    found: dict[tuple[str, str], str] = {}
    vendor: str | None = None
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.startswith("\t"):
            vendor = line[:4].lower() if line[:4].lower() in vendors else None
        elif vendor and not line.startswith("\t\t"):
            dev = line[1:5].lower()
            if (vendor, dev) in wanted:
                found[(vendor, dev)] = line[5:].strip()
    return found


def probe_modules(ctx: ProbeContext) -> ProbeResult:
    base = ctx.path("/sys/module")
    if not base.is_dir():
        return ProbeResult(status=ProbeStatus.MISSING, message="no /sys/module")
    loaded = [m for m in MODULES if (base / m).exists()]
    proc = (ctx.read("/proc/driver/nvidia/version") or "").strip().splitlines()
    modules = KernelModules(
        loaded=loaded,
        amdgpu_version=(_read(ctx, base / "amdgpu" / "version") or "").strip() or None,
        nvidia_version=(_read(ctx, base / "nvidia" / "version") or "").strip() or None,
        nvidia_proc_version=proc[0].strip() if proc else None,
    )
    return ProbeResult({"modules": modules})


def probe_nodes(ctx: ProbeContext) -> ProbeResult:
    groups = _group_names(ctx)
    paths: list[Path] = [ctx.path("/dev/kfd"), ctx.path("/dev/dxg")]
    dri = ctx.path("/dev/dri")
    with contextlib.suppress(OSError):
        paths += sorted(p for p in dri.iterdir() if p.name.startswith(("card", "renderD")))
    with contextlib.suppress(OSError):
        paths += sorted(p for p in ctx.path("/dev").iterdir() if p.name.startswith("nvidia"))
    nodes = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue
        vendor = None
        if path.parent == dri:  # which GPU the node belongs to: AMD, NVIDIA, Intel...
            vendor = _hex(ctx, ctx.path(f"/sys/class/drm/{path.name}/device/vendor"))
        nodes.append(
            DeviceNode(
                path="/" + str(path.relative_to(ctx.root)),
                mode=stat.filemode(st.st_mode),
                group=groups.get(st.st_gid, str(st.st_gid)),
                accessible=os.access(path, os.R_OK | os.W_OK),
                vendor=vendor,
            )
        )
    return ProbeResult({"nodes": nodes})


def _group_file(ctx: ProbeContext) -> list[tuple[str, int, list[str]]]:
    out = []
    for line in (ctx.read("/etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[2].isdigit():
            out.append((parts[0], int(parts[2]), [m for m in parts[3].split(",") if m]))
    return out


def _group_names(ctx: ProbeContext) -> dict[int, str]:
    names = {gid: name for name, gid, _ in _group_file(ctx)}
    if not ctx.rooted:
        import grp

        with contextlib.suppress(KeyError, OSError):
            for gid in set(os.getgroups()) | {os.getgid()}:
                names.setdefault(gid, grp.getgrgid(gid).gr_name)
    return names


def probe_user(ctx: ProbeContext) -> ProbeResult:
    import pwd

    uid = os.getuid()
    names = _group_names(ctx)
    process = sorted({names.get(g, str(g)) for g in {*os.getgroups(), os.getgid()}})
    user = ctx.env.get("USER")
    primary: int | None = None
    with contextlib.suppress(KeyError):
        entry = pwd.getpwuid(uid)
        user, primary = entry.pw_name, entry.pw_gid
    configured = sorted(
        {name for name, gid, members in _group_file(ctx) if user in members or gid == primary}
    )
    # The per-user group (named like the login) would name the user: left out.
    private = set(ctx.logins) | ({user} if user and user != "root" else set())
    info = UserInfo(
        uid=uid,
        is_root=uid == 0,
        process_groups=[g for g in process if g not in private],
        configured_groups=[g for g in configured if g not in private],
    )
    return ProbeResult({"user": info})


def probe_installs(ctx: ProbeContext) -> ProbeResult:
    rocm_path = ctx.env.get("ROCM_PATH") or "/opt/rocm"
    # only a version: the file may be a link to anything the project's environment chose
    # (/proc/self/environ went into the snapshot; twenty-eighth re-run F7)
    rocm_version = version_text(ctx.read(f"{rocm_path}/.info/version", limit=256))
    with contextlib.suppress(OSError):
        target = ctx.path(rocm_path).resolve()
        if ctx.path(rocm_path).is_symlink():
            rocm_path = f"{rocm_path} -> {target.name}"
    rocm_dirs = _dirs(ctx, "/opt", r"rocm(-[\d.]+)?")
    cuda_dirs = _dirs(ctx, "/usr/local", r"cuda(-[\d.]+)?")
    return ProbeResult(
        {
            "installs": Installs(
                rocm_version=rocm_version,
                rocm_path=rocm_path if rocm_version or rocm_dirs else None,
                rocm_dirs=rocm_dirs,
                cuda_version=_cuda_version(ctx),
                cuda_dirs=cuda_dirs,
            )
        }
    )


def _dirs(ctx: ProbeContext, parent: str, pattern: str) -> list[str]:
    try:
        return sorted(
            f"{parent}/{p.name}"
            for p in ctx.path(parent).iterdir()
            if textre.fullmatch(pattern, p.name)
        )
    except OSError:
        return []


def _cuda_version(ctx: ProbeContext) -> str | None:
    text = ctx.read("/usr/local/cuda/version.json")
    if text:
        match = textre.search(r'"cuda"\s*:\s*\{[^}]*"version"\s*:\s*"([\d.]+)"', text)
        if match:
            return match.group(1)
    match = textre.search(r"CUDA Version ([\d.]+)", ctx.read("/usr/local/cuda/version.txt") or "")
    return match.group(1) if match else None


def probe_env(ctx: ProbeContext) -> ProbeResult:
    kept = {}
    for name, value in sorted(ctx.env.items()):
        if not name.startswith(ENV_PREFIXES):
            continue
        kept[name] = "<redacted>" if _SECRET.search(name) else ctx.redact(value)
    return ProbeResult({"env": kept})


def probe_miopen_dirs(ctx: ProbeContext) -> ProbeResult:
    """MIOpen's user databases: a read-only one makes every first convolution slow."""
    home = ctx.home()
    candidates = [ctx.env.get("MIOPEN_USER_DB_PATH"), ctx.env.get("MIOPEN_CUSTOM_CACHE_DIR")]
    if home:
        candidates += [f"{home}/.config/miopen", f"{home}/.cache/miopen"]
    states = []
    for raw in candidates:
        if not raw:
            continue
        path = ctx.path(raw)
        exists = path.is_dir()
        parent = next((p for p in path.parents if p.exists()), None)
        states.append(
            DirState(
                path=ctx.redact(raw),
                exists=exists,
                writable=exists and os.access(path, os.W_OK | os.X_OK),
                parent_writable=parent is not None and os.access(parent, os.W_OK | os.X_OK),
            )
        )
    return ProbeResult({"miopen_dirs": states})
