"""The ``gpuport`` command: registers subcommands and turns errors into exit codes."""

from __future__ import annotations

import os
import sys
import traceback

import typer
from rich.markup import escape

from gpuport import __version__
from gpuport.cli.common import (
    EXIT_BUG,
    EXIT_USAGE,
    ClosedPipeSafe,
    err_console,
    print_result_warnings,
)
from gpuport.models import GpuportError
from gpuport.render.text import clean_line

app = typer.Typer(
    name="gpuport",
    help=(
        "Will your project run on AMD ROCm, what blocks it, how fast and at what cost: "
        "answers for your own code and hardware."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuport {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """gpuport: CUDA to ROCm readiness, translation, measurement and cost."""


def _register() -> None:
    from gpuport.cli import (
        assess_cmd,
        bench_cmd,
        compare_cmd,
        cost_cmd,
        doctor_cmd,
        hipify_cmd,
        rules_cmd,
        scan_cmd,
        validate_cmd,
    )

    assess_cmd.register(app)  # the main job first in --help
    scan_cmd.register(app)
    rules_cmd.register(app)
    hipify_cmd.register(app)
    bench_cmd.register(app)
    compare_cmd.register(app)
    validate_cmd.register(app)
    cost_cmd.register(app)
    doctor_cmd.register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors with exit 2 (input) or 3 (environment), never a traceback.

    A reader that goes away (``gpuport scan . | head``) is not an error: the rest of the
    output is dropped quietly and the exit status is the command's own (1 only when
    ``--fail-on`` tripped), not the exit 1 click gives a broken pipe.
    """
    real_stdout = sys.stdout
    sys.stdout = ClosedPipeSafe(real_stdout)
    try:
        _run(argv)
    finally:
        if isinstance(sys.stdout, ClosedPipeSafe):
            sys.stdout.flush()
            sys.stdout = real_stdout


def _run(argv: list[str] | None) -> None:
    print_result_warnings()
    try:
        code = app(args=argv, prog_name="gpuport", standalone_mode=False)
    except typer.TyperException as exc:
        # Click's own usage errors (unknown option, missing argument, bad choice): one line
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError":  # plain `gpuport`: the help itself
            err_console.print(exc.format_message(), highlight=False, markup=False)
            sys.exit(exc.exit_code)
        where = ctx.command_path if ctx is not None else "gpuport"
        err_console.print(
            f"[bold red]{escape(where)}: error:[/] {escape(clean_line(exc.format_message()))} "
            f"(see {escape(where)} --help)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("gpuport: interrupted")
        sys.exit(130)
    except GpuportError as exc:
        # messages quote file names, run labels, tensor names: one line, no escape sequences
        err_console.print(
            f"[bold red]gpuport: error:[/] {escape(clean_line(str(exc)))}",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("gpuport: interrupted")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("GPUPORT_DEBUG"):
            traceback.print_exc()
            sys.exit(EXIT_BUG)
        err_console.print(
            f"[bold red]gpuport: internal error:[/] {type(exc).__name__}: "
            f"{escape(clean_line(str(exc)))} "
            "(set GPUPORT_DEBUG=1 for a traceback and please report it)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["EXIT_USAGE", "app", "main"]
