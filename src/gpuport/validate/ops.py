"""Seeing the torch ops inside a module call: counting them (capture) and checking them one by
one (op-level localisation on B).

Both use a ``torch.overrides.TorchFunctionMode``: every torch function and tensor method a
forward calls (``F.scaled_dot_product_attention``, ``torch.matmul``, ``x.softmax``) passes
through it, including calls in functional code that no module hook sees. Two consequences, the
same on A and B because both trace under such a mode:

* ``nn.MultiheadAttention`` takes its slow path (its fast path refuses torch-function modes),
  so its projections, SDPA and output projection are ordinary ops;
* composite Python functions that dispatch on ``has_torch_function`` as a whole
  (``F.multi_head_attention_forward``) are *expanded*: the mode stays active inside them, so the
  ops they are made of are seen one by one (:func:`expanded`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuport.validate.arbitrate import Decision

# ops that only read metadata or reshape: they compute nothing that could diverge
META = frozenset(
    {
        "__get__",
        "__set__",
        "dim",
        "size",
        "numel",
        "stride",
        "storage_offset",
        "is_floating_point",
        "is_complex",
        "is_contiguous",
        "data_ptr",
        "element_size",
        "get_device",
        "__len__",
        "__bool__",
        "__format__",
        "__repr__",
        "__hash__",
        "__index__",
        "tolist",
        "item",
        "requires_grad_",
        "has_names",
    }
)
CASTS = frozenset(
    {"to", "type", "float", "double", "half", "bfloat16", "_to_copy", "type_as", "cpu", "cuda"}
)
SDPA = "scaled_dot_product_attention"
# ops that only move or select data: nothing in them rounds, so the same-precision pass skips
STRUCTURAL = frozenset(
    {
        "cat", "stack", "view", "reshape", "transpose", "permute", "contiguous", "expand",
        "repeat", "repeat_interleave", "__getitem__", "index_select", "gather", "narrow",
        "select", "split", "chunk", "unsqueeze", "squeeze", "flatten", "unflatten", "clone",
        "embedding", "unbind", "t", "flip", "roll",
    }
)  # fmt: skip
# torch.nn.attention.SDPBackend values returned by torch._fused_sdp_choice
_BACKENDS = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable", -1: "error"}
_GPUPORT_DIR = str(Path(__file__).resolve().parent.parent)


def op_name(func: Any) -> str:
    return str(getattr(func, "__name__", None) or type(func).__name__)


def sdpa_backend(torch: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The backend torch picks for these SDPA arguments (None when it cannot say)."""
    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return None
    keep = ("attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    try:
        with torch.no_grad():
            code = choose(*args, **{k: v for k, v in kwargs.items() if k in keep})
        return _BACKENDS.get(int(code), str(code))
    except Exception:  # an argument combination _fused_sdp_choice does not take
        return None


def _expandable(torch: Any) -> dict[Any, Any]:
    """Composite functions to open up, and the module whose ``has_torch_function`` they use."""
    functional = torch.nn.functional
    fn = getattr(functional, "multi_head_attention_forward", None)
    return {fn: functional} if fn is not None else {}


@contextlib.contextmanager
def expanded(mode: Any, namespace: Any) -> Iterator[None]:
    """Run a composite with ``mode`` active inside it: its module-level ``has_torch_function``
    answers False for the outer check only (nested calls use the unary/variadic forms, or C)."""
    original = namespace.has_torch_function
    namespace.has_torch_function = lambda *_a, **_k: False
    try:
        with mode:
            yield
    finally:
        namespace.has_torch_function = original


def call_site() -> str:
    """file:line of the innermost frame outside torch and gpuport (the user's code); when the
    op was called by torch's own module code directly (a replayed ``nn.Linear``), that frame
    in torch (``torch/nn/modules/linear.py:134 (forward)``)."""
    frame: Any = sys._getframe(2)
    torch_dir = str(Path(sys.modules["torch"].__file__ or "").resolve().parent)
    last_torch: Any = None
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(
        _GPUPORT_DIR
    ):
        frame = frame.f_back  # this mode's own frames
    while frame is not None:
        name = str(Path(frame.f_code.co_filename).resolve())
        if name.startswith(_GPUPORT_DIR):
            break
        if not name.startswith(torch_dir):
            return f"{_shown(name)}:{frame.f_lineno} ({frame.f_code.co_name})"
        if last_torch is None and "/overrides.py" not in name and "/_ops.py" not in name:
            last_torch = frame
        frame = frame.f_back
    if last_torch is None:
        return "(inside torch)"
    where = str(Path(last_torch.f_code.co_filename).resolve())
    rel = os.path.relpath(where, str(Path(torch_dir).parent))
    return f"{rel}:{last_torch.f_lineno} ({last_torch.f_code.co_name})"


def _shown(name: str) -> str:
    try:
        shown = os.path.relpath(name)
    except ValueError:
        return name
    return name if shown.startswith("..") else shown


def make_counter(torch: Any) -> Any:
    """A TorchFunctionMode that hands each computing op to ``on_op(name, args, kwargs)``."""
    base = torch.overrides.TorchFunctionMode
    composites = _expandable(torch)

    class Counter(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.paused = False
            self.on_op: Callable[[str, Any, Any], None] = lambda _n, _a, _k: None

        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            if not self.paused:
                name = op_name(func)
                if name not in META:
                    self.on_op(name, args, kwargs)
                space = composites.get(func)
                if space is not None:
                    with expanded(self, space):
                        return func(*args, **kwargs)
            return func(*args, **kwargs)

    return Counter()


def _tensors(torch: Any, obj: Any) -> list[Any]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, tuple | list):
        return [t for x in obj for t in _tensors(torch, x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _tensors(torch, x)]
    return []


def _map(torch: Any, obj: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple | list):
        return type(obj)(_map(torch, x, fn) for x in obj)
    if isinstance(obj, dict):
        return {k: _map(torch, v, fn) for k, v in obj.items()}
    if isinstance(obj, torch.dtype) and obj.is_floating_point:
        return fn(obj)
    return obj


def _bits(torch: Any, dtype: Any) -> int:
    """Mantissa bits of a floating dtype (more is more precise); 99 for exact types."""
    if not dtype.is_floating_point:
        return 99
    return round(-math.log2(float(torch.finfo(dtype).eps)))


class OpReplay:
    """Checks every op of one module call as it runs (B's replay on A's recorded inputs).

    An op is recomputed on the CPU twice from its own inputs: in float64 (the truth) and in the
    module's nominal precision (what a correct kernel of that precision gives). The first op
    whose result is further from float64 than the nominal one by more than the Dynamo rule
    allows (:func:`gpuport.validate.arbitrate.decide`) is the diverging op. Casts to a lower
    precision are not blamed themselves: the cast tensor keeps a link to its source, and the op
    that then computes in the lower precision is recomputed from the source. An op on the CPU
    whose inputs and output already have the nominal precision is left to a second pass, run
    only when the first names no op (``same_precision``): recomputed in float64 only (its
    nominal recomputation would be the very same computation) and judged by
    :func:`same_precision`, so a kernel that is wrong in that precision is named although its
    inputs, B's own, agree. Only the current op's tensors are held,
    plus the source of each cast tensor, so memory stays that of the module's forward.
    """

    def __init__(
        self, torch: Any, nominal: Any, sdpa_a: list[str], same_precision: bool = False
    ) -> None:
        self.torch = torch
        self.nominal = nominal
        # the second pass: only the ops the first pass does not recompute (on the CPU, in the
        # nominal precision already), each against float64 (see same_precision)
        self.same_pass = same_precision
        self.sdpa_a = sdpa_a
        self.sdpa_seen = 0
        self.index = 0
        self.checked = 0
        self.found: dict[str, Any] | None = None
        self._links: dict[int, tuple[Any, Any]] = {}

    def _source(self, t: Any) -> Any:
        hit = self._links.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        return t

    def mode(self) -> Any:
        torch = self.torch
        composites = _expandable(torch)
        replay = self

        class Mode(torch.overrides.TorchFunctionMode):  # type: ignore[misc,name-defined]
            def __torch_function__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                kwargs = kwargs or {}
                name = op_name(func)
                if replay.found is not None or name in META:
                    return func(*args, **kwargs)
                backend = sdpa_backend(torch, args, kwargs) if name == SDPA else None
                space = composites.get(func)
                if space is not None:
                    with expanded(self, space):
                        return func(*args, **kwargs)
                out = func(*args, **kwargs)
                replay.observe(func, name, args, kwargs, out, backend)
                return out

        return Mode()

    def observe(
        self, func: Any, name: str, args: Any, kwargs: Any, out: Any, backend: str | None
    ) -> None:
        torch = self.torch
        index = self.index
        self.index += 1
        a_backend = None
        if name == SDPA:
            a_backend = self.sdpa_a[self.sdpa_seen] if self.sdpa_seen < len(self.sdpa_a) else None
            self.sdpa_seen += 1
        outs = [t for t in _tensors(torch, out) if t.is_floating_point()]
        ins = _tensors(torch, (args, kwargs))
        floats = [t for t in ins if t.is_floating_point()]
        if not outs or not floats:
            return
        if name in CASTS:
            src = self._source(floats[0])
            lossy = src is not floats[0]  # already rounded on the way (fp32 → fp8 → bf16)
            for t in outs:
                if lossy or _bits(torch, t.dtype) < _bits(torch, src.dtype):
                    self._links[id(t)] = (weakref.ref(t), src)
            return
        if (name.endswith("_") and not name.endswith("__")) or "out" in kwargs:
            return  # in place: its inputs are gone by now
        nominal_bits = _bits(torch, self.nominal)
        low = any(_bits(torch, t.dtype) < nominal_bits for t in [*floats, *outs])
        low = low or any(self._source(t) is not t for t in floats)
        # B's op already ran on the CPU in the nominal precision: recomputing it so would be
        # the very same computation, so it is judged against float64 alone (same_precision)
        same = not low and all(t.device.type == "cpu" for t in [*floats, *outs])
        if same != self.same_pass or (same and name in STRUCTURAL):
            return  # the other pass judges it; moving data computes nothing to round
        with torch.no_grad(), torch.autocast("cpu", enabled=False):  # the op as written
            try:
                ref = self._run(func, args, kwargs, torch.float64)
                nom = ref if same else self._run(func, args, kwargs, self.nominal)
            except Exception:
                return  # no CPU/float64 kernel for this op: it cannot be judged
        from gpuport.validate.arbitrate import decide

        self.checked += 1
        ref_outs = [t for t in _tensors(torch, ref) if t.is_floating_point()]
        nom_outs = [t for t in _tensors(torch, nom) if t.is_floating_point()]
        for b, r, a in zip(outs, ref_outs, nom_outs, strict=False):
            if b.shape != r.shape or a.shape != r.shape:
                continue
            dtype = str(self.nominal).removeprefix("torch.")
            try:
                cpu_b = b.detach().to("cpu")
                if same:
                    verdict = same_precision(torch, cpu_b, r.to("cpu"))
                else:
                    verdict = decide(torch, a.to("cpu"), cpu_b, r.to("cpu"), dtype, "local")
            except (RuntimeError, TypeError, ValueError):
                continue  # not comparable (a device or dtype the recomputation kept)
            if verdict.verdict == "wrong":
                self.found = {
                    "op": name,
                    "index": index,
                    "call_site": call_site(),
                    "shapes": [list(t.shape) for t in ins],
                    "dtypes": [str(t.dtype).removeprefix("torch.") for t in ins],
                    "out_dtype": str(b.dtype).removeprefix("torch."),
                    "nominal_dtype": dtype,
                    "backend_a": a_backend,
                    "backend_b": backend,
                    "err_b": verdict.arbitration.err_b,
                    "err_ref": verdict.arbitration.err_a,
                    "ops_checked": self.checked,
                }
                return

    def _run(self, func: Any, args: Any, kwargs: Any, dtype: Any) -> Any:
        """The op again, on the CPU, with floating inputs (via their cast links) in ``dtype``."""
        torch = self.torch

        def conv(x: Any) -> Any:
            if isinstance(x, torch.dtype):
                return dtype
            src = self._source(x).detach().to("cpu")
            return src.to(dtype) if src.is_floating_point() else src

        return func(*_map(torch, args, conv), **_map(torch, kwargs, conv))


#: How many times the error of rounding the float64 result to B's precision a correct op in that
#: precision may be away from float64: accumulation in a reduction of K terms costs about
#: sqrt(K) roundings (log2(K) with pairwise sums), so 512 holds reductions of 2^18 terms. A
#: kernel that is wrong (noise, a wrong constant, a lost term) is orders of magnitude beyond.
SAME_PRECISION_SLACK = 512.0


def same_precision(torch: Any, b: Any, ref64: Any) -> Decision:
    """An op B ran on the CPU in the nominal precision, against its float64 recomputation:
    *wrong* when B is further from float64 than :data:`SAME_PRECISION_SLACK` roundings, or
    has NaN/Inf where float64 is finite. Its inputs are B's own (they agree with themselves),
    so a wrong output here is the op's: named even when the ops before it were right."""
    from gpuport.validate.arbitrate import Decision, rmse
    from gpuport.validate.model import Arbitration

    fin_ref = torch.isfinite(ref64)
    b64 = b.to(torch.float64)
    bad_b = int((fin_ref & ~torch.isfinite(b64)).sum())
    mask = fin_ref & torch.isfinite(b64)
    err_b = rmse(torch, b64, ref64, mask)
    rounded = ref64.to(b.dtype).to(torch.float64)
    floor = rmse(torch, rounded, ref64, mask & torch.isfinite(rounded))
    allowed = SAME_PRECISION_SLACK * floor
    wrong = bool(bad_b) or math.isnan(err_b) or err_b > allowed + 1e-300
    arb = Arbitration(
        err_a=allowed,
        err_b=err_b,
        ratio=err_b / allowed if allowed > 0 else None,
        multiplier=SAME_PRECISION_SLACK,
        floor=floor,
        nonfinite_a=0,
        nonfinite_b=bad_b,
        b_source="local",
        provenance="B's op on the CPU in its own precision against float64: "
        f"at most {SAME_PRECISION_SLACK:g} x the rounding error of that precision",
    )
    return Decision(arb, "wrong" if wrong else "equivalent")


def replay_ops(
    torch: Any,
    module: Any,
    args: Any,
    kwargs: Any,
    nominal: Any,
    sdpa_a: list[str],
    same_precision: bool = False,
) -> OpReplay:
    """Run ``module(*args, **kwargs)`` op by op under an :class:`OpReplay`; with
    ``same_precision``, the second pass (the ops already in the nominal precision on the CPU)."""
    replay = OpReplay(torch, nominal, sdpa_a, same_precision)
    with torch.no_grad(), replay.mode():
        module(*args, **kwargs)
    return replay


def below_float64(torch: Any, nominal: Any) -> Any:
    """A TorchFunctionMode for the fp64 recomputation: ``mode.first`` becomes ``"op → dtype at
    site"`` for the first op that returns a floating tensor less precise than ``nominal`` (A's
    precision, e.g. float32). A module whose own code casts (``x.bfloat16()``) computes in that
    format even in its float64 copy, and such a "reference" would side with B. Casts to the
    nominal precision itself (Hugging Face norms compute in float32) are left alone: that
    reference is still as precise as A."""
    nominal_bits = _bits(torch, nominal)
    composites = _expandable(torch)

    class Watch(torch.overrides.TorchFunctionMode):  # type: ignore[misc]
        first: str | None = None

        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            space = composites.get(func)
            if space is not None:
                with expanded(self, space):
                    return func(*args, **kwargs)
            out = func(*args, **kwargs)
            name = op_name(func)
            if self.first is None and name not in META:
                low = [
                    t
                    for t in _tensors(torch, out)
                    if t.is_floating_point() and _bits(torch, t.dtype) < nominal_bits
                ]
                if low:
                    dtype = str(low[0].dtype).removeprefix("torch.")
                    self.first = f"{name} → {dtype} at {call_site()}"
            return out

    return Watch()
