"""Checks of the environment variables that steer the GPU runtimes (GP626-GP629)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.doctor.checks_base import check, diagnosis
from gpuport.doctor.checks_runtime import VISIBILITY_VARS, smoke_line
from gpuport.doctor.errors import Failure
from gpuport.doctor.facts import Facts, parse_version
from gpuport.doctor.gfx import base_gfx, family, override_target
from gpuport.doctor.model import Diagnosis
from gpuport.models import Severity

_ROCM_LIB = re.compile(r"^/opt/rocm(?:-(?P<v>[\d.]+))?(?:/|$)")
_CUDA_LIB = re.compile(r"^/usr/local/cuda(?:-(?P<v>[\d.]+))?(?:/|$)")
_HIDE_ALL = ("", "-1", "NoDevFiles", "none")


@check("GP626")
def system_libs(f: Facts) -> Iterator[Diagnosis]:
    entries = [e for e in f.env.get("LD_LIBRARY_PATH", "").split(":") if e]
    if not entries:
        return
    if f.torch_build == "rocm" and "rocm" in f.s.python.torch_bundles:
        wheel = parse_version(f.torch_hip)
        pattern, installed, what = _ROCM_LIB, f.s.installs.rocm_version, "ROCm"
    elif f.torch_build == "cuda":
        wheel = parse_version(f.torch_cuda, 1)
        pattern, installed, what = _CUDA_LIB, f.s.installs.cuda_version, "CUDA"
    else:
        return
    if wheel is None:
        return
    clashes = []
    for entry in entries:
        match = pattern.match(entry)
        if match is None:
            continue
        system = parse_version(match.group("v") or installed, len(wheel))
        if system is not None and system != wheel:
            clashes.append(f"LD_LIBRARY_PATH has {entry} ({what} {'.'.join(map(str, system))})")
    if not clashes:
        return
    yield diagnosis(
        "GP626",
        [*clashes, f"{f.torch_label()}; the wheel brings its own {what} libraries"],
        f"The loader finds the system's {what} libraries before the wheel's own, mixing two "
        "releases in one process.",
        fix_command="unset LD_LIBRARY_PATH",
        probes=("env", "installs", "python", "torch"),
    )


@check("GP627")
def hsa_override(f: Facts) -> Iterator[Diagnosis]:
    value = f.env.get("HSA_OVERRIDE_GFX_VERSION")
    if value is None:
        return
    shown = f"HSA_OVERRIDE_GFX_VERSION={value}"
    target = override_target(value)
    fault = smoke_line(f, Failure.MEMORY_FAULT)
    if target is None:
        yield diagnosis(
            "GP627",
            [f"{shown} is not a version of the form X.Y.Z"],
            "The override is malformed; the ROCm runtime may refuse to start.",
            fix_command="unset HSA_OVERRIDE_GFX_VERSION",
            probes=("env",),
        )
        return
    if not f.has_amd:
        yield diagnosis(
            "GP627",
            [f"{shown} (claims {target})", "no AMD GPU on this machine"],
            "A leftover override from another machine or setup guide.",
            fix_command="unset HSA_OVERRIDE_GFX_VERSION",
            severity=Severity.MINOR,
            probes=("env",),
        )
        return
    evidence: list[str] = []
    severity = Severity.MINOR
    for gpu in f.amd_gpus:
        real = base_gfx(gpu.arch)
        if real is None or (real == target and gpu.name == real):
            continue  # only the overridden name is known: nothing to compare with
        if real == target:
            evidence.append(f"{shown} but {gpu.name} already is {real}: the override is redundant")
        elif family(real) != family(target):
            evidence.append(f"{shown} makes {gpu.name} ({real}) run {target} code: another family")
            severity = Severity.MAJOR
        elif f.torch_build == "rocm" and real in {base_gfx(a) for a in f.arch_list}:
            evidence.append(f"{shown} but torch already has code for {gpu.name} ({real})")
    if fault:
        evidence.append(fault)
        severity = Severity.MAJOR
    if not evidence:
        return
    cause = (
        "The override maps the GPU to an ISA of another family: the wrong machine code runs."
        if severity is Severity.MAJOR
        else "The override is not needed for this GPU and hides its real architecture."
    )
    yield diagnosis(
        "GP627",
        evidence,
        cause,
        fix_command="unset HSA_OVERRIDE_GFX_VERSION",
        severity=severity,
        probes=("env", "smoke", "rocminfo"),
    )


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


@check("GP628")
def visible_devices(f: Facts) -> Iterator[Diagnosis]:
    if not f.gpus:
        return
    amd_count, nv_count = len(f.amd_gpus), len(f.nvidia_gpus)
    values = {v: f.env[v] for v in VISIBILITY_VARS if v in f.env}
    if not values:
        return
    evidence: list[str] = []
    severity = Severity.MINOR
    unset: set[str] = set()
    for var, value in values.items():
        counts = amd_count if var != "CUDA_VISIBLE_DEVICES" else (nv_count or amd_count)
        if var == "HIP_VISIBLE_DEVICES" and "ROCR_VISIBLE_DEVICES" in values:
            counts = len(_items(values["ROCR_VISIBLE_DEVICES"]))
        if var == "CUDA_VISIBLE_DEVICES" and nv_count == 0 and "HIP_VISIBLE_DEVICES" in values:
            counts = len(_items(values["HIP_VISIBLE_DEVICES"]))
        if counts == 0:
            continue
        if value.strip() in _HIDE_ALL:
            evidence.append(f"{var}={value!s} hides every GPU")
            severity = Severity.MAJOR
            unset.add(var)
            continue
        bad = [i for i in _items(value) if i.isdigit() and int(i) >= counts]
        if bad:
            evidence.append(f"{var}={value}: index {', '.join(bad)} does not exist ({counts} GPUs)")
            severity = Severity.MAJOR
            unset.add(var)
    if f.has_amd and "ROCR_VISIBLE_DEVICES" in values and "HIP_VISIBLE_DEVICES" in values:
        evidence.append(
            "ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES are both set: HIP's indices count "
            "within ROCR's selection"
        )
        unset.add("HIP_VISIBLE_DEVICES")
    hip, cuda = values.get("HIP_VISIBLE_DEVICES"), values.get("CUDA_VISIBLE_DEVICES")
    if f.has_amd and not f.has_nvidia and hip is not None and cuda is not None and hip != cuda:
        evidence.append(f"HIP_VISIBLE_DEVICES={hip} and CUDA_VISIBLE_DEVICES={cuda} disagree")
        unset.add("CUDA_VISIBLE_DEVICES")
    smoke = smoke_line(f, Failure.INVALID_ORDINAL) or smoke_line(f, Failure.NO_DEVICE)
    if smoke and evidence:
        evidence.append(smoke)
        severity = Severity.MAJOR
    if not evidence:
        return
    yield diagnosis(
        "GP628",
        evidence,
        "The visibility variables select GPUs that do not exist, or interact so that other "
        "GPUs than intended are used.",
        fix_command=f"unset {' '.join(sorted(unset))}" if unset else None,
        severity=severity,
        probes=("env", "smoke"),
    )


@check("GP629")
def miopen_cache(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "rocm":
        return
    evidence = []
    chown = []
    for state in f.s.miopen_dirs:
        if state.exists and not state.writable:
            evidence.append(f"{state.path} exists but is not writable")
            chown.append(state.path)
        elif not state.exists and not state.parent_writable:
            evidence.append(f"{state.path} does not exist and cannot be created")
    if not evidence:
        return
    command = (
        f"sudo chown -R $USER {' '.join(chown)}"
        if chown
        else "export MIOPEN_USER_DB_PATH=/tmp/miopen-db-$USER MIOPEN_CUSTOM_CACHE_DIR="
        "/tmp/miopen-cache-$USER"
    )
    yield diagnosis(
        "GP629",
        evidence,
        "MIOpen cannot save what it tunes, so each run searches convolution kernels again.",
        fix_command=command,
        probes=("miopen-cache",),
    )
