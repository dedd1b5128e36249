"""GP1xx: dependencies and packaging.

Reads requirements files (with ``-r`` includes, markers and index options),
``pyproject.toml`` (PEP 621, dependency groups, Poetry, uv indexes),
``setup.py`` (through ``ast`` only, never executed), ``setup.cfg`` and conda
``environment.yml``. Each requirement is looked up in knowledge/packages.toml.
Other readers (Dockerfile ``pip install`` lines) call
:func:`check_requirement_spec` and :func:`check_index_url`.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from pathlib import PurePosixPath

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from gpuport import textre
from gpuport.knowledge import PackageInfo
from gpuport.models import Severity
from gpuport.scan.rules.base import (
    Family,
    FileContext,
    FileKind,
    Rule,
    checker,
    physical_lines,
    register,
)
from gpuport.scan.rules.deps.lock import VIA_KEY, not_a_rocm_gap, via_annotations
from gpuport.scan.rules.deps.pins import below_minimum, floor_below
from gpuport.scan.rules.deps.readers import (
    PIP_OPTIONS,
    conda_entries,
    pyproject_entries,
    setup_cfg_entries,
    setup_py_entries,
    split_pip_option,
)
from gpuport.scan.rules.deps.twins import twin_note

_PYTORCH_ROCM = "https://pytorch.org/get-started/locally/"
_HIP_NOTES = "https://github.com/pytorch/pytorch/blob/main/docs/source/notes/hip.rst"
_CUDA_WHEEL_EVIDENCE = "https://github.com/YanWenKun/ComfyUI-Docker/issues/187"

register(
    Rule(
        id="GP101",
        name="package-no-rocm",
        title="Dependency has no ROCm build",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "The package ships only NVIDIA binaries or talks to NVIDIA-only libraries (CUDA "
            "runtime, NVML, TensorRT). It fails to install or to import on an AMD GPU host, so "
            "the code that uses it cannot run until it is replaced. GPU-monitoring libraries "
            "(NVML) install but fail when called, so they are reported as major."
        ),
        fix="Replace it with the ROCm counterpart named in the finding, or make it optional.",
        references=(_HIP_NOTES, "https://github.com/microsoft/onnxruntime/pull/25181"),
        effort_hours=6.0,
    ),
    Rule(
        id="GP102",
        name="package-needs-rocm-route",
        title="Dependency needs a ROCm-specific install route",
        # an install step, not porting work: advice is minor, never above (issue 24)
        severity=Severity.MINOR,
        family=Family.DEPENDENCIES,
        rationale=(
            "The package works on ROCm, but not from the default PyPI wheel: it needs the ROCm "
            "wheel index, a ROCm fork or package, a container image, or a source build with "
            "flags. Installed the default way, it brings a CUDA build that fails at import or "
            "silently falls back to the CPU."
        ),
        fix="Install it by the ROCm route in the finding (index URL, package or build flags).",
        references=(_PYTORCH_ROCM, _CUDA_WHEEL_EVIDENCE),
        effort_hours=1.0,
    ),
    Rule(
        id="GP103",
        name="package-partial-rocm",
        title="Dependency is only partly supported on ROCm",
        severity=Severity.MAJOR,
        family=Family.DEPENDENCIES,
        rationale=(
            "Some of the package's features or kernels are missing on ROCm, or it supports only "
            "some AMD GPUs. Whether the project is affected depends on which parts it uses."
        ),
        fix="Check the caveats in the finding against the features the project uses.",
        references=("https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",),
        effort_hours=4.0,
    ),
    Rule(
        id="GP104",
        name="cuda-wheel-index",
        title="Package index pinned to CUDA wheels",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "An --index-url/--extra-index-url (or a uv/Poetry source) points at a CUDA wheel "
            "index such as download.pytorch.org/whl/cu121 or pypi.nvidia.com. Everything "
            "resolved from it is a CUDA build, which cannot use an AMD GPU."
        ),
        fix=(
            "Point the index at the PyTorch ROCm builds (download.pytorch.org/whl/rocmX.Y for "
            "your ROCm release), or select the index per platform."
        ),
        references=(_PYTORCH_ROCM, _CUDA_WHEEL_EVIDENCE),
        effort_hours=0.5,
    ),
    Rule(
        id="GP105",
        name="cuda-local-version",
        title="Version pinned to a CUDA build (+cuXYZ)",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "A local version label such as torch==2.3.1+cu121 names a CUDA build exactly; no "
            "ROCm wheel can satisfy it, so the install either fails or pulls the CUDA build."
        ),
        fix="Drop the +cuXYZ label (ROCm builds are +rocmX.Y) and choose the build by index URL.",
        references=(_PYTORCH_ROCM,),
        effort_hours=0.5,
    ),
    Rule(
        id="GP106",
        name="cuda-extra",
        title="Extra selects CUDA binaries",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "Extras like jax[cuda12] or tensorflow[and-cuda] pull NVIDIA's CUDA wheels (cuDNN, "
            "cuBLAS, NCCL) and a CUDA plugin; on an AMD host they are dead weight at best and "
            "shadow the ROCm plugin at worst."
        ),
        fix="Use the ROCm packages instead (jax-rocm7-plugin/pjrt, tensorflow-rocm).",
        references=(
            "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
            "https://github.com/ROCm/rocm-jax",
        ),
        effort_hours=1.0,
    ),
    Rule(
        id="GP107",
        name="version-before-rocm-support",
        title="Version pin excludes every release that supports ROCm",
        severity=Severity.MAJOR,
        family=Family.DEPENDENCIES,
        rationale=(
            "The package supports ROCm only from a certain release on (for example official "
            "ROCm wheels of bitsandbytes); the pin keeps the project on an older one."
        ),
        fix="Raise the pin to at least the minimum version named in the finding.",
        references=("https://huggingface.co/docs/bitsandbytes/main/en/installation",),
        effort_hours=1.0,
    ),
    Rule(
        id="GP108",
        name="conda-cuda-package",
        title="Conda environment pulls CUDA packages or the nvidia channel",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "cudatoolkit, pytorch-cuda, cuda-* and cudnn from conda, or the nvidia channel, "
            "install the CUDA user-space stack and CUDA builds of PyTorch; none of it drives an "
            "AMD GPU, and conda has no ROCm build of PyTorch."
        ),
        fix=(
            "Remove the CUDA packages and install torch with pip from the ROCm index inside the "
            "environment (a pip: section), or use a rocm/pytorch image."
        ),
        references=(_PYTORCH_ROCM,),
        effort_hours=1.0,
    ),
    Rule(
        id="GP109",
        name="cuda-wheel-url",
        title="Direct link to a wheel built for CUDA",
        severity=Severity.BLOCKER,
        family=Family.DEPENDENCIES,
        rationale=(
            "A requirement points straight at a wheel file whose name says it was built for "
            "CUDA (cu12, +cu121, cuda12). Prebuilt extension wheels such as flash-attn releases "
            "contain NVIDIA machine code only."
        ),
        fix="Build the package for ROCm (see the package's ROCm route) or use its ROCm wheel.",
        references=("https://github.com/Dao-AILab/flash-attention",),
        effort_hours=2.0,
    ),
    Rule(
        id="GP110",
        name="requirement-not-understood",
        title="Requirement line not understood",
        severity=Severity.INFO,
        family=Family.DEPENDENCIES,
        rationale=(
            "The line is not a valid PEP 508 requirement or pip option, so gpuport cannot say "
            "whether it matters for ROCm. pip may also reject it."
        ),
        fix="Check the line; write it as a PEP 508 requirement.",
        references=("https://pip.pypa.io/en/stable/reference/requirements-file-format/",),
        effort_hours=0.0,
    ),
)

_CUDA_INDEX = textre.compile(
    r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+|pypi\.nvidia\.com|"
    r"pypi\.ngc\.nvidia\.com|/whl/cu\d{2,3}\b|storage\.googleapis\.com/jax-releases/jax_cuda|"
    r"\+cu\d+",
    re.I,
)
_ROCM_INDEX = textre.compile(
    r"download\.pytorch\.org/whl/(?:nightly/|test/)?rocm|repo\.radeon\.com|rocm\.nightlies\.amd\.com|"
    r"/whl/rocm\d",
    re.I,
)
# cu121, cuda12, and "cuX" from an f-string placeholder; not "+custom"
_CUDA_LOCAL = textre.compile(r"^cu(?:da)?(?:\d|x\b)")
_CUDA_WHEEL_NAME = textre.compile(
    r"(?:\+cu\d+|[._-]cu\d{2,3}(?=[._-])|cuda1\d|cu1\d(?:torch|x)?)", re.I
)
_LINUX_ENV = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "python_version": "3.11",
    "python_full_version": "3.11.9",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}
_ROCM_INDEX_KEY = "rocm-index"
_EGG = textre.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_NAME_PREFIX = textre.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*(?:\s*\[[^\]]*\])?")


def _one_line(text: str, limit: int | None = None) -> str:
    """Text for a message: whitespace runs (newlines, U+2028, ...) become one space."""
    flat = " ".join(text.split())
    return flat if limit is None else flat[:limit]


def rocm_index_in_file(ctx: FileContext) -> bool:
    """True when the file itself installs from a ROCm wheel index."""
    cached = ctx.scratch.get(_ROCM_INDEX_KEY)
    if isinstance(cached, bool):
        return cached
    found = bool(_ROCM_INDEX.search(ctx.text))
    ctx.scratch[_ROCM_INDEX_KEY] = found
    return found


def check_index_url(
    ctx: FileContext, url: str, line: int, column: int | None = None, note: str = ""
) -> None:
    """Report an index or find-links URL that serves CUDA wheels (GP104); info with ``note``
    where no default install uses it."""
    if _CUDA_INDEX.search(url):
        torch = ctx.packages.by_dist("torch")
        rocm = torch.route.index_url if torch is not None else None
        fix = (
            f"Point the index at the ROCm builds ({rocm}, matching your ROCm release), "
            "or select the index per platform."
            if rocm
            else None
        )
        text = f"index {_one_line(url)} serves CUDA wheels" + (f" ({note})" if note else "")
        ctx.report(
            "GP104", line, column, message=text, fix=fix, severity=Severity.INFO if note else None
        )


def _marker_applies(req: Requirement) -> bool:
    if req.marker is None:
        return True
    try:
        return bool(req.marker.evaluate(dict(_LINUX_ENV)))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def _caveat(pkg: PackageInfo, ctx: FileContext) -> str:
    family = ctx.target.family.lower()
    note = pkg.caveats.get(family) or pkg.caveats.get("all")
    return f" On {ctx.target.name} ({ctx.target.generation}): {note}" if note else ""


def _route_fix(pkg: PackageInfo) -> str:
    route = pkg.route
    parts = [route.how]
    if route.command:
        parts.append(f"Command: {route.command}")
    if route.env:
        parts.append("Env: " + " ".join(f"{k}={v}" for k, v in route.env.items()))
    return " ".join(parts)


def check_requirement(
    ctx: FileContext, req: Requirement, line: int, column: int | None = None
) -> None:
    """Look one parsed requirement up in the knowledge base and report what blocks it."""
    if not _marker_applies(req):
        return
    for spec in req.specifier:
        local = spec.version.partition("+")[2]
        if local and _CUDA_LOCAL.match(local.lower()):
            ctx.report("GP105", line, column, message=f"{req.name}{spec} names a CUDA build")
            break
    cuda_extras = sorted(e for e in req.extras if "cuda" in e.lower())
    if cuda_extras:
        ctx.report(
            "GP106",
            line,
            column,
            message=f"{req.name}[{','.join(cuda_extras)}] installs CUDA binaries",
        )
    if req.url and _CUDA_WHEEL_NAME.search(PurePosixPath(req.url).name):
        ctx.report(
            "GP109",
            line,
            column,
            message=f"{req.name} is pinned to a CUDA wheel: {_one_line(req.url)}",
        )
    if textre.sub(r"[-_.]+", "-", req.name).lower() in ctx.own.distributions:
        return  # the project itself (an extra of its own, `pkg[all]`), not a dependency
    pkg = ctx.packages.by_dist(req.name)
    if pkg is None:
        return
    if pkg.min_version and below_minimum(req, pkg.min_version):
        ctx.report(
            "GP107",
            line,
            column,
            message=f"{req.name}{req.specifier} is older than {pkg.min_version}, the first "
            "release usable on ROCm",
            fix=f"Require {pkg.name}>={pkg.min_version}. {_route_fix(pkg)}",
        )
    elif pkg.min_version and floor_below(req, pkg.min_version):
        ctx.report(
            "GP107",
            line,
            column,
            message=f"{req.name}{req.specifier} admits releases older than {pkg.min_version}, "
            "the first usable on ROCm: a resolver held back by a lock file or another pin "
            "can install one",
            fix=f"Raise the floor: {pkg.name}>={pkg.min_version}. {_route_fix(pkg)}",
            severity=Severity.MINOR,
        )
    text = f"{req.name}: {pkg.summary}{_caveat(pkg, ctx)}"
    if pkg.status == "no" and not_a_rocm_gap(ctx, pkg, text, line, column):
        return
    if pkg.status == "no":
        # A monitoring library installs on an AMD host; only its calls fail (GP203 finds those).
        lower = pkg.category == "monitoring"
        also = twin_note(ctx, pkg) if lower else ""  # its AMD replacement listed too: minor
        text += (" It installs, but its calls fail on AMD GPUs." + also) if lower else ""
        severity = (Severity.MINOR if also else Severity.MAJOR) if lower else None
        ctx.report("GP101", line, column, message=text, fix=_route_fix(pkg), severity=severity)
    elif pkg.status == "partial":
        low = Severity.MINOR if pkg.category == "monitoring" else None  # output lost, not results
        ctx.report("GP103", line, column, message=text, fix=_route_fix(pkg), severity=low)
    elif pkg.status == "works-with-route":
        if pkg.route.kind == "index" and rocm_index_in_file(ctx):
            return
        ctx.report("GP102", line, column, message=text, fix=_route_fix(pkg))


def _check_name(ctx: FileContext, name: str, line: int, column: int | None) -> None:
    with contextlib.suppress(InvalidRequirement):
        check_requirement(ctx, Requirement(name), line, column)


def check_requirement_spec(
    ctx: FileContext, spec: str, line: int, column: int | None = None, *, partial: bool = False
) -> None:
    """Parse a PEP 508 string (or a bare wheel or VCS URL) and check it; GP110 if unparseable.

    ``partial``: the text came from an f-string whose unknown parts are "X"; if it
    does not parse, check the name alone and a ``+cu`` local label, and stay quiet.
    """
    spec = spec.strip()
    if not spec:
        return
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        egg = _EGG.search(spec)
        if textre.match(r"^(https?|file)://", spec) or spec.endswith(".whl"):
            name = PurePosixPath(spec.split("#", 1)[0]).name
            if _CUDA_WHEEL_NAME.search(name):
                shown = _one_line(spec)
                ctx.report("GP109", line, column, message=f"pinned to a CUDA wheel: {shown}")
            dist = egg.group(1) if egg else name.split("-", 1)[0]
            if dist and (egg or spec.endswith(".whl")):
                _check_name(ctx, dist, line, column)
            return
        if spec.startswith((".", "/", "git+", "hg+", "svn+", "bzr+")):
            if egg:  # git+https://...#egg=flash-attn
                _check_name(ctx, egg.group(1), line, column)
            return
        if partial:
            head = _NAME_PREFIX.match(spec)
            if head is not None:
                if textre.search(r"\+cu", spec, re.I):
                    shown = _one_line(spec)
                    ctx.report("GP105", line, column, message=f"{shown} names a CUDA build")
                _check_name(ctx, head.group(0).strip(), line, column)
            return
        shown = _one_line(spec, 80)
        ctx.report("GP110", line, column, message=f"not a PEP 508 requirement: {shown}")
        return
    check_requirement(ctx, req, line, column)


# --- requirements files -------------------------------------------------------------

_MAX_INCLUDE_DEPTH = 5
_PATH_MAX = 4096  # Linux's: a longer include is no file (resolving it was quadratic)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations and strip comments; keep the first physical line number."""
    out: list[tuple[int, str]] = []
    buf = ""
    start = 0
    for no, raw in enumerate(physical_lines(text), 1):
        line = textre.split(r"(?:^|\s)#", raw, maxsplit=1)[0]
        if not buf:
            start = no
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        if buf.strip():
            out.append((start, buf.strip()))
        buf = ""
    if buf.strip():
        out.append((start, buf.strip()))
    return out


