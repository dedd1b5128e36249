"""Which deployment to serve on: the throughput-optimal one under a latency target.

For every tensor-parallel degree the model's heads allow (up to one node, wider only if
nothing narrower holds the weights), a replica is sized by memory (weights, the KV cache the
sequences hold on average, prompt plus half the output, the engine's reserve) and by the engine's
sequence cap. Then:

* with a concurrency (``--concurrency N``: N sequences in flight in all), the fewest
  replicas that hold them, each at N / replicas;
* without, the largest batch one replica can run while the mean TPOT and TTFT stay within the
  target (by default TPOT ≤ 50 ms, 20 tokens/s per user; none with ``--max-tpot 0``).

The candidate with the most output tokens/s per GPU wins. A candidate within 2 % of the best
that uses fewer GPUs per replica wins instead: a narrower replica is a smaller unit of
failure and of purchase, for no throughput. Fixed ``--tp``/``--pp``/``--ep``/``--dp`` are
honoured and only the rest is searched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuport.cost.memory import NODE_GPUS, ServeMemory, activation_workspace, tp_degrees
from gpuport.cost.shapes import kv_bytes_per_sequence, weight_bytes
from gpuport.cost.step import Deployment, Model, Rates, Steady, Workload, steady_state

TIE = 0.02  # throughput within 2 % of the best counts as equal


@dataclass(frozen=True)
class Target:
    """Mean latency limits (seconds); None: no limit."""

    tpot_s: float | None = None
    ttft_s: float | None = None

    def met(self, s: Steady) -> bool:
        return (self.tpot_s is None or s.tpot_s <= self.tpot_s * (1 + 1e-9)) and (
            self.ttft_s is None or s.ttft_s <= self.ttft_s * (1 + 1e-9)
        )

    @property
    def any(self) -> bool:
        return self.tpot_s is not None or self.ttft_s is not None

    def text(self, le: str = "≤", joiner: str = ", ", per_user: bool = False) -> str:
        """ "TPOT ≤ 50 ms, TTFT ≤ 500 ms" (per_user adds "(20 tok/s per user)"); "" if none."""
        parts = []
        if self.tpot_s is not None:
            user = f" ({1 / self.tpot_s:.0f} tok/s per user)" if per_user else ""
            parts.append(f"TPOT {le} {self.tpot_s * 1e3:g} ms{user}")
        if self.ttft_s is not None:
            parts.append(f"TTFT {le} {self.ttft_s * 1e3:g} ms")
        return joiner.join(parts)


@dataclass(frozen=True)
class Fixed:
    """Deployment choices the user fixed (None: searched)."""

    tp: int | None = None
    pp: int = 1
    ep: int | None = None
    dp: int | None = None
    dp_attention: bool = False


@dataclass(frozen=True)
class Limits:
    """What bounds a replica's batch besides latency."""

    capacity: float  # bytes per GPU
    usable: float
    reserve: float  # bytes per GPU
    chunk: int  # prefill chunk whose activations are reserved
    max_seqs: int  # engine cap per replica
    context: float = 0.0  # the longest sequence a replica must hold (max_model_len)


@dataclass(frozen=True)
class Candidate:
    dep: Deployment
    replicas: int
    per_replica: float  # sequences per replica (the busiest)
    memory: ServeMemory
    steady: Steady
    meets: bool  # the latency target is met

    @property
    def gpus(self) -> int:
        return self.dep.gpus * self.replicas

    @property
    def total(self) -> float:
        return self.per_replica * self.replicas

    @property
    def per_gpu(self) -> float:
        """Output tokens/s per GPU over every GPU of the deployment."""
        return self.steady.tokens_per_s * self.replicas / self.gpus

    @property
    def cap(self) -> int:
        return self.memory.max_sequences


def replica_memory(m: Model, dep: Deployment, seq_tokens: float, lim: Limits) -> ServeMemory:
    """Per-GPU memory of one replica: weights and reserve split n ways, KV as held."""
    shape, n = m.shape, dep.gpus
    kv_seq = kv_bytes_per_sequence(shape, seq_tokens, m.kv_dtype)
    if shape.is_mla:
        copies = 1.0 if dep.dp_attention else float(dep.tp)  # every TP rank holds the latent
    else:
        copies = max(1.0, dep.tp / shape.num_kv_heads)
    return ServeMemory(
        gpus=n,
        weights=weight_bytes(m.counts, m.dtype) / n,
        kv_per_sequence=kv_seq * copies / n,
        overhead=lim.reserve + activation_workspace(shape, lim.chunk) / n,
        usable=lim.capacity * lim.usable,
    )


