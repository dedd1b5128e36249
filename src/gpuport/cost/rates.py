"""Achievable serving rates of one GPU kind on one engine: hardware figures × fitted factors.

Two layers, so that each can be replaced by what the user knows better:

* the **hardware** figures (:mod:`gpuport.cost.efficiency`): the GPU's STREAM triad and its
  best GEMM in the compute dtype, published in gpus.toml or measured by ``gpuport bench``
  (``--bench``: the user's own GPU replaces the published figures);
* the **serving** factors (``knowledge/serving.toml``), fitted on published serving
  measurements per GPU family and engine: the share of the triad that decode reads reach,
  the share of the GEMM rate dense and routed-expert layers reach, the fixed cost of a
  step per layer and of one collective.

A family or engine the table has no profile for borrows one (the same family on another
engine, else the same vendor on the same engine, else all profiles), and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuport.cost.efficiency import peak_tflops
from gpuport.cost.model import Efficiency, ServingBasis
from gpuport.cost.step import Rates
from gpuport.knowledge.gpus import GpuSpec
from gpuport.knowledge.serving import Engine, Profile, ServingTable

# Where a vendor has no collective in the table: the all-reduce latency the roofline used.
DEFAULT_COLLECTIVE_US = 10.0
PCIE_BUSBW_GBS = 25.0  # practical all-reduce bus bandwidth over PCIe Gen4/5 x16
LINK_EFFICIENCY = 0.8  # busbw / link rate where the catalog has no measured all-reduce
CEILING = 0.95  # of a datasheet peak: the most any fitted or measured rate is allowed


@dataclass(frozen=True)
class Factors:
    """The serving factors one GPU kind uses, and which profile(s) they come from."""

    bandwidth: float
    compute: float
    moe: float
    layer_us: float
    profile: str  # "sm_90/trtllm"
    borrowed: str  # "" when the table has this family and engine
    measurements: int


def factors(table: ServingTable, spec: GpuSpec, engine: Engine) -> Factors:
    """The profile for the GPU's family and ``engine``, else a borrowed one (said)."""
    arch = spec.arch.split(":", 1)[0].lower()
    exact = table.profile(arch, engine)
    if exact is not None:
        return _of([exact], f"{exact.arch}/{engine}", "")
    vendors = {p.arch: _vendor_of(p.arch) for p in table.profiles}
    for pool, why in (
        ([p for p in table.profiles if p.arch == arch], f"{arch} on other engines"),
        (
            [p for p in table.profiles if vendors[p.arch] == spec.vendor and p.engine == engine],
            f"{spec.vendor} GPUs on {engine}",
        ),
        ([p for p in table.profiles if vendors[p.arch] == spec.vendor], f"{spec.vendor} GPUs"),
        (list(table.profiles), "every profile"),
    ):
        if pool:
            return _of(pool, f"{arch}/{engine}", f"no profile for {arch} on {engine}: the "
                       f"geometric mean of {why} ({', '.join(_names(pool))})")  # fmt: skip
    raise ValueError("the serving table has no profiles")


def _names(pool: list[Profile]) -> list[str]:
    return [f"{p.arch}/{p.engine}" for p in pool]


def _vendor_of(arch: str) -> str:
    return "amd" if arch.startswith("gfx") else "nvidia"


def _of(pool: list[Profile], name: str, borrowed: str) -> Factors:
    def geo(field: str) -> float:
        values = [max(getattr(p, field), 1e-9) for p in pool]
        return math.exp(sum(math.log(v) for v in values) / len(values))

    return Factors(
        bandwidth=geo("bandwidth"),
        compute=geo("compute"),
        moe=geo("moe"),
        layer_us=geo("layer_us"),
        profile=name,
        borrowed=borrowed,
        measurements=sum(len(p.measurements) for p in pool),
    )


def busbw_gbs(spec: GpuSpec) -> float:
    """All-reduce bus bandwidth: measured in the catalog, else 80 % of the link, else PCIe."""
    bus = spec.achievable.get("busbw_allreduce")
    if bus is not None:
        return bus.value
    if spec.interconnect_gbs:
        return spec.interconnect_gbs * LINK_EFFICIENCY
    return PCIE_BUSBW_GBS


def rates(
    spec: GpuSpec,
    compute_dtype: str,
    hardware: dict[str, Efficiency],
    attention: Efficiency,
    f: Factors,
    collective_us: float,
    alltoall_us: float,
) -> Rates:
    """The step model's rates: hardware figures (published or measured) × serving factors."""
    bw = spec.bandwidth_gbs * 1e9 * hardware["bandwidth"].value
    peak = peak_tflops(spec, compute_dtype) * 1e12
    gemm = peak * hardware["compute"].value
    attn_peak = peak_tflops(spec, "bf16") * 1e12
    attn = attn_peak * attention.value
    # No engine beats the datasheet: a factor is capped where it would pass 95 % of a peak.
    return Rates(
        bandwidth=min(bw * f.bandwidth, CEILING * spec.bandwidth_gbs * 1e9),
        flops=min(gemm * f.compute, CEILING * peak),
        moe_flops=min(gemm * f.moe, CEILING * peak),
        attn_flops=min(attn * f.compute, CEILING * attn_peak),
        layer_s=f.layer_us * 1e-6,
        busbw=busbw_gbs(spec) * 1e9,
        collective_s=collective_us * 1e-6,
        alltoall_s=alltoall_us * 1e-6,
    )


def basis(
    table: ServingTable, f: Factors, collective_us: float, alltoall_us: float
) -> ServingBasis:
    """What the serving rates rest on, for the report."""
    held = table.fit.held_out
    return ServingBasis(
        profile=f.profile,
        borrowed=f.borrowed,
        bandwidth=f.bandwidth,
        compute=f.compute,
        moe=f.moe,
        layer_us=f.layer_us,
        collective_us=collective_us,
        alltoall_us=alltoall_us,
        fitted_on=f.measurements,
        fitted=table.fit.date,
        held_out_n=held.n,
        held_out_median_ratio=held.median_ratio,
        held_out_within_1_5x=held.within_1_5x,
        held_out_p90_factor=held.p90_factor,
    )
