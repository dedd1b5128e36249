"""Issue 26: fit gpuport's serving-efficiency table on published measurements, report its error.

    python benchmarks/cost_fit.py split    # once, before any fitting: writes split.json
    python benchmarks/cost_fit.py fit      # fits on the fit part, writes knowledge/serving.toml
    python benchmarks/cost_fit.py report   # the bundled table on both parts -> results.json

Every row of ``cost_calibration/measurements.toml`` is modelled the way ``gpuport cost`` models
a deployment (the same step model, rates and planner), under the row's conditions: the
model, GPU, engine, weight and KV dtypes, the published deployment where the source states
it (else gpuport plans it), the mean input and output lengths, and either the concurrency
(InferenceX: a closed loop of N requests) or the MLPerf scenario: Offline fills the memory
(up to the published engine batch); Server and Interactive fill it while the mean TPOT and
TTFT stay under the p99 limits divided by the fit part's p99/mean ratios.

The fit minimises, over the fit part only, the squared log error of output tokens/s per GPU,
plus a weak pull of each factor towards a prior (so that a profile with few rows stays
plausible): the bandwidth and GEMM factors per GPU family (catalog ``arch``) and engine, the
routed-expert GEMM factor, the per-layer step cost, and the collective latency per vendor.
Levenberg-Marquardt on log-factors, with a numerical Jacobian.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from gpuport.cost import efficiency
from gpuport.cost.memory import capacity_bytes, sampler_bytes
from gpuport.cost.plan import Fixed, Limits, Target, plan
from gpuport.cost.rates import Factors, rates
from gpuport.cost.shapes import count_params, native_fp4
from gpuport.cost.step import Model, Workload
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.knowledge.models import resolve_model
from gpuport.knowledge.serving import SERVING_TOML, load_serving

sys.path.insert(0, str(Path(__file__).resolve().parent / "cost_calibration"))
import stats  # type: ignore[import-not-found]

RESULTS = stats.HERE / "results.json"
FAMILY = {"sm_90": "Hopper", "sm_100": "Blackwell", "gfx942": "CDNA3", "gfx950": "CDNA4"}
PRIOR = {"bandwidth": 0.8, "compute": 0.6, "moe": 0.3, "layer_us": 15.0}
PRIOR_COLLECTIVE_US = {"collective_us": 10.0, "alltoall_us": 30.0}
# log-space prior strength against a row's squared log error: a factor e away from its prior
# costs as much as one row off by a factor e^0.25.
PRIOR_WEIGHT = 0.0625
GiB = 1e9
RESERVE_GB = 2.0  # runtime + graph pool, as gpuport cost's defaults (--overhead-gb, --graphs-gb)
USABLE = 0.9
CHUNK = 8192
DEFAULT_BATCH = 1024


# ----------------------------------------------------------------------- one row


class Row:
    """One measurement's conditions, resolved once."""

    def __init__(self, r: dict[str, Any]) -> None:
        self.raw = r
        self.id: str = r["id"]
        self.spec = resolve_gpu(r["gpu"])
        shape = resolve_model(r["model"], stats.KNOWLEDGE)
        dtype = native_fp4(r["dtype"], self.spec.vendor)
        self.model = Model(shape, count_params(shape), dtype, r["kv_dtype"])
        self.cdtype = efficiency.compute_dtype(self.spec, dtype)
        self.hardware = efficiency.published(self.spec, self.cdtype)
        self.attention = efficiency.published(self.spec, "bf16")["compute"]
        self.arch = self.spec.arch.split(":")[0].lower()
        self.profile = f"{self.arch}/{r['engine']}"
        self.vendor = self.spec.vendor
        max_seqs = r.get("max_batch", DEFAULT_BATCH)
        capacity, _ = capacity_bytes(self.spec)
        self.limits = Limits(
            capacity=capacity,
            usable=USABLE,
            reserve=RESERVE_GB * GiB + sampler_bytes(shape, max_seqs),
            chunk=CHUNK,
            max_seqs=max_seqs,
        )
        self.work = Workload(r["isl"], r["osl"])
        self.fixed = Fixed(tp=r.get("tp"), pp=r.get("pp", 1), ep=r.get("ep"),
                           dp=1 if r["scenario"] == "concurrency" else None,
                           dp_attention=r.get("dp_attention", False))  # fmt: skip
        self.measured: float = r["measured_tok_s_per_gpu"]

    def target(self, tails: tuple[float, float]) -> Target:
        r = self.raw
        if r["scenario"] in ("server", "interactive"):
            return Target(r["p99_tpot_limit_ms"] / 1e3 / tails[0],
                          r["p99_ttft_limit_ms"] / 1e3 / tails[1])  # fmt: skip
        return Target()

    def modelled(
        self, f: Factors, collective: tuple[float, float], tails: tuple[float, float]
    ) -> float:
        rt = rates(self.spec, self.cdtype, self.hardware, self.attention, f, *collective)
        conc = self.raw.get("concurrency")
        best = plan(self.model, rt, self.work, self.limits, self.target(tails), self.fixed, conc)
        return best.per_gpu if best is not None else float("nan")


