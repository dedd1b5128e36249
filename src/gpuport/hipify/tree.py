"""The non-CUDA files of a tree, which ``gpuport hipify SRC -o OUT`` copies so OUT is complete.

Same skip rules as :func:`gpuport.scan.files.walk`: ``.gitignore`` files from the root down,
hidden, vendored, installed, build and virtual-environment folders are left out, symlinked
folders are not followed. Only regular files (not symlinks) are listed; every file the scanner
would classify as a CUDA/C++ source is left to the translator.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gpuport.scan.files import _dir_skip_reason, _gitignore, _ignored, classify, safe_name
from gpuport.scan.rules import FileKind

__all__ = ["other_files"]


def other_files(root: Path) -> Iterator[str]:
    """Relative paths (forward slashes) of the regular, non-CUDA/C++ files under ``root``."""
    root_name = root.resolve().name
    stack: list[tuple[Path, tuple[tuple[str, object], ...]]] = [(root, ())]
    while stack:
        current, inherited = stack.pop()
        here = current.relative_to(root).as_posix()
        here = "" if here == "." else here
        own = _gitignore(current)
        ignores = (*inherited, (here, own)) if own is not None else inherited
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[Path] = []
        for entry in entries:
            rel = f"{here}/{entry.name}" if here else entry.name
            if safe_name(rel) != rel:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if _dir_skip_reason(Path(entry.path), False) is None and not _ignored(
                    rel,
                    True,
                    ignores,  # type: ignore[arg-type]
                ):
                    subdirs.append(Path(entry.path))
                continue
            if not is_file or _ignored(rel, False, ignores):  # type: ignore[arg-type]
                continue
            kind = classify(rel if "/" in rel else f"{root_name}/{rel}")
            if kind is not FileKind.NATIVE:
                yield rel
        stack.extend((d, ignores) for d in reversed(subdirs))
