"""Machine B: replay A's inputs through B's model and compare module by module.

Three passes, each only as expensive as it needs to be:

1. **B's own run** on A's recorded model inputs, hooked like the capture. Each output is
   compared with A's the moment it is produced (then dropped), so B never holds a second copy
   of the activations. These are *propagated* differences: they include everything upstream.
2. **Grafting** (``--grafted`` for every module, otherwise only for suspects when arbitrating):
   B's module runs on A's *recorded inputs*, which separates the module's *local* error from
   error it inherited.
3. **fp64 arbitration** (``--reference fp64``) for modules still beyond tolerance locally: see
   :mod:`gpuport.validate.arbitrate` (the rule) and :mod:`gpuport.validate.fp64ref` (the reference).

The root module, always traced, is never replayed: its inputs are the model inputs, so B's own
run already is its run on A's inputs (and an fp64 copy of a whole model would not fit). Its row
catches divergence in the code after the last traced module (see :mod:`report`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport.models import GpuportError
from gpuport.usercode import call_user
from gpuport.validate import env, gpv, precision
from gpuport.validate.arbitrate import decide
from gpuport.validate.attribute import Context, Item, diverged_locally, origins, rows
from gpuport.validate.capture import build_model, device_type, seed_everything, to_device
from gpuport.validate.fp64ref import NotFloat64, fp64_outputs, not_float64
from gpuport.validate.metrics import compare_tensors, kind_mismatch
from gpuport.validate.model import (
    Metrics,
    ModuleRecord,
    OpDivergence,
    ParityReport,
    Side,
    TensorInfo,
    Tolerance,
)
from gpuport.validate.ops import replay_ops
from gpuport.validate.report import finish
from gpuport.validate.tolerance import ASSERT_CLOSE, tolerance
from gpuport.validate.trace import ROOT, CallInfo, Handler, flatten_tensors, same_values, traced

Observer = Callable[[str], None]


@dataclass(frozen=True)
class CheckOptions:
    path: Path
    model_ref: str
    grafted: bool = False
    reference: str = "fp64"
    device: str = "cpu"
    precision: str | None = None


# op-level replays per check: each runs one module again with every op recomputed twice
MAX_OP_REPLAYS = 3


def loosest(own: Tolerance, inner: list[Tolerance]) -> Tolerance:
    """``own`` loosened to the largest atol/rtol and smallest cosine floor in ``inner``."""
    wide = max(inner, key=lambda t: t.atol, default=own)
    atol = max(own.atol, wide.atol)
    rtol = max([own.rtol, *(t.rtol for t in inner)])
    floors = [t.min_cosine for t in [own, *inner] if t.min_cosine is not None]
    if own.max_rel_rms is not None:  # --precision: the normwise limit of the deepest reduction
        deep = max(inner, key=lambda t: t.max_rel_rms or 0.0, default=own)
        if (deep.max_rel_rms or 0.0) <= own.max_rel_rms:
            return own
        return own.model_copy(
            update={
                "max_rel_rms": deep.max_rel_rms,
                "k": deep.k,
                "provenance": f"the loosest of its traced children, which it contains: "
                f"{deep.provenance}",
            }
        )
    if atol == own.atol and rtol == own.rtol:
        return own
    return own.model_copy(
        update={
            "atol": atol,
            "rtol": rtol,
            "min_cosine": min(floors) if floors else None,
            "provenance": (
                f"the loosest tolerance of its traced children, which it contains "
                f"(atol {atol:g}, rtol {rtol:g}): {wide.provenance}"
            ),
        }
    )


def tolerance_for(rec: ModuleRecord, a_dtype: str, b_dtype: str) -> Tolerance:
    """Per-dtype tolerance of A's tensor; with mixed dtypes the looser one (as assert_close)."""
    dtype = a_dtype
    if (
        b_dtype != a_dtype
        and ASSERT_CLOSE.get(b_dtype, (0.0,))[0] > ASSERT_CLOSE.get(a_dtype, (0.0,))[0]
    ):
        dtype = b_dtype
    return tolerance(dtype, rec.op_class, rec.k)


