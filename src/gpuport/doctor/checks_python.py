"""Checks of the Python stack: the torch build against the GPUs, and what sits next to it
(GP618-GP625)."""

from __future__ import annotations

from collections.abc import Iterator

from gpuport.doctor.checks_base import (
    check,
    cuda_index,
    diagnosis,
    gpu_list,
    public_version,
    rocm_index,
    torch_install,
)
from gpuport.doctor.checks_runtime import with_smoke
from gpuport.doctor.errors import Failure
from gpuport.doctor.facts import Facts, Gpu
from gpuport.doctor.model import Diagnosis
from gpuport.doctor.probes_python import EXTENSIONS
from gpuport.doctor.snapshot import ProbeStatus
from gpuport.models import Severity
from gpuport.scan.rules import RULES

_BACKEND = {"cuda": "CUDA", "rocm": "ROCm"}
_ORT_AMD = ("onnxruntime-migraphx", "onnxruntime-rocm")
_ORT_OTHER = ("onnxruntime", "onnxruntime-gpu")


def _nvidia_wheels(f: Facts) -> list[str]:
    return sorted(n for n in f.dists if n.startswith("nvidia-") and n != "nvidia-ml-py")


def _blind(f: Facts) -> bool:
    """The smoke test saw no GPU: what a wrong torch build shows, and so explains."""
    return f.smoke_no_device or f.smoke_failure in (Failure.NO_DEVICE, Failure.NO_NVIDIA_DRIVER)


def _igpu_only(f: Facts) -> list[Gpu]:
    """The AMD GPUs, when all of them are integrated GPUs ROCm does not support for compute
    (a Ryzen laptop): a torch build that ignores them is a choice, not a fault."""
    return [] if f.compute_amd else f.amd_gpus


_IGPU_NOTE = (
    "The only AMD GPU here is the processor's integrated GPU, which ROCm does not support "
    "for compute (a few work unofficially with HSA_OVERRIDE_GFX_VERSION): this matters only "
    "if you mean to run GPU work on it."
)


@check("GP618")
def torch_not_importable(f: Facts) -> Iterator[Diagnosis]:
    if "torch" not in f.dists:
        return
    record = f.s.probe("torch")
    if record is not None and record.status is ProbeStatus.TIMEOUT:
        return  # not finished is not failed (a loaded machine): GP630 says it did not answer
    error = f.s.torch.import_error if f.s.torch is not None else None
    broken = record is not None and record.status is ProbeStatus.ERROR
    if not error and not broken:
        return
    evidence = [f"torch {f.dists['torch']} is installed"]
    if error:
        evidence += [f"import torch: {ln.strip()[:240]}" for ln in error.splitlines()[-3:]]
    elif record is not None:
        evidence.append(f"import torch: {record.message}")
    if f.env.get("LD_LIBRARY_PATH"):
        evidence.append(f"LD_LIBRARY_PATH={f.env['LD_LIBRARY_PATH']}")
    yield diagnosis(
        "GP618",
        evidence,
        "torch fails while loading: a shared library it needs is missing or of another "
        "version, or the import crashed.",
        probes=with_smoke(("torch",), f.s.smoke is not None and f.s.smoke.stage == "import"),
    )


