# ruff: noqa: PTH105, PTH108, PTH112, PTH113, PTH114, PTH116, PTH120, PTH123
# (this layer works with file descriptors and os calls on purpose)
"""The one file layer: every read of project or user-named input and every write goes here.

Reading (:func:`read_bytes`, :func:`read_text`, :func:`check_regular`):

* regular files only: a pipe, socket or device (``/dev/zero``) is refused before it is read,
  so nothing blocks and nothing grows without bound;
* bounded: each kind of input has a size limit (:data:`LIMIT_SETTINGS`, ...); a larger file is
  refused as "too large", never read into memory;
* with ``root``, never outside it: a path that resolves outside it (a link the project ships,
  ``../``) is refused with the reason; links that stay inside are fine.

Refusals raise :class:`ReadRefused` (a :class:`GpuportError`: one line, exit 2) whose
``reason`` a walker can list as "not read". Writing (:func:`write_atomic`,
:func:`write_atomic_bytes`, :func:`atomic_path`, :func:`backup`): into a temporary file in the
target folder, fsynced and renamed over the target, so a reader or a crash sees the old file
or the whole new one; never through a link; with ``root``, into a folder inside it. Temporary
files are ``.NAME.gpuport-XXXXXXXX.tmp``; where the file system allows, the data goes to an
unnamed file (``O_TMPFILE``) named only for the instant before the rename, and a name a killed
run left is removed by the next write to the same target (:func:`clean_stale_temps`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from gpuport import textre
from gpuport.errors import GpuportError
from gpuport.sparse_copy import copy_sparse

MB = 1024 * 1024
#: Settings and ignore files: .gitignore, gpuport.toml, pyproject.toml, --knowledge TOML.
LIMIT_SETTINGS = 4 * MB
#: Source files the scanner and hipify read (``--max-file-size`` overrides it for scan).
LIMIT_SOURCE = 5 * MB
#: gpuport's own JSON results (bench, validate, doctor snapshots) and model configs.
LIMIT_RESULT = 64 * MB

TEMP_MARK = ".gpuport-"
_TEMP_NAME = textre.compile(r"^\.(?P<name>.+)\.gpuport-[0-9a-f]{8}\.tmp$")

__all__ = [
    "BACKUP_SUFFIX",
    "LIMIT_RESULT",
    "LIMIT_SETTINGS",
    "LIMIT_SOURCE",
    "ReadRefused",
    "atomic_path",
    "backup",
    "backup_path",
    "backup_state",
    "check_destination",
    "check_regular",
    "check_writable",
    "clean_stale_temps",
    "copy_atomic",
    "is_temp_name",
    "link_below",
    "open_regular",
    "os_reason",
    "outside_root",
    "read_bytes",
    "read_text",
    "write_atomic",
    "write_atomic_bytes",
]


class ReadRefused(GpuportError):
    """An input gpuport will not read; ``reason`` is the short why ("too large (...)")."""

    def __init__(self, path: Path | str, reason: str, what: str = "") -> None:
        self.path = Path(path)
        self.reason = reason
        label = f"{what} {path}" if what else str(path)
        super().__init__(f"cannot read {label}: {reason}")


# --- reading ---------------------------------------------------------------------------------


def os_reason(exc: OSError) -> str:
    """A short reason for an OS error on a read."""
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.ENOENT:
        return "no such file (or a broken symbolic link)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a folder"
    return f"cannot read: {exc.strerror or exc}"


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def outside_root(path: Path, root: Path) -> str | None:
    """Why ``path`` is not inside ``root`` once links are resolved, or None when it is."""
    real_root = os.path.realpath(root)
    if os.path.isfile(real_root):
        real_root = os.path.dirname(real_root)
    real = os.path.realpath(path)
    if _inside(real, real_root):
        return None
    if os.path.islink(path) or link_below(path, root) is not None:
        return "symbolic link to outside the scanned folder: not read"
    return "outside the project folder: not read"


def link_below(path: Path, root: Path) -> Path | None:
    """The first symbolic link among ``path`` and its folders up to ``root`` (not ``root``)."""
    for part in (path, *path.parents):
        if part in (root, part.parent) or part.is_symlink():
            return None if part in (root, part.parent) else part
    return None


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


_NOT_REGULAR = "not a regular file (pipe, socket or device)"


def check_regular(
    path: Path, *, root: Path | None = None, limit: int | None = None, what: str = ""
) -> os.stat_result:
    """The stat of ``path`` if it is a regular file gpuport may read (see the module doc)."""
    if root is not None:
        why = outside_root(path, root)
        if why is not None:
            raise ReadRefused(path, why, what)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ReadRefused(path, os_reason(exc), what) from None
    if stat.S_ISDIR(info.st_mode):
        raise ReadRefused(path, "is a folder", what)
    if not stat.S_ISREG(info.st_mode):
        raise ReadRefused(path, _NOT_REGULAR, what)
    if limit is not None and info.st_size > limit:
        raise ReadRefused(path, f"too large ({_size(info.st_size)} > {_size(limit)} limit)", what)
    return info


def read_bytes(path: Path, *, limit: int, root: Path | None = None, what: str = "") -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes, else ReadRefused."""
    check_regular(path, root=root, limit=limit, what=what)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReadRefused(path, os_reason(exc), what) from None
    try:
        info = os.fstat(fd)  # the file opened, not one swapped in since the check
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused(path, _NOT_REGULAR, what)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise ReadRefused(path, os_reason(exc), what) from None
    finally:
        os.close(fd)
    if got > limit:
        raise ReadRefused(path, f"too large (more than the {_size(limit)} limit)", what)
    return b"".join(chunks)


