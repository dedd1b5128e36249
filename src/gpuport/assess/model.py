"""The :class:`Assessment`: one project's readiness report, as data.

Why one model for everything: the terminal view, the Markdown, the HTML page and the JSON are
four renderings of the same object, so a figure in a forwarded HTML report can be traced to the
same field in the JSON a CI job archived. Every conclusion carries :class:`Evidence` that points
back into the sections (a finding's anchor, a cost figure, a bench row), so a reader can check
*why* the report says what it says.
"""

from __future__ import annotations

import enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from gpuport.bench.model import Comparison
from gpuport.cost.model import CostReport
from gpuport.models import SCHEMA_VERSION, EnvFingerprint, Location, Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import EffortComponent

KIND = "gpuport.assess"


class Readiness(enum.StrEnum):
    """How far the project is from running on ROCm; the order is the order of badness."""

    READY = "ready"
    MINOR_WORK = "minor-work"
    MAJOR_WORK = "major-work"
    BLOCKED = "blocked"

    @property
    def rank(self) -> int:
        return list(Readiness).index(self)

    @property
    def label(self) -> str:
        return self.value.replace("-", " ")


Origin = Literal["flag", "gpuport.toml", "pyproject.toml", "default", "detected"]
Leans = Literal["rocm", "cuda", "neutral"]
EvidenceKind = Literal["finding", "hipify", "cost", "bench", "validate", "doctor", "effort"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Setting(_Frozen):
    """One setting as used, and where it came from (a flag beats gpuport.toml beats pyproject)."""

    name: str
    value: JsonValue
    origin: Origin
    detail: str = ""


AssumedOrigin = Literal[
    "flag", "gpuport.toml", "pyproject.toml", "detected", "catalog", "argument", "default"
]


class Assumed(_Frozen):
    """One thing the report assumed (the model, the workload, the GPUs and their prices, the
    HIP version, ...): its value, where it came from and, for a detected or catalog value,
    where exactly (``file:line``, the catalog entry). A reader who disagrees changes it with
    the flag or setting named in ``change``."""

    name: str = Field(description="project, target, workload, model, gpus, price, hip_version...")
    label: str = Field(description="how the report names it: 'model', 'price of MI300X'")
    value: str = Field(description="as used, formatted: 'training', '$1.99/h on-demand'")
    origin: AssumedOrigin
    where: str = Field(default="", description="file:line, catalog source, or the setting file")
    detail: str = Field(default="", description="why this value (or why no other)")
    offered: list[str] = Field(
        default_factory=list,
        description="candidates seen but not used: a model named only in examples or tests",
    )
    change: str = Field(default="", description="the flag that sets it: '--model NAME'")


class Evidence(_Frozen):
    """A fact a conclusion rests on, with the anchor of the place in the report that shows it."""

    kind: EvidenceKind
    ref: str = Field(description="rule id (GP301), GPU key, workload case, module path, ...")
    label: str = Field(description="one line a reader recognises: 'GP301 csrc/k.cu:27'")
    anchor: str = Field(description="id of the element in the HTML report, e.g. finding-3")
    location: Location | None = None
    value: str | None = Field(default=None, description="the figure, formatted: '$0.67/Mtok'")


class Conclusion(_Frozen):
    """One decision criterion of the seeds, evaluated on this project's evidence."""

    id: str = Field(description="stable id of the criterion, e.g. 'no-rocm-package'")
    title: str
    statement: str = Field(description="what the evidence shows")
    recommendation: str = Field(description="what to do about it")
    severity: Severity = Field(description="how much it weighs on the port")
    leans: Leans = Field(description="which platform this criterion favours")
    evidence: list[Evidence] = Field(default_factory=list)


class EffortClass(_Frozen):
    """The effort of one class of work (an area), with the per-rule basis."""

    area: str = Field(description="dependencies, python, cuda-c++, build, containers, hipify")
    title: str
    hours: float
    count: int
    basis: list[str] = Field(description="'GP301 x2 at 2 h = 4 h' per rule or item")


class AssessEffort(_Frozen):
    """The effort in engineer-days: the sum of the components (the scan's effort model plus
    hipify's untranslatable APIs), with the listed hours by area as the detail."""

    low_days: float
    high_days: float
    hours: float
    classes: list[EffortClass]
    note: str
    components: list[EffortComponent] = Field(default_factory=list)
    calendar: str = ""

    def days(self) -> str:
        """``5–11.5 engineer-days``; ``no listed work``; ``about 0.2 h`` below a tenth of a day.

        One wording for every format, so no report shows an impossible "0–0 engineer-days".
        """
        if not self.hours and not self.high_days:
            return "no listed work"
        if not self.high_days:
            return f"about {self.hours:g} h"
        return f"{self.low_days:g}–{self.high_days:g} engineer-days"


class TargetSummary(_Frozen):
    name: str
    generation: str
    wave_size: int
    fp8: str


class ScanSection(_Frozen):
    """The scan's answer, with the worst findings above info (the HTML table links to them).

    ``findings`` holds at most the first :data:`gpuport.assess.sources.FINDINGS_KEPT` above
    info, worst first, so a report stays a readable size; ``findings_above_info`` is how many
    there are in all, and the verdict, counts, effort and conclusions are made from all of
    them. ``unread`` lists source files the scan could not read (not UTF-8, too large, ...):
    they are no part of the findings, so they keep the verdict from ``ready``.
    """

    root: str
    target: TargetSummary
    files_scanned: int
    files_by_kind: dict[str, int]
    counts: dict[Severity, int]
    verdict: str
    verdict_reason: str
    findings: list[Finding] = Field(description="above info, worst first (the first ones)")
    findings_above_info: int = Field(description="all findings above info, shown or not")
    findings_total: int = Field(description="all findings, info included")
    skipped: list[str] = Field(default_factory=list, description="'path: reason'")
    unread: list[str] = Field(
        default_factory=list, description="source files the scan could not read: 'path: reason'"
    )
    port_items: int = Field(
        default=0, description="items `gpuport port` works on (findings above info it reads)"
    )
    port_safe_fix: int = Field(
        default=0, description="of port_items, those with a safe fix (`gpuport port` shows them)"
    )
    from_hipify: int = Field(
        default=0, description="findings added from hipify's hazard pass over unread files"
    )
    routes: list[str] = Field(
        default_factory=list,
        description="the project's own ROCm route evidence: 'kind path:line: detail'",
    )
    scope_counts: dict[str, int] = Field(
        default_factory=dict, description="findings above info per scope (core is judged)"
    )
    judged_counts: dict[Severity, int] = Field(
        default_factory=dict,
        description="findings per severity in core code: the ones the verdict is made of",
    )
    not_built: int = Field(default=0, description="files the ROCm build does not compile")
    duration_s: float

    def not_judged(self) -> str:
        """``example 4, tooling 1``: findings above info outside core code, which the verdict
        does not judge (empty when there are none)."""
        counts = sorted(self.scope_counts.items())
        return ", ".join(f"{k} {n}" for k, n in counts if k != "core" and n)

    @model_validator(mode="before")
    @classmethod
    def _count_above_info(cls, data: Any) -> Any:
        """Sections written before ``findings_above_info`` existed: every one was kept."""
        if isinstance(data, dict) and "findings_above_info" not in data:
            data = {**data, "findings_above_info": len(data.get("findings") or [])}
        return data


class UnsupportedUse(_Frozen):
    name: str
    path: str
    line: int
    reason: str


class CompileOutcome(_Frozen):
    path: str
    status: Literal["ok", "failed", "inconclusive", "not compiled"]
    error: str | None = None


class HipifySection(_Frozen):
    """A dry run of ``gpuport hipify``: nothing is written inside the project."""

    ran: bool
    reason: str = Field(default="", description="why it did not run, or what it ran on")
    hip_version: str = ""
    files: int = 0
    replacements: int = 0
    by_family: dict[str, int] = Field(default_factory=dict)
    unsupported: list[UnsupportedUse] = Field(default_factory=list)
    unsupported_counts: dict[str, int] = Field(default_factory=dict)
    hazards: int = 0
    hazards_by_rule: dict[str, int] = Field(default_factory=dict)
    unread_hazards: int = Field(
        default=0, description="hazards in files the scan could not read (counted as findings)"
    )
    local_hip_version: str = Field(default="", description="the HIP of the hipcc that compiled")
    checked: bool = False
    check_note: str = ""
    compile: list[CompileOutcome] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)


