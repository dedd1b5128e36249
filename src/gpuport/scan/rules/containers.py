"""GP5xx: containers (Dockerfiles, docker-compose files, ``docker run`` in Makefiles).

Dockerfiles are split into instructions the way Docker does it (``\\``
continuations, comment lines inside them, ``# escape=``, heredocs), keeping a
map back to physical lines so that every finding points at the line its token
is on. ``pip install`` requirements and index URLs in RUN lines are handed to
the dependency rules (GP1xx). Compose files are parsed with the safe YAML
loader; positions come from the node tree of the same safe loader.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import yaml

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, FileContext, FileKind, Rule, checker, register
from gpuport.scan.rules.build import make_guards, strip_make_comments

_VLLM_DOC = "https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/vllm.html"
_MATRIX = "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html"
_KFD_ISSUE = "https://github.com/ROCm/ROCm/issues/1798"
_DOCKER_116 = "https://github.com/ROCm/ROCm-docker/issues/116"
_DOCKER_93 = "https://github.com/ROCm/ROCm-docker/pull/93"
_VLLM_IMAGE = "rocm/vllm:rocm7.14.0_cdna_ubuntu24.04_py3.14_pytorch_2.11.0_vllm_0.23.0"
_RUN_FLAGS = (
    "--device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
    "--security-opt seccomp=unconfined"
)
_KINDS = "Dockerfiles, compose files"


def _rule(
    rid: str, name: str, title: str, severity: Severity, effort: float, note: str,
    rationale: str, fix: str, *refs: str,
) -> Rule:
    return Rule(
        id=rid, name=name, title=title, severity=severity, family=Family.CONTAINERS,
        rationale=rationale, fix=fix, references=refs, effort_hours=effort, applies_note=note,
    )


register(
    _rule(
        "GP501", "nvidia-base-image", "Container image built on NVIDIA CUDA",
        Severity.BLOCKER, 2.0, f"all targets; {_KINDS}",
        "nvidia/cuda, nvcr.io/nvidia/* and *-cuda tagged images ship the CUDA user-space "
        "stack and CUDA builds of PyTorch and friends. Nothing in them can drive an AMD GPU, "
        "so the image has to change, not just the run flags.",
        "Start from a ROCm image: rocm/pytorch (PyTorch), "
        f"{_VLLM_IMAGE} (vLLM serving on CDNA) or rocm/dev-ubuntu-24.04 (ROCm base); pin a tag "
        "that supports the target GPU.",
        _VLLM_DOC, _MATRIX,
    ),
    _rule(
        "GP502", "nvidia-container-runtime", "NVIDIA container runtime or GPU request",
        Severity.MAJOR, 0.5, f"all targets; {_KINDS}, docker run lines in Makefiles",
        "--gpus, runtime: nvidia, NVIDIA_VISIBLE_DEVICES, compose device reservations with "
        "driver: nvidia / capabilities: [gpu] and nvidia.com/gpu resources all go through "
        "the NVIDIA container toolkit. On an AMD host they fail ('could not select device "
        "driver') or give a container without /dev/kfd, where ROCm finds no GPU.",
        f"Pass the AMD devices instead: {_RUN_FLAGS}; in compose `devices: [/dev/kfd, "
        "/dev/dri]`, `group_add: [video, render]`; in Kubernetes request amd.com/gpu; "
        "select GPUs with HIP_VISIBLE_DEVICES.",
        _KFD_ISSUE, _DOCKER_116, _DOCKER_93,
        _VLLM_DOC,
    ),
    _rule(
        "GP503", "cuda-packages-in-image", "Image installs CUDA toolkit packages",
        Severity.MAJOR, 1.0, "all targets; Dockerfiles",
        "apt/yum/conda packages such as cuda-toolkit-*, libcudnn*, libnccl*, tensorrt or "
        "cudatoolkit are NVIDIA's user-space libraries. On ROCm they are dead weight at best; "
        "at worst builds in the image find them and compile for CUDA.",
        "Install the ROCm counterparts (rocm-dev/rocm-libs, miopen-hip, rccl, migraphx) or "
        "start from a rocm/* image that has them.",
        _MATRIX, "https://github.com/pytorch/pytorch/issues/118457",
    ),
    _rule(
        "GP504", "cuda-env-paths", "CUDA paths or variables in the image environment",
        Severity.MINOR, 0.25, f"all targets; {_KINDS}",
        "CUDA_HOME, /usr/local/cuda in PATH or LD_LIBRARY_PATH and TORCH_CUDA_ARCH_LIST "
        "point builds and loaders at a CUDA install that is not there on ROCm. Extension "
        "builds then look for nvcc or miss the AMD architecture.",
        "Use ROCM_PATH=/opt/rocm and /opt/rocm/bin in PATH, PYTORCH_ROCM_ARCH for extension "
        "builds; do not prepend /opt/rocm/lib when the torch wheel brings its own ROCm libs.",
        "https://github.com/ROCm/pytorch/issues/1340",
        "https://github.com/pytorch/pytorch/issues/118457",
    ),
    _rule(
        "GP505", "rocm-container-without-devices",
        "ROCm container started without /dev/kfd and /dev/dri",
        Severity.MAJOR, 0.25, "all targets; compose files",
        "A ROCm container sees the GPU only through /dev/kfd and /dev/dri, and a non-root "
        "user needs the video/render groups. Without them rocminfo says 'Unable to open "
        "/dev/kfd read-write' and PyTorch reports no GPU.",
        "Add `devices: [/dev/kfd, /dev/dri]` and `group_add: [video, render]` (docker run: "
        f"{_RUN_FLAGS}).",
        _KFD_ISSUE, _DOCKER_116, _DOCKER_93,
        "https://github.com/ROCm/ROCm/issues/4208",
    ),
)

_NV_REGISTRY = re.compile(
    r"^(?:(?:docker\.io|index\.docker\.io|registry\.hub\.docker\.com)/)?(?:nvidia/|nvcr\.io/)"
)
_NV_ENV = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA"}
_CUDA_ENV = {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDACXX"}
_PATH_ENV = {"PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CPLUS_INCLUDE_PATH"}
_ROCM_ENV = {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION"}
_CUDA_PKG = re.compile(
    r"(?i)^(?:cuda|cuda-[\w.+-]*|nvidia-cuda-[\w.+-]*|libcudnn[\w.+-]*|cudnn[\w.+-]*"
    r"|libnccl[\w.+-]*|nccl|tensorrt[\w.+-]*|libnvinfer[\w.+-]*"
    r"|libcu(?:blas|fft|rand|sparse|solver)[\w.+-]*|cudatoolkit[\w.+-]*|pytorch-cuda)$"
)
_PKG_MANAGERS = {
    "apt-get", "apt", "aptitude", "yum", "dnf", "microdnf", "zypper", "apk",
    "conda", "mamba", "micromamba",
}
_PKG_VALUE_OPTS = {
    "-o", "-t", "-c", "-n", "-p", "--option", "--target-release", "--channel", "--name",
    "--prefix", "--repo", "--enablerepo", "--disablerepo", "--setopt",
}
_PIP = re.compile(r"pip(?:\d+(?:\.\d+)?)?")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?|py")
_PIP_INDEX = {"-i", "--index-url", "--extra-index-url", "--index", "--default-index",
              "-f", "--find-links"}
_PIP_VALUE_OPTS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target",
    "--prefix", "--root", "--src", "--upgrade-strategy", "--platform", "--python-version",
    "--implementation", "--abi", "--only-binary", "--no-binary", "--progress-bar", "--cache-dir",
    "--log", "--proxy", "--retries", "--timeout", "--trusted-host", "--exists-action", "--cert",
    "--client-cert", "--global-option", "--config-settings", "-C", "--report", "--python", "-p",
    "--index-strategy", "--torch-backend", "--extra", "--group", "--override",
    "--build-constraint", "--keyring-provider", "--resolution", "--prerelease",
    "--exclude-newer", "--link-mode", "--hash", "--install-option",
}
_SHELL_PREFIX = {"sudo", "env", "time", "nice", "exec", "command", "then", "do", "else", "elif",
                 "if", "!", "{", "xargs"}
_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_REDIRECT = re.compile(r"^\d*[<>]")
_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*([\"']?)([A-Za-z_][\w.-]*)\2")
_ENV_PAIR = re.compile(r"([A-Za-z_]\w*)=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S*)")
_ENV_LEGACY = re.compile(r"\s*(\w+)\s+(.*)")
_RUN_FLAG = re.compile(r"(?:\s*--[\w-]+(?:=\S*)?)+\s*")
_ARG_REF = re.compile(r"\$\{?(\w+)(?::?-([^}]*))?\}?")


def _nvidia_image(image: str) -> bool:
    low = image.lower()
    if "rocm" in low or not low:
        return False
    if _NV_REGISTRY.match(low):
        return True
    tag = low.rsplit("/", 1)[-1].partition(":")[2].split("@")[0]
    return "cuda" in tag or "cudnn" in tag


def _image_fix(image: str, ctx: FileContext) -> str:
    low = image.lower()
    if any(w in low for w in ("vllm", "tensorrt-llm", "tritonserver", "/nim/")):
        if ctx.target.family == "CDNA":
            return f"Use AMD's vLLM image, e.g. {_VLLM_IMAGE}."
        return (
            f"Use a rocm/vllm image built for {ctx.target.name} (the *_cdna_* tags are for "
            "Instinct GPUs)."
        )
    if "tensorflow" in low:
        return "Use a rocm/tensorflow image."
    if "jax" in low:
        return "Use a rocm/jax-community image."
    if "pytorch" in low or "torch" in low:
        return "Use rocm/pytorch (pin a rocm/pytorch tag that matches your ROCm and torch)."
    return (
        "Use rocm/dev-ubuntu-24.04 (ROCm base, pin a tag) or rocm/pytorch if the image runs "
        "PyTorch."
    )


# --- Dockerfile structure ------------------------------------------------------------------


@dataclass
class _Logical:
    """One instruction after joining continuation lines, with a map back to physical lines."""

    text: str
    segs: list[tuple[int, int, int]]  # (offset in text, physical line, 0-based column)

    def pos(self, offset: int) -> tuple[int, int]:
        idx = max(bisect.bisect_right(self.segs, offset, key=lambda s: s[0]) - 1, 0)
        start, line, col = self.segs[idx]
        return line, col + offset - start + 1


def _escape_char(lines: list[str]) -> str:
    for raw in lines:
        m = re.match(r"^\s*#\s*(\w+)\s*=\s*(\S+)\s*$", raw)
        if m is None:
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("`", "\\"):
            return m.group(2)
    return "\\"


def _instructions(text: str) -> Iterator[tuple[str, _Logical, int]]:
    """(KEYWORD, logical line, offset of the arguments) for every instruction."""
    lines = text.splitlines()
    escape = _escape_char(lines)
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip() or lines[i].lstrip().startswith("#"):
            i += 1
            continue
        parts: list[str] = []
        segs: list[tuple[int, int, int]] = []
        offset = 0
        while i < n:
            body = lines[i].rstrip()
            cont = body.endswith(escape)
            body = body[:-1] if cont else body
            segs.append((offset, i + 1, 0))
            parts.append(body)
            offset += len(body)
            i += 1
            if not cont:
                break
            while i < n and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
                i += 1
        logical = _Logical("".join(parts), segs)
        m = re.match(r"\s*([A-Za-z]+)\s*", logical.text)
        keyword = m.group(1).upper() if m else ""
        args = m.end() if m else 0
        if keyword == "ONBUILD" and (m2 := re.match(r"([A-Za-z]+)\s*", logical.text[args:])):
            keyword, args = m2.group(1).upper(), args + m2.end()
        if keyword in ("RUN", "COPY", "ADD"):
            script = [logical.text]
            for doc in list(_HEREDOC.finditer(logical.text)):
                while i < n:
                    raw = lines[i]
                    i += 1
                    if raw.strip() == doc.group(3):
                        break
                    if keyword == "RUN":  # the body is shell script; COPY/ADD bodies are files
                        offset += 1
                        logical.segs.append((offset, i, 0))
                        script.append(raw)
                        offset += len(raw)
            logical.text = "\n".join(script)
        yield keyword, logical, args


Token = tuple[str, int]  # (unquoted text, offset of its first character in the logical text)


def _shell_commands(text: str, start: int) -> list[list[Token]]:
    """Split shell text into simple commands (at && || ; | & newlines) of unquoted words."""
    cmds: list[list[Token]] = [[]]
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c in "\n;|&()":
            if cmds[-1]:
                cmds.append([])
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            word: list[str] = []
            first: int | None = None
            j = i
            while j < n and text[j] not in " \t\r\n;|&()":
                ch = text[j]
                if ch == "\\":
                    if j + 1 < n and text[j + 1] != "\n":
                        first = j + 1 if first is None else first
                        word.append(text[j + 1])
                    j += 2
                elif ch in "'\"":
                    k = j + 1
                    while k < n and text[k] != ch:
                        k += 2 if ch == '"' and text[k] == "\\" else 1
                    first = j + 1 if first is None else first
                    word.append(text[j + 1 : k])
                    j = k + 1
                else:
                    first = j if first is None else first
                    word.append(ch)
                    j += 1
            cmds[-1].append(("".join(word), i if first is None else first))
            i = j
    return [c for c in cmds if c]


def _program(cmd: list[Token]) -> list[Token]:
    """Drop leading VAR=value assignments, sudo/env and shell keywords."""
    k = 0
    while k < len(cmd):
        word = cmd[k][0]
        prev = cmd[k - 1][0] if k else ""
        if _ASSIGN.match(word) or word in _SHELL_PREFIX or (
            word.startswith("-") and prev in ("sudo", "env")
        ):
            k += 1
            continue
        break
    return cmd[k:]


def _pip_args(cmd: list[Token]) -> list[Token] | None:
    """The arguments after ``install`` if the command is a pip install, else None."""
    prog = cmd[0][0].rsplit("/", 1)[-1]
    rest: list[Token] | None = None
    if _PIP.fullmatch(prog):
        rest = cmd[1:]
    elif _PYTHON.fullmatch(prog):
        for idx in range(1, len(cmd)):
            word = cmd[idx][0]
            if word == "-m" and idx + 1 < len(cmd) and _PIP.fullmatch(cmd[idx + 1][0]):
                rest = cmd[idx + 2 :]
                break
            if word.startswith("-m") and _PIP.fullmatch(word[2:]):
                rest = cmd[idx + 1 :]
                break
    elif prog == "uv" and len(cmd) > 1 and cmd[1][0] == "pip":
        rest = cmd[2:]
    if rest is None:
        return None
    idx = 0
    while idx < len(rest) and rest[idx][0].startswith("-"):
        idx += 2 if rest[idx][0] in _PIP_VALUE_OPTS else 1
    if idx < len(rest) and rest[idx][0] == "install":
        return rest[idx + 1 :]
    return None


def _check_pip(ctx: FileContext, logical: _Logical, args: list[Token]) -> None:
    from gpuport.scan.rules.deps import check_index_url, check_requirement_spec

    idx = 0
    while idx < len(args):
        word, off = args[idx]
        idx += 1
        if _REDIRECT.match(word):
            idx += 1 if re.fullmatch(r"\d*[<>]+&?", word) else 0
            continue
        if word.startswith("-"):
            name, eq, value = word.partition("=")
            voff = off + len(name) + 1
            if not eq and name in (_PIP_INDEX | _PIP_VALUE_OPTS) and idx < len(args):
                value, voff = args[idx]
                idx += 1
            if name in _PIP_INDEX and value and "$" not in value:
                url = value.split("=", 1)[1] if re.match(r"^\w+=\w+://", value) else value
                line, col = logical.pos(voff + len(value) - len(url))
                check_index_url(ctx, url, line, col)
            continue
        if not word or "$" in word or "*" in word or word.startswith((".", "/", "~")):
            continue
        line, col = logical.pos(off)
        check_requirement_spec(ctx, word, line, col)


def _check_packages(ctx: FileContext, logical: _Logical, cmd: list[Token]) -> None:
    args = cmd[1:]
    idx = 0
    while idx < len(args) and args[idx][0].startswith("-"):
        idx += 2 if args[idx][0] in _PKG_VALUE_OPTS else 1
    if idx >= len(args) or args[idx][0] not in ("install", "in", "add", "create"):
        return
    idx += 1
    while idx < len(args):
        word, off = args[idx]
        idx += 1
        if word.startswith("-"):
            idx += 1 if word in _PKG_VALUE_OPTS else 0
            continue
        name = re.split(r"[=<>~!]", word.rsplit("::", 1)[-1], maxsplit=1)[0]
        if _CUDA_PKG.match(name):
            line, col = logical.pos(off)
            ctx.report("GP503", line, col, message=f"installs the CUDA package {word}")


def _run_commands(logical: _Logical, args: int) -> list[list[Token]]:
    flags = _RUN_FLAG.match(logical.text, args)  # RUN --mount=... --network=... <command>
    args = flags.end() if flags else args
    rest = logical.text[args:].lstrip()
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            out: list[Token] = []
            pos = args
            for w in words:
                found = logical.text.find(json.dumps(w), pos)
                pos = found + 1 if found >= 0 else pos
                out.append((w, found + 1 if found >= 0 else args))
            return [out] if out else []
    return _shell_commands(logical.text, args)


def _check_env(ctx: FileContext, logical: _Logical, args: int, rocm_arch: bool) -> None:
    text = logical.text
    pairs: list[tuple[str, int, str]] = []
    if re.match(r"\s*\w+=", text[args:]):
        pairs = [(m.group(1), m.start(1), m.group(2)) for m in _ENV_PAIR.finditer(text, args)]
    elif m := _ENV_LEGACY.match(text, args):
        pairs = [(m.group(1), m.start(1), m.group(2))]
    for key, off, value in pairs:
        line, col = logical.pos(off)
        _env_var(ctx, key, value, line, col, rocm_arch, guarded=False)


def _env_var(
    ctx: FileContext, key: str, value: str, line: int, col: int, rocm_arch: bool, guarded: bool
) -> None:
    if key in _NV_ENV:
        ctx.report("GP502", line, col, message=f"{key} is read only by the NVIDIA runtime",
                   guarded=guarded)
    elif key in _CUDA_ENV or (key in _PATH_ENV and "/usr/local/cuda" in value):
        ctx.report("GP504", line, col, message=f"{key} points at a CUDA install",
                   guarded=guarded)
    elif key == "TORCH_CUDA_ARCH_LIST" and not rocm_arch:
        ctx.report("GP504", line, col, message="TORCH_CUDA_ARCH_LIST is ignored by ROCm builds",
                   fix=f"Set PYTORCH_ROCM_ARCH={ctx.target.name} for extension builds.",
                   guarded=guarded)


def _check_from(ctx: FileContext, logical: _Logical, args: int,
                build_args: dict[str, tuple[str, _Logical, int]], stages: set[str]) -> None:
    words = [(m.group(0), m.start()) for m in re.finditer(r"\S+", logical.text[args:])]
    words = [(w, o + args) for w, o in words if not w.startswith("--")]
    if not words:
        return
    image, off = words[0]
    if len(words) >= 3 and words[1][0].upper() == "AS":
        stages.add(words[2][0].lower())
    if image.lower() in stages:
        return
    where: tuple[_Logical, int] = (logical, off)
    if "$" in image:
        for ref in _ARG_REF.finditer(image):
            known = build_args.get(ref.group(1))
            if known is not None and _nvidia_image(known[0]):
                image, where = known[0], (known[1], known[2])
                break
            if ref.group(2) and _nvidia_image(ref.group(2)):
                image, where = ref.group(2), (logical, off + ref.start(2))
                break
    if _nvidia_image(image):
        line, col = where[0].pos(where[1])
        ctx.report("GP501", line, col, message=f"base image {image} is a CUDA image",
                   fix=_image_fix(image, ctx))


@checker(FileKind.DOCKERFILE)
def check_dockerfile(ctx: FileContext) -> None:
    build_args: dict[str, tuple[str, _Logical, int]] = {}
    stages: set[str] = set()
    rocm_arch = "PYTORCH_ROCM_ARCH" in ctx.text
    for keyword, logical, args in _instructions(ctx.text):
        if keyword == "ARG":
            for m in _ENV_PAIR.finditer(logical.text, args):
                quoted = m.group(2)[:1] in ("'", '"')
                build_args[m.group(1)] = (m.group(2).strip("\"'"), logical, m.start(2) + quoted)
        elif keyword == "FROM":
            _check_from(ctx, logical, args, build_args, stages)
        elif keyword == "ENV":
            _check_env(ctx, logical, args, rocm_arch)
        elif keyword == "RUN":
            for words in _run_commands(logical, args):
                cmd = _program(words)
                if not cmd:
                    continue
                if cmd[0][0].rsplit("/", 1)[-1] in _PKG_MANAGERS:
                    _check_packages(ctx, logical, cmd)
                elif (pip := _pip_args(cmd)) is not None:
                    _check_pip(ctx, logical, pip)


# --- docker-compose ------------------------------------------------------------------------


class _Reporter(Protocol):
    def __call__(
        self, rule: str, node: yaml.Node, message: str, fix: str | None = None, minor: bool = False
    ) -> None: ...


def _get(node: yaml.Node | None, key: str, depth: int = 0) -> tuple[yaml.Node, yaml.Node] | None:
    """(key node, value node) of ``key`` in a mapping node, following ``<<`` merges."""
    if not isinstance(node, yaml.MappingNode) or depth > 10:
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == "<<":
            for src in v.value if isinstance(v, yaml.SequenceNode) else [v]:
                if (got := _get(src, key, depth + 1)) is not None:
                    return got
    return None


def _at(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalars(node: yaml.Node | None) -> list[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        return [node]
    if isinstance(node, yaml.SequenceNode):
        return [n for n in node.value if isinstance(n, yaml.ScalarNode)]
    return []


def _path(node: yaml.Node | None, *keys: str) -> yaml.Node | None:
    for key in keys:
        got = _get(node, key)
        if got is None:
            return None
        node = got[1]
    return node


def _environment(node: yaml.Node | None) -> Iterator[tuple[str, str, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                yield k.value, str(v.value) if isinstance(v, yaml.ScalarNode) else "", k
    for item in _scalars(node) if isinstance(node, yaml.SequenceNode) else []:
        key, _, value = str(item.value).partition("=")
        yield key, value, item


@dataclass
class _Service:
    name: str
    node: yaml.MappingNode
    rocm: bool = False
    has_devices: bool = False
    has_groups: bool = False


def _services(root: yaml.Node) -> list[_Service]:
    services = _path(root, "services")
    if services is None and isinstance(root, yaml.MappingNode):
        services = root  # compose file format 1: services at the top level
    if not isinstance(services, yaml.MappingNode):
        return []
    out: list[_Service] = []
    for k, v in services.value:
        if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.MappingNode):
            svc = _Service(str(k.value), v)
            image = _path(v, "image")
            img = str(image.value).lower() if isinstance(image, yaml.ScalarNode) else ""
            envs = {key for key, _, _ in _environment(_path(v, "environment"))}
            devices = [str(d.value) for d in _scalars(_path(v, "devices"))]
            privileged = _path(v, "privileged")
            svc.has_devices = (
                any("/dev/kfd" in d for d in devices) and any("/dev/dri" in d for d in devices)
            ) or any(d.startswith("amd.com/gpu") for d in devices) or (
                isinstance(privileged, yaml.ScalarNode) and str(privileged.value) == "true"
            )
            groups = {str(g.value) for g in _scalars(_path(v, "group_add"))}
            svc.has_groups = {"video", "render"} <= groups
            svc.rocm = "rocm" in img or bool(envs & _ROCM_ENV) or any(
                "/dev/kfd" in d for d in devices
            )
            out.append(svc)
    return out


@checker(FileKind.COMPOSE)
def check_compose(ctx: FileContext) -> None:
    try:
        yaml.safe_load(ctx.text)
        root = yaml.compose(ctx.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        ctx.skip_reason = f"invalid YAML: {problem}{where}"
        return
    except RecursionError:
        ctx.skip_reason = "invalid YAML: nested too deeply to read"
        return
    if root is None:
        return
    services = _services(root)
    guarded = any(s.rocm and s.has_devices for s in services)
    seen: set[tuple[str, int, int]] = set()
    rocm_arch = "PYTORCH_ROCM_ARCH" in ctx.text

    def report(
        rule: str, node: yaml.Node, message: str, fix: str | None = None, minor: bool = False
    ) -> None:
        line, col = _at(node)
        if (rule, line, col) not in seen:
            seen.add((rule, line, col))
            ctx.report(rule, line, col, message=message, fix=fix,
                       guarded=guarded and rule != "GP505",
                       severity=Severity.MINOR if minor else None)

    for svc in services:
        _check_service(svc, report, ctx, rocm_arch, guarded)
    _find_k8s_gpu(root, report)


def _check_service(svc: _Service, report: _Reporter, ctx: FileContext, rocm_arch: bool,
                   guarded: bool) -> None:
    node = svc.node
    image = _path(node, "image")
    if isinstance(image, yaml.ScalarNode) and _nvidia_image(str(image.value)):
        report("GP501", image, f"service {svc.name}: image {image.value} is a CUDA image",
               fix=_image_fix(str(image.value), ctx))
    runtime = _path(node, "runtime")
    if isinstance(runtime, yaml.ScalarNode) and "nvidia" in str(runtime.value).lower():
        report("GP502", runtime, f"service {svc.name}: runtime {runtime.value}")
    gpus = _get(node, "gpus")
    if gpus is not None:
        report("GP502", gpus[0], f"service {svc.name}: gpus: requests NVIDIA GPUs")
    for dev in _sequence(_path(node, "deploy", "resources", "reservations", "devices")):
        driver = _path(dev, "driver")
        caps = _get(dev, "capabilities")
        is_nvidia = isinstance(driver, yaml.ScalarNode) and str(driver.value).lower() == "nvidia"
        if is_nvidia and driver is not None:
            report("GP502", driver, f"service {svc.name}: reserves devices of driver nvidia")
        elif caps is not None and "gpu" in {str(c.value) for c in _scalars(caps[1])}:
            report("GP502", caps[0], f"service {svc.name}: capabilities [gpu] select NVIDIA GPUs")
    for key, value, where in _environment(_path(node, "environment")):
        line, col = _at(where)
        _env_var(ctx, key, value, line, col, rocm_arch, guarded)
    if svc.rocm and not svc.has_devices:
        anchor = image if image is not None else node
        report("GP505", anchor, f"service {svc.name} runs ROCm without /dev/kfd and /dev/dri")
    elif svc.rocm and not svc.has_groups and (devs := _get(node, "devices")) is not None:
        report("GP505", devs[0], f"service {svc.name}: add group_add: [video, render]",
               fix="Add `group_add: [video, render]` so a non-root user can open the GPU.",
               minor=True)


def _sequence(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _find_k8s_gpu(root: yaml.Node, report: _Reporter) -> None:
    """nvidia.com/gpu anywhere (Kubernetes resources, CDI device names).

    Every node is visited once, so aliases (``*ref``) cannot blow the walk up.
    """
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode) and "nvidia.com/gpu" in str(node.value):
            report("GP502", node, f"{node.value}: NVIDIA device plugin / CDI resource",
                   fix="Request amd.com/gpu (AMD GPU device plugin / CDI) instead.")
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


# --- docker run in Makefiles ---------------------------------------------------------------

_DOCKER_GPU = re.compile(r"(?<![\w-])--gpus\b|--runtime[= ]nvidia\b|\bnvidia-docker\b")
_DOCKER = re.compile(r"\b(?:docker|podman|nerdctl)\b")


@checker(FileKind.MAKEFILE)
def check_makefile_docker(ctx: FileContext) -> None:
    lines = strip_make_comments(ctx.text).split("\n")
    guards = make_guards(lines)
    docker = False  # a docker command is on this line or on the lines it continues
    for idx, line in enumerate(lines, 1):
        docker = docker or bool(_DOCKER.search(line))
        found = list(_DOCKER_GPU.finditer(line)) if docker else []
        docker = docker and line.rstrip().endswith("\\")
        for m in found:
            ctx.report("GP502", idx, m.start() + 1, message=f"{m.group(0)}: NVIDIA container GPUs",
                       guarded=any(a <= idx <= b for a, b in guards))