# ----------------------------------------------------------------------- parameters


class Params:
    """Log-factors per profile and log-latency per vendor, as one vector."""

    def __init__(self, profiles: list[str], vendors: list[str]) -> None:
        self.profiles, self.vendors = profiles, vendors
        self.names = [(p, k) for p in profiles for k in PRIOR] + [
            (v, k) for v in vendors for k in PRIOR_COLLECTIVE_US
        ]
        import numpy as np

        self.prior = np.array(
            [math.log(PRIOR[k]) for _, k in self.names[: 4 * len(profiles)]]
            + [math.log(PRIOR_COLLECTIVE_US[k]) for _, k in self.names[4 * len(profiles) :]]
        )

    def factors(self, x: np.ndarray, profile: str) -> Factors:
        i = self.profiles.index(profile) * 4
        b, c, m, layer = (math.exp(v) for v in x[i : i + 4])
        return Factors(b, c, m, layer, profile, "", 0)

    def collective(self, x: np.ndarray, vendor: str) -> tuple[float, float]:
        i = 4 * len(self.profiles) + 2 * self.vendors.index(vendor)
        return math.exp(x[i]), math.exp(x[i + 1])


def residuals(rows: list[Row], p: Params, x: np.ndarray, tails: tuple[float, float]) -> np.ndarray:
    import numpy as np

    out = []
    for row in rows:
        value = row.modelled(p.factors(x, row.profile), p.collective(x, row.vendor), tails)
        out.append(math.log(value / row.measured) if value > 0 else 5.0)
    return np.array(out)


def fit_params(rows: list[Row], tails: tuple[float, float]) -> tuple[Params, Any]:
    """Levenberg-Marquardt on the log-factors (residuals + the prior pull)."""
    import numpy as np  # the fit alone needs it (gpuport[bench]); evaluating does not

    p = Params(sorted({r.profile for r in rows}), sorted({r.vendor for r in rows}))
    x = p.prior.copy()
    w = math.sqrt(PRIOR_WEIGHT)

    def full(x: np.ndarray) -> np.ndarray:
        return np.concatenate([residuals(rows, p, x, tails), w * (x - p.prior)])

    r = full(x)
    lam = 1e-2
    for it in range(60):
        jac = np.empty((len(r), len(x)))
        h = 1e-4
        for j in range(len(x)):
            xj = x.copy()
            xj[j] += h
            jac[:, j] = (full(xj) - r) / h
        g = jac.T @ r
        a = jac.T @ jac
        improved = False
        for _ in range(8):
            step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-9), -g)
            xn = x + step
            rn = full(xn)
            if rn @ rn < r @ r:
                x, r, lam, improved = xn, rn, lam / 3, True
                break
            lam *= 4
        cost = float(r @ r)
        print(f"  iteration {it + 1}: cost {cost:.4f} lambda {lam:.2g}", file=sys.stderr)
        if not improved or np.max(np.abs(step)) < 1e-4:
            break
    return p, x


