"""Containers: a ROCm copy of a Dockerfile built on a plain Python image (session 13).

A Dockerfile ``FROM python:3.X(-slim)`` that installs PyPI's torch (a CUDA build on Linux
x86_64), directly or through a requirements file or manifest ``port`` gives a ROCm route, for
a project whose Python puts torch on a GPU, gets ``Dockerfile.rocm`` beside it: each Python
stage starts from AMD's ROCm PyTorch image (``knowledge/port_routes.toml``: the image whose
Python is the base's or the nearest newer one), pip is constrained to the torch packages the
image ships (``PIP_CONSTRAINT``: a requirement that would replace them stops the build instead
of installing a CUDA build), torch and torchvision leave the pip commands that name them, and
every other step is kept. Safe: a new file; building the Dockerfile is unchanged.

Left to a person, with the reason: a stage that compiles CUDA code or installs a CUDA-only
package (the CUDA image's refusals, read on the branches a build takes); an Alpine base or
``apk``/``yum``/``dnf``/``zypper`` steps; a base image from a build argument the project
passes; a plain Debian/Ubuntu base (its steps install the distribution's Python); a Python
environment of the Dockerfile's own (``venv``, ``virtualenv``, conda, ``uv``, Pipenv, Poetry)
or copied between stages, which would not see the image's torch; an ``apt-get install`` of a
package not known to be named the same on Ubuntu; a user or group with ID 1000 on an Ubuntu
24.04 image (its ``ubuntu`` user has it); torch or torchvision pinned to another release than
the image's; torchaudio or NVIDIA's CUDA runtime wheels, which the image does not ship.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from gpuport import textre
from gpuport.knowledge.port_routes import PytorchImage, load_port_routes
from gpuport.port import docker_args, docker_text, fix_deps
from gpuport.port.context import PortContext, Proposal, unique
from gpuport.port.docker_pip import no_comments, pypi_torch, unrouted_package
from gpuport.scan.finding import Finding

__all__ = [
    "Tools",
    "copy",
    "fell_back",
    "python_based",
    "refusal",
    "rocm_final_stage",
    "wheels_instead",
]

_MARK = "# gpuport:"
_FROM = textre.compile(r"(?i)^(\s*FROM\s+)((?:--platform=\S+\s+)?)(\S+)(.*)$")
_PYTHON = textre.compile(
    r"(?i)^(?:docker\.io/(?:library/)?)?python:3\.(\d+)(?:\.\d+)?(?P<variant>-[\w.-]+)?"
    r"(?:@sha256:[0-9a-f]{64})?$"
)
_DISTRO = textre.compile(r"(?i)^(?:docker\.io/(?:library/)?)?(?:debian|ubuntu):")
_OTHER_PM = textre.compile(r"\b(apk|yum|dnf|microdnf|zypper)\b")
_OWN_ENV = textre.compile(
    r"\bpython3?(?:\.\d+)?[ \t]+-m[ \t]+venv\b|\bvirtualenv\b|\buv[ \t]+(?:venv|sync|pip)\b"
    r"|\b(?:conda|mamba|micromamba)\b|\bpoetry[ \t]+install\b"
)
_PIPENV = textre.compile(r"\bpipenv[ \t]+(?:install|sync)\b([^\n;&|]*)")
_UID_1000 = textre.compile(
    r"\b(?:useradd|adduser|groupadd|addgroup)\b[^\n;&|]*?(?:-u|--uid|-g|--gid)[ \t=]+1000\b"
)
_APT = textre.compile(r"\bapt(?:-get)?[ \t]+(?:-\S+[ \t]+)*install\b((?:[^\n&;|]|\\\n)*)")
_PIP_R = textre.compile(r"(?<![\w-])(?:-r|--requirement)(?:\s+|=)(\S+)")
_PIP_HERE = textre.compile(
    r"\bpip3?[ \t]+install\b[^\n&;|]*?[ \t](?:-e[ \t]+)?\.(?:\[[\w,-]+\])?(?!\S)"
)
_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_NV_WHEEL = textre.compile(r"(?im)^\s*(nvidia-[\w-]+-cu1\d+)\b")


@dataclass(frozen=True)
class Tools:
    """What the CUDA image's copy (``fix_containers``) reads a Dockerfile with, handed in
    (``fix_containers`` calls this module: an import back would be a cycle)."""

    instructions: Callable[[list[str]], list[tuple[int, int]]]
    cuda_build: Callable[[PortContext, str, str, dict[str, str]], str | None]
    decline_cuda: Callable[[PortContext, str, list[Finding], str], None]
    note_copies: Callable[[str, dict[str, str]], None]
    project_path: Callable[[str], str]
    env: Callable[[str, str], str | None]
    pip: Callable[[str, str, bool, dict[str, str]], str | None]
    name: Callable[[str], str]


#: refusals the ROCm torch wheels on the Dockerfile's own image share (a CUDA-only package,
#: an Alpine base, a base image the project passes): no wheel route is tried after them
_SHARED = ("it installs ", "is an Alpine image", "its base image comes from")


def refusal(ctx: PortContext, path: str) -> str | None:
    """Why ``path`` got no ROCm copy on a Python image (for the compose services that build
    it), or None."""
    got = ctx.cache.get("python-image-refused")
    return got.get(path) if isinstance(got, dict) else None


def wheels_instead(ctx: PortContext, path: str) -> bool:
    """Whether ``path`` was refused AMD's image for a reason of that image only (its own
    Python environment, an apt package, a user ID, a torch release...), so that ROCm torch
    wheels on the Dockerfile's own image may still serve."""
    why = refusal(ctx, path)
    return why is not None and not any(w in why for w in _SHARED)


