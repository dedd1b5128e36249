"""Walk a project, run every checker on every file, assemble a ScanReport.

The engine is pure: no printing, no writes. Progress is reported through a
callback the CLI wires to a progress bar.
"""

from __future__ import annotations

import dataclasses
import errno
import multiprocessing
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuport import fileio
from gpuport.knowledge import PackageDB, TargetInfo, load_packages, resolve_target
from gpuport.models import EnvFingerprint, GpuportError, Severity
from gpuport.scan.check import check_text
from gpuport.scan.finding import Finding, SkippedFile
from gpuport.scan.model import ScanReport, Verdict
from gpuport.scan.project.after_rules import read_after_rules
from gpuport.scan.project.cxx_facts import CxxFacts
from gpuport.scan.project.files import (
    DEFAULT_MAX_BYTES,
    Candidate,
    Skip,
    header_template,
    read_text,
    safe_name,
    walk,
)
from gpuport.scan.project.opt_in import opt_in_extensions
from gpuport.scan.project.own_names import PACKAGING, OwnNames, own_names
from gpuport.scan.project.py_layout import lowered, module_level_line, read_layout
from gpuport.scan.project.routes import working_route
from gpuport.scan.project.view import ProjectView, apply, view_of
from gpuport.scan.ready_evidence import (
    ready_on_route,
    ready_seen,
    ready_templates,
    unread_kernel_templates,
)
from gpuport.scan.rules import FileKind, load_all
from gpuport.scan.rules.base import RULES
from gpuport.scan.rules.python import probe_index
from gpuport.scan.verdict import decide, estimate_effort, judged

__all__ = ["NothingToScan", "ScanOptions", "check_text", "scan_path"]

Progress = Callable[[int, int], None]


class NothingToScan(GpuportError):
    """The scan would read no file at all (an empty or mistyped folder): exit 2, never READY."""


PARALLEL_THRESHOLD = 200
CHUNK = 64


@dataclass(frozen=True)
class ScanOptions:
    target: str = "gfx942"
    knowledge_dir: Path | None = None
    include_vendored: bool = False
    exclude: tuple[str, ...] = ()
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    max_bytes: int = DEFAULT_MAX_BYTES
    kinds: frozenset[FileKind] | None = None
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    #: "core" judges core findings only; "all" judges every scope
    scope: str = "core"
    facts: CxxFacts | None = None


def _check_candidate(
    cand: Candidate,
    target: TargetInfo,
    packages: PackageDB,
    opts: ScanOptions,
    own: OwnNames | None = None,
) -> tuple[list[Finding], SkippedFile | None]:
    if cand.kind is FileKind.GPU_BINARY:
        text = ""
    else:
        got = read_text(cand.path, opts.max_bytes)
        if isinstance(got, Skip):
            return [], SkippedFile(path=cand.rel, reason=got.reason)
        text = got
    try:
        findings, reason = check_text(
            cand.rel,
            text,
            cand.kind,
            target,
            packages,
            path=cand.path,
            select=opts.select,
            ignore=opts.ignore,
            root=cand.root,
            own=own,
            facts=opts.facts,
        )
    except RecursionError:
        return [], SkippedFile(path=cand.rel, reason="nested too deeply to analyse")
    except Exception as exc:  # a checker bug must not abort the whole scan
        if os.environ.get("GPUPORT_DEBUG"):
            raise
        # the type only: the message may quote the file; GPUPORT_DEBUG=1 shows it all
        why = f"gpuport could not analyse it (internal error, {type(exc).__name__}); please report"
        return [], SkippedFile(path=cand.rel, reason=why, internal=True)
    skipped = SkippedFile(path=cand.rel, reason=reason) if reason else None
    return capped(findings), skipped


#: The most findings of one rule listed for one file. The largest count seen on real
#: projects is 141 (fastllm's GP302 in one file); 5 files of 2 MB of one repeated shuffle
#: line made 240,000 findings and a 267 MB SARIF at 2.2 GB (twenty-fifth re-run, F13).
MOST_PER_RULE_PER_FILE = 500


