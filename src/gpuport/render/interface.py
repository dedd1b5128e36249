"""Output formats and the atomic writer every command shares."""

from __future__ import annotations

import enum

from gpuport.fileio import write_atomic

__all__ = ["OutputFormat", "write_atomic"]


class OutputFormat(enum.StrEnum):
    TERMINAL = "terminal"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"
