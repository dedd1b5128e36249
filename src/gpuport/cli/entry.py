"""The process entry point (``gpuport``, ``python -m gpuport``).

``gpuport hipify`` is called once per folder or file by a shell loop over a project, so its
start-up counts (issue 18: a call's overhead ≤ 0.25 s). Importing typer and building its
command costs about 0.08 s of that, so a hipify command line made only of the options
``gpuport hipify --help`` lists, each written plainly, is parsed here and run without typer.
Anything else (``--help``, an unknown or repeated option, a missing value, an option written
as ``-oDIR``, a value that starts with ``-``, ``--``) goes to the typer application, which
parses it and gives its own messages: this parser only ever accepts a subset of what typer
accepts, and gives the command what typer would (``tests/cli/test_entry.py`` compares them
option by option).
"""

import sys

# Nothing past the interpreter's own modules before clean_start (startup.py): no
# `from __future__` and no `typing` here, in startup.py or in markers.py, which a PYTHONPATH
# into the project would otherwise supply (thirty-second re-run F1)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["hipify_arguments", "main"]


def main(argv: list[str] | None = None) -> None:
    if argv is None:  # the process's own start: undo what a project's environment set for it
        from gpuport.startup import clean_start

        clean_start()
        # a report is never lost to an output encoding that cannot show a character
        # (PYTHONIOENCODING=ascii, a Latin-1 locale: twenty-sixth re-run F9)
        for stream in (sys.stdout, sys.stderr):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                try:
                    reconfigure(errors="backslashreplace")
                except (ValueError, OSError):
                    continue
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] == ["hipify"]:
        kwargs = hipify_arguments(words[1:])
        if kwargs is not None:
            from gpuport.cli.guard import run_guarded
            from gpuport.cli.hipify_run import run_hipify

            run_guarded(lambda: run_hipify(**kwargs))
    from gpuport.cli.app import main as typer_main

    typer_main(argv)


# gpuport hipify's options: flag -> (keyword of run_hipify, kind). ``flag``: a switch;
# ``str``, ``path``: one value; ``format``: one of the report formats. Must name exactly the
# options of the typer command (gpuport.cli.hipify_cmd), which a test checks.
HIPIFY_OPTIONS: dict[str, tuple[str, str]] = {
    "--out-dir": ("out_dir", "path"),
    "-o": ("out_dir", "path"),
    "--hip-version": ("hip_version", "str"),
    "--target": ("target", "str"),
    "-t": ("target", "str"),
    "--check": ("check", "flag"),
    "--offload-arch": ("offload_arch", "str"),
    "--check-include": ("check_include", "str"),
    "--stats": ("stats", "flag"),
    "--format": ("fmt", "format"),
    "-f": ("fmt", "format"),
    "--output": ("output", "path"),
    "--annotate": ("annotate", "flag"),
    "--diff": ("diff", "flag"),
    "--in-place": ("in_place", "flag"),
    "--launch-syntax": ("launch_syntax", "str"),
    "--build-files": ("build_files", "flag"),
    "--wave64": ("wave64", "str"),
    "--unsafe-fixes": ("unsafe_fixes", "flag"),
    "--fail-on": ("fail_on", "str"),
}


class _NotPlain(Exception):
    """The command line is not one this parser takes: typer parses it."""


def hipify_arguments(words: list[str]) -> "dict[str, Any] | None":
    """The keyword arguments of :func:`~gpuport.cli.hipify_run.run_hipify` for the words after
    ``hipify``, or None where typer must parse them (see the module's text)."""
    try:
        return _parse(words)
    except _NotPlain:
        return None


def _parse(words: list[str]) -> "dict[str, Any]":
    kwargs: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        flag, eq, attached = word.partition("=")
        if flag not in HIPIFY_OPTIONS or (eq and not flag.startswith("--")):
            raise _NotPlain
        name, kind = HIPIFY_OPTIONS[flag]
        if name in kwargs:  # given twice: typer's rule (the last one) is not repeated here
            raise _NotPlain
        if kind == "flag":
            if eq:
                raise _NotPlain
            kwargs[name] = True
            continue
        if eq:
            value = attached
        elif rest:
            value = rest.pop(0)
        else:
            raise _NotPlain
        kwargs[name] = _value(kind, value)
    if len(positional) != 1 or not positional[0]:
        raise _NotPlain
    from pathlib import Path

    kwargs["path"] = Path(positional[0])
    return kwargs


def _value(kind: str, value: str) -> "Any":
    if not value or value.startswith("-"):
        raise _NotPlain
    if kind == "path":
        from pathlib import Path

        return Path(value)
    if kind == "format":
        from gpuport.render.interface import OutputFormat, ReportFormat

        if value not in {f.value for f in ReportFormat}:
            raise _NotPlain
        return OutputFormat(value)
    return value