def fell_back(ctx: PortContext, path: str, prop: Proposal) -> None:
    """``path`` got the ROCm torch wheels on its own image instead: say why in the fix."""
    why = refusal(ctx, path)
    got = ctx.cache.get("python-image-refused")
    if isinstance(got, dict):
        got.pop(path, None)
    if why is not None:
        prop.note += f"; not on AMD's PyTorch image, since {why}"


def _refuse(ctx: PortContext, path: str, found: list[Finding], why: str) -> None:
    table = ctx.cache.setdefault("python-image-refused", {})
    if isinstance(table, dict):
        table[path] = why
    ctx.decline(found, f"{path} gets no ROCm copy on AMD's PyTorch image: {why}; left to a person")


def _from(line: str) -> re.Match[str] | None:
    """``_FROM`` on a line that names FROM (a line that does not costs no match: 40th F10)."""
    return _FROM.match(line) if "from" in line.lower() else None


def python_based(text: str) -> bool:
    """Whether a Dockerfile starts a stage from a plain Python image (``python:3.X``, or an
    argument whose default is one) and from no image a CUDA route knows."""
    routes = load_port_routes()
    refs = [m.group(3) for ln in no_comments(text).splitlines() if (m := _from(ln))]
    if any(routes.image_for(r) is not None for r in refs):
        return False
    args = textre.findall(r"(?im)^\s*ARG\s+\w+=(\S+)", text)
    return any(_PYTHON.match(r) for r in refs) or (
        any("$" in r for r in refs) and any(_PYTHON.match(a.strip("\"'")) for a in args)
    )


def rocm_final_stage(text: str) -> bool:
    """Whether a Dockerfile's last stage starts from a ROCm image (its ``render`` group)."""
    refs = [m.group(3) for ln in text.splitlines() if (m := _from(ln))]
    return bool(refs) and "rocm" in refs[-1].lower()


def _torch_version(image: PytorchImage, name: str) -> Version | None:
    """The release of ``name`` the image ships (torchvision 0.(minor+15) beside torch 2.x)."""
    try:
        torch = Version(image.torch)
    except InvalidVersion:
        return None
    if name == "torch":
        return torch
    if name == "torchvision" and torch.major == 2:
        return Version(f"0.{torch.minor + 15}.0")
    return None