def _check_pip_line(
    ctx: FileContext, text: str, line: int, column: int | None, depth: int, seen: set[str]
) -> None:
    """One logical requirements line: an option (index, include, editable) or a requirement."""
    if text.startswith("-"):
        opt = split_pip_option(text)
        if opt is None:
            return
        name, value = opt
        kind = PIP_OPTIONS[name]
        if kind == "index" and value:
            check_index_url(ctx, value.split()[0], line, column)
        elif kind == "include" and value:
            _include(ctx, value, line, depth, seen)
        elif kind == "editable":
            egg = _EGG.search(value)
            if egg:  # -e git+https://...#egg=flash-attn
                _check_name(ctx, egg.group(1), line, column)
        return
    spec = textre.split(r"\s--?[a-z]", text, maxsplit=1)[0]
    check_requirement_spec(ctx, spec, line, column)


def _check_requirements_text(ctx: FileContext, depth: int, seen: set[str]) -> None:
    if "# via" in ctx.text:
        ctx.scratch[VIA_KEY] = via_annotations(ctx.text)
    for line, text in _logical_lines(ctx.text):
        column = ctx.line_text(line).find(text[:10]) + 1 or None
        _check_pip_line(ctx, text, line, column, depth, seen)


def _include(ctx: FileContext, value: str, line: int, depth: int, seen: set[str]) -> None:
    """Follow ``-r other.txt`` / ``-c other.txt``, never outside the scanned folder.

    Included files are always read, even where the walker scans them on its own
    (the engine drops the duplicate findings): they may be gitignored or excluded.
    """
    from gpuport.scan.project.files import Skip, read_text  # local: files imports this package

    shown = _one_line(value)
    if "\0" in value:  # no file can have that name (the OS refuses it with ValueError)
        shown = shown.replace("\0", "\\0")
        ctx.report("GP110", line, None, message=f"included file name has a NUL byte: {shown}")
        return
    if textre.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", value):
        ctx.report("GP110", line, None, message=f"included file is a URL, not read: {shown}")
        return
    if len(value) > _PATH_MAX:  # no file has it; resolving it walks each of its parts
        shown = _one_line(value, 120) + "..."
        ctx.report("GP110", line, None, message=f"cannot read included file {shown}: name too long")
        return
    try:
        target = (ctx.path.parent / value).resolve()
        root = ctx.root.resolve() if ctx.root is not None else None
        exists = target.exists()
    except (OSError, RuntimeError) as exc:  # name too long, symlink loop
        why = "symbolic link loop" if isinstance(exc, RuntimeError) else (exc.strerror or str(exc))
        ctx.report("GP110", line, None, message=f"cannot read included file {shown}: {why}")
        return
    if root is not None and not target.is_relative_to(root):
        ctx.report(
            "GP110", line, None, message=f"include outside the scanned folder, not read: {shown}"
        )
        return
    if depth >= _MAX_INCLUDE_DEPTH:
        return
    key = str(target)
    if key in seen:
        return
    seen.add(key)
    followed = _followed_in_run(ctx)
    if (key, rocm_index_in_file(ctx)) in followed:
        return  # judged already in this scan, in the same context: its findings are out
    followed.add((key, rocm_index_in_file(ctx)))
    if not exists:
        ctx.report("GP110", line, None, message=f"cannot read included file {shown}: no such file")
        return
    got = read_text(target, root=root)  # never a link out of the scanned folder
    if isinstance(got, Skip):
        ctx.report("GP110", line, None, message=f"cannot read included file {shown}: {got.reason}")
        return
    if root is not None:
        rel = target.relative_to(root).as_posix()
    else:
        rel = posixpath.normpath((PurePosixPath(ctx.rel).parent / value).as_posix())
    sub = FileContext(
        rel=rel,
        path=target,
        kind=FileKind.REQUIREMENTS,
        text=got,
        target=ctx.target,
        packages=ctx.packages,
        select=ctx.select,
        ignore=ctx.ignore,
        root=ctx.root,
    )
    sub.scratch[_ROCM_INDEX_KEY] = rocm_index_in_file(ctx) or rocm_index_in_file(sub)
    _check_requirements_text(sub, depth + 1, seen)
    ctx.findings.extend(sub.findings)


