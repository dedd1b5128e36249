"""``gpuport port [PATH]``: parse options, run the port core, render the diff or the writes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuport import subproc
from gpuport.cli.common import EXIT_FINDINGS, emit, err_console, say_if_unconfined
from gpuport.cli.options import FormatOption, OutputOption
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat


def _ids(values: list[str] | None) -> frozenset[str]:
    return frozenset(
        part.strip().upper() for v in values or [] for part in v.split(",") if part.strip()
    )


def port(
    path: Annotated[Path, typer.Argument(help="Project folder.")] = Path(),
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Write the fixes (each changed file is backed up as FILE.gpuport.bak; writes "
            "are atomic and never go through a link).",
        ),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Show the fixes as a unified diff (the default).")
    ] = False,
    unsafe_fixes: Annotated[
        bool,
        typer.Option(
            "--unsafe-fixes",
            help="Also take the fixes that can change what a working build does (wave64 "
            "rewrites, version floors, package swaps, capability gates).",
        ),
    ] = False,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="Only fix these rule IDs or prefixes (GP3, GP402)."),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="Leave these rule IDs or prefixes.")
    ] = None,
    target: Annotated[
        str, typer.Option("--target", "-t", help="AMD target the findings are judged for.")
    ] = "gfx942",
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Compile the changed CUDA/HIP files with hipcc (--offload-arch) and with nvcc, "
            "where they are installed.",
        ),
    ] = False,
    offload_arch: Annotated[
        str, typer.Option("--offload-arch", help="AMD targets for --check, comma-separated.")
    ] = "gfx90a",
    fmt: FormatOption = OutputFormat.TERMINAL,
    output: OutputOption = None,
    knowledge: Annotated[
        Path | None,
        typer.Option("--knowledge", help="Folder with packages.toml/targets.toml overrides."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="gitignore-style pattern to skip; repeatable."),
    ] = None,
    include_vendored: Annotated[
        bool, typer.Option("--include-vendored", help="Also fix third_party/, vendor/, ...")
    ] = False,
    no_verify: Annotated[
        bool, typer.Option("--no-verify", help="With --apply, do not scan again afterwards.")
    ] = False,
) -> None:
    """Fix what is mechanical: a reviewable diff (default), or with --apply the files."""
    from gpuport.port import PortOptions, port_path

    if apply and diff:
        raise GpuportError("--apply and --diff exclude each other (--diff shows, --apply writes)")
    from gpuport.cli.common import refuse_links_in_project, refuse_output_into_project

    refuse_output_into_project(output, path)
    if apply:  # the files rewritten are reached through no link the project ships
        refuse_links_in_project(path, path, "--apply on")
    archs = tuple(a.strip() for a in offload_arch.split(",") if a.strip())
    if not archs or any(
        not a.replace("-", "").replace(":", "").replace("+", "").isalnum() for a in archs
    ):
        raise GpuportError(
            f"--offload-arch must name AMD targets (gfx90a,gfx942), not {offload_arch!r}"
        )
    opts = PortOptions(
        target=target,
        knowledge_dir=knowledge,
        select=_ids(select) or None,
        ignore=_ids(ignore),
        unsafe_fixes=unsafe_fixes,
        apply=apply,
        verify=not no_verify,
        check=check,
        offload_archs=archs,
        include_vendored=include_vendored,
        exclude=tuple(exclude or ()),
    )
    subproc.avoid_always([path])  # every lookup and program of this run leaves the project out
    subproc.forget_imports_from([path])  # a project's `dulwich/` on PYTHONPATH (twenty-fifth F1)
    say_if_unconfined(check)
    subproc.neutral_tempdir([path])
    report = port_path(path, opts)

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return report.model_dump_json(indent=2) + "\n"
        from gpuport.render.port_render import render_markdown

        return render_markdown(report)

    def terminal(console: object) -> None:
        from gpuport.render.port_render import render_terminal

        render_terminal(report, console)  # type: ignore[arg-type]

    emit(fmt, output, text=text, terminal=terminal)
    if output is not None or fmt is not OutputFormat.TERMINAL:
        from gpuport.render.port_render import summary_line

        err_console.print(summary_line(report), highlight=False, soft_wrap=True)
    if any(c.status == "failed" for c in report.checks):
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("port")(port)
