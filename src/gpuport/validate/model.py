"""Data of ``gpuport validate``: the capture manifest and the :class:`ParityReport`.

Two kinds of document live here. The :class:`CaptureManifest` travels inside a ``.gpv`` file
(machine A → machine B) and says what every stored tensor is; the :class:`ParityReport` is the
answer on machine B: one :class:`Row` per compared tensor with its metrics, the tolerance that
judged it and where that tolerance comes from, and a status that separates *different* (beyond
tolerance, not shown to be worse) from *wrong* (further from float64 than A by the Dynamo rule).
"""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, computed_field

from gpuport.models import SCHEMA_VERSION, EnvFingerprint, sealed_digest

MANIFEST_KIND = "gpuport.validate.capture"
# marks a left_out entry that names something not traced (rather than a call beyond --max-bytes)
NOT_TRACED = ": not traced"


def budget_left_out(left_out: list[str]) -> list[str]:
    """The calls a capture's size budget left out (the other entries were never traced)."""
    return [e for e in left_out if NOT_TRACED not in e]


REPORT_KIND = "gpuport.validate"


class Status(enum.StrEnum):
    """Verdict on one compared tensor."""

    SAME = "same"  # within the tolerance
    EQUIVALENT = "equivalent"  # beyond it, but B is as close to float64 as A (or only propagated)
    DIFFERENT = "different"  # beyond it, and nothing showed B to be as good as A
    WRONG = "wrong"  # B is further from float64 than the Dynamo multiplier allows, or NaN/Inf
    NOT_CHECKED = "not-checked"  # could not be compared; `reason` says why

    @property
    def rank(self) -> int:
        """Larger is worse; orders the table and picks the report's verdict."""
        return _RANK[self]


_RANK = {
    Status.NOT_CHECKED: 0,
    Status.SAME: 1,
    Status.EQUIVALENT: 2,
    Status.DIFFERENT: 3,
    Status.WRONG: 4,
}


class NumericSettings(BaseModel):
    """Switches that change numbers between two runs of the same code (research A.7).

    Recorded on both machines; differences become warnings in the report because they explain
    differences that are not bugs (TF32 on one side) or hide ones that are.
    """

    model_config = ConfigDict(frozen=True)

    device: str = Field(description="torch device the model ran on: cpu, cuda:0")
    backend: str = Field(description="cpu, cuda or rocm (a ROCm torch also calls its GPU 'cuda')")
    torch: str
    dtype_default: str
    tf32_matmul: bool | None = Field(default=None, description="torch.backends.cuda.matmul")
    tf32_cudnn: bool | None = Field(default=None, description="torch.backends.cudnn.allow_tf32")
    float32_matmul_precision: str | None = None
    fp16_reduced_precision_reduction: bool | None = None
    bf16_reduced_precision_reduction: bool | None = None
    deterministic_algorithms: bool | None = None
    cudnn_deterministic: bool | None = None
    cudnn_benchmark: bool | None = None
    num_threads: int | None = None
    sdpa_backends: list[str] | None = Field(
        default=None,
        description="scaled_dot_product_attention backends enabled (flash, mem_efficient, "
        "math, cudnn): torch.backends.cuda.*_sdp_enabled()",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="environment variables that change kernels: NVIDIA_TF32_OVERRIDE, "
        "MIOPEN_DEBUG_*, PYTORCH_TUNABLEOP_*, CUBLAS_WORKSPACE_CONFIG, ...",
    )


class TensorInfo(BaseModel):
    """One stored tensor: its name in the safetensors file and what it looked like."""

    model_config = ConfigDict(frozen=True)

    name: str
    dtype: str
    shape: list[int]
    ref: str | None = Field(
        default=None,
        description="the stored tensor this one is identical to (same object, not modified)",
    )

    @property
    def stored(self) -> str:
        """The name of the tensor that holds the bytes."""
        return self.ref or self.name


