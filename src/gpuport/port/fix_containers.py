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
* **compose override** (safe: a new file; ``docker compose up`` without it is unchanged):
  ``docker-compose.rocm.yml`` for each service that reserves NVIIDA GPUs or sets the NVIDIA
  runtime: ``/dev/kfd`` and ``/dev/dri``, the video and render groups, the NVIDIA reservation
  and runtime reset (Compose 2.24+ ``!reset``), the ROCm image or Dockerfile.rocm.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import yaml

from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port import fix_deps
from gpuport.port.context import PortContext, Proposal, unique, unrun
from gpuport.scan.finding import Finding

__all__ = ["amd_named", "compose_name", "dockerfile_name", "overlay", "propose"]

_FROM = re.compile(r"^(\s*FROM\s+(?:--platform=\S+\s+)?)(\S+)", re.I)
_ARG = re.compile(r"^(\s*ARG\s+\w+=)(\S+)", re.I)
_ENV_START = re.compile(r"^\s*ENV\s+", re.I)
_RUN = re.compile(r"^\s*RUN\s", re.I)
_COPY = re.compile(r"^(\s*(?:COPY|ADD)\s+(?:--\S+\s+)*)(.+?)(\s+\S+\s*)$", re.I)
_CUDA_APT = re.compile(
    r"(?<![\w.-])(?:cuda(?:-[\w.+-]+)?|libcudnn[\w.+=-]*|libnccl[\w.+=-]*|nvidia-[\w.+=-]+"
    r"|libcublas[\w.+=-]*|libcusparse[\w.+=-]*|libcufft[\w.+=-]*|libcurand[\w.+=-]*"
    r"|libnv[\w.+=-]*|tensorrt[\w.+=-]*)(?![\w.-])"
)
#: a RUN that compiles CUDA code or installs a CUDA-only build: a ROCm image would need the
#: project's HIP build (or another package), which is a person's call
_CUDA_BUILD = re.compile(
    r"(?i)-D\w*(?:CUDA|CUBLAS)\w*=(?:ON|1|TRUE)\b|\b\w*(?:CUDA|CUBLAS)=1\b"
    r"|CMAKE_CUDA_ARCHITECTURES|CUDA_DOCKER_ARCH|\bnvcc\b"
    r"|\[[\w,-]*\b(?:cublas|cuda\d*|cu1\d+x?)\b[\w,-]*\]"
    r"|(?<![\w.-])(?:cupy-cuda\w*|[\w.-]+-cu1\d+x?)(?![\w.-])"
)
_CUDA_INDEX = re.compile(r"https?://download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+/?")
_LOCAL_CU = re.compile(r"\+cu\d+")
_PIP_R = re.compile(r"(?<![\w-])(-r|--requirement)(\s+|=)(\S+)")
_NV_ENV = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA")
_CUDA_ENV = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDACXX")
_TORCH_PKG = re.compile(
    r"(?<![\w./-])(?:torch|torchvision|torchaudio)(?:[=<>~!]=?[^\s\"']*)?(?![\w.-])"
)
_MARK = "# gpuport:"
_RULES = ("GP501", "GP502", "GP503", "GP504", "GP104", "GP105", "GP102", "GP109")


def dockerfile_name(path: str) -> str:
    p = PurePosixPath(path)
    name = p.name
    low = name.lower()
    if low.endswith(".dockerfile"):
        base = name[: -len(".dockerfile")]
        base = re.sub(r"(?i)[-_.](?:cuda\d*|gpu|nvidia|cu\d{2,3})$", "", base)
        return str(p.with_name(f"{base}.rocm.dockerfile"))
    swapped = re.sub(r"(?i)([-_.])(?:cuda\d*|gpu|nvidia|cu\d{2,3})$", r"\1rocm", name)
    return str(p.with_name(swapped if swapped != name else f"{name}.rocm"))


_NV_WORD = re.compile(r"(?i)(?<=[-_.])(?:nvidia|cuda|nv)(?=[-_.])")
_AMD_WORD = re.compile(r"(?i)(?:^|[-_.])(?:amd|rocm|hip)(?:[-_.]|$)")


