"""``gpuport port --check``: the changed CUDA/HIP files compiled for AMD (hipcc) and NVIDIA (nvcc).

Each changed translation unit (``.cu .cpp .cc .cxx .hip``), and each unit of the project that
includes a changed header, is compiled the way ``hipify --check`` compiles (the same
:func:`gpuport.hipify.check.compile_unit` for hipcc, the same status words): ``ok``,
``failed``, ``inconclusive`` (a third-party header that is not installed here) or ``skipped``
(the compiler is not installed). Without ``--apply`` the changed files are written into a
throw-away copy of the project's native files and build files, never into the project.

What reaches a compiler from the project is checked first: only ``-I``/``-isystem``/
``-iquote``/``-include`` paths inside the project, ``-D``/``-U`` names that are identifiers,
and ``-std=`` values that are language standards (:func:`safe_flags`). Compilers are argv
lists run with a sanitized PATH, closed stdin and a time limit, never through a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

from gpuport import fileio, subproc
from gpuport.hipify.check import UNITS, classify, compile_unit, project_flags
from gpuport.hipify.run import CompileStatus, first_error
from gpuport.models import GpuportError
from gpuport.port.model import CheckResult, FileDiff

__all__ = ["check_files", "safe_flags"]

TIMEOUT_S = 120
_NATIVE = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx", ".inl", ".hip")
_NAME = re.compile(r"^[A-Za-z_]\w*(?:=[^\s\x00]*)?$")
_GCC_MISSING = re.compile(r"fatal error: ([^\s:]+): No such file or directory")
_STD = re.compile(r"^(?:c|gnu)\+\+(?:1[1-9]|2[0-9abc]|0x|1y|1z|2a|2b|2c)$")


def _inside(path: str, root: Path) -> bool:
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def safe_flags(flags: Sequence[str], root: Path) -> list[str]:
    """The project's flags a compiler may see (see the module docstring); others dropped."""
    out: list[str] = []
    i = 0
    items = list(flags)
    while i < len(items):
        flag = items[i]
        if flag in ("-isystem", "-iquote", "-include", "-I") and i + 1 < len(items):
            value = items[i + 1]
            if not value.startswith("-") and _inside(value, root):
                out += [flag, value]
            i += 2
            continue
        if flag.startswith("-I") and len(flag) > 2:
            if _inside(flag[2:], root):
                out.append(flag)
        elif (flag.startswith(("-D", "-U")) and _NAME.match(flag[2:])) or (
            flag.startswith("-std=") and _STD.match(flag[5:])
        ):
            out.append(flag)
        i += 1
    return out


def _torch_includes() -> list[str]:
    """torch's own headers (CUDA-flavoured even in a CPU wheel) for nvcc, found without
    importing torch."""
    spec = find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent / "include"
    incs = [base, base / "torch" / "csrc" / "api" / "include"]
    py = sysconfig.get_paths().get("include")
    return [f"-I{p}" for p in incs if p.is_dir()] + ([f"-I{py}"] if py else [])


def _nvcc(
    nvcc: str, unit: Path, flags: Sequence[str]
) -> tuple[CompileStatus, str | None, list[str]]:
    with tempfile.TemporaryDirectory(prefix="gpuport-port-") as tmp:
        cmd = [
            nvcc,
            "-x",
            "cu",
            "-std=c++17",
            *flags,
            "-c",
            str(unit),
            "-o",
            str(Path(tmp) / "x.o"),
        ]
        try:
            done = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=TIMEOUT_S,
                env=subproc.safe_env(),
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "failed", f"timed out after {TIMEOUT_S} s", [*cmd[:-1], "x.o"]
        except OSError as exc:
            return "failed", f"cannot run nvcc: {exc.strerror or exc}", [*cmd[:-1], "x.o"]
    shown = [*cmd[:-1], "x.o"]
    if done.returncode == 0:
        return "ok", None, shown
    first = first_error(done.stderr + "\n" + done.stdout).replace(tmp + os.sep, "")
    missing = _GCC_MISSING.search(first)
    if missing:  # nvcc's host compiler words it its own way
        return "inconclusive", f"needs {missing.group(1)}, which is not installed here", shown
    status, error = classify(first)
    return status, error, shown


def _units(root: Path, files: list[FileDiff], per_header: int = 2) -> list[str]:
    """Changed translation units, and (up to ``per_header`` per changed header) the project's
    units that include a changed header."""
    changed = [f.path for f in files if f.path.endswith(_NATIVE)]
    units = [p for p in changed if Path(p).suffix in UNITS]
    headers = {Path(p).name for p in changed if Path(p).suffix not in UNITS}
    taken: dict[str, int] = dict.fromkeys(headers, 0)
    if headers:
        for dirpath, dirs, names in os.walk(root):
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and d not in ("build", "third_party")
            )
            for name in sorted(names):
                if Path(name).suffix not in UNITS:
                    continue
                full = Path(dirpath) / name
                rel = full.relative_to(root).as_posix()
                if rel in units:
                    continue
                text = fileio.read_text_or_none(full, limit=fileio.LIMIT_SOURCE, root=root)
                if not text:
                    continue
                hit = [
                    h
                    for h in headers
                    if taken[h] < per_header
                    and re.search(rf'#\s*include\s*["<][^">]*{re.escape(h)}[">]', text)
                ]
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
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [
            d for d in dirs if not d.startswith(".") and not (Path(dirpath) / d).is_symlink()
        ]
        for name in names:
            src = Path(dirpath) / name
            if not (name.endswith(keep) or name == "Makefile") or src.is_symlink():
                continue
            rel = src.relative_to(root)
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                fileio.copy_atomic(src, out, src_root=root, root=dest)
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
    out: list[CheckResult] = []
    torch = _torch_includes()
    for rel in units:
        unit = where / rel
        flags = safe_flags(project_flags(where, unit, None), where)
        local = [f"-I{unit.parent}"]
        if hipcc is None:
            out.append(
                CheckResult(
                    path=rel, compiler="hipcc", status="skipped", error="hipcc is not installed"
                )
            )
        else:
            (status, error), cmd = compile_unit(hipcc, unit, archs, [*flags, *local])
            out.append(
                CheckResult(path=rel, compiler="hipcc", status=status, error=error, command=cmd)
            )
        if nvcc is None:
            out.append(
                CheckResult(
                    path=rel, compiler="nvcc", status="skipped", error="nvcc is not installed"
                )
            )
        else:
            status, error, cmd = _nvcc(nvcc, unit, [*flags, *local, *extra_nvcc, *torch])
            out.append(
                CheckResult(path=rel, compiler="nvcc", status=status, error=error, command=cmd)
            )
    return out


def which(name: str) -> str | None:  # for tests: what --check would run
    return shutil.which(name)
