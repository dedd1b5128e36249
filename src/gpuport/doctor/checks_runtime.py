"""Checks of the GPU runtime: initialisation, architecture coverage, drivers vs runtimes,
the integrated GPU, NUMA balancing (GP611-GP615, GP617). GP616, the smoke test's catch-all,
runs after every other check (see :mod:`gpuport.doctor.diagnose`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport import textre
from gpuport.doctor.checks_base import (
    CUDA_INDEXES,
    PYTORCH_INDEX,
    check,
    diagnosis,
    pick_index,
    torch_install,
)
from gpuport.doctor.errors import Failure, classify, matching_line
from gpuport.doctor.facts import Facts, Gpu, parse_version
from gpuport.doctor.gfx import MI300_CLASS, base_gfx, family, is_apu, override_target
from gpuport.doctor.model import Diagnosis
from gpuport.doctor.snapshot import ProbeStatus
from gpuport.models import Severity
from gpuport.scan.rules import RULES

VISIBILITY_VARS = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
_UUID = textre.compile(r"GPU-[0-9A-F]{2,64}")


def with_smoke(probes: tuple[str, ...], used: object) -> tuple[str, ...]:
    """``probes`` plus "smoke" when the diagnosis rests on (and so explains) the smoke
    test's failure; GP616 reports any smoke failure that no diagnosis claimed this way."""
    return (*probes, "smoke") if used else probes


def smoke_line(f: Facts, kind: Failure) -> str | None:
    smoke = f.s.smoke
    if smoke is None or f.smoke_failure is not kind:
        return None
    line = matching_line(smoke.text, kind)
    return f"smoke test: {line}" if line else None


@check("GP611")
def hsa_init(f: Facts) -> Iterator[Diagnosis]:
    lines = [
        f"rocminfo: {ln.strip()}"
        for ln in f.rocminfo_text.splitlines()
        if "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in ln
    ][:2]
    from_smoke = smoke_line(f, Failure.HSA_INIT)
    if from_smoke:
        lines.append(from_smoke)
    if not lines:
        return
    kfd = f.node("/dev/kfd")
    nodes = f.s.probe("nodes")
    if kfd is None and (nodes is None or nodes.status is ProbeStatus.OK):
        return  # no /dev/kfd at all: GP607 / GP609 (missing device files) say so
    if kfd is not None and not kfd.accessible and not f.s.user.is_root:
        return  # GP608 (permissions) is the cause and says so
    lines += [f"kernel log: {ln}" for ln in f.s.dmesg if textre.search("kfd", ln, re.I)][:4]
    yield diagnosis(
        "GP611",
        lines,
        "The ROCm runtime found the kernel driver but could not set up a GPU: the device is "
        "unsupported by KFD or was skipped at boot (device access itself is fine).",
        probes=with_smoke(("rocminfo", "dmesg"), from_smoke),
    )


def _arch_covered(gfx: str, arch_list: list[str]) -> bool:
    return gfx in {base_gfx(a) for a in arch_list}


