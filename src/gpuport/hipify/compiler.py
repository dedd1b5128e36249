"""The one way gpuport compiles HIP: the clang that ``hipcc`` wraps, called directly, with no
shell (issue 23, item 1).

``hipcc`` (Debian's ``hipcc.pl``, ROCm 5.x) joins its arguments into one command string and
runs it through a shell, escaping every argument *except* one that ends in ``.a`` or ``.lo``:
a project flag such as ``-DX;id>x;.a`` in a Makefile or ``compile_commands.json`` ran as a
shell command. So gpuport never hands a project value to ``hipcc``:

* :func:`toolchain` asks ``hipcc`` once, with arguments that are all gpuport's own (a
  two-line probe in a throw-away folder, ``-###`` so nothing is compiled), which compiler it
  runs and with which HIP flags (``HIPCC_VERBOSE=1`` prints its ``hipcc-cmd:`` line). The
  compiler must be an absolute path outside the project.
* :func:`compile_argv` builds the compile as an argv list: that compiler, hipcc's own flags,
  ``--offload-arch``, ``-x hip``, the project flags that pass :func:`project_flag` and
  ``-c FILE -o OBJ``. It runs through :func:`gpuport.subproc.run` (sanitized PATH, stdin
  closed, a throw-away working folder, time and output limits).
* :func:`project_flag` is the grammar a project value must match: macro names and values
  without control characters or shell characters (``; | & $ ` < >``); standards (``c++17``,
  ``gnu++14``); include paths and ``-include`` files that resolve (links followed) inside the
  project or the output tree. Anything else is dropped and the reason goes into the report:
  a flag never reaches the compiler unchecked, and no project value makes the compiler read a
  file outside the project.
* :func:`shown_error` keeps the compiler's first error only when it comes from a file inside
  the project, the output tree or the toolchain's own headers: a source that includes
  ``/home/me/.aws/credentials`` gets "an error in a file outside the project", never a quote
  of that file.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuport import fileio, sandbox, subproc
from gpuport.models import EnvironmentProblem

from .compiler_messages import (
    NOT_JUDGED,
    dependencies,
    first_error_line,
    hidden_include,
    read_outside,
    shown_error,
)
from .compiler_messages import within as _within

__all__ = [
    "CHECK_BUDGET_S",
    "COMPILE_MAX_MEMORY",
    "COMPILE_TIMEOUT_S",
    "NOT_JUDGED",
    "Compiled",
    "Toolchain",
    "compile_argv",
    "compile_unit",
    "dependencies",
    "first_error_line",
    "project_flag",
    "read_outside",
    "shown_error",
    "toolchain",
]

COMPILE_TIMEOUT_S = 120
#: Data one compiler process may use (RLIMIT_DATA): clang's HIP compiles of real kernels stay
#: well under 2 GB; a macro bomb in a project file grew past 3 GB.
COMPILE_MAX_MEMORY = 4 << 30
#: The largest file one compiler process may write (RLIMIT_FSIZE): real objects stay far below
COMPILE_MAX_FILE = 1 << 30
#: Units that ran into a limit (time, memory, output) before the rest are not compiled: a
#: 130-byte ``.rept`` bomb costs 20 s and 4 GiB per unit, and a project can hold hundreds
LIMITED_UNITS_MAX = 2
#: A unit that takes this long (its compile and preprocessor passes) counts as one that ran
#: into a limit: units that stayed just under the time limit (a 1 KB unit including itself
#: twice per level, 100 s each) were all compiled until the run's budget (sixth review)
SLOW_UNIT_S = 60
#: Time one ``--check`` run may spend compiling in all: each unit has COMPILE_TIMEOUT_S, so
#: N units that each stall (an #include of a FIFO) took N x 120 s.
CHECK_BUDGET_S = 1800
PROBE_TIMEOUT_S = 60
#: Compiler output kept per stream; a compile that prints more is stopped (an error storm).
MAX_OUTPUT = 2_000_000
_PROBE_ARCH = "gfx90a"  # any target hipcc knows; removed from the flags it shows
_VALUE_MAX = 4096
#: Never in a project value, even though the compiler gets an argv list: a shell would read
#: them (hipcc.pl pasted values ending in ``.a``/``.lo`` raw into a shell command).
_SHELL_CHARS = frozenset(";|&`$<>\n\r")
_STD_PREFIXES = ("c++", "gnu++", "c", "gnu")


@dataclass(frozen=True)
class Toolchain:
    """The compiler ``hipcc`` runs and its HIP flags (without ``--offload-arch``)."""

    hipcc: str
    compiler: str
    flags: tuple[str, ...]
    include_roots: tuple[str, ...]  # the toolchain's own header folders (messages shown)


_CACHE: dict[tuple[str, int, int], Toolchain] = {}


def hip_env(avoid: Iterable[Path | str] = ()) -> dict[str, str]:
    """The environment of every HIP compile: HIP_PLATFORM=amd, a sanitized PATH, and none of
    hipcc's own switches that would add flags or change the compiler behind our back."""
    env = subproc.safe_env({"HIP_PLATFORM": "amd", "LC_ALL": "C"}, avoid=avoid)
    for name in list(env):
        if name.startswith(("HIPCC_", "HIP_CLANG_", "HCC_")) or name in ("CXXFLAGS", "CPATH"):
            env.pop(name, None)
    for name in ("CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "OBJC_INCLUDE_PATH"):
        env.pop(name, None)
    return env


def toolchain(hipcc: str, *, avoid: Sequence[Path | str] = ()) -> Toolchain:
    """What ``hipcc`` at this absolute path compiles with (cached per path, mtime and size).

    Raises :class:`EnvironmentProblem` (exit 3) when hipcc cannot be asked or its answer is
    not a compiler gpuport can run directly.
    """
    try:
        st = Path(hipcc).stat()
    except OSError as exc:
        raise EnvironmentProblem(f"cannot run hipcc: {exc.strerror or exc}") from None
    key = (os.path.realpath(hipcc), st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    with tempfile.TemporaryDirectory(prefix="gpuport-hipcc-") as tmp:
        probe = Path(tmp) / "probe.hip"
        fileio.write_atomic(probe, "__global__ void k(float* x) { x[0] = 1.0f; }\n")
        tail = ["-x", "hip", "-c", str(probe), "-o", str(Path(tmp) / "probe.o"), "-###"]
        env = hip_env(avoid)
        env["HIPCC_VERBOSE"] = "1"
        try:
            done = subproc.run(
                [hipcc, f"--offload-arch={_PROBE_ARCH}", *tail],
                timeout_s=PROBE_TIMEOUT_S,
                env=env,
                cwd=tmp,
            )
        except (OSError, ValueError) as exc:
            raise EnvironmentProblem(f"cannot run hipcc: {exc}") from None
        found = _parse_verbose(done.text(), tail)
    if found is None:
        raise EnvironmentProblem(
            f"{hipcc} did not say which compiler it runs (HIPCC_VERBOSE=1 printed no "
            "'hipcc-cmd:' line); the compile check calls that compiler directly and cannot "
            "go on"
        )
    compiler, flags = found
    real = os.path.realpath(compiler)
    if not Path(compiler).is_absolute() or not os.access(real, os.X_OK):
        raise EnvironmentProblem(f"hipcc runs {compiler!r}, which is not an executable path")
    if any(_within(real, f) for f in subproc.avoided(avoid)):
        raise EnvironmentProblem(f"hipcc runs {compiler}, inside the project; not run")
    chain = Toolchain(hipcc, compiler, tuple(flags), tuple(_include_roots(compiler, flags)))
    _CACHE[key] = chain
    return chain


def _parse_verbose(output: str, tail: Sequence[str]) -> tuple[str, list[str]] | None:
    """(compiler, flags) from hipcc's ``hipcc-cmd:`` line, our own arguments and the probe's
    ``--offload-arch`` taken out."""
    for line in output.splitlines():
        if not line.startswith("hipcc-cmd:"):
            continue
        try:
            words = shlex.split(line[len("hipcc-cmd:") :])
        except ValueError:
            return None
        if len(words) < len(tail) + 1:
            return None
        for start in range(len(words) - len(tail), 0, -1):
            if words[start : start + len(tail)] == list(tail):
                flags = [w for w in words[1:start] if w != f"--offload-arch={_PROBE_ARCH}"]
                return words[0], flags
        return None
    return None


#: The system's header folders (the C library's, the C++ library's and gcc's own).
SYSTEM_INCLUDE_ROOTS = ("/usr/include", "/usr/local/include", "/usr/lib/gcc")


def _include_roots(compiler: str, flags: Sequence[str]) -> list[str]:
    """The folders of the toolchain's own headers: hipcc's ``-isystem`` folders, the ROCm
    path's include folder, the compiler's resource headers and the system include folders."""
    roots: list[str] = []
    it = iter(flags)
    for word in it:
        if word == "-isystem":
            roots.append(next(it, ""))
        elif word.startswith("-isystem") and len(word) > len("-isystem"):
            roots.append(word[len("-isystem") :])
        elif word.startswith("--rocm-path="):
            roots.append(str(Path(word.split("=", 1)[1]) / "include"))
        elif word.startswith("--hip-device-lib-path="):
            roots.append(word.split("=", 1)[1])
    real = Path(os.path.realpath(compiler))
    roots += [str(real.parent.parent / "lib"), str(real.parent.parent / "include")]
    roots += [*SYSTEM_INCLUDE_ROOTS, "/opt/rocm/include"]
    return sorted({os.path.realpath(r) for r in roots if r})


# ----------------------------------------------------------------------- project flags


def _clean(value: str) -> bool:
    return (
        0 < len(value) <= _VALUE_MAX
        and all(c >= " " and c != "\x7f" for c in value)
        and not _SHELL_CHARS.intersection(value)
    )


def _macro_name(text: str) -> bool:
    name, paren, params = text.partition("(")
    ok = (
        bool(name)
        and (name[0].isalpha() or name[0] == "_")
        and all(c.isalnum() or c == "_" for c in name)
    )
    if ok and paren:  # a function-like macro: -DF(a,b)=...
        ok = params.endswith(")") and all(c.isalnum() or c in "_, ." for c in params[:-1])
    return ok and name.isascii()


def project_flag(
    flag: str, value: str, roots: Sequence[Path]
) -> tuple[list[str] | None, str | None]:
    """One project flag as compiler arguments, or (None, why it was dropped).

    ``roots``: the folders a path may resolve into (the project and the output tree), links
    followed. Paths in ``value`` are absolute already (the caller resolves them).
    """
    shown = f"{flag}{'' if flag in ('-D', '-U', '-std=') else ' '}{value}"
    if not _clean(value):
        return None, f"{shown[:80]!r}: empty, too long, or holds control or shell characters"
    if flag in ("-D", "-U"):
        name = value.split("=", 1)[0]
        if not _macro_name(name) or (flag == "-U" and "=" in value):
            return None, f"{shown[:80]!r}: not a macro name"
        return [f"{flag}{value}"], None
    if flag == "-std=":
        plain = value.isascii() and value.replace("+", "").isalnum()
        if not (value.startswith(_STD_PREFIXES) and plain):
            return None, f"{shown[:80]!r}: not a language standard"
        return [f"-std={value}"], None
    if flag in ("-I", "-isystem", "-iquote", "-include"):
        if value.startswith("-") or not Path(value).is_absolute():
            return None, f"{shown[:80]!r}: not a path"
        real = os.path.realpath(value)
        if not any(_within(real, os.path.realpath(r)) for r in roots):
            return None, (
                f"{flag} {value}: outside the project, not passed to the compiler "
                "(hipify --check-include DIR lets a folder in)"
            )
        return ([f"-I{value}"] if flag == "-I" else [flag, value]), None
    return None, f"{shown[:80]!r}: not a flag the compile check passes on"


def compile_argv(
    chain: Toolchain, unit: Path, offload_archs: Sequence[str], flags: Sequence[str], obj: Path
) -> list[str]:
    """The compile of one translation unit, as an argv list (absolute paths)."""
    return [
        chain.compiler,
        *chain.flags,
        *(f"--offload-arch={a}" for a in offload_archs),
        "-x",
        "hip",
        *flags,
        "-c",
        str(unit),
        "-o",
        str(obj),
        "-MD",  # the files the compile read, to judge whether its message may be quoted
        "-MF",
        str(obj.with_suffix(".d")),
    ]


@dataclass(frozen=True)
class Compiled:
    """One compile: did it succeed, its first error (shown only from allowed files), the
    argv with the object file shown as ``x.o``."""

    ok: bool
    error: str | None
    command: list[str]
    limited: bool = False  # it ran into a time, memory or output limit


def compile_unit(
    chain: Toolchain,
    unit: Path,
    offload_archs: Sequence[str],
    flags: Sequence[str],
    *,
    roots: Sequence[Path],
    avoid: Sequence[Path | str] = (),
    timeout_s: float = COMPILE_TIMEOUT_S,
) -> Compiled:
    """Compile ``unit`` in a throw-away folder; ``roots`` are the folders whose compiler
    messages may be quoted (the project, the output tree). ``timeout_s`` holds for the unit
    in all (the compile and any preprocessor passes after it); a unit that took
    :data:`SLOW_UNIT_S` or more counts as having run into a limit (``limited``)."""
    started = time.monotonic()
    done = _compile_unit(
        chain, unit, offload_archs, flags, roots=roots, avoid=avoid, deadline=started + timeout_s
    )
    if time.monotonic() - started >= SLOW_UNIT_S and not done.limited:
        done = dataclasses.replace(done, limited=True)
    return done


def _compile_unit(
    chain: Toolchain,
    unit: Path,
    offload_archs: Sequence[str],
    flags: Sequence[str],
    *,
    roots: Sequence[Path],
    avoid: Sequence[Path | str],
    deadline: float,
) -> Compiled:
    timeout_s = max(1.0, deadline - time.monotonic())
    with tempfile.TemporaryDirectory(prefix="gpuport-hipify-") as tmp:
        argv = compile_argv(chain, unit, offload_archs, flags, Path(tmp) / "x.o")
        shown = [Path(a).name if a.startswith(tmp) else a for a in argv]  # x.o, x.d
        allowed = [*roots, Path(tmp), *map(Path, chain.include_roots)]
        cage = sandbox.compile_confinement(read=allowed, run=toolchain_roots(chain), work=tmp)
        env = {**hip_env(avoid), "TMPDIR": tmp}
        done = confined_run(argv, timeout_s=timeout_s, env=env, cwd=tmp, confine=cage)
        if done.ended == "timeout":
            return Compiled(False, f"timed out after {timeout_s:g} s", shown, limited=True)
        depfile = Path(tmp) / "x.d"
        lists = [(depfile, False)]
        if not depfile.exists():  # a fatal error: ask the preprocessor what it reads
            made = _preprocessor_list(
                chain, unit, offload_archs, flags, Path(tmp), env, deadline, cage
            )
            lists = [(d, True) for d in made]
        if (
            refused_read(done)
            or hidden_include(done.text(), allowed, flags)
            or any(read_outside(d, allowed, generated=g) is not None for d, g in lists)
        ):
            return Compiled(False, NOT_JUDGED, shown)  # compiled or not: the same words
        if done.returncode == 0 and done.ended == "exit":
            return Compiled(True, None, shown)
        error = shown_error(done.text(), allowed, depfile)
        limited = done.ended == "overflow"
        if "failed due to signal" in done.text() or (done.returncode or 0) < 0:
            limited = True
            error = (  # words of gpuport's own: nothing of the project's text
                "the compiler crashed or ran out of memory (each compiler process may use "
                f"{COMPILE_MAX_MEMORY >> 30} GiB); its message is not shown"
            )
        if done.ended == "overflow":
            error = f"{error} (the compiler printed over {MAX_OUTPUT // 1_000_000} MB; stopped)"
        return Compiled(False, error.replace(tmp + os.sep, ""), shown, limited=limited)


def refused_read(done: subproc.Completed) -> bool:
    """Whether the confinement refused the compile a file (the project's link to an outside
    file, an assembler ``.include``): judged as a read outside the project, whatever else."""
    return done.returncode != 0 and b": Permission denied" in done.stdout + done.stderr


def toolchain_roots(chain: Toolchain) -> list[Path]:
    """The folders a HIP compile may read and run from: the compiler's install folder and
    the ROCm path hipcc gives it (``--rocm-path=``: clang reads its version file, device
    libraries and headers there)."""
    roots = [install_root(chain.compiler)]
    roots += [Path(f.split("=", 1)[1]) for f in chain.flags if f.startswith("--rocm-path=")]
    return roots


def install_root(program: str) -> Path:
    """The folder a compiler is installed in (``PREFIX`` of ``PREFIX/bin/clang``), links
    followed: it may read and run what lies there. Never ``/``, the home folder or a folder
    above it: a wrapper ``~/bin/nvcc`` would have let the compiler read all of ``$HOME``
    (sixth review); then only the program's own folder."""
    real = Path(os.path.realpath(program))
    root = real.parent.parent
    # the home folders as the password database has them and as $HOME says (a project's
    # environment can set HOME: twenty-eighth re-run, observation)
    from gpuport.subproc import stops

    homes = {*stops(), Path(os.path.realpath(Path.home()))} - {Path("/")}
    if root == Path("/") or any(h == root or h.is_relative_to(root) for h in homes):
        return real.parent
    return root


def confined_run(
    argv: Sequence[str],
    *,
    timeout_s: float,
    env: dict[str, str],
    cwd: str,
    confine: sandbox.Confinement,
) -> subproc.Completed:
    """One compiler run: confined (:mod:`gpuport.sandbox`), memory, file-size, time and
    output limits. Raises :class:`EnvironmentProblem` when it cannot be started or confined."""
    try:
        done = subproc.run(
            argv,
            timeout_s=timeout_s,
            env=env,
            cwd=cwd,
            max_output=MAX_OUTPUT,
            max_memory=COMPILE_MAX_MEMORY,
            max_file=COMPILE_MAX_FILE,
            confine=confine,
        )
    except PermissionError as exc:
        raise EnvironmentProblem(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise EnvironmentProblem(f"cannot run the compiler: {exc}") from None
    if done.returncode == sandbox.CANNOT_CONFINE and done.stderr.startswith(b"gpuport: "):
        raise EnvironmentProblem(done.stderr.decode("utf-8", "replace").strip()[:300])
    return done


def _preprocessor_list(
    chain: Toolchain,
    unit: Path,
    offload_archs: Sequence[str],
    flags: Sequence[str],
    tmp: Path,
    env: dict[str, str],
    deadline: float,
    cage: sandbox.Confinement,
) -> list[Path]:
    """The ``-E -M -MG`` lists of ``unit`` (host, and device per target): what the
    preprocessor reads, written even when a header is missing (clang writes no ``-MD``
    list after a fatal error)."""
    out = []
    sides = [["--cuda-host-only", *(f"--offload-arch={a}" for a in offload_archs)]]
    sides += [["--cuda-device-only", f"--offload-arch={a}"] for a in offload_archs]
    for i, side in enumerate(sides):
        dep = tmp / f"m{i}.d"
        argv = [chain.compiler, *chain.flags, *side, "-x", "hip", *flags, "-E", "-M", "-MG"]
        argv += ["-MF", str(dep), "-o", str(tmp / f"m{i}.txt"), str(unit)]
        out.append(dep)
        left = deadline - time.monotonic()
        if left < 1:  # the unit's time is spent: no list, which reads as "may have read"
            continue
        confined_run(argv, timeout_s=left, env=env, cwd=str(tmp), confine=cage)
    return out
