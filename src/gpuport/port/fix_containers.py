"""Containers: a ``Dockerfile.rocm`` beside the CUDA Dockerfile, a compose override beside the
compose file (GP501-GP505, and the dependency findings of the requirements an image installs).

* **Dockerfile.rocm** (safe: a new file; ``docker build`` of the CUDA file is unchanged): a
  copy of the Dockerfile where a CUDA base image becomes its ROCm counterpart from
  ``knowledge/port_routes.toml`` (``nvidia/cuda:12.1.0-devel-ubuntu22.04`` ->
  ``rocm/dev-ubuntu-22.04:6.4-complete``, ``pytorch/pytorch`` -> ``rocm/pytorch``), the NVIDIA
  runtime and CUDA path variables are dropped (``TORCH_CUDA_ARCH_LIST`` becomes
  ``PYTORCH_ROCM_ARCH``), CUDA apt packages are taken out of ``apt-get install``, pip's CUDA
  index and ``+cu`` builds become the ROCm ones (on an image that ships ROCm torch, torch is
  not installed again), and ``pip install -r R`` installs R's ROCm route (``port``'s
  ``requirements-rocm.txt``). A Dockerfile with none of that to change gets no copy.
* A Dockerfile that compiles CUDA code (``-DGGML_CUDA=ON``, ``nvcc``, CUDA's binary tools
  such as ``nvprune``, a cargo feature naming CUDA), installs a CUDA-only build
  (``pkg[cublas]``, ``*-cu12``), runs a project script that does (read, never run), or puts
  NVIDIA's EGL/Vulkan driver manifests into the image gets no copy: its findings say why in
  ``unfixed``.
* Compose files: :mod:`gpuport.port.fix_compose`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port import (
    docker_args,
    docker_gpu,
    docker_text,
    fix_compose,
    fix_deps,
    python_image,
)
from gpuport.port.context import PortContext, Proposal, unique, unrun
from gpuport.port.docker_pip import (
    SCRIPT,
    drop_torch,
    empty_install,
    no_comments,
    pypi_torch,
    torch_unread,
    unrouted_package,
)
from gpuport.scan.finding import Finding

__all__ = ["dockerfile_name", "propose"]

_FROM = textre.compile(r"^(\s*FROM\s+(?:--platform=\S+\s+)?)(\S+)", re.I)
_ARG = textre.compile(r"^(\s*ARG\s+\w+=)(\S+)", re.I)
_ENV_START = textre.compile(r"^\s*ENV\s+", re.I)
_RUN = textre.compile(r"^\s*RUN\s", re.I)
_COPY = textre.compile(r"^(\s*(?:COPY|ADD)\s+(?:--\S+\s+)*)(.+?)(\s+\S+\s*)$", re.I)
_CUDA_APT = textre.compile(rf"(?<![\w.-]){docker_text.CUDA_PACKAGE}(?![\w.-])")
#: a RUN that compiles CUDA code or installs a CUDA-only build: a ROCm image would need the
#: project's HIP build (or another package), which is a person's call
_CUDA_BUILD = textre.compile(
    r"(?i)-D[ \t]*\w*(?:CUDA|CUBLAS)\w*=(?:ON|1|TRUE)\b|\b\w*(?:CUDA|CUBLAS)=1\b"
    r"|CMAKE_CUDA_ARCHITECTURES|CUDA_DOCKER_ARCH|\bnvcc\b"
    # nvcc's own settings handed to a build (``make NVCC_GENCODE="-gencode=arch=compute_90,..."``:
    # nccl-tests, J57), its architecture flags
    r"|\bNVCC_?\w*=|-gencode\b|\barch=(?:compute|sm)_\d+"
    r"|\[[\w,-]*\b(?:cublas|cuda\d*|cu1\d+x?)\b[\w,-]*\]"
    r"|(?<![\w.-])(?:cupy-cuda\w*|[\w.-]+-cu1\d+x?)(?![\w.-])"
    # the CUDA toolkit's binary tools (pruning cuBLAS for an arch, reading a fatbinary)
    r"|\b(?:nvprune|cuobjdump|nvdisasm|fatbinary|ptxas)\b"
    # the CUDA toolkit installed from NVIDIA's own package repository (its key, its keyring
    # package): the image builds its CUDA stack itself, and a copy without it has no GPU stack
    r"|developer\.download\.nvidia\.com/compute/cuda/repos\b|\bcuda-keyring\b"
    # a build's own feature switch naming CUDA (cargo ``--features candle-cuda``, ``-F cuda``)
    r"|\bcargo\b[^\n;&|]*?(?:--features|\s-F)[ =]+[\"']?[\w,:/-]*cuda"
    # conda's CUDA builds (``pytorch cudatoolkit=11.3 -c pytorch``, ``pytorch-cuda=12.1``)
    r"|\b(?:conda|mamba|micromamba)\b[^;&|]*?\binstall\b[^;&|]*?"
    r"[\s\"'](?:cudatoolkit|pytorch-cuda|cuda-toolkit|cuda-nvcc|cudnn)\b"
    # NVIDIA's CUDA-only source builds: apex's CUDA extensions, TransformerEngine
    r"|\bpip3?\s+install\b[^;&|]*?(?:--cuda_ext\b|github\.com/NVIDIA/apex\b"
    r"|/TransformerEngine(?:\.git)?\b|[\s\"'=]transformer[-_]engine\b)"
)
#: NVIDIA's GL/Vulkan driver manifests put into the image: it renders through NVIDIA's driver
_NV_MANIFEST = textre.compile(
    r"(?i)\S*nvidia[\w.-]*\.json\s+\S*(?:egl_vendor|vulkan/icd|_layer)\.d\S*"
    r"|\S*(?:egl_vendor|vulkan/icd|_layer)\.d/\S*nvidia\S*"
)
_CUDA_INDEX = textre.compile(r"https?://download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+/?")
_LOCAL_CU = textre.compile(r"\+cu\d+")
_PIP_R = textre.compile(r"(?<![\w-])(-r|--requirement)(\s+|=)(\S+)")
_MARK = "# gpuport:"
_RULES = ("GP501", "GP502", "GP503", "GP504", "GP104", "GP105", "GP102", "GP109")


def dockerfile_name(path: str) -> str:
    p = PurePosixPath(path)
    name = p.name
    low = name.lower()
    if low.endswith(".dockerfile"):
        base = name[: -len(".dockerfile")]
        base = textre.sub(r"(?i)[-_.](?:cuda\d*|gpu|nvidia|cu\d{2,3})$", "", base)
        return str(p.with_name(f"{base}.rocm.dockerfile"))
    swapped = textre.sub(r"(?i)([-_.])(?:cuda\d*|gpu|nvidia|cu\d{2,3})$", r"\1rocm", name)
    return str(p.with_name(swapped if swapped != name else f"{name}.rocm"))


_PIN = textre.compile(r"(?<![\w.-])(torch|torchvision|torchaudio)==([0-9][\w.]*)")


def _pip(text: str, index: str, framework: bool, routed: dict[str, str]) -> str | None:
    """The pip command for ROCm, or None when a torch pin names a release whose ROCm index
    gpuport does not know (left to a person)."""
    pins = {m.group(1): m.group(2) for m in _PIN.finditer(text)}
    release = pins.get("torch")
    if release is None and "torchvision" in pins:
        m = textre.match(r"0\.(\d+)", pins["torchvision"])
        if m and len(m.group(1)) > 6:  # no release gpuport knows (and past int()'s 4,300
            return None  # digits: 40th re-run F19): left to a person
        release = f"2.{int(m.group(1)) - 15}" if m and int(m.group(1)) >= 15 else None
    if release is not None and (_CUDA_INDEX.search(text) or _LOCAL_CU.search(text)):
        hit = load_port_routes().torch_index(release)
        if hit is None:
            return None
        index = hit.index
    label = index.rstrip("/").rsplit("/", 1)[-1]
    out = _CUDA_INDEX.sub(index.rstrip("/"), text)
    out = _LOCAL_CU.sub(f"+{label}", out)
    for src, dst in routed.items():
        out = textre.sub(rf"(?<![\w/.-]){re.escape(src)}(?![\w.-])", dst, out)
    if framework and textre.search(r"\bpip3?\s+install\b", out):
        dropped = drop_torch(out)  # the install's words only (39th re-run F16)
        if dropped is None:
            return None
        out = dropped
        if empty_install(out):  # the image ships them: nothing left to install
            out = "".join(f"# {ln}" if ln.strip() else ln for ln in text.splitlines(True))
            out = f"{_MARK} the ROCm image ships torch, which this RUN installed\n" + out
    return out


def _dockerfile(ctx: PortContext, path: str, text: str, found: list[Finding]) -> Proposal | None:
    routes = load_port_routes()
    lines = text.splitlines(keepends=True)
    eol = ctx.eol(text)
    dep_copy = fix_deps.copy_routes(ctx)
    pre = fix_deps.preinstall_routes(ctx)
    index = routes.torch[-1].index
    torch = ctx.packages.by_dist("torch")
    if torch is not None and torch.route and torch.route.index_url:
        index = torch.route.index_url
    framework = False
    rocm_base = False  # a CUDA image became a ROCm SDK image (its pip installs still run)
    used: list[Finding] = []
    by_line: dict[int, list[Finding]] = {}
    for f in found:
        by_line.setdefault(f.location.line or 0, []).append(f)
    out = list(lines)
    dep_hits = ctx.of("GP101", "GP102", "GP106", "GP107", "GP108", "GP109", path=path)
    copied: dict[str, str] = {}  # a file name in the image -> the project file COPY put there
    changed = False
    pre_lines: list[str] = []
    scope = docker_args.ArgScope()
    args = docker_args.BuildArgs(ctx, path, scope)
    notes: dict[int, str] = {}  # a RUN's first line -> a note on its branches
    for first, last in docker_text.instructions(lines):
        chunk = "".join(lines[first : last + 1])
        scope.feed(chunk)
        hits = [f for ln in range(first + 1, last + 2) for f in by_line.get(ln, [])]
        new = chunk
        m = _FROM.match(chunk) or (
            _ARG.match(chunk) if any(f.rule_id == "GP501" for f in hits) else None
        )
        if m is not None and any(f.rule_id == "GP501" for f in hits):
            passed = args.passed_for(chunk)
            if passed is not None:
                ctx.decline(
                    found,
                    f"{path} takes its base image from a build argument that {passed}: a ROCm "
                    "copy's default would not reach those builds (a compose override built "
                    "from the copy keeps the service's build arguments); left to a person",
                )
                return None
            named = args.from_default(m.group(2))  # FROM ${BASE:-nvidia/cuda:...}
            given = named[1] if named else m.group(2)
            hit = routes.image_for(given)
            if hit is None:
                old_os = routes.unshipped_ubuntu(given)
                if old_os is not None:
                    ctx.decline(
                        found,
                        f"{path} starts from an Ubuntu {old_os} image, and ROCm {routes.rocm} "
                        f"ships no image for it ({', '.join(routes.ubuntu)}): moving the image "
                        "to another release (or an older ROCm) is a person's call",
                    )
                other = routes.other_os(given)
                if other is not None:
                    ctx.decline(
                        found,
                        f"{path} starts from a CUDA image of {other}, not Ubuntu, and its steps "
                        "are written for that distribution: the ROCm SDK image gpuport knows "
                        "is Ubuntu's, so which ROCm image to start from is a person's call",
                    )
                return None  # a CUDA image with no ROCm counterpart known: left to a person
            route, image = hit
            framework = framework or route.kind == "framework"
            rocm_base = rocm_base or route.kind == "base"
            image = f"${{{named[0]}:-{image}}}" if named else image
            new = chunk[: m.start(2)] + image + chunk[m.end(2) :]
        elif _ENV_START.match(chunk) and any(f.rule_id in ("GP502", "GP504") for f in hits):
            env = docker_text.env_without_cuda(chunk, ctx.target.name)
            new = (
                env
                if env is not None
                else "".join(f"# {ln}" for ln in chunk.splitlines(keepends=True))
            )
        elif _RUN.match(chunk):
            new = chunk
            branches = args.branches(chunk)
            live = branches.live(chunk)
            build = _cuda_build(ctx, path, live, copied)
            if build is not None:
                why = args.unknown_note(branches, live, build)
                _decline_cuda(ctx, path, found, f"builds or installs CUDA code ({build}){why}")
                return None
            own = docker_gpu.project_build(ctx, path, live, copied)
            if own is not None:  # the project's CUDA build, which a ROCm image cannot take
                _decline_cuda(ctx, path, found, f"builds the project's own CUDA code: {own}")
                return None
            lines_here = range(first + 1, last + 2)
            deps = [f for f in dep_hits if f.location.line in lines_here]
            live_deps = [f for f in deps if args.live_finding(branches, chunk, first, f)]
            routed_torch = rocm_base or framework or bool(_CUDA_INDEX.search(chunk))
            blocked = unrouted_package(live_deps, live, routed_torch)
            if blocked is not None:
                why = args.unknown_note(branches, live, blocked)
                ctx.decline(
                    [*found, *deps],
                    f"{path} installs {blocked} the default way{why}: a CUDA build (or a "
                    "version ROCm cannot use) that a ROCm copy would install too; no copy, "
                    "left to a person",
                )
                return None
            off = _cuda_build(ctx, path, chunk, copied) or unrouted_package(
                [f for f in deps if f not in live_deps], chunk, routed_torch
            )
            if off is not None:
                notes[first] = args.dead_note(branches, chunk, off, eol)
            if textre.search(
                r"\b(?:apt-get|apt|yum|dnf)\b[^\n]*\binstall\b", chunk
            ) and _CUDA_APT.search(chunk):
                dropped = docker_text.drop_packages(new)
                if dropped is None:  # 39th re-run F16: package words only, plain ones
                    ctx.decline(
                        found,
                        f"{path} installs a CUDA package (line {first + 1}) with words that "
                        "are not plain (quotes, `$`, globs): which to leave out is not read; "
                        "left to a person",
                    )
                    return None
                new = dropped
            unread = torch_unread(chunk) if framework or rocm_base else None
            if unread is not None:  # its torch words would be rewritten (39th re-run F11)
                ctx.decline(
                    found,
                    f"{path} installs torch with words that are not plain (`{unread}`: "
                    "quotes around part of a word, `$`, a redirection...): how the shell "
                    "reads them is not read; left to a person",
                )
                return None
            if textre.search(r"\bpip3?\b|python3?\s+-m\s+pip", new):
                routed = {}
                for m2 in _PIP_R.finditer(new):
                    given = m2.group(3)
                    full = copied.get(PurePosixPath(given).name, _project_path(given))
                    if full in dep_copy:
                        routed[m2.group(3)] = _swap_name(m2.group(3), dep_copy[full])
                    elif full in pre:
                        pre_lines.append(_preinstall_run(chunk, m2.group(3), pre[full], eol))
                        used += fix_deps.routed_findings(ctx, full)
                piped = _pip(new, index, framework, routed)
                if piped is None:
                    continue  # a torch release with no known ROCm index: left as it is
                new = piped
                for given in routed:
                    used += fix_deps.routed_findings(ctx, _project_path(given))
            if (
                rocm_base
                and not framework
                and not (_CUDA_INDEX.search(chunk) or _LOCAL_CU.search(chunk))
            ):
                first_rocm = pypi_torch(live, eol)
                if first_rocm == "":
                    ctx.decline(
                        found,
                        f"{path} installs a torch release from PyPI (a CUDA build) whose ROCm "
                        "index gpuport does not know: left to a person",
                    )
                    return None
                if first_rocm is not None:
                    pre_lines.append(first_rocm)
            if pre_lines:
                new = "".join(pre_lines) + new
                pre_lines = []
        elif textre.match(r"^\s*(?:COPY|ADD)\s", chunk, re.I):
            manifest = _NV_MANIFEST.search(chunk)
            if manifest is not None:
                _decline_cuda(
                    ctx, path, found, f"installs NVIDIA's driver manifest ({manifest.group(0)})"
                )
                return None
            _note_copies(chunk, copied)
            new = _copy_routes(chunk, dep_copy, pre, eol)
        if new != chunk:
            changed = True
            used += hits
            out[first] = new
            for i in range(first + 1, last + 1):
                out[i] = ""
    if not changed or not used:
        return None
    for at, note in notes.items():
        out[at] = note + out[at]
    target = dockerfile_name(path)
    head = [
        f"{_MARK} ROCm variant of {PurePosixPath(path).name}, written by `gpuport port`:",
        f"#   docker build -f {PurePosixPath(target).name} .",
        "#   docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render",
    ]
    body = "".join(out)
    # parser directives (# syntax=, # escape=) stay first, as Docker finds them (40th F15)
    split = len("".join(out[: docker_text.directive_lines(lines)]))
    content = body[:split] + eol.join(head) + eol + body[split:]
    prop = Proposal(
        id=f"dockerfile-rocm:{target}",
        family="containers",
        title=f"{target}: the ROCm image beside {path}",
        safe=True,
        why="a new file: building the CUDA Dockerfile is unchanged",
        findings=unique(used),
        note="image tags follow knowledge/port_routes.toml; pin one that matches your ROCm",
    )
    prop.creates[target] = content
    return prop


def _decline_cuda(ctx: PortContext, path: str, found: list[Finding], what: str) -> None:
    """No ROCm copy of ``path``: the image needs the project's HIP build (or AMD's driver
    files) there; compose services built from it get no AMD devices either."""
    built_here = ctx.cache.setdefault("cuda-built", set())
    if isinstance(built_here, set):
        built_here.add(path)
    ctx.decline(
        found,
        f"{path} {what}: a ROCm image needs the project's HIP build there, left to a person",
    )


def _cuda_build(ctx: PortContext, path: str, chunk: str, copied: dict[str, str]) -> str | None:
    """What in a RUN compiles CUDA code or installs a CUDA-only build: the RUN's own text,
    or a project script it runs (copied into the image, or found beside the Dockerfile or
    at the project's root), read and never run."""
    code = no_comments(chunk)
    build = _CUDA_BUILD.search(code)
    if build is not None:
        return build.group(0).strip()
    here = PurePosixPath(path).parent
    for m in SCRIPT.finditer(code):
        given = m.group(1)
        name = PurePosixPath(given).name
        for cand in (copied.get(name), str(here / _project_path(given)), _project_path(given)):
            text = ctx.read(cand) if cand and not cand.startswith("/") else None
            if text is None:
                continue
            key = f"cuda-build-script:{cand}"  # each script read once (36th re-run F8)
            if key not in ctx.cache:
                hit = _CUDA_BUILD.search(no_comments(text))
                ctx.cache[key] = hit.group(0).strip() if hit is not None else None
            inner = ctx.cache[key]
            if isinstance(inner, str):
                return f"{cand} runs {inner}"
            break
    return None


def _project_path(rel: str) -> str:
    return str(PurePosixPath(rel.lstrip("./") if rel.startswith("./") else rel))


def _swap_name(given: str, routed: str) -> str:
    """``-r backend/requirements.txt`` -> ``-r backend/requirements-rocm.txt``."""
    return str(PurePosixPath(given).with_name(PurePosixPath(routed).name))


def _preinstall_run(chunk: str, given: str, routed: str, eol: str) -> str:
    name = _swap_name(given, routed)
    if _PLAIN_ARG.fullmatch(name) is None:
        return ""  # not a plain path: never written into a RUN (thirty-seventh re-run F11)
    pip = textre.search(  # options of plain words only: no `;`, `$`, `|`, quotes, backticks
        r"((?:python3?\s+-m\s+)?pip3?\s+install)((?:\s+--?[\w-]+(?:=[\w./@+:-]+)?)*?)"
        r"\s+(?:-r|--requirement)\b",
        chunk,
    )
    cmd = pip.group(1) if pip else "pip install"
    opts = pip.group(2).strip() if pip else ""  # --prefix, --user...: where the rest goes too
    return f"RUN {cmd}{' ' + opts if opts else ''} -r {name}  {_MARK} GP102 ROCm builds first{eol}"


_PLAIN_ARG = textre.compile(r"[\w./@+-]+")


def _note_copies(chunk: str, copied: dict[str, str]) -> None:
    """Remember which project file a ``COPY src... dest`` puts under which name."""
    m = _COPY.match(chunk.rstrip("\r\n"))
    if m is None or "--from" in m.group(1) or "\\" in chunk:
        return
    sources = m.group(2).split()
    dest = m.group(3).strip()
    if len(sources) == 1 and not dest.endswith(("/", ".")):
        copied[PurePosixPath(dest).name] = _project_path(sources[0])
        return
    for src in sources:
        copied.setdefault(PurePosixPath(src).name, _project_path(src))


def _copy_routes(chunk: str, dep_copy: dict[str, str], pre: dict[str, str], eol: str) -> str:
    m = _COPY.match(chunk.rstrip("\r\n"))
    if m is None or "\\" in chunk:
        return chunk
    sources = m.group(2).split()
    extra = []
    for s in sources:
        full = _project_path(s)
        routed = dep_copy.get(full) or pre.get(full)
        if routed is not None:
            extra.append(_swap_name(s, routed))
    if not extra:
        return chunk
    return f"{m.group(1)}{' '.join(sources + extra)}{m.group(3).rstrip()}{eol}"


# --- compose -----------------------------------------------------------------------------


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    dockerfiles: dict[str, str] = {}
    routed: dict[str, list[Finding]] = {}
    copies: dict[str, Proposal] = {}  # a Dockerfile -> its copy
    kinds = {f.location.path for f in ctx.findings}
    candidates = sorted(
        p
        for p in _container_files(ctx)
        if "rocm" not in PurePosixPath(p).name.lower() and not unrun(p)
    )
    for path in candidates:
        if not _is_dockerfile(path):
            continue
        text = ctx.read(path)
        target = dockerfile_name(path)
        if text is None or ctx.exists(target) or python_image.python_based(text):
            continue  # (a plain Python image: below)
        found = ctx.of(*_RULES, path=path) if path in kinds else []
        if _unsure(ctx, path, text, found):
            continue
        prop = _dockerfile(ctx, path, text, found)
        if prop is not None:
            out.append(prop)
            dockerfiles[path] = target
            routed[path] = prop.findings
            copies[path] = prop
    # a Dockerfile on a plain Python image that installs PyPI's torch: its steps on AMD's
    # ROCm PyTorch image (session 13), wherever it is and whatever findings it has
    cuda_built = ctx.cache.get("cuda-built")
    for path in ctx.files_of("dockerfile"):
        name = PurePosixPath(path).name.lower()
        if path in dockerfiles or "rocm" in name or unrun(path) or not _is_dockerfile(path):
            continue
        if isinstance(cuda_built, set) and path in cuda_built:
            continue
        text = ctx.read(path)
        target = dockerfile_name(path)
        if text is None or ctx.exists(target):
            continue
        found = ctx.of(*_RULES, path=path)
        if _unsure(ctx, path, text, found):
            continue
        prop = python_image.copy(ctx, path, text, found, _TOOLS)
        if prop is None and (path in candidates or python_image.wheels_instead(ctx, path)):
            # AMD's image does not fit (the Dockerfile's own Python environment...): ROCm
            # torch wheels on the same image, where its requirements have that route (D4)
            prop = _dockerfile(ctx, path, text, found)
            if prop is not None:
                python_image.fell_back(ctx, path, prop)
        if prop is not None:
            out.append(prop)
            dockerfiles[path] = target
            routed[path] = prop.findings
            copies[path] = prop
            if not python_image.rocm_final_stage(prop.creates[target]):
                plain = ctx.cache.setdefault("copy-not-rocm", set())
                if isinstance(plain, set):
                    plain.add(path)
                prop.creates[target] = prop.creates[target].replace(
                    " --group-add video --group-add render",
                    " --group-add video --group-add $(getent group render | cut -d: -f3)",
                    1,
                )
    for path in docker_gpu.twins(ctx, copies):  # CUDA-version variants: one ROCm copy
        out.remove(copies[path])
        dockerfiles.pop(path)
        routed.pop(path)
    compose = [p for p in candidates if not _is_dockerfile(p)]
    return out + fix_compose.propose(ctx, compose, dockerfiles, routed)


def _unsure(ctx: PortContext, path: str, text: str, found: list[Finding]) -> bool:
    """Whether ``path`` is read otherwise by Docker than by the copy's plain grammar (an
    escape directive, a comment line inside a continuation, a quoted ENV word...: 39th
    re-run F3, F4, F15): then no copy, with the reason."""
    why = docker_text.unreadable(path, text)
    if why is not None:
        ctx.decline(found, f"{path} gets no ROCm copy: {why}; left to a person")
    return why is not None


_TOOLS = python_image.Tools(
    instructions=docker_text.instructions,
    cuda_build=_cuda_build,
    decline_cuda=_decline_cuda,
    note_copies=_note_copies,
    project_path=_project_path,
    env=docker_text.env_without_cuda,
    pip=_pip,
    name=dockerfile_name,
)


def _is_dockerfile(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return name.startswith(("dockerfile", "containerfile")) or name.endswith(".dockerfile")


def _container_files(ctx: PortContext) -> list[str]:
    """Dockerfiles and compose files with findings, and Dockerfiles that install a
    requirements file ``port`` gives a ROCm route."""
    out = {
        f.location.path
        for f in ctx.findings
        if f.rule_id.startswith("GP5") or _is_dockerfile(f.location.path)
    }
    if fix_deps.copy_routes(ctx) or fix_deps.preinstall_routes(ctx):
        out.update(_dockerfiles_in(ctx))
    return sorted(out)


def _dockerfiles_in(ctx: PortContext) -> list[str]:
    found: list[str] = []
    for folder in ("", "docker"):
        for name in ctx.listdir(folder):
            rel = f"{folder}/{name}" if folder else name
            if _is_dockerfile(rel) and "rocm" not in name.lower():
                found.append(rel)
    return found
