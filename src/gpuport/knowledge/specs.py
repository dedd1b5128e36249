"""Peaks recomputed from their primary inputs: clock x units x FLOP per unit per clock.

A GPU's dense peak for a dtype is ``clock x units x rate``, where ``rate`` is the dense FLOP
per clock of one unit (an NVIDIA SM, an AMD CU) of its architecture. The rates live in
``archs.toml``, one row per architecture family (Volta .. Blackwell Ultra, GCN/CDNA1 ..
CDNA4, RDNA3 .. RDNA4), each sourced; a GPU's entry in ``gpus.toml`` names its row, its unit
count and its clocks (``[gpu.derive]``) and what the vendor's sheet prints, dense or 2:4-sparse
(``[gpu.derive.published]``). :func:`disagreements` says where a stored peak is not what its
inputs give; the test suite and ``tools/kb_audit.py`` run it over every entry, so a peak
that is the sparse figure (twice the dense one) or a rate taken per pair of units fails.

Conventions (the catalog's, see the head of gpus.toml):

* ``fp4 fp8 bf16 fp16 tf32`` are matrix (Tensor/Matrix Core) dtypes and use ``clock_mhz``;
  ``fp32 fp64`` use ``vector_clock_mhz`` (NVIDIA quotes them at a higher clock than its
  tensor figures on several parts) and default to ``clock_mhz``.
* ``tensor_rate`` scales the matrix dtypes but fp4: GeForce parts (and a few NVIDIA
  data-centre cards built like them) run fp16/bf16/fp8/tf32 at half rate with fp32
  accumulation, which is what PyTorch uses.
* A stored peak agrees when it is within :data:`TOLERANCE` of the recomputed one: vendor
  figures are printed to 3-4 significant digits. ``exempt`` lists, with the reason, a dtype
  whose published figure the inputs do not reproduce (the vendor's own figures disagree);
  the stored value is then the published one and the disagreement is visible, not hidden.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport.knowledge import KNOWLEDGE_DIR, _entries, _validated
from gpuport.knowledge.schema import Sourced

if TYPE_CHECKING:
    from gpuport.knowledge.gpus import GpuSpec

ARCHS_TOML = KNOWLEDGE_DIR / "archs.toml"
MATRIX_DTYPES = ("fp4", "fp8", "bf16", "fp16", "tf32")
WIDE_DTYPES = ("fp32", "fp64")
HALVED_BY_TENSOR_RATE = ("fp8", "bf16", "fp16", "tf32")
TOLERANCE = 0.01  # relative

__all__ = [
    "ArchRow",
    "Derivation",
    "Published",
    "disagreements",
    "load_archs",
    "recompute",
]


class ArchRow(Sourced):
    """One architecture family: what one unit does per clock, dense, per dtype."""

    key: str = Field(description="e.g. 'hopper', 'cdna3', 'rdna4'")
    vendor: Literal["nvidia", "amd"]
    archs: list[str] = Field(min_length=1, description="sm_90 / gfx942 ... this row covers")
    unit: Literal["SM", "CU"]
    flop_per_clk: dict[str, float] = Field(
        description="dense FLOP per clock per unit, by dtype (matrix rate where one exists)"
    )
    sparse_factor: float = Field(
        default=2.0, description="what 2:4 structured sparsity multiplies a printed figure by"
    )
    note: str = ""


class Published(BaseModel):
    """A figure as the vendor's sheet prints it, and whether it is the 2:4-sparse one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tflops: float = Field(gt=0)
    sparse: bool


class Derivation(BaseModel):
    """The primary inputs a GPU's peaks are recomputed from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arch: str = Field(description="key of an archs.toml row")
    units: int = Field(gt=0, description="SMs or CUs enabled on this product")
    clock_mhz: float = Field(gt=0, description="the clock matrix peaks are quoted at")
    vector_clock_mhz: float | None = Field(default=None, gt=0)
    clock_basis: Literal["published", "implied"] = Field(
        description=(
            "'published': the vendor's boost/peak engine clock; 'implied': the vendor "
            "publishes no clock for these peaks and it is worked back from one published "
            "peak, so the others are checked against it"
        )
    )
    tensor_rate: float = Field(default=1.0, gt=0, le=1)
    published: dict[str, Published] = Field(default_factory=dict)
    exempt: dict[str, str] = Field(
        default_factory=dict, description="dtype -> why its published figure is kept"
    )


@cache
def load_archs(path: Path = ARCHS_TOML) -> dict[str, ArchRow]:
    rows = _validated(ArchRow, path, _entries(path, "arch"))
    return {row.key: row for row in rows}


def recompute(gpu: GpuSpec, archs: dict[str, ArchRow] | None = None) -> dict[str, float]:
    """Each dtype's dense peak in TFLOPS from the entry's inputs (empty without ``derive``)."""
    derive = gpu.derive
    if derive is None:
        return {}
    row = (archs if archs is not None else load_archs())[derive.arch]
    out: dict[str, float] = {}
    for dtype, rate in row.flop_per_clk.items():
        wide = dtype in WIDE_DTYPES
        mhz = (derive.vector_clock_mhz or derive.clock_mhz) if wide else derive.clock_mhz
        scale = derive.tensor_rate if dtype in HALVED_BY_TENSOR_RATE else 1.0
        out[dtype] = mhz * 1e6 * derive.units * rate * scale / 1e12
    return out


def disagreements(gpu: GpuSpec, archs: dict[str, ArchRow] | None = None) -> list[str]:
    """Why the entry's stored peaks are not what its inputs give; empty when they are."""
    derive = gpu.derive
    if derive is None:
        return [f"{gpu.key}: no [gpu.derive] inputs to recompute its peaks from"]
    rows = archs if archs is not None else load_archs()
    row = rows.get(derive.arch)
    if row is None:
        return [f"{gpu.key}: arch row {derive.arch!r} is not in archs.toml"]
    problems: list[str] = []
    if gpu.arch.split(":")[0] not in row.archs:
        problems.append(f"{gpu.key}: {gpu.arch} is not one of {derive.arch}'s {row.archs}")
    expected = recompute(gpu, rows)
    for dtype, stored in gpu.peak_tflops.items():
        if dtype in derive.exempt:
            continue
        want = expected.get(dtype)
        if want is None:
            problems.append(f"{gpu.key}: {derive.arch} has no {dtype} rate to recompute {stored}")
        elif abs(stored - want) > TOLERANCE * want:
            problems.append(
                f"{gpu.key}: {dtype} {stored:g} but {derive.clock_mhz:g} MHz x {derive.units} "
                f"{row.unit}s x rate gives {want:.1f}"
            )
    for dtype in derive.exempt:
        if dtype not in gpu.peak_tflops:
            problems.append(f"{gpu.key}: exempt {dtype} has no stored peak")
    for dtype, fig in derive.published.items():
        dense = fig.tflops / (row.sparse_factor if fig.sparse else 1.0)
        stored_peak = gpu.peak_tflops.get(dtype)
        if stored_peak is None:
            problems.append(f"{gpu.key}: published {dtype} but no stored peak")
        elif abs(stored_peak - dense) > TOLERANCE * dense:
            kind = "sparse" if fig.sparse else "dense"
            problems.append(
                f"{gpu.key}: {dtype} {stored_peak:g} but the sheet's {kind} {fig.tflops:g} "
                f"means {dense:.1f} dense"
            )
    return problems
