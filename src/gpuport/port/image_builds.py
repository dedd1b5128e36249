"""Which project Dockerfile builds an image a compose service runs by name.

A service may run ``image: lychee0/vs-playground:dev`` without a ``build:`` key because the
project builds that image itself, in a Makefile, a script or a CI job (``docker buildx build
-f vs-playground.dockerfile -t lychee0/vs-playground .``). That image is the project's own: it
runs on an AMD GPU only when its Dockerfile starts from a ROCm image, and AMD devices given to
a CUDA-built one give it nothing (J18, vs-playground). This reads the project's ``docker
build`` / ``docker buildx build`` / ``podman build`` command lines, read, never run: the
Dockerfile (``-f``/``--file``, else ``Dockerfile`` in a literal build context) and each tag
(``-t``/``--tag``); a value holding a variable (``$(TAG)``, ``${IMAGE}``) is left out. Each
file is read once and split once: linear in the text read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from pathlib import PurePosixPath

from gpuport import textre
from gpuport.port.context import PortContext

__all__ = ["build_args", "built_images", "image_repository"]

_BUILD = textre.compile(r"\b(?:docker|podman)\s+(?:buildx\s+)?build\b")
_CACHE = "image-builds"


def image_repository(image: str) -> str:
    """``registry/name`` of an image reference, without its tag or digest (lower case)."""
    ref = image.split("@", 1)[0].strip()
    head, _, last = ref.rpartition("/")
    last = last.split(":", 1)[0]
    return (f"{head}/{last}" if head else last).lower()


def _script_files(ctx: PortContext) -> list[str]:
    """Makefiles (as scan finds them), shell scripts at the top and in ``scripts/``, and CI
    workflow files: where a project writes its image builds."""
    out = list(ctx.files_of("makefile"))
    for folder in ("", "scripts", "docker"):
        out += [
            f"{folder}/{n}" if folder else n
            for n in ctx.listdir(folder)
            if n.endswith((".sh", ".bash"))
        ]
    for folder in (".github/workflows", ".circleci", ".gitlab"):
        out += [f"{folder}/{n}" for n in ctx.listdir(folder) if n.endswith((".yml", ".yaml"))]
    if ctx.exists(".gitlab-ci.yml"):
        out.append(".gitlab-ci.yml")
    return sorted(set(out))


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined (one pass)."""
    out: list[str] = []
    part: list[str] = []
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            part.append(raw.rstrip()[:-1])
            continue
        part.append(raw)
        out.append(" ".join(part))
        part = []
    if part:
        out.append(" ".join(part))
    return out


def _literal(value: str) -> bool:
    return bool(value) and "$" not in value and "`" not in value and "%" not in value


def _parse(
    command: str, args: list[tuple[str, str | None]] | None = None
) -> tuple[str | None, str | None, list[str]]:
    """(Dockerfile, context, tags) of one build command (tokens split on white space; a
    command joined to the next by ``&&`` or ``;`` ends there); its ``--build-arg NAME[=V]``
    go into ``args`` when given (V None: taken from the environment)."""
    tokens = command.split()
    dockerfile: str | None = None
    context: str | None = None
    tags: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].strip("\"'")
        if tok in ("&&", ";", "||", "|") or tok.endswith(";"):
            break
        if tok in ("-f", "--file", "-t", "--tag") and i + 1 < len(tokens):
            val = tokens[i + 1].strip("\"'")
            if tok in ("-f", "--file"):
                dockerfile = val
            else:
                tags.append(val)
            i += 2
            continue
        if tok == "--build-arg" and i + 1 < len(tokens):
            if args is not None:
                name, eq, value = tokens[i + 1].strip("\"'").partition("=")
                args.append((name, value if eq else None))
            i += 2
            continue
        if tok.startswith("--build-arg=") and args is not None:
            name, eq, value = tok[len("--build-arg=") :].partition("=")
            args.append((name, value if eq else None))
        elif tok.startswith("--file="):
            dockerfile = tok[len("--file=") :]
        elif tok.startswith("--tag="):
            tags.append(tok[len("--tag=") :])
        elif tok.startswith("-") and "=" not in tok and i + 1 < len(tokens):
            # an option with a value we do not read (--platform x): skip both only when the
            # next token is not itself an option or the context
            nxt = tokens[i + 1]
            if not nxt.startswith("-") and tok in _VALUED:
                i += 2
                continue
        elif not tok.startswith("-"):
            context = tok
        i += 1
    return dockerfile, context, tags


_VALUED = frozenset(
    {
        "--platform",
        "--build-arg",
        "--target",
        "--label",
        "--cache-from",
        "--cache-to",
        "--output",
        "-o",
        "--secret",
        "--ssh",
        "--network",
        "--progress",
        "--builder",
    }
)


def _build_commands(
    ctx: PortContext, word: str = ""
) -> Iterator[tuple[str, str, list[str], list[tuple[str, str | None]]]]:
    """Each image build command of the project's scripts whose Dockerfile is a literal path
    (the context's ``Dockerfile`` when none is named): (script, Dockerfile relative to the
    project, tags, ``--build-arg`` pairs). ``word``: only scripts whose text holds it."""
    for path in _script_files(ctx):
        text = ctx.read(path)
        if not text or (word and word not in text) or not _BUILD.search(text):
            continue
        folder = PurePosixPath(path).parent
        for line in _logical_lines(text):
            hit = _BUILD.search(line)
            if hit is None:
                continue
            args: list[tuple[str, str | None]] = []
            dockerfile, context, tags = _parse(line[hit.end() :], args)
            if dockerfile is None and context is not None and _literal(context):
                dockerfile = posixpath.join(context, "Dockerfile")
            if dockerfile is None or not _literal(dockerfile):
                continue
            yield path, posixpath.normpath(str(folder / dockerfile)), tags, args


def built_images(ctx: PortContext) -> dict[str, str]:
    """Image repository (``image_repository``) -> the project Dockerfile its build command
    names; an image two commands build from different Dockerfiles is left out (ambiguous).
    Computed once per run."""
    cached = ctx.cache.get(_CACHE)
    if isinstance(cached, dict):
        return cached
    found: dict[str, str] = {}
    clash: set[str] = set()
    for _path, rel, tags, _args in _build_commands(ctx):
        if rel.startswith("..") or ctx.read(rel) is None:
            continue
        for tag in tags:
            if not _literal(tag):
                continue
            repo = image_repository(tag)
            if found.get(repo, rel) != rel:
                clash.add(repo)
            found[repo] = rel
    out = {k: v for k, v in found.items() if k not in clash}
    ctx.cache[_CACHE] = out
    return out


def build_args(ctx: PortContext) -> dict[str, list[tuple[str, str | None, str]]]:
    """Project Dockerfile -> the ``--build-arg`` (name, value or None, file) its build
    commands pass. Computed once per run."""
    cached = ctx.cache.get(_CACHE + ":args")
    if isinstance(cached, dict):
        return cached
    out: dict[str, list[tuple[str, str | None, str]]] = {}
    for path, rel, _tags, args in _build_commands(ctx, "build-arg"):
        if args:
            out.setdefault(rel, []).extend((n, v, path) for n, v in args)
    ctx.cache[_CACHE + ":args"] = out
    return out
