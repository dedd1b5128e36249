"""``gpuport bench``: run the suite on this machine, show it, save the run file and history."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus
from gpuport.cli.common import EXIT_FINDINGS, emit, err_console
from gpuport.cli.options import FormatOption, OutputOption
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat

FAIL_ON = ("failed", "skipped", "never")


class _BarObserver:
    """Wires the core's progress callbacks to a rich progress bar on stderr."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task = bar.add_task("bench", total=None, what="")

    def planned(self, total: int) -> None:
        self.bar.update(self.task, total=total)

    def case_started(self, workload: str, case: str) -> None:
        self.bar.update(self.task, what=f"{workload}: {case}")

    def case_finished(self, result: BenchResult) -> None:
        self.bar.advance(self.task)


def _list_workloads() -> None:
    from rich.table import Table

    from gpuport.bench.run import select_workloads

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for wl in select_workloads(None):
        table.add_row(wl.name, wl.summary)
    Console().print(table)


def _is_rank0() -> bool:
    """Under torchrun only rank 0 reports; the others just take part in the collectives."""
    return os.environ.get("RANK", "0") == "0"


def bench(
    full: Annotated[
        bool, typer.Option("--full/--quick", help="Full sweep, or the quick suite (default).")
    ] = False,
    workload: Annotated[
        list[str] | None,
        typer.Option("--workload", "-w", help="Only these workloads (repeatable or comma list)."),
    ] = None,
    list_workloads: Annotated[
        bool, typer.Option("--list", help="List the workloads and exit.")
    ] = False,
    dtype: Annotated[
        list[str] | None,
        typer.Option(
            "--dtype", help="Restrict GEMM/attention dtypes: bf16, fp16, fp32, tf32, fp8."
        ),
    ] = None,
    fp8_format: Annotated[
        str | None,
        typer.Option(
            "--fp8-format",
            help="Force e4m3fn or e4m3fnuz (default: the device's own flavour).",
        ),
    ] = None,
    step: Annotated[
        str | None,
        typer.Option(
            "--step",
            help="Time your own step: module:function or path/to/file.py:function "
            "(runs your code).",
        ),
    ] = None,
    step_items: Annotated[
        int | None,
        typer.Option("--step-items", help="Items (e.g. tokens) per step: report items/s."),
    ] = None,
    world: Annotated[
        int | None,
        typer.Option("--world", help="Ranks for the collectives workload (default: all GPUs)."),
    ] = None,
    device: Annotated[
        int | None,
        typer.Option("--device", help="GPU index to benchmark (under torchrun: LOCAL_RANK)."),
    ] = None,
    label: Annotated[
        str | None, typer.Option("--label", help="Name for this run in history and compare.")
    ] = None,
    preheat: Annotated[
        float | None,
        typer.Option("--preheat", help="Seconds of GEMM warm-up first (GPU; default 10/30)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for the random inputs.")] = 0,
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: OutputOption = None,
    save: Annotated[
        Path | None,
        typer.Option("--save", help="Also write the JSON run file here (whatever --format)."),
    ] = None,
    history: Annotated[
        Path | None,
        typer.Option("--history", help="History database (default: the user data folder)."),
    ] = None,
    no_history: Annotated[
        bool, typer.Option("--no-history", help="Do not record the run in the history.")
    ] = False,
    knowledge: Annotated[
        Path | None,
        typer.Option("--knowledge", help="Folder with a gpus.toml extending the GPU catalog."),
    ] = None,
    fail_on: Annotated[
        str, typer.Option("--fail-on", help="Exit 1 when a case is: failed, skipped, never.")
    ] = "failed",
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
) -> None:
    """How fast is this machine, as % of its peak: GEMM, memory, attention, models, collectives.

    Assumes this machine's first GPU (--device picks another), else the CPU; the peak and the
    best published figure come from the GPU catalog entry of the device found; every case is
    timed the same way (warm-up until the clocks settle, a cache flush, at least 100 samples).
    """
    if list_workloads:
        _list_workloads()
        return
    from gpuport.bench.run import BenchOptions

    if fmt is OutputFormat.SARIF:
        raise GpuportError("--format sarif is for findings; bench writes terminal, json, markdown")
    if fail_on not in FAIL_ON:
        raise GpuportError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    if fp8_format is not None and fp8_format not in ("e4m3fn", "e4m3fnuz"):
        raise GpuportError(f"--fp8-format must be e4m3fn or e4m3fnuz, not {fp8_format!r}")
    if step_items is not None and step_items <= 0:
        raise GpuportError("--step-items must be a positive integer")
    if world is not None and world < 2:
        raise GpuportError("--world must be at least 2 (a collective needs two ranks)")
    if device is None:
        device = int(os.environ.get("LOCAL_RANK", "0") or 0)
    if device < 0:
        raise GpuportError("--device must be 0 or more")
    if preheat is not None and preheat < 0:
        raise GpuportError("--preheat must be 0 or more seconds")
    if step is None and workload and any("user" in w.split(",") for w in workload):
        raise GpuportError("the user workload times your own step: give --step module:function")
    names = list(workload or [])
    if step is not None and not names:
        names = ["user"]
    elif step is not None and not any("user" in w.split(",") for w in names):
        # refused, not ignored: --step is only ever timed by the user workload
        raise GpuportError(
            f"--step is timed by the user workload, which -w {','.join(names)} leaves out; "
            f"add it (-w {','.join(names)},user) or drop -w"
        )
    options: dict[str, Any] = {
        "dtypes": _dtypes(dtype),
        "fp8_format": fp8_format,
        "step": step,
        "step_items": step_items,
        "world": world,
    }
    opts = BenchOptions(
        suite="full" if full else "quick",
        workloads=names or None,
        label=label,
        device_index=device,
        seed=seed,
        preheat_s=preheat,
        knowledge_dir=knowledge,
        options={k: v for k, v in options.items() if v is not None},
    )
    if _is_rank0():
        _preflight(output, save, False if no_history else history)
    show = not no_progress and sys.stderr.isatty() and _is_rank0()
    run = _run(opts, show)
    if not _is_rank0():
        return
    _deliver(run, fmt, output, save, history, no_history)
    if _fails(run, fail_on):
        raise typer.Exit(EXIT_FINDINGS)


