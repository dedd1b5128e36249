"""Facts about the scanned project as a whole: its own Python packages, its git index.

Both are read statically: folder listings, ``pyproject.toml``/``setup.py``/``setup.cfg`` text
and the binary ``.git/index`` file (through dulwich). Nothing in the project is imported or
run, and ``git`` is never started inside it (its config can run commands: ``core.fsmonitor``).

*Own packages* are the top-level import names the project itself provides. An import of one of
them is the project's own code, never a third-party dependency to look up in the knowledge base
(torchao importing ``torchao``, AutoAWQ importing ``awq``, Megatron-LM importing ``megatron``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuport import fileio, textre
from gpuport.safeparse import ParseError, toml_table

PACKAGING = ("pyproject.toml", "setup.py", "setup.cfg")


@dataclass(frozen=True)
class OwnNames:
    """What the project is itself: its top-level import names and its distribution names."""

    packages: frozenset[str] = frozenset()
    distributions: frozenset[str] = frozenset()  # normalised (PEP 503)


def own_names(root: Path, project_dirs: Iterable[Path] = ()) -> OwnNames:
    """:func:`own_packages` and :func:`own_distributions` of the project at ``root``."""
    dirs = set(project_dirs)
    return OwnNames(own_packages(root, dirs), own_distributions(root, dirs))


def own_distributions(root: Path, project_dirs: Iterable[Path] = ()) -> frozenset[str]:
    """The distribution names the project's packaging files declare (``[project] name``,
    ``[metadata] name``, ``setup(name="...")``): a requirement on one of them (an extra of the
    project itself, ``-e .`` resolved) is the project, not a dependency."""
    names: set[str] = set()
    for base in {root, *project_dirs} if root.is_dir() else set():
        for file in PACKAGING:
            text = fileio.read_text_or_none(base / file, limit=fileio.LIMIT_SETTINGS, root=root)
            if text is None:
                continue
            if file == "pyproject.toml":
                try:  # bounded: a project's pyproject is untrusted input
                    name = toml_table(text).get("project", {}).get("name")
                except (ParseError, AttributeError):
                    name = None
                found = [name] if isinstance(name, str) else []
            else:
                found = [m.group(1) or m.group(2) for m in _DIST_NAME.finditer(text)]
            names.update(_normalise(n) for n in found if n)
    return frozenset(names)


def _normalise(name: str) -> str:
    return textre.sub(r"[-_.]+", "-", name).lower()


# Top-level folders that hold other people's or generated code, never the project's packages.
_NOT_PACKAGES = {"site-packages", "dist-packages", "node_modules", "build", "dist", "__pycache__"}
# Layout folders that hold packages (``src/awq``) rather than being one, unless they have an
# ``__init__.py`` of their own (``from src.model import ...``).
_LAYOUT_DIRS = {"src", "lib", "python", "py"}
# Top-level scripts that are not importable modules of the project.
_NOT_MODULES = {"setup", "conftest", "noxfile", "fabfile", "manage", "__init__", "__main__"}
_WHERE = textre.compile(r"""\bwhere\s*=\s*\[?\s*["']([\w./-]+)["']""")
_PACKAGE_DIR = textre.compile(r"""package_dir\s*=\s*\{\s*["']["']\s*:\s*["']([\w./-]+)["']""")
_PY_NAME = textre.compile(r"^[A-Za-z_]\w*$")
# setup(name="x") in setup.py, `name = x` under [metadata] in setup.cfg
_DIST_NAME = textre.compile(
    r"""\bname\s*=\s*["']([A-Za-z0-9][\w.-]*)["']|^name\s*=\s*([A-Za-z0-9][\w.-]*)\s*$""", re.M
)


def own_packages(root: Path, project_dirs: Iterable[Path] = ()) -> frozenset[str]:
    """The top-level import names the project at ``root`` defines itself.

    Looked for in ``root`` and in every folder of ``project_dirs`` (folders holding a
    packaging file: a monorepo's sub-projects), each with its ``src/`` layout and the
    ``where``/``package_dir`` folders its packaging names: every folder with an
    ``__init__.py`` in it or in a child folder (a namespace package such as ``megatron/``),
    and every single-module ``.py`` file. When ``root`` is itself inside a package
    (``gpuport scan repo/pkg``), the outermost package around it counts too.
    """
    if not root.is_dir():
        return frozenset()
    names: set[str] = set()
    bases = {root, *project_dirs}
    for base in sorted(bases):
        if (base / "__init__.py").is_file() and not any((base / f).is_file() for f in PACKAGING):
            continue  # a package's children are its submodules, not top-level names
        # (unless the folder is packaged itself: hopper/setup.py installs hopper/*.py as
        # top-level modules even when hopper/__init__.py exists)
        for folder in (base, base / "src", *_declared_dirs(base)):
            if _inside(folder, root):
                names |= _packages_in(folder)
    outer = root.resolve()
    while (outer / "__init__.py").is_file():
        if _PY_NAME.match(outer.name):
            names.add(outer.name)
        outer = outer.parent
    return frozenset(names)


def _inside(folder: Path, root: Path) -> bool:
    """Whether ``folder`` is a folder of the project at ``root``: ``root`` itself, or not a
    link (a ``src -> ..`` link listed the names of the folder above the project as its own
    packages; twenty-fifth re-run, F9) and, resolved, inside ``root``."""
    if folder == root:
        return True
    if folder.is_symlink():
        return False
    return folder.resolve().is_relative_to(root.resolve())


def _packages_in(folder: Path) -> set[str]:
    names: set[str] = set()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return names
    for entry in entries:
        name = entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if name in _NOT_PACKAGES or not _PY_NAME.match(name) or name.startswith("_"):
                continue
            if _is_package(Path(entry.path), namespace=name not in _LAYOUT_DIRS):
                names.add(name)
        elif name.endswith(".py"):
            stem = name[:-3]
            if _PY_NAME.match(stem) and stem not in _NOT_MODULES:
                names.add(stem)
    return names


def _is_package(folder: Path, *, namespace: bool = True) -> bool:
    """A regular package (``__init__.py``), or a namespace package one level down."""
    if (folder / "__init__.py").is_file():
        return True
    if not namespace:
        return False
    try:
        return any(
            e.is_dir(follow_symlinks=False) and (Path(e.path) / "__init__.py").is_file()
            for e in os.scandir(folder)
        )
    except OSError:
        return False


def _declared_dirs(base: Path) -> list[Path]:
    """Package folders that the packaging files of ``base`` name (``where``, ``package_dir``)."""
    found: list[Path] = []
    for name in PACKAGING:
        path = base / name
        text = fileio.read_text_or_none(path, limit=fileio.LIMIT_SETTINGS, root=base)
        if text is None:
            continue
        rels = _WHERE.findall(text) + _PACKAGE_DIR.findall(text)
        if name == "pyproject.toml":
            rels += _pyproject_where(text)
        for rel in rels:
            sub = (base / rel).resolve()
            if sub.is_dir() and sub != base.resolve() and sub.is_relative_to(base.resolve()):
                found.append(sub)
    return found


def _pyproject_where(text: str) -> list[str]:
    try:
        data = toml_table(text)
    except ParseError:
        return []
    find = data.get("tool", {}).get("setuptools", {}).get("packages", {})
    where = find.get("find", {}).get("where", []) if isinstance(find, dict) else []
    return [w for w in where if isinstance(w, str)] if isinstance(where, list) else []
