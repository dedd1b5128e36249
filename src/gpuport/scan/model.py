"""Result models of a scan: findings, skipped files, the verdict and its basis.

``Finding`` and ``SkippedFile`` are plain dataclasses (:mod:`gpuport.scan.finding`, no pydantic:
``gpuport hipify`` reports them without importing it); the report models here validate and
serialize them like their own fields."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.knowledge import TargetInfo
from gpuport.models import SCHEMA_VERSION, EnvFingerprint, Severity
from gpuport.scan.finding import Finding, SkippedFile


class Verdict(enum.StrEnum):
    READY = "ready"
    MINOR_WORK = "minor work"
    MAJOR_WORK = "major work"
    BLOCKED = "blocked"


class EffortItem(BaseModel):
    """One line of the effort estimate's basis: a rule, how often it fired, hours each."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    rule_id: str
    title: str
    count: int
    hours_each: float
    hours: float


EffortKind = Literal["bring-up", "native", "kernel family", "python", "build", "containers"]
#: build: hipifies cleanly or needs a thin shim; hipify: hipify plus real fixes; integration:
#: an AMD library covers the kernel family; re-implement: none does; drop: left out of the
#: ROCm build (an NVIDIA-only component beside a working route); changes: the listed hours
EffortRegime = Literal[
    "bring-up", "build", "hipify", "integration", "re-implement", "drop", "changes"
]


class EffortComponent(BaseModel):
    """One component of the effort estimate: its regime, range and what it rests on."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    kind: EffortKind
    path: str = ""
    regime: EffortRegime
    low_days: float
    high_days: float
    basis: str = Field(description="how the range was made, in one line")
    constructs: list[str] = Field(default_factory=list)
    family: str | None = Field(default=None, description="the kernel family's kind")
    amd_equivalent: str | None = None
    findings: int = 0


class Effort(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    low_days: float
    high_days: float
    hours: float
    basis: list[EffortItem]
    note: str
    components: list[EffortComponent] = Field(default_factory=list)
    calendar: str = Field(default="", description="calendar time against engineer time")


class RouteEvidence(BaseModel):
    """One piece of evidence that the project already has a ROCm route."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    kind: str  # docker, requirements, extra, build, ci, docs
    path: str
    line: int | None
    detail: str
    #: whether it counts as a route (issue 24: one piece of evidence is enough); when it
    #: does not, ``why`` says why (a heading alone, a line saying ROCm is not supported)
    counts: bool = True
    why: str = ""
    #: it gives an install step for ROCm (a ROCm wheel index, requirements file or image)
    install: bool = False


class ComponentInfo(BaseModel):
    """A folder with packaging of its own."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    packaging: str
    nvidia_only: bool
    evidence: str
    builds_native: bool = False  # compiles CUDA/C++ extensions of its own
    rocm_build: bool = False  # its own build tests for ROCm/HIP


class ScanReport(BaseModel):
    """Everything `gpuport scan` found in one project for one target."""

    # built on first use: hipify imports this module for Finding and SkippedFile only (the
    # report's models too are deferred: start-up, issue 18)
    model_config = ConfigDict(defer_build=True)

    schema_version: str = SCHEMA_VERSION
    kind: Literal["gpuport.scan"] = "gpuport.scan"
    root: str
    target: TargetInfo
    files_scanned: int
    files_by_kind: dict[str, int]
    findings: list[Finding]
    skipped: list[SkippedFile]
    counts: dict[Severity, int]
    verdict: Verdict
    verdict_reason: str
    effort: Effort
    scope: str = "core"
    routes: list[RouteEvidence] = Field(default_factory=list)
    components: list[ComponentInfo] = Field(default_factory=list)
    not_built: dict[str, str] = Field(
        default_factory=dict, description="files the ROCm build does not compile -> evidence"
    )
    scope_counts: dict[str, dict[Severity, int]] = Field(default_factory=dict)
    fingerprint: EnvFingerprint
    duration_s: float
    own_packages: list[str] = Field(
        default_factory=list,
        description="top-level import names the project defines itself: never looked up as "
        "dependencies",
    )

    def not_built_parts(self, limit: int = 8) -> list[tuple[str, int, str]]:
        """The code the ROCm route leaves out, grouped by its evidence: (folder or file, how
        many files, evidence), largest first: the NVIDIA-only parts of the project, each
        "not built on ROCm: evidence file:line" (issue 24)."""
        by_evidence: dict[str, list[str]] = {}
        for path, evidence in self.not_built.items():
            by_evidence.setdefault(evidence, []).append(path)
        parts = []
        for evidence, paths in by_evidence.items():
            if len(paths) == 1:
                where = paths[0]
            else:
                common = paths[0].split("/")[:-1]
                for p in paths[1:]:
                    parts_p = p.split("/")[:-1]
                    n = 0
                    while n < min(len(common), len(parts_p)) and common[n] == parts_p[n]:
                        n += 1
                    common = common[:n]
                where = ("/".join(common) + "/") if common else "(several folders)"
            parts.append((where, len(paths), evidence))
        parts.sort(key=lambda p: (-p[1], p[0]))
        return parts[:limit]
