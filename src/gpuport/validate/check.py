"""Machine B: replay A's inputs through B's model and compare module by module.

Three passes, each only as expensive as it needs to be:

1. **B's own run** on A's recorded model inputs, hooked like the capture. Each output is
   compared with A's the moment it is produced (then dropped), so B never holds a second copy
   of the activations. These are *propagated* differences: they include everything upstream.
2. **Grafting** (``--grafted`` for every module, otherwise only for suspects when arbitrating):
   B's module runs on A's *recorded inputs*, which separates the module's *local* error from
   error it inherited.
3. **fp64 arbitration** (``--reference fp64``) for modules still beyond tolerance locally: see
   :mod:`gpuport.validate.arbitrate`.

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
from gpuport.validate import env, gpv
from gpuport.validate.arbitrate import Decision, decide, double_module, to_double
from gpuport.validate.capture import build_model, seed_everything, to_device
from gpuport.validate.metrics import compare_tensors, kind_mismatch
from gpuport.validate.model import (
    Metrics,
    ModuleRecord,
    ParityReport,
    Row,
    Side,
    Status,
    TensorInfo,
    Tolerance,
)
from gpuport.validate.report import Upstream, finish, judge
from gpuport.validate.tolerance import ASSERT_CLOSE, tolerance
from gpuport.validate.trace import ROOT, Handler, flatten_tensors, traced

Observer = Callable[[str], None]


@dataclass(frozen=True)
class CheckOptions:
    path: Path
    model_ref: str
    grafted: bool = False
    reference: str = "fp64"
    device: str = "cpu"


@dataclass
class _Item:
    """One tensor of A's capture and what B made of it."""

    rec: ModuleRecord
    kind: str
    index: int
    info: TensorInfo
    tol: Tolerance
    metrics: Metrics | None = None
    local: Metrics | None = None
    decision: Decision | None = None
    note: str | None = None
    hard: str | None = None  # a structural failure (shape, dtype kind): wrong, whatever the numbers
    whole_model: bool = False  # the root's row, which the local pass would have replayed


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

    def __init__(self, torch: Any, cap: gpv.GpvFile, backward: bool) -> None:
        self.torch = torch
        self.cap = cap
        self.backward = backward
        self.by_key = {r.key: r for r in cap.manifest.modules}
        self.items: dict[tuple[str, int, str, int], _Item] = {}
        for rec in cap.manifest.modules:
            for i, info in enumerate(rec.outputs):
                self._add(rec, "output", i, info)
            for info in rec.grads:
                self._add(rec, "grad", gpv.tensor_index(info.name), info)
        self.extra: list[str] = []
        self.bytes = 0

    def _add(self, rec: ModuleRecord, kind: str, index: int, info: TensorInfo) -> None:
        tol = tolerance(info.dtype, "grad" if kind == "grad" else rec.op_class, rec.k)
        item = _Item(rec, kind, index, info, tol, note="B never made this call")
        self.items[(rec.path, rec.call, kind, index)] = item

    def measure(self, item: _Item, b: Any) -> Metrics | None:
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
        if b_dtype != item.info.dtype:
            item.tol = tolerance_for(item.rec, item.info.dtype, b_dtype)
        self.bytes += a.numel() * a.element_size()
        tol = item.tol
        return compare_tensors(self.torch, a, b, tol.atol, tol.rtol, tol.min_cosine)

    def after(
        self, path: str, module: Any, call: int, order: int, args: Any, outputs: list[Any]
    ) -> None:
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
            grad = self.items.get((path, call, "grad", i))
            if grad is not None and self.backward and outputs[i].requires_grad:
                outputs[i].register_hook(self._grad_hook(grad))

    def _grad_hook(self, item: _Item) -> Callable[[Any], None]:
        def hook(g: Any) -> None:
            item.note = None
            item.metrics = self.measure(item, g)

        return hook


def _replay(torch: Any, module: Any, rec: ModuleRecord, cap: gpv.GpvFile, device: Any) -> Any:
    """B's module on A's recorded inputs (copies: the module may work in place)."""
    args, kwargs = gpv.decode_call(rec.inputs, lambda n: cap.tensor(n, copy=True))
    args, kwargs = to_device(torch, args, device), to_device(torch, kwargs, device)
    with torch.no_grad():
        return flatten_tensors(torch, module(*args, **kwargs))


def _fp64(torch: Any, module: Any, rec: ModuleRecord, cap: gpv.GpvFile) -> list[Any]:
    """B's module in float64 on the CPU, on copies of A's recorded inputs (to_double copies:
    the reads share the file's memory, and the module may work in place)."""
    args, kwargs = gpv.decode_call(rec.inputs, lambda n: cap.tensor(n))
    m64 = double_module(torch, module)
    with torch.no_grad():
        return flatten_tensors(torch, m64(*to_double(torch, args), **to_double(torch, kwargs)))