class CostSection(_Frozen):
    status: Literal["ok", "no-model", "error"]
    message: str = ""
    reports: list[CostReport] = Field(default_factory=list)


class DoctorProblem(_Frozen):
    rule_id: str
    title: str
    status: str
    fix: str


class DoctorSection(_Frozen):
    status: Literal["not-run", "ok", "problems", "unavailable"]
    message: str = ""
    summary: list[str] = Field(default_factory=list)
    problems: list[DoctorProblem] = Field(default_factory=list)
    replayed: bool = False


class BenchRunSummary(_Frozen):
    id: str
    label: str | None
    device: str
    backend: str
    suite: str
    started: str
    cases_ok: int
    cases: int
    source: str = Field(description="the reference given (file, id or label) or 'run now'")


class BenchSection(_Frozen):
    runs: list[BenchRunSummary] = Field(default_factory=list)
    comparison: Comparison | None = None
    note: str = ""


class ValidateSummary(_Frozen):
    file: str
    model_ref: str | None
    verdict: str
    verdict_reason: str
    first_divergence: str | None
    counts: dict[str, int]
    wrong: list[str] = Field(default_factory=list, description="modules judged wrong")
    different: list[str] = Field(default_factory=list, description="modules judged different")
    machines: str = Field(default="", description="'A on X vs B on Y'")


class ValidateSection(_Frozen):
    reports: list[ValidateSummary] = Field(default_factory=list)


class Assessment(BaseModel):
    """What ``gpuport assess`` found for one project: verdict, conclusions, effort, evidence.

    ``validate`` is the JSON name of :attr:`validate_` (``validate`` is a method of pydantic's
    base class); JSON is always written and read by alias.
    """

    kind: Literal["gpuport.assess"] = "gpuport.assess"
    schema_version: str = SCHEMA_VERSION
    project: str = Field(description="the folder assessed, as given")
    verdict: Readiness
    verdict_reason: str
    decision: str = Field(description="the seeds' 'choose ROCm/CUDA if' answer for this project")
    effort: AssessEffort
    conclusions: list[Conclusion]
    scan: ScanSection
    hipify: HipifySection
    cost: CostSection
    doctor: DoctorSection
    bench: BenchSection
    validate_: ValidateSection = Field(alias="validate")
    settings: list[Setting]
    assumptions: list[Assumed] = Field(
        default_factory=list, description="what the report assumed, each with its origin"
    )
    notes: list[str] = Field(default_factory=list)
    env: EnvFingerprint
    timings: dict[str, float] = Field(description="seconds per step")

    model_config = ConfigDict(
        frozen=True, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    def setting(self, name: str) -> Setting | None:
        for s in self.settings:
            if s.name == name:
                return s
        return None
