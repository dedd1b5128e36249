"""The check registry: one function per GP6xx rule, from parsed facts to diagnoses.

A check is a pure function of :class:`Facts`; it yields nothing when its problem is
absent. Titles, default severities and references come from the rule registry
(:mod:`gpuport.scan.rules.environment.rules`), so the report, ``gpuport explain`` and
docs/rules.md never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from gpuport.doctor.facts import Facts, parse_version
from gpuport.doctor.model import Diagnosis, status_for
from gpuport.doctor.snapshot import Layer
from gpuport.models import Severity
from gpuport.scan.rules import RULES

CheckFn = Callable[[Facts], Iterator[Diagnosis]]
CHECKS: dict[str, CheckFn] = {}

RULE_LAYER: dict[str, Layer] = {
    **dict.fromkeys(("GP601", "GP602"), Layer.HARDWARE),
    **dict.fromkeys(("GP603", "GP604", "GP605", "GP606"), Layer.DRIVER),
    **dict.fromkeys(("GP607", "GP608", "GP609", "GP610"), Layer.DEVICE_NODES),
    **dict.fromkeys(("GP611", "GP612", "GP613", "GP614", "GP615", "GP616", "GP617"), Layer.RUNTIME),
    **dict.fromkeys(
        ("GP618", "GP619", "GP620", "GP621", "GP622", "GP623", "GP624", "GP625"), Layer.PYTHON
    ),
    **dict.fromkeys(("GP626", "GP627", "GP628", "GP629"), Layer.ENVIRONMENT),
}

PYTORCH_INDEX = "https://download.pytorch.org/whl"
# Index names that exist on download.pytorch.org (newest last); the fix picks one of these.
ROCM_INDEXES = ((6, 0), (6, 1), (6, 2), (6, 3), (6, 4), (7, 0))
CUDA_INDEXES = ((11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0))


def check(rule_id: str) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        if rule_id not in RULES:
            raise ValueError(f"check for unknown rule {rule_id}")
        CHECKS[rule_id] = fn
        return fn

    return deco


def diagnosis(
    rule_id: str,
    evidence: Iterable[str],
    cause: str,
    *,
    fix: str | None = None,
    fix_command: str | None = None,
    severity: Severity | None = None,
    probes: Iterable[str] = (),
    layer: Layer | None = None,
) -> Diagnosis:
    rule = RULES[rule_id]
    sev = severity or rule.severity
    return Diagnosis(
        rule_id=rule.id,
        title=rule.title,
        severity=sev,
        status=status_for(sev),
        layer=layer or RULE_LAYER[rule_id],
        evidence=[line for line in evidence if line],
        cause=cause,
        fix=fix or rule.fix,
        fix_command=fix_command,
        references=list(rule.references),
        probes=list(probes),
    )


def pick_index(version: tuple[int, ...] | None, known: tuple[tuple[int, int], ...]) -> str:
    """The newest index not newer than ``version`` (the newest overall when unknown)."""
    fitting = [k for k in known if version is None or k <= tuple(version[:2])]
    best = fitting[-1] if fitting else known[0]
    return f"{best[0]}.{best[1]}"


def rocm_index(f: Facts) -> str:
    version = parse_version(f.s.installs.rocm_version) if f.s.installs.rocm_version else None
    if version is None:
        return f"{PYTORCH_INDEX}/rocm6.4"
    return f"{PYTORCH_INDEX}/rocm{pick_index(version, ROCM_INDEXES)}"


def cuda_index(f: Facts) -> str:
    tag = pick_index(f.nv_cuda, CUDA_INDEXES).replace(".", "")
    return f"{PYTORCH_INDEX}/cu{tag}"


def torch_packages(f: Facts) -> str:
    """torch and the companions that are installed (they must come from the same index)."""
    return " ".join(p for p in ("torch", "torchvision", "torchaudio") if p in f.dists) or "torch"


def public_version(version: str) -> str:
    """``2.5.1+cu124`` -> ``2.5.1``."""
    return version.partition("+")[0]


def torch_install(f: Facts, index_url: str, *, upgrade: bool = False) -> tuple[str, str]:
    """(command, note): torch and its companions from ``index_url``, pinned to the installed
    versions with that index's local tag (``torch==2.5.1+cu126``).

    An exact pin differs from what is installed, so pip replaces just these packages and
    adds only the dependencies the new build needs (CUDA's nvidia-* wheels); nothing is
    force-reinstalled. ``upgrade`` (the installed release has no build for the index) or
    an unknown version leaves the versions open instead, and the note says so.
    """
    tag = index_url.rstrip("/").rsplit("/", 1)[-1]
    names = [p for p in ("torch", "torchvision", "torchaudio") if p in f.dists] or ["torch"]
    installed = {n: f.dists.get(n) or (f.torch_version if n == "torch" else None) for n in names}
    same_tag = all((v or "").partition("+")[2] == tag for v in installed.values())
    if upgrade or same_tag or not all(installed.values()):
        command = f"pip install --upgrade {' '.join(names)} --index-url {index_url}"
        note = (
            f"This installs the newest {', '.join(names)} from the {tag} index (an upgrade; "
            "pip upgrades other packages only where the new torch requires it)."
        )
        return command, note
    pins = " ".join(f"{n}=={public_version(v or '')}+{tag}" for n, v in installed.items())
    command = f"pip install {pins} --index-url {index_url}"
    note = (
        f"The command keeps your versions and changes only the build ({tag}); pip adds just "
        "the dependencies that build needs. If the index has no such build of these "
        "versions, drop the `==` pins (that upgrades torch)."
    )
    return command, note


def gpu_list(f: Facts, vendor: str) -> str:
    gpus = f.amd_gpus if vendor == "amd" else f.nvidia_gpus
    labels = [g.label() for g in gpus]
    if not labels:
        return "none"
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{n}x {label}" if n > 1 else label for label, n in counts.items())
