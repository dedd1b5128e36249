"""A finding and a skipped file: what a rule reports, what a run could not read.

Plain frozen dataclasses, no pydantic: ``gpuport hipify`` runs the native rules and reports
their findings without importing it (start-up, issue 18). The pydantic report models that
hold them (:mod:`gpuport.scan.model`, the hipify report's readers) validate and serialize
them like their own fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuport.models import Location, Severity

__all__ = ["Finding", "SkippedFile"]


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One instance of a rule firing at one place in the project."""

    rule_id: str
    title: str
    severity: Severity
    location: Location
    message: str
    fix: str
    references: list[str] = field(default_factory=list)
    # inside code that already branches on the platform (torch.version.hip,
    # __HIP_PLATFORM_AMD__, USE_ROCM); severity was lowered to info
    guarded: bool = False
    # the rule's own severity when it was lowered for a guard
    default_severity: Severity | None = None
    # core, test, example, benchmark, docs, tooling, extra or other-vendor; only core
    # findings decide the verdict and effort (unless --scope all)
    scope: str = "core"
    # why the ROCm build never compiles or uses this code, with the evidence (file:line);
    # severity was lowered to info
    not_built: str | None = None


@dataclass(frozen=True, kw_only=True)
class SkippedFile:
    """A file the scan could not read, with the reason; never aborts a run."""

    path: str
    reason: str
    # gpuport failed on it (a bug): the run goes on, but says its verdict does not cover it
    # and exits 4 (issue 23: a reader's crash must never become a quiet `ready`)
    internal: bool = False
