"""Checks of the environment variables that steer the GPU runtimes (GP626-GP629)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuport import textre
from gpuport.doctor.checks_base import check, diagnosis
from gpuport.doctor.checks_runtime import VISIBILITY_VARS, smoke_line, with_smoke
from gpuport.doctor.errors import Failure
from gpuport.doctor.facts import Facts, parse_version
from gpuport.doctor.gfx import base_gfx, family, override_target
from gpuport.doctor.model import Diagnosis
from gpuport.models import Severity

_ROCM_LIB = textre.compile(r"^/opt/rocm(?:-(?P<v>[\d.]+))?(?:/|$)")
_CUDA_LIB = textre.compile(r"^/usr/local/cuda(?:-(?P<v>[\d.]+))?(?:/|$)")
_HIDE_ALL = ("", "-1", "NoDevFiles", "none")


#: clashing entries named in the prose of GP626 (the command keeps every entry)
_SHOWN = 10


def _listed(entries: list[str]) -> str:
    more = len(entries) - _SHOWN
    return ", ".join(entries[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


@check("GP626")
def system_libs(f: Facts) -> Iterator[Diagnosis]:
    """Same major version, other minor: one soname (libamdhip64.so.6, libcudart.so.12), two
    releases, and the system's is found first. Another major has other sonames: no clash."""
    raw = f.env.get("LD_LIBRARY_PATH", "")
    entries = [e for e in raw.split(":") if e]
    if not entries:
        return
    if f.torch_build == "rocm" and "rocm" in f.s.python.torch_bundles:
        wheel = parse_version(f.torch_hip)
        pattern, installed, what = _ROCM_LIB, f.s.installs.rocm_version, "ROCm"
    elif f.torch_build == "cuda":
        wheel = parse_version(f.torch_cuda)
        pattern, installed, what = _CUDA_LIB, f.s.installs.cuda_version, "CUDA"
    else:
        return
    if wheel is None:
        return
    clashes: list[str] = []
    evidence: list[str] = []
    for entry in entries:
        match = pattern.match(entry)
        if match is None:
            continue
        system = parse_version(match.group("v") or installed)
        if system is None or system[0] != wheel[0] or system == wheel:
            continue
        clashes.append(entry)
        if len(evidence) < _SHOWN:
            evidence.append(f"LD_LIBRARY_PATH has {entry} ({what} {system[0]}.{system[1]})")
    if not clashes:
        return
    if len(clashes) > _SHOWN:
        evidence.append(f"... and {len(clashes) - _SHOWN} more such entries")
    dropped = set(clashes)  # a set: a snapshot's path of 100,000 entries was quadratic here
    kept = [e for e in raw.split(":") if e and e not in dropped]
    command = f"export LD_LIBRARY_PATH={_shell_value(':'.join(kept))}" if kept else None
    yield diagnosis(
        "GP626",
        [*evidence, f"{f.torch_label()}; the wheel brings its own {what} libraries"],
        f"The loader finds the system's {what} {wheel[0]}.x libraries (same soname, another "
        "release) before the wheel's own, mixing two releases in one process.",
        fix=(
            f"Remove {_listed(clashes)} from LD_LIBRARY_PATH for Python work; the other "
            "entries stay."
            + (
                (
                    f" The new value: {':'.join(kept)}"
                    if len(kept) <= _SHOWN
                    else f" The new value keeps its other {len(kept)} entries (the command)."
                )
                if kept
                else " Nothing else is on it, so unset it."
            )
        ),
        fix_command=command or "unset LD_LIBRARY_PATH",
        probes=("env", "installs", "python", "torch"),
    )


def _shell_value(value: str) -> str:
    """``value`` in double quotes for a POSIX shell, with a leading ``~`` as ``$HOME``."""
    parts = []
    for entry in value.split(":"):
        home = entry == "~" or entry.startswith("~/")
        body = entry[1:] if home else entry
        body = textre.sub(r'(["\\$`])', r"\\\1", body)
        parts.append(("$HOME" if home else "") + body)
    return '"' + ":".join(parts) + '"'


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
        if not gpu.arch_known or real is None or (real == target and gpu.name == real):
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
        probes=with_smoke(("env", "rocminfo"), fault),
    )


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


