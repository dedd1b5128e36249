"""What git tracks in the scanned tree, read from ``.git/index`` without running git.

``.gitignore`` hides only *untracked* files: a tracked file stays in the project whatever the
ignore rules say (DeepSpeed's ``.gitignore`` has ``*.cuh`` for HIP build output, and 15
tracked ``.cuh`` kernels are part of the project). When the tree is a git work tree, the scan
reads the index with dulwich (a pure reader: no hooks, no config, no ``core.fsmonitor``;
starting ``git`` inside a scanned tree would run commands its config names) and scans tracked
files even where a ``.gitignore`` matches them.

Git submodules (gitlink entries of the index, ``path =`` lines of ``.gitmodules``) are other
people's repositories: they are vendored code whatever the folder is called. A folder named
``submodules`` is *not* vendored on its name alone (Megatron-LM's first-party
``megatron/core/models/mimo/submodules/``).
"""

from __future__ import annotations

import io
import os
import re
import stat
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import fileio, textre

_GITMODULE_PATH = textre.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.M)
MAX_GITMODULES = 1_000_000
#: An index larger than this is not read (torch's is ~2 MB, the Linux kernel's ~10 MB).
#: Each entry is a Python object or three once read: a 128 MB index of 1.79 M short paths
#: cost the scan 1.28 GB (twenty-fifth re-run, F11), hence 48 MB and, read from the header
#: before anything else, at most :data:`MAX_INDEX_ENTRIES` entries (the Linux kernel has
#: ~90,000 files). A larger index is not read and the scan says so.
MAX_INDEX = 48 * 1024 * 1024
MAX_INDEX_ENTRIES = 300_000


class Folders:
    """The folders that hold a tracked file: ``"a/b" in folders`` when a tracked path starts
    with ``a/b/``, answered from the sorted paths. (A set of every folder of every path grew
    with the square of a path's depth: 400 KB of deep paths in an index took 400 MB.)"""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._paths = sorted(paths)

    def __contains__(self, folder: object) -> bool:
        if not isinstance(folder, str):
            return False
        key = folder + "/"
        i = bisect_left(self._paths, key)
        return i < len(self._paths) and self._paths[i].startswith(key)


@dataclass(frozen=True)
class GitFacts:
    """Paths relative to the scan root (POSIX, no leading ``./``)."""

    tracked: frozenset[str] = frozenset()
    tracked_dirs: Folders = field(default_factory=Folders)
    submodules: frozenset[str] = frozenset()
    has_index: bool = False
    problem: str | None = None  # why the index could not be read, when it could not


def _git_dir(top: Path) -> tuple[Path | None, str | None]:
    """The git directory of the work tree at ``top`` (a ``.git`` folder, or the folder a
    ``gitdir:`` file names), and why it is not used when it is not.

    A ``gitdir:`` file is followed only into ``top`` itself or into the ``.git`` folder of a
    work tree that holds ``top`` (a submodule's ``../.git/modules/x``): a ``.git`` file in a
    tarball must not make gpuport read another repository's index.
    """
    dot = top / ".git"
    if dot.is_symlink():
        return None, "`.git` is a symbolic link; not followed"
    if dot.is_dir():
        return dot, None
    if not dot.is_file():
        return None, None
    text = fileio.read_text_or_none(dot, limit=4096, root=top)
    line = (text or "").strip()
    if not line.startswith("gitdir:"):
        return None, None
    target = Path(line[len("gitdir:") :].strip())
    target = Path(os.path.realpath(target if target.is_absolute() else top / target))
    homes = [top.resolve(), *(p / ".git" for p in top.resolve().parents)]
    if not any(target == h or h in target.parents for h in homes):
        return None, "`.git` names a git folder outside the project; not followed"
    return (target, None) if target.is_dir() else (None, None)


