"""An NVIDIA-only package beside its AMD replacement in the same dependency file (issue 24,
ninth round): ``nvidia-ml-py`` with ``amdsmi``. Both install anywhere; a project that depends
on both chooses one by vendor at run time, so GP101 says so and is minor."""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.knowledge import PackageInfo
from gpuport.scan.rules.base import FileContext

__all__ = ["twin_listed", "twin_note"]


def twin_listed(ctx: FileContext, pkg: PackageInfo) -> tuple[str, int] | None:
    """The AMD replacement of an NVIDIA-only package (``amdsmi`` for ``nvidia-ml-py``) and its
    line, when the same dependency file lists it too: both install anywhere, and a project
    that depends on both picks one by vendor at run time (issue 24, ninth round)."""
    twin = pkg.route.replacement if pkg.route.kind == "replacement" else None
    if not twin or twin not in ctx.text:
        return None
    listed = textre.search(
        rf"(?:^|[\s\"',\[])({re.escape(twin)})(?:[\s\"',\];<>=!~\[]|$)", ctx.text, re.M
    )
    if listed is None:
        return None
    return twin, textre.line_finder(ctx.text)(listed.start(1))


def twin_note(ctx: FileContext, pkg: PackageInfo) -> str:
    """What GP101's message adds when the replacement is listed too ("" when it is not)."""
    twin = twin_listed(ctx, pkg)
    if twin is None:
        return ""
    return (
        f" Its AMD replacement {twin[0]} is a dependency too (line {twin[1]}): the project "
        "can choose by vendor at run time."
    )
