"""Read dependency declarations, with line numbers, from structured manifests.

Each reader takes the file's text and returns :class:`Entry` items: a
requirement string, an index URL, or a conda package that is CUDA-only.
``setup.py`` is read with ``ast``; nothing from the project is ever executed.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Literal

import yaml


@dataclass(frozen=True)
class Entry:
    kind: Literal["req", "index", "conda"]
    value: str
    line: int


def _line_of(lines: list[str], needle: str, start: int = 0) -> int:
    """1-based line of the first occurrence of ``needle`` at or after line index ``start``."""
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i + 1
    for i in range(len(lines)):
        if needle in lines[i]:
            return i + 1
    return 1


def _section_start(lines: list[str], header: str) -> int:
    pattern = re.compile(r"^\s*\[+\s*" + re.escape(header) + r"\s*\]+")
    for i, line in enumerate(lines):
        if pattern.match(line):
            return i
    return 0


def pyproject_entries(text: str) -> list[Entry]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"invalid TOML: {exc}") from None
    lines = text.splitlines()
    out: list[Entry] = []

    def add_reqs(reqs: Any, header: str) -> None:
        if not isinstance(reqs, list):
            return
        start = _section_start(lines, header)
        for req in reqs:
            if isinstance(req, str):
                out.append(
                    Entry(
                        "req",
                        req,
                        _line_of(lines, f'"{req}"', start)
                        if f'"{req}"' in text
                        else _line_of(lines, req, start),
                    )
                )

    project = data.get("project", {})
    if isinstance(project, dict):
        add_reqs(project.get("dependencies"), "project")
        optional = project.get("optional-dependencies", {})
        if isinstance(optional, dict):
            for group, reqs in optional.items():
                add_reqs(reqs, "project.optional-dependencies")
                del group
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for reqs in groups.values():
            add_reqs(reqs, "dependency-groups")
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return out
    poetry = tool.get("poetry", {})
    if isinstance(poetry, dict):
        sections: list[tuple[str, Any]] = [("tool.poetry.dependencies", poetry.get("dependencies"))]
        for gname, group in (poetry.get("group") or {}).items():
            if isinstance(group, dict):
                sections.append(
                    (f"tool.poetry.group.{gname}.dependencies", group.get("dependencies"))
                )
        sections.append(("tool.poetry.dev-dependencies", poetry.get("dev-dependencies")))
        for header, deps in sections:
            if not isinstance(deps, dict):
                continue
            start = _section_start(lines, header)
            for name, spec in deps.items():
                if name.lower() == "python":
                    continue
                line = _line_of(lines, name, start)
                out.append(Entry("req", _poetry_to_pep508(name, spec), line))
        for source in poetry.get("source") or []:
            if isinstance(source, dict) and isinstance(source.get("url"), str):
                out.append(Entry("index", source["url"], _line_of(lines, source["url"])))
    uv = tool.get("uv", {})
    if isinstance(uv, dict):
        for index in uv.get("index") or []:
            if isinstance(index, dict) and isinstance(index.get("url"), str):
                out.append(Entry("index", index["url"], _line_of(lines, index["url"])))
        for key in ("index-url", "extra-index-url", "find-links"):
            value = uv.get(key)
            urls = value if isinstance(value, list) else [value]
            for url in urls:
                if isinstance(url, str):
                    out.append(Entry("index", url, _line_of(lines, url)))
        for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
            add_reqs(uv.get(key), "tool.uv")
    return out


def _poetry_to_pep508(name: str, spec: Any) -> str:
    """Poetry's ``name = "^1.2"`` / table form, reduced to a PEP 508 string."""
    version = ""
    extras: list[str] = []
    if isinstance(spec, str):
        version = spec
    elif isinstance(spec, dict):
        version = str(spec.get("version", ""))
        extras = [str(e) for e in spec.get("extras", [])]
        if "url" in spec:
            return f"{name} @ {spec['url']}"
    version = version.strip()
    if version in ("", "*"):
        pep = ""
    elif version[0] in "^~":
        pep = ">=" + version[1:].lstrip("=")
    elif version[0].isdigit():
        pep = "==" + version
    else:
        pep = version
    extra = f"[{','.join(extras)}]" if extras else ""
    return f"{name}{extra}{pep}"


