"""The evidence the decision engine reads, and helpers that turn it into :class:`Evidence`.

Why a separate bundle: the criteria in :mod:`gpuport.assess.criteria` are pure functions of
this one object, so each can be tested with hand-made sections (a cost report where MI300X
fits on one GPU, a validate report that says *wrong*) without running any core.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from gpuport import textre
from gpuport.assess.config import Settings
from gpuport.assess.model import (
    BenchSection,
    CostSection,
    DoctorSection,
    Evidence,
    HipifySection,
    ScanSection,
    ValidateSection,
)
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import Effort

#: Rules about 32-lane warp assumptions (masks, & 31, >> 5, offset-16 shuffles, [32] arrays,
#: 32-bit ballots, warpSize as a constant): "fix these first" on a wave64 target.
WAVE_RULES = frozenset({"GP302", "GP303", "GP304", "GP305", "GP306", "GP307", "GP308"})
#: Packages and imports with no ROCm build at all.
CUDA_ONLY_PACKAGE_RULES = frozenset({"GP101", "GP201"})
#: Inline PTX: in CUDA C++ (GP301) and in Triton kernels (GP212). hipify cannot translate it.
INLINE_PTX_RULES = frozenset({"GP301", "GP212"})
_ANCHOR_UNSAFE = textre.compile(r"[^a-z0-9]+")


def anchor(*parts: str) -> str:
    """An HTML id from catalog keys or names: lower case, ``[a-z0-9-]`` only."""
    return "-".join(_ANCHOR_UNSAFE.sub("-", p.lower()).strip("-") or "x" for p in parts)


@dataclass(frozen=True)
class Facts:
    """Every section an assessment gathered, as the criteria see them.

    ``above_info`` is every finding above info, worst first: the scan section of the report
    keeps only the first ones (:data:`gpuport.assess.sources.FINDINGS_KEPT`), and a
    conclusion made from those alone would undercount. When it is not given (hand-made
    facts in tests), the section's findings are all there is.
    """

    settings: Settings
    scan: ScanSection
    scan_effort: Effort
    hipify: HipifySection = field(default_factory=lambda: HipifySection(ran=False))
    cost: CostSection = field(default_factory=lambda: CostSection(status="no-model"))
    bench: BenchSection = field(default_factory=BenchSection)
    validate: ValidateSection = field(default_factory=ValidateSection)
    doctor: DoctorSection = field(default_factory=lambda: DoctorSection(status="not-run"))
    above_info: tuple[Finding, ...] | None = None

    @property
    def all_findings(self) -> Sequence[Finding]:
        return self.scan.findings if self.above_info is None else self.above_info

    def findings(
        self, *, rules: frozenset[str] | None = None, prefix: str = ""
    ) -> Iterator[tuple[str, Finding]]:
        """``(anchor, finding)`` above info in core code (what the verdict judges: a CUDA
        Dockerfile in ``docker/`` or an NVIDIA-only example is no conclusion about the
        project), worst first, filtered by rule ids or a prefix.

        The anchor is the finding's row in the report (``finding-N``), or ``findings`` (the
        section) for a finding past the rows the report carries.
        """
        kept = len(self.scan.findings)
        for i, f in enumerate(self.all_findings):
            if f.scope != "core":
                continue  # the verdict judges core code; the other scopes are counted apart
            if rules is not None and f.rule_id not in rules:
                continue
            if prefix and not f.rule_id.startswith(prefix):
                continue
            yield (f"finding-{i + 1}" if i < kept else "findings"), f


def finding_evidence(anchor_id: str, f: Finding) -> Evidence:
    return Evidence(
        kind="finding",
        ref=f.rule_id,
        label=f"{f.rule_id} {f.location.display()}",
        anchor=anchor_id,
        location=f.location,
    )


def worst(findings: list[tuple[str, Finding]]) -> Severity:
    return max((f.severity for _, f in findings), key=lambda s: s.rank, default=Severity.INFO)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def places(findings: list[tuple[str, Finding]], limit: int = 3) -> str:
    """``csrc/k.cu:27, csrc/k.cu:67 and 2 more``."""
    shown = [f.location.display() for _, f in findings[:limit]]
    more = len(findings) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
