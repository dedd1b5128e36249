"""Serving-efficiency table (serving.toml): what engines reach on each GPU family, fitted.

``gpuport cost`` models serving with a step model (:mod:`gpuport.cost.step`). Its rates are a
GPU's hardware figures (STREAM triad, best GEMM: published in gpus.toml or measured by
``gpuport bench``) times the factors here: how much of them a serving engine turns into
decode reads and GEMMs, what a step costs per layer beyond its work, and what one collective
costs. ``benchmarks/cost_fit.py`` fits the factors on published, measured serving figures
(``benchmarks/cost_calibration/measurements.toml``) and writes this file, with the
measurements behind every profile and the error on the measurements it did not fit on.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.knowledge import KNOWLEDGE_DIR, _read_toml, _validated
from gpuport.knowledge.schema import Sourced
from gpuport.models import GpuportError

SERVING_TOML = KNOWLEDGE_DIR / "serving.toml"
Engine = Literal["vllm", "sglang", "trtllm"]
ENGINES: tuple[Engine, ...] = ("vllm", "sglang", "trtllm")


class Profile(Sourced):
    """One GPU family (catalog ``arch``) on one serving engine."""

    arch: str = Field(description="catalog arch of the family: sm_90, sm_100, gfx942, gfx950")
    family: str
    engine: Engine
    bandwidth: float = Field(gt=0, le=1.5, description="decode read rate / STREAM triad")
    compute: float = Field(gt=0, le=1.5, description="dense GEMM rate / best GEMM")
    moe: float = Field(gt=0, le=1.5, description="routed-expert GEMM rate / best GEMM")
    layer_us: float = Field(ge=0, description="fixed cost per layer per step, µs")
    measurements: list[str] = Field(
        default_factory=list, description="calibration-set ids this profile was fitted on"
    )


class Collective(Sourced):
    """The fixed cost of one collective between the GPUs of a vendor's node."""

    vendor: Literal["nvidia", "amd"]
    latency_us: float = Field(ge=0, description="one all-reduce")
    alltoall_us: float = Field(ge=0, description="one expert-parallel dispatch or combine")
    measurements: list[str] = Field(default_factory=list)


class HeldOut(BaseModel):
    """The error on the measurements no factor was fitted on (benchmarks/cost_fit.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(ge=0)
    median_ratio: float = Field(gt=0, description="median of modelled / measured")
    iqr: tuple[float, float]
    within_1_5x: float = Field(ge=0, le=1, description="share within a factor of 1.5")
    p90_factor: float = Field(ge=1, description="90 % of the figures are within this factor")
    pairs: int = Field(ge=0, description="NVIDIA-AMD pairs on one workload")
    pairs_in_order: int = Field(ge=0)


class Fit(BaseModel):
    """How and when the table was fitted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: dt.date
    script: str
    fit_rows: int = Field(gt=0)
    held_out: HeldOut
    tpot_tail: float = Field(ge=1, description="p99 / mean TPOT of the fit part's logs")
    ttft_tail: float = Field(ge=1, description="p99 / mean TTFT of the fit part's logs")


class ServingTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fit: Fit
    profiles: list[Profile]
    collectives: list[Collective]

    def profile(self, arch: str, engine: Engine) -> Profile | None:
        for p in self.profiles:
            if p.arch == _family_arch(arch) and p.engine == engine:
                return p
        return None

    def collective(self, vendor: str) -> Collective | None:
        return next((c for c in self.collectives if c.vendor == vendor), None)


def _family_arch(arch: str) -> str:
    """``gfx942:sramecc+`` -> ``gfx942``; ``SM_90`` -> ``sm_90``."""
    return arch.split(":", 1)[0].strip().lower()


@cache
def load_serving() -> ServingTable:
    """The bundled serving-efficiency table."""
    data = _read_toml(SERVING_TOML)
    if "fit" not in data:
        raise GpuportError(f"knowledge file {SERVING_TOML}: no [fit] table")
    profiles = _validated(Profile, SERVING_TOML, data.get("profile", []))
    collectives = _validated(Collective, SERVING_TOML, data.get("collective", []))
    return ServingTable(fit=Fit.model_validate(data["fit"]), profiles=profiles,
                        collectives=collectives)  # fmt: skip
