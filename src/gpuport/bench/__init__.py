"""``gpuport bench`` and ``gpuport compare``: the same workloads, timed the same way, anywhere.

The core returns models (:class:`BenchRun`, :class:`Comparison`) and never prints;
torch is imported only when a suite actually runs.
"""

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, Comparison, DeviceInfo, Stats

__all__ = ["BenchResult", "BenchRun", "CaseStatus", "Comparison", "DeviceInfo", "Stats"]
