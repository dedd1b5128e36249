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

from gpuport import fileio
from gpuport.models import GpuportError
from gpuport.pathwalk import first_link_in
from gpuport.scan.finding import SkippedFile
from gpuport.scan.project.files import Skip, classify, iter_entries
from gpuport.scan.rules import FileKind

__all__ = ["check_out_dir", "other_files", "uncopied"]


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


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_out_dir(path: Path, out_dir: Path) -> None:
    """An output folder is a real folder outside the input that does not hold it: a link
    (``proj/hip_out -> ../home``, shipped by the project) or a folder above the input had
    the whole tree, dotfiles too, written over the user's files (the project's ``.bashrc``
    over ``~/.bashrc``; fourth review)."""
    src = path.resolve()
    dst = out_dir.resolve()
    here = Path(os.path.abspath(path if src.is_dir() else path.parent))  # noqa: PTH100
    out = Path(os.path.abspath(out_dir))  # noqa: PTH100 - the links on the way are the point
    # each folder from the project down (fifth review), else the folder itself
    link = fileio.link_below(out, here) if out.is_relative_to(here) else None
    link = link or (out if out.is_symlink() else None)
    # the walk as the kernel makes it: ``p/sub/../out`` follows ``sub`` before ``..``
    link = link or first_link_in(out_dir / "x", Path(os.path.realpath(here)))
    if link is not None:
        raise GpuportError(
            f"output folder {out_dir} goes through a symbolic link ({link}); name the "
            "folder it leads to if you mean it"
        )
    if dst.exists() and not dst.is_dir():
        raise GpuportError(f"output folder {out_dir} is a file")

    if src.is_dir() and _inside(dst, src):
        raise GpuportError(
            f"output folder {out_dir} is inside the input {path}; choose a folder outside it"
        )
    if src.is_dir() and src.is_relative_to(dst):
        raise GpuportError(
            f"output folder {out_dir} holds the input {path}; choose a folder beside it"
        )
    if src.is_file() and dst == src.parent:
        raise GpuportError(
            f"output folder {out_dir} is the input's own folder; it would overwrite {path.name}"
        )
