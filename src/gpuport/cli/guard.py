"""How every ``gpuport`` command ends: one-line errors with exit 2 (input) or 3 (environment),
never a traceback; a reader that goes away is not an error.

Shared by the typer application (:mod:`gpuport.cli.app`) and the typer-free start of a plain
``gpuport hipify`` (:mod:`gpuport.cli.entry`), so both end alike. No typer here.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn

from gpuport.cli.common import (
    EXIT_BUG,
    ClosedPipeSafe,
    escape,
    print_result_warnings,
    stderr_console,
)
from gpuport.errors import GpuportError
from gpuport.render.text import clean_line


def run_guarded(command: Callable[[], object]) -> NoReturn:
    """Run ``command`` and exit with its code (an int; anything else is 0).

    A reader that goes away (``gpuport scan . | head``) is not an error: the rest of the
    output is dropped quietly and the exit status is the command's own (1 only when
    ``--fail-on`` tripped), not the exit 1 click gives a broken pipe.
    """
    real_stdout = sys.stdout
    sys.stdout = ClosedPipeSafe(real_stdout)
    try:
        print_result_warnings()
        code = _call(command)
    finally:
        if isinstance(sys.stdout, ClosedPipeSafe):
            sys.stdout.flush()
            sys.stdout = real_stdout
    sys.exit(code if isinstance(code, int) else 0)


_MOST_SAID = 300


def _call(command: Callable[[], object]) -> object:
    try:
        return command()
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
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            _bug(exc)
        # a path given on the command line (or in a list file) with a name too long for the
        # file system: bad input, whichever check met it first (twenty-second re-run)
        name = clean_line(str(exc.filename or ""))[:_MOST_SAID]
        stderr_console().print(
            f"[bold red]gpuport: error:[/] {escape(name)}: file name too long",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(2)
    except Exception as exc:
        _bug(exc)


def _bug(exc: Exception) -> NoReturn:
    """Say an unexpected exception on one line (a traceback with GPUPORT_DEBUG) and exit 4."""
    if os.environ.get("GPUPORT_DEBUG"):
        traceback.print_exc()
        sys.exit(EXIT_BUG)
    # clipped: a bug's message may quote project text of any size (a regex of 12 MB once)
    said = clean_line(str(exc))
    said = said if len(said) <= _MOST_SAID else said[:_MOST_SAID] + "…"
    stderr_console().print(
        f"[bold red]gpuport: internal error:[/] {type(exc).__name__}: "
        f"{escape(said)} "
        "(set GPUPORT_DEBUG=1 for a traceback and please report it)",
        highlight=False,
        soft_wrap=True,
    )
    sys.exit(EXIT_BUG)