class ModuleRecord(BaseModel):
    """One call of one module during the captured forward pass."""

    model_config = ConfigDict(frozen=True)

    order: int = Field(description="position among all recorded calls, in completion order")
    path: str = Field(description="module path from named_modules(); '(model)' for the root")
    call: int = Field(default=0, description="0 for the first call of this module, 1, ...")
    op: str = Field(description="class name, e.g. Linear, RMSNorm")
    op_class: str = Field(description="tolerance class: elementwise, matmul, conv, norm, ...")
    k: int | None = Field(default=None, description="reduction length K for reduction ops")
    config: str = Field(default="", description="the module's extra_repr(): eps, sizes, ...")
    outputs: list[TensorInfo] = Field(default_factory=list)
    grads: list[TensorInfo] = Field(default_factory=list, description="grads of the outputs")
    inputs: JsonValue = Field(
        default=None, description="encoded (args, kwargs) of the call, for replay; None if absent"
    )
    replay_note: str | None = Field(
        default=None, description="why this call cannot be replayed on recorded inputs"
    )
    parent: str | None = Field(
        default=None, description="path of the innermost recorded module this call ran inside"
    )
    parent_call: int = Field(default=0, description="call number of that parent")
    own_ops: int | None = Field(
        default=None,
        description="torch ops its own forward ran besides its children (None: not counted)",
    )
    autocast: str | None = Field(
        default=None, description="autocast dtype active when the call started; None: off"
    )
    sdpa: list[str] = Field(
        default_factory=list,
        description="backend torch chose for each scaled_dot_product_attention in the call",
    )

    @property
    def parent_key(self) -> tuple[str, int] | None:
        return None if self.parent is None else (self.parent, self.parent_call)

    @property
    def key(self) -> tuple[str, int]:
        """How a call is matched across machines: the module path and its call number."""
        return (self.path, self.call)


