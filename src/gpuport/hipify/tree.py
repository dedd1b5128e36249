"""The non-CUDA files of a tree, which ``gpuport hipify SRC -o OUT`` copies so OUT is complete.

Same skip rules as :func:`gpuport.scan.project.files.walk`: ``.gitignore`` files from the root down,
hidden, vendored, installed, build and virtual-environment folders are left out, symlinked
folders are not followed. Only regular files (not symlinks) are listed; every file the scanner
would classify as a CUDA/C++ source is left to the translator.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gpuport.scan.finding import SkippedFile
from gpuport.scan.project.files import Skip, classify, iter_entries
from gpuport.scan.rules import FileKind

__all__ = ["other_files", "uncopied"]


#: the files that make a folder a git directory beside its ``objects/`` and ``refs/``
_GIT_DIR_FILES = frozenset({"HEAD", "config", "commondir", "gitdir"})


def _git_dir_file(root: Path, rel: str) -> bool:
    """Whether ``rel`` would make its copy's folder a git directory: ``HEAD`` or ``config``
    beside anything named ``objects`` or ``refs``. Copied, the output folder (which has no
    ``.git`` of its own) was a bare repository to git, and a ``core.fsmonitor`` in that config
    ran on the next ``git status`` there (twenty-second re-run)."""
    folder, _, name = rel.rpartition("/")
    if name not in _GIT_DIR_FILES:
        return False
    if name in ("commondir", "gitdir"):
        # git metadata only; a `commondir` makes git look for objects/ and refs/ in the
        # folder it names, anywhere (twenty-eighth re-run F5: `src/HEAD` + `src/commondir`
        # -> `../cdir`, a bare repository whose config set the pager)
        return True
    at = root / folder if folder else root
    # any entry of those names: git only asks that `objects` and `refs` be executable, which
    # an executable regular file is (twenty-fifth re-run F3)
    return any(os.path.lexists(at / part) for part in ("objects", "refs", "commondir"))


def uncopied(root: Path) -> list[SkippedFile]:
    """The files :func:`other_files` leaves out because they would make a git directory."""
    return [
        SkippedFile(
            path=item[0],
            reason="not copied: a git directory's file (commondir, gitdir, or HEAD/config "
            "beside objects/, refs/ or commondir): it would make the output folder a git "
            "repository (whose config could run a command)",
        )
        for item in iter_entries(root)
        if not isinstance(item, Skip) and _git_dir_file(root, item[0])
    ]


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
        if rel.rsplit("/", 1)[-1] == ".git" or _git_dir_file(root, rel):
            continue
        try:
            regular = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if regular and classify(rel if "/" in rel else f"{root_name}/{rel}") is not FileKind.NATIVE:
            yield rel