#: The includes followed in each scan (keyed by the scan's OwnNames, one object per scan,
#: kept with it so its id is not reused), with whether the includer installs from a ROCm
#: index: a file that every requirements file includes (and that includes them all) was
#: read, judged and reported again from each of them, files x closure (fourteenth re-run,
#: F10: 245 files of 12 KB took 17 s CPU). Each is followed once per scan and context now.
_FOLLOWED: dict[int, tuple[object, set[tuple[str, bool]]]] = {}


def _followed_in_run(ctx: FileContext) -> set[tuple[str, bool]]:
    got = _FOLLOWED.get(id(ctx.own))
    if got is None or got[0] is not ctx.own:
        while len(_FOLLOWED) >= 4:
            del _FOLLOWED[next(iter(_FOLLOWED))]
        got = _FOLLOWED[id(ctx.own)] = (ctx.own, set())
    return got[1]


@checker(FileKind.REQUIREMENTS)
def check_requirements_file(ctx: FileContext) -> None:
    _check_requirements_text(ctx, 0, {str(ctx.path.resolve())})


# --- structured manifests -----------------------------------------------------------


@checker(FileKind.PYPROJECT, FileKind.SETUP_CFG, FileKind.SETUP_PY, FileKind.CONDA_ENV)
def check_manifest(ctx: FileContext) -> None:
    readers = {
        FileKind.PYPROJECT: pyproject_entries,
        FileKind.SETUP_CFG: setup_cfg_entries,
        FileKind.SETUP_PY: setup_py_entries,
        FileKind.CONDA_ENV: conda_entries,
    }
    try:
        entries = readers[ctx.kind](ctx.text)
    except (ValueError, SyntaxError, RecursionError, MemoryError) as exc:
        why = str(exc) or "nested too deeply to parse"  # CPython's MemoryError has no text
        ctx.skip_reason = physical_lines(f"cannot parse {ctx.kind.value}: {why}")[0][:200]
        return
    seen = {str(ctx.path.resolve())}
    for entry in entries:
        if entry.kind == "index":
            check_index_url(ctx, entry.value, entry.line, note=entry.note)
        elif entry.kind == "conda":
            ctx.report("GP108", entry.line, message=_one_line(entry.value))
        elif entry.kind == "pip":  # a conda pip: line; -r paths are relative to the env file
            _check_pip_line(ctx, entry.value, entry.line, None, 0, seen)
        else:
            check_requirement_spec(ctx, entry.value, entry.line, partial=entry.partial)


__all__ = ["check_index_url", "check_requirement", "check_requirement_spec"]