def capped(findings: list[Finding]) -> list[Finding]:
    """At most :data:`MOST_PER_RULE_PER_FILE` findings of a rule per file (one per line
    first), the first in line order; the rest become one ``info`` finding of the same rule
    at the first line not listed, saying how many were not listed: nothing is dropped
    without a word. The verdict and effort count the listed ones (docs/scan.md)."""
    by_key: dict[tuple[str, str], int] = Counter((f.rule_id, f.location.path) for f in findings)
    if max(by_key.values(), default=0) <= MOST_PER_RULE_PER_FILE:
        return findings
    kept: list[Finding] = []
    seen: Counter[tuple[str, str]] = Counter()
    first_left: dict[tuple[str, str], Finding] = {}
    for f in one_per_line(findings):
        key = (f.rule_id, f.location.path)
        seen[key] += 1
        if seen[key] <= MOST_PER_RULE_PER_FILE:
            kept.append(f)
        else:
            first_left.setdefault(key, f)
    for key, f in first_left.items():
        more = seen[key] - MOST_PER_RULE_PER_FILE
        kept.append(
            replace(
                f,
                severity=Severity.INFO,
                default_severity=None,
                message=f"{f.rule_id}: {more:,} more findings of this rule in this file not "
                f"listed (at most {MOST_PER_RULE_PER_FILE} per rule per file; the first not "
                "listed is here)",
                fix="Fix the listed ones; the same fix applies to the rest.",
            )
        )
    return kept


def _chunk_worker(
    chunk: Sequence[Candidate], opts: ScanOptions, own: OwnNames
) -> list[tuple[list[Finding], SkippedFile | None]]:
    target = resolve_target(opts.target, opts.knowledge_dir)
    packages = load_packages(opts.knowledge_dir)
    return [_check_candidate(c, target, packages, opts, own) for c in chunk]


