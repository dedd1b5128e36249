"""Hooks on the modules a capture or check looks at, and what is known about each op.

Both machines trace the same way, so a module call is matched across them by its path and its
call number (``layers.0.attn`` call 0), never by position alone: a filter or a module called
twice (weight sharing, loops) cannot shift the pairing. Calls are numbered in *completion*
order, so a container comes after its children and the first divergence is the innermost one.

Every module is hooked, leaves and containers, and the forward runs under a torch-function
mode (:mod:`gpuport.validate.ops`) that counts, for each call, the torch ops its *own* forward
ran besides its children's: attention modules that call ``F.scaled_dot_product_attention``,
``nn.MultiheadAttention`` (not a leaf, and its ``out_proj`` is never called as a module), a
residual add in a block. The capture keeps the calls of containers that computed something of
their own (:class:`CallInfo`), and drops pure containers, whose output is all their children's.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gpuport.models import GpuportError
from gpuport.validate.ops import SDPA, make_counter, sdpa_backend
from gpuport.validate.tolerance import op_class

ROOT = "(model)"


def select(model: Any, patterns: tuple[str, ...] | list[str]) -> list[tuple[str, Any]]:
    """Modules to trace: every module by default (containers that compute nothing of their
    own are dropped after the run, see :class:`CallInfo`); with globs, the matching modules
    (leaf or not) and every module below them. Shared modules appear once, under their first
    path.

    The root (``(model)``) is always traced too: its output is the model's output, so code
    after the last traced module (and a divergence in it) is never out of sight. It costs
    nothing when the model returns a traced module's output (stored once, referenced).
    """
    named = [(path or ROOT, mod) for path, mod in model.named_modules()]
    if not patterns:
        return named
    matched = [p for p, _ in named if any(fnmatch.fnmatchcase(p, pat) for pat in patterns)]
    if not matched:
        some = ", ".join(p for p, _ in named[1:6])
        raise GpuportError(
            f"--modules {' '.join(patterns)} matched no module; paths look like: {some}"
        )
    keep = set(matched) | {ROOT}
    keep |= {p for p, _ in named if any(p.startswith(m + ".") for m in matched)}
    return [(p, m) for p, m in named if p in keep]


def is_leaf(module: Any) -> bool:
    return next(iter(module.children()), None) is None


@dataclass
class CallInfo:
    """What the trace learned about one module call besides its inputs and outputs."""

    parent: tuple[str, int] | None = None  # innermost traced call it ran inside
    own_ops: int = 0  # torch ops of its own forward, not inside a traced child
    autocast: str | None = None  # autocast dtype active when it started (None: off)
    sdpa: list[str] = field(default_factory=list)  # SDPA backends chosen inside it


def autocast_state(torch: Any, device_type: str) -> str | None:
    """The autocast dtype active now for ``device_type`` ('cpu', 'cuda'), or None when off."""
    try:
        if not torch.is_autocast_enabled(device_type):
            return None
        return str(torch.get_autocast_dtype(device_type)).removeprefix("torch.")
    except (AttributeError, RuntimeError, TypeError):
        return None


def flatten_tensors(torch: Any, obj: Any) -> list[Any]:
    """The tensors inside a module's output, in a stable order; everything else is ignored."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, tuple | list):
        return [t for x in obj for t in flatten_tensors(torch, x)]
    if isinstance(obj, dict):  # also HF ModelOutput (an OrderedDict)
        return [t for x in obj.values() for t in flatten_tensors(torch, x)]
    return []


def _prod(values: Any) -> int:
    return int(math.prod(int(v) for v in values))