# ----------------------------------------------------------------------- commands


def split() -> None:
    """Write the seeded random split (held-out ids). Run once, before fitting anything."""
    data = stats.make_split(stats.load())
    stats.SPLIT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{len(data['held_out'])} of {len(stats.load())} measurements held out -> {stats.SPLIT}")


def tails_of(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """Median p99/mean TPOT and TTFT of the fit part's Server/Interactive logs."""
    tpot, ttft = [], []
    for r in rows:
        if r.get("measured_p99_tpot_ms") and r.get("measured_mean_tpot_ms"):
            tpot.append(r["measured_p99_tpot_ms"] / r["measured_mean_tpot_ms"])
        if r.get("measured_p99_ttft_ms") and r.get("measured_mean_ttft_ms"):
            ttft.append(r["measured_p99_ttft_ms"] / r["measured_mean_ttft_ms"])
    return statistics.median(tpot), statistics.median(ttft)


def evaluate(table_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row under the bundled serving table (as gpuport cost resolves it)."""
    from gpuport.cost.rates import factors as resolve

    table = load_serving()
    tails = (table.fit.tpot_tail, table.fit.ttft_tail)
    held = stats.load_split()
    out = []
    for raw in table_rows:
        row = Row(raw)
        f = resolve(table, row.spec, raw["engine"])
        col = table.collective(row.vendor)
        value = row.modelled(f, (col.latency_us, col.alltoall_us) if col else (10.0, 30.0), tails)
        out.append({
            "id": row.id, "gpu": raw["gpu"], "model": raw["model"], "engine": raw["engine"],
            "source_kind": raw["source_kind"], "scenario": raw["scenario"],
            "concurrency": raw.get("concurrency"), "isl": raw["isl"], "osl": raw["osl"],
            "measured": row.measured, "modelled": value, "ratio": value / row.measured,
            "part": "held-out" if row.id in held else "fit",
        })  # fmt: skip
    return out


def fit() -> None:
    data = stats.load()
    held = stats.load_split()
    fit_raw = [r for r in data if r["id"] not in held]
    tails = tails_of(fit_raw)
    rows = [Row(r) for r in fit_raw]
    print(f"fitting on {len(rows)} rows (tails: TPOT {tails[0]:.2f}, TTFT {tails[1]:.2f})")
    p, x = fit_params(rows, tails)
    by_profile: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_vendor: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_profile[row.profile].append(row.raw)
        by_vendor[row.vendor].append(row.raw)
    # The held-out error of these factors, written into the table (assess and cost quote it).
    write_table(p, x, tails, by_profile, by_vendor, len(rows), held_out=None)
    load_serving.cache_clear()
    results = evaluate(data)
    summary = stats.summary([r for r in results if r["part"] == "held-out"])
    write_table(p, x, tails, by_profile, by_vendor, len(rows), held_out=summary)
    load_serving.cache_clear()
    # Only the fit part is printed here: the held-out error is read once, with `report`.
    fit_rows = [r for r in results if r["part"] == "fit"]
    s = stats.summary(fit_rows)
    print(
        f"fit part: n={s['n']} median {s['median_ratio']:.2f} within 1.5x "
        f"{s['within_1_5x']:.0%} pairs {s['pairs_in_order']}/{s['pairs']}"
    )


def _sources(rows: list[dict[str, Any]]) -> list[str]:
    urls = []
    for r in rows:
        url = r["source"].split(" ")[0]
        if r["source_kind"] == "mlperf":
            url = url.split("/tree/")[0]
        if url not in urls:
            urls.append(url)
    return urls


def write_table(
    p: Params,
    x: np.ndarray,
    tails: tuple[float, float],
    by_profile: dict[str, list[dict[str, Any]]],
    by_vendor: dict[str, list[dict[str, Any]]],
    n_fit: int,
    held_out: dict[str, Any] | None,
) -> None:
    today = dt.date.today().isoformat()
    h = held_out or {"n": 0, "median_ratio": 1.0, "iqr": [1.0, 1.0], "within_1_5x": 0.0,
                     "p90_factor": 1.0, "pairs": 0, "pairs_in_order": 0}  # fmt: skip
    lines = [
        "# Serving-efficiency table of `gpuport cost` (issue 26). GENERATED by",
        "# benchmarks/cost_fit.py fit from benchmarks/cost_calibration/measurements.toml: do not",
        "# edit by hand. Each profile's factors multiply a GPU's hardware figures (STREAM triad,",
        "# best GEMM of the compute dtype: published in gpus.toml, or measured with --bench):",
        "#   bandwidth  share of the triad that decode reads (weights, KV cache) reach",
        "#   compute    share of the best GEMM that dense layers reach (attention: of bf16's)",
        "#   moe        share of the best GEMM that routed-expert GEMMs reach",
        "#   layer_us   fixed cost per layer per engine step (launches, scheduling, sampling)",
        "# `measurements` are the calibration-set rows a profile was fitted on (their sources",
        "# and dates are in measurements.toml); [fit.held_out] is the error on the rows held",
        "# out of the fit. docs/cost.md describes the method.",
        "schema_version = 1",
        "",
        "[fit]",
        f"date = {today}",
        'script = "benchmarks/cost_fit.py"',
        f"fit_rows = {n_fit}",
        f"tpot_tail = {tails[0]:.3f}",
        f"ttft_tail = {tails[1]:.3f}",
        "",
        "[fit.held_out]",
        f"n = {h['n']}",
        f"median_ratio = {h['median_ratio']:.4f}",
        f"iqr = [{h['iqr'][0]:.3f}, {h['iqr'][1]:.3f}]",
        f"within_1_5x = {h['within_1_5x']:.4f}",
        f"p90_factor = {h['p90_factor']:.4f}",
        f"pairs = {h['pairs']}",
        f"pairs_in_order = {h['pairs_in_order']}",
        "",
    ]
    for profile in p.profiles:
        arch, engine = profile.split("/")
        f = p.factors(x, profile)
        rows = by_profile[profile]
        lines += [
            "[[profile]]",
            f'arch = "{arch}"',
            f'family = "{FAMILY.get(arch, arch)}"',
            f'engine = "{engine}"',
            f"bandwidth = {f.bandwidth:.4f}",
            f"compute = {f.compute:.4f}",
            f"moe = {f.moe:.4f}",
            f"layer_us = {f.layer_us:.2f}",
            "measurements = [" + ", ".join(f'"{r["id"]}"' for r in rows) + "]",
            "sources = [" + ", ".join(f'"{u}"' for u in _sources(rows)) + "]",
            f"checked = {today}",
            "",
        ]
    for vendor in p.vendors:
        rows = by_vendor[vendor]
        multi = [r for r in rows if r.get("tp", 1) * r.get("pp", 1) > 1]
        allreduce, alltoall = p.collective(x, vendor)
        lines += [
            "[[collective]]",
            f'vendor = "{vendor}"',
            f"latency_us = {allreduce:.2f}",
            f"alltoall_us = {alltoall:.2f}",
            "measurements = [" + ", ".join(f'"{r["id"]}"' for r in multi) + "]",
            "sources = [" + ", ".join(f'"{u}"' for u in _sources(multi or rows)) + "]",
            f"checked = {today}",
            "",
        ]
    SERVING_TOML.write_text("\n".join(lines), encoding="utf-8")


def report() -> None:
    results = evaluate(stats.load())
    out = {
        "model": "gpuport cost step model with the bundled knowledge/serving.toml",
        "table_date": load_serving().fit.date.isoformat(),
        "all": stats.summary(results),
        "fit": stats.summary([r for r in results if r["part"] == "fit"]),
        "held_out": stats.summary([r for r in results if r["part"] == "held-out"]),
        "rows": results,
    }
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    for part in ("fit", "held_out", "all"):
        print(stats.line(part, out[part]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["split", "fit", "report"])
    args = ap.parse_args()
    {"split": split, "fit": fit, "report": report}[args.command]()


if __name__ == "__main__":
    main()
