"""Machine A: run the user's model once and record every traced module call into a ``.gpv``.

For each call the inputs are recorded *before* the module runs (an in-place module would
otherwise overwrite them) and the outputs right after; B needs the inputs to graft (run its
module on exactly A's inputs) and to recompute the module in float64. A tensor that is the very
object recorded earlier, unmodified (its version counter unchanged), is stored once and
referenced, so a chain of modules costs one copy of each activation, not two. "Unmodified" is
judged against the version counter *at the time of the copy*: an input first seen by a module
that then changes it in place (``ReLU(inplace=True)``, ``x.mul_(2)``) is copied before it runs,
and that copy never stands for the modified tensor afterwards.

The size budget stops recording at the first call that would exceed it; every call after that
is listed in ``left_out`` (a prefix of the execution is what first-divergence search needs).
The model's inputs count against it: every capture stores them. ``left_out`` also says what was
not traced at all: modules never called as modules (``nn.MultiheadAttention``'s ``out_proj``)
and, with ``--modules``, how many modules were outside the filter (:func:`untraced`).
"""

from __future__ import annotations

import random
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from gpuport.models import GpuportError
from gpuport.usercode import call_user, load_callable
from gpuport.validate import env, gpv
from gpuport.validate.model import (
    NOT_TRACED,
    CaptureManifest,
    CaptureSummary,
    ModuleRecord,
    TensorInfo,
)
from gpuport.validate.tolerance import op_class
from gpuport.validate.trace import (
    ROOT,
    CallInfo,
    Handler,
    flatten_tensors,
    is_leaf,
    reduction_k,
    select,
    traced,
)

DEFAULT_MAX_BYTES = 2 * 1024**3
Observer = Callable[[str], None]


@dataclass(frozen=True)
class CaptureOptions:
    model_ref: str
    out: Path
    modules: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    backward: bool = False
    device: str = "cpu"
    seed: int = 0


def seed_everything(torch: Any, seed: int) -> None:
    """Seed before build() and before the forward pass, identically on A and B, so a model
    that initialises its weights randomly (on the CPU) gets the same weights on both."""
    random.seed(seed)
    torch.manual_seed(seed)


def build_model(torch: Any, ref: str, seed: int) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """Call the user's ``build()`` and check it returned ``(model, example_inputs)``."""
    build = load_callable(ref, what="--model")
    seed_everything(torch, seed)
    result = call_user(build, f"--model {ref}: build()")
    if not (isinstance(result, tuple | list) and len(result) == 2):
        raise GpuportError(
            f"--model {ref}: build() must return (model, example_inputs), "
            f"got {type(result).__name__}"
        )
    model, inputs = result
    if not isinstance(model, torch.nn.Module):
        raise GpuportError(
            f"--model {ref}: build() returned a {type(model).__name__} as the model, "
            "not a torch.nn.Module"
        )
    args, kwargs = split_inputs(torch, inputs, ref)
    return model, args, kwargs


CACHE_OFF = (
    "past_key_values: not recorded: gpuport turned the model's KV cache off (use_cache=False) "
    "for the capture, and the check replays it so: a cache object cannot be stored or "
    "replayed, and one forward pass computes the same outputs without it"
)