class Comparer(Handler):
    """Compares each of B's outputs (and grads) with A's as soon as B produces it."""

    def __init__(
        self, torch: Any, cap: gpv.GpvFile, backward: bool, fmt: str | None = None
    ) -> None:
        self.torch = torch
        self.cap = cap
        self.backward = backward
        self.fmt = fmt
        self.by_key = {r.key: r for r in cap.manifest.modules}
        self.b_autocast: dict[tuple[str, int], str | None] = {}
        # calls whose inputs in B's run were exactly A's recorded ones (see before())
        self.same_inputs: set[tuple[str, int]] = set()
        # B's own outputs of such calls that diverged: fp64 judges them if a replay does not
        self.kept: dict[tuple[str, int, int], Any] = {}
        self.items: dict[tuple[str, int, str, int], Item] = {}
        self.extra: list[str] = []
        self.bytes = 0
        for rec in cap.manifest.modules:
            for i, info in enumerate(rec.outputs):
                self._add(rec, "output", i, info)
            for info in rec.grads:
                self._add(rec, "grad", gpv.tensor_index(info.name), info)
        self._containers()

    def _containers(self) -> None:
        """A call with traced descendants contains their reductions: its outputs get the
        loosest of its own and their tolerances (a block's residual add after a K = 4096
        projection inherits the projection's K-scaled atol)."""
        recs = self.cap.manifest.modules
        inner: dict[tuple[str, int], list[Tolerance]] = {}
        for rec in sorted(recs, key=lambda r: r.order):  # children complete first
            mine = [
                self.items[(rec.path, rec.call, "output", i)].tol for i in range(len(rec.outputs))
            ]
            mine += inner.get(rec.key, [])
            key = rec.parent_key
            if key is not None:
                inner.setdefault(key, []).extend(mine)
            if rec.key in inner:
                for i in range(len(rec.outputs)):
                    item = self.items[(rec.path, rec.call, "output", i)]
                    item.tol = loosest(item.tol, inner[rec.key])

    def _add(self, rec: ModuleRecord, kind: str, index: int, info: TensorInfo) -> None:
        tol = tolerance(info.dtype, "grad" if kind == "grad" else rec.op_class, rec.k)
        if self.fmt is not None:
            tol = precision.tolerance(self.fmt, rec)
        item = Item(rec, kind, index, info, tol, note="B never made this call")
        self.items[(rec.path, rec.call, kind, index)] = item

    def measure(self, item: Item, b: Any) -> Metrics | None:
        """Metrics of B's tensor against A's; a shape mismatch is recorded as a hard failure."""
        a = self.cap.tensor(item.info.stored)
        b = b.detach().to("cpu")
        if list(b.shape) != list(a.shape):
            item.hard = f"shape differs: A {list(a.shape)}, B {list(b.shape)}"
            return None
        why = kind_mismatch(a, b)
        if why is not None:
            item.hard = why
            return None
        b_dtype = str(b.dtype).removeprefix("torch.")
        if b_dtype != item.info.dtype and self.fmt is None:
            item.tol = tolerance_for(item.rec, item.info.dtype, b_dtype)
        self.bytes += a.numel() * a.element_size()
        tol = item.tol
        metrics = compare_tensors(self.torch, a, b, tol.atol, tol.rtol, tol.min_cosine)
        if tol.max_rel_rms is not None:
            metrics = metrics.model_copy(update={"max_rel_rms": tol.max_rel_rms})
        return metrics

    def before(self, path: str, module: Any, call: int, args: Any, kwargs: Any) -> None:
        """Note whether B's call got exactly A's recorded inputs. When it did and it still
        diverges, its inputs did not diverge: a replay that is within tolerance then failed to
        reproduce B's run (a context or patch its callers entered), not "untraced code"."""
        rec = self.by_key.get((path, call))
        if rec is None or rec.inputs is None or self.fmt is not None or rec.path == ROOT:
            return
        try:
            a_args, a_kwargs = gpv.decode_call(rec.inputs, lambda n: self.cap.tensor(n))
        except Exception:  # a call whose inputs cannot be decoded is judged as before
            return
        if same_values(self.torch, (a_args, a_kwargs), (args, kwargs)):
            self.same_inputs.add((path, call))

    def after(
        self,
        path: str,
        module: Any,
        call: int,
        order: int,
        args: Any,
        outputs: list[Any],
        info: CallInfo,
    ) -> None:
        self.b_autocast[(path, call)] = info.autocast
        rec = self.by_key.get((path, call))
        if rec is None:
            self.extra.append(path if not call else f"{path} (call {call})")
            return
        for i in range(len(rec.outputs)):
            item = self.items[(path, call, "output", i)]
            item.note = None
            if i >= len(outputs):
                item.hard = f"B's call returned {len(outputs)} tensors, A's {len(rec.outputs)}"
                continue
            item.metrics = self.measure(item, outputs[i])
            m = item.metrics
            if (path, call) in self.same_inputs and m is not None and not m.within:
                self.kept[(path, call, i)] = outputs[i].detach().to("cpu", copy=True)
            grad = self.items.get((path, call, "grad", i))
            if grad is not None and self.backward and outputs[i].requires_grad:
                outputs[i].register_hook(self._grad_hook(grad))

    def _grad_hook(self, item: Item) -> Callable[[Any], None]:
        def hook(g: Any) -> None:
            item.note = None
            item.metrics = self.measure(item, g)

        return hook


