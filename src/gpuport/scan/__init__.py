"""`gpuport scan`: will this project run on ROCm, and what blocks it?

The names below are loaded on first use (PEP 562): importing a light part of the scanner
(``gpuport.scan.cxx``, ``gpuport.scan.check``) must not load the whole engine, every rule
family and the project model with it (``gpuport hipify`` start-up, issue 18).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuport.scan.engine import ScanOptions, scan_path
    from gpuport.scan.finding import Finding, SkippedFile
    from gpuport.scan.model import ScanReport

_WHERE = {
    "ScanOptions": "gpuport.scan.engine",
    "scan_path": "gpuport.scan.engine",
    "Finding": "gpuport.scan.finding",
    "ScanReport": "gpuport.scan.model",
    "SkippedFile": "gpuport.scan.finding",
}

__all__ = ["Finding", "ScanOptions", "ScanReport", "SkippedFile", "scan_path"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
