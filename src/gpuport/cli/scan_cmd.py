"""``gpuport scan PATH``: parse options, run the scan core, render the report."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpuport import subproc
from gpuport.cli.common import (
    EXIT_BUG,
    EXIT_FINDINGS,
    emit,
    err_console,
    refuse_empty_file,
    refuse_output_into_project,
)
from gpuport.cli.options import OutputOption
from gpuport.models import GpuportError, Severity
from gpuport.render.interface import OutputFormat
from gpuport.render.text import clean_line
from gpuport.scan import ScanOptions, ScanReport, scan_path
from gpuport.scan.rules import FileKind

FAIL_ON_CHOICES = ("blocker", "major", "minor", "never")


def _ids(values: list[str] | None) -> frozenset[str]:
    out: set[str] = set()
    for value in values or []:
        for part in value.split(","):
            part = part.strip().upper()
            if part:
                out.add(part)
    return frozenset(out)


def run_scan(path: Path, opts: ScanOptions, show_progress: bool) -> ScanReport:
    if not show_progress:
        return scan_path(path, opts)
    with Progress(
        TextColumn("scanning"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("scan", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return scan_path(path, opts, progress)


def fails(report: ScanReport, fail_on: str) -> bool:
    """Whether ``--fail-on`` trips: a judged finding (core, unless ``--scope all``) at or
    above the floor, each weighed as the verdict weighs it (an install step such as GP102
    is minor work there). A blocker in an example, a test or a CI Dockerfile does not fail
    a project whose verdict does not count it: the gate means what the verdict means."""
    if fail_on == "never":
        return False
    from gpuport.scan.verdict import INSTALL_STEPS, judged

    floor = Severity.parse(fail_on)
    for f in judged(report.findings, report.scope):
        rank = f.severity.rank
        if f.rule_id in INSTALL_STEPS:
            rank = min(rank, Severity.MINOR.rank)
        if rank >= floor.rank:
            return True
    return False


def scan(
    path: Annotated[Path, typer.Argument(help="Project folder (or one file) to scan.")],
    target: Annotated[
        str,
        typer.Option(
            "--target",
            "-t",
            help="AMD target: any gfx name in the knowledge base (gfx942, gfx950, gfx90a, "
            "gfx908, gfx1030, gfx1100, gfx1151, gfx1201, ...) or a product/family alias "
            "(mi300x, mi100, strix-halo, rx9070xt, cdna3, rdna4).",
        ),
    ] = "gfx942",
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="terminal (wraps to the width), compact (one line per finding: CI logs, "
            "pre-commit), json, sarif or markdown.",
        ),
    ] = OutputFormat.TERMINAL,
    output: OutputOption = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            help="Exit 1 if a judged finding (core code, or every scope with --scope all) is "
            "this severe or worse: blocker, major, minor, never.",
        ),
    ] = "never",
    include_vendored: Annotated[
        bool, typer.Option("--include-vendored", help="Also scan third_party/, vendor/, ...")
    ] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="gitignore-style pattern to skip; repeatable."),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="Only these rule IDs or prefixes (GP3, GP301)."),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="Skip these rule IDs or prefixes.")
    ] = None,
    knowledge: Annotated[
        Path | None,
        typer.Option(
            "--knowledge",
            help="Folder with packages.toml/targets.toml "
            "that extend or override the bundled knowledge.",
        ),
    ] = None,
    max_file_size: Annotated[
        float, typer.Option("--max-file-size", help="Skip files larger than this many MB.")
    ] = 5.0,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            help="Only these file kinds; repeatable: " + ", ".join(k.value for k in FileKind),
        ),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", help="Worker processes (0 = all cores).")
    ] = 0,
    scope: Annotated[
        str,
        typer.Option(
            "--scope",
            help="What decides the verdict and effort: core (the library, its packaging and "
            "build; tests, examples, benchmarks, docs, tooling, extras and other vendors' "
            "backends are counted apart) or all.",
        ),
    ] = "core",
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show info findings too.")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
) -> None:
    """Will this project run on ROCm? Every blocker, where it is, and how to fix it.

    Assumes target gfx942 (MI300X: wave64, FNUZ fp8) unless --target; the verdict, the effort
    and --fail-on judge core code (the library, its packaging and build), with tests, examples,
    docs and tooling such as docker/ counted apart, unless --scope all; files are read, never
    run or built.
    """
    if fail_on.lower() not in FAIL_ON_CHOICES:
        raise GpuportError(
            f"--fail-on must be one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}"
        )
    if not math.isfinite(max_file_size * 1024 * 1024) or max_file_size <= 0:
        raise GpuportError("--max-file-size must be a positive number of MB")
    if scope.lower() not in ("core", "all"):
        raise GpuportError(f"--scope must be core or all, not {scope!r}")
    if jobs < 0:
        raise GpuportError("--jobs must be 0 (all cores) or more")
    refuse_output_into_project(output, path)
    kinds: set[FileKind] = set()
    for value in kind or []:
        for part in value.split(","):
            try:
                kinds.add(FileKind(part.strip().lower()))
            except ValueError:
                names = ", ".join(k.value for k in FileKind)
                raise GpuportError(f"unknown --kind {part!r}; choose from: {names}") from None
    opts = ScanOptions(
        kinds=frozenset(kinds) or None,
        target=target,
        knowledge_dir=knowledge,
        include_vendored=include_vendored,
        exclude=tuple(exclude or ()),
        select=_ids(select) or None,
        ignore=_ids(ignore),
        max_bytes=int(max_file_size * 1024 * 1024),
        scope=scope.lower(),
    )
    if jobs:
        opts = replace(opts, jobs=jobs)
    refuse_empty_file(path, "scan")
    # the git index is read with dulwich, imported late: never a project's own `dulwich/`
    # that a PYTHONPATH from its .envrc names (twenty-fifth re-run F1)
    subproc.forget_imports_from([path])
    show = not no_progress and sys.stderr.isatty()
    report = run_scan(path, opts, show)

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return report.model_dump_json(indent=2) + "\n"
        if fmt is OutputFormat.SARIF:
            from gpuport.render import scan_sarif

            return scan_sarif.render(report)
        if fmt is OutputFormat.COMPACT:
            from gpuport.render import scan_compact

            return scan_compact.render(report, verbose=verbose)
        from gpuport.render import scan_markdown

        return scan_markdown.render(report)

    def terminal(console: object) -> None:
        from gpuport.render import scan_terminal

        scan_terminal.render(report, console, verbose=verbose)  # type: ignore[arg-type]

    emit(fmt, output, text=text, terminal=terminal)
    if output is not None or fmt not in (OutputFormat.TERMINAL, OutputFormat.COMPACT):
        err_console.print(
            f"gpuport scan: {report.verdict.value} ({report.verdict_reason}); "
            + ", ".join(f"{report.counts.get(s, 0)} {s.value}" for s in Severity)
            + (f"; written to {output}" if output else ""),
            highlight=False,
            soft_wrap=True,
        )
    failed = [s.path for s in report.skipped if s.internal]
    if failed:  # a reader's crash never passes as a clean verdict (issue 23)
        err_console.print(
            clean_line(
                f"gpuport scan: internal error analysing {len(failed)} file(s) "
                f"({', '.join(failed[:3])}); the verdict does not cover them; please report it"
            ),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_BUG)
    if fails(report, fail_on.lower()):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
