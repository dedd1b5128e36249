"""Issue 26: fit gpuport's serving-efficiency table on published measurements.

python benchmarks/cost_fit.py split     # once, before any fitting: writes split.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "cost_calibration"))
import stats  # type: ignore[import-not-found]


def split() -> None:
    """Write the seeded random split (held-out ids). Run once, before fitting anything."""
    data = stats.make_split(stats.load())
    stats.SPLIT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['held_out'])} of {len(stats.load())} measurements held out -> {stats.SPLIT}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["split"])
    args = ap.parse_args()
    if args.command == "split":
        split()


if __name__ == "__main__":
    main()
