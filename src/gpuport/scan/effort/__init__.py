"""How long a ROCm port takes: an effort model by component and regime (issue 27).

:func:`estimate` turns a scan's judged findings into an :class:`~gpuport.scan.model.Effort`:
components (bring-up, native code, kernel families, the Python layer, build, containers),
each with its regime, range and basis, and the listed hours of every rule as the detail.
docs/effort.md explains the model and its backtest on public port histories.
"""

from __future__ import annotations

from gpuport.scan.effort.items import DROP_HOURS, HIGH, HOURS_PER_DAY, LOW, listed_items
from gpuport.scan.effort.model import EffortContext, estimate

__all__ = [
    "DROP_HOURS",
    "HIGH",
    "HOURS_PER_DAY",
    "LOW",
    "EffortContext",
    "estimate",
    "listed_items",
]
