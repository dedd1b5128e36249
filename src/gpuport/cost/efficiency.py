"""Efficiency factors: what fraction of a datasheet peak a GPU actually reaches.

Nobody decodes at 3.35 TB/s on an H100 or multiplies at 1307 TFLOPS on an MI300X. By
default the factors are published achieved/peak ratios from the GPU catalog (BabelStream
triad for bandwidth; mamf-finder or AMD's MAF for GEMM). A ``gpuport bench`` run of the
user's own machine replaces them with measured ratios: the bench's best ``membw`` and
``gemm`` figures divided by the same peaks. Where neither exists, a documented default
is used and said to be one.
"""

from __future__ import annotations

import math
from pathlib import Path

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus
from gpuport.cost.model import Efficiency
from gpuport.cost.shapes import FP4_FORMATS, WeightDtype
from gpuport.knowledge.gpus import GpuSpec, match_device
from gpuport.models import GpuportError

# BabelStream reaches 75-90 % of datasheet bandwidth on the GPUs in the catalog
# (77 % MI300X, 86 % H200, 89 % H100 SXM); 0.80 sits in that range.
DEFAULT_BANDWIDTH_EFFICIENCY = 0.80
# Best GEMMs reach 44-70 % of peak on AMD (ROCm MAF blog) and 72-80 % on NVIDIA
# (mamf-finder); 0.65 sits between them.
DEFAULT_COMPUTE_EFFICIENCY = 0.65
# Bandwidth kernels in order of preference: what decode does most is read, but the
# catalog's published figures are triad, so the same kernel is compared first.
MEMBW_KERNELS = ("triad", "copy", "read", "add", "scale")
# A measured figure this far above the datasheet peak is a wrong GPU, unit or timing, not a
# fast GPU (boost clocks and caches give a few per cent, not 20): it is refused with a note.
MAX_MEASURED_EFFICIENCY = 1.2


def compute_dtype(gpu: GpuSpec, dtype: WeightDtype) -> str:
    """The matrix-unit dtype the GEMMs run in for weights stored as ``dtype``.

    fp8 weights run fp8 GEMMs where the GPU has fp8 units; fp4 formats (MXFP4, NVFP4) run
    fp4 GEMMs where it has fp4 units, else they are dequantised to 16 bits in the kernel
    (weight-only, like int8/int4 from GPTQ and AWQ), so the bf16 rate applies.
    """
    if dtype == "fp16":
        return "fp16"
    if dtype == "fp8" and "fp8" in gpu.peak_tflops:
        return "fp8"
    if dtype in FP4_FORMATS and "fp4" in gpu.peak_tflops:
        return "fp4"
    return "bf16"


def peak_tflops(gpu: GpuSpec, dtype: str) -> float:
    """The dense peak for ``dtype``, else the 16-bit one (a user entry may list only one)."""
    peaks = gpu.peak_tflops
    for key in (dtype, "bf16", "fp16"):
        if peaks.get(key):
            return peaks[key]
    if not peaks:
        raise GpuportError(f"GPU catalog entry {gpu.key} has no peak_tflops")
    return max(peaks.values())


def published(gpu: GpuSpec, dtype: str) -> dict[str, Efficiency]:
    """Catalog achievable/peak ratios, or the defaults where the catalog has none."""
    out: dict[str, Efficiency] = {}
    bw = gpu.achievable.get("membw_triad") or gpu.achievable.get("membw_copy")
    if bw is not None:
        out["bandwidth"] = Efficiency(
            value=bw.value / gpu.bandwidth_gbs,
            basis="published",
            figure=bw.value,
            peak=gpu.bandwidth_gbs,
            detail=bw.note,
            source=bw.source,
        )
    else:
        out["bandwidth"] = Efficiency(
            value=DEFAULT_BANDWIDTH_EFFICIENCY,
            basis="default",
            peak=gpu.bandwidth_gbs,
            detail="no published bandwidth measurement for this GPU; typical BabelStream ratio",
        )
    peak = peak_tflops(gpu, dtype)
    # The dtype's own GEMM, else the nearest narrower-to-wider one published (an fp4 GEMM
    # is not published for any GPU yet: its fp8 ratio), else bf16's.
    key = next(
        (k for k in (f"gemm_{dtype}", *(("gemm_fp8",) if dtype == "fp4" else ()), "gemm_bf16")
         if k in gpu.achievable),
        None,
    )  # fmt: skip
    gemm = gpu.achievable[key] if key is not None else None
    if gemm is not None and key is not None:
        ref = peak_tflops(gpu, key.removeprefix("gemm_"))
        out["compute"] = Efficiency(
            value=gemm.value / ref,
            basis="published",
            figure=gemm.value,
            peak=ref,
            detail=gemm.note if key == f"gemm_{dtype}" else f"{key} ratio: {gemm.note}",
            source=gemm.source,
        )
    else:
        out["compute"] = Efficiency(
            value=DEFAULT_COMPUTE_EFFICIENCY,
            basis="default",
            peak=peak,
            detail=f"no published {dtype} GEMM measurement for this GPU; typical MAMF ratio",
        )
    return out


