"""The ``gpuport`` command: registers subcommands and turns errors into exit codes."""

from __future__ import annotations

import os
import sys
import traceback

import typer

from gpuport import __version__
from gpuport.cli.common import (
    EXIT_BUG,
    EXIT_USAGE,
    ClosedPipeSafe,
    escape,
    print_result_warnings,
    stderr_console,
)
from gpuport.errors import GpuportError
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


_COMMANDS = (  # --help order: the main job first
    "assess",
    "scan",
    "rules",
    "hipify",
    "bench",
    "compare",
    "validate",
    "cost",
    "doctor",
)


def _register(argv: list[str] | None = None) -> None:
    """Register the subcommands. When the process was started for one of them (the first
    word of the command line), only that one is imported: start-up cost is paid for the
    command that runs (``gpuport hipify FILE`` in a loop over folders, issue 18)."""
    import importlib

    words = sys.argv[1:] if argv is None else argv
    first = words[0] if words else None
    names = [first] if first in _COMMANDS else list(_COMMANDS)
    for name in names:
        if name not in _registered:
            importlib.import_module(f"gpuport.cli.{name}_cmd").register(app)
            _registered.append(name)


_registered: list[str] = []


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors with exit 2 (input) or 3 (environment), never a traceback.

    A reader that goes away (``gpuport scan . | head``) is not an error: the rest of the
    output is dropped quietly and the exit status is the command's own (1 only when
    ``--fail-on`` tripped), not the exit 1 click gives a broken pipe.
    """
    if argv is not None:
        _register(argv)  # a command other than the one this process was started for
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
            stderr_console().print(exc.format_message(), highlight=False, markup=False)
            sys.exit(exc.exit_code)
        where = ctx.command_path if ctx is not None else "gpuport"
        stderr_console().print(
            f"[bold red]{escape(where)}: error:[/] {escape(clean_line(exc.format_message()))} "
            f"(see {escape(where)} --help)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exc.exit_code)
    except typer.Abort:
        stderr_console().print("gpuport: interrupted")
        sys.exit(130)
    except GpuportError as exc:
        # messages quote file names, run labels, tensor names: one line, no escape sequences
        stderr_console().print(
            f"[bold red]gpuport: error:[/] {escape(clean_line(str(exc)))}",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        stderr_console().print("gpuport: interrupted")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("GPUPORT_DEBUG"):
            traceback.print_exc()
            sys.exit(EXIT_BUG)
        stderr_console().print(
            f"[bold red]gpuport: internal error:[/] {type(exc).__name__}: "
            f"{escape(clean_line(str(exc)))} "
            "(set GPUPORT_DEBUG=1 for a traceback and please report it)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_BUG)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["EXIT_USAGE", "app", "main"]