@dataclass(frozen=True)
class Replay:
    """How B replays a module call: where, in which format, under which autocast."""

    device: Any
    fmt: str | None = None

    def inputs(self, torch: Any, rec: ModuleRecord, cap: gpv.GpvFile) -> tuple[Any, Any]:
        """Copies of A's recorded inputs on B's device (cast with --precision): the module
        may work in place."""
        args, kwargs = gpv.decode_call(rec.inputs, lambda n: cap.tensor(n, copy=True))
        args, kwargs = to_device(torch, args, self.device), to_device(torch, kwargs, self.device)
        if self.fmt is not None:
            dtype = precision.dtype_of(torch, self.fmt)
            args, kwargs = precision.cast(torch, args, dtype), precision.cast(torch, kwargs, dtype)
        return args, kwargs

    def autocast(self, torch: Any, state: str | None) -> Any:
        """The autocast state B's own run had for this call (the replay must reproduce it)."""
        kind = self.device.type
        if state is None:
            return torch.autocast(kind, enabled=False)
        return torch.autocast(kind, dtype=getattr(torch, state), enabled=True)


def _replay(
    torch: Any, module: Any, rec: ModuleRecord, cap: gpv.GpvFile, how: Replay, state: str | None
) -> Any:
    """B's module on A's recorded inputs, under the autocast state of B's own call."""
    args, kwargs = how.inputs(torch, rec, cap)
    with torch.no_grad(), how.autocast(torch, state):
        return flatten_tensors(torch, module(*args, **kwargs))