def measured(run: BenchRun, gpu: GpuSpec, dtype: str) -> tuple[dict[str, Efficiency], list[str]]:
    """Efficiencies from a bench run (only those it measured), plus notes."""
    out: dict[str, Efficiency] = {}
    notes: list[str] = []
    label = f"bench run {run.display_name}"
    bw = _best_membw(run.results)
    if bw is not None and bw.value is not None:
        out["bandwidth"] = Efficiency(
            value=bw.value / gpu.bandwidth_gbs,
            basis="measured",
            figure=bw.value,
            peak=gpu.bandwidth_gbs,
            detail=f"membw {bw.case} {bw.value:,.0f} GB/s in {label}",
            source=run.id,
        )
    else:
        notes.append(
            f"{label} has no membw result (passed, with a positive figure): published "
            "bandwidth efficiency used"
        )
    gemm, used = _best_gemm(run.results, dtype)
    if gemm is not None and gemm.value is not None:
        peak = peak_tflops(gpu, used)
        out["compute"] = Efficiency(
            value=gemm.value / peak,
            basis="measured",
            figure=gemm.value,
            peak=peak,
            detail=f"gemm {gemm.case} {gemm.value:,.1f} TFLOPS in {label}",
            source=run.id,
        )
        if used != dtype:
            notes.append(f"{label} has no {dtype} GEMM: its {used} efficiency is used")
    else:
        notes.append(
            f"{label} has no gemm result (passed, with a positive figure): published "
            "compute efficiency used"
        )
    for what, eff in list(out.items()):
        if eff.value > MAX_MEASURED_EFFICIENCY:
            del out[what]
            notes.append(
                f"measured {what} is {eff.value:.0%} of the catalog peak of {gpu.key}, which no "
                f"GPU reaches: not used (published {what} efficiency used instead); check the "
                "run was on this GPU and its units"
            )
        elif eff.value > 1.0:
            notes.append(
                f"measured {what} is {eff.value:.0%} of the catalog peak: the catalog entry "
                f"{gpu.key} may not be this GPU"
            )
    return out, notes


def _ok(results: list[BenchResult], workload: str) -> list[BenchResult]:
    """Usable results: passed, with a positive, finite figure (0, NaN or inf mean no rate)."""
    return [
        r
        for r in results
        if r.workload == workload
        and r.status is CaseStatus.OK
        and r.value is not None
        and math.isfinite(r.value)
        and r.value > 0
    ]


def _best_membw(results: list[BenchResult]) -> BenchResult | None:
    by_kernel = {r.case: r for r in _ok(results, "membw")}
    for kernel in MEMBW_KERNELS:
        if kernel in by_kernel:
            return by_kernel[kernel]
    return None


def _best_gemm(results: list[BenchResult], dtype: str) -> tuple[BenchResult | None, str]:
    """The fastest GEMM of ``dtype``, falling back to bf16 (the MAMF convention)."""
    for want in dict.fromkeys((dtype, *(("fp8",) if dtype == "fp4" else ()), "bf16")):
        cases = [r for r in _ok(results, "gemm") if _gemm_dtype(r) == want]
        if cases:
            return max(cases, key=lambda r: r.value or 0.0), want
    return None, dtype


def _gemm_dtype(result: BenchResult) -> str:
    return str(result.params.get("dtype") or result.case.split(" ", 1)[0])


def gpu_of_run(run: BenchRun, gpus: dict[str, GpuSpec], user_dir: Path | None) -> GpuSpec:
    """The catalog GPU a bench run was measured on, or a clear refusal."""
    where = f"--bench {run.display_name}"
    if run.device.backend == "cpu":
        raise GpuportError(f"{where} ran on the CPU; cost needs a GPU run to measure efficiency")
    if run.device.spec_key and run.device.spec_key in gpus:
        return gpus[run.device.spec_key]
    spec = match_device(run.device.name, run.device.arch, user_dir=user_dir)
    if spec is None:
        raise GpuportError(
            f"{where} ran on {run.device.name!r}, which is not in the GPU catalog; "
            "add it with --knowledge DIR (a gpus.toml entry)"
        )
    return spec
