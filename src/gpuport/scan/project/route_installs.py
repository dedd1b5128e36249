"""What the project's ROCm route installs, for a dependency finding in a manifest.

Two cases lower a GP1xx finding:

* the ROCm requirements file beside the manifest installs the package the finding is about
  (``requirements-rocm.txt`` from a ROCm wheel index beside ``requirements.txt``);
* the manifest is one of a folder of per-feature requirement files, and the project's ROCm
  image installs other files of that folder by name but not this one (LLaMA-Factory's
  docker/docker-rocm/Dockerfile installs ``requirements/deepspeed.txt``,
  ``liger-kernel.txt`` and ``bitsandbytes.txt``, not ``hqq.txt``, ``eetq.txt`` or
  ``fp8.txt``: issue 24, fifteenth sample; gpt-neox's ``requirements-moe.txt`` in the
  ninth). Such a file is an optional feature set the route leaves out (scope extra), unless
  the package manifest reads it (``dependencies = {file = [...]}``, ``open("requirements/x.txt")``
  in setup.py) or a file the route installs includes it (``-r``).

Files are read as text, bounded, inside the project; nothing is run.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuport import textre
from gpuport.scan.finding import Finding
from gpuport.scan.model import RouteEvidence
from gpuport.scan.project.files import read_text
from gpuport.scan.project.routes import is_rocm_variant_name
from gpuport.scan.rules.base import FileKind

__all__ = ["RouteInstalls", "rocm_requirements"]

_ROCM_INDEX = textre.compile(
    r"download\.pytorch\.org/whl/(?:nightly/)?rocm|repo\.radeon\.com", re.I
)
_REQ_NAME = textre.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", re.M)
_PKG_IN_MESSAGE = textre.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:[:=<>!~]|$)")
#: ``-r FILE`` / ``--requirement FILE`` / ``-c FILE`` as pip reads them (a Dockerfile's RUN, a
#: requirements file's own include line)
_REQ_OPTION = textre.compile(r"(?:^|\s)(?:-r|-c|--requirement|--constraint)[ \t=]*([^\s;&|]+)")
_MANIFESTS = ("setup.py", "pyproject.toml", "setup.cfg")
_MAX_READ = 1 << 20


def _norm(name: str) -> str:
    return textre.sub(r"[-_.]+", "-", name).lower()


def rocm_requirements(
    route_files: dict[str, tuple[str, str]],
) -> dict[str, tuple[str, frozenset[str]]]:
    """Folder -> (a requirements file named for ROCm that installs from a ROCm wheel index,
    the packages it names): the ROCm route of the manifests in that folder."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for rel, (kind, text) in sorted(route_files.items()):
        if kind != FileKind.REQUIREMENTS.value or not is_rocm_variant_name(rel):
            continue
        if not _ROCM_INDEX.search(text):
            continue
        names = frozenset(_norm(m.group(1)) for m in _REQ_NAME.finditer(text))
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        out.setdefault(folder, (rel, names))
    return out


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _clean(written: str) -> str:
    """A path as a RUN line writes it, relative: quotes, ``./`` and a leading ``/`` gone."""
    path = written.strip("\"'")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


class RouteInstalls:
    """Answers, per finding, what the route installs (files read once, on first use)."""

    def __init__(
        self,
        beside: dict[str, tuple[str, frozenset[str]]],
        routes: list[RouteEvidence],
        root: Path,
    ) -> None:
        self._beside = beside
        self._images = [r for r in routes if r.counts and r.install and r.kind == "docker"]
        self._root = root
        self._named: dict[str, str] | None = None  # written path -> "Dockerfile:line"
        self._manifests: str | None = None

    def _read(self, rel: str) -> str:
        got = read_text(self._root / rel, _MAX_READ, self._root)
        return got if isinstance(got, str) else ""

    def _installed(self) -> dict[str, str]:
        """Requirement files the ROCm images install by name (and the files those include)
        -> where; paths as written, relative."""
        if self._named is None:
            named: dict[str, str] = {}
            for image in self._images:
                text = self._read(image.path)
                code = textre.sub(r"(?m)^[ \t]*#[^\n]*", "", text)
                line_of = textre.line_finder(code)
                for m in _REQ_OPTION.finditer(code):
                    named.setdefault(_clean(m.group(1)), f"{image.path}:{line_of(m.start())}")
            todo = list(named)
            while todo and len(named) < 200:  # a requirements file's own -r lines
                rel = todo.pop()
                for m in _REQ_OPTION.finditer(self._read(rel)):
                    inc = _clean(f"{_folder(rel)}/{_clean(m.group(1))}".lstrip("/"))
                    if inc not in named:
                        named[inc] = named[rel]
                        todo.append(inc)
            self._named = named
        return self._named

    def _read_by_manifest(self, name: str) -> bool:
        if self._manifests is None:
            self._manifests = "\n".join(self._read(m) for m in _MANIFESTS)
        return name in self._manifests

    def note(self, f: Finding) -> tuple[str, str | None] | None:
        """Why ``f`` (a GP1xx finding) is not the ROCm route's, and the scope it moves to."""
        path = f.location.path
        if not f.rule_id.startswith("GP1") or is_rocm_variant_name(path):
            return None
        folder = _folder(path)
        got = self._beside.get(folder)
        if got is not None:
            rel, names = got
            m = _PKG_IN_MESSAGE.match(f.message)
            if "torch" in names if f.rule_id == "GP104" else m and _norm(m[1]) in names:
                return f"the ROCm route installs it from {rel}", None
        if not self._images or not path.endswith(".txt"):
            return None
        installed = self._installed()
        if path in installed:
            return None
        siblings = sorted(p for p in installed if _folder(p) == folder and p != path)
        name = path.rsplit("/", 1)[-1]
        if not siblings or self._read_by_manifest(name):
            return None
        more = f" and {len(siblings) - 1} more" if len(siblings) > 1 else ""
        return (
            f"an optional feature set: the ROCm image installs {siblings[0]}{more} from this "
            f"folder ({installed[siblings[0]]}), not this file",
            "extra",
        )
