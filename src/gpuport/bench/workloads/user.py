"""``user``: time the user's own step function (``gpuport bench --step module:function``).

Standard workloads say how fast a machine is at GEMMs and reference models; the
number a team acts on is how fast *its* training or inference step runs. This is
the one place gpuport runs user code, and only because the user named it.

``--step`` (``ctx.options["step"]``) is either ``"pkg.module:function"`` (imported
with the current directory on ``sys.path``) or ``"path/to/file.py:function"``
(loaded from that file under a private module name, with the file's folder on
``sys.path``); ``function`` may be a dotted path (``Trainer.step``). Loading is
shared with ``validate --model``: see :mod:`gpuport.usercode`.

Calling convention:

* gpuport calls ``function()`` once, or ``function(device)`` when it has a
  parameter named ``device`` (the benchmark's ``torch.device``);
* if that call returns a callable, the callable is the timed step (so
  ``function`` can build the model and data once and return ``step``), called
  with no arguments;
* otherwise ``function`` itself, called the same way, is the step, and the first
  call served as an extra warm-up.

The step is timed with the model policy (warm-up, then samples), without a cache
flush, like the built-in model workloads; on a GPU, device events bracket each
call on the current stream, so work the step leaves on other streams is not
counted unless it synchronises. ``ctx.options["step_items"]`` (items per step:
tokens, images, samples) makes the headline items/s; without it it is steps/s.

A malformed spec, a missing module or file, a missing attribute or a non-callable
target is the user's input error (:class:`~gpuport.models.GpuportError`, exit 2),
reported when the cases are built, before anything is timed. An exception raised
by the step while it is timed propagates: the runner records the case as failed
with the exception's text. Without ``--step`` the workload has no cases, so a
plain ``gpuport bench`` does not list it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register
from gpuport.models import GpuportError
from gpuport.usercode import load_callable


def resolve_step(spec: str) -> Callable[..., Any]:
    """The callable that ``spec`` names; a one-line GpuportError for anything wrong."""
    return load_callable(spec, what="--step")


def bind_device(fn: Callable[..., Any], device: Any) -> Callable[[], Any]:
    """``fn`` as a no-argument call, passing ``device`` if it has a parameter of that name."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # some builtins and C extensions have no signature
        return fn
    param = params.get("device")
    if param is None:
        return fn
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        return lambda: fn(device)
    return lambda: fn(device=device)


def _step_items(ctx: BenchContext) -> int | None:
    raw = ctx.options.get("step_items")
    if raw is None:
        return None
    try:
        items = int(raw)
    except (TypeError, ValueError):
        raise GpuportError(f"--step-items must be a positive integer, got {raw!r}") from None
    if isinstance(raw, bool) or items <= 0 or (isinstance(raw, float) and raw != items):
        raise GpuportError(f"--step-items must be a positive integer, got {raw!r}")
    return items


def _run(ctx: BenchContext, spec: str, fn: Callable[..., Any], items: int | None) -> Measurement:
    call = bind_device(fn, ctx.device)
    made = call()
    factory = callable(made)
    step: Callable[[], Any] = made if factory else call
    del made
    m = ctx.measure(step, policy=ctx.model_policy, work_per_iter=float(items or 1), flush=False)
    del step, call
    if ctx.on_gpu:
        ctx.torch.cuda.empty_cache()
    return dataclasses.replace(
        m,
        metrics={**m.metrics, "step_ms": m.stats.median * 1e3},
        params={"step": spec, "step_items": items, "factory": factory},
    )


def _cases(ctx: BenchContext) -> list[Case]:
    spec = ctx.options.get("step")
    if not spec:
        return []
    spec = str(spec)
    fn = resolve_step(spec)
    items = _step_items(ctx)
    return [
        Case(
            name=spec,
            run=lambda c: _run(c, spec, fn, items),
            params={"step": spec, "step_items": items},
            unit="items/s" if items else "steps/s",
            scale=1.0,
            peak=None,
        )
    ]


WORKLOAD = register(
    Workload(
        name="user",
        summary="your own step function (--step module:function), steps/s or items/s",
        cases=_cases,
        needs=(),
    )
)
