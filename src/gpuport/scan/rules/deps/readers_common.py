"""What the dependency-manifest readers share: the :class:`Entry` they return and pip's options.

:class:`Entry` is one item a reader found (a requirement string, an index URL,
a CUDA-only conda package or a line of a conda ``pip:`` section), with its line.
The pip option table is read by the requirements-file checker in
:mod:`gpuport.scan.rules.deps.checker` for requirements files and conda ``pip:`` lines alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Entry:
    kind: Literal["req", "index", "conda", "pip"]
    value: str
    line: int
    partial: bool = False  # built from an f-string: some parts are unknown ("X")
    note: str = ""  # why the entry is no default install's (an explicit uv index of an extra)


# --- pip options (shared by requirements files and conda ``pip:`` sections) ---------

PIP_OPTIONS = {
    "-r": "include",
    "--requirement": "include",
    "-c": "include",
    "--constraint": "include",
    "-i": "index",
    "--index-url": "index",
    "--extra-index-url": "index",
    "-f": "index",
    "--find-links": "index",
    "-e": "editable",
    "--editable": "editable",
    "--trusted-host": "skip",
    "--hash": "skip",
    "--config-settings": "skip",
    "--global-option": "skip",
    "--install-option": "skip",
    "--use-feature": "skip",
}


def split_pip_option(text: str) -> tuple[str, str] | None:
    """``--opt value``, ``--opt=value`` or ``-ovalue`` as (option, value); None if unknown."""
    for opt in PIP_OPTIONS:
        if text == opt or text.startswith(opt + " ") or text.startswith(opt + "="):
            return opt, text[len(opt) :].lstrip(" =").strip()
        if len(opt) == 2 and text.startswith(opt) and not text.startswith(opt + "-"):
            return opt, text[2:].strip()
    return None
