"""From per-tensor measurements to statuses, the first divergence and the verdict.

The status rules, in one place so ``check`` and ``diff`` cannot drift apart:

1. nothing measured → not-checked (with the reason);
2. within tolerance, in B's own run and (when it ran) on A's inputs → same;
3. B has NaN/Inf where A is finite, in B's own run or on A's inputs → wrong, unless only B's
   own run has them and an earlier traced output already had NaN/Inf in B's run (they were
   propagated);
4. beyond tolerance in B's own run, within it on A's recorded inputs → equivalent *by
   propagation*, but only when the error can have come from an earlier traced module: one of
   them already differs in B's own run by at least 1/:data:`PROPAGATION_GAIN` of this row's
   relative RMS error. Otherwise the module is fine but its *inputs* diverged in code that is
   not traced (functional ops between modules) → different, and it is the first divergence;
5. the whole model (the root, always traced, never replayed: its own run already is a run on
   A's inputs) beyond tolerance → equivalent by propagation under the same condition, else
   different (untraced code after the last traced module);
6. fp64 arbitration ran → wrong / different (A is the outlier) / equivalent;
7. otherwise → different.

The *first divergence* is the first row in execution order that is different or wrong; when
grafting ran it is judged on local error, so noise propagated from upstream cannot point at the
wrong module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuport.validate.arbitrate import Decision
from gpuport.validate.model import (
    Metrics,
    ParityReport,
    Row,
    Side,
    Status,
    Verdict,
    budget_left_out,
)

# How much untraced code between two traced modules may amplify a relative error before the
# growth is blamed on it rather than on propagation. Residual adds, reshapes, activations and
# RoPE keep relative errors about constant; a softmax over logits of magnitude ~30 multiplies
# them by ~30. A bug in functional code (another formula, a wrong constant, NaN) is orders of
# magnitude beyond that.
PROPAGATION_GAIN = 100.0


@dataclass(frozen=True)
class Upstream:
    """What B's own run showed *before* a call (in completion order): the context in which a
    propagated difference is judged. Only ``check`` has it; ``diff`` has no local error."""

    rel: float = 0.0  # largest relative RMS error of an earlier traced output in B's run
    worst: str | None = None  # the row it came from
    nonfinite: str | None = None  # first earlier output with NaN/Inf in B where A is finite
    previous: str | None = None  # the traced call that completed just before this one

    def explains(self, metrics: Metrics) -> bool:
        """Can earlier traced outputs account for this row's error in B's own run?"""
        if self.worst is None:
            return False
        return self.rel * PROPAGATION_GAIN >= metrics.rel_rms

    def gap(self, label: str) -> str:
        """Where untraced code sits: between the previous traced call and this one."""
        return f"in untraced code between {self.previous or 'the model start'} and {label}"

    def then(self, label: str, metrics: Metrics | None, hard: bool) -> Upstream:
        """The context for the calls after this one, which produced ``metrics``."""
        rel, worst, nonfinite = self.rel, self.worst, self.nonfinite
        if hard:
            rel, worst = math.inf, label
        elif metrics is not None:
            size = metrics.rel_rms if metrics.nonfinite_b == 0 else math.inf
            if size > rel:
                rel, worst = size, label
            if metrics.nonfinite_b and nonfinite is None:
                nonfinite = label
        return Upstream(rel=rel, worst=worst, nonfinite=nonfinite, previous=label)


def _beyond(m: Metrics, where: str) -> str:
    """'N of M elements beyond tolerance' and/or the failed cosine gate."""
    parts = []
    if m.mismatched:
        parts.append(f"{m.mismatched} of {m.numel} elements beyond tolerance {where}")
    if m.cosine_failed and m.cosine is not None and m.min_cosine is not None:
        parts.append(f"cosine {m.cosine:.4g} below {m.min_cosine:g} {where}")
    if m.nonfinite_a:
        parts.append(f"{m.nonfinite_a} NaN/Inf in A where B differs ({where})")
    return "; ".join(parts) or f"beyond tolerance {where}"


def judge(
    metrics: Metrics | None,
    local: Metrics | None,
    decision: Decision | None,
    note: str | None,
    upstream: Upstream | None = None,
    *,
    label: str = "this module",
    whole_model: bool = False,
) -> tuple[Status, str]:
    """(status, one-line reason) of one row; see the module docstring for the rules.

    ``upstream`` is what B's own run showed before this call; without it (``diff``, gradients)
    nothing is excused as propagated. ``whole_model`` marks the root's row when the local pass
    would have replayed it (it never does: its own run is a run on A's inputs).
    """
    if whole_model:  # its "local" run is its own run: judged on propagation alone
        local = None
    if metrics is None and local is None:
        return Status.NOT_CHECKED, note or "not measured"
    prop_ok = metrics is None or metrics.within
    if prop_ok and (local is None or local.within):
        return Status.SAME, "within tolerance" + (f"; not grafted: {note}" if note else "")
    up = upstream or Upstream()
    if local is not None and local.nonfinite_b:
        return Status.WRONG, f"{local.nonfinite_b} NaN/Inf in B where A is finite (on A's inputs)"
    if metrics is not None and metrics.nonfinite_b and up.nonfinite is None:
        n = metrics.nonfinite_b
        if local is not None or whole_model:
            finite = "; on A's recorded inputs B's module is finite" if local is not None else ""
            return Status.WRONG, (
                f"{n} NaN/Inf in B's run where A is finite, and no earlier traced output had "
                f"NaN/Inf{finite}: they arise {up.gap(label)}"
            )
        return Status.WRONG, f"{n} NaN/Inf in B where A is finite (in B's run)"
    fine_locally = local is not None and local.within
    if metrics is not None and not metrics.within and (fine_locally or whole_model):
        if up.nonfinite is not None or up.explains(metrics):
            source = up.nonfinite or up.worst
            if whole_model:
                if metrics.nonfinite_b:
                    size = f"{metrics.nonfinite_b} NaN/Inf"
                elif metrics.nonfinite_a:
                    size = f"{metrics.nonfinite_a} NaN/Inf in A"
                else:
                    size = f"relative RMS error {metrics.rel_rms:.3g}"
                return Status.EQUIVALENT, (
                    f"the model's output differs ({size}) after {source} already did: "
                    "propagated; the whole model is not replayed on its own"
                )
            return Status.EQUIVALENT, (
                f"differs only by error propagated from earlier modules (largest: {source}): "
                "on A's recorded inputs B's module is within tolerance"
            )
        what = (
            "the model's output diverged"
            if whole_model
            else "on A's recorded inputs B's module is within tolerance, but its inputs in "
            "B's run diverged"
        )
        return Status.DIFFERENT, (
            f"{_beyond(metrics, IN_B_RUN)}; {what} {up.gap(label)}: no earlier traced output "
            f"differs enough to explain it (relative RMS error {metrics.rel_rms:.3g}, earlier "
            f"at most {up.rel:.3g}); trace that code (a module, or its parent with --modules)"
        )
    judged = local if local is not None else metrics
    if judged is None:  # unreachable: handled by the first rule
        return Status.NOT_CHECKED, note or "not measured"
    where = "on A's inputs" if local is not None else IN_B_RUN
    if judged.nonfinite_b:
        return Status.WRONG, f"{judged.nonfinite_b} NaN/Inf in B where A is finite ({where})"
    if decision is not None:
        return _arbitrated(decision, judged, where)
    extra = f"; {note}" if note else ""
    return Status.DIFFERENT, f"{_beyond(judged, where)}{extra}"


IN_B_RUN = "in B's run"


def _arbitrated(decision: Decision, judged: Metrics, where: str) -> tuple[Status, str]:
    arb = decision.arbitration
    if decision.verdict == "wrong":
        if arb.nonfinite_b:
            return Status.WRONG, (
                f"B has {arb.nonfinite_b} NaN/Inf where the float64 recomputation is finite"
            )
        ratio = f"{arb.ratio:.3g}×" if arb.ratio is not None else "infinitely"
        return Status.WRONG, (
            f"B is {ratio} further from float64 than A (err {arb.err_b:.3g} vs "
            f"{arb.err_a:.3g}; allowed {arb.multiplier:g}× + rounding)"
        )
    if decision.verdict == "a-outlier":
        if arb.nonfinite_a:
            return Status.DIFFERENT, (
                f"A has {arb.nonfinite_a} NaN/Inf where the float64 recomputation of B's "
                "module is finite: A's platform (or configuration) is the outlier"
            )
        return Status.DIFFERENT, (
            f"A is further from float64 of B's module than B is (err {arb.err_a:.3g} vs "
            f"{arb.err_b:.3g}): A computed something else (another configuration?) or "
            "A's platform is wrong"
        )
    if decision.verdict == "undecided":
        return Status.DIFFERENT, (
            f"{_beyond(judged, where)}; the float64 recomputation is NaN/Inf wherever A or B "
            "is finite, so it cannot arbitrate"
        )
    return Status.EQUIVALENT, (
        f"beyond tolerance {where}, but both are as close to float64 "
        f"(err B {arb.err_b:.3g}, A {arb.err_a:.3g})"
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
    first = _first(rows)
    verdict, reason = _verdict(rows, counts, first)
    budget = budget_left_out(left_out)
    untraced = [e for e in left_out if e not in budget]
    if budget:
        warnings = [
            *warnings,
            f"{len(budget)} module call(s) were left out of the capture by its size budget "
            f"(--max-bytes), from {budget[0]} on",
        ]
    if untraced:
        more = f" (and {len(untraced) - 1} more, see left_out)" if len(untraced) > 1 else ""
        warnings = [*warnings, f"{untraced[0]}{more}"]
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


def _first(rows: list[Row]) -> Row | None:
    """The first divergence: the first output that is different or wrong, else any row."""
    first = next(
        (r for r in rows if r.kind == "output" and r.status in (Status.DIFFERENT, Status.WRONG)),
        None,
    )
    if first is None:
        first = next((r for r in rows if r.status in (Status.DIFFERENT, Status.WRONG)), None)
    return first


def report_problem(report: ParityReport) -> str | None:
    """The first derived figure of a loaded report (row statuses, counts, verdict, first
    divergence) that does not follow from its rows, or None (issue 14: a report saying
    ``wrong`` with no rows, or with its counts zeroed, is refused; issue 23: a row's status
    that does not follow from its metrics, :mod:`gpuport.validate.rowcheck`)."""
    if any(n < 0 for n in report.counts.values()):
        return "a negative count"
    from gpuport.validate.rowcheck import row_problem

    for row in report.rows:
        problem = row_problem(row)
        if problem:
            return f"row {row.label}: {problem}"
    rows = sorted(report.rows, key=lambda r: (r.kind != "output", r.order, r.index))
    counts = {s: 0 for s in Status}
    for r in rows:
        counts[r.status] += 1
    counts[Status.NOT_CHECKED] += len(report.left_out)
    for status, n in counts.items():
        if report.counts.get(status, 0) != n:
            have = report.counts.get(status, 0)
            return f"counts say {have} {status.value}, the rows give {n}"
    first = _first(rows)
    verdict, _ = _verdict(rows, counts, first)
    if report.verdict is not verdict:
        return f"verdict {report.verdict.value!r}, but the rows give {verdict.value!r}"
    if report.first_divergence != (first.path if first else None):
        return "first_divergence does not match the rows"
    return None


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
