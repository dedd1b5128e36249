"""How gpuport starts another program: the one door, with no shell and no way in for a project.

Every external program gpuport runs (``hipcc``'s compiler, doctor's probes, the collectives
workers) is started through this module (``tests/security/test_subprocesses.py`` checks that
no other module imports :mod:`subprocess`, but for the collectives workers, which are
gpuport's own code):

* an **argv list**, never a shell and never a command string;
* a **sanitized PATH**: only absolute entries, none inside the project being scanned or
  translated. A relative PATH entry (``.``, ``bin``, an empty entry) or an entry inside the
  project would let the project put its own ``python3`` or ``nvidia-smi`` in front (Debian's
  ``hipcc`` is a Perl script that starts ``python3`` through PATH);
* a **neutral working folder** (``/`` or a throw-away folder of gpuport's), never the caller's
  folder, where a project's ``torch.py`` or ``sitecustomize.py`` would be found;
* **stdin closed**, a **time limit** and an **output limit**: output is read as it comes, up
  to a limit per stream; past the time or output limit the program's whole process group is
  killed (a wrapper script that started ``sleep`` would otherwise keep the pipes open).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuport import sandbox, textre
from gpuport.markers import MARKERS as PROJECT_MARKERS
from gpuport.startup import holds

__all__ = [
    "MARKERS",
    "NEUTRAL_CWD",
    "Completed",
    "avoid_always",
    "avoided",
    "forget_imports_from",
    "logical_top",
    "neutral_tempdir",
    "project_of",
    "run",
    "safe_env",
    "safe_path",
    "stops",
    "which",
]

#: The working folder of every program gpuport starts (unless it runs in its own temp folder).
NEUTRAL_CWD = "/"
#: where a variable's value is split into words that may name a path (see :func:`_mentions`)
_WORDS = textre.compile(r"[\s=,;]+")
#: Bytes kept per stream unless a caller asks for another limit.
MAX_OUTPUT = 256_000
_CHUNK = 65536
# Once the program itself has exited, how long output still held open by a stray child may
# keep arriving before we stop listening.
_DRAIN_S = 0.5


def _inside(entry: str, folders: list[str]) -> bool:
    real = os.path.realpath(entry)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


#: files that mark a project's folder (see :func:`avoided`)
MARKERS = _MARKERS = PROJECT_MARKERS


def stops() -> tuple[Path, ...]:
    """Folders never taken for a project (see :func:`_stops`)."""
    return _stops()


def _stops() -> tuple[Path, ...]:
    """Folders never taken for a project: ``/`` and the user's home folder, as the password
    database has it (``$HOME`` can be set by a project's ``.envrc`` to the project itself:
    twenty-third re-run)."""
    from gpuport.startup import passwd_home

    home = passwd_home()  # no NSS module through a project's LD_LIBRARY_PATH
    if not home:
        return (Path(os.sep),)
    return (Path(os.sep), Path(os.path.realpath(home)))


def _project_tops(folder: str) -> list[str]:
    """The folders above ``folder`` that are the project it sits in: the highest folder with a
    ``.git`` (a submodule's ``.git`` is not the top: twenty-third re-run) and the highest folder
    with a project file (``pyproject.toml``, ``CMakeLists.txt``, ``.envrc``...; folders without
    one may lie between), both below ``/`` and the home folder. One walk, shared with the
    start-up cleaning (:func:`gpuport.startup.project_tops`, standard library only)."""
    from gpuport.startup import project_tops

    return project_tops(os.path.abspath(folder))  # noqa: PTH100 - a string walk


#: folders left out of every lookup of this run, beside those a caller names (a portfolio's
#: other projects: :func:`avoid_always`)
_ALWAYS: list[str] = []


def avoid_always(folders: Iterable[Path | str]) -> None:
    """Leave ``folders`` (and their projects) out of every lookup and environment from now on
    in this process: ``assess A B C`` assesses each project with the others' ``bin/`` and
    ``.venv/bin`` still on PATH."""
    for f in avoided(folders):
        if f not in _ALWAYS:
            _ALWAYS.append(f)


def project_of(path: Path | str) -> list[str]:
    """The real folder of ``path`` (a file's own folder) and the project it sits in (its git
    work tree, the highest folder with a project file): never ``/`` or the home folder."""
    real = Path(os.path.realpath(path))
    folder = real.parent if real.is_file() else real
    return list(dict.fromkeys([str(folder), *_project_tops(str(folder))]))


def avoided(avoid: Iterable[Path | str]) -> list[str]:
    """The real folders behind ``avoid``: each folder (a file's own folder), and the project
    it sits in (:func:`_project_tops`). ``hipify csrc/k.cu --check`` names one file of a
    project whose ``bin/`` or ``.venv/bin`` may be on PATH (twenty-second re-run): the whole
    project is left out."""
    out: list[str] = []
    try:
        here: str | None = os.path.realpath(Path.cwd())
    except OSError:  # the current folder was removed
        here = None
    items = list(avoid)
    if items and here is not None:
        # the project the user works in, whatever was named (`cd P && gpuport hipify
        # /elsewhere/k.cu --check` ran P's bin/hipcc: twenty-fifth re-run F14)
        out.extend(_project_tops(here))
    for item in items:
        real = Path(os.path.realpath(item))
        folder = real.parent if real.is_file() else real
        found = [str(real), str(folder), *_project_tops(str(folder))]
        # run from inside the project (`cd proj && gpuport hipify csrc/k.cu`): the current
        # folder holds what was named, and is taken to be the project too
        if here is not None and _inside(str(real), [here]) and Path(here) not in _stops():
            found.append(here)
        for f in found:
            if f not in out:
                out.append(f)
    return out + [f for f in _ALWAYS if f not in out]


def project_around(folder: Path | str) -> list[str]:
    """The project ``folder`` (the current folder, say) lies in: its git work tree and the
    highest folder with a project file, never ``/`` or the home folder; empty outside one."""
    try:
        return _project_tops(os.path.realpath(folder))
    except OSError:
        return []


def reaches_into(path: Path | str, avoid: Iterable[Path | str] = ()) -> bool:
    """Whether ``path`` as written, or any folder on the way to it, resolves inside ``avoid``
    or this run's avoided folders (:func:`avoid_always`): a cache folder under a ``HOME`` the
    project set, reached through a ``.cache`` link the project ships, is the project's."""
    folders = avoided(avoid)
    if not folders:
        return False
    if len(str(path)) > 4096 or str(path).count(os.sep) > 256:
        return True  # no real path is that long; resolving each folder took minutes (F4b)
    here = Path(os.path.abspath(path))  # noqa: PTH100 - the links on the way are the point
    return any(_inside(str(at), folders) for at in (here, *here.parents) if at != Path(os.sep))


def _mentions(value: str, folders: list[str]) -> bool:
    """Whether ``value`` (one entry of a variable) names a path inside ``folders``: as a
    whole, or as a word of an option string (``-I/proj/lib``, ``--flag=/proj/x``)."""
    for word in _WORDS.split(value):
        at = word.find(os.sep)
        if at >= 0 and _inside(word[at:], folders):
            return True
    return False


def forget_imports_from(avoid: Iterable[Path | str]) -> None:
    """Drop this process's import paths inside ``avoid`` (a project), so that a later import
    in gpuport itself (``assess --run-bench`` imports torch) cannot find the project's own
    ``torch.py`` through a PYTHONPATH entry (twenty-second re-run)."""
    import importlib
    import sys

    from gpuport.startup import foreign_import_path, own_folders

    folders = avoided(avoid)
    # what this interpreter and gpuport itself are loaded from stays when it lies deeper than
    # the project (a venv inside the project's checkout, gpuport's own tests on its fixtures);
    # an entry above the project imports it by its folder's name and goes too
    own = own_folders(str(Path(__file__).parent))

    def foreign(entry: str) -> bool:
        return bool(entry) and foreign_import_path(entry, folders, own)

    kept = [p for p in sys.path if not foreign(p)]
    if len(kept) != len(sys.path):
        sys.path[:] = kept
        sys.path_importer_cache.clear()
        importlib.invalidate_caches()


def logical_top(path: Path | str) -> str:
    """The project ``path`` sits in along the path as written, links not followed: the highest
    folder above it with a ``.git`` or a project file (below ``/`` and the home folder), else
    its own folder."""
    here = Path(os.path.abspath(path))  # noqa: PTH100 - the links on the way are the point
    start = here if here.is_dir() and not here.is_symlink() else here.parent
    best = start
    for at in (start, *start.parents):
        if at in _stops():
            break
        if any((at / m).exists() or (at / m).is_symlink() for m in _MARKERS):
            best = at
    return str(best)


def neutral_tempdir(avoid: Iterable[Path | str]) -> None:
    """Keep gpuport's own temporary folders out of ``avoid`` (a project): a ``TMPDIR`` inside
    it (a project's ``.envrc``) left ``probe-*`` folders there after a read-only ``assess``
    and put the compile check's outputs in the project (twenty-third re-run)."""
    import tempfile

    folders = avoided(avoid)
    logical = [logical_top(f).rstrip(os.sep) + os.sep for f in avoid]
    through = False
    # TMPDIR, then TEMP and TMP, which tempfile honours too (thirty-first re-run F7)
    for name in _TEMP_NAMES:
        written = os.path.abspath(os.environ.get(name) or os.sep)  # noqa: PTH100 - as written
        # a link the project ships counts; each folder on the way resolved as well:
        # `/proc/self/cwd/tmp` is the project's `tmp` link (twenty-seventh re-run)
        if any(written.startswith(f) for f in logical) or reaches_into(written, avoid):
            through = True
    if through or _inside(tempfile.gettempdir(), folders):
        for candidate in ("/tmp", "/var/tmp"):  # noqa: S108  (the system folders, not a name)
            if Path(candidate).is_dir() and not _inside(candidate, folders):
                tempfile.tempdir = candidate
                for name in _TEMP_NAMES:
                    os.environ.pop(name, None)
                return


_TEMP_NAMES = ("TMPDIR", "TEMP", "TMP")


def safe_path(value: str | None = None, *, avoid: Iterable[Path | str] = ()) -> str:
    """``value`` (default: this process's PATH) with only absolute entries that are not inside
    any of the folders in ``avoid`` (the project being scanned or translated)."""
    raw = os.environ.get("PATH", os.defpath) if value is None else value
    folders = avoided(avoid)
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
    folders = avoided(avoid)
    if folders:
        # with a project at hand, a program gets only the variables on the allow-list, each
        # without an entry that names the project or is relative (twenty-second and
        # twenty-third re-runs: ROCM_PATH and PERL5LIB into the project, PERL5OPT=-d with a
        # PERL5DB written in escapes, a PERL5LIB relative to `/` reached the project's code)
        kept_env: dict[str, str] = {}
        for name, value in env.items():
            if name == "PATH":
                kept_env[name] = value
                continue
            if name not in _ENV_NAMES and not name.startswith(_ENV_PREFIXES):
                continue
            plain = _PLAIN_PATH if name in _ENV_PATHS else _PLAIN_VALUE
            parts = [
                part
                for part in value.split(os.pathsep)
                if part
                and plain.fullmatch(part) is not None
                and not _mentions(part, folders)
                # a path: not inside the project (a word such as C.UTF-8 is no path, and read
                # as one it lay in the current folder, which may be the project)
                and not (part.startswith(os.sep) and _inside(part, folders))
                # nor a root that *holds* the project, but the home folder: a program joins
                # names to it (PYTHONPATH + torch/, ROCM_PATH + llvm/bin/clang++), and a
                # checkout named so is then found (twenty-eighth re-run F6, F15)
                and not (name in _ROOT_PATHS and part.startswith(os.sep) and holds(part, folders))
                # a HOME that is not the user's own and holds the project: below it a
                # checkout named `.local` is the user site-packages of Python tools
                # (twenty-ninth re-run F3)
                and not (
                    name == "HOME"
                    and part.startswith(os.sep)
                    and holds(part, folders)
                    and Path(os.path.realpath(part)) != _stops()[-1]
                )
            ]
            if parts or not value:
                kept_env[name] = os.pathsep.join(parts)
        if "HOME" not in kept_env and (home := _stops()[-1]) != Path(os.sep):
            kept_env["HOME"] = str(home)  # a HOME inside the project: the user's own
        env = kept_env
    env.update(extra or {})
    return env


#: what an entry of a variable that lists folders may be: an absolute path of plain characters
#: (shell syntax in ROCM_PATH reached /bin/sh through Debian's hipcc; a space in a folder
#: above the project split the entry past the project check; ld.so's `$LIB` token named the
#: project where realpath saw another folder: twenty-fourth re-run)
_PLAIN_PATH = textre.compile(r"(?:/[\w.+@-]*)*")
#: what any other allow-listed value may be (a locale, a device list, a time zone)
_PLAIN_VALUE = textre.compile(r"[\w.,+@/=-]*")


#: the variables a program gpuport starts gets when a project is at hand (:func:`safe_env`):
#: the locale, the user, the GPU stack's install folders and device choices; nothing that
#: loads code (PERL5OPT, PERL5DB, PYTHONSTARTUP, LD_PRELOAD, BASH_ENV...)
_ENV_NAMES = frozenset(
    {"HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR", "HIP_PLATFORM",
     "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "HSA_PATH", "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH",
     "DEVICE_LIB_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "LD_LIBRARY_PATH", "PYTHONPATH",
     "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
     "GPU_DEVICE_ORDINAL", "HSA_OVERRIDE_GFX_VERSION", "NVIDIA_VISIBLE_DEVICES"}
)  # fmt: skip
_ENV_PREFIXES = ("LC_", "GPUPORT_")
#: variables that list folders: a relative entry resolves from the program's working folder
_ENV_PATHS = frozenset(
    {"HOME", "TMPDIR", "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "HSA_PATH", "HIP_CLANG_PATH",
     "HIP_DEVICE_LIB_PATH", "DEVICE_LIB_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT",
     "LD_LIBRARY_PATH", "PYTHONPATH"}
)  # fmt: skip


#: path variables a program joins names below (every path variable but HOME, whose folder
#: holds most projects, and PATH, which names programs only)
_ROOT_PATHS = _ENV_PATHS - {"HOME"}


def which(name: str, *, avoid: Iterable[Path | str] = (), path: str | None = None) -> str | None:
    """``name`` looked up on the sanitized PATH (see :func:`safe_path`): an absolute path or
    None; never a program whose real path is inside a folder of ``avoid``."""
    search = safe_path(path, avoid=avoid)
    folders = avoided(avoid)
    for entry in search.split(os.pathsep) if search else ():
        found = shutil.which(name, path=entry)
        # a link on an outside PATH entry to a program inside an avoided folder is that
        # program: passed over too
        if found and not (folders and _inside(found, folders)):
            return found
    return None


@dataclass(frozen=True)
class Completed:
    """What a program did: its exit code (None when it was killed by us), its output and how
    the run ended: ``exit``, ``timeout`` or ``overflow`` (printed more than the limit)."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    ended: str

    def text(self) -> str:
        """stderr then stdout, decoded (bad bytes replaced)."""
        both = self.stderr + b"\n" + self.stdout
        return both.decode("utf-8", errors="replace")


def run(
    argv: Sequence[str],
    *,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: str | Path = NEUTRAL_CWD,
    max_output: int = MAX_OUTPUT,
    max_memory: int | None = None,
    confine: sandbox.Confinement | None = None,
    max_file: int | None = None,
) -> Completed:
    """Run ``argv`` (``argv[0]`` an absolute path) with no shell, stdin closed, in its own
    process group, from ``cwd``, with ``env`` (default: :func:`safe_env`). Raises ``OSError``
    when it cannot be started; never waits past ``timeout_s``. ``max_memory``: bytes of data
    (heap and private mappings, ``RLIMIT_DATA``) the program and the programs it starts may
    each use, set before it starts (a compiler fed a macro bomb grew to 3 GB). ``max_file``:
    the largest file it may write (``RLIMIT_FSIZE``). ``confine``: where it may read, write
    and run (:mod:`gpuport.sandbox`, Landlock); raises ``PermissionError`` when the kernel
    cannot confine it and the user did not ask to go without (:func:`sandbox.refusal`)."""
    args = [str(a) for a in argv]
    if not args or not Path(args[0]).is_absolute():
        raise ValueError(f"subproc.run needs an absolute program path, got {args[:1]!r}")
    if any("\0" in a for a in args):
        raise ValueError("an argument holds a NUL byte")
    if confine is not None and (why := sandbox.refusal()) is not None:
        raise PermissionError(why)
    limits = {"RLIMIT_DATA": max_memory, "RLIMIT_FSIZE": max_file}
    kept = {k: int(v) for k, v in limits.items() if v is not None}
    if kept or confine is not None:
        if not os.access(args[0], os.X_OK):  # as Popen would say, not the trampoline's exit
            raise FileNotFoundError(f"cannot run {args[0]}: not an executable file")
        args = sandbox.trampoline_argv(args, limits=kept, confine=confine)
    proc = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(safe_env() if env is None else env),
        cwd=str(cwd),
        start_new_session=True,
        close_fds=True,
    )
    out, err, ended = _collect(proc, timeout_s, max_output)
    return Completed(proc.returncode if ended == "exit" else None, out, err, ended)


def _collect(
    proc: subprocess.Popen[bytes], timeout_s: float, limit: int
) -> tuple[bytes, bytes, str]:
    """Both streams, read as they come: (stdout, stderr, how it ended).

    Ends "exit" (the program exited and its output is complete, or stopped arriving soon
    after), "timeout" or "overflow"; in the last two the process group has been killed.
    Never waits on a pipe that a process outside the group keeps open.
    """
    if proc.stdout is None or proc.stderr is None:  # pragma: no cover - Popen(PIPE) sets both
        raise RuntimeError("program started without output pipes")
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    deadline = time.monotonic() + timeout_s
    drain_until: float | None = None
    ended = "exit"
    with selectors.DefaultSelector() as sel:
        for fd in buffers:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            now = time.monotonic()
            if proc.poll() is not None and drain_until is None:
                drain_until = now + _DRAIN_S
            if drain_until is not None and now >= drain_until:
                break  # the program is done; whoever still holds its pipes is not waited for
            if now >= deadline:
                ended = "timeout"
                break
            wait = min(deadline, drain_until or deadline, now + 0.1) - now
            for key, _ in sel.select(timeout=max(wait, 0.0)):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(fd)
                    continue
                buffers[fd] += chunk
                if len(buffers[fd]) > limit:
                    ended = "overflow"
            if ended == "overflow":
                break
        leftovers = bool(sel.get_map())
    if ended == "exit" and proc.poll() is None:  # closed its output but still running
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            ended = "timeout"
    if ended != "exit" or leftovers:
        _kill_group(proc)  # the program, or what it left running in its group
    for stream in (proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=2.0)
    return bytes(buffers[out_fd]), bytes(buffers[err_fd]), ended


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
