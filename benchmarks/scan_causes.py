"""Before/after counts of issue 13's scan causes (own-package imports, gates, FP8, silent loss).

Scans each tree with two gpuport source trees (``--before`` an older ``src/``, the current
one by default for ``--after``) in subprocesses and prints, per tree, the counts that the
issue's causes move: files scanned, findings by severity, GP201/GP202 on the project's own
packages, GP205 and GP208 by severity, GP302/GP303, the same rule twice on one line, and
effort. Fetch the trees yourself (e.g. ``git archive`` of pytorch/ao, casper-hansen/AutoAWQ,
microsoft/DeepSpeed, NVIDIA/Megatron-LM); git's index in a tree is read, never git run.

    python benchmarks/scan_causes.py --before /tmp/gpuport-old/src TREE [TREE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"


def scan(src: Path, tree: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scan.json"
        env = {**os.environ, "PYTHONPATH": str(src)}
        cmd = [sys.executable, "-m", "gpuport", "scan", str(tree), "-f", "json"]
        cmd += ["-o", str(out), "--no-progress"]
        subprocess.run(cmd, env=env, check=False, capture_output=True, timeout=900)
        if not out.is_file():
            return {}
        report: dict[str, object] = json.loads(out.read_text())
        return report


def summary(report: dict[str, object], own: set[str]) -> dict[str, object]:
    findings = report.get("findings", [])
    assert isinstance(findings, list)
    sev = Counter(f["severity"] for f in findings)
    by = Counter((f["rule_id"], f["severity"]) for f in findings)
    per_line = Counter(
        (f["rule_id"], f["location"]["path"], f["location"]["line"]) for f in findings
    )
    self_imports = sum(
        1
        for f in findings
        if f["rule_id"] in ("GP201", "GP202")
        and f["severity"] != "info"
        and f["message"].startswith("`")
        and f["message"][1:].split("`", 1)[0].split(".", 1)[0] in own
    )
    effort = report.get("effort", {})
    assert isinstance(effort, dict)
    return {
        "files": report.get("files_scanned"),
        "B/M/m/i": "/".join(str(sev.get(s, 0)) for s in ("blocker", "major", "minor", "info")),
        "own-package GP201/202 (not info)": self_imports,
        "GP205 major": by[("GP205", "major")],
        "GP208 blocker/minor": f"{by[('GP208', 'blocker')]}/{by[('GP208', 'minor')]}",
        "GP302+GP303 (not info)": sum(
            n for (r, s), n in by.items() if r in ("GP302", "GP303") and s != "info"
        ),
        "same rule twice on a line": sum(n - 1 for n in per_line.values() if n > 1),
        "effort days": f"{effort.get('low_days')}-{effort.get('high_days')}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", type=Path, required=True, help="older gpuport src/ folder")
    parser.add_argument("--after", type=Path, default=HERE, help="gpuport src/ (this checkout)")
    parser.add_argument("trees", type=Path, nargs="+")
    args = parser.parse_args()
    for tree in args.trees:
        before, after = scan(args.before, tree), scan(args.after, tree)
        own_list = after.get("own_packages", [])
        own = set(own_list) if isinstance(own_list, list) else set()
        print(f"## {tree.name}  (own packages: {', '.join(sorted(own)) or '-'})")
        rows = {"before": summary(before, own), "after": summary(after, own)}
        for key in rows["before"]:
            print(f"  {key:36} {rows['before'][key]!s:>16} -> {rows['after'][key]!s}")


if __name__ == "__main__":
    main()
