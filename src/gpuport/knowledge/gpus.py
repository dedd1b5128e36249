"""GPU catalog: specs, dense peaks, published achievable figures and prices (gpus.toml).

``bench`` divides what it measured by these figures; ``cost`` sizes and prices
deployments with them. Peaks are dense (no sparsity): many spec sheets print the
2:4-sparse figure, which is twice what any dense matmul can reach.
"""

from __future__ import annotations

import datetime as dt
import difflib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport import textre
from gpuport.knowledge import KNOWLEDGE_DIR, Sourced, _entries, _merge, _user_file, _validated
from gpuport.knowledge.specs import Derivation
from gpuport.models import GpuportError

GPUS_TOML = KNOWLEDGE_DIR / "gpus.toml"


class Achieved(BaseModel):
    """A published measured figure (e.g. mamf-finder's bf16 GEMM TFLOPS) and where it is from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0)
    source: str
    note: str = ""


class Price(BaseModel):
    """A dated price point: per GPU-hour to rent, or per unit to buy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["on-demand", "spot", "reserved", "purchase"]
    usd: float = Field(gt=0)
    provider: str
    date: dt.date
    source: str
    note: str = Field(default="", description="range, conditions, what the figure is not")


class GpuSpec(Sourced):
    """One GPU model as the catalog knows it."""

    key: str = Field(description="stable id, e.g. 'h100-sxm'")
    name: str
    vendor: Literal["nvidia", "amd"]
    arch: str = Field(description="sm_90, gfx942, ...")
    aliases: list[str] = Field(default_factory=list)
    match: list[str] = Field(
        default_factory=list,
        description="case-insensitive globs over the device name torch reports",
    )
    memory_gb: float = Field(gt=0)
    memory_bytes: int | None = Field(
        default=None,
        gt=0,
        description=(
            "exact device memory in bytes: the total the driver reports where published "
            "(nvidia-smi / rocm-smi), else the nominal size; gpus.toml says which"
        ),
    )
    memory_basis: Literal["reported", "nominal"] = Field(
        default="nominal",
        description=(
            "'reported': memory_bytes is what the driver reports, seen in a cited log; "
            "'nominal': the datasheet size in GiB x 2^30 (the driver may report less)"
        ),
    )
    bandwidth_gbs: float = Field(gt=0, description="peak memory bandwidth, GB/s (10^9)")
    peak_tflops: dict[str, float] = Field(
        description="dense peak per dtype: bf16, fp16, fp32, tf32, fp8, fp64 ..."
    )
    tdp_w: float = Field(gt=0)
    wave_size: Literal[32, 64]
    l2_mb: float = Field(ge=0)
    llc_mb: float = Field(
        default=0, ge=0, description="last-level cache beyond L2 (Infinity Cache)"
    )
    interconnect_gbs: float | None = Field(
        default=None, description="per-GPU unidirectional GPU-GPU bandwidth (NVLink/xGMI), GB/s"
    )
    achievable: dict[str, Achieved] = Field(
        default_factory=dict,
        description=(
            "keys: gemm_bf16, gemm_fp16, gemm_fp8, membw_copy, membw_triad, busbw_allreduce"
        ),
    )
    prices: list[Price] = Field(default_factory=list)
    derive: Derivation | None = Field(
        default=None,
        description=(
            "the primary inputs (architecture row, units, clocks, the vendor's printed "
            "figures) its peaks are recomputed from (knowledge/specs.py)"
        ),
    )

    @property
    def flush_bytes(self) -> int:
        """Cache-flush buffer size: at least twice L2 plus the last-level cache."""
        return int(2 * (self.l2_mb + self.llc_mb) * 1024 * 1024)


@cache
def load_gpus(user_dir: Path | None = None) -> dict[str, GpuSpec]:
    """The bundled catalog by key, extended or overridden by ``user_dir/gpus.toml``.

    Cached because ``bench`` looks the spec up once per run and ``cost`` once per GPU
    it prices; a user entry with a bundled key replaces that entry whole.
    """
    items = _validated(GpuSpec, GPUS_TOML, _entries(GPUS_TOML, "gpu"))
    extra_path = _user_file(user_dir, "gpus.toml")
    if extra_path is not None:
        extra = _validated(GpuSpec, extra_path, _entries(extra_path, "gpu"))
        items = _merge(items, extra, "key")
    return {gpu.key: gpu for gpu in items}


def resolve_gpu(name: str, user_dir: Path | None = None) -> GpuSpec:
    """Find a GPU by key, alias, catalog name or torch device name, ignoring case.

    ``--gpu`` values come from people ("H100", "mi300x", "NVIDIA H100 80GB HBM3"), so
    a miss names the closest known spellings instead of only failing.
    """
    gpus = load_gpus(user_dir)
    want = _squash(name)
    for gpu in gpus.values():
        spellings = {gpu.key, gpu.name, *gpu.aliases}
        if want in {_squash(s) for s in spellings}:
            return gpu
    by_device = match_device(name, user_dir=user_dir)
    if by_device is not None:
        return by_device
    known = sorted({s.lower() for g in gpus.values() for s in (g.key, *g.aliases)})
    close = difflib.get_close_matches(name.strip().lower(), known, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise GpuportError(f"unknown GPU {name!r}{hint}; known GPUs: {', '.join(sorted(gpus))}")


def match_device(
    device_name: str, arch: str | None = None, user_dir: Path | None = None
) -> GpuSpec | None:
    """The catalog entry for a device name as torch reports it, or None if unknown.

    Globs are tried against the lower-cased, whitespace-collapsed name; the most
    specific matching glob (most literal characters, an exact name beating a wildcard)
    wins, so "NVIDIA H100 PCIe" is never taken for the SXM part. When ``arch`` is
    given (``sm_90``, ``gfx942:sramecc+:xnack-``), entries of another architecture are
    ruled out: a name that matches but an arch that does not is not that GPU. On an
    exact tie the entry defined last wins, so a user file can shadow a bundled glob.
    """
    lowered = " ".join(device_name.lower().split())
    if not lowered:
        return None
    want_arch = _norm_arch(arch) if arch else None
    best: tuple[tuple[int, int], GpuSpec] | None = None
    for gpu in load_gpus(user_dir).values():
        if want_arch is not None and _norm_arch(gpu.arch) != want_arch:
            continue
        scores = [_specificity(p) for p in gpu.match if textre.glob(p.lower()).match(lowered)]
        if scores and (best is None or max(scores) >= best[0]):
            best = (max(scores), gpu)
    return best[1] if best is not None else None


def _squash(text: str) -> str:
    """Spelling-insensitive form: ``H100 SXM``, ``h100_sxm`` and ``h100-sxm`` agree."""
    return textre.sub(r"[\s_-]+", "-", text.strip().lower())


def _norm_arch(arch: str) -> str:
    """``gfx942:sramecc+:xnack-`` -> ``gfx942``; ``SM_90`` -> ``sm90``."""
    return arch.split(":", 1)[0].strip().lower().replace("_", "")


def _specificity(pattern: str) -> tuple[int, int]:
    """(literal characters, 1 if the glob has no wildcard at all) for ranking matches."""
    literal = textre.sub(r"\[[^\]]*\]|[*?]", "", pattern)
    return len(literal), int(literal == pattern)