def local_pass(
    torch: Any,
    model: Any,
    comparer: Comparer,
    *,
    how: Replay,
    grafted: bool,
    reference: str,
    say: Observer,
) -> None:
    """Grafting and fp64 arbitration, module call by module call, in execution order.

    With ``--precision`` every suspect is grafted (the question is each module's own error in
    the format) and nothing is arbitrated: float64 is closer to A's fp32 by construction.
    """
    cap = comparer.cap
    mods = {path or ROOT: m for path, m in model.named_modules()}
    if how.fmt is not None:
        reference = "none"
    for rec in cap.manifest.modules:
        items = [comparer.items[(rec.path, rec.call, "output", i)] for i in range(len(rec.outputs))]
        suspect = any(it.metrics is not None and not it.metrics.within for it in items)
        if not (grafted or ((reference == "fp64" or how.fmt) and suspect)):
            continue
        module = mods.get(rec.path)
        if rec.path == ROOT and module is not None and next(module.children(), None) is not None:
            for it in items:  # the whole model: its own run already ran on A's inputs
                it.local, it.whole_model = it.metrics, True
            continue
        note = rec.replay_note or ("inputs were not recorded" if rec.inputs is None else None)
        if module is None:
            note = "B's model has no module at this path"
        if note is None:
            say(f"replaying {rec.path} on A's inputs")
            try:
                seed_everything(torch, cap.manifest.seed)
                state = comparer.b_autocast.get(rec.key, rec.autocast)
                outs = _replay(torch, module, rec, cap, how, state)
            except Exception as exc:
                outs, note = [], f"replay on A's inputs failed: {type(exc).__name__}: {exc}"
            for it in items:
                if it.index < len(outs):
                    it.local = comparer.measure(it, outs[it.index])
        if note is not None:
            for it in items:
                it.note = note if it.note is None else it.note
            continue
        for it in items:
            if (rec.path, rec.call, it.index) in comparer.kept and it.local and it.local.within:
                it.local, it.unreproduced = None, UNREPRODUCED
        todo = [it for it in items if it.unreproduced or (it.local and not it.local.within)]
        if reference != "fp64" or not todo:
            continue
        say(f"recomputing {rec.path} in float64")
        try:
            ref64 = fp64_outputs(torch, module, rec, cap, _nominal(torch, rec, how))
        except NotFloat64 as low:
            for it in todo:
                _note(it, not_float64(str(low)))
            continue
        except Exception as exc:
            for it in todo:
                it.note = f"fp64 recomputation failed: {type(exc).__name__}: {exc}"
            continue
        for it in todo:
            if it.index < len(ref64) and ref64[it.index].is_floating_point():
                a = cap.tensor(it.info.stored)
                own = comparer.kept.get((rec.path, rec.call, it.index))
                b = own if it.unreproduced else outs[it.index].detach().to("cpu")
                if ref64[it.index].shape == a.shape:
                    source = "own" if it.unreproduced else "local"
                    it.decision = decide(torch, a, b, ref64[it.index], it.info.dtype, source)


def op_pass(
    torch: Any, model: Any, ctx: Context, cap: gpv.GpvFile, how: Replay, say: Observer
) -> None:
    """Op-level localisation: the calls that diverge on A's inputs while no traced descendant
    does are replayed once more, op by op (:class:`gpuport.validate.ops.OpReplay`)."""
    mods = {path or ROOT: m for path, m in model.named_modules()}
    for rec in origins(ctx)[:MAX_OP_REPLAYS]:
        module = mods.get(rec.path)
        items = ctx.outputs(rec)
        if module is None or rec.inputs is None or not items:
            continue
        say(f"replaying {rec.path} op by op")
        nominal = _nominal(torch, rec, how)
        try:
            seed_everything(torch, cap.manifest.seed)
            args, kwargs = how.inputs(torch, rec, cap)
            with how.autocast(torch, ctx.b_autocast.get(rec.key, rec.autocast)):
                replay = replay_ops(torch, module, args, kwargs, nominal, rec.sdpa)
            if replay.found is None and diverged_locally(items):
                # no op below the nominal precision explains it: judge the ops already in it
                # (on the CPU) against float64, in a second pass
                seed_everything(torch, cap.manifest.seed)
                args, kwargs = how.inputs(torch, rec, cap)
                with how.autocast(torch, ctx.b_autocast.get(rec.key, rec.autocast)):
                    second = replay_ops(torch, module, args, kwargs, nominal, rec.sdpa, True)
                second.checked += replay.checked
                replay = second
        except Exception as exc:
            _note(items[0], f"op-level replay failed: {type(exc).__name__}: {exc}")
            continue
        if replay.found is not None:
            items[0].first_op = OpDivergence(**replay.found)
        elif diverged_locally(items):
            dtype = str(nominal).removeprefix("torch.")
            _note(
                items[0],
                f"op-level replay: none of the {replay.checked} ops checked (of {replay.index}) "
                f"is further from float64 than {dtype} explains: what differs comes from "
                "outside these ops (their inputs, or code around the call)",
            )


UNREPRODUCED = (
    "its inputs in B's run were exactly A's, yet replayed alone on them it is within "
    "tolerance: what changed its numbers in B's run was active only around that call (a "
    "context, flag or patched function its callers set), so it is judged on B's own output"
)


def _note(item: Item, text: str) -> None:
    item.note = f"{item.note}; {text}" if item.note else text


