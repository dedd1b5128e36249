"""Which module call a divergence belongs to, once B's run and the local pass are done.

:func:`gpuport.validate.report.judge` gives each row a status from its own numbers. Three
things need the other rows too, and are settled here in completion order:

* **Code inside a traced parent.** A module that is within tolerance on A's recorded inputs
  but whose inputs diverged in B's run, with nothing earlier to explain it, received its inputs
  from code that no child hook sees. When a traced ancestor of it also diverges on A's recorded
  inputs, that code is the ancestor's own forward (an attention module's functional SDPA, a
  block's residual): the row is *equivalent* (its inputs came from there) and the ancestor
  carries the divergence. For the model itself, whose forward is never replayed, the model's
  row becomes *different* with the place named.
* **A container whose child diverges.** A call whose local difference comes from a traced
  descendant that itself diverges on A's inputs (and was not shown equivalent by fp64) is
  *equivalent*: the descendant is the origin and is named.
* **Settings.** A call that ran under another autocast state on B than on A, and diverges, is
  *different* with that as the cause, never a kernel or "untraced code".

In ``--precision`` mode a module beyond what the format explains on A's inputs is *wrong*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuport.validate.arbitrate import Decision
from gpuport.validate.model import (
    Metrics,
    ModuleRecord,
    OpDivergence,
    Row,
    Status,
    TensorInfo,
    Tolerance,
)
from gpuport.validate.report import Upstream, judge
from gpuport.validate.trace import ROOT

Key = tuple[str, int]


@dataclass
class Item:
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
    first_op: OpDivergence | None = None
    # B's run diverged on A's exact inputs but a replay on them did not (see check.Comparer)
    unreproduced: str | None = None


def label(rec: ModuleRecord) -> str:
    return rec.path if not rec.call else f"{rec.path} (call {rec.call})"


def diverged_locally(items: list[Item]) -> bool:
    """Beyond tolerance on A's recorded inputs, and not shown equivalent by fp64."""
    return any(
        it.local is not None
        and not it.local.within
        and (it.decision is None or it.decision.verdict != "equivalent")
        for it in items
    )


def diverged_here(items: list[Item]) -> bool:
    """Diverged by its own doing: on A's recorded inputs, or in B's own run on A's exact
    inputs (``unreproduced``), and not shown equivalent by fp64."""
    return diverged_locally(items) or any(
        it.unreproduced and (it.decision is None or it.decision.verdict != "equivalent")
        for it in items
    )


