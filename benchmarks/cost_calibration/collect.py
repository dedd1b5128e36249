"""Build ``measurements.toml``: published, measured LLM serving figures with their conditions.

Issue 26's calibration set. Every row is one published figure of **output tokens/s per GPU**
with what it was measured under (model, GPU, engine, weight dtype, deployment, workload,
scenario or concurrency) and where it is published (URL, result ID or run URL, date).
``benchmarks/cost_fit.py`` splits the rows, fits the serving-efficiency table on one part and
reports the error on the other.

The sources are read from local copies (nothing is fetched here):

* ``--mlperf-v51 DIR``: a git directory of ``mlcommons/inference_results_v5.1``. Its
  ``summary_results.json`` gives the result, and each result's ``mlperf_log_summary.txt``
  gives samples/s (output tokens per sample = tokens/s ÷ samples/s) and, for the Server and
  Interactive scenarios, the latency limits.
* ``--dashboard DIR``: a git directory of ``openshift-psap/performance-dashboard``, whose
  ``mlperf-data/`` holds the MLCommons v5.0 and v6.0 result tables (CSV exports of the
  results pages) and per-sample input/output token counts of the official MLPerf datasets
  (``mlperf-data/summaries``), from which the mean input lengths come.
* ``--inferencex FILE``: ``packages/app/cypress/fixtures/api/benchmarks-history.json`` of
  InferenceX-app (a snapshot of the InferenceX API: one row per nightly run and
  configuration, with its GitHub Actions run URL).

    python benchmarks/cost_calibration/collect.py --mlperf-v51 DIR --dashboard DIR \
        --inferencex FILE --out benchmarks/cost_calibration/measurements.toml

The MLPerf picks below are chosen per (GPU, benchmark, scenario): the GPU vendor's own
submission where there is one, else one near the median of the submitters; single-node
systems, except the H100 405B result (two nodes, normalised per GPU like every row).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MLPERF_DATES = {"5.0": "2025-04-02", "5.1": "2025-09-09", "6.0": "2026-04-01"}
# The latency limits of inference_rules.adoc (ms, p99), for results read without a log.
LIMITS = {
    ("llama2-70b-99", "Server"): (200.0, 2000.0),
    ("llama2-70b-99", "Interactive"): (40.0, 450.0),
}
MLPERF_REPO = "https://github.com/mlcommons/inference_results_v{v}"
# benchmark -> (catalog model key, dataset summary file with per-sample token counts)
BENCHMARKS = {
    "llama2-70b-99": ("llama-2-70b", "llama2-70b-99.csv"),
    "mixtral-8x7b": ("mixtral-8x7b", "mixtral-8x7b.csv"),
    "llama3.1-405b": ("llama-3-405b", "llama3-1-405b.csv"),
    "llama3.1-8b": ("llama-3-8b", "llama3-1-8b-datacenter.csv"),
    "deepseek-r1": ("deepseek-r1", "deepseek-r1.csv"),
}
GPUS = {
    "H100-SXM-80GB": "h100-sxm",
    "H200-SXM-141GB": "h200",
    "B200-SXM-180GB": "b200",
    "MI300X": "mi300x",
    "MI325X": "mi325x",
    "MI355X": "mi355x",
}


@dataclass(frozen=True)
class Pick:
    """One MLPerf result and the deployment its published configuration states."""

    version: str
    result_id: str
    benchmark: str
    scenario: str
    engine: str
    dtype: str
    tp: int | None = None  # None: not stated by the source; gpuport plans it
    pp: int = 1
    ep: int | None = None
    dp_attention: bool = False
    max_batch: int | None = None  # per replica, from the published engine config
    kv_dtype: str = "fp8"
    value: float | None = None  # for results without a log in the v5.1 tree (v5.0, v6.0)
    osl_from: str | None = None  # "<version>:<result id>" whose log gives the output length
    config: str = ""  # path of the configuration the deployment comes from
    notes: list[str] = field(default_factory=list)


AMD_CODE = "closed/AMD/code/{b}/harness_llm/models/{m}/{s}_{g}.yaml"
HPE_CFG = "closed/HPE/configs/HPE_Cray_XD670_H200_SXM_141GBx8/{s}/{b}.py"
NV_CFG = "closed/NVIDIA/configs/B200-SXM-180GBx8/{s}/{b}.py"
PICKS: list[Pick] = [
    # ---------------------------------------------------------------- Llama 2 70B
    Pick(
        "5.0",
        "5.0-0057",
        "llama2-70b-99",
        "Offline",
        "trtllm",
        "fp8",
        value=31306.8,
        osl_from="5.1:5.1-0049",
    ),
    Pick(
        "5.0",
        "5.0-0057",
        "llama2-70b-99",
        "Server",
        "trtllm",
        "fp8",
        value=31106.28,
        osl_from="5.1:5.1-0049",
    ),
    Pick(
        "5.0",
        "5.0-0039",
        "llama2-70b-99",
        "Interactive",
        "trtllm",
        "fp8",
        value=14008.5,
        osl_from="5.1:5.1-0049",
    ),
    *(
        Pick(
            "5.1",
            "5.1-0049",
            "llama2-70b-99",
            s,
            "trtllm",
            "fp8",
            tp=1,
            max_batch=512 if s == "Interactive" else 2048,
            config=HPE_CFG.format(s=s, b="llama2-70b"),
        )
        for s in ("Offline", "Server", "Interactive")
    ),
    *(
        Pick(
            "5.1",
            "5.1-0069",
            "llama2-70b-99",
            s,
            "trtllm",
            "nvfp4",
            tp=1,
            config=NV_CFG.format(s=s, b="llama2-70b"),
        )
        for s in ("Offline", "Server", "Interactive")
    ),
    Pick(
        "5.1",
        "5.1-0001",
        "llama2-70b-99",
        "Offline",
        "vllm",
        "fp8",
        tp=1,
        max_batch=1536,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="offline", g="mi300x"),
    ),
    Pick(
        "5.1",
        "5.1-0001",
        "llama2-70b-99",
        "Server",
        "vllm",
        "fp8",
        tp=1,
        max_batch=608,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="server", g="mi300x"),
    ),
    Pick(
        "5.1",
        "5.1-0001",
        "llama2-70b-99",
        "Interactive",
        "vllm",
        "fp8",
        tp=1,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="interactive", g="mi300x"),
    ),
    Pick(
        "5.1",
        "5.1-0002",
        "llama2-70b-99",
        "Offline",
        "vllm",
        "fp8",
        tp=1,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="offline", g="mi325x"),
    ),
    Pick(
        "5.1",
        "5.1-0002",
        "llama2-70b-99",
        "Server",
        "vllm",
        "fp8",
        tp=1,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="server", g="mi325x"),
    ),
    Pick(
        "5.1",
        "5.1-0003",
        "llama2-70b-99",
        "Interactive",
        "vllm",
        "fp8",
        tp=1,
        config=AMD_CODE.format(b="llama2-70b-99", m="llama2-70b", s="interactive", g="mi325x"),
    ),
    Pick(
        "6.0",
        "v6.0-0002",
        "llama2-70b-99",
        "Offline",
        "vllm",
        "mxfp4",
        tp=1,
        value=103480,
        osl_from="5.1:5.1-0098",
    ),
    Pick(
        "6.0",
        "v6.0-0002",
        "llama2-70b-99",
        "Server",
        "vllm",
        "mxfp4",
        tp=1,
        value=100282.36,
        osl_from="5.1:5.1-0098",
    ),
    Pick(
        "6.0",
        "v6.0-0002",
        "llama2-70b-99",
        "Interactive",
        "vllm",
        "mxfp4",
        tp=1,
        value=73608.2,
        osl_from="5.1:5.1-0098",
    ),
    # ---------------------------------------------------------------- Mixtral 8x7B
    Pick(
        "5.0",
        "5.0-0065",
        "mixtral-8x7b",
        "Offline",
        "trtllm",
        "fp8",
        value=51048.7,
        osl_from="5.1:5.1-0049",
    ),
    Pick(
        "5.0",
        "5.0-0065",
        "mixtral-8x7b",
        "Server",
        "trtllm",
        "fp8",
        value=50924.7,
        osl_from="5.1:5.1-0049",
    ),
    *(
        Pick(
            "5.1",
            "5.1-0049",
            "mixtral-8x7b",
            s,
            "trtllm",
            "fp8",
            tp=1,
            max_batch=3072,
            config=HPE_CFG.format(s=s, b="mixtral-8x7b"),
        )
        for s in ("Offline", "Server")
    ),
    *(
        Pick(
            "5.1",
            rid,
            "mixtral-8x7b",
            s,
            "vllm",
            "fp8",
            tp=1,
            config=AMD_CODE.format(b="mixtral-8x7b", m="mixtral-8x7b", s=s.lower(), g=g),
        )
        for rid, g in (("5.1-0001", "mi300x"), ("5.1-0002", "mi325x"))
        for s in ("Offline", "Server")
    ),
    # ---------------------------------------------------------------- Llama 3.1 405B
    Pick("5.1", "5.1-0015", "llama3.1-405b", "Offline", "trtllm", "fp8"),
    Pick("5.1", "5.1-0015", "llama3.1-405b", "Server", "trtllm", "fp8"),
    Pick(
        "5.1",
        "5.1-0075",
        "llama3.1-405b",
        "Offline",
        "trtllm",
        "fp8",
        tp=4,
        pp=2,
        max_batch=512,
        config="closed/Nebius/configs/H200-SXM-141GBx8/Offline/llama3_1-405b.py",
    ),
    Pick(
        "5.1",
        "5.1-0075",
        "llama3.1-405b",
        "Server",
        "trtllm",
        "fp8",
        tp=8,
        max_batch=512,
        config="closed/Nebius/configs/H200-SXM-141GBx8/Server/llama3_1-405b.py",
    ),
    Pick(
        "5.1",
        "5.1-0075",
        "llama3.1-405b",
        "Interactive",
        "trtllm",
        "fp8",
        tp=8,
        max_batch=512,
        config="closed/Nebius/configs/H200-SXM-141GBx8/Interactive/llama3_1-405b.py",
    ),
    Pick(
        "5.1",
        "5.1-0069",
        "llama3.1-405b",
        "Offline",
        "trtllm",
        "nvfp4",
        tp=2,
        pp=2,
        config=NV_CFG.format(s="Offline", b="llama3_1-405b"),
    ),
    Pick(
        "5.1",
        "5.1-0069",
        "llama3.1-405b",
        "Server",
        "trtllm",
        "nvfp4",
        tp=4,
        config=NV_CFG.format(s="Server", b="llama3_1-405b"),
    ),
    Pick(
        "5.1",
        "5.1-0069",
        "llama3.1-405b",
        "Interactive",
        "trtllm",
        "nvfp4",
        tp=4,
        config=NV_CFG.format(s="Interactive", b="llama3_1-405b"),
    ),
    # ---------------------------------------------------------------- Llama 3.1 8B
    *(
        Pick(
            "5.1",
            "5.1-0083",
            "llama3.1-8b",
            s,
            "vllm",
            "fp8",
            tp=1,
            max_batch=1024,
            config="closed/RedHat/code/llama3.1-8b/run_offline_submission.sh",
        )
        for s in ("Offline", "Server")
    ),
    *(
        Pick(
            "5.1",
            "5.1-0049",
            "llama3.1-8b",
            s,
            "trtllm",
            "fp8",
            tp=1,
            max_batch=2048,
            config=HPE_CFG.format(s=s, b="llama3_1-8b"),
        )
        for s in ("Offline", "Server", "Interactive")
    ),
    *(
        Pick(
            "5.1",
            "5.1-0069",
            "llama3.1-8b",
            s,
            "trtllm",
            "nvfp4",
            tp=1,
            max_batch=6000,
            config=NV_CFG.format(s=s, b="llama3_1-8b"),
        )
        for s in ("Offline", "Server", "Interactive")
    ),
    # ---------------------------------------------------------------- DeepSeek R1
    *(
        Pick(
            "5.1",
            "5.1-0069",
            "deepseek-r1",
            s,
            "trtllm",
            "nvfp4",
            tp=8,
            ep=8,
            dp_attention=True,
            max_batch=512,
            config=NV_CFG.format(s=s, b="deepseek-r1"),
        )
        for s in ("Offline", "Server")
    ),
    Pick(
        "5.1",
        "5.1-0375",
        "deepseek-r1",
        "Offline",
        "trtllm",
        "fp8",
        tp=8,
        ep=8,
        dp_attention=True,
        max_batch=216,
        config=HPE_CFG.format(s="Offline", b="deepseek-r1").replace("closed/", "open/"),
        notes=["open division (the closed rules of v5.1 had no H200 DeepSeek-R1 result)"],
    ),
]

# InferenceX: DeepSeek R1, single node, aggregated serving, no speculative decoding.
IX_HARDWARE = ("h200", "b200", "mi300x", "mi325x", "mi355x")
IX_ENGINES = {"sglang": "sglang", "trt": "trtllm"}
IX_CONCURRENCY = (4, 16, 64)
IX_SHAPES = ((1024, 1024), (8192, 1024), (1024, 8192))
# The TensorRT-LLM and fp4 runs are kept to two shapes and two concurrencies so that one
# model does not outweigh the MLPerf part of the set.
IX_NARROW = {"shapes": ((1024, 1024), (8192, 1024)), "concurrency": (4, 64)}


def git_show(git_dir: Path, path: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return out.stdout


def log_figures(text: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    for key, pattern in (
        ("samples_s", r"(?:Completed )?[Ss]amples per second\s*:\s*([0-9.]+)"),
        ("tokens_s", r"(?:Completed )?[Tt]okens per second\s*:\s*([0-9.]+)"),
        ("mean_tpot_ns", r"Mean Time to Output Token \(ns\)\s*:\s*([0-9]+)"),
        ("mean_ttft_ns", r"Mean First Token latency \(ns\)\s*:\s*([0-9]+)"),
        ("p99_tpot_ns", r"99.00 percentile time to output token \(ns\)\s*:\s*([0-9]+)"),
        ("p99_ttft_ns", r"99.00 percentile first token latency \(ns\)\s*:\s*([0-9]+)"),
        ("ttft_limit_ns", r"ttft_latency \(ns\)\s*:\s*([0-9]+)"),
        ("tpot_limit_ns", r"tpot_latency \(ns\)\s*:\s*([0-9]+)"),
    ):
        m = re.search(pattern, text)
        if m:
            figures[key] = float(m.group(1))
    return figures


class MLPerf51:
    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.rows = json.loads(git_show(git_dir, "summary_results.json"))

    def row(self, result_id: str, benchmark: str, scenario: str) -> dict[str, Any]:
        for r in self.rows:
            if (r["ID"], r["Model"], r["Scenario"]) == (result_id, benchmark, scenario):
                return r
        raise SystemExit(f"no v5.1 result {result_id} {benchmark} {scenario}")

    def log(self, row: dict[str, Any]) -> dict[str, float]:
        loc = row["Location"].removeprefix("./").rstrip("/")
        summary = f"{loc}/performance/run_1/mlperf_log_summary.txt"
        return log_figures(git_show(self.git_dir, summary))

    def reference(self, result_id: str, benchmark: str, scenario: str) -> dict[str, Any]:
        """The log of ``result_id`` in ``scenario``, else in Offline (its figures and which)."""
        for scen in (scenario, "Offline"):
            if any(
                (r["ID"], r["Model"], r["Scenario"]) == (result_id, benchmark, scen)
                for r in self.rows
            ):
                return {**self.log(self.row(result_id, benchmark, scen)), "scenario": scen}
        raise SystemExit(f"no v5.1 reference log {result_id} {benchmark}")


def dataset_isl(dashboard: Path, benchmark: str) -> float:
    text = git_show(dashboard, f"mlperf-data/summaries/{BENCHMARKS[benchmark][1]}")
    return statistics.fmean(float(r["input_length"]) for r in csv.DictReader(io.StringIO(text)))


def gpu_key(accelerator: str) -> str:
    for name, key in GPUS.items():
        if name in accelerator:
            return key
    raise SystemExit(f"unknown accelerator {accelerator!r}")


def mlperf_rows(v51: MLPerf51, dashboard: Path) -> list[dict[str, Any]]:
    isl = {b: dataset_isl(dashboard, b) for b in BENCHMARKS}
    accelerators = {
        "5.0-0057": ("NVIDIA H100-SXM-80GB", 1, 8, "NVIDIA"),
        "5.0-0039": ("NVIDIA H100-SXM-80GB", 1, 8, "HPE"),
        "5.0-0065": ("NVIDIA H100-SXM-80GB", 1, 8, "Quanta_Cloud_Technology"),
        "v6.0-0002": ("AMD Instinct MI355X 288GB HBM3e", 1, 8, "AMD"),
    }
    out = []
    for p in PICKS:
        scenario_key = p.scenario.lower()
        if p.version == "5.1":
            row = v51.row(p.result_id, p.benchmark, p.scenario)
            figures = v51.log(row)
            value, gpus = row["Performance_Result"], row["Nodes"] * row["a#"]
            accelerator, submitter = row["Accelerator"], row["Submitter"]
            software = row["Software"]
            location = row["Location"].removeprefix("./").rstrip("/")
            source = f"{MLPERF_REPO.format(v='5.1')}/tree/main/{location}"
            osl = figures["tokens_s"] / figures["samples_s"]
            tpot_limit = figures["tpot_limit_ns"] / 1e6
            ttft_limit = figures["ttft_limit_ns"] / 1e6
            measured_tpot = figures.get("mean_tpot_ns", 0) / 1e6 or None
            measured_ttft = figures.get("mean_ttft_ns", 0) / 1e6 or None
            p99_tpot = figures.get("p99_tpot_ns", 0) / 1e6 or None
            p99_ttft = figures.get("p99_ttft_ns", 0) / 1e6 or None
        else:
            accelerator, nodes, per_node, submitter = accelerators[p.result_id]
            gpus = nodes * per_node
            value, software = p.value, ""
            source = (
                f"{MLPERF_REPO.format(v=p.version)} (result {p.result_id}; "
                "https://mlcommons.org/benchmarks/inference-datacenter/)"
            )
            assert p.osl_from is not None
            ref = v51.reference(p.osl_from.split(":")[1], p.benchmark, p.scenario)
            osl = ref["tokens_s"] / ref["samples_s"]
            tpot_limit = ref.get("tpot_limit_ns", 0) / 1e6 or None
            ttft_limit = ref.get("ttft_limit_ns", 0) / 1e6 or None
            if p.scenario != "Offline" and ref.get("scenario") != p.scenario:
                tpot_limit, ttft_limit = LIMITS[(p.benchmark, p.scenario)]
            measured_tpot = measured_ttft = p99_tpot = p99_ttft = None
        model = BENCHMARKS[p.benchmark][0]
        gpu = gpu_key(accelerator)
        entry: dict[str, Any] = {
            "id": f"mlperf-{p.result_id.removeprefix('v')}-{p.benchmark}-{scenario_key}",
            "source_kind": "mlperf",
            "source": source,
            "result_id": p.result_id,
            "date": MLPERF_DATES[p.version],
            "submitter": submitter,
            "model": model,
            "gpu": gpu,
            "gpus": gpus,
            "engine": p.engine,
            "software": software,
            "dtype": p.dtype,
            "kv_dtype": p.kv_dtype,
            "scenario": scenario_key,
            "isl": round(isl[p.benchmark], 1),
            "osl": round(osl, 1),
            "measured_tok_s_per_gpu": round(value / gpus, 2),
        }
        if p.scenario != "Offline":
            entry["p99_tpot_limit_ms"] = tpot_limit
            entry["p99_ttft_limit_ms"] = ttft_limit
        if measured_tpot:
            entry["measured_mean_tpot_ms"] = round(measured_tpot, 2)
        if measured_ttft:
            entry["measured_mean_ttft_ms"] = round(measured_ttft, 1)
        if p99_tpot:
            entry["measured_p99_tpot_ms"] = round(p99_tpot, 2)
        if p99_ttft:
            entry["measured_p99_ttft_ms"] = round(p99_ttft, 1)
        for key in ("tp", "ep", "max_batch"):
            if getattr(p, key) is not None:
                entry[key] = getattr(p, key)
        if p.pp != 1:
            entry["pp"] = p.pp
        if p.dp_attention:
            entry["dp_attention"] = True
        if p.config:
            entry["deployment_source"] = f"{MLPERF_REPO.format(v='5.1')}/blob/main/{p.config}"
        notes = list(p.notes)
        if p.osl_from:
            notes.append(
                f"output length from the v5.1 log of {p.osl_from.split(':')[1]} "
                "(same benchmark); this result has no log in the v5.1 tree"
            )
        notes.append(f"mean input length of the official dataset ({BENCHMARKS[p.benchmark][1]})")
        entry["notes"] = notes
        out.append(entry)
    return out


def inferencex_rows(history: Path) -> list[dict[str, Any]]:
    rows = json.loads(history.read_text())
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        if r["model"] != "dsr1" or r["hardware"] not in IX_HARDWARE:
            continue
        if r["framework"] not in IX_ENGINES or r["spec_method"] != "none":
            continue
        if r["disagg"] or r["is_multinode"] or r["decode_dp_attention"]:
            continue
        if r["decode_ep"] not in (1, r["decode_tp"]):
            continue
        narrow = r["framework"] == "trt" or r["precision"] == "fp4"
        shapes = IX_NARROW["shapes"] if narrow else IX_SHAPES
        concs = IX_NARROW["concurrency"] if narrow else IX_CONCURRENCY
        if (r["isl"], r["osl"]) not in shapes or r["conc"] not in concs:
            continue
        key = (r["hardware"], r["framework"], r["precision"], r["isl"], r["osl"], r["conc"])
        if key not in latest or r["date"] > latest[key]["date"]:
            latest[key] = r
    out = []
    for key in sorted(latest):
        r = latest[key]
        m = r["metrics"]
        # The API keeps medians: the median request's length (close to the mean for the
        # uniform lengths the client draws).
        osl = 1.0 + (m["median_e2el"] - m["median_ttft"]) / m["median_tpot"]
        if m.get("input_tput_per_gpu") and m.get("output_tput_per_gpu"):
            isl = osl * m["input_tput_per_gpu"] / m["output_tput_per_gpu"]
            out_tput = m["output_tput_per_gpu"]
        else:
            isl = 0.9 * r["isl"]  # --random-range-ratio 0.8: uniform in [0.8 L, L]
            out_tput = m["tput_per_gpu"] * osl / (osl + isl)
        hw, fw, prec, nominal_isl, nominal_osl, conc = key
        dtype = {"fp8": "fp8", "fp4": "nvfp4" if hw == "b200" else "mxfp4"}[prec]
        entry: dict[str, Any] = {
            "id": f"ix-dsr1-{prec}-{IX_ENGINES[fw]}-{hw}-{nominal_isl // 1024}k"
            f"{nominal_osl // 1024}k-c{conc}",
            "source_kind": "inferencex",
            "source": r["run_url"],
            "date": r["date"],
            "model": "deepseek-r1",
            "gpu": hw,
            "gpus": r["decode_tp"],
            "engine": IX_ENGINES[fw],
            "software": r.get("image") or "",
            "dtype": dtype,
            "kv_dtype": "bf16",
            "scenario": "concurrency",
            "concurrency": conc,
            "isl": round(isl, 1),
            "osl": round(osl, 1),
            "tp": r["decode_tp"],
            "measured_tok_s_per_gpu": round(out_tput, 2),
            "measured_median_tpot_ms": round(m["median_tpot"] * 1e3, 2),
            "measured_median_ttft_ms": round(m["median_ttft"] * 1e3, 1),
            "notes": [
                f"nominal {nominal_isl}/{nominal_osl} tokens with --random-range-ratio 0.8; "
                "lengths from the run's own throughput and latency figures"
            ],
        }
        if r["decode_ep"] > 1:
            entry["ep"] = r["decode_ep"]
        out.append(entry)
    return out


def to_toml(rows: list[dict[str, Any]]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v, ensure_ascii=False)

    lines = [
        "# Issue 26's calibration set: published, measured LLM serving figures (output tokens/s",
        "# per GPU) with the conditions they were measured under. Generated by",
        "# benchmarks/cost_calibration/collect.py; see docs/cost.md (Calibration) for the sources.",
        "# Do not edit by hand: fix collect.py and regenerate.",
        "schema_version = 1",
        "",
    ]
    for r in rows:
        lines.append("[[measurement]]")
        lines += [f"{k} = {value(v)}" for k, v in r.items()]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlperf-v51", type=Path, required=True)
    ap.add_argument("--dashboard", type=Path, required=True)
    ap.add_argument("--inferencex", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rows = mlperf_rows(MLPerf51(args.mlperf_v51), args.dashboard)
    rows += inferencex_rows(args.inferencex)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    args.out.write_text(to_toml(rows), encoding="utf-8")
    print(f"{len(rows)} measurements -> {args.out}")


if __name__ == "__main__":
    main()
