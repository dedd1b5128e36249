"""The rule registry and the context a checker reports through.

A *rule* is metadata (ID, title, severity, rationale, fix, references) plus a
predicate that says for which targets it applies. A *checker* is a function
that reads one file of one kind and calls :meth:`FileContext.report` with a
rule ID; the context turns that into a :class:`Finding`, applying target
filtering, ``gpuport: ignore`` suppressions and the ROCm-guard downgrade.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuport import textre
from gpuport.knowledge import PackageDB, TargetInfo
from gpuport.models import Location, Severity
from gpuport.scan.finding import Finding
from gpuport.scan.project.own_names import OwnNames

if TYPE_CHECKING:
    from gpuport.scan.project.cxx_facts import CxxFacts


class FileKind(enum.StrEnum):
    """What a file is, which decides which checkers read it."""

    REQUIREMENTS = "requirements"
    PYPROJECT = "pyproject"
    SETUP_PY = "setup.py"
    SETUP_CFG = "setup.cfg"
    CONDA_ENV = "conda-env"
    DOCKERFILE = "dockerfile"
    COMPOSE = "compose"
    PYTHON = "python"
    NATIVE = "cuda/c++"
    CMAKE = "cmake"
    MAKEFILE = "makefile"
    GPU_BINARY = "gpu-binary"


class Family(enum.StrEnum):
    DEPENDENCIES = "dependencies"
    PYTHON = "python"
    NATIVE = "cuda-c++"
    BUILD = "build"
    CONTAINERS = "containers"
    ENVIRONMENT = "environment"


Applies = Callable[[TargetInfo], bool]


def always(_: TargetInfo) -> bool:
    return True


def wave64(target: TargetInfo) -> bool:
    """Rules about 32-lane assumptions only matter where the wavefront is 64 wide."""
    return target.wave_size == 64


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    title: str
    severity: Severity
    family: Family
    rationale: str
    fix: str
    references: tuple[str, ...]
    effort_hours: float = 1.0
    applies: Applies = always
    applies_note: str = "all targets"
    status: str = "stable"

    def __post_init__(self) -> None:
        if not textre.fullmatch(r"GP[1-6]\d\d", self.id):
            raise ValueError(f"bad rule id {self.id!r}")
        first = int(self.id[2])
        expected = {
            Family.DEPENDENCIES: 1,
            Family.PYTHON: 2,
            Family.NATIVE: 3,
            Family.BUILD: 4,
            Family.CONTAINERS: 5,
            Family.ENVIRONMENT: 6,
        }[self.family]
        if first != expected:
            raise ValueError(f"{self.id}: family {self.family} needs GP{expected}xx")


def table_rule(
    family: Family,
    rid: str,
    name: str,
    title: str,
    severity: Severity,
    effort: float,
    note: str,
    rationale: str,
    fix: str,
    *refs: str,
) -> Rule:
    """Positional shorthand for rule tables: ``functools.partial(table_rule, Family.X)``."""
    return Rule(
        id=rid,
        name=name,
        title=title,
        severity=severity,
        family=family,
        rationale=rationale,
        fix=fix,
        references=refs,
        effort_hours=effort,
        applies_note=note,
    )


RULES: dict[str, Rule] = {}
Checker = Callable[["FileContext"], None]
CHECKERS: dict[FileKind, list[Checker]] = {}


def register(*rules: Rule) -> None:
    for rule in rules:
        if rule.id in RULES:
            raise ValueError(f"duplicate rule id {rule.id}")
        RULES[rule.id] = rule


def checker(*kinds: FileKind) -> Callable[[Checker], Checker]:
    """Decorator: run this function on every file of these kinds."""

    def deco(fn: Checker) -> Checker:
        for kind in kinds:
            CHECKERS.setdefault(kind, []).append(fn)
        return fn

    return deco


def physical_lines(text: str) -> list[str]:
    """Lines as editors and compilers count them: split on \\n, \\r\\n and \\r only.

    ``str.splitlines`` also splits on form feeds, U+2028 and other separators,
    which would put findings on the wrong line.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


#: Package category (knowledge) of another vendor's accelerator stack (Intel XPU, Gaudi):
#: the CUDA build of a project does without it, so it is no ROCm gap.
OTHER_VENDOR = "other-vendor"

_IGNORE = textre.compile(r"gpuport:\s*ignore(?:\[(?P<ids>[A-Z0-9,\s]+)\])?")


@dataclass
class FileContext:
    """One file being checked: its text, the target, the knowledge, and the findings so far."""

    rel: str
    path: Path
    kind: FileKind
    text: str
    target: TargetInfo
    packages: PackageDB
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    findings: list[Finding] = field(default_factory=list)
    skip_reason: str | None = None
    root: Path | None = None
    own: OwnNames = field(default_factory=OwnNames)  # what the project itself is called
    scratch: dict[str, object] = field(default_factory=dict)
    #: what the project's own headers say (macros hip-clang never defines, ROCm shims)
    facts: CxxFacts | None = None
    _lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = physical_lines(self.text)
        return self._lines

    def line_text(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    def enabled(self, rule_id: str) -> bool:
        rule = RULES[rule_id]
        if self.select is not None and not any(rule_id.startswith(s) for s in self.select):
            return False
        if any(rule_id.startswith(s) for s in self.ignore):
            return False
        return rule.applies(self.target)

    def suppressed(self, rule_id: str, line: int | None) -> bool:
        """Whether a ``gpuport: ignore`` comment on ``line`` silences ``rule_id``."""
        return self._suppressed(rule_id, line)

    def _suppressed(self, rule_id: str, line: int | None) -> bool:
        if line is None:
            return False
        match = _IGNORE.search(self.line_text(line))
        if match is None:
            return False
        ids = match.group("ids")
        return ids is None or rule_id in {i.strip() for i in ids.split(",")}

    def report(
        self,
        rule_id: str,
        line: int | None,
        column: int | None = None,
        *,
        message: str | None = None,
        fix: str | None = None,
        guarded: bool = False,
        severity: Severity | None = None,
        end_line: int | None = None,
    ) -> None:
        """Record a finding of ``rule_id`` at 1-based ``line``/``column``."""
        rule = RULES[rule_id]
        if not self.enabled(rule_id) or self._suppressed(rule_id, line):
            return
        sev = severity or rule.severity
        default: Severity | None = None
        if guarded and sev is not Severity.INFO:
            default, sev = sev, Severity.INFO
        snippet = self.line_text(line).strip()[:200] if line else None
        self.findings.append(
            Finding(
                rule_id=rule.id,
                title=rule.title,
                severity=sev,
                location=Location(
                    path=self.rel, line=line, column=column, end_line=end_line, snippet=snippet
                ),
                message=message or rule.title,
                fix=fix or rule.fix,
                references=list(rule.references),
                guarded=guarded,
                default_severity=default,
            )
        )


def rules_sorted() -> list[Rule]:
    return [RULES[k] for k in sorted(RULES)]


def family_rules(family: Family) -> Iterable[Rule]:
    return (r for r in rules_sorted() if r.family is family)
