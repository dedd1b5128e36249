"""Result model of ``gpuport port``: the fixes, the diff they make, what was left.

A *fix* addresses one or more scan findings with edits to existing files and new files
beside them. Every fix is *safe* (the behaviour of everything that already built and ran is
kept: a CUDA build sees the same code, and only a ROCm path that did not exist or did not
build changes) or *unsafe* (it can change what a build that worked does; applied only with
``--unsafe-fixes``), with the reason either way. The diff is made of hunks, and every hunk
names the findings whose fixes made it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport import textre
from gpuport.knowledge import TargetInfo
from gpuport.models import HIDDEN_CHARS, SCHEMA_VERSION, EnvFingerprint

__all__ = [
    "CheckResult",
    "FileDiff",
    "FindingRef",
    "Fix",
    "Hunk",
    "PortReport",
    "Unfixed",
    "Verification",
]


class FindingRef(BaseModel):
    """A scan finding a fix addresses: enough to find it again in a scan report."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    path: str
    line: int | None = None
    message: str = ""

    def label(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{self.rule_id} {where}"


class Fix(BaseModel):
    """One fix: what it does, whether it is safe and why, the findings it addresses."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="stable name, e.g. setup-py-hip-flags:setup.py")
    family: str = Field(description="dependencies, containers, compose, python, kernels, ...")
    title: str
    safe: bool
    why: str = Field(description="why the fix is safe, or what it can change")
    findings: list[FindingRef]
    files: list[str] = Field(description="files the fix changes or creates")
    applied: bool = Field(description="part of this run's diff (safe, or --unsafe-fixes)")
    note: str = Field(default="", description="what a reviewer should check")


class Hunk(BaseModel):
    """One hunk of a unified diff and the findings whose fixes made it."""

    model_config = ConfigDict(frozen=True)

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str] = Field(description="hunk body: each line starts with ' ', '-' or '+'")
    findings: list[str] = Field(description="labels of the findings it addresses (GP402 a:12)")
    fixes: list[str] = Field(description="ids of the fixes that made it")

    def header(self) -> str:
        names = compact(self.findings) if self.findings else "gpuport port"
        return (
            f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@ "
            f"gpuport: {_escaped(names)}"
        )


#: what makes git quote a path in a diff header, and the characters that hide or reorder text
_QUOTED = textre.compile(f'["\\\\{HIDDEN_CHARS}\t\n]')
_C_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    return _C_ESCAPES.get(ch) or "".join(
        f"\\{b:03o}" for b in ch.encode("utf-8", "surrogateescape")
    )


def _escaped(text: str) -> str:
    """``text`` with every character :data:`_QUOTED` matches written as git writes it in a
    quoted path (``\\n``, ``\\"``, octal bytes): one line, nothing for a terminal to act on."""
    return _QUOTED.sub(_escape_char, text)


def diff_name(prefix: str, path: str) -> str:
    """``prefix + path`` for a diff header, quoted as git quotes it when the name holds a
    quote, a backslash, a newline, a control or a bidi character (``"a/n\\n+++ b/x.cu"``):
    a file name cannot add header lines to the diff, and ``git apply`` reads the name back."""
    name = prefix + path
    return f'"{_escaped(name)}"' if _QUOTED.search(name) else name


def compact(labels: list[str]) -> str:
    """``GP402 setup.py:108, GP402 setup.py:110`` -> ``GP402 setup.py:108,110``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for label in labels:
        rule, _, where = label.partition(" ")
        path, sep, line = where.rpartition(":")
        if not sep or not line.isdigit():
            path, line = where, ""
        groups.setdefault((rule, path), [])
        if line:
            groups[(rule, path)].append(line)
    out = []
    for (rule, path), lines in groups.items():
        out.append(f"{rule} {path}" + (":" + ",".join(lines) if lines else ""))
    return "; ".join(out)


class FileDiff(BaseModel):
    """The changes to one file (``create``: a new file beside the CUDA path)."""

    model_config = ConfigDict(frozen=True)

    path: str
    action: Literal["create", "modify"]
    hunks: list[Hunk]
    fixes: list[str]

    def unified(self) -> str:
        """This file's part of the unified diff (``git apply`` and ``patch -p1`` read it)."""
        old = "/dev/null" if self.action == "create" else diff_name("a/", self.path)
        out = [f"--- {old}", f"+++ {diff_name('b/', self.path)}"]
        for hunk in self.hunks:
            out.append(hunk.header())
            out.extend(hunk.lines)
        return "\n".join(out) + "\n"


class Unfixed(BaseModel):
    """A finding ``port`` leaves to a person, with the reason."""

    model_config = ConfigDict(frozen=True)

    finding: FindingRef
    reason: str


class CheckResult(BaseModel):
    """``--check``: one changed native file compiled by one compiler."""

    model_config = ConfigDict(frozen=True)

    path: str
    compiler: Literal["hipcc", "nvcc"]
    status: str = Field(description="ok, failed, inconclusive, not compiled, skipped")
    error: str | None = None
    command: list[str] = Field(default_factory=list)
    notes: list[str] = Field(
        default_factory=list, description="project flags dropped before the compile, and why"
    )


class Verification(BaseModel):
    """After ``--apply``: the project scanned again."""

    model_config = ConfigDict(frozen=True)

    addressed: int = Field(description="findings the applied fixes address")
    still_reported: list[str] = Field(
        description="addressed findings the new scan still reports above info"
    )
    new_findings: list[str] = Field(description="findings above info the old scan did not have")


class PortReport(BaseModel):
    """Everything ``gpuport port`` computed (and, with ``--apply``, wrote) for one project."""

    model_config = ConfigDict(defer_build=True)

    schema_version: str = SCHEMA_VERSION
    kind: Literal["gpuport.port"] = "gpuport.port"
    root: str
    target: TargetInfo
    mode: Literal["diff", "apply"]
    unsafe_fixes: bool
    fixes: list[Fix]
    files: list[FileDiff]
    unfixed: list[Unfixed]
    findings_total: int = Field(description="findings above info the scan reported")
    findings_with_safe_fix: int
    findings_with_fix: int = Field(description="with a safe or an unsafe fix")
    written: list[str] = Field(default_factory=list)
    backups: list[str] = Field(default_factory=list)
    checks: list[CheckResult] = Field(default_factory=list)
    verification: Verification | None = None
    fingerprint: EnvFingerprint
    duration_s: float

    def diff(self) -> str:
        """The whole unified diff, file by file."""
        return "".join(f.unified() for f in self.files)
