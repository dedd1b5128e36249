"""``gpuport port``: the mechanical part of a ROCm port as a reviewable change.

:func:`gpuport.port.engine.port_path` scans a project, asks each fix family for fixes of its
findings, and returns a :class:`gpuport.port.model.PortReport` (the fixes, the diff, what was
left); with ``apply`` it writes them through :mod:`gpuport.fileio`.
"""

from __future__ import annotations

from gpuport.port.engine import PortOptions, port_path
from gpuport.port.model import PortReport

__all__ = ["PortOptions", "PortReport", "port_path"]