def open_regular(path: Path, *, root: Path | None = None, what: str = "") -> BinaryIO:
    """``path`` opened for binary reading, for a reader that reads only part of a large file
    (a capture's header): the same checks as :func:`read_bytes`, without the size limit."""
    check_regular(path, root=root, what=what)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReadRefused(path, os_reason(exc), what) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ReadRefused(path, _NOT_REGULAR, what)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_text(
    path: Path,
    *,
    limit: int,
    root: Path | None = None,
    what: str = "",
    errors: str = "strict",
) -> str:
    """:func:`read_bytes` decoded as UTF-8 (a leading BOM dropped); bad UTF-8 is refused
    unless ``errors`` says otherwise."""
    data = read_bytes(path, limit=limit, root=root, what=what)
    try:
        return data.decode("utf-8", errors).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ReadRefused(path, f"not valid UTF-8 (byte {exc.start})", what) from None


def read_text_or_none(path: Path, *, limit: int, root: Path | None = None) -> str | None:
    """Best-effort :func:`read_text` (bad UTF-8 replaced) for files that only add evidence
    (packaging metadata, CI files, build flags): None when the file is missing, too large,
    not regular or a link out of ``root``, so the caller goes on without it."""
    try:
        return read_text(path, limit=limit, root=root, errors="replace")
    except GpuportError:
        return None


# --- writing ---------------------------------------------------------------------------------


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of gpuport's temporary file names."""
    return _TEMP_NAME.match(name) is not None


def clean_stale_temps(path: Path) -> None:
    """Remove the temporary files a killed run left for ``path`` itself (regular files or
    links named ``.NAME.gpuport-XXXXXXXX.tmp``, NAME being ``path``'s name); never follows or
    removes anything else: a file of that shape written for another name stays, whoever put
    it there (a read-only ``scan -o report.json`` in a project removed every such file of the
    project's folder; twenty-second re-run). Each folder is listed once per process (an
    in-place run writes thousands of files into one folder)."""
    parent = path.parent if str(path.parent) else Path()
    key = os.path.realpath(parent)
    stale = _STALE.get(key)
    if stale is None:
        stale = _STALE[key] = {}
        try:
            entries = list(os.scandir(parent))
        except OSError:
            entries = []
        for entry in entries:
            if is_temp_name(entry.name):
                target = entry.name[1:].rsplit(TEMP_MARK, 1)[0]
                stale.setdefault(target, []).append(entry)
    for entry in stale.pop(path.name, []):
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                os.unlink(entry.path)


#: folder -> the name each stale temporary file there was written for -> its entries
_STALE: dict[str, dict[str, list[os.DirEntry[str]]]] = {}


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMP_MARK}{secrets.token_hex(4)}.tmp")


def _check_destination(path: Path, root: Path | None) -> Path:
    """The folder to write ``path`` in, after refusing a link or a folder at ``path`` and a
    folder outside ``root``."""
    parent = path.parent if str(path.parent) else Path()
    if path.is_symlink():
        raise GpuportError(
            f"cannot write {path}: it is a symbolic link (gpuport never writes through a link); "
            "remove it first (nothing written)"
        )
    if not parent.is_dir():
        raise GpuportError(f"cannot write {path}: folder {parent} does not exist")
    if path.is_dir():
        raise GpuportError(f"cannot write {path}: it is a folder")
    _refuse_special(path)
    if root is not None:
        real_root = os.path.realpath(root)
        if not _inside(os.path.realpath(parent), real_root):
            raise GpuportError(
                f"cannot write {path}: its folder leads outside {root} through a symbolic "
                "link (nothing written)"
            )
    return parent


