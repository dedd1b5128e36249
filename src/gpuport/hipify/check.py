"""``hipify --check`` as a real build would do it (issue 18, item 3).

The CLI writes the translations first; then each *translation unit* of the written tree is
compiled where it lies, so ``#include "../common/x.h"`` resolves as it will in the user's build,
by the compiler ``hipcc`` wraps, called directly with hipcc's own flags and no shell
(:mod:`gpuport.hipify.compiler`):

    CLANG [hipcc's flags] --offload-arch=A -x hip [project -I/-D flags] -c OUT/sub/a.cu -o TMP/x.o

* Translation units: ``.cu``, ``.cpp``, ``.cc``, ``.cxx``, ``.hip``. A header is not compiled
  on its own (status ``not compiled``): it is checked through the units that include it; so
  is a unit that another file of the tree includes (``#include "kernels.cu"``): its includer
  is what the build compiles (issue 25).
* Project flags: ``-I``/``-isystem``/``-iquote``/``-D``/``-U``/``-include``/``-std`` from the
  first of ``compile_commands.json`` (at the root or in ``build/``; the entry for that file),
  else the nearest ``Makefile`` (every such token outside comments; ``$(VAR)``/``${VAR}``
  expanded from the Makefile's own definitions, never from the environment or a ``$(shell
  ...)``, which leave the token out) or
  ``CMakeLists.txt`` (``include_directories``, ``target_include_directories``,
  ``add_compile_definitions``, ``add_definitions``, ``target_compile_definitions``) at or
  above the file. Relative include paths are resolved against the build file's folder in the
  *output* tree, so a relative ``-o`` works; paths are passed absolute.
* Every project flag must pass :func:`gpuport.hipify.compiler.project_flag` (macro names,
  standards, include paths and ``-include`` files inside the project or the output tree);
  the others are dropped and listed in the file's ``compile.notes``. The compiler runs in a
  throw-away folder with ``HIP_PLATFORM=amd``, a PATH without relative or project entries,
  stdin closed and time and output limits; its first error is quoted only when it comes from
  a file of the project, the output tree or the toolchain.
* ``compile_commands.json`` is parsed once per run (a 55 MB database was parsed per unit).

Status words (the same as ``assess``'s compile check): ``ok``; ``failed`` (the first
``error:`` line); ``inconclusive`` (a third-party header that is not installed here: says
nothing about the port); ``not compiled`` (a header). :func:`check_command` returns the
command, so the result can be reproduced by hand and equals it.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import stat
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import fileio, sandbox, textre
from gpuport.safeparse import ParseError, json_value

from .compiler import (
    CHECK_BUDGET_S,
    COMPILE_TIMEOUT_S,
    LIMITED_UNITS_MAX,
    SLOW_UNIT_S,
    Toolchain,
    compile_argv,
    hip_env,
    project_flag,
)
from .compiler import compile_unit as run_compile
from .io import encode
from .run import CompileResult, CompileStatus, HipifyReport

__all__ = [
    "UNITS",
    "CheckOutcome",
    "ProjectFlags",
    "check_budget",
    "check_command",
    "check_report",
    "hipcc_env",
    "project_flags",
    "stop_reason",
]

UNITS = (".cu", ".cpp", ".cc", ".cxx", ".hip")
_MISSING_HEADER = textre.compile(r"fatal error: '([^']+)' file not found")
_VALUE_FLAGS = ("-I", "-isystem", "-iquote", "-include", "-D", "-U")
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-include")
_MAKE_TOKEN = textre.compile(r"(?<![\w$(-])(-I|-D|-U|-isystem\s+|-std=)(\S+)")
_CMAKE_CALL = textre.compile(
    r"(?is)\b(include_directories|target_include_directories|add_compile_definitions"
    r"|add_definitions|target_compile_definitions)\s*\(([^)]*)\)"
)
_CMAKE_KEYWORDS = frozenset({"PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM", "BEFORE", "AFTER"})
_MAKE_DEF = textre.compile(
    r"^[ \t]*(?:override[ \t]+|export[ \t]+)?(?P<name>[A-Za-z_][\w.]*)[ \t]*"
    r"(?P<op>\+=|::=|:=|\?=|=)[ \t]*(?P<value>[^\n]*)$",
    re.M,
)
_MAKE_REF = textre.compile(r"\$(?:\((?P<p>[^()$]*)\)|\{(?P<b>[^{}$]*)\}|(?P<c>[A-Za-z_]))")
_MAKE_NAME = textre.compile(r"[A-Za-z_][\w.]*")
_QUOTED_INCLUDE = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*"(?P<name>[^"\n]+)"', re.M)
#: how deep variables may refer to variables, and how long an expanded token may grow
_MAKE_DEPTH = 8
_MAKE_LIMIT = 4096

CheckOutcome = tuple[CompileStatus, str | None]  # (status, error)


def hipcc_env() -> dict[str, str]:
    """The environment the compiler runs in: HIP_PLATFORM=amd, a sanitized PATH
    (:func:`gpuport.hipify.compiler.hip_env`)."""
    return hip_env()


def _absolute(path: Path) -> Path:
    """Absolute and normalised, links not followed (the path the user's build sees)."""
    return Path(os.path.normpath(path.absolute()))


def _map(path: str, base: Path, src_root: Path | None, out_root: Path | None) -> str:
    """An include path from a build file in ``base`` (input side), absolute, in the output."""
    p = Path(path)
    full = p if p.is_absolute() else base / p
    full = Path(os.path.normpath(full))
    if src_root is not None and out_root is not None:
        try:
            rel = full.relative_to(src_root)
        except ValueError:
            return str(full)
        return str(out_root / rel)
    return str(full)


def _pairs(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """(flag, value) for the flags we keep, from a split command line."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        for flag in _VALUE_FLAGS:
            if tok == flag and i + 1 < len(tokens):
                out.append((flag, tokens[i + 1]))
                i += 1
                break
            if tok.startswith(flag) and len(tok) > len(flag) and flag in ("-I", "-D", "-U"):
                out.append((flag, tok[len(flag) :]))
                break
        else:
            if tok.startswith("-std="):
                out.append(("-std=", tok[5:]))
        i += 1
    return out


_Entry = tuple[list[tuple[str, str]], Path]  # (flag, value) pairs, the entry's folder
# compile_commands.json parsed once: (path, mtime, size) -> {file: entry}
_DB_CACHE: dict[tuple[str, int, int], dict[Path, _Entry]] = {}


def _compile_db(src_root: Path, cand: Path) -> dict[Path, _Entry] | None:
    try:
        st = cand.stat()
    except OSError:
        return None
    key = (str(cand), st.st_mtime_ns, st.st_size)
    if key in _DB_CACHE:
        return _DB_CACHE[key]
    text = fileio.read_text_or_none(cand, limit=fileio.LIMIT_RESULT, root=src_root)
    try:
        entries = json_value(text) if text is not None else None
    except ParseError:
        entries = None
    if not isinstance(entries, list):
        return None
    db: dict[Path, _Entry] = {}
    for e in entries:
        if not isinstance(e, dict):
            continue
        directory = Path(str(e.get("directory", src_root)))
        name = Path(str(e.get("file", "")))
        where = Path(os.path.normpath(name if name.is_absolute() else directory / name))
        if where in db:
            continue
        args = e.get("arguments")
        try:
            tokens = (
                [str(a) for a in args]
                if isinstance(args, list)
                else shlex.split(str(e.get("command", "")))
            )
        except ValueError:
            continue
        db[where] = (_pairs(tokens), directory)
    if len(_DB_CACHE) > 8:
        _DB_CACHE.clear()
    _DB_CACHE[key] = db
    return db


def _from_compile_commands(src_root: Path, file: Path) -> _Entry | None:
    for cand in (src_root / "compile_commands.json", src_root / "build" / "compile_commands.json"):
        if not cand.is_file():
            continue
        db = _compile_db(src_root, cand)
        if db is not None and file in db:
            return db[file]
    return None


def _strip_hash_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def _make_vars(text: str) -> dict[str, str]:
    """The Makefile's own variables, in file order (``=``, ``:=``, ``?=``, ``+=``); nothing
    from the environment."""
    found: dict[str, str] = {}
    for m in _MAKE_DEF.finditer(text):
        name, op, value = m.group("name"), m.group("op"), m.group("value").strip()
        if op == "+=":
            found[name] = f"{found.get(name, '')} {value}".strip()
        elif op == "?=":
            found.setdefault(name, value)
        else:
            found[name] = value
    return found


def _expand(
    value: str, defs: dict[str, str], depth: int = 0, memo: dict[str, str | None] | None = None
) -> str | None:
    """``value`` with ``$(VAR)``/``${VAR}`` replaced from ``defs``; None when a reference is
    not a plain variable the Makefile defines (an environment variable, ``$(shell ...)``,
    ``$(wildcard ...)``), or when it nests too deep or grows too long. Each variable is
    expanded once (``memo``) and the length is checked as it grows: a 378-byte Makefile of
    eight levels of ``V1 = $(V2)$(V2)...`` took minutes (third review)."""
    if depth > _MAKE_DEPTH:
        return None
    memo = {} if memo is None else memo
    failed = False
    total = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal failed, total
        if failed:
            return ""
        name = (m.group("p") or m.group("b") or m.group("c") or "").strip()
        if not _MAKE_NAME.fullmatch(name) or name not in defs:
            failed = True
            return ""
        if name not in memo:
            memo[name] = None  # a reference to itself, while it is expanded: a failure
            memo[name] = _expand(defs[name], defs, depth + 1, memo)
        inner = memo[name]
        total += len(inner or "")
        if inner is None or total > _MAKE_LIMIT:
            failed = True
            return ""
        return inner

    out = _MAKE_REF.sub(sub, value)
    if failed or len(out) > _MAKE_LIMIT or "$" in out:
        return None
    return out


def _from_build_files(src_root: Path, file: Path) -> tuple[list[tuple[str, str]], Path] | None:
    """The flags of the nearest Makefile or CMakeLists.txt above ``file`` (up to
    ``src_root``) and its folder; None when there is none. Each build file is read and
    expanded once per version (:func:`_folder_pairs`): a project of many units in one folder
    read its Makefile once per unit (fourteenth re-run, F4)."""
    folder = file.parent
    while True:
        stamps = tuple(_stamp(folder / name) for name in ("Makefile", "CMakeLists.txt"))
        if any(stamps):
            return _folder_pairs(src_root, folder, stamps), folder
        if folder == src_root or folder.parent == folder or src_root not in folder.parents:
            return None
        folder = folder.parent


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """A regular file's identity and version (inode, size, change time); None when it is
    not one."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=64)
def _folder_pairs(
    src_root: Path, folder: Path, stamps: tuple[tuple[int, int, int] | None, ...]
) -> list[tuple[str, str]]:
    """The ``(flag, value)`` pairs of ``folder``'s Makefile (first) or CMakeLists.txt;
    ``stamps`` (:func:`_stamp` of each) key the cache, so an edited file is read again. One
    expansion memo serves every token of a Makefile: each variable is expanded once, not once
    per token that names it (a 50 KB Makefile of tokens naming one variable of thousands of
    references took 30 s; fourteenth re-run, F4)."""
    make, cmake = folder / "Makefile", folder / "CMakeLists.txt"
    pairs: list[tuple[str, str]] = []
    if stamps[0] is not None:
        text = _strip_hash_comments(_read_small(make, src_root))
        text = text.replace("\\\n", " ")
        defs = _make_vars(text)
        memo: dict[str, str | None] = {}
        for m in _MAKE_TOKEN.finditer(text):
            flag, value = m.group(1).strip(), m.group(2)
            if "$" in value:
                expanded = _expand(value, defs, memo=memo)
                if expanded is None or not expanded or any(c.isspace() for c in expanded):
                    continue
                value = expanded
            pairs.append((flag if flag != "-std=" else "-std=", value))
        return pairs
    text = _strip_hash_comments(_read_small(cmake, src_root))
    for m in _CMAKE_CALL.finditer(text):
        call, body = m.group(1).lower(), m.group(2)
        words = [w.strip('"') for w in body.split()]
        if call.startswith("target_"):
            words = words[1:]
        for w in words:
            if w in _CMAKE_KEYWORDS or not w:
                continue
            w = w.replace("${CMAKE_CURRENT_SOURCE_DIR}", str(folder))
            w = w.replace("${CMAKE_CURRENT_LIST_DIR}", str(folder))
            w = w.replace("${PROJECT_SOURCE_DIR}", str(src_root))
            w = w.replace("${CMAKE_SOURCE_DIR}", str(src_root))
            if "${" in w or "$<" in w:
                continue
            if call.endswith("include_directories"):
                pairs.append(("-I", w))
            elif w.startswith(("-D", "-U")):
                pairs.append((w[:2], w[2:]))
            elif call != "add_definitions":
                pairs.append(("-D", w))
    return pairs


def includers(report: HipifyReport) -> dict[str, str]:
    """Translation units of the report that another of its files includes
    (``#include "kernels.cu"``): unit path -> the first file that includes it (paths relative
    to the input, forward slashes)."""
    paths = {f.path for f in report.files if f.text is not None}
    out: dict[str, str] = {}
    for f in report.files:
        if f.text is None:
            continue
        here = Path(f.path).parent
        for m in _QUOTED_INCLUDE.finditer(f.text):
            name = m.group("name")
            target = Path(os.path.normpath(here / name)).as_posix()
            if target in paths and target != f.path and Path(target).suffix.lower() in UNITS:
                out.setdefault(target, f.path)
    return out


def _read_small(path: Path, root: Path) -> str:
    """A project build file (Makefile, CMakeLists.txt), bounded; empty when it cannot be read
    or leads out of ``root``, the project (a linked folder on the way included: fourteenth
    re-run, F5)."""
    return fileio.read_text_or_none(path, limit=fileio.LIMIT_SOURCE, root=root) or ""


@dataclass
class ProjectFlags:
    """The project's flags for one file that may reach the compiler, and those dropped (why)."""

    flags: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def project_flags(
    src_root: Path, file: Path, out_root: Path | None, allowed: Sequence[Path] = ()
) -> ProjectFlags:
    """The project's own flags for ``file`` (an input path under ``src_root``), with include
    paths mapped into ``out_root`` (the written output tree; None: the input tree itself),
    each checked by :func:`gpuport.hipify.compiler.project_flag`; ``allowed``: folders
    outside the project that the user named (``--check-include``), where paths may lead too."""
    src_root = _absolute(src_root)
    file = _absolute(file)
    out_root = _absolute(out_root) if out_root is not None else None
    found = _from_compile_commands(src_root, file) or _from_build_files(src_root, file)
    out = ProjectFlags()
    if found is None:
        return out
    pairs, base = found
    roots = [src_root] if out_root is None else [src_root, out_root]
    roots += [_absolute(a) for a in allowed]
    for flag, value in pairs:
        if flag in _PATH_FLAGS:
            value = _map(value, base, src_root, out_root) if _clean_path(value) else value
        args, why = project_flag(flag, value, roots)
        if args is None:
            out.dropped.append(why or f"{flag}{value}: dropped")
        else:
            out.flags += args
    return out


def _clean_path(value: str) -> bool:
    return bool(value) and "\0" not in value and not value.startswith("-")


def check_command(
    chain: Toolchain, unit: Path, offload_archs: Sequence[str], flags: Sequence[str], obj: Path
) -> list[str]:
    """The compile of one translation unit (absolute paths), as an argv list."""
    return compile_argv(chain, _absolute(unit), offload_archs, flags, obj)


def classify(error: str | None) -> CheckOutcome:
    """The one classification of a failed compile, shared by ``hipify --check`` and
    ``assess --hipify-check``: a third-party header that is not installed here
    (``torch/extension.h`` without a ROCm torch) is ``inconclusive`` (it says nothing about
    the port), anything else ``failed``, with its first error line."""
    text = error or "hipcc failed without a message"
    if text.startswith("not judged:"):
        return ("inconclusive", text)
    missing = _MISSING_HEADER.search(text)
    if missing and not missing.group(1).startswith(("hip/", "hip_")):
        return ("inconclusive", f"needs {missing.group(1)}, which is not installed here")
    return ("failed", text)


#: The run's time budget grows with the units it compiles: this many seconds per KB of their
#: own text, at least BUDGET_FLOOR_S and at most CHECK_BUDGET_S (4.5 KB of units that each
#: stayed under the limits took 6.5 min; sixth review)
BUDGET_PER_KB_S = 20.0
BUDGET_FLOOR_S = 300.0


def check_budget(unit_bytes: int, compilers: int = 1) -> float:
    """Seconds a compile check of ``unit_bytes`` of translation units may take in all, for
    each of ``compilers`` (``port --check`` runs hipcc and nvcc)."""
    scaled = max(BUDGET_FLOOR_S, unit_bytes / 1024 * BUDGET_PER_KB_S) * compilers
    return min(float(CHECK_BUDGET_S), scaled)


def stop_reason(left: float, budget_s: float, limited: int) -> str | None:
    """Why no more units are compiled: the budget is spent, or units already ran into the
    compiler's limits (a 130-byte ``.rept`` bomb costs 20 s and 4 GiB per unit)."""
    if left < 1:
        return (
            f"not compiled: the check's time budget ({budget_s:g} s: {BUDGET_PER_KB_S:g} s per "
            f"KB of the files checked, at least {BUDGET_FLOOR_S:g} s, at most "
            f"{CHECK_BUDGET_S} s) was spent"
        )
    if limited >= LIMITED_UNITS_MAX:
        return (
            f"not compiled: {limited} units already ran into the compiler's time, memory or "
            f"output limits, or took over {SLOW_UNIT_S} s each"
        )
    return None


def check_report(
    report: HipifyReport,
    *,
    offload_archs: Sequence[str],
    chain: Toolchain,
    in_place: bool = False,
    budget_s: float = CHECK_BUDGET_S,
    allowed: Sequence[Path] = (),
) -> None:
    """Compile the translations of ``report`` once they are written (see the module
    docstring), filling each file's ``compile``; past ``budget_s`` in all, the rest are
    ``not compiled`` and say why. A file that was not written (one file to
    stdout, ``--diff``) is compiled from a temporary copy, with its own folder on the include
    path. With ``in_place``, a file left unchanged is compiled where it is, as the changed ones.
    ``allowed``: folders outside the project the user let the compiles read (``--check-include``:
    the project's own ``-I`` flags may lead there, and messages from there are quoted)."""
    root = Path(report.root)
    single = root.is_file()
    src_root = root.parent if single else root
    out_root = Path(report.out_dir) if report.out_dir is not None else None
    # one file: the compile may read the project around it, never a folder that is no
    # project (a kernel downloaded into the home folder included ~/.cache/huggingface/token
    # and the first error quoted it: thirty-second re-run F2); a loose file is compiled from
    # a copy, alone
    around = _project_of(src_root) if single else None
    loose = single and around is None
    read_from = [] if loose else [around or _absolute(src_root)]
    roots = read_from + ([_absolute(out_root)] if out_root is not None else [])
    roots += [_absolute(a) for a in allowed]
    archs = list(offload_archs)
    included = {} if single else includers(report)
    sizes = [len(f.text.encode()) for f in report.files if f.text is not None]
    budget_s = min(budget_s, check_budget(sum(sizes)))
    deadline = time.monotonic() + budget_s
    refused = sandbox.refusal() or sandbox.special_refusal(src_root)
    limited = 0
    for f in report.files:
        if f.text is None:
            continue
        left = deadline - time.monotonic()
        stop = refused or stop_reason(left, budget_s, limited)
        if stop is not None:
            f.compile = CompileResult(
                ok=False, status="not compiled", offload_archs=archs, error=stop
            )
            continue
        timeout_s = min(COMPILE_TIMEOUT_S, left)
        source = src_root / f.path
        if not single and Path(f.path).suffix.lower() not in UNITS:
            f.compile = CompileResult(
                ok=False,
                status="not compiled",
                offload_archs=archs,
                error="a header: checked through the files that include it",
            )
            continue
        if f.path in included:
            f.compile = CompileResult(
                ok=False,
                status="not compiled",
                offload_archs=archs,
                error=f"included by {included[f.path]}: checked through it",
            )
            continue
        written = Path(f.output) if f.output is not None else source if in_place else None
        if written is not None and not loose:
            found = project_flags(src_root, source, out_root, allowed)
            done = run_compile(
                chain,
                _absolute(written),
                archs,
                found.flags,
                roots=roots,
                avoid=[src_root],
                timeout_s=timeout_s,
            )
            cmd, error = done.command, done.error
        else:
            found = ProjectFlags() if loose else project_flags(src_root, source, None, allowed)
            if not loose:
                own, why = project_flag("-I", str(_absolute(source.parent)), roots)
                found.flags += own or []
                found.dropped += [why] if why else []
            with tempfile.TemporaryDirectory(prefix="gpuport-hipify-") as tmp:
                unit = Path(tmp) / Path(f.path).name
                fileio.write_atomic_bytes(unit, encode(f.text), root=Path(tmp))
                done = run_compile(
                    chain,
                    unit,
                    archs,
                    found.flags,
                    roots=[*roots, Path(tmp)],
                    avoid=[src_root],
                    timeout_s=timeout_s,
                )
                error = done.error.replace(tmp + os.sep, "") if done.error else None
                cmd = [c.replace(tmp + os.sep, "") for c in done.command]
        status, error = ("ok", None) if done.ok else classify(error)
        limited += done.limited
        if status == "inconclusive" and found.dropped:
            error = f"{error} (an include path the project names was dropped: {found.dropped[0]})"
        f.compile = CompileResult(
            ok=status == "ok",
            status=status,
            offload_archs=archs,
            error=error,
            command=cmd,
            notes=[f"project flag dropped: {d}" for d in found.dropped],
        )


def _project_of(folder: Path) -> Path | None:
    """The project ``folder`` lies in (its git work tree, or the highest folder with a project
    file; never ``/`` or the home folder: :func:`gpuport.subproc.project_around`), or None."""
    from gpuport import subproc

    around = subproc.project_around(folder)
    return _absolute(Path(around[0])) if around else None
