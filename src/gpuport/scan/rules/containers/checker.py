"""GP5xx: containers (Dockerfiles, docker-compose files, ``docker run`` in Makefiles).

Dockerfiles are split into instructions the way Docker does it (``\\``
continuations, comment lines inside them, ``# escape=``, heredocs), keeping a
map back to physical lines so that every finding points at the line its token
is on (lines are counted like editors do, :func:`~gpuport.scan.rules.base.physical_lines`:
a form feed or U+2028 is not a line break). ``pip install`` requirements and
index URLs in RUN lines, also inside ``sh -c "..."``, are handed to the
dependency rules (GP1xx).

The rule table is in :mod:`gpuport.scan.rules.containers.rules`, the image and
environment checks both file kinds share in
:mod:`gpuport.scan.rules.containers.common`, the shell words of RUN lines in
:mod:`gpuport.scan.rules.containers.shell`, and compose/Kubernetes YAML in
:mod:`gpuport.scan.rules.containers.compose`.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport import textre
from gpuport.intervals import in_any
from gpuport.safeparse import json_value
from gpuport.scan.rules.base import FileContext, FileKind, checker, physical_lines, register
from gpuport.scan.rules.build.checker import make_guards, strip_make_comments
from gpuport.scan.rules.containers.common import env_var, image_fix, nvidia_image
from gpuport.scan.rules.containers.compose import check_compose
from gpuport.scan.rules.containers.rules import CONTAINER_RULES
from gpuport.scan.rules.containers.shell import (
    Token,
    check_run_command,
    expand_shell_c,
    shell_commands,
)

__all__ = ["check_compose", "check_dockerfile", "check_makefile_docker"]

register(*CONTAINER_RULES)

_HEREDOC = textre.compile(r"(?<!<)<<(-?)\s*([\"']?)([A-Za-z_][\w.-]*)\2")
_ENV_PAIR = textre.compile(r"([A-Za-z_]\w*)=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S*)")
_ENV_LEGACY = textre.compile(r"\s*(\w+)\s+(.*)")
_RUN_FLAG = textre.compile(r"(?:\s*--[\w-]+(?:=\S*)?)+\s*")
_ARG_REF = textre.compile(r"\$\{?(\w+)(?::?-([^}]*))?\}?")


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
        m = textre.match(r"^\s*#\s*(\w+)\s*=\s*(\S+)\s*$", raw)
        if m is None:
            break
        if m.group(1).lower() == "escape" and m.group(2) in ("`", "\\"):
            return m.group(2)
    return "\\"


def _instructions(text: str) -> Iterator[tuple[str, _Logical, int]]:
    """(KEYWORD, logical line, offset of the arguments) for every instruction."""
    lines = physical_lines(text)
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
        m = textre.match(r"\s*([A-Za-z]+)\s*", logical.text)
        keyword = m.group(1).upper() if m else ""
        args = m.end() if m else 0
        if keyword == "ONBUILD" and (m2 := textre.match(r"([A-Za-z]+)\s*", logical.text[args:])):
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


def _run_commands(logical: _Logical, args: int) -> list[list[Token]]:
    flags = _RUN_FLAG.match(logical.text, args)  # RUN --mount=... --network=... <command>
    args = flags.end() if flags else args
    rest = logical.text[args:].lstrip()
    if rest.startswith("["):
        try:
            words = json_value(rest)
        except ValueError:  # not JSON, or nested/long past safeparse's bounds: a shell form
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            out: list[Token] = []
            pos = args
            for w in words:
                found = logical.text.find(json.dumps(w), pos)
                pos = found + 1 if found >= 0 else pos
                out.append((w, found + 1 if found >= 0 else args))
            return expand_shell_c([out], None) if out else []
    return shell_commands(logical.text, args)


def _check_env(ctx: FileContext, logical: _Logical, args: int, rocm_arch: bool) -> None:
    text = logical.text
    pairs: list[tuple[str, int, str]] = []
    if textre.match(r"\s*\w+=", text[args:]):
        pairs = [(m.group(1), m.start(1), m.group(2)) for m in _ENV_PAIR.finditer(text, args)]
    elif m := _ENV_LEGACY.match(text, args):
        pairs = [(m.group(1), m.start(1), m.group(2))]
    for key, off, value in pairs:
        line, col = logical.pos(off)
        env_var(ctx, key, value, line, col, rocm_arch, guarded=False)


def _check_from(
    ctx: FileContext,
    logical: _Logical,
    args: int,
    build_args: dict[str, tuple[str, _Logical, int]],
    stages: set[str],
) -> None:
    words = [(m.group(0), m.start()) for m in textre.finditer(r"\S+", logical.text[args:])]
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
            if known is not None and nvidia_image(known[0]):
                image, where = known[0], (known[1], known[2])
                break
            if ref.group(2) and nvidia_image(ref.group(2)):
                image, where = ref.group(2), (logical, off + ref.start(2))
                break
    if nvidia_image(image):
        line, col = where[0].pos(where[1])
        ctx.report(
            "GP501",
            line,
            col,
            message=f"base image {image} is a CUDA image",
            fix=image_fix(image, ctx),
        )


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
                check_run_command(ctx, logical.pos, words)


# --- docker run in Makefiles ---------------------------------------------------------------

_DOCKER_GPU = textre.compile(r"(?<![\w-])--gpus\b|--runtime[= ]nvidia\b|\bnvidia-docker\b")
_DOCKER = textre.compile(r"\b(?:docker|podman|nerdctl)\b")


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
            ctx.report(
                "GP502",
                idx,
                m.start() + 1,
                message=f"{m.group(0)}: NVIDIA container GPUs",
                guarded=in_any(guards, idx, closed=True),
            )
