"""Result models of ``gpuport cost``: one :class:`GpuCost` per GPU in a :class:`CostReport`.

Every figure a reader might want to check carries where its inputs came from: which
default, which flag, which catalog entry (with its source URL and date) or which bench
run. Sizes are in GB of 10^9 bytes, like the seeds' "141 GB of weights".
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.models import SCHEMA_VERSION, EnvFingerprint

Basis = Literal["measured", "published", "fitted", "default"]
Origin = Literal["default", "flag", "catalog", "bench", "model"]


class Assumption(BaseModel):
    """One input of the estimate, echoed with its provenance."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float | int | str | bool | None
    unit: str = ""
    origin: Origin
    detail: str = Field(default="", description="why this value, or where it is from")


class Efficiency(BaseModel):
    """Achievable fraction of a spec peak and what it rests on."""

    model_config = ConfigDict(frozen=True)

    value: float = Field(gt=0, description="achievable / peak")
    basis: Basis
    figure: float | None = Field(default=None, description="the achieved figure (GB/s, TFLOPS)")
    peak: float | None = None
    detail: str = ""
    source: str = Field(default="", description="URL, or bench run id")


class ServingBasis(BaseModel):
    """The fitted serving factors a GPU's modelled speed rests on, and how sure they are.

    The rates of the step model are the GPU's hardware figures (``efficiency``) times these
    factors, fitted per GPU family and engine on published measurements
    (``knowledge/serving.toml``). The held-out figures are the model's error on the
    published measurements no factor was fitted on.
    """

    model_config = ConfigDict(frozen=True)

    profile: str = Field(description="family/engine, e.g. sm_90/trtllm")
    borrowed: str = Field(default="", description="why another profile stands in, if one does")
    bandwidth: float = Field(description="decode read rate / STREAM triad")
    compute: float = Field(description="dense GEMM rate / best GEMM")
    moe: float = Field(description="routed-expert GEMM rate / best GEMM")
    layer_us: float = Field(description="fixed cost per layer per step")
    collective_us: float = Field(description="fixed cost of one all-reduce")
    alltoall_us: float = Field(description="fixed cost of one expert-parallel all-to-all")
    fitted_on: int = Field(description="published measurements behind the profile")
    fitted: dt.date
    held_out_n: int
    held_out_median_ratio: float = Field(description="median modelled/measured, held out")
    held_out_within_1_5x: float
    held_out_p90_factor: float = Field(description="90 % of held-out figures within this factor")


class PriceUsed(BaseModel):
    """The $/GPU-hour an estimate used."""

    model_config = ConfigDict(frozen=True)

    usd_per_hour: float = Field(gt=0)
    kind: str = Field(description="on-demand, spot, reserved, or 'flag' for --price")
    origin: Literal["flag", "catalog"]
    provider: str = Field(
        default="", description="one provider, or how many quotes the median is of"
    )
    date: dt.date | None = Field(default=None, description="the newest quote's date")
    source: str = ""
    quotes: list[str] = Field(
        default_factory=list,
        description="the providers' quotes behind a catalog median: 'provider $x (date)'",
    )


class CurvePoint(BaseModel):
    """One point of $/Mtok against concurrency, for the chart."""

    model_config = ConfigDict(frozen=True)

    concurrency: int
    gpus: int
    tokens_per_s_per_gpu: float
    usd_per_mtok_output: float | None


