"""Dockerfiles of an installable package that are nobody's install: CI's own build images.

torchani installs with ``pip install`` (a ``setup.py`` at its root); its ``Dockerfile`` and
``conda.Dockerfile`` start from ``pytorch/pytorch:...-cuda12.4-...`` and are built only by its
GitHub workflows, to run its tests and benchmarks on its own NVIDIA runners and to build its
conda package; no README, page, script or compose file names them, and no workflow pushes the
image (issue 24, twenty-first sample). Counted as core, their two GP501 blockers made the
package "blocked".

In a project that installs as a package, a Dockerfile whose every mention is in a CI file that
does not push an image (``push: true``, ``docker push``, ``--push``, a registry login) is
counted apart (scope extra) with the reason. One no file names at all stays core (the
sixteenth sample's rule then says "only its container images block": GroundingDINO). One
named by a README, page, script, Makefile or compose file (``docker build -t x .``, ``build:
.``), or built and pushed by CI (an image users pull), stays core. A file named
``Dockerfile`` is named by any plain ``docker build``: what the command builds is a folder's
``Dockerfile``.
The project's Python is not among the naming texts here (forty-third re-run F3 added it for
install files only): a mention in code is no image build.

Files are read as text, bounded, inside the project; nothing is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.project.files import Candidate, safe_name
from gpuport.scan.project.unnamed_envs import naming_texts
from gpuport.scan.rules.base import FileKind

__all__ = ["ci_only_images"]

_CI = (
    ".github/workflows/",
    ".gitlab-ci",
    ".circleci/",
    ".buildkite/",
    "azure-pipelines",
    ".travis",
)
_BUILD = textre.compile(
    r"\b(?:docker|podman)(?:[ \t]+buildx|-compose|[ \t]+compose)?[ \t]+build\b"
    r"|build-push-action|^[ \t]*build:",
    re.M,
)
_PUSH = textre.compile(
    r"^[ \t]*push:[ \t]*(?:true|\$\{\{)|\b(?:docker|podman)[ \t]+push\b|[ \t]--push\b"
    r"|docker/login-action|\bdocker[ \t]+login\b",
    re.M,
)
_WORD = textre.compile(r"[\w.+-]+")


_CI_FILES = (".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", ".travis.yml",
             "Jenkinsfile")  # fmt: skip
_MOST_WORKFLOWS = 200
_MAX_BYTES = 1 << 20


def _ci_texts(root: Path) -> dict[str, str]:
    """The CI files (hidden folders are not walked by the scan): GitHub workflows, at most
    :data:`_MOST_WORKFLOWS` of them, and the other services' usual files, bounded."""
    paths = [root / rel for rel in _CI_FILES]
    try:
        with os.scandir(root / ".github" / "workflows") as entries:
            names = sorted(
                e.name
                for e in entries
                if e.name.endswith((".yml", ".yaml")) and safe_name(e.name) == e.name
            )  # a name that is not UTF-8 is not read (the walk skips it too)
        paths += [root / ".github" / "workflows" / n for n in names[:_MOST_WORKFLOWS]]
    except OSError:
        pass
    out: dict[str, str] = {}
    for path in paths:
        text = fileio.read_text_or_none(path, limit=_MAX_BYTES, root=root)
        if text is not None:
            out[path.relative_to(root).as_posix()] = text
    return out


def _is_ci(rel: str) -> bool:
    return rel.startswith(_CI) or rel.rsplit("/", 1)[-1] == "Jenkinsfile"


def ci_only_images(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    package: str,
) -> dict[str, str]:
    """Dockerfiles nobody's install uses -> why their findings are not core."""
    if not package or not root.is_dir():
        return {}
    images = [c.rel for c in candidates if c.kind is FileKind.DOCKERFILE]
    if not images:
        return {}
    # the project's Python is not read here: what it names is no image build (forty-third
    # re-run F3 added it for install files only)
    texts = naming_texts(
        root, candidates, known_texts, FileKind.DOCKERFILE, images, configs=False, python=False
    )
    texts.update(_ci_texts(root))
    texts = {t: text for t, text in texts.items() if t not in images}
    # each text read once, each file name judged once: a search per image and text was
    # quadratic (4,000 folders with a Dockerfile and a README: 21 s; thirty-sixth re-run F1)
    names = {rel.rsplit("/", 1)[-1] for rel in images}
    where: dict[str, set[str]] = {}
    for t, text in texts.items():
        for word in names & set(_WORD.findall(text)):
            where.setdefault(word, set()).add(t)
    built = {t for t, text in texts.items() if _BUILD.search(text) is not None}
    ci_only: dict[str, str | None] = {}  # file name -> the first CI file naming it, if CI only
    for name in names:
        named = where.get(name, set()) | (built if name.lower() == "dockerfile" else set())
        quiet = named and all(_is_ci(t) and _PUSH.search(texts[t]) is None for t in named)
        ci_only[name] = min(named) if quiet else None
    out: dict[str, str] = {}
    for rel in images:
        first = ci_only[rel.rsplit("/", 1)[-1]]
        if first is not None:
            out[rel] = (
                f"a Dockerfile only CI builds for its own jobs ({first}), no image pushed: "
                f"not the project's install ({package})"
            )
    return out
