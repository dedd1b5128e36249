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

from gpuport import sandbox

__all__ = ["NEUTRAL_CWD", "Completed", "run", "safe_env", "safe_path", "which"]

#: The working folder of every program gpuport starts (unless it runs in its own temp folder).
NEUTRAL_CWD = "/"
#: Bytes kept per stream unless a caller asks for another limit.
MAX_OUTPUT = 256_000
_CHUNK = 65536
# Once the program itself has exited, how long output still held open by a stray child may
# keep arriving before we stop listening.
_DRAIN_S = 0.5


def _inside(entry: str, folders: list[str]) -> bool:
    real = os.path.realpath(entry)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def safe_path(value: str | None = None, *, avoid: Iterable[Path | str] = ()) -> str:
    """``value`` (default: this process's PATH) with only absolute entries that are not inside
    any of the folders in ``avoid`` (the project being scanned or translated)."""
    raw = os.environ.get("PATH", os.defpath) if value is None else value
    folders = [os.path.realpath(f) for f in avoid]
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
    env.update(extra or {})
    return env


def which(name: str, *, avoid: Iterable[Path | str] = (), path: str | None = None) -> str | None:
    """``name`` looked up on the sanitized PATH (see :func:`safe_path`): an absolute path or
    None; never a program whose real path is inside a folder of ``avoid``."""
    search = safe_path(path, avoid=avoid)
    folders = [os.path.realpath(f) for f in avoid]
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