def reduction_k(torch: Any, module: Any, args: tuple[Any, ...], out: list[Any]) -> int | None:
    """Reduction length K of one call, for the K-scaled tolerance (None: not a reduction)."""
    name = type(module).__name__
    cls = op_class(name)
    weight = getattr(module, "weight", None)
    if cls == "matmul":
        if isinstance(getattr(module, "in_features", None), int):
            k = int(module.in_features)
            if isinstance(getattr(module, "in2_features", None), int):  # Bilinear
                k *= int(module.in2_features)
            return k
        if isinstance(weight, torch.Tensor) and weight.dim() >= 2:
            return int(weight.shape[-1])
        return None
    if cls == "conv":
        if isinstance(weight, torch.Tensor) and weight.dim() >= 3:
            return _prod(weight.shape[1:])  # Cin/groups · ∏kernel (transposed: Cout/groups)
        return None
    if cls == "attention":
        embed = getattr(module, "embed_dim", None)
        heads = getattr(module, "num_heads", None)
        if isinstance(embed, int) and isinstance(heads, int) and heads:
            seq = _key_length(torch, module, args)
            return embed // heads + (seq or 0)
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        if first is not None and first.dim() >= 2:
            return int(first.shape[-1]) + int(first.shape[-2])
        return None
    if cls == "norm":
        shape = getattr(module, "normalized_shape", None)
        if isinstance(shape, tuple | list) and shape:
            return _prod(shape)
        groups = getattr(module, "num_groups", None)
        if isinstance(groups, int) and groups and out and out[0].dim() >= 2:
            return int(out[0].shape[1]) // groups * _prod(out[0].shape[2:])
        return int(out[0].shape[-1]) if out and out[0].dim() else None
    if cls == "softmax":
        dim = getattr(module, "dim", None)
        if out and out[0].dim():
            return int(out[0].shape[dim if isinstance(dim, int) else -1])
    return None


def _key_length(torch: Any, module: Any, args: tuple[Any, ...]) -> int | None:
    if len(args) >= 2 and isinstance(args[1], torch.Tensor) and args[1].dim() == 3:
        batch_first = bool(getattr(module, "batch_first", False))
        return int(args[1].shape[1 if batch_first else 0])
    return None


class Handler:
    """What a trace does at each call; capture and check each implement it."""

    def before(self, path: str, module: Any, call: int, args: Any, kwargs: Any) -> None:
        """Right before ``module`` runs, with its inputs as passed (not yet modified)."""

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
        """Right after it returns, with its output tensors flattened."""


@contextmanager
def traced(
    torch: Any, selected: list[tuple[str, Any]], handler: Handler, device_type: str = "cpu"
) -> Iterator[None]:
    """Hooks on ``selected`` and the op counter for the duration of the block; always
    removed afterwards."""
    calls: dict[str, int] = {}
    stacks: dict[str, list[int]] = {}
    order = [0]
    handles: list[Any] = []
    open_calls: list[tuple[str, int, CallInfo]] = []
    counter = make_counter(torch)

    def on_op(name: str, args: Any, kwargs: Any) -> None:
        if not open_calls:
            return
        open_calls[-1][2].own_ops += 1
        if name == SDPA:
            counter.paused = True
            try:
                backend = sdpa_backend(torch, args, kwargs) or "unknown"
            finally:
                counter.paused = False
            for _p, _c, info in open_calls:
                info.sdpa.append(backend)

    counter.on_op = on_op

    def pre(path: str) -> Callable[..., None]:
        def hook(module: Any, args: Any, kwargs: Any) -> None:
            counter.paused = True
            try:
                call = calls.get(path, 0)
                calls[path] = call + 1
                stacks.setdefault(path, []).append(call)
                info = CallInfo(autocast=autocast_state(torch, device_type))
                open_calls.append((path, call, info))
                handler.before(path, module, call, args, kwargs)
            finally:
                counter.paused = False

        return hook

    def post(path: str) -> Callable[..., None]:
        def hook(module: Any, args: Any, kwargs: Any, output: Any) -> None:
            counter.paused = True
            try:
                call = stacks[path].pop() if stacks.get(path) else 0
                info = CallInfo()
                for i in range(len(open_calls) - 1, -1, -1):
                    if open_calls[i][0] == path and open_calls[i][1] == call:
                        info = open_calls.pop(i)[2]
                        break
                if open_calls:
                    info.parent = (open_calls[-1][0], open_calls[-1][1])
                outputs = flatten_tensors(torch, output)
                handler.after(path, module, call, order[0], args, outputs, info)
                order[0] += 1
            finally:
                counter.paused = False

        return hook

    try:
        for path, module in selected:
            handles.append(module.register_forward_pre_hook(pre(path), with_kwargs=True))
            handles.append(module.register_forward_hook(post(path), with_kwargs=True))
        with counter:
            yield
    finally:
        for h in handles:
            h.remove()


def same_values(torch: Any, a: Any, b: Any) -> bool:
    """Same structure, and every tensor bit-equal with the same dtype (compared on the CPU)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        return bool(torch.equal(a.detach().to("cpu"), b.detach().to("cpu")))
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same_values(torch, x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        tensors = [k for k, v in b.items() if isinstance(v, torch.Tensor)]
        return all(k in a for k in tensors) and all(
            same_values(torch, a[k], b[k]) for k in set(a) | set(tensors) if k in b
        )
    return True  # plain values: not recorded as tensors, not what diverges
