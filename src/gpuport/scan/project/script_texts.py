"""The project's scripts, CI files and task-runner files, which the scan does not read.

Shell scripts, CI workflows (hidden folders: the walk never enters them), ``tox.ini``,
``noxfile.py`` and the like run the project's install and tool steps; Cython sources,
notebooks and extensionless ``#!/usr/bin/env python`` tools are Python no ``*.py`` walk
sees. Rules that conclude "no file of the project names X" read these too (forty-second
re-run F5: a pip freeze ``install.sh``, CI and tox install was "named by no file"; F17: a
``gpustat`` run by a shell script, ``GPUtil`` imported by ``tools/gpuwatch``, were "never
called"). GitHub's local actions (``.github/actions/*/action.yml``, a composite action's
steps) are CI files too (forty-third re-run F13: a monitor run by one was "run by no
script"). Forty-fifth re-run F16: cron tables (``crontab``, ``*.cron``, files in a ``cron.d``
folder), ``.fish``/``.csh`` scripts and extensionless ``#!/bin/sh`` scripts are run texts too.
The walk is the scan's (``.gitignore``, vendored and hidden folders), bounded; when
a bound is met, or a file that may name it cannot be read, :attr:`Scripts.complete` is False
and a caller concludes nothing.

Files are read as text, bounded, inside the project; nothing is run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import fileio, textre
from gpuport.errors import GpuportError
from gpuport.scan.project.files import Candidate, classify, iter_entries, safe_name

__all__ = ["LazyTexts", "Scripts", "project_scripts", "scripts_lazily", "without_install_lines"]

_MAX_BYTES = 1 << 20
#: a notebook holds its outputs (images as base64): two demo notebooks of 1.6 and 2.2 MB made
#: GroundingDINO's scan conclude nothing about its conda file (session 19)
_MAX_NOTEBOOK_BYTES = 16 << 20
_MOST_ENTRIES = 200_000  # entries walked
_MOST_READ = 3_000  # files read whole
_MOST_BYTES = 64 << 20  # text kept in all
_MOST_HEADS = 30_000  # extensionless files whose first bytes are read (a ``#!`` line)
_MOST_WORKFLOWS = 200
#: shell, batch and task files: they run steps
_RUN_SUFFIXES = (
    ".sh", ".bash", ".zsh", ".ksh", ".fish", ".csh", ".tcsh", ".xsh", ".nu", ".command",
    ".ps1", ".bat", ".cmd", ".mk", ".just", ".cron", ".crontab",
)  # fmt: skip
_RUN_NAMES = {
    "justfile", "taskfile.yml", "taskfile.yaml", "procfile", "jenkinsfile", "crontab",
    "anacrontab", "cron", "vagrantfile", "tiltfile", "earthfile",
}  # fmt: skip
#: a cron table by its place or name (``cron.d/gpu``, ``deploy/cron/monitor``, ``gpu.cron.txt``)
#: runs its lines (forty-fifth re-run F16); docs and data about cron do not
_CRON = textre.compile(r"(?:^|[/._-])(?:ana)?cron(?:tab)?s?(?:$|[/._-])")
_NOT_RUN = (".md", ".rst", ".adoc", ".html", ".htm", ".pdf", ".png", ".jpg", ".svg", ".csv",
            ".log", ".gz", ".zip", ".tar", ".xz", ".bz2", ".pyc", ".lock")  # fmt: skip
#: files that name an install step (``tox.ini``'s ``deps = -r``, a config's command)
_CONFIG_SUFFIXES = (".yml", ".yaml", ".cfg", ".ini", ".toml", ".json", ".conf", ".service")
#: Python files by name that run install steps (nox, invoke, fabric)
_TASK_PY = {"noxfile.py", "tasks.py", "fabfile.py"}
#: Python that the walk's ``*.py`` misses
_PYTHON_SUFFIXES = (".pyx", ".pxd", ".pxi", ".pyw", ".ipynb")
#: CI files in hidden folders (the walk does not enter them)
_HIDDEN = (
    ".gitlab-ci.yml",
    ".travis.yml",
    ".circleci/config.yml",
    ".buildkite/pipeline.yml",
    ".devcontainer/devcontainer.json",
    ".devcontainer/postCreateCommand.sh",
)
_PY_SHEBANG = textre.compile(r"^#![^\n]*\bpython[\d.]*\b")
#: an extensionless script of another interpreter (``#!/bin/sh``, ``#!/usr/bin/env bash``): it
#: runs its lines (forty-fifth re-run F16)
_SHELL_SHEBANG = textre.compile(
    r"^#![^\n]*\b(?:sh|bash|dash|zsh|ksh|fish|csh|tcsh|busybox|pwsh|make|just)\b"
)


@dataclass
class Scripts:
    #: relative path -> text: scripts, CI and task files (``run``) and Python not named .py
    run: dict[str, str] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    python: dict[str, str] = field(default_factory=dict)
    #: False: a bound was met or a file could not be read (conclude nothing from absence)
    complete: bool = True


#: the last walk: (root, the candidate list it was asked with, what it found). A scan asks
#: twice (a freeze before the rules, a monitor after them) with the same list: one walk. The
#: list is held, so another list can never be taken for it.
_LAST: list[tuple[str, Sequence[Candidate], Scripts]] = []


def project_scripts(root: Path, candidates: Sequence[Candidate]) -> Scripts:
    """The project's scripts, CI, config and task files and its Python not named ``*.py``
    (relative path -> text), with whether all of them were read."""
    key = str(root)
    if _LAST and _LAST[0][0] == key and _LAST[0][1] is candidates:
        return _LAST[0][2]
    out = _walk(root)
    _LAST[:] = [(key, candidates, out)]
    return out


class LazyTexts(Mapping[str, str]):
    """Texts by relative path that :meth:`_got` reads on first use."""

    def _got(self) -> dict[str, str]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> str:
        return self._got()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._got())

    def __len__(self) -> int:
        return len(self._got())


class _Lazy(LazyTexts):
    """The project's scripts and config files (relative path -> text), read on first use: a
    question most scans never ask (an option OFF by default whose block a script may turn on)
    costs no walk."""

    def __init__(self, root: Path, candidates: Sequence[Candidate]) -> None:
        self._args = (root, candidates)
        self._texts: dict[str, str] | None = None

    def _got(self) -> dict[str, str]:
        if self._texts is None:
            s = project_scripts(*self._args)
            # not CI: a workflow that tests an opt-in configuration (FlagGems' C extension
            # job) does not make it the project's default
            self._texts = {rel: text for rel, text in {**s.run, **s.config}.items() if not _ci(rel)}
        return self._texts


def _ci(rel: str) -> bool:
    return rel.startswith((".github/", ".gitlab", ".circleci/", ".buildkite/", ".travis"))


def scripts_lazily(root: Path, candidates: Sequence[Candidate]) -> Mapping[str, str]:
    """:func:`project_scripts`' scripts and config files as one mapping, walked on first use
    (forty-third re-run F11: ``CMakePresets.json``, ``build.sh`` turning an option on)."""
    return _Lazy(root, candidates)


def _walk(root: Path) -> Scripts:
    out = Scripts()
    if not root.is_dir():
        return out
    reads = {"whole": 0, "head": 0}
    kept = 0
    entries = 0
    for item in iter_entries(root):
        if isinstance(item, tuple):
            entries += 1
            if entries > _MOST_ENTRIES:
                out.complete = False
                break
            rel, entry = item
            kind = _wanted(rel)
            if kind is None:
                continue
            key = "head" if kind == "head" else "whole"
            if reads[key] >= (_MOST_HEADS if key == "head" else _MOST_READ):
                out.complete = False
                break
            reads[key] += _take(root, rel, entry, out, kind)
            if key == "whole" or rel in out.python or rel in out.run:
                kept += len(out.python.get(rel) or out.run.get(rel) or out.config.get(rel) or "")
                if kept > _MOST_BYTES:
                    out.complete = False
                    break
    for rel in [*_HIDDEN, *_workflows(root)]:
        text = fileio.read_text_or_none(root / rel, limit=_MAX_BYTES, root=root)
        if text is not None:
            (out.config if rel.endswith((".yml", ".yaml", ".json")) else out.run)[rel] = text
    return out


def _wanted(rel: str) -> str | None:
    """Which texts a file belongs to: "run", "config", "python", "head" (extensionless: its
    ``#!`` line says), or None."""
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    if lower.endswith(_RUN_SUFFIXES) or lower in _RUN_NAMES:
        return "run"
    if (
        "cron" in rel.lower()
        and _CRON.search(rel.lower())
        and not lower.endswith((*_NOT_RUN, *_PYTHON_SUFFIXES))
        and classify(rel) is None
    ):
        return "run"
    if lower in _TASK_PY:
        return "run"
    if lower.endswith(_PYTHON_SUFFIXES):
        return "python"
    if classify(rel) is not None:
        return None  # a manifest or source the scan reads itself
    if lower.endswith(_CONFIG_SUFFIXES):
        return "config"
    if "." not in name:
        return "head"
    return None


def _take(root: Path, rel: str, entry: os.DirEntry[str], out: Scripts, kind: str) -> int:
    """Read ``rel`` (wanted as ``kind``) into ``out``; 1 if it was read."""
    try:
        if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            return 0
    except OSError:
        return 0
    if kind == "head":
        got = _tool(root / rel, root)
        if got is None:
            return 1
        if got[1] == "":
            out.complete = False  # a #! tool too large to read
            return 1
        (out.python if got[0] == "python" else out.run)[rel] = got[1]
        return 1
    limit = _MAX_NOTEBOOK_BYTES if rel.endswith(".ipynb") else _MAX_BYTES
    text = fileio.read_text_or_none(root / rel, limit=limit, root=root)
    if text is None:
        if kind != "config":
            out.complete = False
        return 1
    {"run": out.run, "config": out.config, "python": out.python}[kind][rel] = text
    return 1


def _tool(path: Path, root: Path) -> tuple[str, str] | None:
    """An extensionless file's kind ("python" or "run") and text when its first line is a
    ``#!`` line naming python or a shell; None when it is not one (or cannot be opened); text
    "" when it is one too large to read."""
    try:
        with fileio.open_regular(path, root=root) as fh:
            head = fh.read(256)  # a data file without a suffix is not read whole
            if not head.startswith(b"#!"):
                return None
            line = head.decode("utf-8", errors="replace")
            if _PY_SHEBANG.match(line):
                kind = "python"
            elif _SHELL_SHEBANG.match(line):
                kind = "run"
            else:
                return None
            data = head + fh.read(_MAX_BYTES + 1 - len(head))
    except (GpuportError, OSError):
        return None
    return kind, ("" if len(data) > _MAX_BYTES else data.decode("utf-8", errors="replace"))


def _workflows(root: Path) -> list[str]:
    """The GitHub workflow files and local actions' ``action.yml`` files (their folders up
    to :data:`_ACTION_DEPTH` deep), at most :data:`_MOST_WORKFLOWS` of each."""
    out = [
        f".github/workflows/{n}"
        for n in _names(root, ".github/workflows")
        if n.endswith((".yml", ".yaml"))
    ][:_MOST_WORKFLOWS]
    actions: list[str] = []
    folders = [".github/actions"]
    for _ in range(_ACTION_DEPTH):
        deeper: list[str] = []
        for folder in folders:
            for n in _names(root, folder):
                rel = f"{folder}/{n}"
                if n in ("action.yml", "action.yaml"):
                    actions.append(rel)
                elif (root / rel).is_dir() and not (root / rel).is_symlink():
                    deeper.append(rel)
        folders = deeper[:_MOST_WORKFLOWS]
    return out + sorted(actions)[:_MOST_WORKFLOWS]


#: how deep local actions are looked for under ``.github/actions``
_ACTION_DEPTH = 3


def _names(root: Path, folder: str) -> list[str]:
    """The names in ``root/folder`` (sorted; a name that is not UTF-8 left out)."""
    try:
        with os.scandir(root / folder) as entries:
            return sorted(e.name for e in entries if safe_name(e.name) == e.name)
    except OSError:
        return []


_INSTALL_LINE = textre.compile(
    r"(?m)^[^\n]*\b(?:pip3?|pipx|conda|mamba|micromamba|uv|poetry|pdm|pixi)\b[^\n]*"
    r"\b(?:install|uninstall|add|remove|sync)\b[^\n]*$"
)


def without_install_lines(text: str) -> str:
    """``text`` without its package-manager lines (``pip install gpustat`` installs it, ``pip
    uninstall pynvml`` removes it: OpenRLHF's Dockerfile; a line that runs ``gpustat`` calls
    it)."""
    if "install" not in text and "add" not in text and "sync" not in text and "remove" not in text:
        return text
    return _INSTALL_LINE.sub("", text)
