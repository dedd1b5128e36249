"""``user``: time the user's own step function (``gpuport bench --step module:function``).

Standard workloads say how fast a machine is at GEMMs and reference models; the
number a team acts on is how fast *its* training or inference step runs. This is
the one place gpuport runs user code, and only because the user named it.

``--step`` (``ctx.options["step"]``) is either ``"pkg.module:function"`` (imported
with the current directory on ``sys.path``) or ``"path/to/file.py:function"``
(loaded from that file under a private module name, with the file's folder on
``sys.path`` while it loads). ``function`` may be a dotted path (``Trainer.step``).

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

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuport.bench.registry import BenchContext, Case, Measurement, Workload, register
from gpuport.models import GpuportError

USAGE = "expected 'pkg.module:function' or 'path/to/file.py:function'"


def parse_step(spec: str) -> tuple[str, str]:
    """Split ``"target:function"``; the last colon separates them (``C:\\x.py:f`` works)."""
    target, sep, func = spec.strip().rpartition(":")
    if not sep or not target or not func:
        raise GpuportError(f"--step {spec!r} is malformed: {USAGE}")
    if not all(part.isidentifier() for part in func.split(".")):
        raise GpuportError(f"--step {spec!r}: {func!r} is not a Python name; {USAGE}")
    if not is_file_target(target) and not all(p.isidentifier() for p in target.split(".")):
        raise GpuportError(f"--step {spec!r}: {target!r} is not a module name; {USAGE}")
    return target, func


def is_file_target(target: str) -> bool:
    """A path to a ``.py`` file rather than a dotted module name."""
    return target.endswith(".py") or "/" in target or os.sep in target


@contextlib.contextmanager
def _on_sys_path(folder: str) -> Iterator[None]:
    """``folder`` first on ``sys.path`` while a user module loads, then as it was."""
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(folder)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _load_file(target: str) -> ModuleType:
    path = Path(target).expanduser()
    if not path.is_file():
        raise GpuportError(f"--step file not found: {target}")
    resolved = path.resolve()
    name = "gpuport_user_step_" + hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise GpuportError(f"--step file {target} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        with _on_sys_path(str(resolved.parent)):
            spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise GpuportError(f"loading --step file {target} raised {_one_line(exc)}") from exc
    return module


def _load_module(target: str) -> ModuleType:
    try:
        with _on_sys_path(str(Path.cwd())):
            return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (target == missing or target.startswith(missing + ".")):
            raise GpuportError(
                f"--step module {target!r} not found (searched sys.path and the current directory)"
            ) from None
        raise GpuportError(f"importing --step module {target!r} raised {_one_line(exc)}") from exc
    except Exception as exc:
        raise GpuportError(f"importing --step module {target!r} raised {_one_line(exc)}") from exc


def resolve_step(spec: str) -> Callable[..., Any]:
    """The callable that ``spec`` names; a one-line GpuportError for anything wrong."""
    target, func = parse_step(spec)
    obj: Any = _load_file(target) if is_file_target(target) else _load_module(target)
    for part in func.split("."):
        if not hasattr(obj, part):
            raise GpuportError(f"--step {spec!r}: {target!r} has no attribute {func!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise GpuportError(
            f"--step {spec!r}: {func!r} is not callable (it is a {type(obj).__name__})"
        )
    fn: Callable[..., Any] = obj
    return fn


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
