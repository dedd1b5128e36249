"""What the interpreter was given by a project's environment, undone before gpuport imports.

A user working inside a project has that project's ``.envrc`` (direnv, mise...) in their
environment. Some of it acts on gpuport's *own* process, not on the programs it starts
(twenty-sixth re-run): ``LD_LIBRARY_PATH`` into the project made ``import ctypes`` load the
project's ``libffi``; ``PYTHONPATH`` made ``import typer`` run the project's ``typer.py``;
``PYTHONPYCACHEPREFIX`` loaded the project's bytecode for ``difflib`` and wrote gpuport's
through a link; ``PYTHONINSPECT`` left a prompt waiting on stdin. :func:`clean_start` runs
first in :func:`gpuport.cli.entry.main`, with the standard library only:

* import paths (``sys.path``) inside the project around the current folder, or relative, are
  dropped, but for gpuport's own folder and the interpreter's;
* a bytecode cache folder that is relative, or reached through the project, is not used;
* when ``LD_LIBRARY_PATH`` has an entry inside the project (or a relative one), or
  ``PYTHONINSPECT``/``PYTHONSTARTUP`` is set by it, the interpreter is started again (once)
  with those entries removed: the loader and the interpreter read them only at start.

What runs before this (``sitecustomize``, a ``.pth`` file, ``LD_PRELOAD``) is out of gpuport's
reach and documented (docs/security.md).
"""

# os.path, not pathlib: nothing may be imported before the import path is cleaned here (a
# project's fnmatch.py on PYTHONPATH would be pathlib's)
# ruff: noqa: PTH112, PTH113, PTH114, PTH117, PTH118, PTH120, PTH206

import os
import sys

from gpuport.markers import MARKERS

__all__ = ["clean_start", "foreign_import_path", "holds", "own_folders", "project_tops"]

#: set in the environment of the interpreter started again, so that it is done once
AGAIN = "GPUPORT_CLEAN_START"


def _stops() -> list[str]:
    out = [os.sep]
    home = passwd_home()
    if home:
        out.append(os.path.realpath(home))
    return out


def passwd_home() -> str | None:
    """The user's home folder from the password database, without loading a library the
    environment can choose: glibc's NSS modules (``libnss_systemd.so.2``) are found through
    ``LD_LIBRARY_PATH``, and a project's copy ran in gpuport before the restart that drops it
    (thirty-first re-run F1). ``/etc/passwd`` is read directly; ``pwd`` (every NSS source) is
    asked only when the loader's search path is the system's."""
    uid = str(os.getuid())
    try:
        with open("/etc/passwd", "rb") as f:  # noqa: PTH123 - pathlib not loaded yet
            text = f.read(1 << 22).decode("utf-8", "replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 7 and fields[2] == uid and fields[5].startswith(os.sep):
            return fields[5]
    if os.environ.get("LD_LIBRARY_PATH") or os.environ.get("LD_PRELOAD"):
        return None
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def project_tops(folder: str) -> list[str]:
    """The highest folder above ``folder`` (real) with a ``.git`` and the highest with a project
    file, below ``/`` and the home folder (as :func:`gpuport.subproc.project_around`), and the
    nearest with a project file: a project inside a venv inside another checkout is not the
    venv's (twenty-seventh re-run)."""
    stops = _stops()
    git = marked = nearest = None
    at = folder
    while at not in stops:
        found = [m for m in MARKERS if os.path.lexists(os.path.join(at, m))]
        if found:
            marked = at
            nearest = nearest or at
        if ".git" in found:
            git = at
        parent = os.path.dirname(at)
        if parent == at:
            break
        at = parent
    return list(dict.fromkeys(t for t in (git, marked, nearest) if t is not None))


def _inside(path: str, tops: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == t or real.startswith(t.rstrip(os.sep) + os.sep) for t in tops)


def _reached_through(path: str, tops: list[str]) -> bool:
    """``path`` as written, or any folder on the way to it, resolves inside ``tops``. A path
    longer than any real one (4 KB, 256 folders) counts as reaching in: each folder on the way
    is resolved, and a 16 KB ``/a/a/a...`` took a minute (thirtieth re-run F4)."""
    if _too_long(path):
        return True
    # each folder's real path from its parent's, resolving only the links on the way: a
    # realpath per ancestor was quadratic in the depth, and many deep entries in a few
    # variables stalled every command (thirty-first re-run F9)
    resolved = os.sep
    for part in os.path.abspath(path).split(os.sep):  # noqa: PTH100 - the links on the way
        if not part:
            continue
        resolved = os.path.join(resolved, part)
        if os.path.islink(resolved):
            resolved = os.path.realpath(resolved)
        if any(resolved == t or resolved.startswith(t.rstrip(os.sep) + os.sep) for t in tops):
            return True
    return False


def _too_long(path: str) -> bool:
    return len(path) > 4096 or path.count(os.sep) > 256


def own_folders(package: str) -> list[str]:
    """The interpreter's prefixes, gpuport's package folder and the folder it is imported from
    (real paths): where the import path may lie even inside a project, when they lie deeper
    than the project's top (a venv inside the checkout; gpuport's own tests on its tree)."""
    own = [os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, package)]
    own.append(os.path.dirname(own[-1]))
    return own


