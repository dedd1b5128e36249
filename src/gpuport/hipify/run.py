"""Translate a file or a tree of CUDA sources and report on it (``gpuport hipify``, issue 3).

The core is pure in the sense of the design: it returns a :class:`HipifyReport` and never prints.
It writes nothing either; the translated text of each file travels in the report (excluded from
its JSON) together with the path it should go to, and the CLI writes it atomically. The one
side effect is the optional compile check, which runs ``hipcc`` in a throw-away folder.

* Files: the CUDA/C++ files :func:`gpuport.scan.files.walk` finds (``.cu``, ``.cuh``, ``.cpp``,
  ``.h``...). Names are kept as they are (``.cu`` stays ``.cu``, as HIPIFY does: hipcc compiles
  ``.cu`` files as HIP). With an output folder for a tree, every other regular file (same
  skip rules, see :mod:`gpuport.hipify.tree`) is listed in ``copied`` for the CLI to copy.
* Hazards: the scanner's own GP3xx rules, through :func:`gpuport.scan.engine.check_text`, on
  the original text (so line and column refer to the input).
* Compile check: ``hipcc --offload-arch=A [...] -x hip -c FILE -o TMP/x.o`` with
  ``HIP_PLATFORM=amd``; never ``-fsyntax-only``, which would pass inline PTX that cannot be
  assembled.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from gpuport.knowledge import PackageDB, TargetInfo, load_packages, resolve_target
from gpuport.knowledge.api_map import ApiMap, load_api_map
from gpuport.models import SCHEMA_VERSION, EnvFingerprint, EnvironmentProblem, GpuportError
from gpuport.scan.engine import check_text
from gpuport.scan.files import Skip, walk
from gpuport.scan.model import Finding, SkippedFile
from gpuport.scan.rules import FileKind

from .annotate import annotate as annotate_text
from .io import encode, read_source
from .translate import (
    DEFAULT_HIP_VERSION,
    LaunchSyntax,
    Translation,
    _parse_version,
    translate,
)
from .tree import other_files

_SURROGATE = re.compile("[\udc80-\udcff]")

__all__ = [
    "COMPILE_TIMEOUT_S",
    "CompileResult",
    "FileResult",
    "HipifyReport",
    "UnsupportedName",
    "compile_check",
    "detect_hip_version",
    "family_counts",
    "family_of",
    "hipify_path",
]

COMPILE_TIMEOUT_S = 120
HIPCC_MISSING = (
    "--check needs hipcc, which is not on PATH; install Debian's `hipcc` package "
    "(apt-get install hipcc) or a ROCm release, or drop --check"
)
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)")


class UnsupportedName(BaseModel):
    """A CUDA identifier left untranslated, and why."""

    name: str
    line: int
    col: int
    reason: str


class CompileResult(BaseModel):
    """The outcome of ``hipcc -c`` on one translated file."""

    ok: bool
    offload_archs: list[str]
    error: str | None = Field(default=None, description="the first `error:` line, if it failed")


class FileResult(BaseModel):
    """One translated file."""

    path: str = Field(description="path relative to the input, with forward slashes")
    output: str | None = Field(default=None, description="where the translation is written")
    replacements: dict[str, int] = Field(default_factory=dict)
    by_family: dict[str, int] = Field(
        default_factory=dict,
        description='replacements per API-map family ("headers" for #include paths)',
    )
    unsupported: list[UnsupportedName] = Field(default_factory=list)
    unsupported_counts: dict[str, int] = Field(
        default_factory=dict, description="unsupported identifiers, name -> occurrences"
    )
    hazards: list[Finding] = Field(default_factory=list)
    added_include: bool = False
    compile: CompileResult | None = None
    text: str | None = Field(default=None, exclude=True, description="the translated text")
    original: str | None = Field(default=None, exclude=True, description="the input text")


class HipifyReport(BaseModel):
    """What ``gpuport hipify`` did to a file or a tree."""

    schema_version: str = SCHEMA_VERSION
    kind: Literal["gpuport.hipify"] = "gpuport.hipify"
    root: str
    out_dir: str | None = None
    hip_version: str
    target: str
    checked: bool = False
    files: list[FileResult] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)
    copied: list[str] = Field(
        default_factory=list, description="non-CUDA files copied as they are into out_dir"
    )
    totals: dict[str, int] = Field(default_factory=dict)
    by_family: dict[str, int] = Field(
        default_factory=dict, description="replacements per API-map family, all files"
    )
    unsupported_counts: dict[str, int] = Field(
        default_factory=dict, description="unsupported identifiers, name -> occurrences, all files"
    )
    environment: EnvFingerprint | None = None


def _rocm_install_version() -> str | None:
    """``major.minor`` of the ROCm install ($ROCM_PATH or /opt/rocm, file .info/version)."""
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if not root:
            continue
        try:
            text = (Path(root) / ".info" / "version").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = re.match(r"\s*(\d+)\.(\d+)", text)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def detect_hip_version() -> str | None:
    """The HIP on this machine: ``hipcc --version`` first, else the ROCm install's version file."""
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        return _rocm_install_version()
    try:
        done = subprocess.run(
            [hipcc, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "HIP_PLATFORM": "amd"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    m = _HIP_VERSION.search(done.stdout + "\n" + done.stderr)
    return f"{m.group(1)}.{m.group(2)}" if m else _rocm_install_version()


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else "hipcc failed without a message"


def compile_check(
    text: str,
    name: str,
    *,
    offload_archs: Sequence[str],
    include_dir: Path | None = None,
    hipcc: str | None = None,
) -> CompileResult:
    """Compile translated ``text`` (file name ``name``) for AMD in a temporary folder."""
    exe = hipcc or shutil.which("hipcc")
    if exe is None:
        raise EnvironmentProblem(HIPCC_MISSING)
    archs = list(offload_archs)
    with tempfile.TemporaryDirectory(prefix="gpuport-hipify-") as tmp:
        source = Path(tmp) / (Path(name).name or "source.cu")
        source.write_bytes(encode(text))
        cmd = [exe, *(f"--offload-arch={a}" for a in archs), "-x", "hip"]
        if include_dir is not None:
            cmd += ["-I", str(include_dir)]
        cmd += ["-c", str(source), "-o", str(Path(tmp) / "x.o")]
        try:
            done = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=COMPILE_TIMEOUT_S,
                env={**os.environ, "HIP_PLATFORM": "amd"},
                cwd=tmp,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return CompileResult(
                ok=False, offload_archs=archs, error=f"timed out after {COMPILE_TIMEOUT_S} s"
            )
        except OSError as exc:
            raise EnvironmentProblem(f"cannot run hipcc: {exc.strerror or exc}") from None
    if done.returncode == 0:
        return CompileResult(ok=True, offload_archs=archs)
    error = _first_error(done.stderr + "\n" + done.stdout).replace(tmp + os.sep, "")
    return CompileResult(ok=False, offload_archs=archs, error=error)


_MISSING_HEADER = re.compile(r"fatal error: '([^']+)' file not found")


def compile_status(result: CompileResult) -> Literal["ok", "failed"]:
    """The word both ``hipify --check`` and ``assess --hipify-check`` print for a result."""
    return "ok" if result.ok else "failed"


def compile_reason(error: str | None) -> str:
    """The one classification of a failed compile that hipify and assess share.

    A header that is not installed here (``torch/extension.h`` without a ROCm torch) still
    fails the compile: the file cannot be built on this machine as it stands. The reason
    says which header, so the reader can tell it from an error in the translation.
    """
    text = error or "no error line"
    missing = _MISSING_HEADER.search(text)
    if missing:
        return (
            f"needs {missing.group(1)}, which is not installed here (a dependency's header, "
            "not a translation error: install its ROCm build and check again)"
        )
    return text


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _check_out_dir(path: Path, out_dir: Path) -> None:
    src = path.resolve()
    dst = out_dir.resolve()
    if dst.exists() and not dst.is_dir():
        raise GpuportError(f"output folder {out_dir} is a file")
    if src.is_dir() and _inside(dst, src):
        raise GpuportError(
            f"output folder {out_dir} is inside the input {path}; choose a folder outside it"
        )
    if src.is_file() and dst == src.parent:
        raise GpuportError(
            f"output folder {out_dir} is the input's own folder; it would overwrite {path.name}"
        )


def hipify_path(
    path: Path,
    *,
    out_dir: Path | None = None,
    hip_version: str = DEFAULT_HIP_VERSION,
    target: str = "gfx942",
    check: bool = False,
    offload_archs: Sequence[str] = ("gfx90a",),
    annotate: bool = False,
    in_place: bool = False,
    launch_syntax: LaunchSyntax = "keep",
) -> HipifyReport:
    """Translate ``path`` (a file or a folder) and report; see the module docstring."""
    if not path.exists():
        raise GpuportError(f"no such file or folder: {path}")
    if out_dir is not None and in_place:
        raise GpuportError("--in-place and -o/--out-dir cannot be used together")
    if out_dir is not None:
        _check_out_dir(path, out_dir)
    hipcc = None
    if check:
        hipcc = shutil.which("hipcc")
        if hipcc is None:
            raise EnvironmentProblem(HIPCC_MISSING)
        if not offload_archs:
            raise GpuportError("--offload-arch needs at least one target, e.g. gfx90a")
    target_info = resolve_target(target)
    packages = load_packages()
    amap = load_api_map()
    _parse_version(hip_version)  # refuses a bad version before any work
    report = HipifyReport(
        root=str(path),
        out_dir=str(out_dir) if out_dir is not None else None,
        hip_version=hip_version,
        target=target_info.name,
        checked=check,
        environment=EnvFingerprint.collect(),
    )
    single = path.is_file()
    for item in walk(path):
        if isinstance(item, Skip):
            report.skipped.append(SkippedFile(path=item.rel, reason=item.reason))
            continue
        if item.kind is not FileKind.NATIVE:
            if single:
                report.skipped.append(
                    SkippedFile(path=item.rel, reason="not a CUDA/C++ source file")
                )
            continue
        got = read_source(item.path)
        if isinstance(got, Skip):
            report.skipped.append(SkippedFile(path=item.rel, reason=got.reason))
            continue
        hazards, done = translate_source(
            item.rel,
            got,
            target=target_info,
            packages=packages,
            hip_version=hip_version,
            annotate=annotate,
            launch_syntax=launch_syntax,
        )
        output = out_dir / item.rel if out_dir is not None else None
        if in_place and done.text != got:
            output = item.path
        result = FileResult(
            path=item.rel,
            output=str(output) if output is not None else None,
            replacements=done.replacements,
            by_family=family_counts(done.replacements, amap),
            unsupported=[UnsupportedName(**u._asdict()) for u in done.unsupported],
            unsupported_counts=_counted(u.name for u in done.unsupported),
            hazards=hazards,
            added_include=done.added_include,
            text=done.text,
            original=got,
        )
        if check:
            include = output.parent if output is not None else item.path.parent
            result.compile = compile_check(
                done.text,
                item.rel,
                offload_archs=offload_archs,
                include_dir=include,
                hipcc=hipcc,
            )
        report.files.append(result)
    if out_dir is not None and not single:
        report.copied = list(other_files(path))
    if single and not report.files:
        why = report.skipped[0].reason if report.skipped else "not a CUDA/C++ source file"
        raise GpuportError(f"cannot hipify {path}: {why}")
    report.totals = _totals(report)
    report.by_family = _merge(f.by_family for f in report.files)
    report.unsupported_counts = _merge(f.unsupported_counts for f in report.files)
    return report


def translate_source(
    rel: str,
    text: str,
    *,
    target: TargetInfo,
    packages: PackageDB,
    hip_version: str,
    annotate: bool = False,
    launch_syntax: LaunchSyntax = "keep",
) -> tuple[list[Finding], Translation]:
    """The per-file work of hipify: the scan's GP3xx hazard pass, then the translation.

    ``text`` is what :func:`read_source` returned. Undecodable bytes (kept as surrogates for a
    byte-exact output) become U+FFFD for the hazard pass: one character each, so columns
    hold, and the report stays valid JSON. ``assess`` uses this for its dry run too.
    """
    shown = _SURROGATE.sub("\ufffd", text)
    hazards, _ = check_text(rel, shown, FileKind.NATIVE, target, packages)
    source = annotate_text(text, hazards) if annotate else text
    return hazards, translate(source, hip_version=hip_version, launch_syntax=launch_syntax)


def family_of(name: str, amap: ApiMap) -> str:
    """The stats family of a replacement key: the API map entry's family, ``"headers"`` for an
    ``#include`` path, ``"namespaces"`` for ``cub::`` and the like, else ``"other"``."""
    entry = amap.entries.get(name)
    if entry is not None:
        return entry.family
    if name.endswith("::"):
        return "namespaces"
    if amap.header(name) is not None:
        return "headers"
    return "other"


def family_counts(replacements: dict[str, int], amap: ApiMap) -> dict[str, int]:
    """Replacement counts summed per family (see :func:`family_of`), sorted by family."""
    counts: Counter[str] = Counter()
    for name, n in replacements.items():
        counts[family_of(name, amap)] += n
    return dict(sorted(counts.items()))


def _counted(names: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(names).items()))


def _merge(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for part in parts:
        total.update(part)
    return dict(sorted(total.items()))


def _totals(report: HipifyReport) -> dict[str, int]:
    files = report.files
    return {
        "files": len(files),
        "skipped": len(report.skipped),
        "replacements": sum(sum(f.replacements.values()) for f in files),
        "unsupported": sum(len(f.unsupported) for f in files),
        "hazards": sum(len(f.hazards) for f in files),
        "copied": len(report.copied),
        "compiled_ok": sum(1 for f in files if f.compile is not None and f.compile.ok),
        "compile_failed": sum(1 for f in files if f.compile is not None and not f.compile.ok),
    }
