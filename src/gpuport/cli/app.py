"""The ``gpuport`` command: registers subcommands and turns errors into exit codes."""

from __future__ import annotations

import os
import sys
import traceback

import typer
from rich.markup import escape

from gpuport import __version__
from gpuport.cli.common import EXIT_BUG, EXIT_USAGE, err_console
from gpuport.models import GpuportError

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
    """Entry point: one-line errors with exit 2 (input) or 3 (environment), never a traceback."""
    if argv is not None:
        _register(argv)  # a command other than the one this process was started for
    try:
        app(args=argv, prog_name="gpuport", standalone_mode=True)
    except GpuportError as exc:
        err_console.print(
            f"[bold red]gpuport: error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
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
            f"[bold red]gpuport: internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
            "(set GPUPORT_DEBUG=1 for a traceback and please report it)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_BUG)


__all__ = ["EXIT_USAGE", "app", "main"]
