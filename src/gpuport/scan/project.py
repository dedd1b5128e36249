"""The project as its ROCm build sees it: one pass before the rules, one after.

Before: read the build files, manifests and CUDA/C++ headers (text only) into a
:class:`ProjectView`: the build model, the preprocessor facts the rules use, the
ROCm route, the components. After: give every finding its scope, lower to info
what the ROCm build never compiles (naming the evidence), what lies in an
NVIDIA-only component of a project that has a ROCm route, and CUDA variants that
sit beside a ROCm variant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.build_model import BuildModel, build_model
from gpuport.scan.cxx_facts import CxxFacts, cxx_facts, includes_of
from gpuport.scan.files import Candidate, read_text
from gpuport.scan.model import Finding, RouteEvidence
from gpuport.scan.routes import find_routes, is_rocm_variant_name, working_route
from gpuport.scan.rules.base import FileKind
from gpuport.scan.scopes import Scope, scope_of

__all__ = ["ProjectView", "apply", "view_of"]

_BUILD_KINDS = (FileKind.SETUP_PY, FileKind.CMAKE, FileKind.MAKEFILE, FileKind.PYPROJECT)
_ROUTE_KINDS = (
    FileKind.DOCKERFILE,
    FileKind.REQUIREMENTS,
    FileKind.PYPROJECT,
    FileKind.SETUP_PY,
    FileKind.SETUP_CFG,
)
_CUDA_VARIANT = re.compile(
    r"(?:^|[-_.])(?:cuda|cu\d{2,3}|nvidia|gpu|trt\w*|tensorrt)(?:[-_.\d]|$)", re.I
)
_EXTRA_HEADER = re.compile(r"^\s*\[(?:project\.optional-dependencies|tool\.poetry\.extras)\]\s*$")
_TABLE = re.compile(r"^\s*\[")
_EXTRA_KEY = re.compile(r"""^\s*["']?([\w.-]+)["']?\s*=""")


@dataclass
class ProjectView:
    build: BuildModel = field(default_factory=BuildModel)
    facts: CxxFacts = field(default_factory=CxxFacts)
    routes: list[RouteEvidence] = field(default_factory=list)
    #: pyproject path -> {line: extra name} for lines inside optional-dependency tables
    extras: dict[str, dict[int, str]] = field(default_factory=dict)


_DOTTED_EXTRA = re.compile(r"""^\s*optional-dependencies\.["']?([\w.-]+)["']?\s*=""")
_NEW_KEY = re.compile(r"^[A-Za-z_\"'][^=]*=")


def _extra_lines(text: str) -> dict[int, str]:
    """pyproject line -> the optional extra it belongs to (both table and dotted forms)."""
    out: dict[int, str] = {}
    inside, name, dotted = False, "", ""
    for n, line in enumerate(text.split("\n"), 1):
        if _EXTRA_HEADER.match(line):
            inside, name, dotted = True, "", ""
            continue
        if _TABLE.match(line):
            inside, dotted = False, ""
        m = _DOTTED_EXTRA.match(line)
        if m:
            dotted = m.group(1)
        elif dotted and _NEW_KEY.match(line):
            dotted = ""
        if inside:
            k = _EXTRA_KEY.match(line)
            if k:
                name = k.group(1)
            if name:
                out[n] = name
        elif dotted:
            out[n] = dotted
    return out


def view_of(root: Path, candidates: Sequence[Candidate], max_bytes: int) -> ProjectView:
    """Read what the project says about its build (never running any of it)."""
    build_files: dict[str, str] = {}
    route_files: dict[str, tuple[str, str]] = {}
    native: dict[str, str] = {}
    extras: dict[str, dict[int, str]] = {}
    for c in candidates:
        if (
            c.kind not in _BUILD_KINDS
            and c.kind not in _ROUTE_KINDS
            and c.kind is not FileKind.NATIVE
        ):
            continue
        got = read_text(c.path, max_bytes)
        if not isinstance(got, str):
            continue
        if c.kind is FileKind.NATIVE:
            native[c.rel] = got
            continue
        if c.kind in _BUILD_KINDS:
            build_files[c.rel] = got
        if c.kind in _ROUTE_KINDS:
            route_files[c.rel] = (c.kind.value, got)
        if c.kind is FileKind.PYPROJECT:
            extras[c.rel] = _extra_lines(got)
    includes = {rel: includes_of(text) for rel, text in native.items()}
    build = build_model(build_files, native, includes)
    facts = cxx_facts(native, includes)
    routes = find_routes(root, route_files, build.rocm_builds) if root.is_dir() else []
    return ProjectView(build=build, facts=facts, routes=routes, extras=extras)


def _lower(
    f: Finding, why: str, *, not_built: str | None = None, scope: str | None = None
) -> Finding:
    update: dict[str, object] = {"scope": scope or f.scope}
    if f.severity is not Severity.INFO:
        update |= {
            "severity": Severity.INFO,
            "default_severity": f.default_severity or f.severity,
            "message": f"{f.message} ({why})",
        }
    if not_built is not None:
        update["not_built"] = not_built
    return f.model_copy(update=update)


_INSTALL_ROUTES = ("docker", "requirements", "extra")


def apply(findings: Sequence[Finding], view: ProjectView) -> list[Finding]:
    """Scope every finding and lower what the ROCm build never reaches."""
    has_route = working_route(view.routes)
    install_route = any(r.kind in _INSTALL_ROUTES for r in view.routes)
    out: list[Finding] = []
    for f in findings:
        path = f.location.path
        scope = scope_of(path)
        extra = view.extras.get(path, {}).get(f.location.line or 0)
        if scope is Scope.CORE and extra is not None:
            scope = Scope.EXTRA
        comp = view.build.component_of(path)
        if (
            has_route
            and scope is Scope.CORE
            and comp is not None
            and comp.builds_native
            and not comp.rocm_build
            and not comp.nvidia_only
        ):
            scope = Scope.EXTRA  # an optional native component the ROCm route does not build
        f = f.model_copy(update={"scope": scope.value})
        where = view.build.not_built.get(path) or view.build.line_not_built(path, f.location.line)
        name = path.rsplit("/", 1)[-1]
        if where is not None:
            f = _lower(f, f"not compiled by the ROCm build: {where}", not_built=where)
        elif has_route and comp is not None and comp.nvidia_only:
            why = (
                f"NVIDIA-only component {comp.path}/ ({comp.evidence}): replace or drop it on ROCm"
            )
            f = _lower(f, why, not_built=comp.evidence)
        elif has_route and extra is not None and _CUDA_VARIANT.search(extra):
            f = _lower(
                f, f"CUDA variant extra {extra!r} beside the ROCm route", scope=Scope.EXTRA.value
            )
        elif has_route and f.rule_id.startswith(("GP1", "GP5")) and not is_rocm_variant_name(path):
            is_docker = f.rule_id.startswith("GP5") or "dockerfile" in name.lower()
            if (
                is_docker
                or _CUDA_VARIANT.search(name)
                or (install_route and f.severity is Severity.BLOCKER)
            ):
                f = _lower(
                    f, "CUDA variant beside the project's ROCm route", scope=Scope.EXTRA.value
                )
        out.append(f)
    return out