def _preflight(output: Path | None, save: Path | None, history: Path | bool | None) -> None:
    """Refuse unwritable destinations before a suite that may take many minutes, not after."""
    from gpuport.fileio import check_writable

    for flag, path in (("--output", output), ("--save", save)):
        if path is not None:
            check_writable(path, flag)
    if history is not False:
        from gpuport.bench.history import History

        History(history if isinstance(history, Path) else None).list(1)  # a broken file fails now


def _dtypes(values: list[str] | None) -> list[str] | None:
    allowed = ("bf16", "fp16", "fp32", "tf32", "fp8")
    out: list[str] = []
    for value in values or []:
        for part in (p.strip().lower() for p in value.split(",")):
            if part and part not in allowed:
                raise GpuportError(f"unknown --dtype {part!r}; choose from {', '.join(allowed)}")
            if part:
                out.append(part)
    return out or None


def _run(opts: Any, show: bool) -> BenchRun:
    from gpuport.bench.run import run_suite

    if not show:
        return run_suite(opts)
    with Progress(
        TextColumn("bench"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[what]}"),
        console=err_console,
        transient=True,
    ) as bar:
        return run_suite(opts, _BarObserver(bar))


def _deliver(
    run: BenchRun,
    fmt: OutputFormat,
    output: Path | None,
    save: Path | None,
    history: Path | None,
    no_history: bool,
) -> None:
    from gpuport.cli.common import write_atomic
    from gpuport.render import bench_render

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return run.model_dump_json(indent=2) + "\n"
        return bench_render.render_markdown(run)

    def terminal(console: Console) -> None:
        bench_render.render_terminal(run, console)

    emit(fmt, output, text=text, terminal=terminal)
    if save is not None:
        write_atomic(save, run.model_dump_json(indent=2) + "\n", "--save")
    where = ""
    if not no_history:
        from gpuport.bench.history import History

        History(history).add(run)
        where = f"; recorded in history as {run.id[:8]}"
    ok = sum(r.status is CaseStatus.OK for r in run.results)
    err_console.print(
        f"gpuport bench: {ok}/{len(run.results)} cases ok in {run.duration_s:.1f} s{where}"
        + (f"; run file {save}" if save else ""),
        highlight=False,
        soft_wrap=True,
    )


def _fails(run: BenchRun, fail_on: str) -> bool:
    if fail_on == "never":
        return False
    bad = {CaseStatus.FAILED} if fail_on == "failed" else {CaseStatus.FAILED, CaseStatus.SKIPPED}
    return any(r.status in bad for r in run.results)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