def _refuse_special(path: Path) -> None:
    """An existing destination that is not a regular file (a device such as ``/dev/null``, a
    FIFO, a socket) is refused: the atomic rename would replace it with a regular file."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise GpuportError(
            f"cannot write {path}: it is not a regular file (a device, pipe or socket); "
            "gpuport writes only regular files (nothing written)"
        )


def check_destination(path: Path, root: Path) -> None:
    """Refuse, before anything is written, a destination under ``root`` that is a symbolic link
    or not a regular file, or whose nearest existing folder resolves outside ``root`` (its
    folders may not exist yet)."""
    if path.is_symlink():
        raise GpuportError(
            f"cannot write {path}: it is a symbolic link (gpuport never writes through a link); "
            "remove it first (nothing written)"
        )
    _refuse_special(path)
    if not root.exists():
        return  # nothing under it exists yet: all of it will be created
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        if folder.is_symlink():  # a dangling link where a folder will be created
            break
        folder = folder.parent
    if not _inside(os.path.realpath(folder), os.path.realpath(root)):
        raise GpuportError(
            f"cannot write {path}: its folder leads outside {root} through a symbolic "
            "link (nothing written)"
        )


def make_dirs(folder: Path) -> None:
    """``mkdir -p`` without recursion (``Path.mkdir(parents=True)`` recurses once per level:
    a source 990 folders deep crashed ``hipify -o`` with RecursionError); one line on error."""
    missing: list[Path] = []
    here = folder
    while not os.path.isdir(here):
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for level in reversed(missing):
        try:
            level.mkdir()  # one level: no parents=True, no recursion
        except FileExistsError:
            if not os.path.isdir(level):
                raise GpuportError(f"cannot create {folder}: {level} is a file") from None
        except OSError as exc:
            raise GpuportError(f"cannot create {folder}: {exc.strerror or exc}") from None


def check_writable(path: Path, what: str = "") -> None:
    """Refuse a destination that cannot be written, before any long work is done for it, and
    one of gpuport's own backups (``--output k.cu.gpuport.bak`` replaced the backup the same
    run had just written, the original's only copy: twenty-third re-run)."""
    label = f"{what} {path}" if what else str(path)
    if path.name.endswith(BACKUP_SUFFIX):
        raise GpuportError(f"cannot write {label}: a name gpuport keeps for its backups")
    try:
        _check_destination(path, None)
    except GpuportError as exc:
        msg = str(exc).replace(f"cannot write {path}", f"cannot write {label}", 1)
        raise GpuportError(msg) from None


def _fail(path: Path, exc: OSError) -> GpuportError:
    return GpuportError(f"cannot write {path}: {exc.strerror or exc}")


def _mode_for(path: Path, mode: int | None) -> int:
    if mode is not None:
        return mode
    try:
        # permission bits only: the new file is the caller's, and a set-user-ID, set-group-ID
        # or sticky bit of the file it replaces must not carry over (as in copy_atomic)
        return os.lstat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _abandon(tmp: Path, path: Path, exc: BaseException) -> NoReturn:
    """A write failed or was interrupted: remove its temporary file and raise again (an
    OSError as the one-line error naming ``path``)."""
    with contextlib.suppress(OSError):
        tmp.unlink()
    if isinstance(exc, OSError):
        raise _fail(path, exc) from None
    raise exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(parent: Path) -> None:
    with contextlib.suppress(OSError):
        dfd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write_atomic_bytes(
    path: Path,
    data: bytes,
    *,
    root: Path | None = None,
    mode: int | None = None,
    is_backup: bool = False,
) -> None:
    """Write ``data`` to ``path`` atomically (see the module doc); OSError becomes one line.
    Only :func:`backup` writes a ``*.gpuport.bak`` (a report named so replaced the backup the
    same run had written: twenty-third re-run)."""
    if path.name.endswith(BACKUP_SUFFIX) and not is_backup:
        raise GpuportError(f"cannot write {path}: a name gpuport keeps for its backups")
    parent = _check_destination(path, root)
    clean_stale_temps(path)
    perms = _mode_for(path, mode)
    tmp = _temp_name(path)
    try:
        if not _write_unnamed(parent, tmp, data, perms):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                _write_all(fd, data)
                os.fchmod(fd, perms)
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        _abandon(tmp, path, exc)
    _fsync_dir(parent)


def _write_unnamed(parent: Path, tmp: Path, data: bytes, perms: int) -> bool:
    """Write ``data`` to an unnamed file in ``parent`` (Linux ``O_TMPFILE``) and give it the
    name ``tmp`` only once it is complete and synced: a kill before that leaves nothing.
    False where the system cannot (then the caller writes ``tmp`` directly)."""
    linkat = _linkat()
    flag = getattr(os, "O_TMPFILE", 0)
    if linkat is None or not flag:
        return False
    try:
        fd = os.open(parent, flag | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        _write_all(fd, data)
        os.fchmod(fd, perms)
        os.fsync(fd)
        # os.link does not pass AT_SYMLINK_FOLLOW, which naming an unnamed file needs
        done = linkat(_AT_FDCWD, f"/proc/self/fd/{fd}".encode(), _AT_FDCWD, bytes(tmp), 0x400)
    finally:
        os.close(fd)
    return bool(done == 0)


_AT_FDCWD = -100


@functools.cache
def _linkat() -> Any:
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).linkat
    except (OSError, AttributeError):
        return None


