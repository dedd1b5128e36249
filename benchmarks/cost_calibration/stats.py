"""The calibration set and the figures every run of it reports (before, fit, held-out).

Shared by ``before.py`` and ``benchmarks/cost_fit.py``: loading ``measurements.toml`` and
``split.json``, and the error statistics of issue 26's "Done when" (median ratio
modelled/measured, share within 1.5×, cross-vendor pairs in the measured order).
"""

from __future__ import annotations

import json
import math
import random
import statistics
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MEASUREMENTS = HERE / "measurements.toml"
SPLIT = HERE / "split.json"
KNOWLEDGE = HERE  # models.toml for Llama 2 70B (a --knowledge DIR)
VENDOR = {"h100-sxm": "nvidia", "h200": "nvidia", "b200": "nvidia",
          "mi300x": "amd", "mi325x": "amd", "mi355x": "amd"}  # fmt: skip
HELD_OUT_SHARE = 0.35
SEED = 26


def load() -> list[dict[str, Any]]:
    with MEASUREMENTS.open("rb") as f:
        return list(tomllib.load(f)["measurement"])


def group(row: dict[str, Any]) -> str:
    """The stratum a row is drawn from: source and model."""
    return f"{row['source_kind']}:{row['model']}"


def make_split(rows: list[dict[str, Any]], seed: int = SEED) -> dict[str, Any]:
    """A seeded random split, stratified by source and model so every stratum is held out."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible split, not a secret
    strata: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        strata[group(r)].append(r["id"])
    held: list[str] = []
    for key in sorted(strata):
        ids = sorted(strata[key])
        rng.shuffle(ids)
        held += ids[: max(1, round(HELD_OUT_SHARE * len(ids)))]
    return {
        "seed": seed,
        "method": f"per (source, model) stratum, {HELD_OUT_SHARE:.0%} held out at random "
        "(random.Random(seed).shuffle of the sorted ids)",
        "held_out": sorted(held),
    }


def load_split() -> set[str]:
    return set(json.loads(SPLIT.read_text())["held_out"])


def workload(row: dict[str, Any]) -> tuple[Any, ...]:
    """Rows with the same workload: a cross-vendor pair compares two GPUs on one of these."""
    if row["scenario"] == "concurrency":
        shape = (round(row["isl"], -3), round(row["osl"], -3))
        return (row["source_kind"], row["model"], "c", row["concurrency"], shape)
    return (row["source_kind"], row["model"], row["scenario"])


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Error figures of ``results`` (rows with ``ratio`` = modelled / measured)."""
    ratios = sorted(r["ratio"] for r in results if r.get("ratio"))
    if not ratios:
        return {"n": 0}
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    within = sum(1 for x in ratios if 1 / 1.5 <= x <= 1.5)
    logs = [abs(math.log(x)) for x in ratios]
    out: dict[str, Any] = {
        "n": len(ratios),
        "median_ratio": statistics.median(ratios),
        "iqr": [q[0], q[2]],
        "min": ratios[0],
        "max": ratios[-1],
        "within_1_5x": within / len(ratios),
        "median_abs_log_error": statistics.median(logs),
        "p90_factor": math.exp(sorted(logs)[min(len(logs) - 1, int(0.9 * len(logs)))]),
    }
    by_vendor: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.get("ratio"):
            by_vendor[VENDOR[r["gpu"]]].append(r["ratio"])
    out["median_ratio_by_vendor"] = {v: statistics.median(x) for v, x in sorted(by_vendor.items())}
    out |= pairs(results)
    return out


def pairs(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Cross-vendor pairs on one workload, and how many the model puts in the measured order."""
    by_work: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        if r.get("modelled"):
            by_work[workload(r)].append(r)
    total = right = 0
    wrong: list[str] = []
    for rows in by_work.values():
        for a in rows:
            for b in rows:
                if VENDOR[a["gpu"]] != "nvidia" or VENDOR[b["gpu"]] != "amd":
                    continue
                total += 1
                measured = a["measured"] - b["measured"]
                modelled = a["modelled"] - b["modelled"]
                if measured * modelled > 0:
                    right += 1
                else:
                    wrong.append(f"{a['id']} vs {b['id']}")
    return {
        "pairs": total,
        "pairs_in_order": right,
        "pairs_in_order_share": right / total if total else None,
        "pairs_out_of_order": wrong,
    }


def table(results: list[dict[str, Any]]) -> str:
    """Markdown rows: id, GPU, measured, modelled, ratio."""
    lines = ["| id | GPU | measured tok/s/GPU | modelled | ratio |", "|---|---|---:|---:|---:|"]
    for r in sorted(results, key=lambda r: r["id"]):
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "—"
        modelled = f"{r['modelled']:,.0f}" if r.get("modelled") else "—"
        lines.append(f"| {r['id']} | {r['gpu']} | {r['measured']:,.0f} | {modelled} | {ratio} |")
    return "\n".join(lines)


def line(part: str, s: dict[str, Any]) -> str:
    """One printed line of a part's figures."""
    return (
        f"{part:9} n={s['n']:3} median {s['median_ratio']:.2f} IQR {s['iqr'][0]:.2f}-"
        f"{s['iqr'][1]:.2f} range {s['min']:.2f}-{s['max']:.2f} within 1.5x "
        f"{s['within_1_5x']:.0%} p90 x{s['p90_factor']:.2f} pairs "
        f"{s['pairs_in_order']}/{s['pairs']} by vendor "
        + ", ".join(f"{k} {v:.2f}" for k, v in s["median_ratio_by_vendor"].items())
    )