@check("GP628")
def visible_devices(f: Facts) -> Iterator[Diagnosis]:
    if not f.gpus:
        return
    # How many GPUs there are regardless of the filters: rocminfo run without them, the PCI
    # bus, nvidia-smi. Never the smoke test, which sees only what the filters let through.
    amd_total, nv_total = f.amd_total, f.nvidia_total
    values = {v: f.env[v] for v in VISIBILITY_VARS if v in f.env}
    if not values:
        return
    evidence: list[str] = []
    severity = Severity.MINOR
    unset: set[str] = set()
    for var, value in values.items():
        present = f.has_amd or (var == "CUDA_VISIBLE_DEVICES" and f.has_nvidia)
        if var == "CUDA_VISIBLE_DEVICES":
            total = nv_total if f.has_nvidia else amd_total
        else:
            total = amd_total if f.has_amd else 0
        if var == "HIP_VISIBLE_DEVICES" and "ROCR_VISIBLE_DEVICES" in values:
            total = len(_items(values["ROCR_VISIBLE_DEVICES"]))
        if var == "CUDA_VISIBLE_DEVICES" and not f.has_nvidia and "HIP_VISIBLE_DEVICES" in values:
            total = len(_items(values["HIP_VISIBLE_DEVICES"]))
        if not present:
            continue
        if value.strip() in _HIDE_ALL:
            evidence.append(f"{var}={value!s} hides every GPU")
            severity = Severity.MAJOR
            unset.add(var)
            continue
        if total == 0:
            continue  # the number of GPUs is unknown: indices cannot be judged
        bad = [i for i in _items(value) if i.isdigit() and int(i) >= total]
        if bad:
            evidence.append(f"{var}={value}: index {', '.join(bad)} does not exist ({total} GPUs)")
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
        probes=with_smoke(("env",), smoke and evidence),
    )


@check("GP629")
def miopen_cache(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "rocm":
        return
    evidence = []
    own = []  # the user's own folders under ~: theirs to take back
    shared = []  # set through MIOPEN_* variables: maybe a team's folder, never chown'ed
    from_env = {
        value: var
        for var in ("MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR")
        if (value := f.env.get(var))
    }
    for state in f.s.miopen_dirs:
        broken = (state.exists and not state.writable) or (
            not state.exists and not state.parent_writable
        )
        if not broken:
            continue
        if state.exists:
            evidence.append(f"{state.path} exists but is not writable")
        else:
            evidence.append(f"{state.path} does not exist and cannot be created")
        if state.path in from_env:
            shared.append(from_env[state.path])
        elif state.exists and state.path.startswith("~/"):
            own.append(state.path)
    if not evidence:
        return
    if shared or not own:
        # A per-user place instead of a shared one: nobody else's files change owner.
        home_ok = not any(
            s.path.startswith("~/") and not s.exists and not s.parent_writable
            for s in f.s.miopen_dirs
        )
        if home_ok:
            command = (
                'export MIOPEN_USER_DB_PATH="$HOME/.config/miopen" '
                'MIOPEN_CUSTOM_CACHE_DIR="$HOME/.cache/miopen"'
            )
            fix = "Point MIOpen at folders of your own."
        else:  # a private temporary folder: a fixed /tmp name could be someone else's
            command = (
                'd="$(mktemp -d)" && export MIOPEN_USER_DB_PATH="$d/db" '
                'MIOPEN_CUSTOM_CACHE_DIR="$d/cache"'
            )
            fix = (
                "The home folder cannot be written: point MIOpen at a private temporary "
                "folder (tuning then lasts for this session), or make the home writable."
            )
        if shared:
            fix += (
                f" {', '.join(sorted(set(shared)))} names a folder others may share: leave "
                "its owner alone."
            )
    else:
        command = f"sudo chown -R $USER {' '.join(_home(p) for p in own)}"
        fix = "Take back your own MIOpen folders (created by root, e.g. in a container)."
    yield diagnosis(
        "GP629",
        evidence,
        "MIOpen cannot save what it tunes, so each run searches convolution kernels again.",
        fix=fix,
        fix_command=command,
        probes=("miopen-cache",),
    )


def _home(path: str) -> str:
    return "$HOME" + path[1:] if path.startswith("~/") else path
