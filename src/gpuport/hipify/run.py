"""Translate a file or a tree of CUDA sources and report on it (``gpuport hipify``, issue 3).

The core is pure in the sense of the design: it returns a :class:`HipifyReport` and never prints.
It writes nothing either; the translated text of each file travels in the report (excluded from
its JSON) together with the path it should go to, and the CLI writes it atomically. The
compile check (``--check``) runs after the writes, on the written tree:
:func:`gpuport.hipify.check.check_report`.

* Files: the CUDA/C++ files :func:`gpuport.scan.project.files.walk` finds (``.cu``, ``.cuh``,
  ``.cpp``, ``.h``...). Names are kept as they are (``.cu`` stays ``.cu``, as HIPIFY does:
  hipcc compiles ``.cu`` files as HIP). With an output folder for a tree, every other regular
  file (same skip rules, see :mod:`gpuport.hipify.tree`) is listed in ``copied`` for the CLI to
  copy.
* Hazards: the scanner's own GP3xx rules, through :func:`gpuport.scan.check.check_text`, on
  the original text (so line and column refer to the input).
* Compile check: the compiler ``hipcc`` wraps, called directly with hipcc's own flags and no
  shell (:mod:`gpuport.hipify.compiler`), ``--offload-arch=A -x hip [project flags] -c FILE -o
  TMP/x.o`` with ``HIP_PLATFORM=amd``; never ``-fsyntax-only``, which would pass inline PTX that
  cannot be assembled. :func:`compile_check` (a text compiled in a temporary folder) is what
  ``assess``'s dry run uses.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gpuport import fileio, subproc, textre, usercache
from gpuport.knowledge import PackageDB, TargetInfo, packages_on_demand, resolve_target
from gpuport.knowledge.api_map import ApiMap, load_api_map
from gpuport.models import SCHEMA_VERSION, EnvFingerprint, EnvironmentProblem, GpuportError
from gpuport.plainjson import EXCLUDED
from gpuport.safeparse import ParseError, json_value
from gpuport.scan.check import check_text
from gpuport.scan.cxx import CxxSource, lex
from gpuport.scan.finding import Finding, SkippedFile
from gpuport.scan.project.files import Skip, walk
from gpuport.scan.rules import FileKind

from .annotate import annotate as annotate_text
from .divergence import Divergence
from .hipheaders import HipHeaders, find_include, header_version
from .io import encode, read_source
from .translate import (
    DEFAULT_HIP_VERSION,
    LaunchSyntax,
    Translation,
    _parse_version,
    translate,
)
from .tree import check_out_dir, other_files, uncopied
from .wave64 import WaveMode

_SURROGATE = textre.compile("[\udc80-\udcff]")

__all__ = [
    "CompileResult",
    "FileResult",
    "HipifyReport",
    "UnsupportedName",
    "WaveSite",
    "compile_check",
    "detect_hip_version",
    "family_counts",
    "family_of",
    "hipify_path",
    "resolve_hip_version",
]

HIPCC_MISSING = (
    "--check needs hipcc, which is not on PATH; install Debian's `hipcc` package "
    "(apt-get install hipcc) or a ROCm release, or drop --check"
)
_HIP_VERSION = textre.compile(r"HIP version:\s*(\d+)\.(\d+)")


# The report's types are plain dataclasses, not pydantic models: a hipify run never imports
# pydantic (~0.2 s of every call; start-up, issue 18). gpuport.plainjson writes them
# as JSON; pydantic's TypeAdapter(HipifyReport) reads such a file back, validated.


@dataclass(kw_only=True)
class UnsupportedName:
    """A CUDA identifier left untranslated, and why."""

    name: str
    line: int
    col: int
    reason: str


@dataclass(kw_only=True)
class WaveSite:
    """A 32-lane site of ``--wave64 fix``: rewritten (``detail`` says how) or left (why)."""

    line: int
    kind: str  # constant, mask, ballot, shuffle, array, lane or width
    detail: str
    unsafe: bool = False  # made only with --unsafe-fixes (the line is marked so)


CompileStatus = Literal["ok", "failed", "inconclusive", "not compiled"]


@dataclass(kw_only=True)
class CompileResult:
    """The outcome of ``hipcc -c`` on one translated file (see :mod:`gpuport.hipify.check`)."""

    ok: bool
    # ok; failed; inconclusive (a third-party header not installed here); not compiled (a
    # header, checked through the files that include it)
    status: CompileStatus = "ok"
    offload_archs: list[str]
    error: str | None = None  # the first `error:` line, if it failed
    # the compiler's argv (hipcc's compiler and flags, called directly), object shown as x.o
    command: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # project flags dropped, and why
    # it ran into the compiler's limits or took SLOW_UNIT_S: not written to the JSON report
    limited: bool = field(default=False, metadata=EXCLUDED)

    def __post_init__(self) -> None:
        if not self.ok and self.status == "ok":
            self.status = "failed"


@dataclass(kw_only=True)
class FileResult:
    """One translated file."""

    path: str  # relative to the input, with forward slashes
    output: str | None = None  # where the translation is written
    replacements: dict[str, int] = field(default_factory=dict)
    # replacements per API-map family ("headers" for #include paths)
    by_family: dict[str, int] = field(default_factory=dict)
    unsupported: list[UnsupportedName] = field(default_factory=list)
    # unsupported identifiers, name -> occurrences
    unsupported_counts: dict[str, int] = field(default_factory=dict)
    hazards: list[Finding] = field(default_factory=list)
    added_include: bool = False
    wave64: list[WaveSite] = field(default_factory=list)  # 32-lane sites rewritten (fix)
    wave64_left: list[WaveSite] = field(default_factory=list)  # left as ambiguous (fix)
    # portable shims written for APIs the target HIP lacks: "NAME: why"
    shims: list[str] = field(default_factory=list)
    compile: CompileResult | None = None
    # the translated and the input text: not written to the JSON report
    text: str | None = field(default=None, metadata=EXCLUDED)
    original: str | None = field(default=None, metadata=EXCLUDED)


@dataclass(kw_only=True)
class HipifyReport:
    """What ``gpuport hipify`` did to a file or a tree."""

    schema_version: str = SCHEMA_VERSION
    kind: Literal["gpuport.hipify"] = "gpuport.hipify"
    root: str
    out_dir: str | None = None
    hip_version: str
    # where hip_version came from: "given" (--hip-version or a setting), "installed" (the HIP
    # on this machine) or "default" (no HIP here: DEFAULT_HIP_VERSION); see resolve_hip_version
    hip_version_origin: str = "given"
    # the installed HIP whose headers decided what exists (include folder)
    hip_headers: str | None = None
    target: str
    wave64: str = "report"  # fix: 32-lane sites ported; report: listed
    unsafe_fixes: bool = False  # --unsafe-fixes: unproven wave64 rewrites made too, marked
    checked: bool = False
    files: list[FileResult] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)  # non-CUDA files copied as they are
    totals: dict[str, int] = field(default_factory=dict)
    by_family: dict[str, int] = field(default_factory=dict)  # per API-map family, all files
    # unsupported identifiers, name -> occurrences, all files
    unsupported_counts: dict[str, int] = field(default_factory=dict)
    environment: EnvFingerprint | None = None


def _rocm_install_version() -> str | None:
    """``major.minor`` of the ROCm install ($ROCM_PATH as this run's programs see it, not into
    an avoided project, or /opt/rocm), its .info/version read as a bounded regular file (a
    FIFO there hung hipify: twenty-fifth re-run F5)."""
    for root in (subproc.safe_env().get("ROCM_PATH"), "/opt/rocm"):
        if not root:
            continue
        text = fileio.read_text_or_none(Path(root) / ".info" / "version", limit=4096) or ""
        m = textre.match(r"\s*(\d+)\.(\d+)", text)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return None


def resolve_hip_version(
    given: str | None, avoid: Sequence[Path] = (), *, run: bool = True
) -> tuple[str, str]:
    """The one HIP-version assumption every command makes (``hipify``, ``assess``): ``given``
    (a flag or a setting), else the HIP installed here (:func:`detect_hip_version`), else
    :data:`DEFAULT_HIP_VERSION`; with where it came from: ``given``, ``installed`` or
    ``default``. ``run=False`` reads only the install's files (headers, version file), never
    ``hipcc --version``: ``assess`` starts no program it was not asked to."""
    if given:
        return given, "given"
    found = detect_hip_version(avoid=avoid, run=run)
    if found:
        return found, "installed"
    return DEFAULT_HIP_VERSION, "default"


def detect_hip_version(avoid: Sequence[Path] = (), run: bool = True) -> str | None:
    """The HIP on this machine, without starting a process when possible: the install's
    ``hip/hip_version.h``; else ``hipcc --version`` (cached per hipcc path, mtime and size in
    the user cache folder; looked up and run with a sanitized PATH, no relative entries and
    none inside the folders in ``avoid``, the project, from a throw-away folder:
    :mod:`gpuport.subproc`); else the ROCm install's version file."""
    include = find_include(avoid=avoid)
    if include is not None:
        version = header_version(include)
        if version is not None:
            return version
    hipcc = subproc.which("hipcc", avoid=avoid)
    if hipcc is None:
        return _rocm_install_version()
    cached = _cached_version(hipcc)
    if cached is None and not run:  # asked to start no program
        return _rocm_install_version()
    if cached is not None:
        return cached

    try:
        with tempfile.TemporaryDirectory(prefix="gpuport-hipcc-") as tmp:
            done = subproc.run(
                [hipcc, "--version"],
                timeout_s=30,
                env=subproc.safe_env({"HIP_PLATFORM": "amd"}, avoid=avoid),
                cwd=tmp,
            )
    except (OSError, ValueError):
        return None
    m = _HIP_VERSION.search(done.text())
    if m is None:
        return _rocm_install_version()
    version = f"{m.group(1)}.{m.group(2)}"
    _cached_version(hipcc, version)
    return version


