"""Compare two ``port_backtest.py run`` result files port by port (issue 30, tenth pass):
which ports' diffs are byte for byte the same, and for the others which fixes were added or
dropped and which hunks changed. Used to show that a change touches no development port it
was not meant to.

    python benchmarks/port_runs_diff.py before.json after.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _load(path: str) -> dict[tuple[str, str], dict[str, Any]]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(r["port"], r["mode"]): r for r in rows}


def _applied(row: dict[str, Any]) -> dict[str, bool]:
    return {f["id"]: f["safe"] for f in row["fixes"] if f["applied"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args(argv)
    a, b = _load(args.before), _load(args.after)
    for key in sorted(set(a) | set(b)):
        ra, rb = a.get(key), b.get(key)
        name = f"{key[0]} {key[1]}"
        if ra is None or rb is None:
            print(f"{name}: only in {'after' if ra is None else 'before'}")
            continue
        if ra["diff"] == rb["diff"]:
            print(f"{name}: same diff ({len(ra['diff'])} chars)")
            continue
        fa, fb = _applied(ra), _applied(rb)
        added = [f"{k} ({'safe' if v else 'unsafe'})" for k, v in fb.items() if k not in fa]
        dropped = [k for k in fa if k not in fb]
        same = [k for k in fa if k in fb]
        print(f"{name}: diff changed; added {added or '-'}; dropped {dropped or '-'}")
        for k in same:
            ha = [h["header"] for f in ra["fixes"] if f["id"] == k for h in f["hunks"]]
            hb = [h["header"] for f in rb["fixes"] if f["id"] == k for h in f["hunks"]]
            if ha != hb:
                print(f"    {k}: hunks {ha} -> {hb}")
        print(f"    second run: {len(ra['second_run_files'])} -> {len(rb['second_run_files'])}")


if __name__ == "__main__":
    main()