@dataclass
class Context:
    """What the attribution needs besides the items."""

    items: dict[tuple[str, int, str, int], Item]
    records: list[ModuleRecord]
    b_autocast: dict[Key, str | None]
    precision: str | None = None
    _by_key: dict[Key, ModuleRecord] = field(default_factory=dict)
    _children: dict[Key, list[ModuleRecord]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_key = {r.key: r for r in self.records}
        for r in self.records:
            if r.parent_key is not None:
                self._children.setdefault(r.parent_key, []).append(r)

    def outputs(self, rec: ModuleRecord) -> list[Item]:
        return [self.items[(rec.path, rec.call, "output", i)] for i in range(len(rec.outputs))]

    def ancestors(self, rec: ModuleRecord) -> list[ModuleRecord]:
        out: list[ModuleRecord] = []
        key = rec.parent_key
        while key is not None and key in self._by_key and len(out) < 10_000:
            out.append(self._by_key[key])
            key = self._by_key[key].parent_key
        return out

    def descendants(self, rec: ModuleRecord) -> list[ModuleRecord]:
        out: list[ModuleRecord] = []
        todo = list(self._children.get(rec.key, []))
        while todo and len(out) < 100_000:
            r = todo.pop()
            out.append(r)
            todo.extend(self._children.get(r.key, []))
        return sorted(out, key=lambda r: r.order)

    def settings_cause(self, rec: ModuleRecord) -> str | None:
        if rec.key not in self.b_autocast:
            return None
        a, b = rec.autocast, self.b_autocast[rec.key]
        if a == b:
            return None
        return (
            f"autocast differs for this call: A {a or 'off'}, B {b or 'off'}; that setting, "
            "not a kernel, changes its numbers (run both sides under the same autocast)"
        )


def origins(ctx: Context) -> list[ModuleRecord]:
    """Calls that diverge on A's inputs while no traced descendant does: where to look inside."""
    out = []
    for rec in sorted(ctx.records, key=lambda r: r.order):
        if rec.path == ROOT or not diverged_locally(ctx.outputs(rec)):
            continue
        if not any(diverged_locally(ctx.outputs(d)) for d in ctx.descendants(rec)):
            out.append(rec)
    return out


def _gap(it: Item, up: Upstream) -> bool:
    """B's run diverged, A's inputs give the same, and nothing earlier explains it."""
    m = it.metrics
    return (
        m is not None
        and not m.within
        and m.nonfinite_b == 0
        and it.local is not None
        and it.local.within
        and not it.whole_model
        and up.nonfinite is None
        and not up.explains(m)
    )


def _owner(ctx: Context, rec: ModuleRecord) -> ModuleRecord | None:
    """The innermost ancestor whose own code the divergence came from: one that diverges on A's
    inputs, or the model itself. None when an ancestor on the way diverged in B's run but could
    not be replayed: the code may be its own, and that cannot be told."""
    for a in ctx.ancestors(rec):
        items = ctx.outputs(a)
        if a.path == ROOT or diverged_locally(items):
            return a
        if any(i.local is None and i.metrics is not None and not i.metrics.within for i in items):
            return None
    return None


def statuses(ctx: Context) -> dict[int, tuple[Status, str]]:
    """Status and reason of every item (by id), in completion order."""
    out: dict[int, tuple[Status, str]] = {}
    upstream = Upstream()
    blamed: dict[Key, str] = {}
    for rec in sorted(ctx.records, key=lambda r: r.order):
        name = label(rec)
        outputs = ctx.outputs(rec)
        after = upstream
        for it in outputs:
            out[id(it)] = _one(ctx, rec, it, upstream, blamed)
            after = after.then(name, it.metrics, hard=it.hard is not None)
        upstream = after if outputs else upstream.then(name, None, hard=False)
    for it in ctx.items.values():
        if id(it) not in out:  # gradients: judged on B's own run alone
            if it.hard:
                out[id(it)] = (Status.WRONG, it.hard)
            else:
                out[id(it)] = judge(it.metrics, it.local, it.decision, it.note)
    return out


def _one(
    ctx: Context, rec: ModuleRecord, it: Item, up: Upstream, blamed: dict[Key, str]
) -> tuple[Status, str]:
    status, reason = _judged(ctx, rec, it, up, blamed)
    if it.unreproduced and status in (Status.DIFFERENT, Status.WRONG):
        reason += f"; {it.unreproduced}"
    if it.first_op is not None and status in (Status.DIFFERENT, Status.WRONG):
        op = it.first_op
        reason += f"; first diverging op: {op.op} at {op.call_site}"
    return status, reason


def _judged(
    ctx: Context, rec: ModuleRecord, it: Item, up: Upstream, blamed: dict[Key, str]
) -> tuple[Status, str]:
    name = label(rec)
    if it.hard:
        return Status.WRONG, it.hard
    if _gap(it, up):
        owner = _owner(ctx, rec)
        if owner is not None:
            where = up.gap(name).removeprefix("in untraced code ")
            blamed.setdefault(owner.key, f"{where}, first seen at the input of {name}")
            return Status.EQUIVALENT, (
                f"on A's recorded inputs B's module is within tolerance; its inputs diverged "
                f"in the own forward code of {label(owner)} ({where}): see that row"
            )
    status, reason = judge(
        it.metrics,
        it.local,
        it.decision,
        it.note,
        up,
        label=name,
        whole_model=it.whole_model,
    )
    if rec.key in blamed and it.whole_model and status is not Status.WRONG:
        m = it.metrics
        size = f" (relative RMS error {m.rel_rms:.3g})" if m is not None else ""
        return Status.DIFFERENT, (
            f"the model's own forward code diverged{size}: {blamed[rec.key]}; it is not "
            "replayed on its own (trace that code as a module to localise it)"
        )
    if status in (Status.DIFFERENT, Status.WRONG):
        local_div = it.local is not None and not it.local.within
        if (local_div or it.unreproduced) and rec.path != ROOT:
            child = next((d for d in ctx.descendants(rec) if diverged_here(ctx.outputs(d))), None)
            if child is not None:
                return Status.EQUIVALENT, (
                    f"differs on A's inputs because {label(child)} inside it does (see that "
                    "row); nothing else in its own code diverges"
                )
        cause = ctx.settings_cause(rec)
        if cause is not None:
            return Status.DIFFERENT, f"{cause}; {reason}"
        if ctx.precision and local_div and it.local is not None and it.decision is None:
            bound = it.local.max_rel_rms or 0.0
            return Status.WRONG, (
                f"on A's inputs its relative RMS error {it.local.rel_rms:.3g} exceeds what "
                f"{ctx.precision} explains ({bound:.3g})"
            )
    return status, reason


def rows(ctx: Context) -> list[Row]:
    result: list[Row] = []
    judged = statuses(ctx)
    for it in ctx.items.values():
        status, reason = judged[id(it)]
        numel = 1
        for s in it.info.shape:
            numel *= s
        result.append(
            Row(
                order=it.rec.order,
                path=it.rec.path,
                call=it.rec.call,
                kind="grad" if it.kind == "grad" else "output",
                index=it.index,
                op=it.rec.op,
                dtype=it.info.dtype,
                shape=it.info.shape,
                numel=numel,
                metrics=it.metrics,
                tolerance=it.tol,
                local=it.local,
                arbitration=it.decision.arbitration if it.decision else None,
                first_op=it.first_op,
                status=status,
                reason=reason,
            )
        )
    return result
