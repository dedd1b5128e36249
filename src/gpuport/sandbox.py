"""Where a compiler gpuport starts may read, write and run: Linux Landlock, set by the
program's own process before it becomes the compiler (issue 23).

The compile checks (``hipify --check``, ``port --check``) feed a project's sources to a
compiler. Whatever the source asks, the compiler reads: an ``#include "/home/me/.aws/..."``
(caught by the ``-MD`` list), but also an inline ``asm(".include \\"/etc/...\\"")`` that the
*assembler* reads and no list names (the fifth review got an outside file's value back, one
bit per unit). Filtering the source cannot close that (``.incbin``, section names pasted
raw into GNU ``as`` input, macros...), so the compiler itself is confined:

* **read** (and list): the project, the output tree, folders the user let in
  (``--check-include``), the toolchain's own folders and the system's program folders
  (``/usr``, ``/bin``, ``/lib*``; a toolchain elsewhere, such as ``/opt/rocm-6.2``, by its own
  folder), and a few named system files a compiler reads
  (``/etc/ld.so.cache``, ``/etc/os-release``...). Not ``$HOME``, not the rest of ``/etc``,
  not ``/proc``, not ``/tmp``.
* **write**: only the compile's own throw-away folder (``TMPDIR`` points there) and
  ``/dev/null``;
* **run**: only programs in the toolchain's and the system's folders, never a file of the
  project or of the throw-away folder.

Where the kernel lets an unprivileged process make user and mount namespaces, the program
also gets a **private view** of the file system that holds only those paths (bound into a
fresh root, ``pivot_root``, the old root detached): a path outside does not even *exist* for
it, so ``__has_include("/home/me/.ssh/id_rsa")`` cannot tell whether it is there. Where that
is refused, the Landlock rules still hold and only that one bit per unit is left.

Landlock (Linux 5.13+) needs no privilege; the rules hold for the compiler and every
program it starts, and cannot be lifted by them. Where the kernel has no Landlock the
compile checks do not run (they say why) unless the user sets
``GPUPORT_UNCONFINED_COMPILE=1`` in their own environment and starts gpuport outside any
project folder (the same switch turns the confinement off where the kernel has it). A
project's files can never set it, and its environment manager (direnv, mise), which sets
variables only while the user works inside it, cannot either: inside a project the switch is
not taken (twenty-fifth re-run F6).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

__all__ = [
    "TRAMPOLINE",
    "UNCONFINED_ENV",
    "Confinement",
    "abi",
    "compile_confinement",
    "refusal",
    "special_file",
    "special_refusal",
    "trampoline_argv",
    "unconfined",
]

#: The user's own switch (their environment, never a project file) to compile where the
#: kernel has no Landlock.
UNCONFINED_ENV = "GPUPORT_UNCONFINED_COMPILE"

# Landlock access rights (linux/landlock.h)
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_ABI1_ALL = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
READ = READ_FILE | READ_DIR
RUN = READ | EXECUTE
#: everything but EXECUTE: make, write, truncate, move, remove files and folders
WRITE = (_ABI1_ALL & ~EXECUTE) | REFER | TRUNCATE

#: The system's program folders: read and run (a compiler and the programs it starts).
#: Not ``/opt``, where applications keep their own settings: a toolchain installed there
#: (``/opt/rocm-6.2``) is let in by its own folder (the caller's ``run``).
SYSTEM_RUN = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Single system files compilers and their C library read (nothing else of /etc or /proc)
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/redhat-release",
    "/etc/system-release",
    "/proc/sys/vm/overcommit_memory",
)

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446


@cache
def abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        got = int(libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                               ctypes.c_uint32(1)))  # fmt: skip
    except (OSError, AttributeError):  # pragma: no cover - no C library to ask
        return 0
    return max(got, 0)


#: Entries looked at for pipes and devices before the walk stops (a single file's folder may
#: be a home folder); past it, the two-units-at-a-limit rule still bounds the wait
_SPECIAL_WALK_MAX = 200_000


def special_file(root: Path) -> str | None:
    """The first pipe, socket or device file under ``root`` (links not followed), relative;
    None when there is none. The confinement lets a compile read the whole project, and an
    ``#include`` of a pipe waits until the unit's time limit (120 s) runs out."""
    if not root.is_dir():
        return None
    stack, seen = [root], 0
    while stack and seen < _SPECIAL_WALK_MAX:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            try:
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                    continue
            except OSError:
                continue
            return str(Path(entry.path).relative_to(root))
    return None