def _pin_clash(text: str, image: PytorchImage) -> str | None:
    """A torch-family requirement in ``text`` (requirement lines or pip words) the image
    cannot satisfy: one it does not ship, or a release other than its own."""
    if (nv := _NV_WHEEL.search(text)) is not None:
        return (
            f"installs NVIDIA's CUDA runtime wheel {nv.group(1)}, which a ROCm image has no use for"
        )
    for word in text.replace("\\\n", " ").split():
        word = word.strip("\"'")
        try:
            req = Requirement(word)
        except InvalidRequirement:
            continue
        name = req.name.lower()
        if name not in ("torch", "torchvision", "torchaudio"):
            continue
        if name not in image.ships:
            return f"installs {name}, which {image.tag} is not known to ship"
        have = _torch_version(image, name)
        if req.specifier and (have is None or not req.specifier.contains(have, prereleases=True)):
            return f"asks for {word}; {image.tag} ships {name} {have or 'of its own release'}"
    return None


def _apt_unknown(chunk: str, known: frozenset[str]) -> str | None:
    for m in _APT.finditer(chunk):
        for word in m.group(1).replace("\\\n", " ").split():
            if word.startswith("-") or word == "\\":
                continue
            name = word.split("=", 1)[0]
            if name not in known:
                return name
    return None


def _stage_refusal(chunk: str, live: str, image: PytorchImage, known: frozenset[str]) -> str | None:
    code = no_comments(live)
    if (pm := _OTHER_PM.search(code)) is not None:
        return f"a step runs {pm.group(1)}, which the Ubuntu-based image does not have"
    env = _OWN_ENV.search(code) or next(
        (p for p in _PIPENV.finditer(code) if "--system" not in p.group(1)), None
    )
    if env is not None:
        return (
            f"a step makes a Python environment of its own ({env.group(0).strip()}), which "
            "does not see the ROCm torch of the image's Python"
        )
    if image.ubuntu == "24.04" and (uid := _UID_1000.search(code)) is not None:
        return (
            f"a step gives ID 1000 to a new user or group ({uid.group(0).strip()}); the "
            "Ubuntu 24.04 image's own user ubuntu has it"
        )
    if (pkg := _apt_unknown(code, known)) is not None:
        return (
            f"a step installs the Debian package {pkg}, not known to be named the same on "
            f"Ubuntu {image.ubuntu}"
        )
    return None


def _keep(image: PytorchImage, eol: str) -> str:
    """The lines after a rewritten FROM: pip constrained to the image's torch packages."""
    names = "|".join(image.ships)
    return (
        f"{_MARK} pip keeps the image's ROCm {', '.join(image.ships)}: what would replace "
        f"them stops the build{eol}"
        f"RUN pip list --format=freeze | grep -iE '^({names})==' > /etc/gpuport-rocm-torch.txt{eol}"
        f"ENV PIP_CONSTRAINT=/etc/gpuport-rocm-torch.txt{eol}"
    )


def _from_argument(
    ref: str, scope: docker_args.ArgScope, args: docker_args.BuildArgs
) -> tuple[str | None, str]:
    """A FROM's image from a build argument: (why it gets no copy, or None; the image a
    build that passes nothing starts from). A Python image the project passes its own
    value for is left: the copy's image would not reach those builds."""
    name = textre.search(r"\$\{?(\w+)", ref)
    if name is None:
        return None, ref
    default = textre.search(r":-([^}]+)\}", ref)
    value = scope.globals_.get(name.group(1)) or (default.group(1) if default else None)
    if value is None or not _PYTHON.match(value):
        return None, ref
    given = args.over().get(name.group(1), []) + args.over().get(docker_args.ANY, [])
    if given:
        return (
            f"its base image comes from the build argument {name.group(1)}, which "
            f"{given[0].where} passes",
            ref,
        )
    return None, value


def _installs_python(lines: list[str], instructions: list[tuple[int, int]], after: int) -> bool:
    return any(
        textre.search(r"\bpip3?\b|\btorch\b", "".join(lines[a : b + 1]))
        for a, b in instructions
        if a > after
    )


