"""What every command shares: consoles, the output convention, exit codes."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gpuport.render.interface import OutputFormat, ReportFormat, write_atomic

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_BUG = 4

err_console = Console(stderr=True)


def _as_output_format(value: ReportFormat | OutputFormat) -> OutputFormat:
    return OutputFormat(value.value)


# The shared --format/--output convention for commands that write a report, not findings:
# typer offers (and accepts) only the three formats, and the command receives an OutputFormat.
if TYPE_CHECKING:  # what the command receives, after the callback
    FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f")]
else:  # what typer offers and accepts
    FormatOption = Annotated[
        ReportFormat,
        typer.Option(
            "--format", "-f", help="terminal, json or markdown.", callback=_as_output_format
        ),
    ]
OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the result to this file.")
]


def emit(
    fmt: OutputFormat,
    output: Path | None,
    *,
    text: Callable[[], str],
    terminal: Callable[[Console], None],
) -> None:
    """Write the result: to ``output`` atomically, or to stdout.

    The terminal format to a file is written as plain text (no colour codes).
    """
    if fmt is OutputFormat.TERMINAL:
        if output is None:
            terminal(Console())
            return
        buf = Console(record=True, width=120, file=io.StringIO(), force_terminal=False)
        terminal(buf)
        write_atomic(output, buf.export_text())
        return
    body = text()
    if output is None:
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        write_atomic(output, body)