def _cached_version(hipcc: str, store: str | None = None) -> str | None:
    """The version cached for this hipcc (path, mtime, size); with ``store``, record it."""
    try:
        if (folder := usercache.cache_dir()) is None:
            return None
        st = Path(hipcc).stat()
        key = f"{Path(hipcc).resolve()}|{st.st_mtime_ns}|{st.st_size}"
        cache = folder / "hipcc-version.json"
        try:
            data = json_value(fileio.read_text_or_none(cache, limit=fileio.LIMIT_SETTINGS) or "")
        except ParseError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        if store is None:
            got = data.get(key)
            return got if isinstance(got, str) else None
        data[key] = store
        cache.parent.mkdir(parents=True, exist_ok=True)
        fileio.write_atomic(cache, json.dumps(data))
    except (OSError, GpuportError):
        return None
    return store


def compile_check(
    text: str,
    name: str,
    *,
    offload_archs: Sequence[str],
    include_dir: Path | None = None,
    hipcc: str | None = None,
    avoid: Sequence[Path] = (),
) -> CompileResult:
    """Compile translated ``text`` (file name ``name``) for AMD in a temporary folder, by the
    compiler ``hipcc`` wraps, called directly (:mod:`gpuport.hipify.compiler`);
    ``include_dir`` is a folder of gpuport's own (the dry run's temporary tree)."""
    from .compiler import compile_unit, project_flag, toolchain

    exe = hipcc or subproc.which("hipcc", avoid=avoid)
    if exe is None:
        raise EnvironmentProblem(HIPCC_MISSING)
    chain = toolchain(exe, avoid=avoid)
    archs = list(offload_archs)
    with tempfile.TemporaryDirectory(prefix="gpuport-hipify-") as tmp:
        source = Path(tmp) / (Path(name).name or "source.cu")
        fileio.write_atomic_bytes(source, encode(text), root=Path(tmp))
        roots = [Path(tmp)] + ([include_dir] if include_dir is not None else [])
        flags: list[str] = []
        if include_dir is not None:  # its name holds the project's folder names: checked too
            flags = project_flag("-I", str(include_dir), roots)[0] or []
        done = compile_unit(chain, source, archs, flags, roots=roots, avoid=avoid)
    error = done.error.replace(tmp + os.sep, "") if done.error else None
    return CompileResult(ok=done.ok, offload_archs=archs, error=error, limited=done.limited)


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
    wave64: WaveMode | None = None,
    headers: HipHeaders | None = None,
    unsafe: bool = False,
    hip_version_origin: str = "given",
) -> HipifyReport:
    """Translate ``path`` (a file or a folder) and report; see the module docstring.

    ``wave64``: ``fix`` ports the clear 32-lane sites, ``report`` leaves them to the hazards;
    None picks ``fix`` for a 64-lane target (CDNA) and ``report`` otherwise. ``headers``: the
    installed HIP (:mod:`gpuport.hipify.hipheaders`), used only when it is ``hip_version``.
    ``unsafe``: ``--unsafe-fixes``. With ``fix``, every file is read before any is translated:
    the lane-meaning analysis judges a kernel with the helpers, constants and host code of the
    other files (:func:`gpuport.hipify.wave64.meaning_of`)."""
    if not path.exists():
        raise GpuportError(f"no such file or folder: {path}")
    if out_dir is not None and in_place:
        raise GpuportError("--in-place and -o/--out-dir cannot be used together")
    if out_dir is not None:
        check_out_dir(path, out_dir)
    if check:
        if subproc.which("hipcc", avoid=(path,)) is None:
            raise EnvironmentProblem(HIPCC_MISSING)
        if not offload_archs:
            raise GpuportError("--offload-arch needs at least one target, e.g. gfx90a")
    target_info = resolve_target(target)
    mode: WaveMode = wave64 or ("fix" if target_info.wave_size == 64 else "report")
    packages = packages_on_demand()
    amap = load_api_map()
    wanted = _parse_version(hip_version)  # refuses a bad version before any work
    if headers is not None and _parse_version(headers.version).release[:2] != wanted.release[:2]:
        headers = None
    report = HipifyReport(
        root=str(path),
        out_dir=str(out_dir) if out_dir is not None else None,
        hip_version=hip_version,
        hip_version_origin=hip_version_origin,
        hip_headers=str(headers.include) if headers is not None else None,
        target=target_info.name,
        wave64=mode,
        unsafe_fixes=unsafe and mode == "fix",
        checked=check,
        environment=EnvFingerprint.collect(),
    )
    single = not path.is_dir()  # a FIFO or a device named on the command line is refused below
    read: list[tuple[str, Path, str, list[Finding], str]] = []  # rel, path, text, hazards, source
    lexed: dict[str, CxxSource] = {}
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
        # a single file is read only if it resolves inside its own folder: a project's
        # kernel.cu -> /home/me/secret was refused in a folder but read when named (sixth review)
        got = read_source(item.path, path.parent if single else path)
        if isinstance(got, Skip):
            report.skipped.append(SkippedFile(path=item.rel, reason=got.reason))
            continue
        hazards, source = hazards_of(
            item.rel, got, target=target_info, packages=packages, annotate=annotate
        )
        read.append((item.rel, item.path, got, hazards, source))
        # lexed once (the hazard pass's, cached): the analysis and the translation reuse it
        lexed[item.rel] = lex(source)
    meanings = None
    if mode == "fix":
        from .wave64 import meaning_of

        meanings = meaning_of(lexed)
    divergence = Divergence(lexed)  # a helper's masks judged by its callers in every file
    for rel, item_path, got, hazards, source in read:
        done = translate(
            source,
            hip_version=hip_version,
            launch_syntax=launch_syntax,
            wave64=mode,
            path=rel,
            headers=headers,
            unsafe=unsafe,
            meaning=meanings[rel] if meanings is not None else None,
            lexed=lexed.get(rel),
            divergence=divergence,
        )
        output = out_dir / rel if out_dir is not None else None
        if in_place and done.text != got:
            output = item_path
        result = FileResult(
            path=rel,
            output=str(output) if output is not None else None,
            replacements=done.replacements,
            by_family=family_counts(done.replacements, amap),
            unsupported=[UnsupportedName(**u._asdict()) for u in done.unsupported],
            unsupported_counts=_counted(u.name for u in done.unsupported),
            hazards=hazards,
            added_include=done.added_include,
            wave64=[
                WaveSite(line=c.line, kind=c.kind, detail=c.detail, unsafe=c.unsafe)
                for c in done.wave64
            ],
            wave64_left=[
                WaveSite(line=w.line, kind=w.kind, detail=w.reason) for w in done.wave64_left
            ],
            shims=[f"{x.name}: {x.reason}" for x in done.shims],
            text=done.text,
            original=got,
        )
        report.files.append(result)
    if out_dir is not None and not single:
        report.copied = list(other_files(path))
        report.skipped += uncopied(path)
    if single and not report.files:
        why = report.skipped[0].reason if report.skipped else "not a CUDA/C++ source file"
        raise GpuportError(f"cannot hipify {path}: {why}")
    finish(report)
    return report