def _ours(ctx: PortContext, text: str, dep_copy: dict[str, str], pre: dict[str, str]) -> bool:
    """Whether a Dockerfile is one this route is for: built on a plain Python image (or from
    an argument that names one) and installing PyPI's torch, directly or through a routed
    requirements file or manifest, for a project whose Python puts torch on a GPU."""
    code = no_comments(text)
    if not textre.search(r"(?im)^\s*(?:FROM|ARG)\b[^\n]*\b(?:python:3|debian:|ubuntu:)", code):
        return False
    names = {PurePosixPath(p).name for p in (*dep_copy, *pre)}
    routed = any(PurePosixPath(m.group(1)).name in names for m in _PIP_R.finditer(code))
    here = bool(_PIP_HERE.search(code)) and any(m in dep_copy or m in pre for m in _MANIFESTS)
    if not (routed or here or pypi_torch(code, "\n") is not None):
        return False
    return fix_deps.python_uses_gpu(ctx)


def copy(
    ctx: PortContext, path: str, text: str, found: list[Finding], fc: Tools
) -> Proposal | None:
    """The ROCm copy of Dockerfile ``path`` (text ``text``, its findings ``found``) when it
    is built on a plain Python image and installs PyPI's torch; None otherwise (with the
    reason where it was such a Dockerfile)."""
    routes = load_port_routes()
    lines = text.splitlines(keepends=True)
    eol = ctx.eol(text)
    instructions = fc.instructions(lines)
    dep_copy, pre = fix_deps.copy_routes(ctx), fix_deps.preinstall_routes(ctx)
    scope = docker_args.ArgScope()
    args = docker_args.BuildArgs(ctx, path, scope)
    copied: dict[str, str] = {}
    image: PytorchImage | None = None  # the current stage's ROCm image, None: not Python
    out = list(lines)
    used: list[Finding] = []
    torch_here = False
    newer: list[str] = []
    why: str | None = None
    by_line: dict[int, list[Finding]] = {}
    for f in found:
        by_line.setdefault(f.location.line or 0, []).append(f)
    index = 0
    images: dict[str, PytorchImage] = {}  # Python stage (name or index) -> its ROCm image
    for first, last in instructions:
        chunk = "".join(lines[first : last + 1])
        scope.feed(chunk)
        hits = [f for ln in range(first + 1, last + 2) for f in by_line.get(ln, [])]
        m = _FROM.match(chunk.rstrip("\r\n"))
        if m is not None:
            ref, rest = m.group(3), m.group(4)
            alias = textre.search(r"(?i)\bAS\s+(\S+)", rest)
            names = [str(index), *([alias.group(1)] if alias else [])]
            index += 1
            image = images.get(ref)  # a stage built on an earlier Python stage
            if "$" in ref:
                why, ref = _from_argument(ref, scope, args)
                if why is not None:
                    break
            py = _PYTHON.match(ref)
            if py is not None and "alpine" in (py.group("variant") or "").lower():
                why = (
                    f"{ref} is an Alpine image, whose apk steps the Ubuntu-based image would break"
                )
                break
            elif py is not None and len(py.group(1)) > 6:  # past int()'s limit (40th F19)
                why = f"{ref[:40]}... names a Python release no ROCm PyTorch image has"
                break
            elif py is not None:
                minor = int(py.group(1))
                image = routes.pytorch_image((3, minor))
                if image is None:
                    why = (
                        "no ROCm PyTorch image in knowledge/port_routes.toml has Python "
                        f"3.{minor} or newer"
                    )
                    break
                if image.python != (3, minor):
                    newer.append(f"Python 3.{image.python[1]} where {ref} has 3.{minor}")
                out[first] = f"{m.group(1)}{m.group(2)}{image.tag}{rest}{eol}" + _keep(image, eol)
                for i in range(first + 1, last + 1):
                    out[i] = ""
                used += hits
            elif _DISTRO.match(ref) and _installs_python(lines, instructions, first):
                why = f"a stage starts from {ref}, whose steps install the distribution's Python"
                break
            if image is not None:
                for name in names:
                    images[name] = image
            continue
        if image is None:
            if textre.match(r"(?i)^\s*(?:COPY|ADD)\s", chunk):
                fc.note_copies(chunk, copied)
            continue
        if textre.match(r"(?i)^\s*(?:COPY|ADD)\s", chunk):
            src = textre.search(r"(?i)--from=(\S+)", chunk)
            if src is not None and src.group(1) in images:
                why = (
                    f"it copies a stage's files into another ({src.group(0)}): a Python "
                    "environment built there would not move with the image's Python"
                )
                break
            fc.note_copies(chunk, copied)
            continue
        if textre.match(r"(?i)^\s*ENV\s", chunk):
            env = fc.env(chunk, ctx.target.name)
            if env != chunk:
                out[first] = (
                    env if env is not None else "".join(f"# {ln}" for ln in chunk.splitlines(True))
                )
                for i in range(first + 1, last + 1):
                    out[i] = ""
                used += hits
            continue
        if not textre.match(r"(?i)^\s*RUN\s", chunk):
            continue
        branches = args.branches(chunk)
        live = branches.live(chunk)
        build = fc.cuda_build(ctx, path, live, copied)
        if build is not None:
            fc.decline_cuda(ctx, path, found, f"builds or installs CUDA code ({build})")
            return None
        deps = [f for f in hits if f.rule_id.startswith("GP1")]
        live_deps = [f for f in deps if args.live_finding(branches, chunk, first, f)]
        blocked = unrouted_package(live_deps, live, True)
        if blocked is not None:
            why = (
                f"it installs {blocked} the default way, a CUDA build (or a version ROCm "
                "cannot use)"
            )
            break
        why = _stage_refusal(chunk, live, image, routes.apt_same) or _pin_clash(
            " ".join(w for w in no_comments(live).split() if "torch" in w or "nvidia" in w), image
        )
        if why is not None:
            break
        if pypi_torch(live, eol) is not None:
            torch_here = True
            used += hits
        for m2 in _PIP_R.finditer(no_comments(live)):
            given = m2.group(1)
            full = copied.get(PurePosixPath(given).name, fc.project_path(given))
            if full in dep_copy or full in pre:
                torch_here = True
                used += fix_deps.routed_findings(ctx, full)
                why = _pin_clash(ctx.read(full) or "", image)
                if why is not None:
                    why = f"{full} {why}"
                    break
        if why is not None:
            break
        if _PIP_HERE.search(no_comments(live)) and any(
            m_ in dep_copy or m_ in pre for m_ in _MANIFESTS
        ):
            torch_here = True
            used += [f for m_ in _MANIFESTS for f in fix_deps.routed_findings(ctx, m_)]
        if textre.search(r"\bpip3?\b", chunk):
            piped = fc.pip(chunk, routes.torch[-1].index, True, {})
            if piped is not None and piped != chunk:
                before = set(chunk.splitlines(True))
                out[first] = "".join(
                    ln if ln in before else textre.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", ln)
                    for ln in piped.splitlines(True)
                )
                for i in range(first + 1, last + 1):
                    out[i] = ""
                used += hits
    ours = _ours(ctx, text, dep_copy, pre)
    if why is not None and ours:
        _refuse(ctx, path, found, why)
    if why is not None or not images or not torch_here or not ours or not used:
        return None
    target = fc.name(path)
    head = [
        f"{_MARK} ROCm variant of {PurePosixPath(path).name}, written by `gpuport port`: the",
        "#   Python stages start from AMD's ROCm PyTorch image, whose torch pip keeps:",
        f"#   docker build -f {PurePosixPath(target).name} .",
        "#   docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render",
    ]
    body = "".join(out)
    # parser directives (# syntax=, # escape=) stay first, as Docker finds them (40th F15)
    split = len("".join(out[: docker_text.directive_lines(lines)]))
    prop = Proposal(
        id=f"dockerfile-rocm:{target}",
        family="containers",
        title=f"{target}: {path}'s steps on AMD's ROCm PyTorch image",
        safe=True,
        why="a new file: building the Dockerfile is unchanged",
        findings=unique(used),
        note="the image's tag follows knowledge/port_routes.toml; pin one that matches your ROCm"
        + (
            f"; it has {'; '.join(dict.fromkeys(newer))}: pinned packages need its wheels"
            if newer
            else ""
        ),
    )
    prop.creates[target] = body[:split] + eol.join(head) + eol + body[split:]
    return prop