def foreign_import_path(entry: str, tops: list[str], own: list[str]) -> bool:
    """Whether the import path entry ``entry`` would import a project's code for gpuport.

    * inside a project top, unless it lies in one of ``own`` that lies *below* that top (a
      ``.venv`` in the checkout); a project *inside* the interpreter's prefix (``pip install -e
      git+...`` clones into ``$VIRTUAL_ENV/src``) gets no pass (twenty-seventh re-run);
    * *above* a project top (``PYTHONPATH=~`` with the checkout ``~/typer`` imports it as the
      ``typer`` package: twenty-seventh re-run), unless it is one of ``own`` or inside one.
    """
    real = os.path.realpath(entry)
    for top in tops:
        if _inside(real, [top]):
            if not any(_inside(real, [o]) and _below(o, top) for o in own):
                return True
        elif _inside(top, [real]) and not _inside(real, own):
            return True
    return False


def _below(inner: str, top: str) -> bool:
    """``inner`` lies strictly inside ``top`` (both real)."""
    return inner != top and inner.startswith(top.rstrip(os.sep) + os.sep)


def clean_start() -> None:
    """Undo what the project around the current folder set for this interpreter (see the
    module's text); may start the interpreter again, and never returns then."""
    _bound_terminal_size()  # whoever set it
    _drop_unneeded()
    try:
        here = os.path.realpath(os.getcwd())  # noqa: PTH109 - pathlib not loaded yet
    except OSError:
        return
    tops = project_tops(here)
    for named in _named_paths():  # `cd ~; gpuport scan ~/proj` (thirty-first re-run F1)
        tops += [t for t in project_tops(named) if t not in tops]
    if not tops:
        return
    own = own_folders(os.path.dirname(__file__))

    def foreign(entry: str) -> bool:
        return not entry or not os.path.isabs(entry) or foreign_import_path(entry, tops, own)

    kept = [p for p in sys.path if not foreign(p)]
    if len(kept) != len(sys.path):
        sys.path[:] = kept
    if sys.pycache_prefix is not None:
        # Python looks for a module's bytecode at PREFIX + the module's own folder: a prefix
        # that holds a checkout named like the first folder of gpuport's install path (usr,
        # opt) is the project's too (twenty-eighth re-run F10); inside a project no prefix
        # from the environment is used at all
        sys.pycache_prefix = None
        sys.dont_write_bytecode = True
    _forget_library_roots(tops)
    _start_again_if_needed(tops)


#: variables libraries read in gpuport's own process after start to find files to load or
#: run: ``amdsmi`` loads ``$ROCM_PATH/lib/libamd_smi.so`` at import, CUDA/ROCm load the tool
#: library a hook variable names (twenty-ninth re-run F4)
_LIBRARY_ROOTS = (
    "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "HSA_PATH", "HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH",
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_INJECTION64_PATH", "HSA_TOOLS_LIB",
    "ROCP_TOOL_LIB", "ROCPROFILER_LIB", "NVTX_INJECTION64_PATH", "AMD_LOG_LEVEL_FILE",
    "CUDA_CACHE_PATH", "MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR",
)  # fmt: skip


#: a library root longer than this, or of more entries, is no real one (thirty-first re-run F9)
_MOST_ROOT_CHARS = 2048
_MOST_ROOT_ENTRIES = 8


def _home() -> str | None:
    """The user's own home folder as the password database has it (real), or None."""
    stops = _stops()
    return stops[1] if len(stops) > 1 else None


