"""Findings grouped the way a reader fixes them: by rule and fix, then by message, then by file.

A real library repeats one finding many times (one package imported from twenty files, one
warp mask on forty lines). Printed one per row, each with its message and fix, a report of a
500-file project runs to thousands of lines and says the same fix forty times. Grouped, the fix
is printed once per rule, the message once per distinct text, and the places under it, one
line per file (``path:12, 40, 97``). Every finding is still there: nothing is summarised away.

Plain data, no rich: the terminal and the compact CI format both read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gpuport.models import Severity
from gpuport.scan.finding import Finding

#: The order scopes are listed in: the judged one first, then by how close to the product.
SCOPE_ORDER = (
    "core",
    "extra",
    "tooling",
    "example",
    "benchmark",
    "test",
    "docs",
    "other-vendor",
)


def scope_rank(scope: str) -> tuple[int, str]:
    return (SCOPE_ORDER.index(scope) if scope in SCOPE_ORDER else len(SCOPE_ORDER), scope)


@dataclass
class Places:
    """The findings of one message in one file."""

    path: str
    findings: list[Finding] = field(default_factory=list)

    def display(self, path: str | None = None) -> str:
        """``path:12:5`` for one finding; ``path:12,40,97`` for several (columns dropped);
        ``path`` replaces the file's path (its name alone, under a folder heading)."""
        name = self.path if path is None else path
        if len(self.findings) == 1:
            loc = self.findings[0].location
            return name + loc.display().removeprefix(loc.path)
        lines = [f.location.line for f in self.findings if f.location.line is not None]
        if not lines:
            return name
        return f"{name}:" + ",".join(str(n) for n in dict.fromkeys(lines))

    @property
    def marks(self) -> str:
        """``(ROCm-guarded)`` when every finding here is inside a ROCm branch, and the scope
        when it is not core: shown after the place."""
        out = []
        if all(f.guarded for f in self.findings):
            out.append("ROCm-guarded")
        not_built = {f.not_built for f in self.findings if f.not_built}
        if not_built:
            out.append("not built: " + "; ".join(sorted(not_built)))
        return f" ({', '.join(out)})" if out else ""


@dataclass
class MessageGroup:
    message: str
    places: list[Places] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(p.findings) for p in self.places)

    def by_folder(self) -> list[str]:
        """The places as text, one item per folder: ``a/b.py:3`` for a folder's only file,
        ``a/: b.py:3, c.py:7,9`` for several (a long folder is written once, not per file)."""
        folders: dict[str, list[Places]] = {}
        for place in self.places:
            folders.setdefault(place.path.rpartition("/")[0], []).append(place)
        out = []
        for folder, places in folders.items():
            if len(places) == 1:
                out.append(places[0].display() + places[0].marks)
                continue
            names = [p.display(p.path.rpartition("/")[2]) + p.marks for p in places]
            out.append((f"{folder}/: " if folder else "") + ", ".join(names))
        return out


@dataclass
class FixGroup:
    """The findings of one rule that share a fix: the fix is printed once for all of them."""

    fix: str
    messages: list[MessageGroup] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(m.count for m in self.messages)


@dataclass
class RuleGroup:
    """One rule at one severity: its title once, then each fix with its messages."""

    rule_id: str
    title: str
    severity: Severity
    fixes: list[FixGroup] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(x.count for x in self.fixes)

    @property
    def findings(self) -> list[Finding]:
        return [f for x in self.fixes for m in x.messages for p in m.places for f in p.findings]


def group(findings: Iterable[Finding], rule_order: Sequence[str] = ()) -> list[RuleGroup]:
    """Group ``findings`` by (rule, severity), then fix, then message, then file, keeping the
    first appearance order inside each; groups come worst severity first, then in
    ``rule_order`` (e.g. by impact), then by rule id."""
    by_key: dict[tuple[str, Severity], RuleGroup] = {}
    fixes: dict[tuple[str, Severity, str], FixGroup] = {}
    messages: dict[tuple[str, Severity, str, str], MessageGroup] = {}
    places: dict[tuple[str, Severity, str, str, str], Places] = {}
    for f in findings:
        key = (f.rule_id, f.severity)
        if key not in by_key:
            by_key[key] = RuleGroup(f.rule_id, f.title, f.severity)
        fix_key = (*key, f.fix)
        if fix_key not in fixes:
            fixes[fix_key] = FixGroup(f.fix)
            by_key[key].fixes.append(fixes[fix_key])
        msg_key = (*fix_key, f.message)
        if msg_key not in messages:
            messages[msg_key] = MessageGroup(f.message)
            fixes[fix_key].messages.append(messages[msg_key])
        place_key = (*msg_key, f.location.path)
        if place_key not in places:
            places[place_key] = Places(f.location.path)
            messages[msg_key].places.append(places[place_key])
        places[place_key].findings.append(f)
    rank = {r: i for i, r in enumerate(rule_order)}
    return sorted(
        by_key.values(),
        key=lambda g: (-g.severity.rank, rank.get(g.rule_id, len(rank)), g.rule_id),
    )


def by_scope(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """``(scope, findings)`` in :data:`SCOPE_ORDER`, each scope once, none empty."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.scope, []).append(f)
    return sorted(out.items(), key=lambda kv: scope_rank(kv[0]))


def counts_text(findings: Sequence[Finding]) -> str:
    """``2 blocker, 1 major`` (severities present only, worst first)."""
    parts = []
    for sev in Severity:
        n = sum(1 for f in findings if f.severity is sev)
        if n:
            parts.append(f"{n} {sev.value}")
    return ", ".join(parts)


__all__ = [
    "SCOPE_ORDER",
    "FixGroup",
    "MessageGroup",
    "Places",
    "RuleGroup",
    "by_scope",
    "counts_text",
    "group",
    "scope_rank",
]