@check("GP612")
def rocm_arch(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "rocm":
        return
    evidence: list[str] = []
    missing: list[str] = []
    line = smoke_line(f, Failure.NO_BINARY)
    if igpu_first(f):  # then the iGPU took the work: GP615 explains it
        line = None
    if line:
        evidence.append(line)
    candidates = f.discrete_amd or f.amd_gpus
    override = override_target(f.env.get("HSA_OVERRIDE_GFX_VERSION", ""))
    if f.arch_list:
        for gpu in candidates:
            if gpu.arch is None or _arch_covered(gpu.arch, f.arch_list):
                continue
            same_family = override is not None and family(override) == family(gpu.arch)
            if same_family and override is not None and _arch_covered(override, f.arch_list):
                continue  # the (unsupported) override workaround is in place: GP627 judges it
            missing.append(gpu.arch)
            evidence.append(f"{gpu.name} is {gpu.arch}")
        if missing:
            built = ", ".join(sorted({base_gfx(a) or a for a in f.arch_list}))
            evidence.append(f"torch {f.torch_version} has code for: {built}")
    if not evidence:
        return
    targets = ", ".join(sorted(set(missing))) or "this GPU"
    yield diagnosis(
        "GP612",
        evidence,
        f"The installed torch (or a ROCm library it loads) has no code objects for {targets}.",
        fix=(
            f"Install a torch build that includes {targets}: a newer ROCm wheel or AMD's "
            f"per-architecture (TheRock) wheels; build extensions with PYTORCH_ROCM_ARCH="
            f"{missing[0] if missing else '<gfx>'}. HSA_OVERRIDE_GFX_VERSION to a target of the "
            "same family is an unsupported stop-gap."
        ),
        probes=with_smoke(("torch", "rocminfo"), line),
    )


def _cc(arch: str) -> tuple[int, int] | None:
    match = textre.fullmatch(r"(?:sm|compute)_(\d+?)(\d)a?", arch.strip().lower())
    return (int(match.group(1)), int(match.group(2))) if match else None


def cuda_arch_covered(cc: tuple[int, int], arch_list: list[str]) -> bool:
    """sm_XY cubins run on the same major with minor >= Y; compute_XY PTX on anything newer."""
    for arch in arch_list:
        built = _cc(arch)
        if built is None:
            continue
        if arch.startswith("sm_") and built[0] == cc[0] and built[1] <= cc[1]:
            return True
        if arch.startswith("compute_") and built <= cc:
            return True
    return False


def _nvidia_ccs(f: Facts) -> list[tuple[Gpu, tuple[int, int]]]:
    out = []
    for gpu in f.nvidia_gpus:
        cc = _cc(gpu.arch) if gpu.arch else None
        if cc is not None:
            out.append((gpu, cc))
    return out


@check("GP613")
def cuda_arch(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "cuda":
        return
    evidence = [line] if (line := smoke_line(f, Failure.NO_KERNEL_IMAGE)) else []
    newest = (0, 0)
    if f.arch_list:
        for gpu, cc in _nvidia_ccs(f):
            if not cuda_arch_covered(cc, f.arch_list):
                evidence.append(f"{gpu.name} has compute capability {cc[0]}.{cc[1]}")
                newest = max(newest, cc)
        if len(evidence) > (1 if line else 0):
            evidence.append(f"torch {f.torch_version} has kernels for: {' '.join(f.arch_list)}")
    if not evidence:
        return
    blackwell = newest >= (10, 0)
    index = "cu128" if blackwell else "cu126"
    # cu128 wheels exist from torch 2.7 on: an older torch has to be upgraded.
    too_old = blackwell and (parse_version(f.torch_version) or (0, 0)) < (2, 7)
    command, note = torch_install(f, f"{PYTORCH_INDEX}/{index}", upgrade=too_old)
    yield diagnosis(
        "GP613",
        evidence,
        "The installed torch was not compiled for this GPU's compute capability.",
        fix=f"{RULES['GP613'].fix} {note}",
        fix_command=command,
        probes=with_smoke(("torch", "nvidia-smi-query"), line),
    )


@check("GP614")
def cuda_driver_too_old(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "cuda":
        return
    evidence = [line] if (line := smoke_line(f, Failure.DRIVER_TOO_OLD)) else []
    runtime = parse_version(f.torch_cuda)
    driver = f.nv_cuda
    severity = Severity.BLOCKER if line else None
    if runtime is not None and driver is not None and driver < runtime[:2]:
        evidence.insert(0, f"torch {f.torch_version} was built with CUDA {f.torch_cuda}")
        evidence.insert(
            1, f"driver {f.nv_driver or '?'} supports CUDA up to {driver[0]}.{driver[1]}"
        )
        if driver[0] < runtime[0]:
            severity = Severity.BLOCKER
        elif severity is None:
            severity = Severity.MINOR
    if severity is None:
        return
    minor_only = severity is Severity.MINOR
    cause = (
        "The driver is older than torch's CUDA runtime within the same major version: minor-"
        "version compatibility lets most kernels run, but PTX JIT and newer features fail."
        if minor_only
        else "The NVIDIA driver is too old for the CUDA runtime torch was built with."
    )
    index = f"{PYTORCH_INDEX}/cu{pick_index(driver, CUDA_INDEXES).replace('.', '')}"
    command, note = torch_install(f, index) if driver else (None, "")
    yield diagnosis(
        "GP614",
        evidence,
        cause,
        fix=f"{RULES['GP614'].fix} {note}".strip(),
        fix_command=command,
        severity=severity,
        probes=with_smoke(("torch", "nvidia-smi"), line),
    )


def igpu_first(f: Facts) -> bool:
    """torch's device 0 is an integrated GPU while a discrete one exists."""
    smoke = f.s.smoke
    if smoke is None or not smoke.devices or not f.discrete_amd:
        return False
    return is_apu(base_gfx(smoke.devices[0].arch))


@check("GP615")
def integrated_gpu(f: Facts) -> Iterator[Diagnosis]:
    amd = f.amd_gpus
    igpus = [g for g in amd if g.integrated]
    dgpus = [g for g in amd if not g.integrated]
    if not igpus or not dgpus or any(f.env.get(v) for v in VISIBILITY_VARS):
        return
    evidence = [
        f"integrated: {', '.join(g.label() for g in igpus)}",
        f"discrete: {', '.join(g.label() for g in dgpus)}",
    ]
    smoke = f.s.smoke
    first = igpu_first(f)
    explains = False
    if smoke is not None and first:
        evidence.append(f"torch's cuda:0 is the integrated GPU ({smoke.devices[0].name})")
        if f.smoke_failed and smoke.error:
            evidence.append(f"smoke test on cuda:0: {smoke.error.strip()[:200]}")
        explains = f.smoke_failed  # the job ran on the iGPU: that is why it failed
    # rocminfo's placeholder UUID "GPU-XX" (no unique ID) cannot select a GPU: use indices.
    ids = [g.uuid for g in dgpus if g.uuid and _selectable_uuid(g.uuid)]
    if len(ids) != len(dgpus):
        ids = [str(i) for i, g in enumerate(amd) if not g.integrated]
    # The discrete GPU is cuda:0 and the GPU job worked: only numbering and counts suffer.
    harmless = smoke is not None and bool(smoke.devices) and not first and smoke.ok is True
    yield diagnosis(
        "GP615",
        evidence,
        "The processor's integrated GPU is enumerated next to the discrete one; work placed on "
        "it fails because the libraries have no code for it, and device numbering shifts."
        + (
            " Here the discrete GPU is device 0 and the GPU job worked, so only code that "
            "uses every visible GPU (or picks one by index) is affected."
            if harmless
            else ""
        ),
        fix_command=f"export ROCR_VISIBLE_DEVICES={','.join(ids)}",
        severity=Severity.MINOR if harmless else None,
        probes=with_smoke(("rocminfo",), explains),
    )


def _selectable_uuid(uuid: str) -> bool:
    """A GPU UUID rocminfo reports (``GPU-`` and hex digits; ``GPU-XX`` is a GPU without one).
    Anything else, from a snapshot of another machine (``GPU-1;touch x``), never goes into
    the ``export ROCR_VISIBLE_DEVICES=...`` fix command: the GPUs are named by index."""
    value = uuid.strip().upper()
    return _UUID.fullmatch(value) is not None and value != "GPU-XX"


@check("GP617")
def numa_balancing(f: Facts) -> Iterator[Diagnosis]:
    mi300 = [g for g in f.amd_gpus if g.arch in MI300_CLASS]
    if not mi300 or f.s.system.numa_balancing != 1:
        return
    yield diagnosis(
        "GP617",
        [f"{len(mi300)}x {mi300[0].label()}", "/proc/sys/kernel/numa_balancing = 1"],
        "Automatic NUMA balancing is on; on MI300-class hosts it costs GPU performance and "
        "makes measurements noisy.",
        fix_command="sudo sysctl kernel.numa_balancing=0",
        probes=("system",),
    )


_CAUSES = {
    Failure.OUT_OF_MEMORY: "GPU memory is full: other processes hold it (see nvidia-smi / "
    "amd-smi process) or a memory limit is set.",
    Failure.MEMORY_FAULT: "A GPU kernel accessed invalid memory: typically code for the wrong "
    "ISA (an override) or a driver fault.",
    Failure.INVALID_ORDINAL: "The program asked for a GPU index that is not visible to it.",
    Failure.NO_DEVICE: "torch sees no GPU although one is present: device access, visibility "
    "variables, or a runtime that does not match the driver.",
    Failure.WRONG_RESULT: "The GPU returned a wrong matmul result: a faulty driver or library, "
    "overheating hardware, or code for the wrong ISA.",
    Failure.CRASH: "The GPU process was killed by a signal.",
}


def smoke_catch_all(f: Facts, timed_out: bool) -> Iterator[Diagnosis]:
    """GP616: a smoke-test failure that no specific check explained."""
    smoke = f.s.smoke
    if smoke is None:
        return
    vendor_match = (f.torch_build == "rocm" and f.has_amd) or (
        f.torch_build == "cuda" and f.has_nvidia
    )
    blind = f.smoke_no_device and vendor_match
    if not (f.smoke_failed or blind or timed_out):
        return
    kind = Failure.NO_DEVICE if blind else (f.smoke_failure or Failure.OTHER)
    evidence = []
    if timed_out:
        evidence.append("the smoke test did not finish in time (GPU or driver hang)")
        kind = Failure.OTHER
    if blind:
        evidence.append(f"torch.cuda.is_available() is False with {f.torch_label()}")
    if smoke.error and smoke.error.strip():
        evidence.append(f"error: {smoke.error.strip().splitlines()[-1][:240]}")
    if smoke.returncode not in (0, None):
        evidence.append(f"exit status {smoke.returncode} at stage {smoke.stage or '?'}")
    tail = [ln for ln in smoke.stderr_tail.splitlines() if ln.strip()][-2:]
    evidence += [f"stderr: {ln.strip()[:240]}" for ln in tail]
    if kind is Failure.OTHER and not timed_out:
        kind = classify(smoke.text, smoke.returncode) or Failure.OTHER
    cause = _CAUSES.get(kind or Failure.OTHER, "The GPU job failed; the error is shown above.")
    yield diagnosis("GP616", evidence, cause, probes=("smoke",))