def scan_path(
    root: Path, opts: ScanOptions | None = None, progress: Progress | None = None
) -> ScanReport:
    """Scan ``root`` (a folder or one file) for ROCm blockers."""
    opts = opts or ScanOptions()
    started = time.perf_counter()
    try:
        info = root.stat()
    except FileNotFoundError:
        raise GpuportError(f"path does not exist: {root}") from None
    except OSError as exc:
        why = "symbolic link loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        raise GpuportError(f"cannot read {root}: {why}") from None
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        raise GpuportError(f"{root} is not a folder or a regular file")
    target = resolve_target(opts.target, opts.knowledge_dir)
    packages = load_packages(opts.knowledge_dir)
    load_all()  # a scan may meet every file kind; --select/--ignore are checked against all
    for rid in (opts.select or frozenset()) | opts.ignore:
        if not any(r.startswith(rid) for r in RULES):
            raise GpuportError(f"no rule matches {rid!r} (see `gpuport rules`)")

    probe_index.new_scan()  # a project read by a rule is read again for each scan
    candidates: list[Candidate] = []
    skipped: list[SkippedFile] = []
    templates: list[Candidate] = []  # header templates: read for the macro facts only
    texts: list[tuple[str, Path]] = []  # text templates, looked into for GPU kernels
    walked = walk(
        root,
        include_vendored=opts.include_vendored,
        exclude=opts.exclude,
        templates=True,
        kernel_templates=texts,
    )
    for item in walked:
        if isinstance(item, Skip):
            skipped.append(SkippedFile(path=item.rel, reason=item.reason))
        elif header_template(item.rel):
            templates.append(item)
        elif opts.kinds is None or item.kind in opts.kinds:
            candidates.append(item)
    unread = unread_kernel_templates(texts, opts.max_bytes)
    skipped.extend(unread)
    if not candidates:
        raise NothingToScan(_nothing_to_scan(root, skipped, opts.kinds))
    own = own_names(root, {c.path.parent for c in candidates if c.path.name in PACKAGING})

    view = view_of(root, candidates, opts.max_bytes, templates)
    opts = replace(opts, facts=view.facts)
    results: list[tuple[list[Finding], SkippedFile | None]] = []
    total = len(candidates)
    if opts.jobs > 1 and total >= PARALLEL_THRESHOLD:
        chunks = [candidates[i : i + CHUNK] for i in range(0, total, CHUNK)]
        ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        # never more workers than chunks or cores (`-j 100000` forked until killed; 22nd re-run)
        workers = max(1, min(opts.jobs, len(chunks), os.cpu_count() or 1))
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            done = 0
            jobs = len(chunks)
            for part in pool.map(_chunk_worker, chunks, [opts] * jobs, [own] * jobs):
                results.extend(part)
                done += len(part)
                if progress:
                    progress(done, total)
    else:
        for i, cand in enumerate(candidates, 1):
            results.append(_check_candidate(cand, target, packages, opts, own))
            if progress:
                progress(i, total)

    findings = one_per_construct(one_per_line(f for found, _ in results for f in found))
    skipped.extend(skip for _, skip in results if skip is not None)
    read = total - sum(1 for _, s in results if s is not None)
    read_after_rules(view, findings, opts.max_bytes, candidates, packages, opts.kinds)
    layout = read_layout(root, findings, opts.max_bytes)
    view.self_tests = layout.blocks
    findings = lowered(apply(findings, view), layout.dead)
    findings.sort(key=_sort_key)
    counts = Counter(f.severity for f in findings)
    kinds = Counter(c.kind.value for c in candidates)
    judged_findings = judged(findings, opts.scope)
    route = [r.path for r in view.routes if r.counts]
    verdict, reason = decide(judged_findings, view.routes, RULES, lambda p: _component(view, p))
    if verdict is Verdict.BLOCKED and not route:
        verdict, reason = _only_the_image_blocks(verdict, reason, view, judged_findings)
    if verdict is Verdict.BLOCKED and not route:
        verdict, reason = _only_optional_extensions_block(verdict, reason, view, judged_findings)
    if verdict is Verdict.READY:
        verdict, reason = ready_on_route(verdict, reason, judged_findings)
    if verdict in (Verdict.READY, Verdict.MINOR_WORK):
        verdict, reason = ready_seen(verdict, reason, view, candidates, skipped)
        verdict, reason = ready_templates(verdict, reason, unread)
    if verdict in (Verdict.READY, Verdict.MINOR_WORK) and not route:
        verdict, reason = _never_built_for_rocm(verdict, reason, view, candidates, findings)
    failed = sum(1 for s in skipped if s.internal)
    if failed:
        reason += (
            f"; {failed} file{'s' if failed != 1 else ''} not analysed because of a gpuport "
            "error: the verdict does not cover them"
        )
    scope_counts: dict[str, dict[Severity, int]] = {}
    for f in findings:
        scope_counts.setdefault(f.scope, {s: 0 for s in Severity})[f.severity] += 1
    nv = [(c.path, c.evidence) for c in view.build.components if c.nvidia_only]
    folders = {  # every folder holding a finding, once (each component tried them all)
        p.rsplit("/", k)[0]
        for f in findings
        for p in [f.location.path]
        for k in range(1, p.count("/") + 1)
    }
    has_nv_findings = {c for c, _ in nv if c in folders}

    def component_of(path: str) -> str:
        return _component(view, path)

    return ScanReport(
        root=safe_name(str(root)),
        own_packages=sorted(own.packages),
        target=target,
        files_scanned=read,
        files_by_kind=dict(sorted(kinds.items())),
        findings=findings,
        skipped=sorted(skipped, key=lambda s: s.path),
        counts={sev: counts.get(sev, 0) for sev in Severity},
        verdict=verdict,
        verdict_reason=reason,
        effort=estimate_effort(
            judged_findings,
            RULES,
            component_of,
            [(p, e) for p, e in nv if p in has_nv_findings] if route else [],
            device_files(candidates, view),
            opts.knowledge_dir,
        ),
        scope=opts.scope,
        routes=view.routes,
        components=view.build.components,
        not_built=dict(sorted(view.build.not_built.items())),
        scope_counts=dict(sorted(scope_counts.items())),
        fingerprint=EnvFingerprint.collect(),
        duration_s=round(time.perf_counter() - started, 3),
    )


def device_files(candidates: Sequence[Candidate], view: ProjectView) -> int:
    """The CUDA sources (.cu/.cuh) in core code that the ROCm build compiles: the project has
    GPU code to bring up (the effort model's bring-up component)."""
    from gpuport.scan.project.scopes import Scope, scope_of

    return sum(
        1
        for c in candidates
        if c.rel.endswith((".cu", ".cuh"))
        and c.rel not in view.build.not_built
        and scope_of(c.rel) is Scope.CORE
    )


def one_per_line(found: Iterable[Finding]) -> list[Finding]:
    """One finding per rule per line, the most severe, sorted for the report.

    A rule that matches twice on one line (``major == 8 and minor > 0``), or a ``-r`` include
    also scanned on its own, is one thing to fix: the others on that line are folded into the
    kept finding's message as a count, so nothing disappears without a word.
    """
    best: dict[tuple[str, str, int], Finding] = {}
    extra: Counter[tuple[str, str, int]] = Counter()
    out: list[Finding] = []
    whole_file: set[tuple[str, str, str]] = set()
    for f in sorted(found, key=_sort_key):
        if f.location.line is None:
            if (f.rule_id, f.location.path, f.message) not in whole_file:
                whole_file.add((f.rule_id, f.location.path, f.message))
                out.append(f)
            continue
        key = (f.rule_id, f.location.path, f.location.line)
        kept = best.get(key)
        if kept is None:
            best[key] = f
        elif f.message != kept.message or f.location.column != kept.location.column:
            extra[key] += 1
    for key, f in best.items():
        if extra[key]:
            more = extra[key]
            f = dataclasses.replace(f, message=f"{f.message} (and {more} more on this line)")
        out.append(f)
    out.sort(key=_sort_key)
    return out


