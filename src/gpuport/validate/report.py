"""From per-tensor measurements to statuses, the first divergence and the verdict.

The status rules, in one place so ``check`` and ``diff`` cannot drift apart:

1. nothing measured → not-checked (with the reason);
2. within tolerance, in B's own run and (when it ran) on A's inputs → same;
3. beyond tolerance in B's own run, but within it on A's recorded inputs → equivalent: the
   module is fine, the difference was propagated from earlier ones;
4. B has NaN/Inf where A is finite → wrong;
5. fp64 arbitration ran → wrong / different (A is the outlier) / equivalent;
6. otherwise → different.

The *first divergence* is the first row in execution order that is different or wrong; when
grafting ran it is judged on local error, so noise propagated from upstream cannot point at the
wrong module.
"""

from __future__ import annotations

from gpuport.validate.arbitrate import Decision
from gpuport.validate.model import (
    Metrics,
    ParityReport,
    Row,
    Side,
    Status,
    Verdict,
)


def judge(
    metrics: Metrics | None, local: Metrics | None, decision: Decision | None, note: str | None
) -> tuple[Status, str]:
    """(status, one-line reason) of one row; see the module docstring for the rules."""
    if metrics is None and local is None:
        return Status.NOT_CHECKED, note or "not measured"
    prop_ok = metrics is None or metrics.within
    if prop_ok and (local is None or local.within):
        return Status.SAME, "within tolerance" + (f"; not grafted: {note}" if note else "")
    if local is not None and local.within:
        return Status.EQUIVALENT, (
            "differs only by error propagated from earlier modules: on A's recorded inputs "
            "B's module is within tolerance"
        )
    judged = local if local is not None else metrics
    if judged is None:  # unreachable: handled by the first rule
        return Status.NOT_CHECKED, note or "not measured"
    where = "on A's inputs" if local is not None else "in B's run"
    if judged.nonfinite_b:
        return Status.WRONG, f"{judged.nonfinite_b} NaN/Inf in B where A is finite ({where})"
    if decision is not None:
        arb = decision.arbitration
        if decision.verdict == "wrong":
            ratio = f"{arb.ratio:.3g}×" if arb.ratio is not None else "infinitely"
            return Status.WRONG, (
                f"B is {ratio} further from float64 than A (err {arb.err_b:.3g} vs "
                f"{arb.err_a:.3g}; allowed {arb.multiplier:g}× + rounding)"
            )
        if decision.verdict == "a-outlier":
            return Status.DIFFERENT, (
                f"A is further from float64 of B's module than B is (err {arb.err_a:.3g} vs "
                f"{arb.err_b:.3g}): A computed something else (another configuration?) or "
                "A's platform is wrong"
            )
        return Status.EQUIVALENT, (
            f"beyond tolerance {where}, but both are as close to float64 "
            f"(err B {arb.err_b:.3g}, A {arb.err_a:.3g})"
        )
    extra = f"; {note}" if note else ""
    return Status.DIFFERENT, (
        f"{judged.mismatched} of {judged.numel} elements beyond tolerance {where}{extra}"
    )


def finish(
    *,
    mode: str,
    rows: list[Row],
    a: Side,
    b: Side,
    model_ref: str | None,
    grafted: bool,
    reference: str,
    settings_warnings: list[str],
    warnings: list[str],
    left_out: list[str],
    bytes_compared: int,
    seconds: float,
) -> ParityReport:
    """Assemble the report: counts, the first divergence and the overall verdict."""
    rows = sorted(rows, key=lambda r: (r.kind != "output", r.order, r.index))
    counts = {s: 0 for s in Status}
    for r in rows:
        counts[r.status] += 1
    counts[Status.NOT_CHECKED] += len(left_out)
    first = next(
        (r for r in rows if r.kind == "output" and r.status in (Status.DIFFERENT, Status.WRONG)),
        None,
    )
    if first is None:
        first = next((r for r in rows if r.status in (Status.DIFFERENT, Status.WRONG)), None)
    verdict, reason = _verdict(rows, counts, first)
    if left_out:
        warnings = [
            *warnings,
            f"{len(left_out)} module call(s) were left out of the capture by its size budget "
            f"(--max-bytes), from {left_out[0]} on",
        ]
    return ParityReport(
        mode="check" if mode == "check" else "diff",
        model_ref=model_ref,
        a=a,
        b=b,
        grafted=grafted,
        reference="fp64" if reference == "fp64" else "none",
        settings_warnings=settings_warnings,
        warnings=warnings,
        rows=rows,
        first_divergence=first.path if first else None,
        first_divergence_order=first.order if first else None,
        counts=counts,
        verdict=verdict,
        verdict_reason=reason,
        left_out=left_out,
        bytes_compared=bytes_compared,
        seconds=round(seconds, 3),
    )


def _verdict(rows: list[Row], counts: dict[Status, int], first: Row | None) -> tuple[Verdict, str]:
    checked = sum(counts[s] for s in Status if s is not Status.NOT_CHECKED)
    if not checked:
        return Verdict.NOTHING, "no tensor could be compared"
    where = f"; first divergence: {first.label} ({first.status.value})" if first else ""
    if counts[Status.WRONG]:
        return Verdict.WRONG, f"{counts[Status.WRONG]} tensor(s) wrong on B{where}"
    if counts[Status.DIFFERENT]:
        return Verdict.DIFFERENT, (
            f"{counts[Status.DIFFERENT]} tensor(s) beyond tolerance and not shown equivalent{where}"
        )
    if counts[Status.EQUIVALENT]:
        return Verdict.EQUIVALENT, (
            f"{counts[Status.EQUIVALENT]} tensor(s) beyond tolerance but numerically "
            f"equivalent; {counts[Status.SAME]} within tolerance"
        )
    return Verdict.SAME, f"all {checked} compared tensor(s) within tolerance"
