"""The two errors the CLI turns into one line and an exit code.

Apart from :mod:`gpuport.models` so that modules which only raise them (file I/O, the
command-line front) need not import pydantic: every ``gpuport`` process starts with them
(start-up, issue 18). :mod:`gpuport.models` re-exports both.
"""

from __future__ import annotations


class GpuportError(Exception):
    """A problem with the user's input: shown as one line, exit code 2."""

    exit_code = 2


class EnvironmentProblem(GpuportError):
    """The machine lacks something the command needs (a GPU, a tool): exit code 3."""

    exit_code = 3
