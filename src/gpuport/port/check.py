"""``gpuport port --check``: the changed CUDA/HIP files compiled for AMD (hipcc) and NVIDIA (nvcc).

Each changed translation unit (``.cu .cpp .cc .cxx .hip``), and up to two units of the project
that include each changed header, is compiled the way ``hipify --check`` compiles, through the
same hardened path (:mod:`gpuport.hipify.compiler`): the compiler ``hipcc`` wraps, called
directly as an argv list with hipcc's own flags, no shell, a sanitized PATH, stdin closed,
time and output limits, and the same status words: ``ok``, ``failed``, ``inconclusive`` (a
third-party header that is not installed here) or ``skipped`` (the compiler is not
installed). nvcc runs the same way (:func:`gpuport.subproc.run`). Without ``--apply`` the
changed files are written into a throw-away copy of the project's native and build files,
never into the project.

What reaches a compiler from the project is what ``hipify --check`` lets through: the
project's ``-I``/``-isystem``/``-iquote``/``-include``/``-D``/``-U``/``-std=`` flags, each
checked by :func:`gpuport.hipify.compiler.project_flag` (macro names, standards, paths that
resolve inside the project); the others are dropped and named in the result's ``notes``. A
compiler message is quoted only when it comes from a file of the project or the toolchain.
"""

from __future__ import annotations

import os
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Sequence
from importlib.util import find_spec
from pathlib import Path

from gpuport import fileio, sandbox, subproc, textre
from gpuport.hipify import compiler
from gpuport.hipify.check import UNITS, check_budget, classify, project_flags, stop_reason
from gpuport.hipify.compiler_messages import hidden_include
from gpuport.hipify.run import CompileStatus
from gpuport.models import EnvironmentProblem, GpuportError
from gpuport.port.model import CheckResult, FileDiff
from gpuport.scan.project.files import MOST_FOLDER_DEPTH

__all__ = ["check_files"]

TIMEOUT_S = compiler.COMPILE_TIMEOUT_S
_NATIVE = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx", ".inl", ".hip")
_GCC_MISSING = textre.compile(r"fatal error: ([^\s:]+): No such file or directory")


def _torch_includes() -> list[str]:
    """torch's own headers (CUDA-flavoured even in a CPU wheel) for nvcc, found without
    importing torch: gpuport's choice, not a project value."""
    spec = find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent / "include"
    incs = [base, base / "torch" / "csrc" / "api" / "include"]
    py = sysconfig.get_paths().get("include")
    return [f"-I{p}" for p in incs if p.is_dir()] + ([f"-I{py}"] if py else [])


def _nvcc_error(output: str, allowed: Sequence[Path], depfile: Path) -> str:
    """nvcc's first error as :func:`gpuport.hipify.compiler.shown_error` shows hipcc's (its
    front end writes ``FILE(LINE): error``, which that function knows too)."""
    return compiler.shown_error(output, allowed, depfile)


#: What an argument of the project's (a flag, the unit's path) may hold to reach nvcc. nvcc
#: builds command lines for its host compiler and runs them through a shell: a `-D` value
#: ending in `\\` let the next value's spaces split into `-B /[!p]*/.../DIR/`, globbed by that
#: shell, and gcc ran the project's own `cc1plus` from DIR (the third review). Nothing the
#: shell reads (quotes, `\\`, spaces, globs, `$`, `!`, `~`, braces, parentheses) gets through,
#: nor a comma (nvcc splits `-I/a,/b` into two folders) or `@` (a response file).
#: An ``#include`` and the path it names
_INCLUDE = textre.compile(r'#[ \t]*include[ \t]*["<]([^">\n]*)[">]')
_NVCC_SAFE = textre.compile(r"[A-Za-z0-9_./=+:-]+")


def _nvcc_args(flags: Sequence[str], unit: Path) -> tuple[list[str], list[str]]:
    """The project's flags nvcc may get and what was dropped (each with why); a unit whose
    path nvcc could not keep whole is not compiled (said in the second list, first)."""
    kept: list[str] = []
    dropped: list[str] = []
    if not _NVCC_SAFE.fullmatch(str(unit)):
        return [], [f"not compiled with nvcc: its path {str(unit)[-80:]!r} holds characters "
                    "nvcc's own shell commands would read"]  # fmt: skip
    for flag in flags:
        if _NVCC_SAFE.fullmatch(flag):
            kept.append(flag)
        else:
            dropped.append(f"{flag[:80]!r}: holds characters nvcc's own shell commands read")
    return kept, dropped


