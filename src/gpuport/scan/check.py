"""Run the rules for one file's text: the scanner's unit of work, apart from the engine.

``gpuport hipify`` runs the native rules on each translation through :func:`check_text`;
keeping it here, without the engine's walk, project view, routes and verdict, keeps that
command's start-up small (issue 18). :mod:`gpuport.scan.engine` re-exports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gpuport.scan.project.own_names import OwnNames
from gpuport.scan.rules import FileContext, FileKind, checkers_for

if TYPE_CHECKING:
    from gpuport.knowledge import PackageDB, TargetInfo
    from gpuport.scan.finding import Finding
    from gpuport.scan.project.cxx_facts import CxxFacts


def check_text(
    rel: str,
    text: str,
    kind: FileKind,
    target: TargetInfo,
    packages: PackageDB,
    *,
    path: Path | None = None,
    select: frozenset[str] | None = None,
    ignore: frozenset[str] = frozenset(),
    root: Path | None = None,
    own: OwnNames | None = None,
    facts: CxxFacts | None = None,
) -> tuple[list[Finding], str | None]:
    """Run every checker for ``kind`` on ``text``; returns findings and a skip reason."""
    ctx = FileContext(
        rel=rel,
        path=path or Path(rel),
        kind=kind,
        text=text,
        target=target,
        packages=packages,
        select=select,
        ignore=ignore,
        root=root,
        own=own or OwnNames(),
        facts=facts,
    )
    for check in checkers_for(kind):
        check(ctx)
    return ctx.findings, ctx.skip_reason
