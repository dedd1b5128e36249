"""Output formats and the atomic writer every command shares."""

from __future__ import annotations

import enum

from gpuport.fileio import write_atomic

__all__ = ["OutputFormat", "ReportFormat", "write_atomic"]


class OutputFormat(enum.StrEnum):
    TERMINAL = "terminal"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"
    COMPACT = "compact"  # scan: one line per finding, for CI logs and pre-commit


class ReportFormat(enum.StrEnum):
    """The formats a report command writes (not findings: no sarif). ``--help`` of such a
    command lists only these; the CLI hands the command the matching OutputFormat."""

    TERMINAL = "terminal"
    JSON = "json"
    MARKDOWN = "markdown"