#: Rules that describe one construct from different sides when they fire on the same line:
#: a shuffle or ballot call (its 32-bit mask, its offset 16, its lane arithmetic, its result
#: kept in 32 bits), an nvcc command line (nvcc itself, its flags, its NVIDIA
#: architectures), one requirement (no ROCm build, a CUDA pin, a CUDA index), one import.
CONSTRUCTS: tuple[frozenset[str], ...] = (
    frozenset({"GP302", "GP304", "GP305", "GP307", "GP308"}),
    frozenset({"GP402", "GP403", "GP408"}),
    frozenset({f"GP1{n:02d}" for n in range(1, 10)}),
    frozenset({"GP201", "GP202"}),
)
_GROUP_OF = {rid: i for i, group in enumerate(CONSTRUCTS) for rid in group}
#: Groups whose rules must also point at the same column to be one construct (two
#: requirements, or two imports, can share a line of a pyproject array).
_SAME_COLUMN = frozenset({2, 3})


def one_per_construct(findings: list[Finding]) -> list[Finding]:
    """One finding per construct per line across rules (issue 24): of the findings of one
    :data:`CONSTRUCTS` group on a line, the most severe is kept and says which others it
    stands for; those stay in the report as ``info`` naming it, so the effort counts the
    construct once and nothing disappears without a word."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, f in enumerate(findings):
        group = _GROUP_OF.get(f.rule_id)
        if group is None or f.location.line is None or f.severity is Severity.INFO:
            continue
        column = f.location.column if group in _SAME_COLUMN else None
        if group in _SAME_COLUMN and column is None:
            continue  # which requirement of the line is not known: keep each
        groups.setdefault((group, f.location.path, f.location.line, column), []).append(i)
    out = list(findings)
    for members in groups.values():
        if len(members) < 2:
            continue
        ranked = sorted(members, key=lambda i: (-out[i].severity.rank, out[i].rule_id))
        keep, rest = ranked[0], ranked[1:]
        kept = out[keep]
        also = ", ".join(sorted({out[i].rule_id for i in rest}))
        out[keep] = dataclasses.replace(
            kept, message=f"{kept.message} (one construct: also {also} on this line)"
        )
        for i in rest:
            f = out[i]
            out[i] = dataclasses.replace(
                f,
                severity=Severity.INFO,
                default_severity=f.default_severity or f.severity,
                message=f"{f.message} (the same construct as {kept.rule_id} on this line, "
                "counted there)",
            )
    return out


def _nothing_to_scan(
    root: Path, skipped: list[SkippedFile], kinds: frozenset[FileKind] | None
) -> str:
    """The one-line error for a scan that would read no file at all."""
    if kinds is not None:
        names = ", ".join(sorted(k.value for k in kinds))
        return f"nothing to scan in {root}: no file of the kind(s) asked for (--kind {names})"
    if root.is_file():
        if skipped:  # a link out of its own folder, unreadable...
            return f"cannot scan {root}: {skipped[0].reason}"
        return f"{root} is not a file kind gpuport scans (see `gpuport scan --help`)"
    if skipped:
        first = skipped[0]
        return (
            f"nothing to scan in {root}: {len(skipped)} item(s) skipped, e.g. "
            f"{first.path}: {first.reason}"
        )
    return (
        f"nothing to scan in {root}: no Python, CUDA/C++, build, requirements or container "
        "file found (an empty or mistyped folder?)"
    )


#: findings that say the project's own build compiles CUDA code (a CUDAExtension, a CMake CUDA
#: language or target, nvcc in a Makefile); an extension a module loads at run time (GP211's
#: `load()`) is an optional fast path as often as not (peft's BOFT tuner) and does not count
_OWN_CUDA_BUILD = frozenset({"GP404", "GP401", "GP408"})


def _only_the_image_blocks(
    verdict: Verdict, reason: str, view: ProjectView, findings: Sequence[Finding]
) -> tuple[Verdict, str]:
    """A project that installs or builds without its container (a package or build file at
    its root) is not blocked when its only blockers are the CUDA base images of its
    Dockerfiles: the image needs a ROCm base (a one-line change ``gpuport port`` writes beside
    it), the project itself does not (issue 24, sixteenth sample: OpenRLHF, a Python package
    whose one blocker was ``FROM nvcr.io/nvidia/pytorch``, was "blocked")."""
    blockers = [f for f in findings if f.severity is Severity.BLOCKER]
    if not view.package or not blockers or any(f.rule_id != "GP501" for f in blockers):
        return verdict, reason
    where = ", ".join(sorted({f"{f.location.path}:{f.location.line}" for f in blockers})[:3])
    return Verdict.MAJOR_WORK, (
        f"only its container images block ({where}: CUDA base images); {view.package} "
        "installs without them, and each image needs a ROCm base"
    )


def _only_optional_extensions_block(
    verdict: Verdict, reason: str, view: ProjectView, findings: Sequence[Finding]
) -> tuple[Verdict, str]:
    """A package whose every native extension a default install leaves out
    (:func:`opt_in.opt_in_extensions`: Uni-Core's ``--enable-cuda-ext``), with no other build
    of native code, is not blocked when its blockers all lie in that native code: it installs
    and runs on ROCm without the extensions, and porting them is the work (issue 24,
    eighteenth sample)."""
    setup = view.root / "setup.py"
    blockers = [f for f in findings if f.severity is Severity.BLOCKER]
    # a CMake/Make file beside the extensions' own sources builds the same extensions another
    # way (torchani's torchani/csrc/CMakeLists.txt, for C++ users): no other native build
    folders = {f.location.path.rpartition("/")[0] for f in blockers}
    other = [b for b in view.build_texts if b.rpartition("/")[0] not in folders]
    if not blockers or other or not setup.is_file():
        return verdict, reason
    if any(f.location.path not in view.native and f.location.path != "setup.py" for f in blockers):
        return verdict, reason
    text = fileio.read_text_or_none(setup, limit=4 << 20, root=view.root)
    line = opt_in_extensions(text) if text is not None else None
    if line is None:
        return verdict, reason
    return Verdict.MAJOR_WORK, (
        f"its {len(blockers)} blocker{'s' if len(blockers) != 1 else ''} lie in native "
        f"extensions a default install does not build (setup.py:{line}): the package runs "
        "without them, and porting them is the work"
    )


def _never_built_for_rocm(
    verdict: Verdict,
    reason: str,
    view: ProjectView,
    candidates: Sequence[Candidate],
    findings: Sequence[Finding],
) -> tuple[Verdict, str]:
    """With no ROCm route, a project whose own build compiles CUDA sources has never been
    built for ROCm: that bring-up is porting work however clean the scan is, so at least major
    work (issue 24: Pointnet2_PyTorch, SqueezeLLM, lietorch were "minor work")."""
    sources = device_files(candidates, view)
    builds = sorted(
        {
            f"{f.location.path}:{f.location.line}"
            for f in findings
            if f.rule_id in _OWN_CUDA_BUILD
            # a CUDAExtension in a build script not named setup.py (`setup_cuda.py`) is the
            # build too; `load()` at run time only at a module's top level, run on import
            # (stylegan2-pytorch, twenty-third sample), not in a function (peft's BOFT)
            or (f.rule_id == "GP211" and f.message.startswith("`CUDAExtension`"))
            or (
                f.rule_id == "GP211"
                and f.message.startswith("`load`")
                and module_level_line(view.root / f.location.path, f.location.line or 0)
            )
        }
    )
    if not sources or not builds:
        return verdict, reason
    return Verdict.MAJOR_WORK, (
        f"no ROCm route, and its own build compiles {sources} CUDA source file"
        f"{'s' if sources != 1 else ''} ({builds[0]}) that no ROCm build has compiled yet: "
        f"bring-up and validation on ROCm are porting work ({reason})"
    )


def _component(view: ProjectView, path: str) -> str:
    comp = view.build.component_of(path)
    if comp is not None and not comp.packaging and not working_route(view.routes):
        return ""  # a folder of CUTLASS kernels is a component only beside a ROCm route
    return comp.path if comp else ""


def _sort_key(f: Finding) -> tuple[int, str, int, int, str]:
    loc = f.location
    return (-f.severity.rank, loc.path, loc.line or 0, loc.column or 0, f.rule_id)
