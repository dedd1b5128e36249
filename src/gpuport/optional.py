"""Lazy imports of heavy optional dependencies (torch, safetensors, matplotlib, ...).

Cores import these inside the functions that need them, through :func:`require`,
so ``gpuport scan`` never pays for torch and a missing extra becomes a one-line
message naming what to install (exit code 3), never a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from gpuport.models import EnvironmentProblem


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or explain which gpuport extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".", 1)[0]
        missing = getattr(exc, "name", None) or top
        raise EnvironmentProblem(
            f"{purpose} needs the Python package {missing!r}, which is not installed here; "
            f"install it with: pip install 'gpuport[{extra}]'"
        ) from None
