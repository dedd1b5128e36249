"""``gpuport port``: scan, ask every fix family for proposals, keep the ones asked for, show
them as a diff or write them.

1. The project is scanned (:func:`gpuport.scan.engine.scan_path`, with ``--select/--ignore``).
2. Each family in :data:`FAMILIES` proposes fixes for the findings above info.
3. Safe fixes are taken, unsafe ones only with ``unsafe_fixes``; a fix whose edit overlaps one
   already taken, or that would create a file that exists, is left out whole and says why.
4. The diff is computed; with ``apply`` every file is checked first (no link, no foreign
   backup), then each changed file is backed up and written atomically (:mod:`gpuport.fileio`)
   and new files are created the same way; the project is scanned again to verify.

Nothing here runs code of the project; ``check`` compiles changed native files with hipcc and
nvcc through :mod:`gpuport.port.check`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuport import fileio, textre
from gpuport.knowledge import load_packages
from gpuport.linebreaks import odd_line_break
from gpuport.models import EnvFingerprint, GpuportError
from gpuport.port import (
    fix_ci,
    fix_cmake,
    fix_containers,
    fix_deps,
    fix_load,
    fix_native,
    fix_python,
    fix_release,
    fix_setup,
    fix_setup_libs,
    nvcc_tests,
    routes,
)
from gpuport.port.context import PortContext, Proposal, fixable, ref
from gpuport.port.edits import Edit, FileEdits, created_hunk, hunks
from gpuport.port.fix_cmake import COMPAT
from gpuport.port.model import FileDiff, Fix, PortReport, Unfixed, Verification
from gpuport.scan.engine import ScanOptions, scan_path
from gpuport.scan.finding import Finding
from gpuport.scan.model import ScanReport
from gpuport.scan.project.on_route import has_hip_mark

__all__ = ["FAMILIES", "PortOptions", "port_path", "safe_fix_counts"]

_NATIVE = textre.compile(r"\.(?:cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hxx|inl)$")

Family = Callable[[PortContext], list[Proposal]]

#: The fix families, in priority order: when two fixes would edit the same text, the first
#: family's fix is taken and the other is left out with the reason.
FAMILIES: tuple[tuple[str, Family], ...] = (
    ("kernels", fix_native.propose),
    ("kernels", nvcc_tests.propose),
    ("setup.py", fix_setup.propose),
    ("setup.py", fix_setup_libs.propose),
    ("cpp_extension.load", fix_load.propose),
    ("cmake", fix_cmake.propose),
    ("dependencies", fix_deps.propose),
    ("containers", fix_containers.propose),
    ("python", fix_python.propose),
    ("ci", fix_ci.propose),
    ("ci", fix_release.propose),
)


@dataclass(frozen=True)
class PortOptions:
    target: str = "gfx942"
    knowledge_dir: Path | None = None
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    unsafe_fixes: bool = False
    apply: bool = False
    verify: bool = True
    check: bool = False
    offload_archs: tuple[str, ...] = ("gfx90a",)
    include_vendored: bool = False
    exclude: tuple[str, ...] = ()
    jobs: int = 1
    families: frozenset[str] | None = None


@dataclass
class _Plan:
    taken: list[Proposal] = field(default_factory=list)
    left: dict[str, str] = field(default_factory=dict)  # proposal id -> why not taken
    files: dict[str, FileEdits] = field(default_factory=dict)
    creates: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (text, fix)


def _scan(root: Path, opts: PortOptions) -> ScanReport:
    return scan_path(
        root,
        ScanOptions(
            target=opts.target,
            knowledge_dir=opts.knowledge_dir,
            include_vendored=opts.include_vendored,
            exclude=opts.exclude,
            select=opts.select,
            ignore=opts.ignore,
            jobs=opts.jobs,
        ),
    )


def _propose(ctx: PortContext, families: frozenset[str] | None) -> list[Proposal]:
    out: list[Proposal] = []
    seen: set[str] = set()
    for name, family in FAMILIES:
        if families is not None and name not in families:
            continue
        for prop in family(ctx):
            if prop.id in seen:
                continue
            seen.add(prop.id)
            out.append(prop)
    return out


def _plan(ctx: PortContext, proposals: list[Proposal], unsafe: bool) -> _Plan:
    plan = _Plan()
    chosen: dict[str, str] = {}  # group -> the alternative taken
    for prop in proposals:
        if prop.group and (prop.safe or unsafe):
            best = chosen.get(prop.group)
            if best is None or (unsafe and not prop.safe):
                chosen[prop.group] = prop.id
    for prop in proposals:
        if not prop.safe and not unsafe:
            plan.left[prop.id] = "unsafe: applied only with --unsafe-fixes"
            continue
        if prop.group and chosen.get(prop.group) != prop.id:
            plan.left[prop.id] = f"superseded by fix {chosen.get(prop.group)}"
            continue
        why = _conflict(ctx, plan, prop)
        if why is not None:
            plan.left[prop.id] = why
            continue
        for path, spans in prop.edits.items():
            fe = plan.files[path]
            broad = tuple(
                dict.fromkeys(f"{f.rule_id} {f.location.path}" for f in prop.findings)
            )  # an edit that serves the fix as a whole (an import, a macro definition)
            fe.add_all(
                [
                    Edit(s, e, new, prop.id, tuple(ref(f).label() for f in own) or broad)
                    for s, e, new, own in spans
                ]
            )
        for path, text in prop.creates.items():
            plan.creates[path] = (text, prop.id)
        plan.taken.append(prop)
    return plan


def _conflict(ctx: PortContext, plan: _Plan, prop: Proposal) -> str | None:
    for path, created in prop.creates.items():
        if path in plan.creates:
            return f"{path} is created by fix {plan.creates[path][1]} already"
        if ctx.exists(path):
            return f"{path} exists already"
        if (odd := odd_line_break(path + created)) is not None:
            return f"{path} would hold {odd}, a line break not every reader of it sees"
    for path, spans in prop.edits.items():
        if path not in plan.files:
            text = ctx.read(path)
            if text is None:
                return f"{path} cannot be read"
            if (odd := odd_line_break(text)) is not None:
                return f"{path} holds {odd}, a line break not every reader of it sees"
            plan.files[path] = FileEdits(path, text)
        fe = plan.files[path]
        for s, e, new, _ in spans:
            hit = fe.conflicts(Edit(s, e, new, prop.id))
            if hit is not None:
                return f"it overlaps fix {hit.fix} in {path}"
    return None


def _labels(taken: list[Proposal]) -> dict[str, list[str]]:
    return {p.id: [ref(f).label() for f in p.findings] for p in taken}


def _diffs(plan: _Plan) -> tuple[list[FileDiff], dict[str, str]]:
    labels = _labels(plan.taken)
    out: list[FileDiff] = []
    texts: dict[str, str] = {}
    for path in sorted(set(plan.files) | set(plan.creates)):
        if path in plan.creates:
            text, fix = plan.creates[path]
            texts[path] = text
            out.append(
                FileDiff(
                    path=path,
                    action="create",
                    hunks=[created_hunk(text, [fix], labels)],
                    fixes=[fix],
                )
            )
            continue
        fe = plan.files[path]
        if not fe.edits:
            continue
        new = fe.apply()
        if new == fe.original:
            continue
        texts[path] = new
        spans = [(*fe.lines_of(e), e.fix, e.labels) for e in fe.edits]
        fixes = list(dict.fromkeys(e.fix for e in fe.edits))
        out.append(
            FileDiff(
                path=path,
                action="modify",
                hunks=hunks(fe.original, new, spans, labels, fe.opcodes(new)),
                fixes=fixes,
            )
        )
    return out, texts


_BOM = b"\xef\xbb\xbf"


def _creatable(path: Path, root: Path, rel: str) -> None:
    """Refuse, before anything is written, a file to create where a file already stands or
    where one of its folders is a file (``cmake`` a regular file, ``cmake/gpuport_hip.cmake``
    to create): the write would fail half-way, after other files were rewritten."""
    if os.path.lexists(path):
        raise GpuportError(f"cannot create {rel}: it exists already (nothing written)")
    folder = path.parent
    while folder != root and folder != folder.parent:
        if os.path.lexists(folder):
            if not folder.is_dir():
                where = folder.relative_to(root).as_posix()
                raise GpuportError(
                    f"cannot create {rel}: {where} is a file, not a folder (nothing written)"
                )
            return
        folder = folder.parent


def _write(root: Path, files: list[FileDiff], texts: dict[str, str]) -> tuple[list[str], list[str]]:
    """Check every destination first, then back up and write (see the module docstring)."""
    originals: dict[str, bytes] = {}
    for f in files:
        path = root / f.path
        fileio.check_destination(path, root)
        if f.action != "modify":  # a file where a folder of it goes (39th re-run F21)
            _creatable(path, root, f.path)
        if f.action == "modify":
            data = fileio.read_bytes(path, limit=fileio.LIMIT_SOURCE, root=root)
            originals[f.path] = data
            state = fileio.backup_state(path, data)
            if state == "other":
                raise GpuportError(
                    f"{fileio.backup_path(path)} exists and is not a copy of {f.path}; "
                    "move it away first (nothing written)"
                )
    written: list[str] = []
    backups: list[str] = []
    for f in files:
        path = root / f.path
        if f.action == "modify":
            if fileio.backup_state(path, originals[f.path]) != "same":
                fileio.backup(path, originals[f.path], root=root)
            backups.append(f.path + fileio.BACKUP_SUFFIX)
        else:
            fileio.make_dirs(path.parent)
            fileio.check_destination(path, root)
        text = texts[f.path]
        if f.action == "modify" and originals[f.path].startswith(_BOM) and text[:1] != "\ufeff":
            text = "\ufeff" + text  # the reader drops it; a rewrite keeps the file's own BOM
        fileio.write_atomic(path, text, root=root)
        written.append(f.path)
    return written, backups


def _key(f: Finding) -> tuple[str, str, int | None]:
    return (f.rule_id, f.location.path, f.location.line)


#: Rules reported once per file (the file uses a library): a report at another line of the
#: same file after the fix is the same job, not a new one.
_PER_FILE = ("GP316", "GP319")


def _per_file(f: Finding) -> tuple[str, str, str]:
    """A per-file finding's identity: rule, file, and what it is about (its message up to
    the first parenthesis: "this file uses CUB")."""
    return (f.rule_id, f.location.path, f.message.split("(", 1)[0].strip())


def _line_map(fe: FileEdits, new: str) -> dict[int, int]:
    """1-based old line -> new line, for the lines the edits left as they were (the line
    opcodes of the edits themselves: difflib over the file was quadratic)."""
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in fe.opcodes(new):
        # an edited line replaced by one line is the same line, moved
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1):
                out[i1 + k + 1] = j1 + k + 1
    return out


def _verify(
    root: Path,
    opts: PortOptions,
    before: list[Finding],
    taken: list[Proposal],
    plan: _Plan,
    texts: dict[str, str],
) -> Verification:
    """Scan again. An addressed finding must be gone (or lowered to info); a finding the
    first scan did not have is new, unless it is the same finding moved by the edits, the
    same per-file finding at another line, or a line a new file copies from a file the fix
    left as it was (a ROCm requirements file carrying an unfixed pin)."""
    after = fixable(_scan(root, opts))
    maps = {p: _line_map(fe, texts[p]) for p, fe in plan.files.items() if p in texts}

    def moved(f: Finding) -> tuple[str, str, int | None]:
        line = f.location.line
        if f.location.path in maps and line is not None:
            line = maps[f.location.path].get(line, -line)
        return (f.rule_id, f.location.path, line)

    addressed = {_key(f) for p in taken if p.resolves for f in p.findings}
    old_moved = {moved(f): f for f in before}
    now = {_key(f) for f in after}
    per_file_now = {_per_file(f) for f in after if f.rule_id in _PER_FILE}
    snippets = {(f.rule_id, (f.location.snippet or "").strip()) for f in before}
    still: list[str] = []
    for f in before:
        if _key(f) not in addressed:
            continue
        if moved(f) in now or (f.rule_id in _PER_FILE and _per_file(f) in per_file_now):
            still.append(f"{f.rule_id} {f.location.path}:{f.location.line}")
    new: list[str] = []
    per_file_before = {_per_file(o) for o in before}  # a set: `any` over `before` was quadratic
    for f in after:
        if _key(f) in old_moved:
            continue
        if f.rule_id in _PER_FILE and _per_file(f) in per_file_before:
            continue
        if (
            f.location.path in plan.creates
            and (f.rule_id, (f.location.snippet or "").strip()) in snippets
        ):
            continue
        new.append(f"{f.rule_id} {f.location.path}:{f.location.line}")
    return Verification(
        addressed=len(addressed), still_reported=sorted(set(still)), new_findings=sorted(set(new))
    )


def safe_fix_counts(
    report: ScanReport, root: Path, knowledge_dir: Path | None = None
) -> tuple[int, int, int]:
    """For ``assess``: (items, items with a safe fix, items with any fix) of a scan already
    made, without scanning again or writing anything. Items are the findings ``port``
    works on (above info, in a scope a user builds or runs)."""
    ctx = PortContext(
        root=root,
        report=report,
        packages=load_packages(knowledge_dir),
        target=report.target,
        findings=fixable(report),
    )
    proposals = [p for p in _propose(ctx, None) if p.resolves]
    safe = {_key(f) for p in proposals if p.safe for f in p.findings}
    any_ = {_key(f) for p in proposals for f in p.findings}
    keys = [_key(f) for f in ctx.findings]
    return len(keys), sum(1 for k in keys if k in safe), sum(1 for k in keys if k in any_)


def port_path(root: Path, opts: PortOptions | None = None) -> PortReport:
    """Compute (and with ``opts.apply`` write) the fixes for the project at ``root``."""
    opts = opts or PortOptions()
    started = time.perf_counter()
    if not root.is_dir():
        raise GpuportError(f"gpuport port needs a project folder, not {root}")
    report = _scan(root, opts)
    strict = fixable(report)
    lowered = fixable(report, routes.route_lowered(report))
    ctx = PortContext(
        root=root,
        report=report,
        packages=load_packages(opts.knowledge_dir),
        target=report.target,
        findings=strict + lowered,
    )
    proposals = _documented_route(report, _propose(ctx, opts.families), lowered)
    plan = _plan(ctx, proposals, opts.unsafe_fixes)
    counted: set[tuple[str, str, int | None]] = set()
    for _ in range(3):  # what a taken fix puts on the route counts (idempotence), to a fixed point
        setups = [f.location.path for p in plan.taken for f in p.findings if f.rule_id == "GP409"]
        built = [
            f
            for f in fixable(report, routes.built_by_fix(report, setups, _hip_written(plan)))
            if _key(f) not in counted
        ]
        if not built:
            break
        counted.update(_key(f) for f in built)
        strict = strict + built
        ctx.findings = strict + lowered
        proposals = _documented_route(report, _propose(ctx, opts.families), lowered)
        plan = _plan(ctx, proposals, opts.unsafe_fixes)
    files, texts = _diffs(plan)
    taken_ids = {p.id for p in plan.taken}
    fixes = [
        Fix(
            id=p.id,
            family=p.family,
            title=p.title,
            safe=p.safe,
            why=p.why,
            findings=[ref(f) for f in p.findings],
            files=p.files(),
            applied=p.id in taken_ids,
            note=p.note if p.id in taken_ids else plan.left.get(p.id, p.note),
        )
        for p in proposals
    ]
    resolving = [p for p in proposals if p.resolves]
    # a finding scan lowered for a documented route is counted only where a fix took it
    fixed_keys = {_key(f) for p in plan.taken if p.resolves for f in p.findings}
    ctx.findings = strict + [f for f in lowered if _key(f) in fixed_keys]
    unfixed = _unfixed(ctx.findings, resolving, taken_ids, ctx.declined)
    unfixed += [Unfixed(finding=ref(f), reason=why) for f, why in ctx.reports]
    safe_keys = {_key(f) for p in resolving if p.safe for f in p.findings}
    any_keys = {_key(f) for p in resolving for f in p.findings}
    written: list[str] = []
    backups: list[str] = []
    verification = None
    if opts.apply and files:
        written, backups = _write(root, files, texts)
        if opts.verify:
            verification = _verify(root, opts, ctx.findings, plan.taken, plan, texts)
    checks = []
    if opts.check:
        from gpuport.port.check import check_files

        checks = check_files(root, files, texts, opts.offload_archs, written=bool(written))
    return PortReport(
        root=str(root),
        target=report.target,
        mode="apply" if opts.apply else "diff",
        unsafe_fixes=opts.unsafe_fixes,
        fixes=fixes,
        files=files,
        unfixed=unfixed,
        findings_total=len(ctx.findings),
        findings_with_safe_fix=sum(1 for f in ctx.findings if _key(f) in safe_keys),
        findings_with_fix=sum(1 for f in ctx.findings if _key(f) in any_keys),
        written=written,
        backups=backups,
        checks=checks,
        verification=verification,
        fingerprint=EnvFingerprint.collect(),
        duration_s=round(time.perf_counter() - started, 3),
    )


def _hip_written(plan: _Plan) -> list[str]:
    """Native files a taken fix writes HIP text into (a HIP macro test, a ``hip/`` header,
    the include of the project's new compatibility header): scan counts such a file as code
    written for the ROCm route (:func:`gpuport.scan.project.on_route.has_hip_mark`), so a
    second run would judge its findings at their own severity."""
    out: list[str] = []
    for prop in plan.taken:
        for path, spans in prop.edits.items():
            if _NATIVE.search(path) and any(
                has_hip_mark(new) or COMPAT in new for _s, _e, new, _f in spans
            ):
                out.append(path)
    return out


def _documented_route(
    report: ScanReport, proposals: list[Proposal], lowered: list[Finding]
) -> list[Proposal]:
    """Findings scan lowered only for a documented ROCm route (:mod:`gpuport.port.routes`)
    get safe fixes only, and each such fix says why it is there."""
    if not lowered:
        return proposals
    keys = {_key(f) for f in lowered}
    out: list[Proposal] = []
    for p in proposals:
        mine = [f for f in p.findings if _key(f) in keys]
        if not mine:
            out.append(p)
        elif not p.safe:
            if len(mine) < len(p.findings):  # it fixes findings scan reports, too
                out.append(replace(p, findings=[f for f in p.findings if _key(f) not in keys]))
        else:
            why = routes.note(report)
            out.append(replace(p, note=f"{p.note}; {why}" if p.note else why))
    return out


def _unfixed(
    findings: list[Finding],
    proposals: list[Proposal],
    taken: set[str],
    declined: dict[tuple[str, str, int | None], str],
) -> list[Unfixed]:
    by_key: dict[tuple[str, str, int | None], list[Proposal]] = {}
    for p in proposals:
        for f in p.findings:
            by_key.setdefault(_key(f), []).append(p)
    out: list[Unfixed] = []
    for f in findings:
        props = by_key.get(_key(f), [])
        if any(p.id in taken for p in props):
            continue
        if props:
            reason = (
                "an unsafe fix is available (--unsafe-fixes): " + props[0].why
                if all(not p.safe for p in props)
                else "its fix was left out of this run"
            )
        elif _key(f) in declined:
            reason = declined[_key(f)]
        else:
            reason = "no mechanical fix: " + (f.fix or "see `gpuport explain " + f.rule_id + "`")
        out.append(Unfixed(finding=ref(f), reason=reason))
    return out
