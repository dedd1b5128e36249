"""What every fix family sees: the scan's findings, the project's files, the knowledge; and
what it hands back: :class:`Proposal`\\ s of edits and new files.

Families never write: they read the project through :meth:`PortContext.read` (the file layer,
bounded, never through a link out of the project) and return proposals; the engine decides
which are taken and writes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import fileio, textre
from gpuport.knowledge import PackageDB, TargetInfo
from gpuport.models import GpuportError, Severity
from gpuport.port.model import FindingRef
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport
from gpuport.scan.project.files import safe_name

__all__ = ["PortContext", "Proposal", "ref", "rules_in", "unique", "unrun"]

#: Scopes whose findings ``port`` fixes: everything a user installs, builds or runs, not
#: documentation pages.
FIXED_SCOPES = frozenset({"core", "tooling", "extra", "test", "example", "benchmark"})


def ref(f: Finding) -> FindingRef:
    return FindingRef(
        rule_id=f.rule_id, path=f.location.path, line=f.location.line, message=f.message
    )


def unique(findings: Iterable[Finding]) -> list[Finding]:
    """Each finding once (by rule, place and message), in order."""
    seen: set[tuple[str, str, int | None, int | None, str]] = set()
    out: list[Finding] = []
    for f in findings:
        key = (f.rule_id, f.location.path, f.location.line, f.location.column, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def rules_in(findings: Iterable[Finding], *prefixes: str) -> list[Finding]:
    return [f for f in findings if f.rule_id.startswith(prefixes)]


@dataclass
class Proposal:
    """One fix as a family proposes it: spans on original files, whole new files."""

    id: str
    family: str
    title: str
    safe: bool
    why: str
    findings: list[Finding]
    #: path -> (start, end, new text, the findings this edit addresses; empty: all the fix's)
    edits: dict[str, list[tuple[int, int, str, tuple[Finding, ...]]]] = field(default_factory=dict)
    creates: dict[str, str] = field(default_factory=dict)
    note: str = ""
    #: proposals with one group are alternatives (a safe form and an unsafe superset of it):
    #: the engine takes the unsafe one with --unsafe-fixes, else the safe one
    group: str = ""
    #: False for a fix that checks its findings rather than removes them (a CI job): they
    #: are named in its hunks but not counted as fixed
    resolves: bool = True

    def edit(
        self, path: str, start: int, end: int, new: str, findings: Iterable[Finding] = ()
    ) -> None:
        self.edits.setdefault(path, []).append((start, end, new, tuple(findings)))

    def files(self) -> list[str]:
        return sorted({*self.edits, *self.creates})


@dataclass
class PortContext:
    """The project as the fix families see it."""

    root: Path
    report: ScanReport
    packages: PackageDB
    target: TargetInfo
    findings: list[Finding]
    _texts: dict[str, str | None] = field(default_factory=dict)
    #: what one family computed and another reads (the dependency routes a Dockerfile uses)
    cache: dict[str, object] = field(default_factory=dict)
    #: (rule, path, line) -> why a family left the finding to a person
    declined: dict[tuple[str, str, int | None], str] = field(default_factory=dict)
    #: what a family found itself (scan reads no such file) and left, with the reason: a
    #: report line each (``unfixed``), not counted among the scan's findings
    reports: list[tuple[Finding, str]] = field(default_factory=list)

    def decline(self, findings: Iterable[Finding], why: str) -> None:
        """Say why ``findings`` get no fix (shown in ``unfixed``)."""
        for f in findings:
            self.declined.setdefault((f.rule_id, f.location.path, f.location.line), why)

    def report_line(self, finding: Finding, why: str) -> None:
        """Say that ``finding`` (one a family read itself) gets no fix, and why."""
        if all(f != finding for f, _ in self.reports):
            self.reports.append((finding, why))

    def read(self, rel: str) -> str | None:
        """The text of project file ``rel`` (bad UTF-8 kept byte for byte), or None when it
        is missing, too large, not a regular file or a link out of the project."""
        if rel not in self._texts:
            path = self.root / rel
            try:
                self._texts[rel] = fileio.read_text(
                    path, limit=fileio.LIMIT_SOURCE, root=self.root, errors="surrogateescape"
                )
            except GpuportError:
                self._texts[rel] = None
        return self._texts[rel]

    def exists(self, rel: str) -> bool:
        """Whether anything (a file, a folder, a link, even a dangling one) is at ``rel``."""
        return os.path.lexists(self.root / rel)

    def listdir(self, rel: str) -> list[str]:
        """Names in project folder ``rel`` (empty when it is not a folder inside the project)."""
        path = self.root / rel
        if fileio.outside_root(path, self.root) is not None or not path.is_dir():
            return []
        try:  # a name that is not UTF-8 or holds a control character (a newline) is never
            # listed: it would reach a file gpuport writes, or a report (thirty-sixth re-run
            # F3, F9: a workflow named with a newline became live YAML in the ROCm copy)
            return sorted(
                p.name
                for p in path.iterdir()
                if p.name.isprintable() and safe_name(p.name) == p.name
            )
        except OSError:
            return []

    def files_of(self, kind: str) -> list[str]:
        """The project's files of one scan kind (``"compose"``, ``"cuda/c++"``), walked as
        ``scan`` walks (.gitignore honoured, no folder links followed), once per run."""
        cached = self.cache.get("files-by-kind")
        if isinstance(cached, dict):
            return sorted(cached.get(kind, []))
        from gpuport.scan.project.files import Candidate, walk

        table: dict[str, list[str]] = {}
        if self.root.is_dir():
            for item in walk(self.root):
                if isinstance(item, Candidate):
                    table.setdefault(str(item.kind), []).append(item.rel)
        self.cache["files-by-kind"] = table
        return sorted(table.get(kind, []))

    def of(self, *prefixes: str, path: str | None = None) -> list[Finding]:
        out = rules_in(self.findings, *prefixes)
        if path is not None:
            out = [f for f in out if f.location.path == path]
        return out

    def files_with(self, *prefixes: str) -> list[str]:
        return sorted({f.location.path for f in self.of(*prefixes)})

    @staticmethod
    def eol(text: str) -> str:
        return "\r\n" if "\r\n" in text[:4096] else "\n"


#: folders of files nobody runs as they are: kept for reference or copied to start from
_UNRUN = textre.compile(
    r"^(?:legacy|deprecated|archived?|archives|attic|obsolete|templates?)$", re.I
)


def unrun(path: str) -> bool:
    """Whether ``path`` lies in a legacy, archived or template folder."""
    return any(_UNRUN.match(part) for part in path.split("/")[:-1])


def fixable(report: ScanReport, findings: Iterable[Finding] | None = None) -> list[Finding]:
    """The findings ``port`` works on (of ``report``, or ``findings``): above info, in a scope
    a user builds or runs, not in a legacy, archived or template folder."""
    return [
        f
        for f in (report.findings if findings is None else findings)
        if f.severity is not Severity.INFO
        and f.scope in FIXED_SCOPES
        and not unrun(f.location.path)
    ]