def finish(report: HipifyReport) -> None:
    """(Re)compute the report's totals and merged counts (after a compile check, too)."""
    report.totals = _totals(report)
    report.by_family = _merge(f.by_family for f in report.files)
    report.unsupported_counts = _merge(f.unsupported_counts for f in report.files)


def hazards_of(
    rel: str,
    text: str,
    *,
    target: TargetInfo,
    packages: PackageDB,
    annotate: bool = False,
) -> tuple[list[Finding], str]:
    """The scan's GP3xx hazard pass on ``text`` (what :func:`read_source` returned), and the
    text to translate (with the hazards written in as comments when ``annotate``).
    Undecodable bytes (kept as surrogates for a byte-exact output) become U+FFFD for the
    hazard pass: one character each, so columns hold, and the report stays valid JSON."""
    shown = _SURROGATE.sub("\ufffd", text)
    hazards, _ = check_text(rel, shown, FileKind.NATIVE, target, packages)
    return hazards, annotate_text(text, hazards) if annotate else text


def translate_source(
    rel: str,
    text: str,
    *,
    target: TargetInfo,
    packages: PackageDB,
    hip_version: str,
    annotate: bool = False,
    launch_syntax: LaunchSyntax = "keep",
    wave64: WaveMode = "report",
    headers: HipHeaders | None = None,
    unsafe: bool = False,
) -> tuple[list[Finding], Translation]:
    """The per-file work of hipify on one file alone: the scan's GP3xx hazard pass, then the
    translation (``assess`` uses this for its dry run)."""
    hazards, source = hazards_of(rel, text, target=target, packages=packages, annotate=annotate)
    done = translate(
        source,
        hip_version=hip_version,
        launch_syntax=launch_syntax,
        wave64=wave64,
        path=rel,
        headers=headers,
        unsafe=unsafe,
    )
    return hazards, done


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


