"""The typer option declarations several commands share (the --format/--output convention,
--accept-edited). Kept apart from :mod:`gpuport.cli.common` so that a command run without typer
(:mod:`gpuport.cli.entry`) does not import it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuport.render.interface import OutputFormat, ReportFormat


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


# Result files that check themselves (issue 14): compare, assess and cost take --accept-edited.
AcceptEditedOption = Annotated[
    bool,
    typer.Option(
        "--accept-edited",
        help="Use bench/validate files edited after their run (refused otherwise); "
        "a warning names each.",
    ),
]
