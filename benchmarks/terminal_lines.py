"""Benchmark (issue 29): how many lines `gpuport scan`'s terminal report takes per finding.

A terminal report that squeezes its table prints one letter per line: 15,746 lines for a
475-file library at 80 columns (rich's width whenever output is piped). This scans each project
given once, renders the terminal report at each width (as `COLUMNS=W gpuport scan PATH | cat`
would), and counts its lines, the findings it shows (above info) and the lines per finding.
Nothing in the projects is run.

    python benchmarks/terminal_lines.py /work/trees/second/Liger-Kernel ... [--widths 60,80,120]

The projects of docs/PERFORMANCE.md: trl, flash-linear-attention, peft, Liger-Kernel,
torchtune and pytorch-lightning of the issue 13 second set (their commits in its COMMITS file).

Run it with another checkout's sources first on the path to measure that code the same way
(``PYTHONPATH=/path/to/other/src``). Prints a Markdown table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

from rich.console import Console

from gpuport.models import Severity
from gpuport.render import scan_terminal
from gpuport.scan import ScanOptions, scan_path


def measure(path: Path, widths: list[int]) -> dict[str, object]:
    t0 = time.perf_counter()
    report = scan_path(path, ScanOptions())
    shown = sum(1 for f in report.findings if f.severity is not Severity.INFO)
    row: dict[str, object] = {
        "project": path.name,
        "files": report.files_scanned,
        "findings_shown": shown,
        "scan_s": round(time.perf_counter() - t0, 2),
    }
    for width in widths:
        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=False, color_system=None)
        scan_terminal.render(report, console)
        lines = buf.getvalue().splitlines()
        row[f"lines_{width}"] = len(lines)
        row[f"per_finding_{width}"] = round(len(lines) / shown, 2) if shown else None
        row[f"longest_{width}"] = max((len(line) for line in lines), default=0)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--widths", default="60,80,120")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    rows = [measure(p, widths) for p in args.projects]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    head = ["project", "files", "findings shown"] + [f"lines at {w} (per finding)" for w in widths]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [str(r["project"]), str(r["files"]), str(r["findings_shown"])]
        cells += [f"{r[f'lines_{w}']:,} ({r[f'per_finding_{w}']})" for w in widths]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