def _nominal(torch: Any, rec: ModuleRecord, how: Replay) -> Any:
    """The precision the module's ops are judged in: the format with --precision, else the
    most precise floating dtype of A's outputs (float32 for an fp32 model)."""
    if how.fmt is not None:
        return precision.dtype_of(torch, how.fmt)
    best = None
    for info in rec.outputs:
        dtype = getattr(torch, info.dtype, None)
        floating = isinstance(dtype, torch.dtype) and dtype.is_floating_point
        if floating and (best is None or torch.finfo(dtype).eps < torch.finfo(best).eps):
            best = dtype
    return best or torch.float32


def _config_warnings(model: Any, records: list[ModuleRecord]) -> list[str]:
    mods = {path or ROOT: m for path, m in model.named_modules()}
    out: list[str] = []
    seen: set[str] = set()
    for rec in records:
        mod = mods.get(rec.path)
        if mod is None or rec.path in seen:
            continue
        seen.add(rec.path)
        op = type(mod).__name__
        if op != rec.op:
            out.append(f"{rec.path}: A ran a {rec.op}, B a {op}")
        config = _extra_repr(mod)
        if rec.config and config is not None and config != rec.config:
            out.append(f"{rec.path}: configuration differs: A '{rec.config}', B '{config}'")
    return out


def _extra_repr(module: Any) -> str | None:
    try:
        return str(module.extra_repr())[:500]
    except Exception:  # a user's extra_repr may fail; the configuration is then unknown
        return None


def check_model(
    torch: Any,
    model: Any,
    cap: gpv.GpvFile,
    *,
    device: Any = None,
    grafted: bool = False,
    reference: str = "fp64",
    model_ref: str | None = None,
    observer: Observer | None = None,
    fmt: str | None = None,
) -> ParityReport:
    """Compare ``model`` (machine B) with the capture ``cap`` (machine A); with ``fmt``
    (bf16, fp16) B runs in that format against A's capture (``--precision``)."""
    t0 = time.perf_counter()
    say = observer or (lambda _msg: None)
    man = cap.manifest
    device = device if device is not None else torch.device("cpu")
    model = model.to(device).eval()
    say("fingerprinting the model")
    warnings: list[str] = []
    weights_differ = _identity(torch, model, cap, fmt, warnings)
    if fmt is not None:
        model = model.to(precision.dtype_of(torch, fmt))
    warnings += _config_warnings(model, man.modules)
    recorded = {r.path for r in man.modules}
    selected = [(p or ROOT, m) for p, m in model.named_modules() if (p or ROOT) in recorded]
    comparer = Comparer(torch, cap, man.backward, fmt)
    how = Replay(device, fmt)
    args, kwargs = gpv.decode_call(man.model_inputs, lambda n: cap.tensor(n, copy=True))
    args, kwargs = to_device(torch, args, device), to_device(torch, kwargs, device)
    if fmt is not None:
        dtype = precision.dtype_of(torch, fmt)
        args, kwargs = precision.cast(torch, args, dtype), precision.cast(torch, kwargs, dtype)
    b_before = env.numeric_settings(torch, device)
    with env.applied(torch, man.settings) as changed:
        say("running B's model on A's inputs")
        seed_everything(torch, man.seed)
        grad_ctx = torch.enable_grad() if man.backward else torch.no_grad()
        kind = device_type(torch, model, args, kwargs)
        with grad_ctx, traced(torch, selected, comparer, kind):
            output = call_user(model, "the model's forward", *args, **kwargs)
            if man.backward:
                _backward(torch, output, cap, warnings)
        local_pass(torch, model, comparer, how=how, grafted=grafted, reference=reference, say=say)
        ctx = Context(comparer.items, list(man.modules), comparer.b_autocast, fmt)
        op_pass(torch, model, ctx, cap, how, say)
    left_out = set(man.left_out)
    extra = [label for label in comparer.extra if label not in left_out]
    if extra:
        warnings.append(f"B made {len(extra)} module call(s) A did not record, e.g. {extra[0]}")
    settings_warnings = [
        w
        for w in env.settings_warnings(man.settings, b_before)
        if w.split(":", 1)[0] not in {c.split(":", 1)[0] for c in changed}
    ]
    settings_warnings += changed + _autocast_warnings(man.modules, comparer.b_autocast)
    report = finish(
        mode="check",
        rows=rows(ctx),
        a=Side(name="A", file=str(cap.path), env=man.env, settings=man.settings),
        b=Side(name="B", env=env.fingerprint(torch, device), settings=b_before),
        model_ref=model_ref,
        grafted=grafted,
        reference=reference if fmt is None else "none",
        settings_warnings=settings_warnings,
        warnings=warnings,
        left_out=man.left_out,
        bytes_compared=comparer.bytes,
        seconds=time.perf_counter() - t0,
    )
    return report.model_copy(update={"weights_differ": weights_differ, "precision": fmt})