def holds(entry: str, tops: list[str]) -> bool:
    """Whether ``entry`` (real) holds one of ``tops`` below it (real paths)."""
    real = os.path.realpath(entry).rstrip(os.sep) + os.sep
    return any(t.startswith(real) for t in tops)


def _forget_library_roots(tops: list[str]) -> None:
    """Inside a project, drop from this process's environment the library roots and tool
    hooks that are relative, lie in the project or hold it (a checkout named ``lib`` below
    ``ROCM_PATH``), and put back the user's own home for a ``HOME`` that is not it and lies
    in or holds the project (a checkout named ``.local`` below it gave ROCm's Python tools the
    project's ``usercustomize.py``; MIOpen and the CUDA JIT keep caches there: twenty-ninth
    re-run F3). Programs gpuport starts get this environment, sanitized again."""
    for name in _LIBRARY_ROOTS:
        value = os.environ.get(name)
        if value is None:
            continue
        parts = [p for p in value.split(os.pathsep) if p]
        if (
            len(value) > _MOST_ROOT_CHARS
            or len(parts) > _MOST_ROOT_ENTRIES  # a real root is one folder, or a few
            or any(
                not os.path.isabs(p) or _reached_through(p, tops) or holds(p, tops) for p in parts
            )
        ):
            del os.environ[name]
    home, own = os.environ.get("HOME"), _home()
    if (
        home
        and own
        and os.path.realpath(home) != own
        and (not os.path.isabs(home) or _reached_through(home, tops) or holds(home, tops))
    ):
        os.environ["HOME"] = own


#: the widest terminal gpuport lays out for: rich pads every line to COLUMNS, and a project's
#: environment can set it to 1.5 billion (3 GB) or past an index (twenty-eighth re-run F2)
_MOST_COLUMNS = 1000
_MOST_LINES = 10000


def _bound_terminal_size() -> None:
    # typer's own TERMINAL_WIDTH and rich's JUPYTER_* sizes lay out help text the same way
    # (thirty-first re-run F5)
    for name, most in (
        ("COLUMNS", _MOST_COLUMNS),
        ("LINES", _MOST_LINES),
        ("TERMINAL_WIDTH", _MOST_COLUMNS),
        ("JUPYTER_COLUMNS", _MOST_COLUMNS),
        ("JUPYTER_LINES", _MOST_LINES),
    ):
        value = os.environ.get(name)
        if value is None:
            continue
        value = value.strip()
        # ASCII digits only: "²" is a digit to str.isdigit and not to int() (thirtieth F3)
        digits = value.isascii() and value.isdigit()
        if not digits or len(value) > 6 or int(value) > most:
            if digits and len(value) <= 30:
                os.environ[name] = str(most)
            else:
                del os.environ[name]


def _named_paths() -> list[str]:
    """The folders of the paths named on the command line (the first 16 words that are not
    options and exist): the project gpuport is asked about, wherever it is run from."""
    out: list[str] = []
    for word in sys.argv[1:17]:
        if word.startswith("-") or not word or len(word) > 4096 or "\0" in word:
            continue
        try:
            real = os.path.realpath(word)
            if os.path.isfile(real):
                real = os.path.dirname(real)
            if os.path.isdir(real) and real not in out:
                out.append(real)
        except (OSError, ValueError):
            continue
    return out


#: what gpuport's own process never needs and the standard library or a dependency would act
#: on (thirty-first re-run): ``_PYTHON_SYSCONFIGDATA_NAME`` made ``sysconfig`` (through
#: pydantic's ``zoneinfo``) import ``antigravity``, which ran ``$BROWSER`` (F3); libcrypto
#: loads the modules ``OPENSSL_CONF``/``OPENSSL_MODULES`` name when ``hashlib`` starts (F6)
_UNNEEDED_PREFIXES = ("_PYTHON_", "OPENSSL_")
_UNNEEDED = frozenset({"BROWSER", "SSL_CERT_FILE", "SSL_CERT_DIR", "GCONV_PATH", "LOCPATH"})
#: gettext reads ``<dir>/<name>/LC_MESSAGES/messages.mo`` for each name here (typer's help):
#: an absolute "name" read a project's file whole (``/dev/zero``, a FIFO; F2)
_LOCALE_NAMES = ("LANGUAGE", "LANG", "LC_ALL", "LC_MESSAGES", "LC_CTYPE")


