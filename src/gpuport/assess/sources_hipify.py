"""The hipify adapter: a dry run of ``gpuport hipify`` over the project, and its compile check.

Split from :mod:`gpuport.assess.sources` (one adapter per core): the translation stays in
memory, and the optional compile check writes only to a temporary folder that is removed
afterwards. Imports of the cores happen inside the functions, as there.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuport import fileio, sandbox, subproc
from gpuport.assess.config import Settings
from gpuport.assess.model import CompileOutcome, HipifySection, UnsupportedUse
from gpuport.hipify.check import check_budget, stop_reason
from gpuport.hipify.hipheaders import HipHeaders
from gpuport.models import EnvironmentProblem
from gpuport.scan.finding import Finding

HIPCC_FALLBACK_ARCH = "gfx90a"  # Debian's hipcc ships device libraries for this CDNA target


@dataclass(frozen=True)
class _Translated:
    """One CUDA/C++ file of the dry run: the original, its translation and what hipify saw."""

    path: str
    original: str
    text: str
    replacements: dict[str, int]
    by_family: dict[str, int]
    unsupported: tuple[UnsupportedUse, ...]
    hazards: tuple[Finding, ...]


def _translate_tree(
    settings: Settings, hip_version: str
) -> tuple[list[_Translated], list[tuple[str, str]]]:
    """Translate every CUDA/C++ file the scan's walk yields, ``exclude`` applied.

    The same per-file work as :func:`gpuport.hipify.run.hipify_path`
    (:func:`~gpuport.hipify.run.translate_source`), over the same files the scan saw: the
    project's ``exclude`` patterns leave a file out of both, and nothing is written.
    """
    from gpuport.hipify.io import read_source
    from gpuport.hipify.run import family_counts, translate_source
    from gpuport.knowledge import load_packages, resolve_target
    from gpuport.knowledge.api_map import load_api_map
    from gpuport.scan.project.files import Skip, walk
    from gpuport.scan.rules import FileKind

    target = resolve_target(settings.target)
    packages = load_packages()
    amap = load_api_map()
    headers = _installed_headers(settings, hip_version)
    files: list[_Translated] = []
    skipped: list[tuple[str, str]] = []
    for item in walk(settings.root, exclude=settings.exclude):
        if isinstance(item, Skip):
            continue  # the scan lists these
        if item.kind is not FileKind.NATIVE:
            continue
        got = read_source(item.path)
        if isinstance(got, Skip):
            skipped.append((item.rel, got.reason))
            continue
        hazards, done = translate_source(
            item.rel,
            got,
            target=target,
            packages=packages,
            hip_version=hip_version,
            headers=headers,
        )
        files.append(
            _Translated(
                path=item.rel,
                original=got,
                text=done.text,
                replacements=dict(done.replacements),
                by_family=family_counts(done.replacements, amap),
                unsupported=tuple(
                    UnsupportedUse(name=u.name, path=item.rel, line=u.line, reason=u.reason)
                    for u in done.unsupported
                ),
                hazards=tuple(hazards),
            )
        )
    return files, skipped


def _installed_headers(settings: Settings, hip_version: str) -> HipHeaders | None:
    """The installed HIP's headers when the translation is for their version, as ``gpuport
    hipify`` uses them: both commands then count the same untranslatable names (a header
    such as ``hip/hip_bf16.h`` that HIP 5.2 lacks; issue 29's trial saw 70 against 64). Only
    the headers are read; hipcc is looked up on a PATH without the project's folders."""
    from gpuport.hipify.hipheaders import local_headers

    try:
        return local_headers(hip_version, subproc.which("hipcc", avoid=(settings.root,)))
    except (OSError, ValueError):
        return None


def run_hipify(
    settings: Settings,
    unread: Collection[str],
    check: bool,
    *,
    require_hipcc: bool = False,
) -> tuple[HipifySection, list[Finding]]:
    """A dry run of ``gpuport hipify`` over the project: statistics, unsupported, hazards.

    The translation is always for the HIP the port targets (``hip_version``, 6.4 unless set),
    whether or not it is compiled; when that is the installed HIP's version, its headers decide
    what exists, as in ``gpuport hipify`` (:func:`_installed_headers`). Nothing is
    written inside the project: translations stay in memory and, for the compile check, go
    to a temporary folder that is removed afterwards. A compile check asked for on the
    command line (``require_hipcc``) without hipcc is an environment problem (exit 3); asked
    for by the project's settings, it becomes a note, so the report still gets written on
    machines without hipcc.

    ``unread`` are the paths the scan could not read; the hazards hipify finds in them are
    returned so the verdict counts them (the second value).
    """
    hip_version = settings.hip_version
    files, skipped = _translate_tree(settings, hip_version)
    if not files:
        reason = "no CUDA/C++ sources in the project"
        if skipped:
            reason = f"no readable CUDA/C++ sources ({plural_files(len(skipped))} skipped)"
        return HipifySection(
            ran=False, reason=reason, skipped=[f"{p}: {why}" for p, why in skipped]
        ), []
    hipcc = subproc.which("hipcc", avoid=(settings.root,)) if check else None
    if check and hipcc is None and require_hipcc:
        raise EnvironmentProblem(
            "--hipify-check needs hipcc, which is not on PATH; install Debian's `hipcc` "
            "package (apt-get install hipcc) or a ROCm release, or drop --hipify-check"
        )
    if check and hipcc is None:
        check_note = "compile check asked for, but hipcc is not on PATH (apt-get install hipcc)"
    else:
        check_note = "" if check else "compile check not run (pass --hipify-check)"
    outcomes: list[CompileOutcome] = []
    local = ""
    if check and hipcc is not None:
        from gpuport.hipify.run import detect_hip_version

        local = detect_hip_version(avoid=(settings.root,)) or ""
        arch = _compile_arch(hipcc, settings.target)
        outcomes = _compile_all(files, hipcc, arch, hip_version, local, settings.root)
        check_note = f"hipcc (HIP {local or 'version unknown'}) -c for {arch}"
        if arch != settings.target:
            check_note += f": this hipcc cannot build for {settings.target}; {arch} stands in"
        if _older(local, hip_version):
            check_note += (
                f"; this hipcc is older than the HIP {hip_version} the translation is for: "
                f"a failure that goes away when the file is translated for HIP {local} is "
                "inconclusive"
            )
    extra = [h for f in files if f.path in unread for h in f.hazards]
    hazards: Counter[str] = Counter(h.rule_id for f in files for h in f.hazards)
    unsupported = [u for f in files for u in f.unsupported]
    return HipifySection(
        ran=True,
        reason=f"dry run over {plural_files(len(files))}; nothing written",
        hip_version=hip_version,
        files=len(files),
        replacements=sum(sum(f.replacements.values()) for f in files),
        by_family=_merged(f.by_family for f in files),
        unsupported=unsupported,
        unsupported_counts=dict(sorted(Counter(u.name for u in unsupported).items())),
        hazards=sum(hazards.values()),
        hazards_by_rule=dict(sorted(hazards.items())),
        unread_hazards=len(extra),
        local_hip_version=local,
        checked=bool(outcomes),
        check_note=check_note,
        compile=outcomes,
        skipped=[f"{p}: {why}" for p, why in skipped],
    ), extra


def plural_files(n: int) -> str:
    return f"{n} CUDA/C++ file{'' if n == 1 else 's'}"


def _merged(parts: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for part in parts:
        total.update(part)
    return dict(sorted(total.items()))


def _older(local: str, target: str) -> bool:
    """``local`` is a HIP version older than ``target`` (unknown: not older)."""
    from packaging.version import InvalidVersion, Version

    try:
        return bool(local) and Version(local) < Version(target)
    except InvalidVersion:
        return False


def _compile_arch(hipcc: str, target: str) -> str:
    """``target`` if this hipcc's compiler can build for it (a two-line probe of gpuport's
    own, compiled like every other file: :mod:`gpuport.hipify.compiler`), else the fallback."""
    from gpuport.hipify.run import compile_check

    try:
        probe = compile_check(
            "__global__ void k(float* x) { x[0] = 1.0f; }\n",
            "probe.hip",
            offload_archs=[target],
            hipcc=hipcc,
        )
    except EnvironmentProblem:
        return HIPCC_FALLBACK_ARCH
    return target if probe.ok else HIPCC_FALLBACK_ARCH


_UNITS = (".cu", ".cpp", ".cc", ".cxx", ".hip")  # headers compile through their includers


def _compile_all(
    files: Sequence[_Translated],
    hipcc: str,
    arch: str,
    hip_version: str,
    local: str,
    root: Path | None = None,
) -> list[CompileOutcome]:
    """Write every translation to a temporary tree (so includes resolve), compile each.

    With a hipcc older than the HIP the translation is for, a failure may be the old HIP's
    and not the port's: the file is then translated again for the local HIP (in a second
    tree) and compiled. If that translation leaves APIs the old HIP lacks, or compiles, the
    failure says nothing about ``hip_version``: inconclusive. If it fails as well, the error
    does not come from the version: failed.
    """
    from gpuport.hipify.io import encode
    from gpuport.hipify.run import compile_check

    outcomes: list[CompileOutcome] = []
    older = _older(local, hip_version)
    with tempfile.TemporaryDirectory(prefix="gpuport-assess-hip-") as tmp:
        base = Path(tmp) / "target"
        for f in files:
            dest = base / f.path
            fileio.make_dirs(dest.parent)
            fileio.write_atomic_bytes(dest, encode(f.text), root=base)
        again: dict[str, tuple[str, set[str]]] | None = None
        units = [f for f in files if f.path.endswith(_UNITS)]
        budget = check_budget(sum(len(f.text.encode()) for f in units))
        deadline, limited = time.monotonic() + budget, 0
        for f in units:
            stop = sandbox.refusal() or stop_reason(deadline - time.monotonic(), budget, limited)
            if stop is not None:  # as hipify --check: a budget, and two units at a limit
                outcomes.append(CompileOutcome(path=f.path, status="not compiled", error=stop))
                continue
            result = compile_check(
                f.text,
                f.path,
                offload_archs=[arch],
                include_dir=(base / f.path).parent,
                hipcc=hipcc,
                avoid=(root,) if root is not None else (),
            )
            limited += result.limited
            outcome = _outcome(f.path, result.ok, result.error)
            if outcome.status == "failed" and older:
                if again is None:
                    again = _retranslate(files, Path(tmp) / "local", local)
                text, lacking = again[f.path]
                lacks = sorted(lacking - {u.name for u in f.unsupported})
                if lacks:
                    why = (
                        f"HIP {local} here lacks {', '.join(lacks[:3])}, which the translation "
                        f"for HIP {hip_version} uses; check with HIP {hip_version} or newer"
                    )
                    outcome = CompileOutcome(path=f.path, status="inconclusive", error=why)
                else:
                    second = compile_check(
                        text,
                        f.path,
                        offload_archs=[arch],
                        include_dir=(Path(tmp) / "local" / f.path).parent,
                        hipcc=hipcc,
                        avoid=(root,) if root is not None else (),
                    )
                    retry = _outcome(f.path, second.ok, second.error)
                    if retry.status != "failed":
                        why = (
                            f"fails with HIP {local} when translated for HIP {hip_version} "
                            f"({outcome.error}); translated for HIP {local} it "
                            + ("compiles" if second.ok else f"is inconclusive: {retry.error}")
                            + f"; check with HIP {hip_version} or newer"
                        )
                        outcome = CompileOutcome(path=f.path, status="inconclusive", error=why)
            outcomes.append(outcome)
    return outcomes


def _retranslate(
    files: Sequence[_Translated], base: Path, hip_version: str
) -> dict[str, tuple[str, set[str]]]:
    """Every file translated for ``hip_version`` and written under ``base``: path -> (text,
    names left untranslated)."""
    from gpuport.hipify.io import encode
    from gpuport.hipify.translate import translate

    out: dict[str, tuple[str, set[str]]] = {}
    for f in files:
        done = translate(f.original, hip_version=hip_version)
        dest = base / f.path
        fileio.make_dirs(dest.parent)
        fileio.write_atomic_bytes(dest, encode(done.text), root=base)
        out[f.path] = (done.text, {u.name for u in done.unsupported})
    return out


def _outcome(path: str, ok: bool, error: str | None) -> CompileOutcome:
    """ok, failed or inconclusive, in the words ``gpuport hipify --check`` uses: one shared
    classification (:func:`gpuport.hipify.check.classify`), so a missing ``torch/extension.h``
    is "inconclusive" in both, with the header named."""
    from gpuport.hipify.check import classify

    if ok:
        return CompileOutcome(path=path, status="ok")
    status, why = classify(error)
    return CompileOutcome(
        path=path, status="failed" if status == "failed" else "inconclusive", error=why
    )


__all__ = ["HIPCC_FALLBACK_ARCH", "plural_files", "run_hipify"]
