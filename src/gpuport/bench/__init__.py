"""``gpuport bench`` and ``gpuport compare``: the same workloads, timed the same way, anywhere.

The core returns models (:class:`BenchRun`, :class:`Comparison`) and never prints;
torch is imported only when a suite actually runs.
"""

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, Comparison, DeviceInfo, Stats
from gpuport.models import register_consistency_check


def _run_problem(run: BenchRun) -> str | None:
    """:func:`gpuport.bench.verify.run_problem`, imported when a run is loaded."""
    from gpuport.bench.verify import run_problem

    return run_problem(run)


# a loaded run's derived figures are recomputed from its raw samples (issue 14)
register_consistency_check(BenchRun, _run_problem)

__all__ = ["BenchResult", "BenchRun", "CaseStatus", "Comparison", "DeviceInfo", "Stats"]