@check("GP619")
def cuda_torch_on_amd(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "cuda" or not f.has_amd or f.has_nvidia:
        return
    evidence = [
        f"GPUs: {gpu_list(f, 'amd')}; no NVIDIA GPU",
        f.torch_label() + (" (torch.version.hip is None)" if f.s.torch else ""),
    ]
    wheels = _nvidia_wheels(f)
    if wheels:
        evidence.append(
            f"{len(wheels)} nvidia-* CUDA wheels installed ({', '.join(wheels[:3])}...)"
        )
    smoke = f.s.smoke
    if smoke is not None and f.smoke_failure is Failure.NO_NVIDIA_DRIVER:
        evidence.append("smoke test: Found no NVIDIA driver on your system")
    # torch, torchvision and torchaudio together, installed or not (as pytorch.org gives it):
    # a CUDA torchvision left beside a ROCm torch fails to load, and one installed later
    # from PyPI pulls the CUDA torch back
    trio = "torch torchvision torchaudio"
    remove = " ".join([trio, *wheels])
    cause = (
        "A CUDA wheel of torch is installed (PyPI's default, or pulled in by another "
        "package); it can only drive NVIDIA GPUs."
    )
    if _igpu_only(f):
        yield diagnosis(
            "GP619",
            evidence,
            f"{cause} {_IGPU_NOTE}",
            fix="Nothing to do for CPU work. To try the integrated GPU, install the ROCm "
            "build of torch (unsupported on this GPU).",
            severity=Severity.INFO,
            probes=with_smoke(("torch", "python"), _blind(f)),
        )
        return
    yield diagnosis(
        "GP619",
        evidence,
        cause,
        fix_command=(
            f"pip uninstall -y {remove} && pip install {trio} --index-url {rocm_index(f)}"
        ),
        probes=with_smoke(("torch", "python"), _blind(f)),
    )


@check("GP620")
def rocm_torch_on_nvidia(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "rocm" or not f.has_nvidia or f.has_amd:
        return
    command, note = torch_install(f, cuda_index(f))
    yield diagnosis(
        "GP620",
        [f"GPUs: {gpu_list(f, 'nvidia')}; no AMD GPU", f.torch_label()],
        "A ROCm wheel of torch is installed; it drives AMD GPUs only.",
        fix=f"{RULES['GP620'].fix} {note}",
        fix_command=command,
        probes=with_smoke(("torch", "python"), _blind(f)),
    )


@check("GP621")
def cpu_torch_with_gpu(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "cpu" or not f.gpus:
        return
    vendors = [v for v, present in (("amd", f.has_amd), ("nvidia", f.has_nvidia)) if present]
    evidence = [f"GPUs: {'; '.join(gpu_list(f, v) for v in vendors)}", f.torch_label()]
    cause = "The installed torch has no GPU support at all, so the GPU is never used."
    if vendors == ["amd"] and _igpu_only(f):
        yield diagnosis(
            "GP621",
            evidence,
            f"{cause} {_IGPU_NOTE}",
            fix="Nothing to do: the CPU build is the usual choice on a machine whose only GPU "
            "is integrated.",
            severity=Severity.INFO,
            probes=with_smoke(("torch", "python"), _blind(f)),
        )
        return
    index = rocm_index(f) if vendors == ["amd"] else cuda_index(f)
    command, note = torch_install(f, index)
    yield diagnosis(
        "GP621",
        evidence,
        cause,
        fix=f"{RULES['GP621'].fix} {note}",
        fix_command=command,
        probes=with_smoke(("torch", "python"), _blind(f)),
    )


@check("GP622")
def nvidia_wheels(f: Facts) -> Iterator[Diagnosis]:
    wheels = _nvidia_wheels(f)
    if f.torch_build != "rocm" or not wheels or f.has_nvidia:
        return
    yield diagnosis(
        "GP622",
        [f.torch_label(), f"installed: {', '.join(f'{w} {f.dists[w]}' for w in wheels)}"],
        "CUDA runtime wheels are left over from a CUDA torch (or are pulled in by another "
        "package's requirement).",
        fix_command=f"pip uninstall -y {' '.join(wheels)}",
        probes=("python",),
    )


def _extension_fix(name: str, build: str, f: Facts) -> tuple[str | None, str | None]:
    """(fix text, command). A reinstall keeps the installed version (it was chosen to match
    torch) and leaves the dependencies alone: --no-deps, so torch itself is never replaced."""
    version = public_version(f.dists.get(name, ""))
    pin = f"{name}=={version}" if version else name
    keep = (
        f"Reinstall the same {name} version built for {_BACKEND[build]}; --no-deps keeps pip "
        "from touching torch and the other packages."
    )
    if build == "cuda":
        return keep, f"pip install --force-reinstall --no-deps {pin}"
    if name == "xformers":
        return (
            keep + " If the ROCm index has no build of this version, pick the xformers release "
            "that matches your torch there.",
            f"pip install --force-reinstall --no-deps {pin} --index-url {rocm_index(f)}",
        )
    if name in ("flash-attn", "flash_attn"):
        return (
            "Build flash-attn for ROCm (its CK or Triton backend, see the flash-attention "
            "README), or use torch's scaled_dot_product_attention.",
            None,
        )
    return f"Install the ROCm build of {name} (its project documents the wheel or build).", None


@check("GP623")
def extension_mismatch(f: Facts) -> Iterator[Diagnosis]:
    build = f.torch_build
    if build not in ("rocm", "cuda"):
        return
    known = {e.replace("_", "-") for e in EXTENSIONS}
    for name, backends in f.s.python.extension_backends.items():
        if name.replace("_", "-") not in known or not backends or build in backends:
            continue
        seen = f.s.python.extension_evidence.get(name, [])
        built = ", ".join(_BACKEND.get(b, b) for b in backends)
        evidence = [
            f"{name} {f.dists.get(name, '')}: built for {built}".replace("  ", " "),
            *seen[:3],
            f.torch_label(),
        ]
        fix, command = _extension_fix(name, build, f)
        yield diagnosis(
            "GP623",
            evidence,
            f"{name}'s compiled GPU code targets {built}, but torch is a {_BACKEND[build]} "
            "build: it cannot load or run it.",
            fix=fix,
            fix_command=command,
            probes=("python",),
        )


@check("GP624")
def pynvml_rocm(f: Facts) -> Iterator[Diagnosis]:
    if f.torch_build != "rocm":
        return
    nvml = [n for n in ("pynvml", "nvidia-ml-py") if n in f.dists]
    version = f.torch_version or ""
    seen = f.smoke_failure is Failure.AMDSMI_NAMEERROR
    affected = version.startswith("2.4.") and bool(nvml) and "amdsmi" not in f.dists
    if not seen and not affected:
        return
    evidence = [f.torch_label(), *(f"{n} {f.dists[n]} installed" for n in nvml)]
    if "amdsmi" not in f.dists:
        evidence.append("amdsmi Python package not installed")
    if seen:
        evidence.append("smoke test: NameError: name 'amdsmi' is not defined")
    yield diagnosis(
        "GP624",
        evidence,
        "torch 2.4 on ROCm uses amdsmi for device queries whenever pynvml is importable, and "
        "fails with a NameError when amdsmi is missing.",
        fix_command=f"pip uninstall -y {' '.join(nvml)}" if nvml else None,
        probes=with_smoke(("python",), seen),
    )


@check("GP625")
def onnxruntime_amd(f: Facts) -> Iterator[Diagnosis]:
    if not f.has_amd or f.has_nvidia:
        return
    present = [n for n in _ORT_OTHER if n in f.dists]
    if not present or any(n in f.dists for n in _ORT_AMD):
        return
    if _igpu_only(f):
        yield diagnosis(
            "GP625",
            [
                f"GPUs: {gpu_list(f, 'amd')} (integrated only)",
                *(f"{n} {f.dists[n]} installed (CPU/CUDA providers only)" for n in present),
            ],
            f"The installed ONNX Runtime runs on the CPU. {_IGPU_NOTE}",
            fix="Nothing to do for CPU inference.",
            severity=Severity.INFO,
            probes=("python",),
        )
        return
    yield diagnosis(
        "GP625",
        [
            f"GPUs: {gpu_list(f, 'amd')}",
            *(f"{n} {f.dists[n]} installed (CPU/CUDA providers only)" for n in present),
        ],
        "The installed ONNX Runtime has no execution provider for AMD GPUs; sessions run on "
        "the CPU.",
        fix_command=f"pip uninstall -y {' '.join(present)} && pip install onnxruntime-migraphx",
        severity=Severity.MINOR,
        probes=("python",),
    )
