"""Issue 27's backtest: gpuport's effort estimate against how long real ROCm ports took.

The ports are in ``benchmarks/effort_ports.toml``: for each, the commit just before the port
and the commit that completes it, and where the port's own commits are visible. Give it a
folder of bare git directories (``GITS/owner+name/repo``, ``GITS/owner+name.git`` or
``GITS/owner+name``, as the ``fetch`` tool or ``git clone --bare`` leave them):

    python benchmarks/effort_backtest.py history GITS            # A, S, real range per port
    python benchmarks/effort_backtest.py split --seed 27         # the dev/held-out split
    python benchmarks/effort_backtest.py run GITS --trees DIR [--split dev|held-out|all]
                                                    [--out table.md] [--json out.json]

``history`` derives each port's real engineer-day range from its commits (see the TOML's
header); ``run`` extracts both trees with ``git archive`` (into ``--trees``, reused when
there), scans each with gpuport in this process, and writes one row per port: the estimate
on the commit before the port against the real range widened 2x each way, how far off it
is, and whether the verdict moved from major/blocked toward minor/ready and the findings the
port fixed are gone after it. Nothing in the trees is run; the scan reads them as text.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from gpuport.scan.verdict import judged

PORTS = Path(__file__).with_name("effort_ports.toml")
WIDEN = 2.0  # the real range is widened 2x each way before it is compared
FAR = 4.0  # an estimate more than 4x from the real range is "far off"
RANK = {"ready": 0, "minor work": 1, "major work": 2, "blocked": 3}


def load_ports(path: Path = PORTS) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return list(tomllib.load(fh)["port"])


def git_dir(gits: Path, repo: str) -> Path:
    """The bare git directory of ``owner/name`` under ``gits``."""
    flat = repo.replace("/", "+")
    for cand in (gits / flat / "repo", gits / f"{flat}.git", gits / flat):
        if (cand / "HEAD").is_file():
            return cand
    raise SystemExit(f"no git directory for {repo} under {gits} (tried {flat}/repo, {flat}.git)")


def git(gdir: Path, *args: str) -> str:
    cmd = ["git", f"--git-dir={gdir}", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


# --- history: the real range --------------------------------------------------------------


@dataclass(frozen=True)
class History:
    commits: int
    persons: dict[str, int]  # person -> commits
    author_days: int  # A
    span_days: float  # S
    first: str
    last: str
    source: str

    @property
    def real(self) -> tuple[float, float]:
        return real_range(self.author_days, self.span_days)


def real_range(a: float, s: float) -> tuple[float, float]:
    """[A/2, max(A, min(S, 3A))] (the TOML's header says why)."""
    return round(a / 2, 1), round(max(a, min(s, 3 * a)), 1)


def history(port: dict[str, Any], gits: Path) -> History:
    if "work" not in port:  # a squashed port: the PR thread's figures
        a = float(port["author_days"])
        s = round(float(port["span_calendar_days"]) * 5 / 7, 1)
        return History(0, {}, int(a), s, "", "", port.get("source", "PR thread"))
    gdir = git_dir(gits, port.get("history", port["repo"]))
    out = git(gdir, "log", "--no-merges", "--format=%ad|%an|%ae", "--date=short", *port["work"])
    aliases: dict[str, str] = port.get("aliases", {})
    exclude = set(port.get("exclude", ()))
    days: dict[str, set[dt.date]] = {}
    persons: dict[str, int] = {}
    for line in out.splitlines():
        date, name, _email = line.split("|", 2)
        if name in exclude:
            continue
        who = aliases.get(name, name)
        days.setdefault(who, set()).add(dt.date.fromisoformat(date))
        persons[who] = persons.get(who, 0) + 1
    a = sum(len(d) for d in days.values())
    s = sum(((max(d) - min(d)).days + 1) * 5 / 7 for d in days.values())
    every = sorted(x for d in days.values() for x in d)
    return History(
        commits=sum(persons.values()),
        persons=dict(sorted(persons.items(), key=lambda kv: -kv[1])),
        author_days=a,
        span_days=round(s, 1),
        first=every[0].isoformat() if every else "",
        last=every[-1].isoformat() if every else "",
        source="commits",
    )


def diffstat(port: dict[str, Any], gits: Path) -> str:
    gdir = git_dir(gits, port["repo"])
    return git(gdir, "diff", "--shortstat", port["before"], port["after"]).strip()


def changed_files(port: dict[str, Any], gits: Path) -> set[str]:
    gdir = git_dir(gits, port["repo"])
    return set(git(gdir, "diff", "--name-only", port["before"], port["after"]).split())


# --- split ---------------------------------------------------------------------------------


def split(ports: Sequence[dict[str, Any]], seed: int, dev_share: float = 2 / 3) -> dict[str, str]:
    """Stratified by regime: in each, a seeded shuffle, the first ~2/3 (rounded) are dev."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible split, not a secret
    out: dict[str, str] = {}
    for regime in sorted({p["regime"] for p in ports}):
        names = sorted(p["name"] for p in ports if p["regime"] == regime)
        rng.shuffle(names)
        n_dev = max(1, round(len(names) * dev_share))
        for i, name in enumerate(names):
            out[name] = "dev" if i < n_dev else "held-out"
    return out


# --- run -----------------------------------------------------------------------------------


def extract(port: dict[str, Any], which: str, gits: Path, trees: Path) -> Path:
    """The tree at ``port[which]`` under ``trees`` (extracted once). Blobs the snapshot lacks
    (files of 4 MiB and more are left out of fetched snapshots), links and submodules are
    skipped; the count of missing blobs is written next to the tree."""
    sha = port[which]
    dest = trees / f"{port['name']}-{sha[:12]}"
    if (dest / ".complete").is_file():
        return dest
    gdir = git_dir(gits, port["repo"])
    listing = git(gdir, "ls-tree", "-r", "-z", sha).split("\0")
    blobs: list[tuple[str, str]] = []
    for entry in listing:
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, obj = meta.split()
        if kind == "blob" and mode != "120000":
            blobs.append((obj, path))
    missing = 0
    cmd = ["git", f"--git-dir={gdir}", "cat-file", "--batch"]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for obj, path in blobs:
            proc.stdin.write(obj.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                missing += 1
                continue
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)
            out = dest / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        proc.stdin.close()
    (dest / ".complete").write_text(f"{sha}\nmissing blobs: {missing}\n")
    return dest


def effort_range(report: ScanReport) -> tuple[float, float]:
    e = report.effort
    return float(e.low_days), float(e.high_days)


def off_by(est: tuple[float, float], real: tuple[float, float]) -> float:
    """How many times the estimate is from the real range (1.0 when they overlap)."""
    lo, hi = est
    rlo, rhi = real
    if hi < rlo:
        return rlo / max(hi, 0.05)
    if lo > rhi:
        return lo / max(rhi, 0.05)
    return 1.0


def verdict_moved(before: str, after: str) -> tuple[bool, bool]:
    """(moved the right way, stayed): after is better than before, or it stays minor/ready."""
    if RANK[after] < RANK[before]:
        return True, False
    stayed = RANK[before] <= RANK["minor work"] and RANK[after] <= RANK[before]
    return stayed, stayed


def serious(report: ScanReport) -> set[tuple[str, str, str]]:
    """Core blocker/major findings, keyed without line numbers (lines move in a port)."""
    return {
        (f.rule_id, f.location.path, f.message)
        for f in judged(report.findings, report.scope)
        if f.severity.rank >= Severity.MAJOR.rank
    }


def components(report: ScanReport) -> list[dict[str, Any]]:
    """The estimate's components, when the model reports them."""
    comps = getattr(report.effort, "components", None) or []
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "regime": c.regime,
            "days": [c.low_days, c.high_days],
            "amd_equivalent": c.amd_equivalent,
        }
        for c in comps
    ]