class GpuCost(BaseModel):
    """Everything ``cost`` says about one GPU model for the requested workload."""

    model_config = ConfigDict(frozen=True)

    gpu: str = Field(description="catalog key")
    name: str
    memory_gb: float = Field(description="capacity used for the fit, in GB (10^9 bytes)")
    memory_basis: str = Field(
        default="", description="exact bytes from the catalog, or the datasheet figure"
    )
    fits: bool = Field(description="the target fits on ONE GPU of this kind")
    gpus_needed: int | None = Field(description="fewest GPUs (a valid TP degree); None: never")
    tp_degree: int | None
    fits_on_tp: int | None = Field(
        default=None,
        description="narrowest tensor-parallel group holding the sequences at --context "
        "(memory alone; the plan may be wider for throughput)",
    )
    replicas: int | None = Field(
        default=None, description="data-parallel copies of the TP group (gpus = tp × replicas)"
    )
    max_concurrency: int = Field(description="full-context sequences that fit on gpus_needed")
    concurrency: int = Field(description="sequences in flight used for the throughput")
    weights_gb: float
    weights_gb_per_gpu: float | None
    kv_bytes_per_token: int = Field(description="whole model, all layers, no sliding window")
    kv_gb_per_sequence: float = Field(description="one sequence at --context tokens")
    memory_gb_per_gpu: float | None = Field(description="needed per GPU at this concurrency")
    usable_gb_per_gpu: float
    reserve_gb_per_gpu: float | None = Field(
        default=None,
        description="runtime + CUDA-graph pool + prefill-chunk activations + sampler logits",
    )
    margin_gb_per_gpu: float | None = Field(
        default=None, description="usable memory left per GPU at this concurrency (< 0: no fit)"
    )
    max_num_seqs: int | None = Field(default=None, description="engine cap per replica")
    prefill_chunk: int | None = Field(default=None, description="max_num_batched_tokens")
    own_max_concurrency: int | None = Field(
        default=None, description="this GPU kind's own maximum on its default deployment"
    )
    own_max_gpus: int | None = None
    usd_per_mtok_output_at_own_max: float | None = None
    bound: Literal["memory", "compute"] | None = None
    engine: str = Field(default="", description="serving engine the speed is modelled for")
    pp_degree: int | None = Field(default=None, description="pipeline stages per replica")
    ep_degree: int | None = Field(default=None, description="expert-parallel degree (MoE)")
    dp_attention: bool = False
    tpot_ms: float | None = Field(
        default=None, description="mean time per output token at this load (modelled)"
    )
    target_met: bool | None = Field(
        default=None, description="the latency target holds on this deployment (None: none)"
    )
    decode_tokens_per_s_per_user: float | None = None
    decode_tokens_per_s_per_gpu: float | None = Field(
        default=None, description="aggregate output tokens/s divided by the GPU count"
    )
    prefill_tokens_per_s_per_gpu: float | None = None
    ttft_ms: float | None = Field(
        default=None, description="mean time to first token at this load (modelled)"
    )
    throughput_source: Literal["model", "flag"] = "model"
    serving: ServingBasis | None = Field(
        default=None, description="the fitted factors behind the modelled speed"
    )
    provenance: dict[str, str] = Field(
        default_factory=dict,
        description="per figure: modelled, fitted, measured or given, and from what",
    )
    train_tokens_per_s_per_gpu: float | None = None
    usd_per_hour: float | None = Field(default=None, description="per GPU")
    price: PriceUsed | None = None
    usd_per_mtok_output: float | None = None
    usd_per_mtok_input: float | None = None
    usd_per_mtok_train: float | None = None
    usd_per_gb: float | None = Field(
        default=None,
        description="$ per hour per GB of memory as printed on the datasheet (80 for an H100, "
        "which is 80 GiB): the seeds' $/GB, not per 10^9 bytes",
    )
    joules_per_token: float | None = Field(default=None, description="at TDP (an upper bound)")
    energy_usd_per_mtok: float | None = None
    purchase_usd: float | None = None
    breakeven_hours: float | None = Field(
        default=None, description="hours of use after which buying beats renting"
    )
    breakeven_days: float | None = Field(
        default=None, description="calendar days to the break-even at --utilization"
    )
    efficiency: dict[str, Efficiency] = Field(
        default_factory=dict, description="'bandwidth' and 'compute'"
    )
    notes: list[str] = Field(default_factory=list)


class ModelInfo(BaseModel):
    """The model that was sized, and where its shape came from."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    origin: Literal["catalog", "config.json"]
    sources: list[str] = Field(default_factory=list)
    params_b: float
    active_params_b: float
    published_params_b: float | None = None
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    attention: Literal["mha", "gqa", "mqa", "mla"]
    kv_latent: int | None = Field(
        default=None, description="MLA: kv_lora_rank + qk_rope_head_dim cached per token"
    )
    experts: int = 0
    experts_per_token: int = 0
    max_context: int


class CostReport(BaseModel):
    """What ``gpuport cost`` prints and ``--format json`` writes."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.cost"] = "gpuport.cost"
    schema_version: str = SCHEMA_VERSION
    mode: Literal["inference", "training"]
    model: ModelInfo
    assumptions: list[Assumption]
    records: list[GpuCost]
    curves: dict[str, list[CurvePoint]] = Field(
        default_factory=dict, description="$/Mtok output against concurrency, per GPU key"
    )
    notes: list[str] = Field(default_factory=list)
    price_kind: str = Field(
        default="", description="the one catalog price kind the GPUs are compared at"
    )
    concurrency_basis: str = Field(
        default="", description="why every GPU runs the concurrency it does"
    )
    env: EnvFingerprint | None = None

    def comparable(self) -> tuple[list[GpuCost], list[GpuCost]]:
        """(records priced like with like, records left out of a "cheapest" verdict).

        A record is comparable when it has a $/Mtok and its price is of the report's one
        price kind, or came from --price; a GPU priced from the catalog by a fallback kind
        is shown, labelled, but never declared the cheapest.
        """
        priced = [r for r in self.records if _rate(r) is not None]
        kinds = {r.price.kind for r in priced if r.price is not None and r.price.kind != "flag"}
        if len(kinds) <= 1:
            return priced, []
        # A --price is the user's own figure for their offer: compared with anything.
        mine = ("flag", self.price_kind)
        keep = [r for r in priced if r.price is not None and r.price.kind in mine]
        return keep, [r for r in priced if r not in keep]

    def record(self, gpu: str) -> GpuCost | None:
        for rec in self.records:
            if rec.gpu == gpu:
                return rec
        return None


def _rate(rec: GpuCost) -> float | None:
    out = rec.usd_per_mtok_output
    return out if out is not None else rec.usd_per_mtok_train