def _status(files: list[FileResult], status: str) -> int:
    return sum(1 for f in files if f.compile is not None and f.compile.status == status)


#: Why a header is "not compiled": it is checked through what includes it. Any other reason
#: (no confinement, a pipe in the project, the run's budget) leaves a unit unchecked.
THROUGH_INCLUDERS = ("a header:", "included by ")


def unchecked(f: FileResult) -> bool:
    """A translation unit ``--check`` was asked to compile and did not (not a header)."""
    c = f.compile
    return (
        c is not None
        and c.status == "not compiled"
        and not (c.error or "").startswith(THROUGH_INCLUDERS)
    )


def _totals(report: HipifyReport) -> dict[str, int]:
    files = report.files
    return {
        "files": len(files),
        "skipped": len(report.skipped),
        "replacements": sum(sum(f.replacements.values()) for f in files),
        "unsupported": sum(len(f.unsupported) for f in files),
        "hazards": sum(len(f.hazards) for f in files),
        "copied": len(report.copied),
        "compiled_ok": _status(files, "ok"),
        "compile_failed": _status(files, "failed"),
        "compile_inconclusive": _status(files, "inconclusive"),
        "not_compiled": _status(files, "not compiled"),
        "units_not_compiled": sum(1 for f in files if unchecked(f)),
        "wave64_fixed": sum(1 for f in files for c in f.wave64 if not c.unsafe),
        "wave64_unsafe": sum(1 for f in files for c in f.wave64 if c.unsafe),
        "shims": sum(len(f.shims) for f in files),
        "wave64_left": sum(len(f.wave64_left) for f in files),
    }
