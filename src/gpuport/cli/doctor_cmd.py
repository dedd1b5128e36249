"""``gpuport doctor``: check this machine's GPU stack, layer by layer, and print the fixes.

Read-only: the only files written are the ones named by --output and --save-snapshot.
--from-snapshot replays a saved (or hand-written) snapshot without probing anything, which
is how a report from another machine is reproduced and how the diagnoses are tested.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gpuport import subproc
from gpuport.cli.common import EXIT_FINDINGS, emit, err_console
from gpuport.cli.options import FormatOption, OutputOption
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat

if TYPE_CHECKING:
    from gpuport.doctor.model import DoctorReport


def doctor(
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: OutputOption = None,
    save_snapshot: Annotated[
        Path | None,
        typer.Option("--save-snapshot", help="Also save the raw probe results (JSON) here."),
    ] = None,
    from_snapshot: Annotated[
        Path | None,
        typer.Option("--from-snapshot", help="Diagnose a saved snapshot instead of this machine."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds each external tool may take.")
    ] = 3.0,
    no_smoke_test: Annotated[
        bool, typer.Option("--no-smoke-test", help="Do not run the tiny GPU job.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Show every probe; embed the snapshot in JSON."),
    ] = False,
) -> None:
    """Is this machine's GPU stack sane? What exactly is wrong, and the fix (AMD and NVIDIA).

    Probes this machine only, read-only and each under a time limit (a tiny GPU job in a
    subprocess unless --no-smoke-test); changes nothing. --from-snapshot judges a snapshot
    saved on another machine instead.
    """
    from gpuport.doctor import CheckStatus, DoctorOptions, collect, diagnose, load_snapshot

    if fmt is OutputFormat.SARIF:
        raise GpuportError("doctor has no SARIF form; use terminal, json or markdown")
    if not 0 < timeout <= 600:
        raise GpuportError("--timeout must be more than 0 and at most 600 seconds")
    started = time.monotonic()
    if from_snapshot is not None:
        snapshot = load_snapshot(from_snapshot)
    else:
        root = Path(os.environ.get("GPUPORT_DOCTOR_ROOT") or "/")
        # run from inside a project (its .envrc may have put its bin/ on PATH): no program
        # of that project is run (twenty-fourth re-run)
        avoid = tuple(Path(p) for p in subproc.project_around(os.curdir))
        options = DoctorOptions(
            root=root, timeout_s=timeout, smoke_test=not no_smoke_test, avoid=avoid
        )
        if sys.stderr.isatty():
            with err_console.status("gpuport doctor: probing this machine (read-only)…"):
                snapshot = collect(options)
        else:
            snapshot = collect(options)
    if save_snapshot is not None:
        from gpuport.cli.common import write_atomic

        write_atomic(save_snapshot, snapshot.model_dump_json(indent=2) + "\n", "--save-snapshot")
    took = None if from_snapshot is not None else round(time.monotonic() - started, 2)
    report = diagnose(
        snapshot,
        replayed=from_snapshot is not None,
        include_snapshot=verbose,
        duration_s=took,
    )
    _deliver(report, fmt, output, verbose)
    fails, warns = report.count(CheckStatus.FAIL), report.count(CheckStatus.WARN)
    err_console.print(
        f"gpuport doctor: {fails} failure(s), {warns} warning(s)"
        + (f" in {took:.1f} s" if took is not None else f" (snapshot {snapshot.id})")
        + (f"; snapshot saved to {save_snapshot}" if save_snapshot else ""),
        highlight=False,
        soft_wrap=True,
    )
    if report.failed:
        raise typer.Exit(EXIT_FINDINGS)


def _deliver(report: DoctorReport, fmt: OutputFormat, output: Path | None, verbose: bool) -> None:
    from gpuport.render import doctor_render

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return doctor_render.render_json(report)
        return doctor_render.render_markdown(report, verbose=verbose)

    def terminal(console: Console) -> None:
        doctor_render.render_terminal(report, console, verbose=verbose)

    emit(fmt, output, text=text, terminal=terminal)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