def local_pass(
    torch: Any,
    model: Any,
    comparer: Comparer,
    *,
    device: Any,
    grafted: bool,
    reference: str,
    say: Observer,
) -> None:
    """Grafting and fp64 arbitration, module call by module call, in execution order."""
    cap = comparer.cap
    mods = {path or ROOT: m for path, m in model.named_modules()}
    for rec in cap.manifest.modules:
        items = [comparer.items[(rec.path, rec.call, "output", i)] for i in range(len(rec.outputs))]
        suspect = any(it.metrics is not None and not it.metrics.within for it in items)
        if not (grafted or (reference == "fp64" and suspect)):
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
                outs = _replay(torch, module, rec, cap, device)
            except Exception as exc:
                outs, note = [], f"replay on A's inputs failed: {type(exc).__name__}: {exc}"
            for it in items:
                if it.index < len(outs):
                    it.local = comparer.measure(it, outs[it.index])
        if note is not None:
            for it in items:
                it.note = note if it.note is None else it.note
            continue
        todo = [it for it in items if it.local is not None and not it.local.within]
        if reference != "fp64" or not todo:
            continue
        say(f"recomputing {rec.path} in float64")
        try:
            ref64 = _fp64(torch, module, rec, cap)
        except Exception as exc:
            for it in todo:
                it.note = f"fp64 recomputation failed: {type(exc).__name__}: {exc}"
            continue
        for it in todo:
            if it.index < len(ref64) and ref64[it.index].is_floating_point():
                a = cap.tensor(it.info.stored)
                b = outs[it.index].detach().to("cpu")
                if ref64[it.index].shape == a.shape:
                    it.decision = decide(torch, a, b, ref64[it.index], it.info.dtype, "local")


def _label(rec: ModuleRecord) -> str:
    return rec.path if not rec.call else f"{rec.path} (call {rec.call})"


def _statuses(comparer: Comparer) -> dict[int, tuple[Status, str]]:
    """Status and reason of every item (by id), judged in completion order so that each
    output knows what B's own run showed before it (see :class:`report.Upstream`)."""
    out: dict[int, tuple[Status, str]] = {}
    upstream = Upstream()
    for rec in sorted(comparer.cap.manifest.modules, key=lambda r: r.order):
        label = _label(rec)
        outputs = [
            comparer.items[(rec.path, rec.call, "output", i)] for i in range(len(rec.outputs))
        ]
        after = upstream
        for it in outputs:
            if it.hard:
                out[id(it)] = (Status.WRONG, it.hard)
            else:
                out[id(it)] = judge(
                    it.metrics,
                    it.local,
                    it.decision,
                    it.note,
                    upstream,
                    label=label,
                    whole_model=it.whole_model,
                )
            after = after.then(label, it.metrics, hard=it.hard is not None)
        upstream = after if outputs else upstream.then(label, None, hard=False)
    for it in comparer.items.values():
        if id(it) not in out:  # gradients: judged on B's own run alone
            if it.hard:
                out[id(it)] = (Status.WRONG, it.hard)
            else:
                out[id(it)] = judge(it.metrics, it.local, it.decision, it.note)
    return out


def _rows(comparer: Comparer) -> list[Row]:
    rows: list[Row] = []
    statuses = _statuses(comparer)
    for it in comparer.items.values():
        status, reason = statuses[id(it)]
        rows.append(
            Row(
                order=it.rec.order,
                path=it.rec.path,
                call=it.rec.call,
                kind="grad" if it.kind == "grad" else "output",
                index=it.index,
                op=it.rec.op,
                dtype=it.info.dtype,
                shape=it.info.shape,
                numel=_numel(it.info.shape),
                metrics=it.metrics,
                tolerance=it.tol,
                local=it.local,
                arbitration=it.decision.arbitration if it.decision else None,
                status=status,
                reason=reason,
            )
        )
    return rows


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


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
) -> ParityReport:
    """Compare ``model`` (machine B) with the capture ``cap`` (machine A)."""
    t0 = time.perf_counter()
    say = observer or (lambda _msg: None)
    man = cap.manifest
    device = device if device is not None else torch.device("cpu")
    model = model.to(device).eval()
    say("fingerprinting the model")
    signature, structure, checksum = env.model_identity(torch, model)
    if signature != man.signature:
        diffs = env.structure_diff(man.structure, structure) or ["parameter dtypes or order"]
        raise GpuportError(
            f"{cap.path} was captured from a different model: {len(diffs)} module(s) differ, "
            f"e.g. {diffs[0]}"
        )
    warnings: list[str] = []
    if checksum != man.param_checksum:
        warnings.append(
            "B's weights differ from A's (same architecture, other values): every module will "
            "differ; make build() deterministic (load the weights, or initialise on the CPU "
            "from the seed gpuport sets)"
        )
    warnings += _config_warnings(model, man.modules)
    recorded = {r.path for r in man.modules}
    selected = [(p or ROOT, m) for p, m in model.named_modules() if (p or ROOT) in recorded]
    comparer = Comparer(torch, cap, man.backward)
    args, kwargs = gpv.decode_call(man.model_inputs, lambda n: cap.tensor(n, copy=True))
    args, kwargs = to_device(torch, args, device), to_device(torch, kwargs, device)
    say("running B's model on A's inputs")
    seed_everything(torch, man.seed)
    grad_ctx = torch.enable_grad() if man.backward else torch.no_grad()
    with grad_ctx, traced(torch, selected, comparer):
        output = call_user(model, "the model's forward", *args, **kwargs)
        if man.backward:
            _backward(torch, output, cap, warnings)
    local_pass(torch, model, comparer, device=device, grafted=grafted, reference=reference, say=say)
    left_out = set(man.left_out)
    extra = [label for label in comparer.extra if label not in left_out]
    if extra:
        warnings.append(f"B made {len(extra)} module call(s) A did not record, e.g. {extra[0]}")
    b_settings = env.numeric_settings(torch, device)
    return finish(
        mode="check",
        rows=_rows(comparer),
        a=Side(name="A", file=str(cap.path), env=man.env, settings=man.settings),
        b=Side(name="B", env=env.fingerprint(torch, device), settings=b_settings),
        model_ref=model_ref,
        grafted=grafted,
        reference=reference,
        settings_warnings=env.settings_warnings(man.settings, b_settings),
        warnings=warnings,
        left_out=man.left_out,
        bytes_compared=comparer.bytes,
        seconds=time.perf_counter() - t0,
    )


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
        )
