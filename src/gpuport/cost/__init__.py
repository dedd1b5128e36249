"""``gpuport cost``: does a model fit, on how many GPUs, how fast, at what price.

The arithmetic the seeds do by hand ("a 70B model fits on one MI300X but needs two
H100s", "$0.041 vs $0.027 per million tokens", "buying breaks even after 1,500-3,000
hours"), for any model and any GPU in the catalog, from published specs or from the
user's own ``gpuport bench`` runs. Pure functions: data in, :class:`CostReport` out.
"""

from __future__ import annotations

from gpuport.cost.estimate import estimate
from gpuport.cost.model import CostReport, CurvePoint, Efficiency, GpuCost
from gpuport.cost.options import CostOptions

__all__ = ["CostOptions", "CostReport", "CurvePoint", "Efficiency", "GpuCost", "estimate"]