def run_port(port: dict[str, Any], gits: Path, trees: Path) -> dict[str, Any]:
    hist = history(port, gits)
    real = hist.real
    before = scan_path(extract(port, "before", gits, trees), ScanOptions())
    after = scan_path(extract(port, "after", gits, trees), ScanOptions())
    est = effort_range(before)
    wide = (real[0] / WIDEN, real[1] * WIDEN)
    touched = changed_files(port, gits)
    top = before.root.rstrip("/").rsplit("/", 1)[-1]

    def in_port(key: tuple[str, str, str]) -> bool:
        path = key[1].split("/", 1)[1] if key[1].startswith(top + "/") else key[1]
        return path in touched

    fixed_before = {k for k in serious(before) if in_port(k)}
    after_keys = {
        (r, p.replace(after.root.rstrip("/").rsplit("/", 1)[-1], top, 1), m)
        for r, p, m in serious(after)
    }
    gone = len(fixed_before - after_keys)
    v0, v1 = before.verdict.value, after.verdict.value
    moved, stayed = verdict_moved(v0, v1)
    return {
        "name": port["name"],
        "regime": port["regime"],
        "split": port["split"],
        "real": list(real),
        "widened": [round(wide[0], 2), round(wide[1], 1)],
        "estimate": list(est),
        "overlaps": est[1] >= wide[0] and est[0] <= wide[1],
        "off_by": round(off_by(est, real), 2),
        "verdict_before": v0,
        "verdict_after": v1,
        "verdict_moved": moved,
        "verdict_stayed": stayed,
        "serious_in_port_files": len(fixed_before),
        "gone_after": gone,
        "components": components(before),
        "history": {"A": hist.author_days, "S": hist.span_days, "source": hist.source},
    }


