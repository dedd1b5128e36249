"""``gpuport compare A B…``: run against run, per workload case, with confidence intervals."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gpuport.cli.common import EXIT_FINDINGS, err_console, honours_accept_edited, write_atomic
from gpuport.cli.options import AcceptEditedOption, OutputOption
from gpuport.models import GpuportError
from gpuport.render.text import clean_line

FORMATS = {
    "terminal": "terminal",
    "json": "json",
    "markdown": "markdown",
    "md": "markdown",
    "csv": "csv",
}


@honours_accept_edited
def compare(
    runs: Annotated[
        list[str] | None,
        typer.Argument(help="Run files or history ids/labels; the first is the baseline."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="terminal, json, markdown (md) or csv.")
    ] = "terminal",
    output: OutputOption = None,
    history: Annotated[
        Path | None,
        typer.Option("--history", help="History database (default: the user data folder)."),
    ] = None,
    list_runs: Annotated[
        bool, typer.Option("--list", help="List the runs in the history and exit.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", help="How many runs --list shows.")] = 20,
    noise: Annotated[
        float,
        typer.Option("--noise", help="Ratios within this fraction of 1 count as the same."),
    ] = 0.02,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the bootstrap interval.")
    ] = 0.95,
    fail_on_slower: Annotated[
        bool,
        typer.Option("--fail-on-slower", help="Exit 1 when any case is slower than the baseline."),
    ] = False,
    accept_edited: AcceptEditedOption = False,
) -> None:
    """Side by side: the ratio per workload case against the first run, with a bootstrap CI.

    Assumes the first run is the baseline; 95% bootstrap intervals; a ratio within 2% of 1
    is "same"; each run file is checked against its digest and raw samples on load.
    """
    from gpuport.bench.history import History

    kind = FORMATS.get(fmt.lower())
    if kind is None:
        raise GpuportError(
            f"--format must be one of terminal, json, markdown, md, csv; not {fmt!r}"
        )
    if list_runs:
        if limit <= 0:
            raise GpuportError("--limit must be positive")
        from gpuport.render.compare_render import history_terminal

        history_terminal(History(history).list(limit), Console())
        return
    if not runs or len(runs) < 2:
        raise GpuportError("compare needs at least two runs (files, history ids or labels)")
    if not (math.isfinite(noise) and 0 <= noise < 1):
        raise GpuportError("--noise must be a fraction between 0 and 1, e.g. 0.02")
    if not (math.isfinite(confidence) and 0.5 <= confidence < 1):
        raise GpuportError("--confidence must be between 0.5 and 1, e.g. 0.95")
    from gpuport.bench.compare import compare as compare_runs
    from gpuport.bench.history import resolve_run
    from gpuport.render import compare_render

    store = History(history)
    loaded = [resolve_run(ref, store) for ref in runs]
    result = compare_runs(loaded, confidence=confidence, noise=noise)
    if kind == "terminal":
        if output is None:
            compare_render.compare_terminal(result, Console())
        else:
            import io

            buf = Console(record=True, width=140, file=io.StringIO(), force_terminal=False)
            compare_render.compare_terminal(result, buf)
            write_atomic(output, buf.export_text())
    else:
        render = {
            "json": compare_render.compare_json,
            "markdown": compare_render.compare_markdown,
            "csv": compare_render.compare_csv,
        }[kind]
        body = render(result)
        if kind == "json":
            from gpuport.render.text import json_safe

            body = json_safe(body)  # run labels and names: no raw C1 or bidi characters
        if output is None:
            sys.stdout.write(body)
        else:
            write_atomic(output, body)
    if output is not None:
        err_console.print(
            f"gpuport compare: written to {clean_line(str(output))}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if fail_on_slower and any("slower" in row.verdicts for row in result.rows):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