def _nvcc(
    nvcc: str,
    unit: Path,
    flags: Sequence[str],
    roots: Sequence[Path],
    avoid: Sequence[Path],
    timeout_s: float = TIMEOUT_S,
) -> tuple[CompileStatus, str | None, list[str]]:
    toolkit = compiler.install_root(nvcc)
    with tempfile.TemporaryDirectory(prefix="gpuport-port-") as tmp:
        argv = [nvcc, "-x", "cu", "-std=c++17", *flags, "-c", str(unit), "-o", f"{tmp}/x.o"]
        argv += ["-MD", "-MF", f"{tmp}/x.d"]  # the files it read: may its message be quoted
        shown = [a.replace(tmp + os.sep, "") for a in argv]  # x.o, x.d
        allowed = [*roots, Path(tmp), toolkit, *(Path(f[2:]) for f in _torch_includes())]
        allowed += map(Path, compiler.SYSTEM_INCLUDE_ROOTS)
        # nvcc may be a link or a wrapper script: where it leads (a wrapper's target must
        # lie in the system's program folders)
        cage = sandbox.compile_confinement(read=allowed, run=[toolkit], work=tmp)
        env = {**subproc.safe_env({"LC_ALL": "C"}, avoid=avoid), "TMPDIR": tmp}
        try:
            done = compiler.confined_run(argv, timeout_s=timeout_s, env=env, cwd=tmp, confine=cage)
        except EnvironmentProblem as exc:
            return "failed", str(exc), shown
        if done.ended == "timeout":
            return "failed", f"timed out after {timeout_s:g} s", shown
        outside = compiler.refused_read(done) or hidden_include(done.text(), allowed, flags)
        if outside or compiler.read_outside(Path(tmp) / "x.d", allowed):
            # compiled or not, the same words: a status could tell a bit of that file
            return "inconclusive", compiler.NOT_JUDGED, shown
        if done.ended == "exit" and done.returncode == 0:
            return "ok", None, shown
        first = _nvcc_error(done.text(), allowed, Path(tmp) / "x.d").replace(tmp + os.sep, "")
    missing = _GCC_MISSING.search(first)
    if missing:  # nvcc's host compiler words it its own way
        return "inconclusive", f"needs {missing.group(1)}, which is not installed here", shown
    status, error = classify(first)
    return status, error, shown


_SKIP_FOR_UNITS = ("build", "third_party")


def _walk(root: Path, skip: Sequence[str]) -> Iterator[tuple[Path, list[str]]]:
    """``os.walk(root)`` top-down with sorted folders, never into a link, a dot folder or a
    folder named in ``skip``, and at most :data:`MOST_FOLDER_DEPTH` levels: an explicit
    stack (Python 3.11's ``os.walk`` recurses once per level: a 1,500-level chain ended
    ``port --check`` in a RecursionError; twenty-fifth re-run, F8). Yields each folder and
    the names of its non-folder entries; an unreadable folder is passed over, as
    ``os.walk`` does."""
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        dirs: list[str] = []
        names: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                walk_in = is_dir and not entry.is_symlink()
            except OSError:
                continue
            if not is_dir:
                names.append(entry.name)
            elif walk_in and not entry.name.startswith(".") and entry.name not in skip:
                dirs.append(entry.name)
        yield folder, names
        if depth < MOST_FOLDER_DEPTH:
            stack.extend((folder / d, depth + 1) for d in sorted(dirs, reverse=True))


def _units(root: Path, files: list[FileDiff], per_header: int = 2) -> list[str]:
    """Changed translation units, and (up to ``per_header`` per changed header) the project's
    units that include a changed header (by file name). Each unit's includes are read in one
    pass and looked up among the headers: a search per header and unit took 100 KB of
    headers 19 s and 200 KB past two minutes (fourteenth re-run, F2)."""
    changed = [f.path for f in files if f.path.endswith(_NATIVE)]
    units = [p for p in changed if Path(p).suffix in UNITS]
    headers = {Path(p).name for p in changed if Path(p).suffix not in UNITS}
    taken: dict[str, int] = dict.fromkeys(headers, 0)
    if headers:
        for dirpath, names in _walk(root, _SKIP_FOR_UNITS):
            for name in sorted(names):
                if Path(name).suffix not in UNITS:
                    continue
                full = dirpath / name
                rel = full.relative_to(root).as_posix()
                if rel in units:
                    continue
                text = fileio.read_text_or_none(full, limit=fileio.LIMIT_SOURCE, root=root)
                if not text:
                    continue
                named = {m.group(1).rsplit("/", 1)[-1] for m in _INCLUDE.finditer(text)}
                hit = [h for h in named & headers if taken[h] < per_header]
                if hit:
                    units.append(rel)
                    for h in hit:
                        taken[h] += 1
    return sorted(units)