def cache_off(model: Any, kwargs: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``kwargs`` with ``use_cache=False`` for a model that would build a KV cache (a Hugging
    Face model: ``config.use_cache``, a ``use_cache`` argument), and the note saying so.

    With the cache on, every attention call gets the cache object (``past_key_values``) and
    writes into it: no such call can be recorded or replayed on its own, so a divergence inside
    attention was blamed on the next projection. A single forward pass computes the same
    outputs without the cache; the capture records the switch in its inputs, so the check
    runs the same way."""
    import inspect

    if kwargs.get("use_cache") is False:
        return kwargs, None
    config = getattr(model, "config", None)
    wants = kwargs.get("use_cache") is True or getattr(config, "use_cache", False) is True
    if not wants:
        return kwargs, None
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return kwargs, None
    takes = "use_cache" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if not takes:
        return kwargs, None
    return {**kwargs, "use_cache": False}, CACHE_OFF


def split_inputs(torch: Any, inputs: Any, ref: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """example_inputs: a tensor, a tuple/list of positional args, or a dict of keyword args."""
    if isinstance(inputs, torch.Tensor):
        return (inputs,), {}
    if isinstance(inputs, tuple | list):
        return tuple(inputs), {}
    if isinstance(inputs, dict) and all(isinstance(k, str) for k in inputs):
        return (), dict(inputs)
    raise GpuportError(
        f"--model {ref}: example_inputs must be a tensor, a tuple of positional arguments or "
        f"a dict of keyword arguments, not {type(inputs).__name__}"
    )


def to_device(torch: Any, obj: Any, device: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple | list):
        return type(obj)(to_device(torch, x, device) for x in obj)
    if isinstance(obj, dict):
        return {k: to_device(torch, v, device) for k, v in obj.items()}
    return obj


@dataclass
class _Pending:
    spec: JsonValue = None
    # relative name → (the tensor, its version counter when copied, the CPU copy)
    tensors: dict[str, tuple[Any, int, Any]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # relative name → stored name
    note: str | None = None


class _Recorder(Handler):
    """Keeps CPU copies of inputs, outputs (and grads), deduplicated, within the budget."""

    def __init__(self, torch: Any, max_bytes: int, backward: bool) -> None:
        self.torch = torch
        self.max_bytes = max_bytes
        self.backward = backward
        self.store: dict[str, Any] = {}
        self.stored_bytes = 0
        self.stopped = False
        self.left_out: list[str] = []
        self.records: list[dict[str, Any]] = []
        self._known: dict[int, tuple[Any, int, str]] = {}
        self._pending: dict[tuple[str, int], _Pending] = {}
        self.parents: dict[tuple[str, int], tuple[str, int] | None] = {}
        self.called: set[str] = set()

    # -- storage ----------------------------------------------------------------------------

    def _ref(self, t: Any) -> str | None:
        """The stored name of ``t`` if this exact tensor was stored and not modified since."""
        hit = self._known.get(id(t))
        if hit is not None and hit[0]() is t and hit[1] == t._version:
            return hit[2]
        return None

    def copy(self, t: Any) -> Any:
        out = self.torch.empty(t.shape, dtype=t.dtype, device="cpu")
        with self.torch.no_grad():
            out.copy_(t.detach())
        return out

    def keep(self, name: str, original: Any, copy: Any, version: int | None = None) -> None:
        """Store ``copy`` under ``name``; remember ``original`` to spot it again unmodified.

        ``version`` is ``original``'s version counter when ``copy`` was taken (default: now):
        if the tensor was modified in place since, the copy no longer stands for it.
        """
        self.store[name] = copy
        self.stored_bytes += copy.numel() * copy.element_size()
        if original is not None:
            seen = original._version if version is None else version
            self._known[id(original)] = (weakref.ref(original), seen, name)

    # -- hooks ------------------------------------------------------------------------------

    def before(self, path: str, module: Any, call: int, args: Any, kwargs: Any) -> None:
        if self.stopped:
            return
        pending = _Pending()
        raw: dict[str, Any] = {}
        try:
            pending.spec = gpv.encode_call(self.torch, args, kwargs, "@", raw)
        except TypeError as exc:
            pending.note = f"cannot replay: an argument is not a tensor or plain value ({exc})"
            if "Cache" in str(exc):  # a KV cache object of a model cache_off did not recognise
                pending.note += "; pass use_cache=False in the example inputs"
            raw = {}
        for rel, t in raw.items():
            hit = self._ref(t)
            if hit is not None:
                pending.refs[rel] = hit
            else:
                pending.tensors[rel] = (t, t._version, self.copy(t))
        self._pending[(path, call)] = pending

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
        pending = self._pending.pop((path, call), None)
        label = path if not call else f"{path} (call {call})"
        self.called.add(path)
        self.parents[(path, call)] = info.parent
        if path != ROOT and info.own_ops == 0 and not is_leaf(module):
            return  # a pure container: its output is its children's, already traced
        if self.stopped or pending is None:
            self.left_out.append(label)
            return
        prefix = f"{order:06d}/{path}"
        out_refs = [self._ref(t) for t in outputs]
        need = sum(c.numel() * c.element_size() for _, _, c in pending.tensors.values())
        need += sum(
            t.numel() * t.element_size()
            for t, r in zip(outputs, out_refs, strict=True)
            if r is None
        )
        if self.stored_bytes + need > self.max_bytes:
            self.stopped = True
            self.left_out.append(label)
            return
        names: dict[str, str] = dict(pending.refs)
        for rel, (orig, version, copy) in pending.tensors.items():
            final = f"in/{prefix}{rel[1:]}"
            self.keep(final, orig, copy, version)  # the version it had when it was copied
            names[rel] = final
        spec = gpv.rename_tensors(pending.spec, lambda rel: names[rel])
        infos: list[TensorInfo] = []
        for i, t in enumerate(outputs):
            name = f"out/{prefix}/{i}"
            ref = self._ref(t)  # again: it may be this call's input (Identity) or an earlier output
            if ref is None:
                self.keep(name, t, self.copy(t))
            infos.append(
                TensorInfo(
                    name=name,
                    dtype=str(t.dtype).removeprefix("torch."),
                    shape=list(t.shape),
                    ref=ref,
                )
            )
        arg_tensors = [a for a in args if isinstance(a, self.torch.Tensor)]
        record: dict[str, Any] = {
            "order": order,
            "path": path,
            "call": call,
            "op": type(module).__name__,
            "op_class": op_class(type(module).__name__),
            "k": reduction_k(self.torch, module, tuple(arg_tensors), outputs),
            "config": _config(module),
            "outputs": infos,
            "grads": [],
            "inputs": None if pending.note else spec,
            "replay_note": pending.note,
            "parent": info.parent,
            "own_ops": info.own_ops,
            "autocast": info.autocast,
            "sdpa": list(info.sdpa),
        }
        self.records.append(record)
        if self.backward:
            for i, t in enumerate(outputs):
                if t.requires_grad and t.is_floating_point():
                    t.register_hook(self._grad_hook(record, f"grad/{prefix}/{i}", label))

    def _grad_hook(self, record: dict[str, Any], name: str, label: str) -> Callable[[Any], None]:
        def hook(grad: Any) -> None:
            size = grad.numel() * grad.element_size()
            if self.stopped or self.stored_bytes + size > self.max_bytes:
                self.stopped = True
                self.left_out.append(f"{label} grad")
                return
            self.keep(name, None, self.copy(grad))
            record["grads"].append(
                TensorInfo(
                    name=name,
                    dtype=str(grad.dtype).removeprefix("torch."),
                    shape=list(grad.shape),
                )
            )

        return hook


def resolve_parents(rec: _Recorder) -> None:
    """Point every record at its innermost *recorded* ancestor (pure containers are dropped)."""
    recorded = {(r["path"], r["call"]) for r in rec.records}
    for r in rec.records:
        parent = r.pop("parent")
        seen = 0
        while parent is not None and parent not in recorded and seen < 10_000:
            parent = rec.parents.get(parent)
            seen += 1
        r["parent"], r["parent_call"] = (parent if parent in recorded else (None, 0)) or (None, 0)


def untraced(
    model: Any, selected: list[tuple[str, Any]], called: set[str], modules: tuple[str, ...]
) -> list[str]:
    """What was not traced, for ``left_out``: modules never called as modules (their parent
    uses them, or their weights, directly) and, with --modules, those outside the filter."""
    chosen = {p for p, _ in selected}
    out: list[str] = []
    listed: list[str] = []
    for p, _m in selected:
        if p in called or p == ROOT or any(c.startswith(p + ".") for c in called):
            continue  # called, or a container (ModuleList) whose children were called
        if any(p.startswith(q + ".") for q in listed):
            continue  # inside a module already listed
        listed.append(p)
        out.append(
            f"{p}{NOT_TRACED} (never called as a module; its parent may use its weights "
            "directly, and is checked with them)"
        )
    if modules:
        outside = sum(1 for p, _ in model.named_modules() if (p or ROOT) not in chosen)
        if outside:
            out.append(f"{outside} module(s) outside --modules {' '.join(modules)}{NOT_TRACED}")
    return out


def _config(module: Any) -> str:
    try:
        return str(module.extra_repr())[:500]
    except Exception:
        return ""


def loss_weights(torch: Any, outputs: list[Any], seed: int) -> list[Any]:
    """Fixed random weights for the --backward loss Σ(out·w): seeded on the CPU, so any machine
    can recreate them, and stored anyway so B does not depend on the generator."""
    gen = torch.Generator().manual_seed(seed + 1)
    return [torch.randn(tuple(t.shape), generator=gen, dtype=torch.float32) for t in outputs]


def capture_model(
    torch: Any,
    model: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    out: Path,
    *,
    device: Any = None,
    modules: tuple[str, ...] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    backward: bool = False,
    seed: int = 0,
    model_ref: str = "(python)",
    observer: Observer | None = None,
) -> CaptureSummary:
    """Record ``model(*args, **kwargs)`` into ``out``; the library entry point of capture."""
    t0 = time.perf_counter()
    say = observer or (lambda _msg: None)
    device = device if device is not None else torch.device("cpu")
    if max_bytes <= 0:
        raise GpuportError("--max-bytes must be positive")
    model = model.to(device).eval()
    args = to_device(torch, args, device)
    kwargs = to_device(torch, kwargs, device)
    selected = select(model, list(modules))
    kwargs, cache_note = cache_off(model, kwargs)
    say("fingerprinting the model")
    signature, structure, checksum = env.model_identity(torch, model)
    rec = _Recorder(torch, max_bytes, backward)
    model_spec, loss_names = _record(
        torch, model, args, kwargs, rec, selected, backward=backward, seed=seed, say=say
    )
    resolve_parents(rec)
    left_out = [*rec.left_out, *untraced(model, selected, rec.called, modules)]
    if cache_note:
        left_out.append(cache_note)
    # hashing after the forward pass, not beside it: on a busy CPU a hashing thread only slows
    # torch's own threads down (measured: 0.6 s instead of 0.45 + 0.08 s on 2 cores)
    say(f"hashing {len(rec.store)} tensors ({rec.stored_bytes / 1e6:.1f} MB)")
    checksums = _checksums(torch, rec.store)
    manifest = CaptureManifest(
        env=env.fingerprint(torch, device),
        settings=env.numeric_settings(torch, device),
        model_ref=model_ref,
        seed=seed,
        backward=backward,
        module_filter=list(modules),
        signature=signature,
        param_checksum=checksum,
        structure=structure,
        model_inputs=model_spec,
        loss_weights=loss_names,
        modules=[ModuleRecord(**r) for r in rec.records],
        left_out=left_out,
        max_bytes=max_bytes,
        stored_bytes=rec.stored_bytes,
        checksums=checksums,
    )
    say(f"writing {out}")
    gpv.write(out, rec.store, manifest)
    return CaptureSummary(
        path=str(out),
        model_ref=model_ref,
        device=str(device),
        calls=len(rec.records),
        tensors=len(rec.store),
        stored_bytes=rec.stored_bytes,
        left_out=left_out,
        backward=backward,
        seconds=round(time.perf_counter() - t0, 3),
        settings=manifest.settings,
    )


def _record(
    torch: Any,
    model: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    rec: _Recorder,
    selected: list[tuple[str, Any]],
    *,
    backward: bool,
    seed: int,
    say: Observer,
) -> tuple[JsonValue, list[str]]:
    """Store the model inputs, run the hooked forward (and backward): (inputs, loss names)."""
    raw: dict[str, Any] = {}
    try:
        model_spec = gpv.encode_call(torch, args, kwargs, "model_in", raw)
    except TypeError as exc:
        raise GpuportError(
            f"example_inputs hold a value gpuport cannot store: {exc} "
            "(tensors and plain numbers/strings/None only)"
        ) from None
    need = sum(t.numel() * t.element_size() for t in raw.values())
    if need > rec.max_bytes:
        raise GpuportError(
            f"--max-bytes {rec.max_bytes:,} is smaller than the model's inputs alone "
            f"({need:,} bytes), which every capture stores; raise it"
        )
    for name, t in raw.items():
        rec.keep(name, t, rec.copy(t))
    say(f"running the model with {len(selected)} traced modules")
    seed_everything(torch, seed)
    loss_names: list[str] = []
    grad_ctx = torch.enable_grad() if backward else torch.no_grad()
    with grad_ctx, traced(torch, selected, rec, device_type(torch, model, args, kwargs)):
        output = call_user(model, "the model's forward", *args, **kwargs)
        if backward:
            outs = [t for t in flatten_tensors(torch, output) if t.requires_grad]
            if not outs:
                raise GpuportError("--backward: no output of the model requires grad")
            weights = loss_weights(torch, outs, seed)
            pairs = zip(outs, weights, strict=True)
            loss = sum((o.float() * w.to(o.device)).sum() for o, w in pairs)
            for i, w in enumerate(weights):
                rec.keep(f"loss/{i}", None, w)
                loss_names.append(f"loss/{i}")
            say("running the backward pass")
            call_user(loss.backward, "the backward pass")
    if not rec.records:
        if rec.left_out:
            raise GpuportError(
                f"nothing was recorded: the first module call ({rec.left_out[0]}) already needs "
                f"more than --max-bytes {rec.max_bytes:,} allows ({rec.stored_bytes:,} bytes "
                "go to the model's inputs); raise it"
            )
        raise GpuportError("nothing was recorded: the traced modules were never called")
    return model_spec, loss_names


def device_type(torch: Any, model: Any, args: Any, kwargs: Any) -> str:
    """'cuda' or 'cpu': where the model runs, for reading the autocast state."""
    first = next(iter(model.parameters()), None)
    if first is None:
        tensors = flatten_tensors(torch, [args, kwargs])
        first = tensors[0] if tensors else None
    return "cpu" if first is None else str(first.device.type)


def _checksums(torch: Any, store: dict[str, Any]) -> dict[str, str]:
    """sha256 of every stored tensor; hashlib releases the GIL, so two threads use two cores."""
    names = sorted(store, key=lambda n: -store[n].numel() * store[n].element_size())
    with ThreadPoolExecutor(max_workers=2) as pool:
        digests = list(pool.map(lambda n: gpv.sha256(torch, store[n]), names))
    return dict(zip(names, digests, strict=True))


def capture(opts: CaptureOptions, observer: Observer | None = None) -> CaptureSummary:
    """``gpuport validate capture``: build the user's model and record it into ``opts.out``."""
    torch, _ = gpv.modules("gpuport validate capture")
    device = env.resolve_device(torch, opts.device)
    model, args, kwargs = build_model(torch, opts.model_ref, opts.seed)
    return capture_model(
        torch,
        model,
        args,
        kwargs,
        opts.out,
        device=device,
        modules=opts.modules,
        max_bytes=opts.max_bytes,
        backward=opts.backward,
        seed=opts.seed,
        model_ref=opts.model_ref,
        observer=observer,
    )
