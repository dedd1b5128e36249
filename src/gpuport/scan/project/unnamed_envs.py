"""Conda environment files that no other file of the project names.

GroundingDINO keeps an ``environment.yaml`` (a ``conda env export`` of someone's machine:
``cudatoolkit``, ``nvidia::cuda-*``, ``pytorch-cuda`` pins) that no README, page, script,
Dockerfile, CI job or build file names; its documented install is ``pip install -e .``
(issue 24, eighteenth sample; DROID-SLAM's in the seventeenth was the same). Counted as core,
its 23 blockers made the project "blocked". In a project that installs as a package (a
``setup.py`` or ``pyproject.toml`` at its root), such a file is nobody's install route: its
findings are counted apart (scope extra) with the reason. One that any of those files names
(``conda env create -f environment.yml`` in the README), or whose environment another file
names (relion's CMake looks the ``relion-5.0`` environment up), stays core.

Files are read as text, bounded, inside the project; nothing is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.project.files import Candidate
from gpuport.scan.project.routes_docs import doc_texts
from gpuport.scan.rules.base import FileKind

__all__ = ["unnamed_conda_files"]

_MAX_BYTES = 1 << 20
_ENV_NAME = textre.compile(r"(?m)^name:[ \t]*[\"']?([\w.+-]+)")
#: files that name an install step, read besides the build and route files the view has
_SCRIPT_SUFFIXES = (".sh", ".bash", ".ps1", ".bat", ".yml", ".yaml", ".cfg", ".ini", ".txt")


def unnamed_conda_files(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    package: str,
) -> dict[str, str]:
    """Conda environment files no other file names -> why their findings are not core
    (``known_texts``: relative path -> text of the files the view already read)."""
    if not package or not root.is_dir():
        return {}
    conda = [c.rel for c in candidates if c.kind is FileKind.CONDA_ENV]
    if not conda:
        return {}
    texts: dict[str, str] = dict(known_texts)
    texts.update(doc_texts(root))
    for c in candidates:
        if c.rel in texts or c.kind is FileKind.CONDA_ENV:
            continue
        if c.rel.startswith(".github/") or c.rel.endswith(_SCRIPT_SUFFIXES):
            got = fileio.read_text_or_none(root / c.rel, limit=_MAX_BYTES, root=root)
            if got is not None:
                texts[c.rel] = got
    out: dict[str, str] = {}
    for rel in conda:
        name = rel.rsplit("/", 1)[-1]
        texts.update(_folder_readmes(root, rel, texts))  # examples/x/README.md names it
        own = fileio.read_text_or_none(root / rel, limit=_MAX_BYTES, root=root) or ""
        env = _ENV_NAME.search(own)  # relion's CMake finds its env by name ("relion-5.0")
        by_env = env is not None and _env_named(env.group(1), rel, texts)
        if not by_env and not _named(name, rel, texts):
            out[rel] = (
                f"a conda environment file no file of the project names; its install is {package}"
            )
    return out


def _named(name: str, rel: str, texts: Mapping[str, str]) -> bool:
    return any(name in text for other, text in texts.items() if other != rel)


def _folder_readmes(root: Path, rel: str, known: Mapping[str, str]) -> dict[str, str]:
    """The README files of the folders from ``rel``'s up to the root (relative path -> text)."""
    out: dict[str, str] = {}
    parts = rel.split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        folder = "/".join(parts[:depth])
        try:
            names = [e.name for e in os.scandir(root / folder) if e.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for n in names:
            key = f"{folder}/{n}"
            if n.lower().startswith("readme") and key not in known:
                got = fileio.read_text_or_none(root / key, limit=_MAX_BYTES, root=root)
                if got is not None:
                    out[key] = got
    return out


def _env_named(env: str, rel: str, texts: Mapping[str, str]) -> bool:
    """Whether another file names the environment on a line about conda (``conda activate
    dino``, ``set(CONDA_ENV_NAME "relion-5.0")``): a package named like it is no mention."""
    pattern = textre.compile(rf"(?im)conda[^\n]{{0,80}}[^\w.\n-]{re.escape(env)}(?:[^\w.-]|$)")
    return any(
        pattern.search(t) for other, t in texts.items() if other != rel and "onda" in t.lower()
    )
