"""Issue 13's dev set: `gpuport scan` on real public repositories, against their documented
ROCm status.

Give it a folder that holds the extracted trees (one folder per repository, named as below:
``nanoGPT``, ``litgpt``, ``mamba`` ...). For each it runs the scan in this process (default
options, target gfx942) and writes a Markdown table: gpuport's verdict, the judged (core)
counts, the effort range, the seconds it took, the documented status and whether the verdict
is one the documentation allows. With ``--sample N`` it also draws a seeded random sample of
N blocker/major core findings across the set, for a hand review of precision.

    python benchmarks/real_repos.py TREES [--out table.md] [--sample 40 --seed 13]
    python benchmarks/real_repos.py TREES --set second   # the 17 repositories beyond it

``--set second`` scans a second sample of public repositories that no rule was tuned on
(docs/scan.md, "A second sample"), to check that fixes are of classes, not of the dev set.

Nothing in the trees is run; the scan reads them as text.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from gpuport.scan.verdict import judged

#: repository folder -> (GitHub name, documented ROCm status, verdicts the status allows)
DEV_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "nanoGPT": ("karpathy/nanoGPT", "pure PyTorch", ("ready",)),
    "litgpt": (
        "Lightning-AI/litgpt",
        "AMD code path; maintainers say it works",
        ("ready", "minor work"),
    ),
    "mamba": (
        "state-spaces/mamba",
        "README AMD prerequisites; HIP branch in setup.py (Mamba-3 parts NVIDIA-only)",
        ("minor work", "major work"),
    ),
    "bitsandbytes": (
        "bitsandbytes-foundation/bitsandbytes",
        "official ROCm wheels and CI",
        ("ready", "minor work"),
    ),
    "flash-attention": (
        "Dao-AILab/flash-attention",
        "CK and Triton ROCm backends for FA2",
        ("minor work",),
    ),
    "xformers": ("facebookresearch/xformers", "ROCm wheels, `hip_fmha`", ("minor work",)),
    "text-generation-inference": (
        "huggingface/text-generation-inference",
        "ROCm images, tested on MI300",
        ("minor work",),
    ),
    "DeepSpeed": ("microsoft/DeepSpeed", "ROCm CI, MI200 tested", ("minor work",)),
    "ao": ("pytorch/ao", "partial ROCm", ("minor work", "major work")),
    "unsloth": ("unslothai/unsloth", "AMD guide", ("minor work",)),
    "TransformerEngine": ("NVIDIA/TransformerEngine", "none upstream", ("blocked",)),
    "apex": ("NVIDIA/apex", "none upstream", ("blocked",)),
    "Megatron-LM": (
        "NVIDIA/Megatron-LM",
        "none upstream (fused kernels optional)",
        ("major work", "blocked"),
    ),
}


#: A second sample beyond the dev set (same layout: folder -> name, status, allowed verdicts).
SECOND_SET: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "peft": ("huggingface/peft", "pure PyTorch", ("ready", "minor work")),
    "accelerate": (
        "huggingface/accelerate",
        "pure PyTorch, ROCm documented",
        ("ready", "minor work"),
    ),
    "trl": ("huggingface/trl", "pure PyTorch", ("ready", "minor work")),
    "diffusers": ("huggingface/diffusers", "pure PyTorch", ("ready", "minor work")),
    "pytorch-lightning": (
        "Lightning-AI/pytorch-lightning",
        "ROCm supported",
        ("ready", "minor work"),
    ),
    "torchtune": ("pytorch/torchtune", "ROCm wheels in CI", ("ready", "minor work")),
    "AutoAWQ": ("casper-hansen/AutoAWQ", "ROCm through an optional kernels extra", ("minor work",)),
    "causal-conv1d": ("Dao-AILab/causal-conv1d", "HIP branch in setup.py", ("minor work",)),
    "exllamav2": ("turboderp-org/exllamav2", "ROCm wheels", ("minor work",)),
    "Liger-Kernel": ("linkedin/Liger-Kernel", "AMD CI", ("minor work",)),
    "whisper.cpp": ("ggml-org/whisper.cpp", "ggml HIP backend", ("ready", "minor work")),
    "CTranslate2": ("OpenNMT/CTranslate2", "ROCm build (`WITH_HIP`)", ("minor work",)),
    "detectron2": ("facebookresearch/detectron2", "ops hipified by torch", ("minor work",)),
    "tinygrad": ("tinygrad/tinygrad", "native AMD backend", ("ready", "minor work")),
    "mmcv": ("open-mmlab/mmcv", "HIP branch in setup.py", ("minor work",)),
    "ggml": ("ggml-org/ggml", "HIP backend (ggml-hip)", ("ready", "minor work")),
    "optimum": ("huggingface/optimum", "pure PyTorch", ("ready", "minor work")),
    "NeMo": ("NVIDIA/NeMo", "none upstream (TE/apex/Megatron inside)", ("major work", "blocked")),
    "flash-linear-attention": ("fla-org/flash-linear-attention", "Triton, AMD CI", ("minor work",)),
    "SageAttention": ("thu-ml/SageAttention", "none", ("blocked",)),
    "DeepGEMM": ("deepseek-ai/DeepGEMM", "none (Hopper/Blackwell)", ("blocked",)),
    "llm-awq": ("mit-han-lab/llm-awq", "none", ("blocked",)),
    "quack": ("Dao-AILab/quack", "none (CuTe DSL)", ("blocked",)),
}
SETS = {"dev": DEV_SET, "second": SECOND_SET}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the scan's worker processes):
    on a shared machine it is steadier than the wall clock."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def scan_one(root: Path) -> tuple[ScanReport, float, float]:
    started, cpu = time.perf_counter(), cpu_seconds()
    report = scan_path(root, ScanOptions())
    return report, time.perf_counter() - started, cpu_seconds() - cpu


def row(
    entry: tuple[str, str, tuple[str, ...]], report: ScanReport, seconds: float, cpu: float
) -> tuple[str, bool]:
    repo, status, allowed = entry
    core = judged(report.findings, report.scope)
    counts = "/".join(str(sum(1 for f in core if f.severity is s)) for s in Severity)
    right = report.verdict.value in allowed
    route = "yes" if report.routes else "no"
    text = (
        f"| {repo} | {status} | {' / '.join(allowed)} | **{report.verdict.value}** | "
        f"{'yes' if right else '**no**'} | {counts} | {len(report.not_built)} | {route} | "
        f"{report.effort.low_days:g}–{report.effort.high_days:g} | {seconds:.1f} | {cpu:.1f} |"
    )
    return text, right


def sample(reports: dict[str, ScanReport], n: int, seed: int) -> list[dict[str, object]]:
    """A seeded random sample of blocker/major core findings (repos in name order, findings
    in report order)."""
    population = []
    for name in sorted(reports):
        report = reports[name]
        for f in judged(report.findings, report.scope):
            if f.severity in (Severity.BLOCKER, Severity.MAJOR):
                population.append(
                    {
                        "repo": name,
                        "severity": f.severity.value,
                        "rule": f.rule_id,
                        "where": f"{f.location.path}:{f.location.line}",
                        "message": f.message[:160],
                    }
                )
    rng = random.Random(seed)  # noqa: S311 -- a reproducible sample, not a secret
    picked = rng.sample(population, min(n, len(population)))
    for i, item in enumerate(picked, 1):
        item["n"] = i
    return picked


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", type=Path, help="folder holding one extracted tree per repository")
    ap.add_argument("--out", type=Path, help="write the Markdown table here (else stdout)")
    ap.add_argument("--sample", type=int, default=0, help="draw this many blocker/major findings")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--sample-out", type=Path, help="write the sample as JSON here")
    ap.add_argument("--set", choices=sorted(SETS), default="dev", help="which repositories")
    args = ap.parse_args()
    chosen = SETS[args.set]
    missing = [n for n in chosen if not (args.trees / n).is_dir()]
    if missing:
        print(
            f"real_repos: missing trees under {args.trees}: {', '.join(missing)}", file=sys.stderr
        )
        return 2
    lines = [
        "| repository | documented ROCm status | right verdict | gpuport | right? | "
        "core B/M/m/i | not built | route | effort (days) | wall s | CPU s |",
        "|---|---|---|---|---|---|---:|---|---|---:|---:|",
    ]
    reports: dict[str, ScanReport] = {}
    right = 0
    total_s = total_cpu = 0.0
    for name, entry in chosen.items():
        report, seconds, cpu = scan_one(args.trees / name)
        reports[name] = report
        text, ok = row(entry, report, seconds, cpu)
        lines.append(text)
        right += ok
        total_s += seconds
        total_cpu += cpu
    lines += [
        "",
        f"{right}/{len(chosen)} verdicts right; {total_s:.1f} s wall, {total_cpu:.1f} s CPU "
        "for the whole set.",
    ]
    table = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(table)
    else:
        sys.stdout.write(table)
    if args.sample:
        picked = sample(reports, args.sample, args.seed)
        dump = json.dumps(picked, indent=1) + "\n"
        if args.sample_out:
            args.sample_out.write_text(dump)
        else:
            sys.stdout.write(dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