def deployments(m: Model, fixed: Fixed, work: Workload, lim: Limits) -> list[Deployment]:
    """The replica shapes to try: fixed ones as given, the rest searched."""
    shape = m.shape
    tps = [fixed.tp] if fixed.tp else [t for t in tp_degrees(shape) if t <= NODE_GPUS]
    if not fixed.tp:
        wider = [t for t in tp_degrees(shape) if t > NODE_GPUS]
        seq = max(lim.context, work.isl + work.osl)
        if wider and not any(_holds(m, _dep(m, t, fixed), seq, lim) for t in tps):
            tps += wider  # past one node only when nothing within one holds the model
    return [_dep(m, t, fixed) for t in tps]


def _dep(m: Model, tp: int, fixed: Fixed) -> Deployment:
    moe = bool(m.counts.num_experts)
    ep = fixed.ep or (tp * fixed.pp if moe and fixed.dp_attention else 1)
    return Deployment(tp=tp, pp=fixed.pp, ep=ep, dp_attention=fixed.dp_attention and moe)


def _holds(m: Model, dep: Deployment, seq_tokens: float, lim: Limits) -> bool:
    return replica_memory(m, dep, seq_tokens, lim).max_sequences >= 1


def candidate(
    m: Model,
    dep: Deployment,
    rates: Rates,
    work: Workload,
    lim: Limits,
    target: Target,
    concurrency: int | None,
    replicas: int | None,
) -> Candidate | None:
    """The best this replica shape does: at a given concurrency, or filled to the target."""
    # vLLM, SGLang and TensorRT-LLM allocate KV pages as tokens arrive: in a closed loop the
    # average sequence holds its prompt and half its output.
    mem = replica_memory(m, dep, work.isl + work.osl / 2, lim)
    # An engine refuses to start unless its KV cache holds one sequence of the full context.
    if not _holds(m, dep, max(lim.context, work.isl + work.osl), lim):
        return None
    # With DP attention every GPU schedules its own sequences: the engine cap is per GPU.
    cap = min(mem.max_sequences, lim.max_seqs * (dep.gpus if dep.dp_attention else 1))
    if cap < 1:
        return None
    if concurrency is not None:
        r = replicas or math.ceil(concurrency / cap)
        per = concurrency / r
        if math.ceil(per - 1e-9) > cap:
            return None
        s = steady_state(m, dep, rates, work, per, lim.chunk)
        return Candidate(dep, r, per, mem, s, target.met(s))
    r = replicas or 1
    best = _fill(m, dep, rates, work, target, cap, lim.chunk)
    if best is None:  # not even one sequence meets the target: show the fastest there is
        s = steady_state(m, dep, rates, work, 1, lim.chunk)
        return Candidate(dep, r, 1, mem, s, False)
    b, s = best
    return Candidate(dep, r, b, mem, s, True)


def _fill(
    m: Model,
    dep: Deployment,
    rates: Rates,
    work: Workload,
    target: Target,
    cap: int,
    chunk: int,
) -> tuple[int, Steady] | None:
    """The largest batch within ``cap`` whose steady state meets ``target`` (TPOT and TTFT
    grow with the batch, so a bisection finds it)."""

    def at(b: int) -> Steady:
        return steady_state(m, dep, rates, work, b, chunk)

    top = at(cap)
    if target.met(top):
        return cap, top
    low = at(1)
    if not target.met(low):
        return None
    lo, hi, best = 1, cap, low  # lo meets, hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        s = at(mid)
        if target.met(s):
            lo, best = mid, s
        else:
            hi = mid
    return lo, best


def best(cands: list[Candidate]) -> Candidate | None:
    """The most output tokens/s per GPU among those meeting the target (else among all);
    within 2 % of it, the narrowest replica."""
    if not cands:
        return None
    pool = [c for c in cands if c.meets] or cands
    top = max(c.per_gpu for c in pool)
    close = [c for c in pool if c.per_gpu >= top * (1 - TIE)]
    return min(close, key=lambda c: (c.dep.gpus, c.gpus, -c.per_gpu))


def plan(
    m: Model,
    rates: Rates,
    work: Workload,
    lim: Limits,
    target: Target,
    fixed: Fixed,
    concurrency: int | None,
) -> Candidate | None:
    """The throughput-optimal deployment (see the module doc), or None if nothing holds it."""
    cands = [
        c
        for dep in deployments(m, fixed, work, lim)
        if (c := candidate(m, dep, rates, work, lim, target, concurrency, fixed.dp)) is not None
    ]
    return best(cands)
