"""Dependency routes: a ``requirements-rocm.txt`` beside the CUDA requirements (GP101-GP109).

The CUDA manifests are never edited; the ROCm route is a new file next to them, as real ports
add one (``requirements-rocm.txt``, ``requirements_amd.txt``):

* **copy** (the manifest pins CUDA builds: a CUDA wheel index, ``+cu118`` local versions, CUDA
  wheel URLs, CUDA-only packages): a copy of the requirements file in which the CUDA index
  becomes the PyTorch ROCm index that served the pinned torch release
  (``knowledge/port_routes.toml``), ``torch==2.1.2+cu118`` becomes ``torch==2.1.2+rocm5.6``
  (the same release, the ROCm build), a CUDA-only build with no ROCm wheel of that version
  (``xformers==...+cu118``, a ``+cu`` wheel URL) is commented out with the reason, and a plain
  ``triton`` pin is left to the ROCm torch wheel, which brings its own Triton, as are
  NVIDIA's CUDA runtime wheels (``nvidia-cublas-cu12``: what the CUDA torch wheel pulls in,
  often exported into a requirements file), commented out with the reason.
* **pre-install** (the manifest names torch and friends plainly: ``torch>=2.1`` in
  requirements.txt, pyproject.toml or setup.py): a file holding only those requirements and
  the ROCm index, installed first; the project's own install then finds them satisfied.

Safe: the new file changes nothing a CUDA install does. Two changes are unsafe (the ROCm
route then differs from what the project tested, not only in the build): raising a version to
the first release usable on ROCm (GP107) and swapping a package for AMD's build of it under
another name (GP101, ``onnxruntime-gpu`` -> ``onnxruntime-migraphx``). Without
``--unsafe-fixes`` those lines are carried as they are, with a comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement

from gpuport import textre
from gpuport.knowledge.port_routes import PortRoutes, load_port_routes
from gpuport.port.context import PortContext, Proposal
from gpuport.scan.finding import Finding

__all__ = ["DEP_RULES", "TORCH_FAMILY", "copy_routes", "preinstall_routes", "propose", "rocm_name"]

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
DEP_RULES = ("GP101", "GP102", "GP104", "GP105", "GP106", "GP107", "GP109")
_CUDA_INDEX = textre.compile(
    r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+|/whl/cu\d{2,3}\b"
)
_CUDA_TOKEN = textre.compile(r"(?i)(?<=[-_.])(?:cuda\d*|cu\d{2,3}|gpu|nvidia)(?=[-_.])")
_OPTION = textre.compile(
    r"^\s*(--index-url|--extra-index-url|-i|--find-links|-f)(\s*=\s*|\s+)(\S+)"
)
_QUOTED = textre.compile(r"""["']([^"']+)["']""")
_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
#: NVIDIA's CUDA runtime wheels (``nvidia-cublas-cu12``, ``nvidia-nccl-cu11``)
_NV_RUNTIME = textre.compile(r"^nvidia-[a-z0-9-]+-cu\d+$")
_NOTE = "# gpuport:"
#: a manifest path written into a new requirements file (its comments name it): plain words
#: only; a name with a line break made project text live requirement lines (thirty-ninth
#: re-run F17). Python's ``\w`` (letters and digits of every script, no control character).
_PATH_SIGNS = frozenset("_./+@,=~ -")


def _plain_path(path: str) -> bool:
    return bool(path) and all(c.isalnum() or c in _PATH_SIGNS for c in path)


_PREVIOUS = "https://pytorch.org/get-started/previous-versions/"


def rocm_name(path: str) -> str:
    """Where the ROCm route of requirements file ``path`` goes: ``requirements.txt`` ->
    ``requirements-rocm.txt``, ``requirements_cuda.txt`` -> ``requirements_rocm.txt``."""
    p = PurePosixPath(path)
    stem, suffix = p.stem, p.suffix or ".txt"
    swapped = _CUDA_TOKEN.sub("rocm", f".{stem}.")[1:-1]
    if swapped != stem:
        name = swapped + suffix
    else:
        sep = "_" if "_" in stem and "-" not in stem else "-"
        name = f"{stem}{sep}rocm{suffix}"
    return str(p.with_name(name))


def _dist(name: str) -> str:
    return textre.sub(r"[-_.]+", "-", name).lower()


#: a number no version or marker has (the version parser's int() raises past 4,300 digits)
_LONG_NUMBER = textre.compile(r"\d{19}")


def _req(text: str) -> Requirement | None:
    spec = textre.split(r"\s--?[a-z]", text.split(" #", 1)[0].strip(), maxsplit=1)[0]
    try:
        req = Requirement(spec)
    except InvalidRequirement:
        return None
    if _LONG_NUMBER.search(f"{req.specifier};{req.marker or ''}"):
        return None  # packaging's int() of it stops at 4,300 digits (fortieth re-run F19)
    return req


def _pinned(req: Requirement) -> str | None:
    for spec in req.specifier:
        if spec.operator in ("==", "===") and not spec.version.endswith(".*"):
            return spec.version.partition("+")[0]
    return None


def _bounded(req: Requirement, minors: list[str]) -> str | None:
    """The newest of ``minors`` (the releases with a known ROCm index) that a torch
    specifier allows, when it allows none newer (``torch==2.9.*``, ``~=2.8.0``, ``<2.10``:
    the default index serves only the newest torch, so pip would take PyPI's CUDA wheel;
    J45, KernelBench's requirements)."""
    spec = req.specifier
    if not spec or not minors:
        return None
    newest = max(minors, key=lambda m: tuple(int(p) for p in m.split(".")))
    major, minor = (int(p) for p in newest.split("."))
    later = [f"{major}.{minor + k}.{p}" for k in range(1, 12) for p in (0, 5)]
    if any(spec.contains(v, prereleases=True) for v in [*later, f"{major + 1}.0.0"]):
        return None  # a release newer than the table's may satisfy it: the default index
    allowed = [m for m in minors if any(spec.contains(f"{m}.{p}") for p in range(10))]
    return max(allowed, key=lambda m: tuple(int(p) for p in m.split("."))) if allowed else None


def _torch_release(reqs: list[Requirement], minors: list[str] | None = None) -> str | None:
    """The torch release a set of requirements pins (torchvision/torchaudio pins name it too),
    or the newest of ``minors`` a bounded torch specifier allows (:func:`_bounded`)."""
    by = {_dist(r.name): _pinned(r) for r in reqs}
    if by.get("torch"):
        return by["torch"]
    torch = next((r for r in reqs if _dist(r.name) == "torch"), None)
    if torch is not None and (got := _bounded(torch, minors or [])):
        return got
    vision = by.get("torchvision")
    if vision and (m := textre.match(r"0\.(\d{1,4})(?:\D|$)", vision)) and int(m.group(1)) >= 15:
        return f"2.{int(m.group(1)) - 15}"
    audio = by.get("torchaudio")
    if audio and (m := textre.match(r"2\.(\d{1,4})(?:\D|$)", audio)):
        return f"2.{m.group(1)}"
    return None


def _index_for(ctx: PortContext, routes: PortRoutes, release: str | None) -> str | None:
    if release is not None:
        hit = routes.torch_index(release)
        return hit.index if hit is not None else None
    torch = ctx.packages.by_dist("torch")
    return torch.route.index_url if torch is not None and torch.route else None


def _spec(req: Requirement, version: str | None = None, label: str | None = None) -> str:
    out = req.name + (f"[{','.join(sorted(req.extras))}]" if req.extras else "")
    if version is not None:
        out += f"=={version}" + (f"+{label}" if label else "")
    else:
        out += str(req.specifier)
    if req.marker is not None:
        out += f"; {req.marker}"
    return out


@dataclass
class _Route:
    """The ROCm file being written for one source, and what it addresses."""

    safe: list[Finding] = field(default_factory=list)
    unsafe: list[Finding] = field(default_factory=list)


def _logical(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, joined text) of each logical requirements line."""
    out: list[tuple[int, int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        first, buf = i, lines[i]
        while buf.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            buf = buf.rstrip()[:-1] + " " + lines[i].strip()
        out.append((first + 1, i + 1, buf))
        i += 1
    return out


def _copy_line(
    ctx: PortContext,
    line: str,
    found: list[Finding],
    index: str,
    label: str,
    unsafe: bool,
    route: _Route,
) -> list[str]:
    """The ROCm file's lines for one logical line of the CUDA file that has findings."""
    rules = {f.rule_id for f in found}
    opt = _OPTION.match(line)
    if opt is not None:
        if "GP104" in rules or _CUDA_INDEX.search(opt.group(3)):
            route.safe += found
            kind = opt.group(1)
            if kind in ("-f", "--find-links"):
                kind = "--extra-index-url"
            return [f"{kind} {index}"]
        return [line]
    req = _req(line)
    if req is None:  # a CUDA wheel URL or an unparsable line: it has no ROCm build
        return [
            f"{_NOTE} {' '.join(sorted(rules))} a CUDA build with no ROCm counterpart:",
            f"# {line}",
        ]
    dist = _dist(req.name)
    pkg = ctx.packages.by_dist(req.name)
    if dist in TORCH_FAMILY:
        route.safe += found
        version = _pinned(req)
        return [_spec(req, version, label if version else None)]
    if rules & {"GP105", "GP106", "GP109"}:  # left out of the route: not fixed, said why
        how = f" {pkg.route.how}" if pkg is not None and pkg.route else ""
        return [
            f"{_NOTE} {' '.join(sorted(rules))} a CUDA build of {req.name}; no ROCm wheel "
            f"of this release is known.{how}",
            f"# {line}",
        ]
    if dist == "triton" and "GP102" in rules:
        route.safe += found
        return [
            f"{_NOTE} GP102 the ROCm torch wheel brings its own Triton (pytorch-triton-rocm)",
            f"# {line}",
        ]
    if "GP107" in rules and pkg is not None and pkg.min_version:
        if unsafe:
            route.unsafe += found
            return [f"{req.name}>={pkg.min_version}  {_NOTE} GP107 first release usable on ROCm"]
        return [
            line,
            f"{_NOTE} GP107 needs {req.name}>={pkg.min_version} on ROCm "
            "(applied with --unsafe-fixes)",
        ]
    if "GP101" in rules and pkg is not None and pkg.route and pkg.route.replacement:
        swap = ctx.packages.by_dist(pkg.route.replacement)
        same_api = swap is not None and set(swap.imports) & set(pkg.imports)
        if same_api and unsafe:
            route.unsafe += found
            return [f"{pkg.route.replacement}  {_NOTE} GP101 AMD's build of {req.name}"]
        if same_api:
            return [
                line,
                f"{_NOTE} GP101 AMD's build is {pkg.route.replacement} "
                "(swapped with --unsafe-fixes)",
            ]
    if "GP102" in rules and pkg is not None and pkg.route and pkg.route.kind == "index":
        route.safe += found
        return [line]
    return [line]


def _copy_route(
    ctx: PortContext, path: str, text: str, found: list[Finding], unsafe: bool
) -> Proposal | None:
    routes = load_port_routes()
    logical = _logical(text)
    reqs = [r for _, _, t in logical if not t.lstrip().startswith(("-", "#")) if (r := _req(t))]
    release = _torch_release(reqs, [t.minor for t in routes.torch])
    index = _index_for(ctx, routes, release)
    if index is None:
        return None
    label = index.rstrip("/").rsplit("/", 1)[-1]
    by_line: dict[int, list[Finding]] = {}
    for f in found:
        by_line.setdefault(f.location.line or 0, []).append(f)
    route = _Route()
    eol = ctx.eol(text)
    out: list[str] = []
    has_index = False
    nv_runtime: list[Finding] = []
    new_lines: list[str] = []  # the lines gpuport writes (not copied as they were)
    lines = text.splitlines()  # once: per line it was quadratic (400 KB of wheels: 28 s)
    for first, last, joined in logical:
        hits = [f for ln in range(first, last + 1) for f in by_line.get(ln, [])]
        r = _req(joined)
        is_torch = r is not None and _dist(r.name) in TORCH_FAMILY
        if r is not None and _NV_RUNTIME.match(_dist(r.name)):
            # NVIDIA's CUDA runtime wheels (what the CUDA torch wheel pulls in, often
            # exported into a requirements file by a lock tool): the ROCm torch wheel brings
            # ROCm's libraries instead, and these would only add gigabytes of CUDA
            out += [f"{_NOTE} NVIDIA's CUDA runtime wheel; the ROCm torch wheel brings ROCm's"]
            out += [f"# {ln}" for ln in lines[first - 1 : last]]
            nv_runtime += hits  # addressed when the file has a route of its own
            continue
        if not hits and not is_torch:
            out.extend(lines[first - 1 : last])
            continue
        new = _copy_line(ctx, joined, hits, index, label, unsafe, route)
        new_lines += new
        has_index = has_index or any(
            ln.startswith(("--index-url", "--extra-index-url", "-i ")) for ln in new
        )
        out.extend(new)
    if not route.safe and not route.unsafe:
        return None
    route.safe += nv_runtime
    head = [
        f"# ROCm install route for {PurePosixPath(path).name}, written by `gpuport port`: the same",
        "# requirements with the ROCm builds (CUDA-only builds commented out, with the reason).",
        f"#   pip install -r {PurePosixPath(rocm_name(path)).name}",
    ]
    if not has_index:
        head.append(f"--extra-index-url {index}")
    if any(ln.endswith("\\") for ln in new_lines):
        return None  # a spec ending in `\` (`===a\`) joins the next line for pip
    body = eol.join(head + out) + eol
    prop = Proposal(
        id=f"deps-route:{rocm_name(path)}",
        family="dependencies",
        title=f"{rocm_name(path)}: the ROCm route of {path}",
        safe=not route.unsafe,
        why=(
            "a new file beside the CUDA requirements: a CUDA install is unchanged"
            if not route.unsafe
            else "raises versions or swaps packages on the ROCm route (GP107/GP101)"
        ),
        findings=route.safe + route.unsafe,
        note=f"torch {release} comes from {index}" if release else f"torch from {index}",
    )
    prop.creates[rocm_name(path)] = body
    return prop


def _preinstall(
    ctx: PortContext, folder: str, items: list[tuple[Finding, Requirement]], taken: set[str]
) -> Proposal | None:
    routes = load_port_routes()
    reqs: dict[str, Requirement] = {}
    for _, req in items:
        reqs.setdefault(_dist(req.name), req)
    release = _torch_release(list(reqs.values()), [t.minor for t in routes.torch])
    index = _index_for(ctx, routes, release)
    target = f"{folder}/requirements-rocm.txt" if folder else "requirements-rocm.txt"
    if index is None or target in taken or ctx.exists(target):
        return None
    sources = sorted({f.location.path for f, _ in items})
    first = PurePosixPath(sources[0]).name
    after = f"pip install -r {first}" if first.endswith((".txt", ".in")) else "pip install ."
    lines = [
        f"# ROCm builds of {', '.join(reqs)}, written by `gpuport port` for {', '.join(sources)}.",
        "# Install them first; the project's own install then finds them satisfied:",
        "#   pip install -r requirements-rocm.txt",
        f"#   {after}",
        f"--index-url {index}",
        *(_spec(r) for r in reqs.values()),
    ]
    if any(ln.endswith("\\") for ln in lines) or not all(_plain_path(x) for x in sources):
        return None  # a spec ending in `\` joins the next line for pip; paths: see _compute
    prop = Proposal(
        id=f"deps-preinstall:{target}",
        family="dependencies",
        title=f"{target}: ROCm builds of {', '.join(reqs)}, installed first",
        safe=True,
        why="a new file beside the CUDA manifests: a CUDA install is unchanged",
        findings=[f for f, _ in items],
        note=f"torch from {index}",
    )
    prop.creates[target] = "\n".join(lines) + "\n"
    return prop


@lru_cache(maxsize=8)
def _lines(text: str) -> tuple[str, ...]:
    """The lines of a manifest, split once: asked once per finding (a setup.cfg of one
    requirement per line was quadratic in port)."""
    return tuple(text.splitlines())


def _manifest_req(ctx: PortContext, f: Finding) -> Requirement | None:
    text = ctx.read(f.location.path)
    if text is None or f.location.line is None:
        return None
    lines = _lines(text)
    if f.location.line > len(lines):
        return None
    line = lines[f.location.line - 1]
    name = f.message.split(":", 1)[0].strip()
    candidates = [line] if f.location.path.endswith((".txt", ".in")) else _QUOTED.findall(line)
    for cand in candidates:
        req = _req(cand)
        if req is not None and _dist(req.name) == _dist(name):
            return req
    return None


@dataclass
class Routes:
    """The routes this family writes: source manifest -> the ROCm file."""

    proposals: list[Proposal]
    copy: dict[str, str]
    pre: dict[str, str]
    #: source -> the findings its safe route addresses
    found: dict[str, list[Finding]] = field(default_factory=dict)


def routed_findings(ctx: PortContext, source: str) -> list[Finding]:
    """The findings of manifest ``source`` that its (safe) ROCm route addresses."""
    return _routes(ctx).found.get(source, [])


def copy_routes(ctx: PortContext) -> dict[str, str]:
    """Requirements files that get a ROCm copy: source -> ROCm file."""
    return _routes(ctx).copy


def preinstall_routes(ctx: PortContext) -> dict[str, str]:
    """Manifests whose torch family gets a pre-install file: source -> that file."""
    return _routes(ctx).pre


def propose(ctx: PortContext) -> list[Proposal]:
    return _routes(ctx).proposals


def _routes(ctx: PortContext) -> Routes:
    cached = ctx.cache.get("deps-routes")
    if isinstance(cached, Routes):
        return cached
    got = _compute(ctx)
    ctx.cache["deps-routes"] = got
    return got


#: a requirements file named for a platform that is not a CUDA GPU (``requirements-coreml.txt``,
#: ``requirements_cpu.txt``, ``requirements-mps.txt``): what it installs runs there, not on ROCm
_OTHER_PLATFORM = textre.compile(
    r"(?i)(?:^|[-_.])(?:cpu|coreml|mps|metal|apple|mac|macos|darwin|mlx|xpu|ipex|intel|tpu|"
    r"jax-tpu|npu|ascend|openvino|onnx-cpu|habana|gaudi|hpu|neuron|directml|dml|vulkan)"
    r"(?:[-_.\d]|$)"
)


#: a Python source that puts torch (or a library on top of it) on a GPU names one
_GPU_USE = textre.compile(r"(?i)(?<![\w])(?:cuda|gpu|gpus|device_map|cpp_extension)(?![\w])")


#: a Python file that imports torch itself (not a comment, not a string)
_IMPORTS_TORCH = textre.compile(r"(?m)^[ \t]*(?:import[ \t]+torch\b|from[ \t]+torch\b)")
_PY_COMMENT = textre.compile(r"(?m)#[^\n]*$")


def _python_uses_gpu(ctx: PortContext, folder: str = "") -> bool:
    """Whether the Python a requirements file in ``folder`` serves puts torch on a GPU.

    Where the folder holds Python files that import torch, those decide: an application
    folder whose scripts import torch only to ``torch.save`` a configuration runs torch on
    the CPU, whatever the rest of the project does. Otherwise (the project's root, or a
    folder whose requirements serve scripts elsewhere) any Python file of the project that
    names a GPU does: a project whose Python only converts or inspects models (ggml's
    conversion scripts: ``torch.load(..., map_location="cpu")``) runs torch on the CPU, and a
    ROCm torch route for it is noise. Comments are not read."""
    texts: dict[str, str] = {}
    for rel in ctx.files_of("python"):
        text = ctx.read(rel)
        if text is not None:
            texts[rel] = _PY_COMMENT.sub("", text)
    if folder:
        mine = [
            t
            for rel, t in texts.items()
            if rel.startswith(folder + "/") and _IMPORTS_TORCH.search(t)
        ]
        if mine:
            return any(_GPU_USE.search(t) is not None for t in mine)
    return any(_GPU_USE.search(t) is not None for t in texts.values())


python_uses_gpu = _python_uses_gpu


def _compute(ctx: PortContext) -> Routes:
    out: list[Proposal] = []
    copy: dict[str, str] = {}
    pre_map: dict[str, str] = {}
    found_by: dict[str, list[Finding]] = {}
    taken: set[str] = set()
    pre: dict[str, list[tuple[Finding, Requirement]]] = {}
    for path in ctx.files_with(*DEP_RULES):
        name = PurePosixPath(path).name
        if not _plain_path(path):
            ctx.decline(
                ctx.of(*DEP_RULES, path=path),
                "its path holds characters gpuport does not write into a requirements file "
                "(a line break would make the rest of the name requirement lines): no ROCm route",
            )
            continue
        if textre.search(r"(?i)(?:^|[-_.])(?:rocm|amd|hip)(?:[-_.\d]|$)", name):
            continue
        if _OTHER_PLATFORM.search(PurePosixPath(name).stem):
            ctx.decline(
                ctx.of(*DEP_RULES, path=path),
                f"{name} installs for another platform (its name says so): no ROCm route",
            )
            continue
        found = ctx.of(*DEP_RULES, path=path)
        text = ctx.read(path)
        if text is None:
            continue
        cuda_only = any(f.rule_id != "GP102" for f in found)
        if name.endswith((".txt", ".in")) and cuda_only:
            target = rocm_name(path)
            if ctx.exists(target) or target in taken:
                continue
            safe = _copy_route(ctx, path, text, found, unsafe=False)
            risky = _copy_route(ctx, path, text, found, unsafe=True)
            if risky is not None and not risky.safe:
                risky.id += ":unsafe"
                risky.group = target
                if safe is not None:
                    safe.group = target
                out.append(risky)
            if safe is not None:
                out.append(safe)
            if safe is not None or risky is not None:
                copy[path] = target
                found_by[path] = list(safe.findings) if safe is not None else []
            taken.add(target)
            continue
        if name.endswith((".txt", ".in")) or name in _MANIFESTS:
            for f in found:
                req = _manifest_req(ctx, f)
                pkg = ctx.packages.by_dist(req.name) if req is not None else None
                if req is None or pkg is None or pkg.route is None or pkg.route.kind != "index":
                    continue
                if _dist(req.name) not in TORCH_FAMILY and _dist(req.name) != "xformers":
                    continue
                folder = str(PurePosixPath(path).parent)
                pre.setdefault("" if folder == "." else folder, []).append((f, req))
    for folder, items in list(pre.items()):
        # an application's requirements file only (a package's own manifest serves its
        # users, who may put it on a GPU)
        if not _python_uses_gpu(ctx, folder):
            cpu = [(f, r) for f, r in items if f.location.path.endswith((".txt", ".in"))]
            ctx.decline(
                [f for f, _ in cpu],
                "no Python file it serves names a GPU (cuda, gpu, device_map, "
                "cpp_extension): its torch runs on the CPU, where a ROCm build adds nothing",
            )
            pre[folder] = [x for x in items if x not in cpu]
    pre = {k: v for k, v in pre.items() if v}
    for folder, items in sorted(pre.items()):
        prop = _preinstall(ctx, folder, items, taken)
        if prop is not None:
            out.append(prop)
            for f, _ in items:
                pre_map[f.location.path] = next(iter(prop.creates))
                found_by.setdefault(f.location.path, []).append(f)
    return Routes(out, copy, pre_map, found_by)