def compose_name(path: str) -> str:
    """The ROCm file for a compose file: for a vendor overlay (``compose.nvidia.yaml``) its
    AMD sibling (``compose.amd.yaml``), loaded in its place; else an override loaded after it
    (``docker-compose.rocm.yml``)."""
    p = PurePosixPath(path)
    if overlay(path):
        return str(p.with_name(_NV_WORD.sub("amd", p.name, count=1)))
    return str(p.with_name(f"{p.stem}.rocm{p.suffix}"))


def overlay(path: str) -> bool:
    """A compose file named for NVIDIA (``compose.nvidia.yaml``, ``docker-compose-cuda.yml``):
    a vendor overlay the project loads instead of another vendor's."""
    return bool(_NV_WORD.search(PurePosixPath(path).name))


def amd_named(path: str) -> bool:
    return bool(_AMD_WORD.search(PurePosixPath(path).stem))


def _instructions(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 0-based physical lines of each instruction (continuations joined)."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        first = i
        while lines[i].rstrip("\r\n").endswith("\\") and i + 1 < len(lines):
            i += 1
        out.append((first, i))
        i += 1
    return out


def _env(text: str, target: str) -> str | None:
    """An ENV instruction without the NVIDIA/CUDA pairs; None when nothing is left."""
    head = _ENV_START.match(text)
    if head is None:
        return text
    rest = text[head.end() :]
    if "=" not in rest.split()[0]:  # legacy form: ENV KEY value
        key = rest.split()[0]
        if key in _NV_ENV or key in _CUDA_ENV:
            return None
        if key == "TORCH_CUDA_ARCH_LIST":
            return f"{text[: head.end()]}PYTORCH_ROCM_ARCH {target}\n"
        return text
    out = text
    for m in list(re.finditer(r"(\w+)=(\"[^\"]*\"|'[^']*'|\S*)", rest))[::-1]:
        key, value = m.group(1), m.group(2)
        s, e = head.end() + m.start(), head.end() + m.end()
        if key in _NV_ENV or key in _CUDA_ENV:
            out = out[:s] + out[e:]
        elif key == "TORCH_CUDA_ARCH_LIST":
            out = out[:s] + f"PYTORCH_ROCM_ARCH={target}" + out[e:]
        elif (
            key in ("PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH")
            and "/usr/local/cuda" in value
        ):
            parts = [p for p in value.strip("\"'").split(":") if "/usr/local/cuda" not in p]
            if key == "PATH":
                parts.insert(0, "/opt/rocm/bin")
            out = out[:s] + f"{key}={':'.join(parts)}" + out[e:]
    body = out[head.end() :].replace("\\\n", " ").strip()
    if not body or body == "\\":
        return None
    out = out[: head.end()].rstrip() + " " + out[head.end() :].lstrip(" \t")
    return re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", out)


_PIN = re.compile(r"(?<![\w.-])(torch|torchvision|torchaudio)==([0-9][\w.]*)")


def _pip(text: str, index: str, framework: bool, routed: dict[str, str]) -> str | None:
    """The pip command for ROCm, or None when a torch pin names a release whose ROCm index
    gpuport does not know (left to a person)."""
    pins = {m.group(1): m.group(2) for m in _PIN.finditer(text)}
    release = pins.get("torch")
    if release is None and "torchvision" in pins:
        m = re.match(r"0\.(\d+)", pins["torchvision"])
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
        out = re.sub(rf"(?<![\w/.-]){re.escape(src)}(?![\w.-])", dst, out)
    if framework and re.search(r"\bpip3?\s+install\b", out):
        out = _TORCH_PKG.sub("", out)
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
    used: list[Finding] = []
    by_line: dict[int, list[Finding]] = {}
    for f in found:
        by_line.setdefault(f.location.line or 0, []).append(f)
    out = list(lines)
    copied: dict[str, str] = {}  # a file name in the image -> the project file COPY put there
    changed = False
    pre_lines: list[str] = []
    for first, last in _instructions(lines):
        chunk = "".join(lines[first : last + 1])
        hits = [f for ln in range(first + 1, last + 2) for f in by_line.get(ln, [])]
        new = chunk
        m = _FROM.match(chunk) or (
            _ARG.match(chunk) if any(f.rule_id == "GP501" for f in hits) else None
        )
        if m is not None and any(f.rule_id == "GP501" for f in hits):
            hit = routes.image_for(m.group(2))
            if hit is None:
                return None  # a CUDA image with no ROCm counterpart known: left to a person
            route, image = hit
            framework = framework or route.kind == "framework"
            new = chunk[: m.start(2)] + image + chunk[m.end(2) :]
        elif _ENV_START.match(chunk) and any(f.rule_id in ("GP502", "GP504") for f in hits):
            env = _env(chunk, ctx.target.name)
            new = (
                env
                if env is not None
                else "".join(f"# {ln}" for ln in chunk.splitlines(keepends=True))
            )
        elif _RUN.match(chunk):
            new = chunk
            build = _CUDA_BUILD.search(_no_comments(chunk))
            if build is not None:
                built_here = ctx.cache.setdefault("cuda-built", set())
                if isinstance(built_here, set):
                    built_here.add(path)
                ctx.decline(
                    found,
                    f"{path} builds or installs CUDA code ({build.group(0).strip()}): a ROCm "
                    "image needs the project's HIP build there, left to a person",
                )
                return None
            if re.search(
                r"\b(?:apt-get|apt|yum|dnf)\b[^\n]*\binstall\b", chunk
            ) and _CUDA_APT.search(chunk):
                new = _drop_packages(new)
            if re.search(r"\bpip3?\b|python3?\s+-m\s+pip", new):
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
            if pre_lines:
                new = "".join(pre_lines) + new
                pre_lines = []
        elif re.match(r"^\s*(?:COPY|ADD)\s", chunk, re.I):
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
    target = dockerfile_name(path)
    head = [
        f"{_MARK} ROCm variant of {PurePosixPath(path).name}, written by `gpuport port`:",
        f"#   docker build -f {PurePosixPath(target).name} .",
        "#   docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render",
    ]
    body = "".join(out)
    split = 0
    for ln in lines:  # parser directives (# syntax=, # escape=) must stay first
        if re.match(r"^\s*#\s*(?:syntax|escape|check)\s*=", ln, re.I):
            split += len(ln)
        else:
            break
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


def _no_comments(chunk: str) -> str:
    return "".join(ln for ln in chunk.splitlines(keepends=True) if not ln.lstrip().startswith("#"))


def _drop_packages(chunk: str) -> str:
    """A package-manager RUN without its CUDA/NVIDIA packages (a line left with only a
    ``\\`` continuation is dropped)."""
    out: list[str] = []
    for ln in chunk.splitlines(keepends=True):
        new = _CUDA_APT.sub("", ln)
        if new != ln:
            new = re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", new)
            if not new.strip(" \t\\\r\n"):
                continue
        out.append(new)
    return "".join(out)


def _project_path(rel: str) -> str:
    return str(PurePosixPath(rel.lstrip("./") if rel.startswith("./") else rel))


def _swap_name(given: str, routed: str) -> str:
    """``-r backend/requirements.txt`` -> ``-r backend/requirements-rocm.txt``."""
    return str(PurePosixPath(given).with_name(PurePosixPath(routed).name))


def _preinstall_run(chunk: str, given: str, routed: str, eol: str) -> str:
    name = _swap_name(given, routed)
    pip = re.search(
        r"((?:python3?\s+-m\s+)?pip3?\s+install)((?:\s+--?[\w-]+(?:=\S+)?)*?)\s+(?:-r|--requirement)\b",
        chunk,
    )
    cmd = pip.group(1) if pip else "pip install"
    opts = pip.group(2).strip() if pip else ""  # --prefix, --user...: where the rest goes too
    return f"RUN {cmd}{' ' + opts if opts else ''} -r {name}  {_MARK} GP102 ROCm builds first{eol}"


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


def _services(text: str) -> dict[str, tuple[int, int, yaml.MappingNode]]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(root, yaml.MappingNode):
        return {}
    for k, v in root.value:
        if (
            isinstance(k, yaml.ScalarNode)
            and k.value == "services"
            and isinstance(v, yaml.MappingNode)
        ):
            return {
                sk.value: (sv.start_mark.line + 1, sv.end_mark.line + 1, sv)
                for sk, sv in v.value
                if isinstance(sk, yaml.ScalarNode) and isinstance(sv, yaml.MappingNode)
            }
    return {}


def _key(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.Node):
            return v
    return None


def _built_dockerfile(node: yaml.MappingNode, folder: PurePosixPath) -> str | None:
    """The project path of the Dockerfile a service builds, or None."""
    build = _key(node, "build")
    if build is None:
        return None
    context, dockerfile = ".", "Dockerfile"
    if isinstance(build, yaml.ScalarNode):
        context = str(build.value)
    elif isinstance(build, yaml.MappingNode):
        ctx_node, df_node = _key(build, "context"), _key(build, "dockerfile")
        context = str(ctx_node.value) if isinstance(ctx_node, yaml.ScalarNode) else "."
        dockerfile = str(df_node.value) if isinstance(df_node, yaml.ScalarNode) else dockerfile
    import posixpath

    return posixpath.normpath(str(folder / context / dockerfile))


_VENDOR_TAG = re.compile(r"(?i)(?<=[-_:.])(?:nvidia|cuda\d*(?:\.\d+)*|cu\d{3})(?=[-_.]|$)")


def _rocm_image(image: str) -> tuple[str, bool] | None:
    """The ROCm image for a service's image, and whether that is safe: a route from
    knowledge/port_routes.toml (safe), or the tag with its vendor word swapped
    (``default-nvidia-v4.0`` -> ``default-rocm-v4.0``, the digest dropped: unsafe, gpuport
    cannot see that the tag exists)."""
    hit = load_port_routes().image_for(image)
    if hit is not None:
        return hit[1], True
    name, _, tag = image.split("@", 1)[0].rpartition(":")
    if name and "/" not in tag and _VENDOR_TAG.search(":" + tag):
        return f"{name}:{_VENDOR_TAG.sub('rocm', ':' + tag, count=1)[1:]}", False
    return None


def _groups(ctx: PortContext) -> list[str]:
    """group_add entries as the project's own AMD compose files write them (the host's GIDs
    through variables), else the group names."""
    if "amd-groups" not in ctx.cache:
        found: list[str] = []
        for path in _amd_compose_files(ctx):
            for _name, (_lo, _hi, node) in _services(ctx.read(path) or "").items():
                groups = _key(node, "group_add")
                if isinstance(groups, yaml.SequenceNode) and len(groups.value) >= 2:
                    vals = [str(g.value) for g in groups.value if isinstance(g, yaml.ScalarNode)]
                    if len(vals) == len(groups.value) and all(_safe_scalar(v) for v in vals):
                        found = vals
                        break
            if found:
                break
        ctx.cache["amd-groups"] = found
    got = ctx.cache["amd-groups"]
    return list(got) if isinstance(got, list) and got else ["video", "render"]


def _safe_scalar(value: str) -> bool:
    return bool(re.fullmatch(r"[\w${}:\-.]+", value))


def _amd_compose_files(ctx: PortContext) -> list[str]:
    return [p for p in ctx.files_of("compose") if amd_named(p) and not unrun(p)]


def _yaml_item(value: str) -> str:
    return f'"{value}"' if "$" in value or value.isdigit() else value


def _compose(
    ctx: PortContext,
    path: str,
    text: str,
    found: list[Finding],
    dockerfiles: dict[str, str],
    routed: dict[str, list[Finding]],
) -> list[Proposal]:
    """The ROCm compose file for the services that reserve NVIDIA GPUs (``found``) and for
    those that build a Dockerfile given a ROCm variant (``dockerfiles``): a ROCm image needs
    the AMD devices to see a GPU. A vendor overlay gets its AMD sibling (loaded in its place:
    nothing to reset), another file an override (loaded after it: the NVIDIA reservation and
    runtime reset). Two alternatives when an image's ROCm tag is guessed: without it (safe)
    and with it (unsafe)."""
    services = _services(text)
    sibling = overlay(path)
    base = _services(_base_compose(ctx, path) or "") if sibling else {}
    groups = _groups(ctx)
    # (safe lines or None when a safe form would leave a CUDA image, unsafe lines, findings)
    blocks: list[tuple[list[str] | None, list[str], list[Finding]]] = []
    folder = PurePosixPath(path).parent
    for name, (lo, hi, node) in services.items():
        hits = [f for f in found if f.location.line is not None and lo <= f.location.line <= hi]
        built = _built_dockerfile(node, folder)
        if built is None and name in base:  # the overlay completes the base file's service
            built = _built_dockerfile(base[name][2], folder)
        ported = dockerfiles.get(built or "")
        if not hits and ported is None:
            continue
        cuda_built = ctx.cache.get("cuda-built")
        if built is not None and isinstance(cuda_built, set) and built in cuda_built:
            ctx.decline(
                hits,
                f"service {name} builds {built}, which compiles CUDA code: AMD devices give "
                "that image nothing to run on; left to a person",
            )
            continue
        mine = hits or routed.get(built or "", [])
        head = [f"  {name}:"]
        guess: list[str] = []
        image = _key(node, "image")
        if image is None and name in base:
            image = _key(base[name][2], "image")
        cuda_image = False
        if isinstance(image, yaml.ScalarNode) and (hit := _rocm_image(str(image.value))):
            (head if hit[1] else guess).append(f"    image: {hit[0]}")
            cuda_image = not hit[1]  # a vendor-tagged CUDA image with only a guessed twin
        tail: list[str] = []
        if ported is not None:
            tail += ["    build:", f"      dockerfile: {PurePosixPath(ported).name}"]
        tail += ["    devices:", "      - /dev/kfd", "      - /dev/dri", "    group_add:"]
        tail += [f"      - {_yaml_item(g)}" for g in groups]
        if groups == ["video", "render"]:
            tail[-1] += "  # an image without this group: the host's GID, getent group render"
        if not sibling:
            deploy = _key(node, "deploy")
            res = _key(deploy, "resources") if isinstance(deploy, yaml.MappingNode) else None
            resv = _key(res, "reservations") if isinstance(res, yaml.MappingNode) else None
            if isinstance(resv, yaml.MappingNode) and _key(resv, "devices") is not None:
                tail += [
                    "    deploy:",
                    "      resources:",
                    "        reservations:",
                    "          devices: !reset []",
                ]
            runtime = _key(node, "runtime")
            if isinstance(runtime, yaml.ScalarNode) and "nvidia" in str(runtime.value):
                tail.append("    runtime: !reset null")
        blocks.append((None if cuda_image else head + tail, head + guess + tail, mine))
    if not blocks:
        return []
    target = compose_name(path)
    name = PurePosixPath(path).name
    tname = PurePosixPath(target).name
    if sibling:
        intro = (
            f"{_MARK} AMD overlay in place of {name}, written by `gpuport port`: AMD GPUs are\n"
            "# the /dev/kfd and /dev/dri devices (no NVIDIA runtime).\n"
            f"#   load {tname} where the project loads {name}\n"
        )
        why = "a new overlay file beside the NVIDIA one: nothing that loads that one changes"
    else:
        intro = (
            f"{_MARK} ROCm override for {name}, written by `gpuport port`: AMD GPUs are the\n"
            "# /dev/kfd and /dev/dri devices (no NVIDIA runtime); needs Compose 2.24+ (!reset).\n"
            f"#   docker compose -f {name} -f {tname} up\n"
        )
        why = "a new override file: `docker compose up` without it is unchanged"
    out: list[Proposal] = []
    guessed = any(s != u for s, u, _ in blocks)
    for safe in (True, False) if guessed else (True,):
        chosen = [(s if safe else u, f) for s, u, f in blocks]
        if not any(lines for lines, _ in chosen):
            continue  # every service keeps a CUDA image unless its ROCm tag is guessed
        body = "\n".join("\n".join(lines) for lines, _ in chosen if lines)
        both = guessed and any(s is not None for s, _, _ in blocks)  # a safe form exists
        prop = Proposal(
            id=f"compose-rocm:{target}" + ("" if safe else "+image-tag"),
            family="compose",
            title=f"{target}: AMD GPU devices for the services of {path}"
            + ("" if safe else ", and the images' ROCm tags"),
            safe=safe,
            why=why
            if safe
            else "the ROCm image tag is guessed from the CUDA one (the vendor word swapped, "
            "the digest dropped): gpuport cannot see that it exists",
            findings=unique(f for lines, fs in chosen if lines for f in fs),
            group=f"compose:{target}" if both else "",
            note="" if safe or not guessed else "check that the tag exists and pin its digest",
        )
        prop.creates[target] = intro + "services:\n" + body + "\n"
        out.append(prop)
    return out


def _base_compose(ctx: PortContext, path: str) -> str | None:
    """The file a vendor overlay completes (``compose.yaml`` beside ``compose.nvidia.yaml``)."""
    p = PurePosixPath(path)
    stem = re.sub(r"(?i)[-_.](?:nvidia|cuda|nv)(?=[-_.]|$)", "", p.stem)
    for cand in (f"{stem}{p.suffix}", f"{stem}.yaml", f"{stem}.yml"):
        text = ctx.read(str(p.with_name(cand)))
        if text is not None:
            return text
    return None


def _devices_in_place(
    ctx: PortContext, path: str, text: str, found: list[Finding]
) -> Proposal | None:
    """GP505: a service that runs ROCm without the AMD devices or the video and render
    groups gets them in its own file (it is ROCm's already; nothing else reads it)."""
    services = _services(text)
    prop = Proposal(
        id=f"compose-devices:{path}",
        family="compose",
        title=f"{path}: /dev/kfd, /dev/dri and the video and render groups for its ROCm services",
        safe=True,
        why="only services that run ROCm images change",
        findings=[],
    )
    offsets = _line_offsets(text)
    eol = ctx.eol(text)
    groups = _groups(ctx)
    for _name, (lo, hi, node) in services.items():
        hits = [f for f in found if f.location.line is not None and lo <= f.location.line <= hi]
        if not hits or not node.value:
            continue
        devices = _key(node, "devices")
        first_key = node.value[0][0]
        anchor = first_key
        if devices is not None:
            anchor = next(k for k, v in node.value if v is devices)
        if node.flow_style:
            continue  # {image: x, devices: [...]}: left to a person
        col = anchor.start_mark.column
        pad = " " * col
        lines: list[str] = []
        if devices is None:
            lines += [f"{pad}devices:", f"{pad}  - /dev/kfd", f"{pad}  - /dev/dri"]
        if _key(node, "group_add") is None:
            lines += [f"{pad}group_add:"] + [f"{pad}  - {_yaml_item(g)}" for g in groups]
        elif devices is not None:
            continue  # group_add is there, with other groups: a person decides
        if not lines:
            continue
        at = offsets[anchor.start_mark.line]
        prop.edit(path, at, at, eol.join(lines) + eol, hits)
        prop.findings += hits
    return prop if prop.edits else None


def _line_offsets(text: str) -> list[int]:
    out, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        out.append(pos)
    return out


def propose(ctx: PortContext) -> list[Proposal]:
    out: list[Proposal] = []
    dockerfiles: dict[str, str] = {}
    routed: dict[str, list[Finding]] = {}
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
        if text is None or ctx.exists(target):
            continue
        prop = _dockerfile(ctx, path, text, ctx.of(*_RULES, path=path) if path in kinds else [])
        if prop is not None:
            out.append(prop)
            dockerfiles[path] = target
            routed[path] = prop.findings
    for path in sorted(ctx.files_with("GP505")):
        text = ctx.read(path)
        if text is not None and not unrun(path) and not _is_dockerfile(path):
            fixed = _devices_in_place(ctx, path, text, ctx.of("GP505", path=path))
            if fixed is not None:
                out.append(fixed)
    for path in sorted({*candidates, *(_compose_files(ctx) if dockerfiles else [])}):
        if _is_dockerfile(path) or amd_named(path) or unrun(path):
            continue
        if not ctx.of("GP502", path=path) and not dockerfiles:
            continue
        text = ctx.read(path)
        target = compose_name(path)
        if text is None or ctx.exists(target) or _has_amd_sibling(ctx, path):
            continue
        out += _compose(ctx, path, text, ctx.of("GP502", path=path), dockerfiles, routed)
    return out


def _has_amd_sibling(ctx: PortContext, path: str) -> bool:
    """A vendor overlay whose AMD counterpart exists under another AMD word
    (``compose.rocm.yaml`` beside ``compose.nvidia.yaml``)."""
    if not overlay(path):
        return False
    p = PurePosixPath(path)
    return any(
        ctx.exists(str(p.with_name(_NV_WORD.sub(word, p.name, count=1))))
        for word in ("amd", "rocm", "hip", "AMD", "ROCm")
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


def _compose_files(ctx: PortContext) -> list[str]:
    return [
        n
        for n in ctx.listdir("")
        if re.match(r"(?:docker-)?compose[\w.-]*\.ya?ml$", n) and not amd_named(n)
    ]


def _dockerfiles_in(ctx: PortContext) -> list[str]:
    found: list[str] = []
    for folder in ("", "docker"):
        for name in ctx.listdir(folder):
            rel = f"{folder}/{name}" if folder else name
            if _is_dockerfile(rel) and "rocm" not in name.lower():
                found.append(rel)
    return found