def _drop_unneeded() -> None:
    """Remove from this process's environment what it never needs (above), locale names that
    are paths, and the interpreter's own debug settings that make every step slow or
    quadratic (``PYTHONINTMAXSTRDIGITS=0``: a 3 MB integer in a setup.py took minutes, F4;
    ``PYTHONTRACEMALLOC``: ``--version`` took 65-99 s, F8). Whoever set them: gpuport's own
    process does not use them."""
    for name in list(os.environ):
        if name in _UNNEEDED or name.startswith(_UNNEEDED_PREFIXES):
            del os.environ[name]
    for name in _LOCALE_NAMES:
        value = os.environ.get(name)
        if value is not None and (
            "/" in value or len(value) > 128 or not value.isascii() or not value.isprintable()
        ):
            del os.environ[name]
    if sys.get_int_max_str_digits() == 0 or sys.get_int_max_str_digits() > 4300:
        sys.set_int_max_str_digits(4300)
    try:
        import _tracemalloc

        if _tracemalloc.is_tracing():
            _tracemalloc.stop()
    except ImportError:
        pass


def _plain(entry: str) -> bool:
    """An absolute path of plain characters: no ``$LIB``/``$ORIGIN`` token the loader expands,
    no ``;`` it splits on as well (twenty-seventh re-run)."""
    return entry.startswith("/") and all(c.isalnum() or c in "/._+@-" for c in entry)


#: interpreter settings read only at start: a prompt on stdin (INSPECT), a module imported
#: (STARTUP, WARNINGS), and debug modes that make every allocation or import slow (thirty-first
#: re-run F8: MALLOC, DEVMODE, TRACEMALLOC...)
_RESTART_PYTHON = (
    "PYTHONINSPECT", "PYTHONSTARTUP", "PYTHONWARNINGS", "PYTHONMALLOC", "PYTHONMALLOCSTATS",
    "PYTHONDEVMODE", "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME", "PYTHONINTMAXSTRDIGITS",
    "PYTHONVERBOSE", "PYTHONDEBUG", "PYTHONASYNCIODEBUG", "PYTHONDUMPREFS",
)  # fmt: skip


def _start_again_if_needed(tops: list[str]) -> None:
    env = dict(os.environ)
    changed = False
    for name in ("LD_LIBRARY_PATH",):
        value = env.get(name)
        if value is None:
            continue
        parts = value.replace(";", os.pathsep).split(os.pathsep)
        if len(value) > 16 * _MOST_ROOT_CHARS or len(parts) > 16 * _MOST_ROOT_ENTRIES:
            parts = []  # no loader path is that long: dropped whole (F9)
        # nor an entry that holds the project: the loader joins glibc-hwcaps/x86-64-v2, tls,
        # x86_64, haswell... below each entry, and a checkout named so is searched
        # (thirtieth re-run F1)
        good = [
            p
            for p in parts
            if p and _plain(p) and not _reached_through(p, tops) and not holds(p, tops)
        ]
        if good != value.split(os.pathsep):
            changed = True
            if good:
                env[name] = os.pathsep.join(good)
            else:
                del env[name]
    # PYTHONWARNINGS=ignore::mod.Cat imports `mod` at start (twenty-eighth re-run,
    # observation): too late for this process, but not for the restarted one
    for name in _RESTART_PYTHON:
        if env.pop(name, None) is not None:
            changed = True
    if env.pop("PYTHONPYCACHEPREFIX", None) is not None:  # as in clean_start (F10)
        changed = True
    if not changed:
        return
    if os.environ.get(AGAIN) == "1":
        # started again already, or the project's environment says so (it can set the
        # variable too: twenty-seventh re-run): what is left cannot be undone in this process
        sys.stderr.write(
            "gpuport: error: the environment still names the project for the interpreter "
            "(LD_LIBRARY_PATH, PYTHONINSPECT, PYTHONWARNINGS or PYTHONPYCACHEPREFIX); run "
            "gpuport outside "
            "the project's environment\n"
        )
        sys.stderr.flush()
        # not SystemExit: under PYTHONINSPECT the interpreter would open its prompt and wait
        # on the terminal (twenty-eighth re-run F12)
        os._exit(2)
    env[AGAIN] = "1"
    argv = list(getattr(sys, "orig_argv", []) or [sys.executable, *sys.argv])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *argv[1:]], env)  # noqa: S606 - argv, no shell
    except OSError:
        return  # not started again: the in-process cleaning above still holds