def _moved_note(row: dict[str, Any]) -> str:
    if not row["verdict_moved"]:
        return " (**no**)"
    return " (stayed)" if row.get("verdict_stayed") else ""


def table(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        "| port | regime | split | real (eng-days) | estimate before the port | overlaps 2x | "
        "off by | verdict before → after | serious findings in port files: gone |\n"
        "|---|---|---|---|---|---|---:|---|---|\n"
    )
    lines = []
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['regime']} | {r['split']} | {r['real'][0]:g}–{r['real'][1]:g} | "
            f"{r['estimate'][0]:g}–{r['estimate'][1]:g} | {'yes' if r['overlaps'] else '**no**'} | "
            f"{r['off_by']:g}x | {r['verdict_before']} → {r['verdict_after']}"
            f"{_moved_note(r)} | "
            f"{r['gone_after']}/{r['serious_in_port_files']} |"
        )
    n = len(rows)
    ok = sum(r["overlaps"] for r in rows)
    far = sum(r["off_by"] > FAR for r in rows)
    moved = sum(r["verdict_moved"] for r in rows)
    summary = (
        f"\n{ok}/{n} estimates overlap the real range widened {WIDEN:g}x each way; "
        f"{far} more than {FAR:g}x off; verdicts moved the right way on {moved}/{n}.\n"
    )
    return head + "\n".join(lines) + "\n" + summary


def history_table(ports: Sequence[dict[str, Any]], gits: Path) -> str:
    """One row per port: where, who, when, how big, and the real range."""
    out = [
        "| port | regime | split | before → after | who (commits) | work seen | A | S | "
        "diffstat | real (eng-days) |",
        "|---|---|---|---|---|---|---:|---:|---|---|",
    ]
    for p in ports:
        hist = history(p, gits)
        lo, hi = hist.real
        if hist.source == "commits":
            who = ", ".join(f"{k} ({v})" for k, v in hist.persons.items())
            seen = f"{hist.first} .. {hist.last}"
        else:
            who, seen = p.get("thread", ""), hist.source
        stat = diffstat(p, gits).replace(" files changed", " files").replace(" insertions(+)", "+")
        stat = stat.replace(" deletions(-)", "-").replace(" insertion(+)", "+")
        out.append(
            f"| [{p['name']}]({p['url']}) | {p['regime']} | {p['split']} | "
            f"`{p['before'][:10]}` → `{p['after'][:10]}` | {who} | {seen} | "
            f"{hist.author_days} | {hist.span_days:g} | {stat} | {lo:g}–{hi:g} |"
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("history", help="each port's real engineer-day range from its commits")
    h.add_argument("gits", type=Path)
    h.add_argument("--markdown", action="store_true", help="the table docs/effort.md shows")
    s = sub.add_parser("split", help="the seeded dev/held-out split")
    s.add_argument("--seed", type=int, default=27)
    r = sub.add_parser("run", help="scan before/after each port and compare")
    r.add_argument("gits", type=Path)
    r.add_argument("--trees", type=Path, required=True, help="where trees are extracted")
    r.add_argument("--split", choices=("dev", "held-out", "all"), default="dev")
    r.add_argument("--only", nargs="*", default=None, help="port names")
    r.add_argument("--out", type=Path)
    r.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    ports = load_ports()
    if args.cmd == "split":
        for name, part in split(ports, args.seed).items():
            print(f"{name}\t{part}")
        return 0
    if args.cmd == "history" and args.markdown:
        print(history_table(ports, args.gits))
        return 0
    if args.cmd == "history":
        for p in ports:
            hist = history(p, args.gits)
            lo, hi = hist.real
            who = ", ".join(f"{k} {v}" for k, v in hist.persons.items()) or p.get("thread", "")
            print(
                f"{p['name']}: A={hist.author_days} S={hist.span_days:g} real {lo:g}–{hi:g} "
                f"({hist.source}; {hist.first}..{hist.last}; {hist.commits} commits; {who}); "
                f"{diffstat(p, args.gits)}"
            )
        return 0
    chosen = [p for p in ports if args.split == "all" or p["split"] == args.split]
    if args.only:
        chosen = [p for p in chosen if p["name"] in args.only]
    rows = []
    for p in chosen:
        print(f"scanning {p['name']} ...", file=sys.stderr)
        rows.append(run_port(p, args.gits, args.trees))
    text = table(rows)
    if args.out:
        args.out.write_text(text)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