class CaptureManifest(BaseModel):
    """Everything in a ``.gpv`` file besides the tensors (stored as JSON in its metadata)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.validate.capture"] = "gpuport.validate.capture"
    schema_version: str = SCHEMA_VERSION
    env: EnvFingerprint
    settings: NumericSettings
    model_ref: str
    seed: int
    backward: bool = False
    module_filter: list[str] = Field(default_factory=list)
    signature: str = Field(description="sha256 over sorted (name, shape, dtype) of params/buffers")
    param_checksum: str = Field(
        description="sha256 over names and CRC-32s of parameter and buffer values"
    )
    structure: dict[str, list[str]] = Field(
        default_factory=dict, description="module path → sorted 'name:shape:dtype' of its tensors"
    )
    model_inputs: JsonValue = Field(description="encoded (args, kwargs) of the model call")
    loss_weights: list[str] = Field(default_factory=list, description="tensor names, --backward")
    modules: list[ModuleRecord] = Field(default_factory=list)
    left_out: list[str] = Field(
        default_factory=list,
        description="module calls not stored because of --max-bytes, and modules not traced "
        "(never called as a module, or outside --modules), each with the reason",
    )
    max_bytes: int
    stored_bytes: int
    checksums: dict[str, str] = Field(description="tensor name → sha256 of its bytes")


class Tolerance(BaseModel):
    """The tolerance a tensor was judged by: ``|b - a| <= atol + rtol * |a|`` for every element,
    and a cosine of at least ``min_cosine`` when RMS(b - a) > atol; and why."""

    model_config = ConfigDict(frozen=True)

    atol: float
    rtol: float
    op_class: str
    k: int | None = None
    min_cosine: float | None = Field(
        default=None, description="cosine floor (gate) applied above the atol noise floor"
    )
    max_rel_rms: float | None = Field(
        default=None, description="--precision: relative RMS error the format explains"
    )
    provenance: str


class Metrics(BaseModel):
    """How far B's tensor is from A's (A is the reference: relative errors divide by |A|)."""

    model_config = ConfigDict(frozen=True)

    numel: int
    max_abs: float
    mean_abs: float
    max_rel: float = Field(
        description="max |b-a| / max(|a|, atol): relative error where it means something"
    )
    max_ulp: int | None = Field(
        default=None,
        description="max distance in units in the last place of the tensors' own dtype, "
        "over elements where A and B are both normal, of the same sign, and |a| >= the "
        "tolerance's atol; None when the dtypes differ or no element qualifies",
    )
    cosine: float | None = None
    sqnr_db: float | None = Field(
        default=None, description="10·log10(Σa² / Σ(b-a)²); None when the tensors are equal"
    )
    mismatched: int = Field(default=0, description="elements beyond the tolerance")
    nonfinite_a: int = Field(default=0, description="elements NaN/Inf in A only (or unequal)")
    nonfinite_b: int = Field(default=0, description="elements NaN/Inf in B where A is finite")
    min_atol: float = Field(
        default=0.0, description="smallest atol that would pass at the tolerance's rtol"
    )
    min_rtol: float | None = Field(
        default=0.0,
        description="smallest rtol that would pass at the tolerance's atol (None: no rtol would)",
    )
    min_cosine: float | None = Field(default=None, description="the cosine floor applied")
    cosine_failed: bool = Field(
        default=False,
        description="the cosine is below min_cosine while RMS(b - a) is above atol",
    )
    max_rel_rms: float | None = Field(
        default=None,
        description="--precision: the relative RMS error the format explains; when set, "
        "within means rel_rms <= max_rel_rms (a normwise check) instead of the elementwise rule",
    )

    @property
    def exact(self) -> bool:
        return self.max_abs == 0.0 and self.nonfinite_a == 0 and self.nonfinite_b == 0

    @property
    def within(self) -> bool:
        if self.max_rel_rms is not None:
            return (
                self.nonfinite_a == 0 and self.nonfinite_b == 0 and self.rel_rms <= self.max_rel_rms
            )
        return (
            self.mismatched == 0
            and self.nonfinite_a == 0
            and self.nonfinite_b == 0
            and not self.cosine_failed
        )

    @property
    def rel_rms(self) -> float:
        """sqrt(Σ(b-a)² / Σa²) over the finite elements: a scale-free size of the error."""
        if self.sqnr_db is None:
            return 0.0
        return float(10.0 ** (-self.sqnr_db / 20.0))


class Arbitration(BaseModel):
    """Dynamo ``same()`` with an fp64 reference: which side is closer to float64?"""

    model_config = ConfigDict(frozen=True)

    err_a: float = Field(description="RMSE of A's output against the float64 recomputation")
    err_b: float = Field(description="RMSE of B's output (on A's inputs) against float64")
    ratio: float | None = Field(description="err_b / err_a (None when err_a is 0)")
    multiplier: float
    floor: float = Field(description="errors below this are rounding of the result itself")
    nonfinite_a: int = Field(
        default=0, description="elements NaN/Inf in A where the float64 result is finite"
    )
    nonfinite_b: int = Field(
        default=0, description="elements NaN/Inf in B where the float64 result is finite"
    )
    b_source: Literal["local", "propagated"] = Field(
        description="local: B's module ran on A's recorded inputs; propagated: B's own run"
    )
    provenance: str


class OpDivergence(BaseModel):
    """The first op inside a module call whose result is further from float64 than a correct
    computation in the module's precision is (op-level replay on A's recorded inputs)."""

    model_config = ConfigDict(frozen=True)

    op: str = Field(description="torch function name: scaled_dot_product_attention, linear, ...")
    index: int = Field(description="position among the torch ops the replay ran (0-based)")
    call_site: str = Field(description="file:line of the code that called it")
    shapes: list[list[int]] = Field(default_factory=list, description="tensor input shapes")
    dtypes: list[str] = Field(default_factory=list, description="tensor input dtypes")
    out_dtype: str
    nominal_dtype: str = Field(description="the precision the module's op was judged against")
    backend_a: str | None = Field(default=None, description="SDPA backend A's call used")
    backend_b: str | None = Field(default=None, description="SDPA backend B's replay used")
    err_b: float = Field(description="RMSE of B's op result against float64")
    err_ref: float = Field(description="RMSE of the op in nominal_dtype on the CPU against fp64")
    ops_checked: int = Field(description="ops compared before and including this one")


class Row(BaseModel):
    """One compared tensor: a module call's output (or the gradient of one)."""

    model_config = ConfigDict(frozen=True)

    order: int
    path: str
    call: int = 0
    kind: Literal["output", "grad"] = "output"
    index: int = Field(default=0, description="position of the tensor among the call's outputs")
    op: str
    dtype: str
    shape: list[int]
    numel: int
    metrics: Metrics | None = Field(default=None, description="B's own run against A's")
    tolerance: Tolerance | None = None
    local: Metrics | None = Field(
        default=None, description="B's module on A's recorded inputs against A's output"
    )
    arbitration: Arbitration | None = None
    first_op: OpDivergence | None = Field(
        default=None, description="op-level replay: the first diverging op inside this call"
    )
    status: Status
    reason: str = ""

    @property
    def label(self) -> str:
        """``path``, with the call number and tensor index when they are not the first."""
        out = self.path
        if self.call:
            out += f" (call {self.call})"
        if self.kind == "grad":
            out += " grad"
        if self.index:
            out += f" [{self.index}]"
        return out

    @property
    def judged(self) -> Metrics | None:
        """The metrics the status was decided on: local when grafting ran, else propagated."""
        return self.local if self.local is not None else self.metrics