def setup_cfg_entries(text: str) -> list[Entry]:
    """``install_requires`` and ``extras_require`` of setup.cfg (dangling-list syntax)."""
    out: list[Entry] = []
    section = ""
    key = ""
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].split(";", 1)[0] if raw.lstrip().startswith(("#", ";")) else raw
        stripped = line.strip()
        header = re.match(r"^\[(.+)\]\s*$", stripped)
        if header:
            section, key = header.group(1).strip(), ""
            continue
        if not stripped:
            continue
        if not raw[:1].isspace() and "=" in line:
            key, _, value = line.partition("=")
            key = key.strip()
            first = re.split(r"\s[#;]", value.strip(), maxsplit=1)[0].strip()
            if _is_req_key(section, key) and first:
                out.append(Entry("req", first, no))
            continue
        if raw[:1].isspace() and _is_req_key(section, key):
            value = re.split(r"\s[#;]", stripped, maxsplit=1)[0].strip()
            if value:
                out.append(Entry("req", value, no))
    return out


def _is_req_key(section: str, key: str) -> bool:
    if section == "options" and key in ("install_requires", "setup_requires"):
        return True
    return section == "options.extras_require" and bool(key)


def setup_py_entries(text: str) -> list[Entry]:
    """Requirement strings in ``setup(install_requires=..., extras_require=...)``."""
    tree = ast.parse(text)
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for tgt in node.targets:
                if isinstance(tgt, ast.Name):
                    names[tgt.id] = node.value
    out: list[Entry] = []

    def strings(node: ast.expr | None, depth: int = 0) -> None:
        if node is None or depth > 4:
            return
        if isinstance(node, ast.Name) and node.id in names:
            strings(names[node.id], depth + 1)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(Entry("req", node.value, node.lineno))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                strings(elt, depth + 1)
        elif isinstance(node, ast.Dict):
            for value in node.values:
                strings(value, depth + 1)
        elif isinstance(node, ast.BinOp):
            strings(node.left, depth + 1)
            strings(node.right, depth + 1)

    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if fname != "setup":
            continue
        for kw in call.keywords:
            if kw.arg in ("install_requires", "extras_require", "setup_requires"):
                strings(kw.value)
    return out


_CONDA_CUDA = re.compile(
    r"^(?:[\w-]+::)?(cudatoolkit|cudatoolkit-dev|pytorch-cuda|cuda|cuda-[\w-]+|cudnn|nccl|"
    r"libcublas|libcusparse|libcurand|libcufft|cupy-cuda\w*|tensorrt)\b",
    re.I,
)
_CONDA_RENAME = {"pytorch": "torch", "pytorch-gpu": "torch"}


def conda_entries(text: str) -> list[Entry]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        return []
    lines = text.splitlines()
    out: list[Entry] = []
    for channel in data.get("channels") or []:
        if isinstance(channel, str) and channel.strip().lower() == "nvidia":
            line = _line_of(lines, "nvidia")
            out.append(Entry("conda", "the nvidia channel serves CUDA packages", line))
    for dep in data.get("dependencies") or []:
        if isinstance(dep, str):
            line = _line_of(lines, dep)
            if _CONDA_CUDA.match(dep.strip()):
                out.append(Entry("conda", f"{dep} is part of the CUDA stack", line))
                continue
            name, spec = _conda_to_pep508(dep)
            out.append(Entry("req", _CONDA_RENAME.get(name.lower(), name) + spec, line))
        elif isinstance(dep, dict):
            for item in dep.get("pip") or []:
                if not isinstance(item, str):
                    continue
                line = _line_of(lines, item)
                if item.startswith(
                    ("--index-url", "--extra-index-url", "-i ", "-f ", "--find-links")
                ):
                    out.append(Entry("index", item.split(None, 1)[-1].lstrip("="), line))
                elif not item.startswith("-"):
                    out.append(Entry("req", item, line))
    return out


def _conda_to_pep508(dep: str) -> tuple[str, str]:
    dep = dep.split("::", 1)[-1].strip()
    match = re.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", dep)
    if not match:
        return dep, ""
    name, rest = match.group(1), match.group(2).strip()
    if not rest:
        return name, ""
    rest = rest.split()[0]
    if rest[0] == "=" and not rest.startswith("=="):
        version = rest.lstrip("=").split("=")[0]
        return name, ("==" + version) if "*" not in version else ""
    return name, rest if rest[0] in "<>=!~" else ""
