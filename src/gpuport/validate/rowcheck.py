"""A loaded parity report's row statuses re-derived from their own metrics (issue 23, item 7).

A report's counts, verdict and first divergence are recomputed from its rows on load
(:func:`gpuport.validate.report.report_problem`). The rows' *statuses* follow from each row's
metrics, tolerance and float64 arbitration by the rules of :func:`gpuport.validate.report.judge`;
:func:`row_problem` checks what can be checked without the tensors:

* each metrics block agrees with its tolerance: it was judged with the tolerance's cosine
  gate and format bound, counts fit the tensor (``mismatched``, NaN/Inf <= ``numel``), and
  ``mismatched > 0`` exactly when the smallest passing atol is above the tolerance's atol;
* a row whose present metrics are all within tolerance is ``same`` (nothing else makes it
  otherwise but a hard failure, which leaves no metrics), and a ``same`` row has no metrics
  beyond tolerance; ``not checked`` has no metrics; a row with NaN/Inf in B on A's inputs is
  ``wrong``;
* the arbitration's verdict, recomputed from its errors (B further from float64 than the
  allowed multiple of A's error: wrong), agrees with the status: a row it calls wrong is not
  ``same`` or ``equivalent``.

A forger who rewrites a row's metrics and status together, consistently, is not caught: the
tensors are not in the report. The digest protects against edits and mistakes, not against
a forger who recomputes it (``docs/security.md``).
"""

from __future__ import annotations

import math

from gpuport.validate.model import Arbitration, Metrics, Row, Status, Tolerance

__all__ = ["arbitration_verdict", "row_problem"]

ROOT = "(model)"  # the model's own row (gpuport.validate.trace.ROOT; a test checks they agree)
_SLACK = 1e-6  # relative: min_atol is rounded up to a representable step


def arbitration_verdict(arb: Arbitration) -> str:
    """``wrong``, ``a-outlier`` or ``equivalent`` (which includes undecided) from the stored
    errors, by the rule of :func:`gpuport.validate.arbitrate.decide`."""
    if arb.nonfinite_b or math.isnan(arb.err_b):
        return "wrong"
    if arb.nonfinite_a or math.isnan(arb.err_a):
        return "a-outlier"
    if arb.err_b > arb.multiplier * arb.err_a + arb.floor:
        return "wrong"
    if arb.err_a > arb.multiplier * arb.err_b + arb.floor:
        return "a-outlier"
    return "equivalent"


def _metrics_problem(m: Metrics, tol: Tolerance | None, numel: int, which: str) -> str | None:
    if m.numel != numel:
        return f"{which} metrics count {m.numel} elements, the row {numel}"
    for name in ("mismatched", "nonfinite_a", "nonfinite_b"):
        n = getattr(m, name)
        if n < 0 or n > numel:
            return f"{which} {name} is {n} of {numel} elements"
    if m.cosine_failed and (m.cosine is None or m.min_cosine is None or m.cosine >= m.min_cosine):
        return f"{which} metrics say the cosine gate failed, but cosine {m.cosine} is not below it"
    if tol is None:
        return None
    if m.min_cosine != tol.min_cosine:
        return f"{which} metrics used cosine floor {m.min_cosine}, the tolerance {tol.min_cosine}"
    if m.max_rel_rms != tol.max_rel_rms:
        return f"{which} metrics used format bound {m.max_rel_rms}, the tolerance {tol.max_rel_rms}"
    if m.max_rel_rms is None and math.isfinite(m.min_atol):
        above = m.min_atol > tol.atol * (1 + _SLACK) + 1e-300
        if m.mismatched and m.min_atol <= tol.atol:
            n = m.mismatched
            return f"{which}: {n} elements beyond atol {tol.atol:g}, but min_atol is below it"
        if not m.mismatched and above and not (m.nonfinite_a or m.nonfinite_b):
            return f"{which}: min_atol {m.min_atol:g} is above atol {tol.atol:g}, yet 0 mismatched"
    return None


def row_problem(row: Row) -> str | None:
    """The first way ``row``'s status does not follow from its own data, or None."""
    present = [m for m in (row.metrics, row.local) if m is not None]
    for m, which in ((row.metrics, "B's run"), (row.local, "on A's inputs")):
        if m is not None:
            problem = _metrics_problem(m, row.tolerance, row.numel, which)
            if problem:
                return problem
    status = row.status
    if status is Status.NOT_CHECKED and present:
        return "status 'not checked' but the row has metrics"
    # the model's own row may be `different` with outputs within tolerance: a child's inputs
    # diverged in the model's own forward code (attribute.py blames it)
    blamed_root = row.path == ROOT and status is Status.DIFFERENT
    within = present and all(m.within for m in present)
    if within and status is not Status.SAME and not blamed_root:
        return f"status {status.value!r} but every metric is within tolerance"
    if status is Status.SAME and not all(m.within for m in present):
        return "status 'same' but a metric is beyond tolerance"
    if status is Status.SAME and not present:
        return "status 'same' with no metrics"
    if row.local is not None and row.local.nonfinite_b and status is not Status.WRONG:
        return f"status {status.value!r} but B has NaN/Inf on A's inputs where A is finite"
    if row.arbitration is not None:
        verdict = arbitration_verdict(row.arbitration)
        if verdict == "wrong" and status in (Status.SAME, Status.EQUIVALENT):
            return f"status {status.value!r} but the float64 arbitration says B is wrong"
        if status is Status.WRONG and verdict != "wrong" and not _wrong_without_arbitration(row):
            return "status 'wrong' but neither NaN/Inf nor the float64 arbitration says so"
    return None


def _wrong_without_arbitration(row: Row) -> bool:
    """What else makes a row wrong: NaN/Inf in B (own run or on A's inputs)."""
    return any(m is not None and m.nonfinite_b for m in (row.metrics, row.local))
