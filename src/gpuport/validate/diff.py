"""``gpuport validate diff A.gpv B.gpv``: two captures, no model, no user code.

The cheap way to compare two machines when both can capture (or to compare two captures on
one machine across driver/library versions). Without a model nothing can be replayed, so there
is no grafting and no fp64 arbitration: a row is same, different, or wrong when B has NaN/Inf
where A is finite (or a shape, or the kind of dtype, differs).

Throughput matters here (captures of big models hold gigabytes), so the pairs are streamed from
the memory-mapped files and measured by a small thread pool: hashlib and torch both release the
GIL, so checksum verification and the metric passes of different tensors run on every core,
with torch's own intra-op threading turned off meanwhile to avoid oversubscription.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpuport.models import GpuportError
from gpuport.validate import env, gpv
from gpuport.validate.check import tolerance_for
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
from gpuport.validate.report import finish, judge
from gpuport.validate.tolerance import tolerance

Observer = Callable[[str], None]
_Pair = tuple[ModuleRecord, str, int, TensorInfo, TensorInfo | None]


def _pairs(a: gpv.GpvFile, b: gpv.GpvFile) -> tuple[list[_Pair], list[str]]:
    """Every tensor of A with its counterpart in B (None when B lacks it); B-only calls."""
    by_key = {r.key: r for r in b.manifest.modules}
    out: list[_Pair] = []
    for rec in a.manifest.modules:
        other = by_key.pop(rec.key, None)
        for kind, infos, theirs in (
            ("output", rec.outputs, other.outputs if other else []),
            ("grad", rec.grads, other.grads if other else []),
        ):
            index = {_index(i): i for i in theirs}
            for info in infos:
                out.append((rec, kind, _index(info), info, index.get(_index(info))))
    extra = [r.path if not r.call else f"{r.path} (call {r.call})" for r in by_key.values()]
    return out, extra


def _index(info: TensorInfo) -> int:
    return gpv.tensor_index(info.name)


_Result = tuple[Metrics | None, str | None, Tolerance, int]


def _measure(torch: Any, a: gpv.GpvFile, b: gpv.GpvFile, pair: _Pair) -> _Result:
    """(metrics, note, tolerance used, bytes read from A) of one pair."""
    rec, kind, _i, ia, ib = pair
    if kind == "grad":
        tol = tolerance(ia.dtype, "grad", rec.k)
    else:
        tol = tolerance_for(rec, ia.dtype, ib.dtype if ib else ia.dtype)
    if ib is None:
        return None, "B's capture has no such tensor", tol, 0
    if ia.shape != ib.shape:
        return None, f"shape differs: A {ia.shape}, B {ib.shape}", tol, 0
    ta = a.tensor(ia.stored)
    tb = b.tensor(ib.stored)
    why = kind_mismatch(ta, tb)
    if why is not None:
        return None, why, tol, 0
    metrics = compare_tensors(torch, ta, tb, tol.atol, tol.rtol, tol.min_cosine)
    return metrics, None, tol, ta.numel() * ta.element_size()


def diff_files(
    path_a: Path, path_b: Path, *, workers: int | None = None, observer: Observer | None = None
) -> ParityReport:
    """Compare two captures tensor by tensor (A is the reference)."""
    t0 = time.perf_counter()
    say = observer or (lambda _msg: None)
    torch, _ = gpv.modules("gpuport validate diff")
    with gpv.GpvFile(path_a) as a, gpv.GpvFile(path_b) as b:
        ma, mb = a.manifest, b.manifest
        if ma.signature != mb.signature:
            diffs = env.structure_diff(ma.structure, mb.structure) or ["parameter dtypes"]
            raise GpuportError(
                f"{path_b} was captured from a different model than {path_a}: "
                f"{len(diffs)} module(s) differ, e.g. {diffs[0]}"
            )
        warnings: list[str] = []
        if ma.param_checksum != mb.param_checksum:
            warnings.append("the two captures ran with different weights: every module differs")
        if ma.model_inputs != mb.model_inputs or _inputs_differ(a, b):
            warnings.append("the two captures ran on different model inputs")
        b_autocast = {r.key: r.autocast for r in mb.modules}
        differ = [r for r in ma.modules if r.key in b_autocast and b_autocast[r.key] != r.autocast]
        if differ:
            first = differ[0]
            warnings.append(
                f"autocast: A {first.autocast or 'off'}, B {b_autocast[first.key] or 'off'} in "
                f"{len(differ)} module call(s), from {first.path} on: the setting, not a kernel, "
                "explains their differences"
            )
        pairs, extra = _pairs(a, b)
        if extra:
            warnings.append(f"B recorded {len(extra)} call(s) A did not, e.g. {extra[0]}")
        if mb.left_out:
            warnings.append(f"B's capture left out {len(mb.left_out)} call(s) (--max-bytes)")
        say(f"comparing {len(pairs)} tensors")
        results = _run(torch, a, b, pairs, workers)
        rows = [_row(pair, *res) for pair, res in zip(pairs, results, strict=True)]
    return finish(
        mode="diff",
        rows=rows,
        a=Side(name="A", file=str(path_a), env=ma.env, settings=ma.settings),
        b=Side(name="B", file=str(path_b), env=mb.env, settings=mb.settings),
        model_ref=ma.model_ref,
        grafted=False,
        reference="none",
        settings_warnings=env.settings_warnings(ma.settings, mb.settings),
        warnings=warnings,
        left_out=ma.left_out,
        bytes_compared=sum(r[3] for r in results),
        seconds=time.perf_counter() - t0,
    )


def _inputs_differ(a: gpv.GpvFile, b: gpv.GpvFile) -> bool:
    names = gpv.tensor_names(a.manifest.model_inputs)
    return any(a.manifest.checksums.get(n) != b.manifest.checksums.get(n) for n in names)


def _run(
    torch: Any, a: gpv.GpvFile, b: gpv.GpvFile, pairs: list[_Pair], workers: int | None
) -> list[_Result]:
    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1 or len(pairs) <= 1:
        return [_measure(torch, a, b, p) for p in pairs]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(max_workers=n) as pool:
            return list(pool.map(lambda p: _measure(torch, a, b, p), pairs))
    finally:
        torch.set_num_threads(threads)


def _row(pair: _Pair, metrics: Metrics | None, note: str | None, tol: Tolerance, _n: int) -> Row:
    rec, kind, index, info, _ib = pair
    if note and note.startswith(("shape", "dtype differs")):
        status, reason = Status.WRONG, note
    else:
        status, reason = judge(metrics, None, None, note)
    numel = 1
    for s in info.shape:
        numel *= s
    return Row(
        order=rec.order,
        path=rec.path,
        call=rec.call,
        kind="grad" if kind == "grad" else "output",
        index=index,
        op=rec.op,
        dtype=info.dtype,
        shape=info.shape,
        numel=numel,
        metrics=metrics,
        tolerance=tol,
        status=status,
        reason=reason,
    )
