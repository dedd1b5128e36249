"""The project as its ROCm build sees it: one pass before the rules, one after.

Before: read the build files, manifests and CUDA/C++ headers (text only) into a
:class:`ProjectView`: the build model, the preprocessor facts the rules use, the
ROCm route, the components. After: give every finding its scope, lower to info
what the ROCm build never compiles (naming the evidence), what lies in an
NVIDIA-only component of a project that has a ROCm route, and CUDA variants that
sit beside a ROCm variant. A monitoring dependency nothing calls lowers its own finding
only, never another package's on its manifest line (forty-second re-run F1).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import textre
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.model import RouteEvidence
from gpuport.scan.project.arch_variants import named_sources, recent_generation_variants
from gpuport.scan.project.backend_choice import (
    docker_stage_off,
    may_choose_backend,
    other_backend,
)
from gpuport.scan.project.backend_siblings import backend_siblings
from gpuport.scan.project.backend_switches import (
    build_defined,
    cuda_switches,
    nvidia_library_switches,
)
from gpuport.scan.project.build_model import BuildModel, Component, build_model
from gpuport.scan.project.ci_images import ci_only_images
from gpuport.scan.project.cmake_calls import ConfigureTexts
from gpuport.scan.project.cmake_versions import cmake_dead_branches
from gpuport.scan.project.config_variants import cuda_config_variants
from gpuport.scan.project.cutlass_folders import left_out
from gpuport.scan.project.cxx_facts import CxxFacts, cxx_facts, includes_of
from gpuport.scan.project.declared import declared_names, normalize
from gpuport.scan.project.extras import (
    pyproject_extra_lines,
    setup_cfg_extra_lines,
    setup_py_extra_lines,
)
from gpuport.scan.project.files import Candidate, classify, read_text, read_texts, rocm_makefile
from gpuport.scan.project.header_templates import configured_templates
from gpuport.scan.project.hip_platform import hip_nvidia_headers
from gpuport.scan.project.include_paths import resolve_includes
from gpuport.scan.project.on_route import RouteShown, off_route
from gpuport.scan.project.py_layout import module_level_line
from gpuport.scan.project.refusals import Refusals
from gpuport.scan.project.route_code import code_routes
from gpuport.scan.project.route_installs import RouteInstalls, rocm_requirements
from gpuport.scan.project.routes import (
    find_routes,
    is_rocm_variant_name,
    own_hip_build,
    working_route,
)
from gpuport.scan.project.routes_docs import rocm_settings
from gpuport.scan.project.scopes import (
    Scope,
    nvidia_variant_manifest,
    optional_requirements,
    scope_of,
)
from gpuport.scan.project.script_texts import scripts_lazily
from gpuport.scan.project.undefined_macros import project_undefined
from gpuport.scan.project.unincluded import unincluded_headers
from gpuport.scan.project.unnamed_envs import unnamed_conda_files, unnamed_freezes
from gpuport.scan.project.unnamed_sources import unnamed_sources
from gpuport.scan.project.vendor_folders import vendor_package_of
from gpuport.scan.rules.base import FileKind

__all__ = ["ProjectView", "apply", "monitor_key", "view_of"]

_BUILD_KINDS = (FileKind.SETUP_PY, FileKind.CMAKE, FileKind.MAKEFILE, FileKind.PYPROJECT)
_ROUTE_KINDS = (
    FileKind.DOCKERFILE,
    FileKind.REQUIREMENTS,
    FileKind.PYPROJECT,
    FileKind.SETUP_PY,
    FileKind.SETUP_CFG,
)
_CUDA_VARIANT = textre.compile(
    r"(?:^|[-_.])(?:cuda|cu\d{2,3}|nvidia|gpu|trt\w*|tensorrt)(?:[-_.\d]|$)", re.I
)


@dataclass
class ProjectView:
    build: BuildModel = field(default_factory=BuildModel)
    facts: CxxFacts = field(default_factory=CxxFacts)
    routes: list[RouteEvidence] = field(default_factory=list)
    #: manifest path -> {line: extra name} for lines inside an optional extra (pyproject,
    #: setup.py ``extras_require``, setup.cfg ``[options.extras_require]``)
    extras: dict[str, dict[int, str]] = field(default_factory=dict)
    #: the root file that makes the project an installable package or a build of its own
    #: (``pyproject.toml`` with ``[project]``/``[build-system]``, ``setup.py``, a
    #: ``CMakeLists.txt`` with ``project()``); "" when it has none
    package: str = ""
    #: CMake files and Makefiles that never mention ROCm/HIP (their GP4xx findings describe
    #: a CUDA variant when another build file of the project builds for ROCm)
    cuda_only_builds: frozenset[str] = frozenset()
    #: per-machine configuration files that choose CUDA -> the sibling choosing HIP
    config_variants: dict[str, str] = field(default_factory=dict)
    #: kernels the project's Python refuses on ROCm at run time (issue 24), read after the
    #: rules (:func:`read_refusals`)
    refused: Refusals = field(default_factory=Refusals)
    native: frozenset[str] = frozenset()
    includes: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the project files each native file's includes denote, resolved by path
    resolved: dict[str, frozenset[str]] = field(default_factory=dict)
    #: distributions the package requires or its ROCm route installs (normalised names)
    declared: frozenset[str] = frozenset()
    root: Path = Path()
    #: folder -> (a requirements file named for ROCm that installs from a ROCm wheel index,
    #: the packages it names): the ROCm route of the manifests in that folder
    rocm_requirements: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    #: native files the ROCm route is shown to compile -> why (:mod:`on_route`)
    on_route: RouteShown = field(default_factory=RouteShown)
    #: the finding (:func:`monitor_key`) of a monitoring dependency nothing imports -> why
    #: (:mod:`after_rules`): that finding only, never the others on its line
    unimported: dict[tuple[str, int, str, str], str] = field(default_factory=dict)
    #: CMake files and Makefiles (relative path -> text), for the branch of a finding's line
    build_texts: dict[str, str] = field(default_factory=dict)
    #: Python file -> (first, last line, why) of a self-test block (:mod:`py_layout`)
    self_tests: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    #: conda environment files no other file names, Dockerfiles only CI builds -> why
    #: (:mod:`unnamed_envs`, :mod:`ci_images`)
    unnamed_envs: dict[str, str] = field(default_factory=dict)


def view_of(
    root: Path, candidates: Sequence[Candidate], max_bytes: int, templates: Sequence[Candidate] = ()
) -> ProjectView:
    """Read what the project says about its build (never running any of it); ``templates``:
    header templates, read for the preprocessor facts only."""
    build_files: dict[str, str] = {}
    route_files: dict[str, tuple[str, str]] = {}
    native: dict[str, str] = {}
    extras: dict[str, dict[int, str]] = {}
    package = ""
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
            extras[c.rel] = pyproject_extra_lines(got)
        elif c.kind is FileKind.SETUP_PY:
            extras[c.rel] = setup_py_extra_lines(got)
        elif c.kind is FileKind.SETUP_CFG:
            extras[c.rel] = setup_cfg_extra_lines(got)
        if not package and "/" not in c.rel and _PACKAGING.get(c.kind, _NEVER).search(got):
            package = c.rel
    includes = {rel: includes_of(text) for rel, text in native.items()}
    resolved = resolve_includes(native)
    recipes = {rel: text for rel, (kind, text) in route_files.items() if kind == "dockerfile"}
    settings = rocm_settings(root, recipes) if root.is_dir() else {}
    helpers = [(c.rel, c.path, c.root) for c in candidates if c.kind is FileKind.PYTHON]
    # walked only if an OFF option is asked: scripts, Dockerfiles, Python build helpers
    configure = ConfigureTexts(scripts_lazily(root, candidates), recipes, helpers)
    build = build_model(build_files, native, includes, settings, resolved, configure)
    for rel, spans in cmake_dead_branches(build_files).items():  # CMAKE_VERSION fallbacks
        build.cuda_lines.setdefault(rel, []).extend(spans)
    switches = nvidia_library_switches(native, build_files)
    switches.update(cuda_switches(native, build_files))
    switches.update(project_undefined(native, candidates, max_bytes, root))
    templated = read_texts(templates, max_bytes)  # only those a build configures count
    texts = {**native, **configured_templates(templated, build_files, includes, root)}
    facts = cxx_facts(
        texts, includes, {**switches, **build.cuda_defines}, build_defined(build_files)
    )
    for header, include in facts.not_on_rocm.items():
        build.not_built.setdefault(header, f"{include}: included only where ROCm does not compile")
    siblings = backend_siblings(
        native,
        includes,
        build.rocm_named,
        build.rocm_dirs,
        named=build.sources,
        rocm_build=bool(build.rocm_builds),
        resolved=resolved,
    )
    by_builds = named_sources(build.sources, build.not_built, build.rocm_named, build_files)
    variants = recent_generation_variants(native, by_builds, resolved)  # hopper beside ampere
    unincluded = unincluded_headers(root, candidates, native, includes, build_files)
    unnamed = unnamed_sources(root, candidates, native, build_files)  # pod_attn's variants
    for found in (siblings, variants, unincluded, unnamed, hip_nvidia_headers(native)):
        for rel, why in found.items():
            build.not_built.setdefault(rel, why)
    if facts.not_on_rocm or siblings or unnamed:
        # a header only those files include is not compiled by the ROCm route either
        build.refused({}, native, resolved)
        build.components = left_out(build.components, native, build.not_built)
    own_hip = frozenset(
        rel
        for rel in build.rocm_builds
        if (classify(rel) is FileKind.CMAKE and own_hip_build(build_files.get(rel, "")))
        or rocm_makefile(rel.rsplit("/", 1)[-1])
    )
    routes = find_routes(root, route_files, build.rocm_builds, own_hip) if root.is_dir() else []
    python = [c.rel for c in candidates if c.kind is FileKind.PYTHON]
    routes += code_routes(root, python)  # AMD backend packages, installer scripts
    cuda_only = frozenset(
        rel
        for rel, text in build_files.items()
        if classify(rel) in (FileKind.CMAKE, FileKind.MAKEFILE) and not _ROCM_WORD.search(text)
    )
    route_installs = {r.path for r in routes if r.counts and r.install}
    declared: set[str] = set()
    for rel, (kind, text) in route_files.items():
        if kind == "dockerfile":
            continue
        core = scope_of(rel) is Scope.CORE and not _CUDA_VARIANT.search(rel.rsplit("/", 1)[-1])
        if not core and rel not in route_installs:
            continue
        in_extra = extras.get(rel, {}) if rel not in route_installs else {}
        declared |= {n for n, line in declared_names(kind, text).items() if line not in in_extra}
    setup_sources = [rel for rel, (_, by_setup) in build.sources.items() if by_setup]
    named = [*build_files.items(), *((r, t) for r, (_, t) in route_files.items())]
    return ProjectView(
        # read on first use (a finding of a project with a route asks)
        on_route=RouteShown(native, build, setup_sources, build_files, resolved),
        build_texts={
            rel: text
            for rel, text in build_files.items()
            if classify(rel) in (FileKind.CMAKE, FileKind.MAKEFILE)
        },
        root=root if root.is_dir() else root.parent,
        declared=frozenset(declared),
        native=frozenset(native),
        includes=includes,
        resolved=resolved,
        build=build,
        facts=facts,
        routes=routes,
        extras=extras,
        package=package,
        cuda_only_builds=cuda_only,
        config_variants=cuda_config_variants(build_files),
        rocm_requirements=rocm_requirements(route_files),
        unnamed_envs={
            **unnamed_conda_files(root, candidates, named, package),
            **unnamed_freezes(root, candidates, named, package),
            **ci_only_images(root, candidates, named, package),
        },
    )


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
    return dataclasses.replace(f, **update)  # type: ignore[arg-type]


#: Install steps (a package that needs its ROCm wheel): the route's install gives them.
_INSTALL_STEP_RULES = frozenset({"GP102", "GP202"})
_NEVER = textre.compile(r"(?!)")
#: What makes a root build file the project's own packaging (see ProjectView.package).
_PACKAGING = {
    FileKind.SETUP_PY: textre.compile(r"\bsetup\s*\("),
    FileKind.PYPROJECT: textre.compile(r"^\s*\[(?:project|build-system)\]", re.M),
    FileKind.CMAKE: textre.compile(r"^\s*project\s*\(", re.M | re.I),
}
_CONTAINER_KINDS = (FileKind.DOCKERFILE, FileKind.COMPOSE)
#: Top-level folders that collect a project's container images (CI, GPU, dev images); a
#: root Dockerfile or a deploy/ recipe is how an application ships and stays core.
_IMAGE_DIR = textre.compile(r"^(?:docker|dockerfiles|containers?|\.?devcontainer|images)$", re.I)
#: Top-level folders of a packaged project that hold what is not the package: experiments,
#: extras, archived or legacy code.
_SIDE_TREE = textre.compile(
    r"^(?:extras?|archived?|archives|attic|legacy|deprecated|sandbox|playground|"
    r"experimental|experiments)$",
    re.I,
)
_ROCM_WORD = textre.compile(r"rocm|\bhip|hipcc|amdgpu|gfx\d", re.I)


def _scope(
    path: str,
    extra: str | None,
    comp: Component | None,
    view: ProjectView,
    beside_rocm: bool,
) -> tuple[Scope, str]:
    """A finding's scope from its path and the project view, and a note when the reason is
    not plain from the path."""
    scope = scope_of(path)
    if scope is not Scope.CORE:
        return scope, ""
    if extra is not None:
        return Scope.EXTRA, ""
    if beside_rocm and (
        (note := optional_requirements(path, view.root) or nvidia_variant_manifest(path, view.root))
        is not None
    ):
        return Scope.EXTRA, note
    if (
        beside_rocm
        and comp is not None
        and comp.builds_native
        and not comp.rocm_build
        and not comp.nvidia_only
    ):
        return Scope.EXTRA, ""  # an optional native component the ROCm route does not build
    top = path.split("/", 1)[0] if "/" in path else ""
    if view.package and _SIDE_TREE.match(top):
        return Scope.EXTRA, ""  # tinygrad's extra/, ktransformers' archive/: beside the package
    if view.package and _IMAGE_DIR.match(top) and classify(path) in _CONTAINER_KINDS:
        # The project is installed as a package (or built from source): a ROCm user installs
        # it into a ROCm image; the images it collects in docker/ are how its team tests and
        # runs it.
        note = (
            f"a container recipe of a project packaged by {view.package}: counted apart; "
            "`--scope all` judges it"
        )
        return Scope.TOOLING, note
    return Scope.CORE, ""


_COMES_FROM = textre.compile(r"comes from ([\w.-]+)")
_MINOR_RANK = Severity.MINOR.rank


def optional_backends(
    findings: Sequence[Finding], view: ProjectView
) -> tuple[dict[str, str], dict[tuple[str, int], str]]:
    """Imports of NVIDIA-only packages (GP201) that the package does not require (and its
    ROCm route, if any, does not install), issue 24: a module of a project with a route that
    imports one at its top is an optional backend the route never imports (module -> the
    reason); one imported only inside a function is an optional feature of the project
    ((path, line) -> the reason), with or without a route."""
    out: dict[str, str] = {}
    lazy: dict[tuple[str, int], str] = {}
    route = working_route(view.routes)
    for f in findings:
        if f.rule_id != "GP201" or f.severity is Severity.INFO or f.location.line is None:
            continue
        m = _COMES_FROM.search(f.message)
        if m is None or normalize(m.group(1)) in view.declared:
            continue
        if not module_level_line(view.root / f.location.path, f.location.line):
            lazy[(f.location.path, f.location.line)] = (
                f"an optional feature: {m.group(1)} is imported only inside a function and is "
                "not a requirement of the package"
            )
            continue
        if not route:
            continue
        out.setdefault(
            f.location.path,
            # the same words for every finding of the module (not its import's place, which
            # made each message distinct: Liger-Kernel's 14 cutlass imports printed 14 times)
            f"an optional NVIDIA-only backend: this module imports {m.group(1)} at its top, "
            "which neither the package's requirements nor its ROCm route install",
        )
    return out, lazy


def installs_of(view: ProjectView) -> list[RouteEvidence]:
    """The route evidence that installs for ROCm (a requirements file, an image, an extra)."""
    return [r for r in view.routes if r.counts and r.install]


_NVIDIA_STEM = textre.compile(
    r"^(?:nvidia|cuda|nvml|nv)(?:[_-]\w+)?$|^\w+[_-](?:nvidia|cuda)$", re.I
)
_AMD_STEM = textre.compile(r"^(?:amd|rocm|hip|amdsmi)(?:[_-]\w+)?$|^\w+[_-](?:amd|rocm|hip)$", re.I)


def _vendor_sibling(root: Path, path: str, seen: dict[str, str | None]) -> str | None:
    """A Python module named for NVIDIA (``hardware/nvidia.py``, ``cuda_backend.py``) beside
    one named for AMD/ROCm (``hardware/amd.py``): the NVIDIA side of a vendor split, which a
    ROCm run never takes. The AMD sibling's path, or None. Each folder is listed once per
    scan (``seen``): listing it per finding was findings x files (3,000 findings beside
    20,000 files: 557 s; sixteenth re-run)."""
    folder, _, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    if suffix != "py" or not dot or not _NVIDIA_STEM.match(stem):
        return None
    if folder not in seen:
        try:
            names = sorted(p.name for p in (root / folder).iterdir() if p.is_file())
        except OSError:
            names = []
        amd = [n for n in names if n.endswith(".py") and _AMD_STEM.match(n[:-3])]
        seen[folder] = (f"{folder}/{amd[0]}" if folder else amd[0]) if amd else None
    return seen[folder]


def apply(findings: Sequence[Finding], view: ProjectView) -> list[Finding]:
    """Scope every finding and lower what the ROCm build never reaches."""
    backends, lazy = optional_backends(findings, view)
    route_req_dirs = {
        r.path.rsplit("/", 1)[0] if "/" in r.path else ""
        for r in installs_of(view)
        if classify(r.path) is FileKind.REQUIREMENTS
    }
    has_route = working_route(view.routes)
    route_installs = RouteInstalls(view.rocm_requirements, view.routes, view.root)
    siblings: dict[str, str | None] = {}  # folder -> its AMD/ROCm module (_vendor_sibling)
    packages: dict[str, tuple[str, str] | None] = {}  # folder -> its AMD/ROCm package
    installs = [r for r in view.routes if r.counts and r.install]
    install_route = bool(installs)
    route_files = {r.path for r in installs}
    hip_setups = {b for b in view.build.rocm_builds if b.rsplit("/", 1)[-1] == "setup.py"}
    # The project's own root build compiles for ROCm: a native component of its own
    # (``projects/X/setup.py``) without a ROCm branch is an optional extra beside it.
    root_rocm_build = any("/" not in b for b in view.build.rocm_builds)
    texts: dict[str, str] = {}
    out: list[Finding] = []
    for f in findings:
        unused = view.unimported.get(monitor_key(f))  # before a note changes its message
        path = f.location.path
        extra = view.extras.get(path, {}).get(f.location.line or 0)
        comp = view.build.component_of(path)
        scope, note = _scope(path, extra, comp, view, has_route or root_rocm_build)
        if scope is Scope.CORE and path in backends:
            scope, note = Scope.EXTRA, backends[path]
        elif (
            scope is Scope.CORE
            and (block := view.self_tests.get(path))
            and block[0] <= (f.location.line or 0) <= block[1]
        ):
            scope, note = Scope.TEST, block[2]
        update: dict[str, object] = {"scope": scope.value}
        if note:
            update["message"] = f"{f.message} ({note})"
        f = dataclasses.replace(f, **update)  # type: ignore[arg-type]
        where = view.build.not_built.get(path) or view.build.line_not_built(path, f.location.line)
        not_run = view.refused.line_not_run(path, f.location.line)
        name = path.rsplit("/", 1)[-1]
        if where is not None:
            f = _lower(f, f"not compiled by the ROCm build: {where}", not_built=where)
        elif not_run is not None:
            f = _lower(f, f"not run on ROCm: {not_run}", not_built=not_run)
        elif path in view.facts.rocm_only:
            include = view.facts.rocm_only[path]
            f = _lower(f, f"a ROCm-only header, included only in a ROCm branch ({include})")
        elif has_route and comp is not None and comp.nvidia_only:
            why = (
                f"NVIDIA-only component {comp.path}/ ({comp.evidence}): replace or drop it on ROCm"
            )
            f = _lower(f, why, not_built=comp.evidence)
        elif f.rule_id.startswith("GP4") and path in view.config_variants:
            why = f"CUDA machine configuration; {view.config_variants[path]} chooses HIP"
            f = _lower(f, why, scope=Scope.EXTRA.value)
        elif (
            view.build.rocm_builds
            and f.rule_id.startswith("GP4")
            and path in view.cuda_only_builds
            and path not in view.build.rocm_builds
        ):
            why = f"CUDA variant build file beside the ROCm build ({view.build.rocm_builds[0]})"
            f = _lower(f, why, scope=Scope.EXTRA.value)
        elif (key := (path, f.location.line or 0)) in lazy and f.severity.rank > _MINOR_RANK:
            f = dataclasses.replace(
                f,
                severity=Severity.MINOR,
                default_severity=f.default_severity or f.severity,
                message=f"{f.message} ({lazy[key]})",
            )
        elif f.severity is not Severity.INFO and (
            sibling := _vendor_sibling(view.root, path, siblings)
        ):
            f = _lower(f, f"the NVIDIA side of a vendor split: {sibling} is the AMD/ROCm one")
        elif f.severity is not Severity.INFO and (
            package := vendor_package_of(view.root, path, packages)
        ):
            f = _lower(f, package)
        elif f.rule_id == "GP103" and path in route_files and f.severity is Severity.MAJOR:
            f = dataclasses.replace(
                f,
                severity=Severity.MINOR,
                default_severity=f.severity,
                message=f"{f.message} (the ROCm route installs it on purpose: check its caveats)",
            )
        elif (
            f.rule_id.startswith("GP1")
            and path not in route_files
            and classify(path) is FileKind.REQUIREMENTS
            and (path.rsplit("/", 1)[0] if "/" in path else "") in route_req_dirs
            and not is_rocm_variant_name(path)
        ):
            f = _lower(
                f,
                "a variant of the ROCm requirements beside it, for another platform",
                scope=Scope.EXTRA.value,
            )
        elif f.rule_id == "GP404" and path in hip_setups:
            f = _lower(f, f"{path} builds for ROCm too: hipify is part of that build")
        elif (
            f.rule_id in _INSTALL_STEP_RULES
            and install_route
            and not is_rocm_variant_name(path)
            and f.severity is not Severity.INFO
        ):
            r = installs[0]
            where = r.path + (f":{r.line}" if r.line else "")
            f = _lower(f, f"an install step the project's ROCm route gives: {where}")
        elif path in view.unnamed_envs and f.severity is not Severity.INFO:
            f = _lower(f, view.unnamed_envs[path], scope=Scope.EXTRA.value)
        elif (routed := route_installs.note(f)) is not None:
            f = _lower(f, routed[0], scope=routed[1])
        elif has_route and extra is not None and _CUDA_VARIANT.search(extra):
            f = _lower(
                f, f"CUDA variant extra {extra!r} beside the ROCm route", scope=Scope.EXTRA.value
            )
        elif (
            has_route
            and f.rule_id.startswith(("GP1", "GP5"))
            and not is_rocm_variant_name(path)
            and path not in route_files  # the route's own install is not a CUDA variant
        ):
            is_docker = f.rule_id.startswith("GP5") or "dockerfile" in name.lower()
            if (
                is_docker
                or _CUDA_VARIANT.search(name)
                or (install_route and f.severity is Severity.BLOCKER)
            ):
                f = _lower(
                    f, "CUDA variant beside the project's ROCm route", scope=Scope.EXTRA.value
                )
        elif f.severity is not Severity.INFO and (other := _in_file(f, view, texts, has_route)):
            f = _lower(f, other)
        elif has_route and f.severity is not Severity.INFO and (off := _off_route(f, view)):
            f = _lower(f, off)
        if unused is not None and f.severity is not Severity.INFO:
            f = _lower(f, unused)
        out.append(f)
    return out


def monitor_key(f: Finding) -> tuple[str, int, str, str]:
    """What :attr:`ProjectView.unimported` knows a finding by: its place, rule and message, so
    a monitoring dependency's reason lowers its own finding, not another package's on the same
    manifest line (forty-second re-run F1: a ``jax[cuda12]`` blocker beside ``GPUtil``)."""
    return (f.location.path, f.location.line or 0, f.rule_id, f.message)


def _in_file(f: Finding, view: ProjectView, texts: dict[str, str], route: bool) -> str | None:
    """Why a finding is another backend's code, read in its own file (issue 24: native code,
    :func:`on_route.other_backend`; with a route, :func:`on_route.docker_stage_off`)."""
    path, line = f.location.path, f.location.line
    native = f.rule_id.startswith("GP3") and path in view.native
    docker = route and f.rule_id.startswith("GP5") and classify(path) is FileKind.DOCKERFILE
    if line is None or not (native or docker):
        return None
    if path not in texts:
        got = read_text(view.root / path, 4 * 1024 * 1024, view.root)
        got = got if isinstance(got, str) else ""
        # read once per file: a file no rule of it can apply to is kept as "" (thousands of
        # findings in one file each scanned it whole)
        texts[path] = got if not native or may_choose_backend(got) else ""
    return other_backend(path, texts[path], line) if native else docker_stage_off(texts[path], line)


def _off_route(f: Finding, view: ProjectView) -> str | None:
    """Why a finding of a project with a ROCm route is not shown to be on it (issue 24)."""
    r = next(r for r in view.routes if r.counts)
    route = r.path + (f":{r.line}" if r.line else "")
    return off_route(f.rule_id, f.location.path, f.location.line, view.on_route,
                     view.build_texts, route, f.location.column)  # fmt: skip
