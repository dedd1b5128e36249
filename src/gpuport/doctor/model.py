"""Result model of ``gpuport doctor``: a per-layer checklist and the diagnoses behind it."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.doctor.snapshot import Layer, ProbeRecord, Snapshot
from gpuport.models import SCHEMA_VERSION, Severity


class CheckStatus(enum.StrEnum):
    """What a diagnosis or a checklist row means for the user; FAIL makes the exit code 1."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {
    CheckStatus.SKIP: 0,
    CheckStatus.OK: 1,
    CheckStatus.INFO: 2,
    CheckStatus.WARN: 3,
    CheckStatus.FAIL: 4,
}


def status_for(severity: Severity) -> CheckStatus:
    """blocker/major stop GPU work (fail); minor is a warning; info is just said."""
    if severity in (Severity.BLOCKER, Severity.MAJOR):
        return CheckStatus.FAIL
    return CheckStatus.WARN if severity is Severity.MINOR else CheckStatus.INFO


class Diagnosis(BaseModel):
    """One rule firing on this machine: what was seen, why it happens, and the fix."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    title: str
    severity: Severity
    status: CheckStatus
    layer: Layer
    evidence: list[str] = Field(description="what was seen, one fact per line")
    cause: str
    fix: str
    fix_command: str | None = Field(default=None, description="a shell command, where one fits")
    references: list[str] = Field(default_factory=list)
    probes: list[str] = Field(
        default_factory=list, description="probes whose data this rests on (and explains)"
    )


class LayerCheck(BaseModel):
    """One checklist row: hardware, driver, device nodes, runtime, Python stack, environment."""

    model_config = ConfigDict(frozen=True)

    layer: Layer
    status: CheckStatus
    text: str


class DoctorReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.doctor"] = "gpuport.doctor"
    schema_version: str = SCHEMA_VERSION
    gpuport_version: str
    created: str
    snapshot_id: str
    replayed: bool = Field(default=False, description="computed from a saved snapshot")
    summary: list[str] = Field(description="plain sentences: the GPUs, the torch build, verdict")
    layers: list[LayerCheck]
    diagnoses: list[Diagnosis]
    probes: list[ProbeRecord]
    duration_s: float | None = None
    snapshot: Snapshot | None = Field(default=None, description="included with --verbose")

    @property
    def failed(self) -> bool:
        return any(d.status is CheckStatus.FAIL for d in self.diagnoses)

    def count(self, status: CheckStatus) -> int:
        return sum(d.status is status for d in self.diagnoses)