def special_refusal(root: Path) -> str | None:
    """Why no unit of ``root`` is compiled when it holds a pipe or device (else None)."""
    found = special_file(root)
    if found is None:
        return None
    return (
        f"not compiled: the project holds a pipe or device file ({found[-80:]!r}); a compile "
        "that reads it could wait until its time limit"
    )


def unconfined() -> bool:
    """Whether the user asked, in their own environment, to compile without confinement: the
    switch is set and the current folder lies in no project (where a project's ``.envrc``
    could have set it: :func:`ignored_switch`)."""
    return os.environ.get(UNCONFINED_ENV) == "1" and not _in_a_project()


def ignored_switch() -> bool:
    """The switch is set but not taken, because gpuport was started inside a project."""
    return os.environ.get(UNCONFINED_ENV) == "1" and _in_a_project()


def _in_a_project() -> bool:
    from gpuport.startup import project_tops

    try:
        here = os.path.realpath(os.getcwd())  # noqa: PTH109 - a string walk, as startup's
    except OSError:
        return True  # no current folder to judge: not taken
    return bool(project_tops(here))


def refusal() -> str | None:
    """Why a confined compile cannot run here (None when it can, or the user said to go on
    without confinement)."""
    if abi() > 0 or unconfined():
        return None
    return (
        "not compiled: this kernel has no Landlock (Linux 5.13 or later), which gpuport needs "
        "to keep the compiler's reads inside the project and the toolchain; set "
        f"{UNCONFINED_ENV}=1 in your own environment and start gpuport outside any project "
        "folder to compile without it"
    )


@dataclass(frozen=True)
class Confinement:
    """Folders (or files) a program may read, read and run, and write."""

    read: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    files: tuple[str, ...] = field(default=SYSTEM_FILES)

    def rules(self) -> list[tuple[str, int]]:
        """(path, access) pairs; the trampoline keeps only the file rights for a file."""
        out = [(p, READ) for p in self.read] + [(p, RUN) for p in self.run]
        out += [(p, WRITE) for p in self.write] + [(p, READ_FILE) for p in self.files]
        out.append(("/dev/null", READ_FILE | WRITE_FILE))
        return out


def compile_confinement(
    *, read: Iterable[Path | str], run: Iterable[Path | str], work: Path | str
) -> Confinement:
    """A compile's confinement: ``read`` (the project, the output tree, include roots),
    ``run`` (the toolchain's install folders), ``work`` (its throw-away folder)."""
    return Confinement(
        read=tuple(sorted({str(p) for p in read})),
        run=tuple(sorted({*SYSTEM_RUN, *(str(p) for p in run)})),
        write=(str(work),),
    )


def _handled() -> int:
    level = abi()
    mask = _ABI1_ALL
    if level >= 2:
        mask |= REFER
    if level >= 3:
        mask |= TRUNCATE
    return mask


