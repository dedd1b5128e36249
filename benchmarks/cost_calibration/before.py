"""The calibration set through gpuport's pure roofline, as it stood before issue 26.

Runs against gpuport at commit 1bff2c7 (``git worktree add /tmp/before 1bff2c7`` and run
this file from there with ``PYTHONPATH=/tmp/before/src``): the model that never charged
prefill, had no per-step overhead and sized deployments by capacity. Each row is mapped to
the options that version had: fp4 weights (which it could not express) as int4, whose
4.16 bits per weight are the nearest it knew; Offline/Server/Interactive at its default
concurrency (the largest every GPU holds); a concurrency run at ``--concurrency``. It
writes ``before.json`` (one modelled figure per row) and prints the statistics of the
whole set and of each part of the split.

    python benchmarks/cost_calibration/before.py [--out benchmarks/cost_calibration/before.json]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import stats  # type: ignore[import-not-found]

from gpuport.cost import CostOptions, estimate
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.knowledge.models import resolve_model

DTYPES = {"fp8": "fp8", "bf16": "bf16", "nvfp4": "int4", "mxfp4": "int4", "fp4": "int4"}


def modelled(row: dict[str, Any]) -> float | None:
    shape = resolve_model(row["model"], stats.KNOWLEDGE)
    gpu = resolve_gpu(row["gpu"])
    isl, osl = round(row["isl"]), round(row["osl"])
    context = max(2048, 2 ** math.ceil(math.log2(isl + osl)))
    opts = CostOptions(
        dtype=DTYPES[row["dtype"]],  # type: ignore[arg-type]
        kv_dtype=row["kv_dtype"],
        context=context,
        input_tokens=isl,
        output_tokens=osl,
        concurrency=row.get("concurrency"),
    )
    (rec,) = estimate(shape, [gpu], opts).records
    return rec.decode_tokens_per_s_per_gpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=stats.HERE / "before.json")
    args = ap.parse_args()
    held = stats.load_split()
    results = []
    for row in stats.load():
        value = modelled(row)
        measured = row["measured_tok_s_per_gpu"]
        results.append({
            "id": row["id"], "gpu": row["gpu"], "model": row["model"],
            "source_kind": row["source_kind"], "scenario": row["scenario"],
            "concurrency": row.get("concurrency"), "isl": row["isl"], "osl": row["osl"],
            "measured": measured, "modelled": value,
            "ratio": value / measured if value else None,
            "part": "held-out" if row["id"] in held else "fit",
        })  # fmt: skip
    report = {
        "model": "roofline at commit 1bff2c7 (before issue 26)",
        "all": stats.summary(results),
        "fit": stats.summary([r for r in results if r["part"] == "fit"]),
        "held_out": stats.summary([r for r in results if r["part"] == "held-out"]),
        "rows": results,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for part in ("all", "fit", "held_out"):
        print(stats.line(part, report[part]))


if __name__ == "__main__":
    main()
