"""Annotated rule fixtures, semgrep-rules style.

A fixture line carrying ``expect: GP301`` must produce that finding on that
line (not lowered by a guard); ``expect-guarded: GP301`` must produce it
lowered to info by a ROCm guard; ``ok: GP301`` must not produce it at all
unguarded. ``expect-next:`` / ``ok-next:`` / ``expect-guarded-next:`` apply to
the next line (for formats whose comments must stand alone, e.g. Dockerfiles).
Any unguarded finding on a line that does not expect it is a false positive.

A line ``gpuport-fixture: target=gfx1100`` anywhere selects the target.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.knowledge import load_packages, resolve_target
from gpuport.scan.engine import check_text
from gpuport.scan.finding import Finding
from gpuport.scan.project.files import classify

#: The rules package: each family's fixtures sit beside its detectors, in ``<family>/fixtures/``.
FIXTURES = Path(__file__).resolve().parents[2] / "src" / "gpuport" / "scan" / "rules"
_ANNOT = re.compile(r"\b(expect|expect-guarded|ok)(-next)?:\s*((?:GP\d{3}[,\s]*)+)")
_TARGET = re.compile(r"gpuport-fixture:\s*target=(\w+)")


@dataclass
class Expectations:
    expect: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    guarded: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    ok: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))


def fixture_files() -> list[Path]:
    return sorted(
        p for p in FIXTURES.glob("*/fixtures/**/*") if p.is_file() and classify(p.name) is not None
    )


def parse_annotations(text: str) -> tuple[Expectations, str]:
    exp = Expectations()
    target = "gfx942"
    lines = text.splitlines()
    for idx, line in enumerate(lines, 1):
        tmatch = _TARGET.search(line)
        if tmatch:
            target = tmatch.group(1)
        for match in _ANNOT.finditer(line):
            kind, nxt, ids = match.group(1), match.group(2), match.group(3)
            where = idx
            if nxt:
                where = idx + 1
                while where <= len(lines) and not lines[where - 1].strip():
                    where += 1
            bucket = {"expect": exp.expect, "expect-guarded": exp.guarded, "ok": exp.ok}[kind]
            bucket[where].update(re.findall(r"GP\d{3}", ids))
    return exp, target


def run_fixture(path: Path) -> tuple[list[Finding], Expectations]:
    text = path.read_text(encoding="utf-8")
    exp, target_name = parse_annotations(text)
    kind = classify(path.name)
    assert kind is not None, path
    rel = path.relative_to(FIXTURES).as_posix()
    findings, _ = check_text(
        rel, text, kind, resolve_target(target_name), load_packages(), path=path
    )
    return findings, exp


def problems(path: Path) -> list[str]:
    """Every way the fixture's annotations and the findings disagree."""
    findings, exp = run_fixture(path)
    own = path.relative_to(FIXTURES).as_posix()
    findings = [f for f in findings if f.location.path == own]  # not those of included files
    unguarded: dict[int, set[str]] = defaultdict(set)
    guarded: dict[int, set[str]] = defaultdict(set)
    for f in findings:
        line = f.location.line or 0
        (guarded if f.guarded else unguarded)[line].add(f.rule_id)
    out: list[str] = []
    name = path.name
    for line, ids in exp.expect.items():
        for rid in sorted(ids - unguarded[line]):
            out.append(f"{name}:{line}: expected {rid}, got {sorted(unguarded[line]) or 'nothing'}")
    for line, ids in exp.guarded.items():
        for rid in sorted(ids - guarded[line]):
            out.append(
                f"{name}:{line}: expected guarded {rid}, got {sorted(guarded[line]) or 'nothing'}"
            )
    for line, ids in exp.ok.items():
        for rid in sorted(ids & unguarded[line]):
            out.append(f"{name}:{line}: {rid} fired but the line says ok")
    for line, ids in unguarded.items():
        for rid in sorted(ids - exp.expect.get(line, set())):
            out.append(f"{name}:{line}: unexpected {rid} (annotate `expect: {rid}` if right)")
    return out


def coverage() -> tuple[dict[str, int], dict[str, int]]:
    """How many positive and negative annotations each rule ID has across fixtures."""
    pos: dict[str, int] = defaultdict(int)
    neg: dict[str, int] = defaultdict(int)
    for path in fixture_files():
        exp, _ = parse_annotations(path.read_text(encoding="utf-8"))
        for ids in list(exp.expect.values()) + list(exp.guarded.values()):
            for rid in ids:
                pos[rid] += 1
        for ids in exp.ok.values():
            for rid in ids:
                neg[rid] += 1
    return pos, neg