class Side(BaseModel):
    """One machine of the comparison."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="'A' or 'B'")
    file: str | None = None
    env: EnvFingerprint
    settings: NumericSettings


class Verdict(enum.StrEnum):
    SAME = "same"
    EQUIVALENT = "equivalent"
    DIFFERENT = "different"
    WRONG = "wrong"
    NOTHING = "nothing-compared"


class ParityReport(BaseModel):
    """The answer of ``gpuport validate check`` / ``diff``."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.validate"] = "gpuport.validate"
    schema_version: str = SCHEMA_VERSION
    mode: Literal["check", "diff"]
    model_ref: str | None = None
    a: Side
    b: Side
    grafted: bool = False
    reference: Literal["fp64", "none"] = "none"
    settings_warnings: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    rows: list[Row] = Field(default_factory=list)
    first_divergence: str | None = Field(
        default=None,
        description="path of the first module, in execution order, that is different or wrong",
    )
    first_divergence_order: int | None = None
    counts: dict[Status, int] = Field(default_factory=dict)
    left_out: list[str] = Field(
        default_factory=list,
        description="what A did not record: calls beyond --max-bytes, modules never called "
        "as modules, modules outside --modules",
    )
    weights_differ: bool = Field(
        default=False, description="B's weights differ from A's (exit 1 unless allowed)"
    )
    precision: str | None = Field(
        default=None, description="--precision: B ran in this format against A's capture"
    )
    verdict: Verdict
    verdict_reason: str
    bytes_compared: int = 0
    seconds: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def digest(self) -> str:
        """Content digest written with the report, checked on load (:mod:`gpuport.integrity`)."""
        return sealed_digest(self)


class CaptureSummary(BaseModel):
    """What ``gpuport validate capture`` did: printed to stdout, the tensors go to the file."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.validate.capture-summary"] = "gpuport.validate.capture-summary"
    schema_version: str = SCHEMA_VERSION
    path: str
    model_ref: str
    device: str
    calls: int = Field(description="module calls recorded")
    tensors: int = Field(description="tensors stored (identical ones are stored once)")
    stored_bytes: int
    left_out: list[str] = Field(
        default_factory=list, description="calls beyond --max-bytes, and what was not traced"
    )
    backward: bool = False
    seconds: float
    settings: NumericSettings
