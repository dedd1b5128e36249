"""The ``gpuport`` command: registers subcommands and turns errors into exit codes."""

from __future__ import annotations

import sys
from typing import Any

import typer

from gpuport import __version__
from gpuport.cli.common import EXIT_USAGE, escape, stderr_console
from gpuport.cli.guard import run_guarded
from gpuport.render.text import clean_line


def _help_types() -> None:
    """Option types in ``--help`` as a user reads them. typer 0.2x prints a value type after
    every option, ``<bool>`` even after a plain flag that takes no value (``--verbose
    <bool>``, ``--help <bool>``) and ``<list[str]>`` after a repeatable option or argument: a
    flag shows no type, a repeatable one ``<str>...``. Other typer versions keep theirs."""
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - a typer without them prints its own way
        return
    for cls in (TyperOption, TyperArgument):
        shown = getattr(cls, "display_type_rich", None)
        if shown is None or getattr(shown, "_gpuport", False):
            continue
        cls.display_type_rich = _plain_types(shown)  # type: ignore[method-assign]


def _plain_types(shown: Any) -> Any:
    def display(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        text = shown(self, ctx)
        if isinstance(text, str) and text.startswith("<list[") and "]>" in text:
            return f"<{text[6 : text.index(']>')]}>..."
        return text  # type: ignore[no-any-return]

    display._gpuport = True  # type: ignore[attr-defined]
    return display


_help_types()

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
    "port",
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
    _unwrap_help(app)


def _unwrap_help(typer_app: typer.Typer) -> None:
    """A command's help as paragraphs the terminal wraps. typer 0.2x keeps the line breaks
    of a docstring's later paragraphs, so at 80 columns each source line wrapped again into a
    long and a one-word line; a paragraph's lines are joined (a blank line still parts them)."""
    import inspect

    for info in typer_app.registered_commands:
        doc = info.help if info.help is not None else inspect.getdoc(info.callback)
        if doc and "\b" not in doc:
            info.help = "\n\n".join(" ".join(p.split("\n")) for p in doc.split("\n\n"))
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _unwrap_help(group.typer_instance)


_registered: list[str] = []


_register()


def main(argv: list[str] | None = None) -> None:
    """The typer application's entry point; ends as :func:`gpuport.cli.guard.run_guarded` says
    (one-line errors with exit 2 or 3, never a traceback). The process entry point is
    :func:`gpuport.cli.entry.main`, which comes here for everything but a plain hipify."""
    if argv is not None:
        _register(argv)  # a command other than the one this process was started for
    run_guarded(lambda: _run(argv))


def _run(argv: list[str] | None) -> object:
    try:
        return app(args=argv, prog_name="gpuport", standalone_mode=False)
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


__all__ = ["EXIT_USAGE", "app", "main"]
