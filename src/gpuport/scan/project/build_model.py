"""The build model: which sources the project's ROCm build compiles, read statically.

Every setup.py, CMake file and Makefile that tests for ROCm/HIP is read (see
:mod:`build_setup_ast` and :mod:`build_cmake_model`; nothing is run). A native
source that only CUDA-only branches use is *not built* for ROCm; a header
in a folder whose sources are all CUDA-only is not built either, unless a ROCm
branch uses that folder. Findings there are lowered to info by the engine with
the evidence (``setup.py:285``).

A folder below the root with packaging of its own (a setup.py, a pyproject.toml
with ``[project]``/``[build-system]``, a CMakeLists.txt with ``project()``) is a
*component*. A component whose packaging names NVIDIA-only technology (CUTLASS,
CuTe DSL, sm90a, TensorRT) and never ROCm is NVIDIA-only by design: when the
project has a ROCm route it is reported once, as "replace or drop".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.scan.model import ComponentInfo
from gpuport.scan.project.backend_folders import backend_folder_builds
from gpuport.scan.project.backend_siblings import keep_included
from gpuport.scan.project.build_cmake_model import cmake_uses, make_uses
from gpuport.scan.project.build_cmake_vars import cuda_only_vars, false_var_ranges
from gpuport.scan.project.build_make_flow import hip_flags_always
from gpuport.scan.project.build_settings import evidence_at
from gpuport.scan.project.build_setup_ast import Use, setup_uses
from gpuport.scan.project.cmake_calls import never_run
from gpuport.scan.project.cutlass_folders import cutlass_folders, left_out
from gpuport.scan.project.files import rocm_makefile
from gpuport.scan.project.include_paths import resolve_includes, resolve_names
from gpuport.scan.project.on_route import make_flow_of

__all__ = ["BuildModel", "Component", "build_model"]

_NATIVE_SOURCE = textre.compile(r"\.(?:cu|cpp|cc|cxx|c\+\+)$")
#: a ROCm-named makefile that builds with HIP's compiler
_HIP_MAKE = textre.compile(r"\bhipcc\b|\bamdclang\+\+|\$[({](?:HIP_PATH|ROCM_PATH)[)}]")
_NVIDIA_TECH = textre.compile(
    r"cutlass|\bcute\b|sm_?90a|compute_90a|sm_?100a|tensorrt|trtllm|nvidia-cutlass-dsl"
    r"|cuda-python|cuda\.bindings|nvshmem",
    re.I,
)
_ROCM_TECH = textre.compile(r"rocm|\bhip\b|hipcc|is_hip|torch\.version\.hip|amdgpu|gfx9", re.I)


Component = ComponentInfo


@dataclass
class BuildModel:
    #: native file -> evidence ("setup.py:285: only in a branch ROCm does not take")
    not_built: dict[str, str] = field(default_factory=dict)
    #: build files that choose sources by platform, with the line that does it
    rocm_builds: list[str] = field(default_factory=list)
    components: list[Component] = field(default_factory=list)
    #: build file -> [(first, last, evidence)]: lines in branches a ROCm build never takes
    cuda_lines: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    #: native source files the build files name literally (path relative to the root ->
    #: (evidence, named by a setup.py)), CUDA-only branches included: what a verdict of
    #: ready must have seen
    sources: dict[str, tuple[str, bool]] = field(default_factory=dict)
    #: macros the build defines (``-DKITTENS_BLACKWELL``, ``add_compile_definitions``) only
    #: in branches a ROCm build never takes -> evidence: false on the ROCm side
    cuda_defines: dict[str, str] = field(default_factory=dict)
    #: native files a build file that builds for ROCm names (a file or a glob) outside its
    #: CUDA-only branches: compiled by the ROCm build, whatever their names say
    rocm_named: set[str] = field(default_factory=set)
    #: folders such a build file adds (``add_subdirectory``) outside its CUDA-only branches
    rocm_dirs: set[str] = field(default_factory=set)

    def refused(
        self, files: dict[str, str], native: Iterable[str], resolved: Mapping[str, frozenset[str]]
    ) -> None:
        """Native files the project refuses on ROCm at run time (their JIT extension is never
        built there), and the headers only they include (``resolved``: the project files each
        native file's includes denote, ``include_paths.resolve_includes``)."""
        for rel, evidence in files.items():
            self.not_built.setdefault(rel, evidence)
        names = list(native)
        _headers_of_unbuilt(self, names, resolved)

    def line_not_built(self, rel: str, line: int | None) -> str | None:
        """The evidence when ``line`` of build file ``rel`` is in a branch ROCm never takes."""
        return evidence_at(self.cuda_lines.get(rel, ()), line)

    def component_of(self, rel: str) -> Component | None:
        """The deepest component holding ``rel``: its folders looked up from the deepest (each
        component tried per finding was components x findings)."""
        index = self.__dict__.get("_by_path")
        if index is None or index[0] != len(self.components):
            by_path: dict[str, Component] = {}
            for c in self.components:
                by_path.setdefault(c.path, c)
            index = self.__dict__["_by_path"] = (len(self.components), by_path)
        folder = rel
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            if folder in index[1]:
                return index[1][folder]
        return None


_MOST_GLOB = 1024


def _glob_re(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return textre.compile("".join(out) + "$")


def _norm(base: str, pattern: str) -> str | None:
    pattern = pattern.replace("\\", "/").strip()
    if not pattern or pattern.startswith("/") or "$" in pattern or "{" in pattern:
        return None
    parts: list[str] = [p for p in base.split("/") if p] if base else []
    for part in pattern.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    full = "/".join(parts)
    return full if full and full not in ("*", "**") else None


@dataclass(frozen=True)
class _Pattern:
    full: str
    regex: re.Pattern[str] | None  # for globs
    is_dir: bool
    cuda_only: bool
    evidence: str
    shown: bool = True

    def match(self, rel: str) -> bool:
        if self.regex is not None:
            return bool(self.regex.match(rel))
        if self.is_dir:
            return rel.startswith(self.full + "/")
        return rel == self.full


#: glob x file checks one scan may spend past the index; a file past it is matched by no
#: further glob, so it stays built (its findings are kept, never hidden)
_GLOB_BUDGET = 1_000_000


class _Hits:
    """The patterns that match a path, in their list order, without trying every pattern per
    path (eighteenth re-run: 8,000 sources listed in a CUDA-only branch, 64 M tries): exact
    paths and folders are looked up, globs are tried only from the folders of the path that
    hold their literal start."""

    def __init__(self, patterns: list[_Pattern]) -> None:
        self.patterns = patterns
        self.exact: dict[str, list[int]] = {}
        self.folders: dict[str, list[int]] = {}
        self.globs: dict[str, list[int]] = {}
        self.budget = _GLOB_BUDGET
        for i, p in enumerate(patterns):
            if p.regex is not None:
                wild = min(k for k in (p.full.find("*"), p.full.find("?")) if k >= 0)
                self.globs.setdefault(p.full[: p.full.rfind("/", 0, wild) + 1], []).append(i)
            else:
                (self.folders if p.is_dir else self.exact).setdefault(p.full, []).append(i)

    def __call__(self, rel: str) -> list[_Pattern]:
        found = list(self.exact.get(rel, ()))
        starts = [""]  # the literal starts a glob of this path can have
        cut = rel.find("/")
        while cut >= 0:
            found += self.folders.get(rel[:cut], ())
            starts.append(rel[: cut + 1])
            cut = rel.find("/", cut + 1)
        for start in starts:
            for i in self.globs.get(start, ()) if self.budget > 0 else ():
                self.budget -= 1
                if self.patterns[i].match(rel):
                    found.append(i)
        return [self.patterns[i] for i in sorted(set(found))]


def _patterns(build_file: str, uses: Iterable[Use]) -> list[_Pattern]:
    # an included CMake module (cmake/modules/CUDA.cmake) names paths from the folder of the
    # CMakeLists.txt that includes it, the root as a rule; other build files from their own
    included = build_file.endswith(".cmake") and "/" in build_file
    base = "" if included else (build_file.rsplit("/", 1)[0] if "/" in build_file else "")
    out: list[_Pattern] = []
    for u in uses:
        full = _norm(base, u.pattern)
        if full is None:
            continue
        is_glob = "*" in full or "?" in full
        if is_glob and (len(full) > _MOST_GLOB or full.count("*") > 64):
            # no path a build names is that long: a 200,000-part glob was a pattern the
            # regular-expression engine refuses (twenty-ninth re-run F2)
            continue
        is_dir = not is_glob and not PurePosixPath(full).suffix
        out.append(
            _Pattern(
                full=full,
                regex=_glob_re(full) if is_glob else None,
                is_dir=is_dir,
                cuda_only=u.cuda_only,
                evidence=f"{build_file}:{u.line}",
                shown=u.shown,
            )
        )
    return out


def _is_packaging(rel: str, text: str) -> bool:
    name = rel.rsplit("/", 1)[-1].lower()
    if name == "setup.py":
        return "setup(" in text or "Extension(" in text
    if name == "pyproject.toml":
        return "[project]" in text or "[build-system]" in text
    if name == "cmakelists.txt":
        return textre.search(r"^\s*project\s*\(", text, re.M | re.I) is not None
    return False


def build_model(
    files: dict[str, str],
    native: Iterable[str],
    includes: dict[str, frozenset[str]] | None = None,
    settings: dict[str, str] | None = None,
    resolved: Mapping[str, frozenset[str]] | None = None,
    configure: Mapping[str, str] | None = None,  # scripts, presets: what turns options on
) -> BuildModel:
    """``files``: build and packaging files (relative path -> text); ``native``: every
    CUDA/C++ file of the scan; ``includes``: the header names each native file includes;
    ``settings``: build settings the project's docs give a ROCm value
    (``X_TARGET_DEVICE=rocm``); ``resolved``: the project files each native file's includes
    denote (from the texts when ``native`` maps paths to texts, else from ``includes``)."""
    model = BuildModel()
    patterns: list[_Pattern] = []
    untested: list[tuple[str, list[Use], list[tuple[int, int, int]]]] = []
    for rel, text in files.items():
        name = rel.rsplit("/", 1)[-1].lower()
        if name == "setup.py":
            uses, tested, ranges = setup_uses(text, settings)
        elif name == "cmakelists.txt" or name.endswith(".cmake"):
            uses, tested, ranges = cmake_uses(text)
        elif (
            name in ("makefile", "gnumakefile", "makefile.am")
            or name.endswith(".mk")
            or rocm_makefile(name)
        ):
            uses, tested, ranges = make_uses(text)
            if (rocm_makefile(name) and _HIP_MAKE.search(text)) or hip_flags_always(text):
                # makefile.hip beside the CUDA Makefile, calling hipcc, or flags that compile
                # HIP whatever is asked: the ROCm build itself, every line of it
                tested, ranges = True, []
            if tested:
                uses = _make_shown(rel, text, uses, files)
        else:
            continue
        for pat in _patterns(rel, uses):
            if pat.regex is None and not pat.is_dir and _NATIVE_SOURCE.search(pat.full):
                # a CMake path depends on the folder a function is called from: only a
                # setup.py's (relative to itself) says that a missing file is missing
                model.sources.setdefault(pat.full, (pat.evidence, name == "setup.py"))
        if tested:
            model.rocm_builds.append(rel)
            if ranges:
                model.cuda_lines[rel] = [(a, b, f"{rel}:{t}") for a, b, t in ranges]
            patterns += _patterns(rel, uses)
        elif name != "setup.py" and ranges:
            # a CMake/Make file that never names ROCm: its branches are still evaluated with
            # the ROCm build's values (if(USE_CUDA AND USE_CUDNN) is false) once the project
            # builds for ROCm at all; only what they leave out counts, as the folder a file
            # sits in decides the rest
            untested.append((rel, [u for u in uses if u.cuda_only], ranges))
    hip_folders, cuda_folders = backend_folder_builds(files, native)  # `src/${MODEL}/...`
    model.rocm_builds += [r for r in hip_folders if r not in model.rocm_builds]
    for rel, why in cuda_folders.items():
        model.not_built.setdefault(rel, why)
    for rel, spans in never_run(files, configure).items():  # uncalled functions, Windows code
        model.cuda_lines.setdefault(rel, []).extend(spans)
    if model.rocm_builds:
        for rel, cuda_uses, ranges in untested:
            model.cuda_lines[rel] = [(a, b, f"{rel}:{t}") for a, b, t in ranges]
            patterns += _patterns(rel, cuda_uses)
    if model.rocm_builds:  # if(X) where X is set true only in CUDA-only branches
        false_vars = cuda_only_vars(files, model.cuda_lines)
        for rel, text in files.items() if false_vars else ():
            # the file's words once, not a substring search of the file per variable (vars x
            # files x bytes: sixteenth re-run)
            if rel.lower().endswith(
                ("cmakelists.txt", ".cmake")
            ) and not false_vars.keys().isdisjoint(_NAME_WORD.findall(text)):
                extra = false_var_ranges(text, false_vars)
                if extra:
                    model.cuda_lines.setdefault(rel, []).extend(
                        (a, b, f"{rel}:{ev}") for a, b, ev in extra
                    )
    model.cuda_defines = _cuda_defines(files, model.cuda_lines, set(model.rocm_builds))
    if patterns:
        if resolved is None:
            resolved = (
                resolve_includes(native)
                if isinstance(native, Mapping)
                else resolve_names(native, includes or {})
            )
        _mark_not_built(model, patterns, list(native), resolved)
    model.components = _components(files, set(model.rocm_builds))
    if isinstance(native, Mapping):
        taken = [c.path + "/" for c in model.components]
        model.components += left_out(
            [
                c
                for c in cutlass_folders(native, includes or {})
                if not any(
                    (c.path + "/").startswith(t) or t.startswith(c.path + "/") for t in taken
                )
            ],
            native,
            model.not_built,
        )
    return model


def _make_shown(rel: str, text: str, uses: list[Use], files: Mapping[str, str]) -> list[Use]:
    """A Makefile's source uses, those named in a variable whose value reaches no line a ROCm
    build is shown to take marked not shown (``cuda.cpp := $(wildcard backends/cuda/*.cpp)``
    at the top, added to the library only in ``ifneq ($(CUDA_LIB_DIR),)``)."""
    flow = make_flow_of(rel, text, files)
    if not flow.unshown:
        return uses
    return [
        replace(u, shown=False)
        if not u.cuda_only and flow.assigned_at.get(u.line) in flow.unshown
        else u
        for u in uses
    ]


_DASH_D = textre.compile(r"(?<![\w-])-D\s*([A-Za-z_]\w*)")
_CMAKE_DEFS = textre.compile(
    r"\b(?:add_compile_definitions|target_compile_definitions|add_definitions)\s*\(([^)]*)\)",
    re.I,
)
_DEF_WORD = textre.compile(r"[A-Z_][A-Z0-9_]*")
_NAME_WORD = textre.compile(r"\w+")  # a variable name as set() names it
_CMAKE_KEYWORDS = frozenset({"PUBLIC", "PRIVATE", "INTERFACE"})


def _cuda_defines(
    files: dict[str, str], cuda_lines: dict[str, list[tuple[int, int, str]]], tested: set[str]
) -> dict[str, str]:
    """Macros every build file defines only inside branches a ROCm build never takes (and
    only in build files that test for ROCm, so that the branch is known): undefined in the
    ROCm build. A macro defined anywhere else, or by a build file that never tests for ROCm,
    does not count."""
    only: dict[str, str] = {}
    elsewhere: set[str] = set()
    for rel, text in files.items():
        if "-D" not in text and "definitions" not in text.lower():
            continue
        ranges = cuda_lines.get(rel, [])
        line_of = textre.line_finder(text)  # counting from 0 per match was quadratic
        found: list[tuple[str, int]] = [
            (m.group(1), line_of(m.start())) for m in _DASH_D.finditer(text)
        ]
        for m in _CMAKE_DEFS.finditer(text):
            base = line_of(m.start())
            for word in m.group(1).split():
                name = word.removeprefix("-D").split("=", 1)[0]
                if _DEF_WORD.fullmatch(name) and name not in _CMAKE_KEYWORDS:
                    found.append((name, base))
        for name, line in found:
            hit = evidence_at(ranges, line) if rel in tested else None
            if hit is None:
                elsewhere.add(name)
            else:
                only.setdefault(
                    name, f"{rel}:{line}: -D{name} only in a branch ROCm does not take ({hit})"
                )
    return {n: ev for n, ev in only.items() if n not in elsewhere}


def _mark_not_built(
    model: BuildModel,
    patterns: list[_Pattern],
    native: list[str],
    resolved: Mapping[str, frozenset[str]],
) -> None:
    cuda_dirs: dict[str, str] = {}
    unmatched: list[str] = []
    matching = _Hits(patterns)
    in_rocm_dir: set[str] = set()  # under a folder a ROCm build names
    for rel in native:
        every = matching(rel)
        hits = [p for p in every if not (p.is_dir and not p.cuda_only)]
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if not hits:
            unmatched.append(rel)
            if len(hits) < len(every):
                in_rocm_dir.add(rel)
        elif not all(p.cuda_only for p in hits):
            if any(not p.is_dir and p.shown for p in hits if not p.cuda_only):
                model.rocm_named.add(rel)
        else:
            model.not_built[rel] = hits[0].evidence
            if _NATIVE_SOURCE.search(rel):
                cuda_dirs.setdefault(folder, hits[0].evidence)
    rocm_dir_patterns = [p for p in patterns if p.is_dir and not p.cuda_only]
    model.rocm_dirs.update(p.full for p in rocm_dir_patterns)
    candidates: dict[str, str] = {}
    for rel in unmatched:  # headers and unlisted files: follow their folder
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if folder in cuda_dirs and rel not in in_rocm_dir:
            candidates[rel] = cuda_dirs[folder]
    # a header that a file the ROCm build compiles includes is compiled too
    live = [r for r in native if r not in model.not_built and r not in candidates]
    keep_included(candidates, live, resolved)
    model.not_built.update(candidates)
    _headers_of_unbuilt(model, unmatched, resolved)


def _headers_of_unbuilt(
    model: BuildModel, unmatched: list[str], resolved: Mapping[str, frozenset[str]]
) -> None:
    """A header that only files the ROCm build does not compile include is not compiled
    either (a ``cutlass_extensions/common.h`` beside CUDA-only kernels), followed until
    nothing changes. A header nothing includes, or one a compiled file includes, stays.
    Includes are resolved by path (``include_paths``): a compiled file that includes
    another header of the same name elsewhere does not keep this one."""
    headers = [r for r in unmatched if r not in model.not_built and not _NATIVE_SOURCE.search(r)]
    if not headers:
        return
    includers: dict[str, list[str]] = {}
    for r, targets in resolved.items():
        for header in targets:
            if header != r:
                includers.setdefault(header, []).append(r)
    # a worklist (each include looked at once; passes over every header until none changed
    # took a pass per header of a chain written against the list's order), and each reason
    # names its chain's first link and its last, not every link (eighteenth
    # re-run: a chain of 3,000 headers wrote reasons of 90 KB each, a 137 MB report)
    candidate = set(headers)
    waiting = {
        rel: sum(r not in model.not_built for r in includers.get(rel, ())) for rel in headers
    }
    root: dict[str, str] = {}
    todo = [rel for rel in headers if includers.get(rel) and not waiting[rel]]
    while todo:
        rel = todo.pop()
        if rel in model.not_built:
            continue
        first = includers[rel][0]
        if first in root:  # a header of the chain: its first link and this one
            gap = " ..." if root[first] != model.not_built[first] else ""
            model.not_built[rel] = f"{root[first]}{gap} (only {first} includes it)"
            root[rel] = root[first]
        else:
            model.not_built[rel] = root[rel] = (
                f"{model.not_built[first]} (only {first} includes it)"
            )
        for header in resolved.get(rel, ()):
            if header in candidate and header != rel and header not in model.not_built:
                waiting[header] -= 1
                if not waiting[header]:
                    todo.append(header)


_NATIVE_BUILD = textre.compile(
    r"\b(?:Extension|cuda_add_library|add_library|pybind11_add_module)\s*\("
    r"|\b(?:CUDAExtension|CppExtension)\b"  # also `ext = CUDAExtension; ext(...)`
    r"|LANGUAGES[^)]*\bCUDA\b|enable_language\s*\(\s*CUDA"
)


def _components(files: dict[str, str], rocm_builds: set[str]) -> list[Component]:
    found: dict[str, Component] = {}
    texts: dict[str, list[str]] = {}
    for rel, text in files.items():
        if "/" not in rel:
            continue
        folder = rel.rsplit("/", 1)[0]
        texts.setdefault(folder, []).append(text)
        if folder in found or not _is_packaging(rel, text):
            continue
        found[folder] = Component(path=folder, packaging=rel, nvidia_only=False, evidence="")
    out = []
    for folder, comp in sorted(found.items()):
        joined = "\n".join(texts.get(folder, []))
        comp = comp.model_copy(
            update={
                "builds_native": _NATIVE_BUILD.search(joined) is not None,
                "rocm_build": any(
                    b.startswith(folder + "/") and b.count("/") == folder.count("/") + 1
                    for b in rocm_builds
                ),
            }
        )
        nv = _NVIDIA_TECH.search(joined)
        if nv and not _ROCM_TECH.search(joined):
            comp = comp.model_copy(
                update={
                    "nvidia_only": True,
                    "evidence": f"{comp.packaging} names {nv.group()!r} and never ROCm/HIP",
                }
            )
        out.append(comp)
    return out