def write_atomic(path: Path, text: str, *, root: Path | None = None) -> None:
    """Write ``text`` (UTF-8; lone surrogates back to the bytes they came from) atomically."""
    write_atomic_bytes(path, text.encode("utf-8", "surrogateescape"), root=root)


@contextlib.contextmanager
def atomic_path(path: Path, *, root: Path | None = None) -> Iterator[Path]:
    """Yield a temporary path for a writer that needs a file name (safetensors); on success it
    is fsynced and replaces ``path``, on error it is removed."""
    parent = _check_destination(path, root)
    clean_stale_temps(path)
    perms = _mode_for(path, None)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}{TEMP_MARK}", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise _fail(path, exc) from None
    os.close(fd)
    tmp = Path(name)
    final = _temp_name(path)
    try:
        yield tmp
        os.replace(tmp, final)  # the recognised name, so a killed run's leftover is cleaned
        tmp = final
        with open(tmp, "rb+") as fh:
            os.fchmod(fh.fileno(), perms)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        _abandon(tmp, path, exc)
    _fsync_dir(parent)


def copy_atomic(src: Path, dest: Path, *, src_root: Path, root: Path | None = None,
                durable: bool = True) -> None:  # fmt: skip
    """Copy the regular file ``src`` (inside ``src_root``) to ``dest`` like :func:`write_atomic`
    (streamed; the permission bits are kept, never set-user-ID, set-group-ID or sticky).
    ``durable=False``: a scratch copy gpuport deletes after use,
    not synced (8,000 files took 76 s of wall time; sixteenth re-run)."""
    info = check_regular(src, root=src_root)
    parent = _check_destination(dest, root)
    clean_stale_temps(dest)
    tmp = _temp_name(dest)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        rfd = os.open(src, flags)
    except OSError as exc:
        raise ReadRefused(src, os_reason(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(rfd).st_mode):
            raise ReadRefused(src, _NOT_REGULAR)
        wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            copy_sparse(rfd, wfd, os.fstat(rfd).st_size)
            # the permission bits only: a set-user-ID bit copied by root made a root-owned
            # set-user-ID copy of a project's program (twenty-third re-run)
            os.fchmod(wfd, info.st_mode & 0o777)
            if durable:
                os.fsync(wfd)
        finally:
            os.close(wfd)
        os.replace(tmp, dest)
    except BaseException as exc:
        _abandon(tmp, dest, exc)
    finally:
        os.close(rfd)
    if durable:
        _fsync_dir(parent)


# --- backups ---------------------------------------------------------------------------------

BACKUP_SUFFIX = ".gpuport.bak"


def backup_path(path: Path) -> Path:
    """Where an original is kept before ``path`` is rewritten in place: ``FILE.gpuport.bak``."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def backup_state(path: Path, original: bytes) -> str:
    """What is at ``path``'s backup: ``"none"``, ``"same"`` (a copy of ``original``: kept),
    ``"partial"`` (an empty or cut-off copy a killed run or a full disk left: repaired) or
    ``"other"`` (a different file: refused). A link or a non-file there raises GpuportError."""
    bak = backup_path(path)
    if bak.is_symlink():
        raise GpuportError(
            f"--in-place: {bak} is a symbolic link; gpuport never writes through a link "
            "(nothing written)"
        )
    if not bak.exists():
        return "none"
    try:
        have = read_bytes(bak, limit=max(len(original), 1))
    except ReadRefused as exc:
        if exc.reason.startswith("too large"):
            return "other"
        raise GpuportError(f"--in-place: backup {bak}: {exc.reason} (nothing written)") from None
    if have == original:
        return "same"
    if original.startswith(have):
        return "partial"
    return "other"


def backup(path: Path, original: bytes, *, root: Path | None = None) -> None:
    """Keep ``original`` (the content of ``path``) as ``FILE.gpuport.bak``, written atomically
    like any other file (so a kill leaves no empty or cut-off backup)."""
    bak = backup_path(path)
    try:
        mode = os.lstat(path).st_mode & 0o777  # no set-ID or sticky bit (see _mode_for)
    except OSError:
        mode = None
    try:
        write_atomic_bytes(bak, original, root=root, mode=mode, is_backup=True)
    except GpuportError as exc:
        raise GpuportError(str(exc).replace("cannot write", "cannot back up to", 1)) from None