#: Run by gpuport's own interpreter (``python -I -S``) between fork and the program: set the
#: limits, confine itself with Landlock, then become the program (same process, group and
#: pipes). A limit set from outside after the start raced a quick program; ``preexec_fn`` is
#: unsafe beside threads. Exit 125 with one line when the confinement cannot be set.
TRAMPOLINE = r"""
import ctypes, json, os, resource, stat, sys
spec = json.loads(sys.argv[1])
for name, n in spec["limits"].items():
    resource.setrlimit(getattr(resource, name), (n, n))
def hide(keep, at):
    # A private view of the file system holding only the paths kept (user and mount
    # namespaces): a path outside does not even exist for the program (__has_include).
    # Returns False (nothing changed that matters) where the kernel or policy refuses.
    libc = ctypes.CDLL(None, use_errno=True)
    mount = libc.mount
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                      ctypes.c_void_p]
    uid, gid, cwd = os.getuid(), os.getgid(), os.getcwd()
    pivot = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}.get(os.uname().machine)
    if pivot is None or libc.unshare(0x10000000 | 0x00020000) != 0:  # NEWUSER | NEWNS
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", "%d %d 1" % (uid, uid)),
                       ("gid_map", "%d %d 1" % (gid, gid))):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
    if mount(None, b"/", None, 16384 | (1 << 18), None) != 0:  # MS_REC | MS_PRIVATE
        return False
    new = os.path.join(at, ".root")
    os.makedirs(new, 0o700, exist_ok=True)  # a later compile in the same folder reuses it
    if mount(b"tmpfs", new.encode(), b"tmpfs", 0, b"mode=0755") != 0:
        return False
    done = []
    for path in sorted(set(keep), key=len):
        if not os.path.exists(path) or any(path.startswith(d.rstrip("/") + "/") for d in done):
            continue
        target = new + path
        if os.path.isdir(path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        flags = 4096 | (0 if path == at else 16384)  # MS_BIND (| MS_REC)
        if mount(path.encode(), target.encode(), None, flags, None) != 0:
            if path == "/proc":
                continue  # only for readlink(/proc/self/exe); reads are refused anyway
            return False
        done.append(path)
    # pivot_root, then the old root detached: the view is the namespace's whole tree, so
    # Landlock's walk up from a file stops at its root (under a chroot it went on up to the
    # real root, through the program's own folder, where writing is allowed)
    os.chdir(new)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(pivot), b".", b".") != 0 or libc.umount2(b".", 2) != 0:
        os.chdir(cwd)
        return False
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    return True
hidden = False
if spec.get("hide"):
    try:
        hidden = hide(spec["hide"]["keep"], spec["hide"]["at"])
    except OSError:
        hidden = False
rules = spec.get("rules")
if rules is not None:
    FILE_RIGHTS = 1 | 2 | 4 | (1 << 14)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        sc = libc.syscall
        sc.restype = ctypes.c_long
        L = ctypes.c_long
        class Beneath(ctypes.Structure):
            _pack_ = 1
            _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
        handled = ctypes.c_uint64(spec["handled"])
        rs = sc(L(444), ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
        if rs < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            access &= spec["handled"]
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                access &= FILE_RIGHTS
            rule = Beneath(access, fd)
            if sc(L(445), L(rs), L(1), ctypes.byref(rule), L(0)) < 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule " + path)
            os.close(fd)
        if libc.prctl(38, L(1), L(0), L(0), L(0)) != 0:
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if sc(L(446), L(rs), L(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(rs)
    except OSError as exc:
        sys.stderr.write("gpuport: cannot confine the compiler: %s\n" % (exc,))
        os._exit(125)
os.execv(sys.argv[2], sys.argv[2:])
"""

#: The exit of a trampoline that could not confine its program
CANNOT_CONFINE = 125


def trampoline_argv(
    args: Sequence[str], *, limits: dict[str, int], confine: Confinement | None
) -> list[str]:
    """``args`` started through :data:`TRAMPOLINE` with ``limits`` (``RLIMIT_*`` name ->
    bytes or seconds) and, when given and the kernel has Landlock, ``confine``."""
    spec: dict[str, object] = {"limits": limits}
    if confine is not None and abi() > 0 and not unconfined():
        spec["rules"] = confine.rules()
        spec["handled"] = _handled()
        if confine.write:  # the private view's root is made in the program's own folder
            keep = [p for p, _ in confine.rules()] + ["/proc"]
            spec["hide"] = {"keep": keep, "at": confine.write[0]}
    return [sys.executable, "-I", "-S", "-c", TRAMPOLINE, json.dumps(spec), *args]