def _work_tree(root: Path) -> Path | None:
    """The work tree that holds ``root``: root itself or the nearest parent with ``.git``."""
    here = root.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def git_facts(root: Path) -> GitFacts:
    """The tracked files and submodules under ``root``; empty facts when it is not in git."""
    top = _work_tree(root)
    if top is None:  # a tarball or a copy: .gitmodules may still be there
        return GitFacts(submodules=frozenset(_gitmodules(root, "")))
    prefix = root.resolve().relative_to(top).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    submodules = set(_gitmodules(top, prefix))
    git_dir, problem = _git_dir(top)
    if git_dir is None:
        return GitFacts(submodules=frozenset(submodules), problem=problem)
    index_path = git_dir / "index"
    if not os.path.lexists(index_path):
        return GitFacts(submodules=frozenset(submodules))
    try:  # the file layer: a regular file, bounded, no link out of the git folder
        data = fileio.read_bytes(index_path, limit=MAX_INDEX, root=git_dir)
    except fileio.ReadRefused as exc:
        return GitFacts(submodules=frozenset(submodules), problem=exc.reason)
    count = int.from_bytes(data[8:12], "big") if data[:4] == b"DIRC" else 0
    if count > MAX_INDEX_ENTRIES:
        why = f"not read: {count:,} entries, more than the {MAX_INDEX_ENTRIES:,} gpuport reads"
        return GitFacts(submodules=frozenset(submodules), problem=why)
    too_long = _v4_path_too_long(data)
    if too_long:
        return GitFacts(submodules=frozenset(submodules), problem=too_long)
    try:
        from dulwich.index import read_index_dict

        entries = [(p, _mode(e)) for p, e in read_index_dict(io.BytesIO(data)).items()]
    except Exception as exc:  # a corrupt or future-format index must not abort the scan
        # the type only: dulwich's message can quote the file's bytes
        why = f"not an index gpuport can read ({type(exc).__name__})"
        return GitFacts(submodules=frozenset(submodules), problem=why)
    tracked: set[str] = set()
    for raw, mode in entries:
        path = raw.decode("utf-8", "surrogateescape")
        if prefix and not path.startswith(prefix):
            continue
        rel = path[len(prefix) :]
        if stat.S_IFMT(mode) == 0o160000:  # a gitlink: a submodule's commit
            submodules.add(rel)
            continue
        tracked.add(rel)
    return GitFacts(
        tracked=frozenset(tracked),
        tracked_dirs=Folders(tracked),
        submodules=frozenset(submodules),
        has_index=True,
    )


#: The longest path an index entry may name (Linux's PATH_MAX)
_MAX_PATH = 4096
_ENTRY_HEAD = 62  # times, ids, mode, size, the object id (SHA-1) and the flags
_EXTENDED = 0x4000
#: The longest varint a v4 index holds (a 64-bit number): one of 1.6 MB of 0xFF bytes took
#: dulwich over a minute (eighth review)
_VARINT_BITS = 70


def _v4_path_too_long(data: bytes) -> str | None:
    """Why a version-4 index is not read, or None. Its paths are compressed against the
    previous one: entries that keep the whole previous path and add 63 bytes made 800 KB
    stand for a gigabyte of paths (2.5 GB in the scan), and dulwich reads each suffix a
    byte at a time (one suffix of 800 KB: 8 s); third review. A walk of the entries, linear
    in the file, refuses a path longer than PATH_MAX before dulwich reads anything."""
    if len(data) < 12 or data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") != 4:
        return None  # versions 2 and 3 give each name's length (at most 4,095): dulwich's
    count, pos, previous = int.from_bytes(data[8:12], "big"), 12, 0
    for _ in range(count):
        if pos + _ENTRY_HEAD > len(data):
            return None  # cut short: dulwich says so
        flags = int.from_bytes(data[pos + _ENTRY_HEAD - 2 : pos + _ENTRY_HEAD], "big")
        pos += _ENTRY_HEAD + (2 if flags & _EXTENDED else 0)
        remove, shift = 0, 0  # the varint as dulwich reads it (7 bits a byte, low first)
        while pos < len(data):
            byte = data[pos]
            pos += 1
            remove |= (byte & 0x7F) << min(shift, 64)
            shift += 7
            if not byte & 0x80:
                break
            if shift > _VARINT_BITS:  # dulwich decodes any length, in quadratic time
                return "an index entry's path length is not a number git writes"
        end = data.find(b"\0", pos, pos + _MAX_PATH + 1)
        length = max(0, previous - remove) + ((end if end >= 0 else pos + _MAX_PATH + 1) - pos)
        if end < 0 or length > _MAX_PATH:
            return f"not read: an entry's path is longer than {_MAX_PATH} bytes"
        previous, pos = length, end + 1
    return None


def _mode(entry: object) -> int:
    """The file mode of an index entry; a merge conflict's entry has one per side."""
    mode = getattr(entry, "mode", None)
    if isinstance(mode, int):
        return mode
    for side in ("this", "ours", "ancestor", "theirs"):
        mode = getattr(getattr(entry, side, None), "mode", None)
        if isinstance(mode, int):
            return mode
    return 0o100644


def _gitmodules(top: Path, prefix: str) -> list[str]:
    text = fileio.read_text_or_none(top / ".gitmodules", limit=MAX_GITMODULES, root=top)
    if text is None:
        return []
    out = []
    for path in _GITMODULE_PATH.findall(text):
        path = path.strip().strip('"').strip("/")
        if path and (not prefix or path.startswith(prefix)):
            out.append(path[len(prefix) :])
    return out