def check_files(
    root: Path,
    files: list[FileDiff],
    texts: dict[str, str],
    offload_archs: Sequence[str],
    *,
    written: bool,
) -> list[CheckResult]:
    """Compile what ``files`` changed (see the module docstring)."""
    native = [f for f in files if f.path.endswith(_NATIVE)]
    if not native:
        return []
    hipcc = subproc.which("hipcc", avoid=[root])
    nvcc = subproc.which("nvcc", avoid=[root])
    if written:
        return _compile_all(root, root, _units(root, native), hipcc, nvcc, offload_archs)
    with tempfile.TemporaryDirectory(prefix="gpuport-port-check-") as tmp:
        copy = Path(tmp) / "project"
        _copy_tree(root, copy)
        for f in native:
            dest = copy / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            fileio.write_atomic(dest, texts[f.path], root=copy)
        results = _compile_all(copy, root, _units(copy, native), hipcc, nvcc, offload_archs)
        return [
            r.model_copy(update={"command": [c.replace(str(copy), "<copy>") for c in r.command]})
            for r in results
        ]


def _copy_tree(root: Path, dest: Path) -> None:
    """The native sources and build files of the project (the compile's inputs), no links."""
    keep = (*_NATIVE, ".txt", ".cmake", ".json", ".mk")
    for dirpath, names in _walk(root, ()):
        for name in names:
            src = dirpath / name
            if not (name.endswith(keep) or name == "Makefile") or src.is_symlink():
                continue
            rel = src.relative_to(root)
            out = dest / rel
            try:  # a path too long for the system is not copied
                out.parent.mkdir(parents=True, exist_ok=True)
                fileio.copy_atomic(src, out, src_root=root, root=dest, durable=False)
            except (OSError, GpuportError):  # an unreadable file is not copied
                continue


def _compile_all(
    where: Path,
    root: Path,
    units: list[str],
    hipcc: str | None,
    nvcc: str | None,
    archs: Sequence[str],
    extra_nvcc: Sequence[str] = (),
) -> list[CheckResult]:
    """Compile ``units`` (paths under ``where``); ``root`` is the project (never on PATH,
    never the compiler). ``extra_nvcc``: gpuport's own flags (the backtest's stubs)."""
    out: list[CheckResult] = []
    torch = _torch_includes()
    chain: compiler.Toolchain | None = None
    no_hip = "hipcc is not installed"
    if hipcc is not None:
        try:
            chain = compiler.toolchain(hipcc, avoid=[root, where])
        except EnvironmentProblem as exc:
            no_hip = str(exc)
    sizes = [(where / rel).stat().st_size for rel in units if (where / rel).is_file()]
    budget = check_budget(sum(sizes), compilers=2)
    deadline = time.monotonic() + budget
    no_cage = sandbox.refusal() or sandbox.special_refusal(root)
    limited = 0
    for rel in units:
        unit = where / rel
        left = deadline - time.monotonic()
        stop = no_cage or stop_reason(left, budget, limited)
        if stop is not None:  # N units that each stall would take N x 2 x 120 s
            out += [
                CheckResult(path=rel, compiler=c, status="skipped", error=stop)
                for c in ("hipcc", "nvcc")
            ]
            continue
        # the project's own build files say the flags (a copy's paths mapped into it)
        found = project_flags(root, root / rel, None if where == root else where)
        own, _ = compiler.project_flag("-I", str(unit.parent.resolve()), [where])
        flags = [*found.flags, *(own or [])]
        notes = [f"project flag dropped: {d}" for d in found.dropped]
        if chain is None:
            out.append(CheckResult(path=rel, compiler="hipcc", status="skipped", error=no_hip))
        else:
            done = compiler.compile_unit(
                chain,
                unit,
                archs,
                flags,
                roots=[root, where],
                avoid=[root, where],
                timeout_s=min(TIMEOUT_S, left),
            )
            status, error = ("ok", None) if done.ok else classify(done.error)
            limited += done.limited
            out.append(
                CheckResult(
                    path=rel,
                    compiler="hipcc",
                    status=status,
                    error=error,
                    command=done.command,
                    notes=notes,
                )
            )
        if nvcc is None:
            out.append(
                CheckResult(
                    path=rel, compiler="nvcc", status="skipped", error="nvcc is not installed"
                )
            )
        else:
            safe, refused = _nvcc_args(flags, unit)
            nv_notes = notes + [f"project flag dropped for nvcc: {d}" for d in refused]
            if refused and refused[0].startswith("not compiled"):
                out.append(
                    CheckResult(path=rel, compiler="nvcc", status="skipped", error=refused[0])
                )
                continue
            started = time.monotonic()
            status, error, cmd = _nvcc(
                nvcc,
                unit,
                [*safe, *extra_nvcc, *torch],
                [root, where],
                [root, where],
                timeout_s=max(1.0, min(TIMEOUT_S, deadline - time.monotonic())),
            )
            slow = time.monotonic() - started >= compiler.SLOW_UNIT_S
            limited += bool(slow or (error and error.startswith("timed out")))
            out.append(
                CheckResult(
                    path=rel,
                    compiler="nvcc",
                    status=status,
                    error=error,
                    command=cmd,
                    notes=nv_notes,
                )
            )
    return out
