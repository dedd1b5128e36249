"""The non-CUDA files of a tree, which ``gpuport hipify SRC -o OUT`` copies so OUT is complete.

Same skip rules as :func:`gpuport.scan.project.files.walk`: ``.gitignore`` files from the root down,
hidden, vendored, installed, build and virtual-environment folders are left out, symlinked
folders are not followed. Only regular files (not symlinks) are listed; every file the scanner
would classify as a CUDA/C++ source is left to the translator.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gpuport.scan.project.files import Skip, classify, iter_entries
from gpuport.scan.rules import FileKind

__all__ = ["other_files"]


def other_files(root: Path) -> Iterator[str]:
    """Relative paths (forward slashes) of the regular, non-CUDA/C++ files under ``root``;
    never a ``.git`` file (``gitdir: gitmeta`` beside a folder whose config sets
    ``core.fsmonitor`` made any git command in the output folder run the project's command;
    fifth review)."""
    root_name = root.resolve().name
    for item in iter_entries(root):
        if isinstance(item, Skip):
            continue
        rel, entry = item
        if rel.rsplit("/", 1)[-1] == ".git":
            continue
        try:
            regular = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if regular and classify(rel if "/" in rel else f"{root_name}/{rel}") is not FileKind.NATIVE:
            yield rel
