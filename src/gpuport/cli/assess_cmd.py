"""``gpuport assess [PATH]``: one readiness report for a project (parse → assess → render).

Flags override the project's ``[tool.gpuport]`` / ``gpuport.toml`` settings key by key; only the
flags actually given are passed on, so the report can say where each value came from.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuport import subproc
from gpuport.cli.common import (
    EXIT_FINDINGS,
    err_console,
    honours_accept_edited,
    say_if_unconfined,
    write_atomic,
)
from gpuport.cli.options import AcceptEditedOption
from gpuport.fileio import check_writable
from gpuport.models import GpuportError

FORMATS = {
    "terminal": "terminal",
    "json": "json",
    "markdown": "markdown",
    "md": "markdown",
    "html": "html",
}
FAIL_ON = {"blocked": 3, "major": 2, "minor": 1, "never": 99}


def _flags(**given: Any) -> dict[str, Any]:
    """Settings-file spelling of the flags that were given (None means not given)."""
    return {k: v for k, v in given.items() if v is not None and v != []}


@honours_accept_edited
def assess(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Project folder (default: the current folder). Several folders (or "
            "--projects FILE) make one portfolio table, assessed on every core. The bundled "
            "example is assessed only by name: gpuport assess examples/llm-service.",
            show_default=False,
        ),
    ] = None,
    projects: Annotated[
        Path | None,
        typer.Option(
            "--projects",
            help="A file listing project folders, one per line (# comments): a portfolio.",
        ),
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option("--target", "-t", help="AMD target(s); the first is assessed (gfx942)."),
    ] = None,
    gpus: Annotated[
        list[str] | None,
        typer.Option("--gpus", "-g", help="GPUs to price, comma list (h100-sxm,mi300x)."),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="Model(s) served, e.g. llama-3-70b.")
    ] = None,
    model_config: Annotated[
        Path | None, typer.Option("--model-config", help="A Hugging Face config.json on disk.")
    ] = None,
    dtype: Annotated[
        str | None,
        typer.Option("--dtype", help="Weights: bf16, fp16, fp8, int8, int4, fp4, mxfp4, nvfp4."),
    ] = None,
    kv_dtype: Annotated[
        str | None, typer.Option("--kv-dtype", help="KV cache: auto, bf16, fp16, fp8.")
    ] = None,
    context: Annotated[int | None, typer.Option("--context", help="Tokens per sequence.")] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", help="Sequences in flight per replica.")
    ] = None,
    price: Annotated[
        list[str] | None, typer.Option("--price", help="GPU=USD per GPU-hour (repeatable).")
    ] = None,
    train: Annotated[
        bool | None, typer.Option("--train/--serve", help="Size training instead of serving.")
    ] = None,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="gitignore-style pattern the scan skips.")
    ] = None,
    bench: Annotated[
        list[str] | None,
        typer.Option("--bench", help="Bench run to attach: file, history id or label."),
    ] = None,
    run_bench: Annotated[
        str | None, typer.Option("--run-bench", help="Run the bench suite here: quick or full.")
    ] = None,
    validate: Annotated[
        list[str] | None,
        typer.Option("--validate", help="`gpuport validate check --format json` report."),
    ] = None,
    doctor: Annotated[
        bool | None,
        typer.Option("--doctor/--no-doctor", help="Check this machine's GPU stack (off)."),
    ] = None,
    doctor_snapshot: Annotated[
        Path | None,
        typer.Option("--doctor-snapshot", help="Replay a doctor snapshot from the target machine."),
    ] = None,
    hipify_check: Annotated[
        bool | None,
        typer.Option("--hipify-check/--no-hipify-check", help="Compile the translation (hipcc)."),
    ] = None,
    hip_version: Annotated[
        str | None,
        typer.Option("--hip-version", help="HIP version the translation targets (6.4)."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="terminal, json, markdown (md) or html.")
    ] = "terminal",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file.")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option("--fail-on", help="Exit 1 at this readiness or worse: blocked, major, minor."),
    ] = None,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress line.")] = False,
    accept_edited: AcceptEditedOption = False,
) -> None:
    """One readiness report: verdict, effort, cost, speed and numerics, with the evidence.

    Assumes, unless set by a flag or the project's settings (tool.gpuport in pyproject.toml,
    or gpuport.toml), and says each with its origin under Assumptions: the current folder when
    no PATH is given; target gfx942; GPUs h100-sxm and mi300x at the catalog's dated on-demand
    prices; the model named in core code (one named only in examples or tests is offered, not
    used), else none and no cost; serving, unless core code trains (a Trainer, an optimizer
    step, .backward()); the HIP version installed here, else 6.4 (as hipify); core code
    judged (tests, examples, docker/ counted apart). Nothing in the project is run.
    """
    from gpuport.assess import AssessOptions, load_settings
    from gpuport.assess import assess as run_assess

    kind = FORMATS.get(fmt.lower())
    if kind is None:
        raise GpuportError(
            f"--format must be one of terminal, json, markdown, md, html; not {fmt!r}"
        )
    if run_bench is not None and run_bench not in ("quick", "full"):
        raise GpuportError(f"--run-bench takes quick or full, not {run_bench!r}")
    from gpuport.assess.assumptions import project_root

    listed = list(paths or [])
    if projects is not None:
        from gpuport.assess.portfolio import read_list

        listed += read_list(projects)
    flags = _flags(
        targets=target,
        gpus=gpus,
        model=model,
        model_config=str(model_config) if model_config else None,
        dtype=dtype,
        kv_dtype=kv_dtype,
        context=context,
        concurrency=concurrency,
        prices=price,
        train=train,
        exclude=exclude,
        bench=bench,
        validate=validate,
        doctor=doctor,
        hipify_check=hipify_check,
        hip_version=hip_version,
        fail_on=fail_on,
    )
    if len(listed) > 1 or projects is not None:
        once = {"--run-bench": run_bench, "--doctor-snapshot": doctor_snapshot, "--doctor": doctor}
        given_once = [name for name, value in once.items() if value]
        if given_once:
            raise GpuportError(
                f"{', '.join(given_once)} describe(s) one machine, not each project of a "
                "portfolio; assess the projects one by one for that"
            )
        _portfolio(listed, flags, kind, output, no_progress)
        return
    root, given = project_root(listed[0] if listed else None)
    # every program started while this project is assessed leaves it out (its bench
    # workers, its compile checks), and gpuport itself imports nothing from it (--run-bench
    # imports torch in this process) nor keeps temporary files in it
    subproc.avoid_always([root])
    subproc.forget_imports_from([root])
    subproc.neutral_tempdir([root])
    say_if_unconfined(bool(hipify_check))
    settings = load_settings(root, flags)
    options = AssessOptions(
        run_bench=run_bench,
        require_hipcc=bool(hipify_check),
        doctor_snapshot=doctor_snapshot,
        project_given=given,
    )
    show = not no_progress and sys.stderr.isatty()
    status = err_console.status("gpuport assess") if show else nullcontext()
    if output is not None:  # before the work, not after it
        check_writable(output, "--output")
        from gpuport.cli.common import refuse_output_into_project

        refuse_output_into_project(output, root)
    with status as live:

        def observe(step: str) -> None:
            if live is not None:
                live.update(f"gpuport assess: {step}")

        result = run_assess(settings, options, observe)
    _deliver(result, kind, output)
    threshold = FAIL_ON[settings.fail_on]
    if result.verdict.rank >= threshold:
        raise typer.Exit(EXIT_FINDINGS)


def _portfolio(
    paths: list[Path], flags: dict[str, Any], kind: str, output: Path | None, no_progress: bool
) -> None:
    """``gpuport assess A B C …``: one row per project, in every format; exit 1 when the
    worst verdict reaches --fail-on, 2 when a project could not be assessed."""
    from rich.console import Console

    from gpuport.assess.config import FAIL_ON as CHOICES
    from gpuport.assess.portfolio import assess_many
    from gpuport.render import portfolio_render

    fail_on = str(flags.get("fail_on", "never")).lower()
    if fail_on not in CHOICES:
        raise GpuportError(f"--fail-on must be one of {', '.join(CHOICES)}, not {fail_on!r}")
    if output is not None:
        check_writable(output, "--output")
        from gpuport.cli.common import refuse_output_into_project

        for project in paths:  # as for one project: never over a project file or through its links
            refuse_output_into_project(output, project)
    # while one project is assessed, no other listed project's programs run either (its
    # `.venv/bin` on PATH: twenty-second re-run); nor does gpuport import from any of them
    subproc.avoid_always(paths)
    subproc.forget_imports_from(paths)
    subproc.neutral_tempdir(paths)
    show = not no_progress and sys.stderr.isatty()
    status = err_console.status("gpuport assess: portfolio") if show else nullcontext()
    with status as live:

        def progress(done: int, total: int) -> None:
            if live is not None:
                live.update(f"gpuport assess: {done}/{total} projects")

        result = assess_many(paths, flags, progress=progress)
    if kind == "terminal" and output is None:
        portfolio_render.render_terminal(result, Console())
    else:
        if kind == "json":
            from gpuport.render.text import json_safe

            body = json_safe(result.model_dump_json(indent=2) + "\n")
        elif kind == "markdown":
            body = portfolio_render.render_markdown(result)
        elif kind == "html":
            body = portfolio_render.render_html(result)
        else:
            import io

            buf = Console(record=True, width=120, file=io.StringIO(), force_terminal=False)
            portfolio_render.render_terminal(result, buf)
            body = buf.export_text()
        if output is None:
            sys.stdout.write(body)
            sys.stdout.flush()
        else:
            write_atomic(output, body)
        err_console.print(
            f"gpuport assess: portfolio of {portfolio_render.summary(result)}"
            + (f"; written to {output}" if output else ""),
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    failed = [r for r in result.projects if r.error is not None]
    if failed:
        raise GpuportError(
            f"{len(failed)} of {len(result.projects)} project(s) could not be assessed "
            f"(first: {failed[0].project}: {failed[0].error}); the others are reported"
        )
    worst = result.worst
    if worst is not None and worst.rank >= FAIL_ON[fail_on]:
        raise typer.Exit(EXIT_FINDINGS)


def render_text(result: Any, kind: str) -> str:
    """The report body in ``kind`` (json, markdown, html)."""
    if kind == "json":
        from gpuport.render.text import json_safe

        return json_safe(str(result.model_dump_json(indent=2)) + "\n")
    if kind == "markdown":
        from gpuport.render import assess_markdown

        return assess_markdown.render(result)
    from gpuport.render import assess_html

    return assess_html.render(result)


def _deliver(result: Any, kind: str, output: Path | None) -> None:
    from rich.console import Console

    from gpuport.render import assess_terminal

    if kind == "terminal" and output is None:
        assess_terminal.render(result, Console())
        return
    if kind == "terminal":
        import io

        buf = Console(record=True, width=120, file=io.StringIO(), force_terminal=False)
        assess_terminal.render(result, buf)
        body = buf.export_text()
    else:
        body = render_text(result, kind)
    if output is None:
        sys.stdout.write(body)
        sys.stdout.flush()
        err_console.print(
            f"gpuport assess: {result.verdict.label} ({result.effort.days()})",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        return
    write_atomic(output, body)
    err_console.print(  # one line: the report itself is in the file
        f"gpuport assess: {result.verdict.label} ({result.effort.days()}); "
        f"report written to {output}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )


def register(app: typer.Typer) -> None:
    app.command("assess")(assess)