def _identity(
    torch: Any, model: Any, cap: gpv.GpvFile, fmt: str | None, warnings: list[str]
) -> bool:
    """Refuse another architecture; True when B's weights differ from A's. With ``fmt`` the
    dtypes may differ (a model already cast): its weights then cannot be compared."""
    man = cap.manifest
    signature, structure, checksum = env.model_identity(torch, model)
    if signature == man.signature:
        if checksum == man.param_checksum:
            return False
        warnings.append(
            "B's weights differ from A's (same architecture, other values): every module will "
            "differ, and the check fails (exit 1) unless --allow-weight-diff; make build() "
            "deterministic (load the weights, or initialise on the CPU from the seed gpuport sets)"
        )
        return True
    if fmt is not None and precision.strip_dtypes(man.structure) == precision.strip_dtypes(
        structure
    ):
        warnings.append(
            f"B's build() returned weights in other dtypes than A's: they were cast to {fmt} "
            "but could not be compared with A's (give B the fp32 weights to have them checked)"
        )
        return False
    diffs = env.structure_diff(man.structure, structure) or ["parameter dtypes or order"]
    hint = "" if fmt else " (a model cast to bf16/fp16 is compared with --precision)"
    raise GpuportError(
        f"{cap.path} was captured from a different model: {len(diffs)} module(s) differ, "
        f"e.g. {diffs[0]}{hint}"
    )


def _autocast_warnings(
    records: list[ModuleRecord], b_autocast: dict[tuple[str, int], str | None]
) -> list[str]:
    differ = [r for r in records if r.key in b_autocast and b_autocast[r.key] != r.autocast]
    if not differ:
        return []
    first = differ[0]
    return [
        f"autocast: A {first.autocast or 'off'}, B {b_autocast[first.key] or 'off'} in "
        f"{len(differ)} module call(s), from {first.path} on (autocast changes the dtype of "
        "matmuls, convolutions and attention); run both under the same autocast"
    ]


def _backward(torch: Any, output: Any, cap: gpv.GpvFile, warnings: list[str]) -> None:
    outs = [t for t in flatten_tensors(torch, output) if t.requires_grad]
    names = cap.manifest.loss_weights
    if len(outs) != len(names):
        warnings.append(
            f"--backward: B's model has {len(outs)} differentiable outputs, A's {len(names)}; "
            "gradients were not compared"
        )
        return
    loss = sum(
        (o.float() * cap.tensor(n).to(o.device)).sum() for o, n in zip(outs, names, strict=True)
    )
    call_user(loss.backward, "the backward pass")


def check(opts: CheckOptions, observer: Observer | None = None) -> ParityReport:
    """``gpuport validate check``: build the user's model here and compare it with the file."""
    if opts.reference not in ("fp64", "none"):
        raise GpuportError(f"--reference must be fp64 or none, not {opts.reference!r}")
    precision.parse(opts.precision)
    torch, _ = gpv.modules("gpuport validate check")
    device = env.resolve_device(torch, opts.device)
    with gpv.GpvFile(opts.path) as cap:
        model, _args, _kwargs = build_model(torch, opts.model_ref, cap.manifest.seed)
        return check_model(
            torch,
            model,
            cap,
            device=device,
            grafted=opts.grafted,
            reference=opts.reference,
            model_ref=opts.model_ref,
            observer=observer,
            fmt=precision.parse(opts.precision),
        )
