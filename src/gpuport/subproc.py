"""How gpuport starts another program: a sanitized PATH and a neutral working folder.

Every external program gpuport runs (``hipcc``, doctor's probes, the collectives workers) is
looked up and started with these, never with the caller's PATH and folder as they are: a
relative PATH entry (``.``, ``bin``, an empty entry) or an entry inside the project being
scanned would let the project put its own ``python3`` or ``nvidia-smi`` in front (Debian's
``hipcc`` is a Perl script that starts ``python3`` through PATH), and the caller's folder is
where a project's ``torch.py`` or ``sitecustomize.py`` would be found.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["NEUTRAL_CWD", "safe_env", "safe_path", "which"]

#: The working folder of every program gpuport starts (unless it runs in its own temp folder).
NEUTRAL_CWD = "/"


def _inside(entry: str, folders: list[str]) -> bool:
    real = os.path.realpath(entry)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def safe_path(value: str | None = None, *, avoid: Iterable[Path | str] = ()) -> str:
    """``value`` (default: this process's PATH) with only absolute entries that are not inside
    any of the folders in ``avoid`` (the project being scanned or translated)."""
    raw = os.environ.get("PATH", os.defpath) if value is None else value
    folders = [os.path.realpath(f) for f in avoid]
    kept: list[str] = []
    for entry in raw.split(os.pathsep):
        if not entry or not Path(entry).is_absolute() or entry in kept:
            continue
        if folders and _inside(entry, folders):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def safe_env(
    extra: Mapping[str, str] | None = None,
    *,
    avoid: Iterable[Path | str] = (),
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) with a sanitized PATH, then
    ``extra``."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = safe_path(env.get("PATH", os.defpath), avoid=avoid)
    env.update(extra or {})
    return env


def which(name: str, *, avoid: Iterable[Path | str] = (), path: str | None = None) -> str | None:
    """``name`` looked up on the sanitized PATH (see :func:`safe_path`): an absolute path or
    None."""
    search = safe_path(path, avoid=avoid)
    return shutil.which(name, path=search) if search else None
