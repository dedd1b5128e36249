"""Read dependency declarations, with line numbers, from structured manifests.

Each reader takes the file's text and returns :class:`Entry` items: a
requirement string, an index URL, a conda package that is CUDA-only, or a
line of a conda ``pip:`` section (checked like a requirements-file line).
``setup.py`` is read with ``ast`` (:mod:`gpuport.scan.rules.deps.setup_py`);
nothing from the project is ever executed. :class:`Entry` and the pip option
table live in :mod:`gpuport.scan.rules.deps.readers_common`; all are importable
from here.

An explicit uv index pinned under a dependency group is a default install's when a plain
``uv sync`` installs that group (``dev``, or ``[tool.uv] default-groups``, with the groups
they include; forty-second re-run F4): only extras and other groups are opt-in.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement

from gpuport import textre
from gpuport.safeparse import ParseError, toml_table
from gpuport.scan.rules.base import physical_lines
from gpuport.scan.rules.deps.locate import (
    NEAR,
    WHOLE_FILE_SEARCHES,
    InOrder,
    line_of,
    quoted_from,
    quoted_line,
)
from gpuport.scan.rules.deps.readers_common import PIP_OPTIONS, Entry, split_pip_option
from gpuport.scan.rules.deps.setup_py import setup_py_entries
from gpuport.yamlnodes import has_merge

__all__ = [
    "PIP_OPTIONS",
    "Entry",
    "conda_entries",
    "pyproject_entries",
    "setup_cfg_entries",
    "setup_py_entries",
    "split_pip_option",
]


_HEADER = textre.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _norm_header(text: str) -> str:
    return textre.sub(r"[\s\"']", "", text)


_HEADERS: list[tuple[list[str], dict[str, int]]] = []  # the last file's table of headers


def _find_section(lines: list[str], header: str) -> int | None:
    """0-based index of the ``[header]`` (or ``[[header]]``) line, or None. The headers of a
    file are read in one pass and kept for its next questions (a pass per Poetry group or
    dependency group was quadratic: thirteenth re-run, 200 KB of groups, 66 s)."""
    cached = _HEADERS[0] if _HEADERS else None  # one read: threads may replace the entry
    if cached is None or cached[0] is not lines:
        index: dict[str, int] = {}
        for i, line in enumerate(lines):
            match = _HEADER.match(line)
            if match:
                index.setdefault(_norm_header(match.group(1)), i)
        cached = (lines, index)
        _HEADERS[:] = [cached]
    return cached[1].get(_norm_header(header))


def _section_start(lines: list[str], header: str) -> int:
    return _find_section(lines, header) or 0


def _section_end(lines: list[str], start: int) -> int:
    """Index of the first header line after ``start`` (or the number of lines)."""
    for i in range(start + 1, len(lines)):
        if _HEADER.match(lines[i]):
            return i
    return len(lines)


def _key_line(lines: list[str], key: str, start: int, end: int) -> int | None:
    """0-based index of the line in ``[start, end)`` that assigns ``key`` (bare or quoted)."""
    forms = (f'"{key}"', f"'{key}'", key)  # plain string tests: a regex per key is slow
    for i in range(start, end):
        if key not in lines[i]:
            continue
        text = lines[i].lstrip()
        for form in forms:
            if text.startswith(form) and text[len(form) :].lstrip().startswith("="):
                return i
    return None


def _array_table_lines(lines: list[str], idx: int) -> list[int]:
    """1-based lines where each inline table of the array assigned on line ``idx`` opens."""
    out: list[int] = []
    depth = 0
    for i in range(idx, len(lines)):
        text = lines[i]
        j = text.find("=") + 1 if i == idx else 0
        quote = ""
        while j < len(text):
            ch = text[j]
            if quote:
                if ch == "\\" and quote == '"':
                    j += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break
            elif ch in "[{":
                if ch == "{" and depth == 1:
                    out.append(i + 1)
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth <= 0:
                    return out
            j += 1
    return out


# --- pyproject.toml -----------------------------------------------------------------


def pyproject_entries(text: str) -> list[Entry]:
    try:
        data = toml_table(text)
    except ParseError as exc:
        raise ValueError(f"invalid TOML: {exc}") from None
    lines = physical_lines(text)
    out: list[Entry] = []

    # per section: where it starts, where the last item ended, whole-file searches left. The
    # arrays of one table (extras, dependency groups) are in file order too, so they share
    # it: a fresh start and budget per extra was quadratic (thirteenth re-run: 4,000 extras,
    # 200 KB, 64 s)
    state: dict[str, tuple[int, int, int, int]] = {}

    def add_reqs(reqs: Any, header: str) -> None:
        if not isinstance(reqs, list):
            return
        if header not in state:
            first = _section_start(lines, header)
            state[header] = (first, first, 0, WHOLE_FILE_SEARCHES)
        start, hint, col, searches = state[header]
        # an array is in file order: look from where the last item ended; an item not written
        # as it reads (escapes) is looked for in the whole file, a few times; past these, it
        # gets the line of the item before it (escaped strings on one line were quadratic)
        for req in reqs:
            if isinstance(req, str):
                near = quoted_from(lines, req, hint, col)
                if near is not None:
                    hint, col = near
                    line = hint + 1
                elif searches > 0:
                    searches -= 1
                    line = quoted_line(lines, req, start)
                    if line - 1 > hint:
                        hint, col = line - 1, 0
                else:
                    line = hint + 1
                out.append(Entry("req", req, line))
        state[header] = (start, hint, col, searches)

    build = data.get("build-system", {})
    if isinstance(build, dict):
        add_reqs(build.get("requires"), "build-system")
    project = data.get("project", {})
    if isinstance(project, dict):
        add_reqs(project.get("dependencies"), "project")
        optional = project.get("optional-dependencies", {})
        if isinstance(optional, dict):
            for reqs in optional.values():
                add_reqs(reqs, "project.optional-dependencies")
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for reqs in groups.values():
            add_reqs(reqs, "dependency-groups")
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return out
    poetry = tool.get("poetry", {})
    if isinstance(poetry, dict):
        out.extend(_poetry_entries(poetry, lines))
    uv = tool.get("uv", {})
    if isinstance(uv, dict):
        urls_in_order = InOrder(lines)
        for index in uv.get("index") or []:
            if isinstance(index, dict) and isinstance(index.get("url"), str):
                line = urls_in_order.line(index["url"])
                note = _explicit(index, uv, data.get("dependency-groups"))
                out.append(Entry("index", index["url"], line, note=note))
        for key in ("index-url", "extra-index-url", "find-links"):
            value = uv.get(key)
            urls = value if isinstance(value, list) else [value]
            for url in urls:
                if isinstance(url, str):
                    out.append(Entry("index", url, urls_in_order.line(url)))
        for key in ("dev-dependencies", "constraint-dependencies", "override-dependencies"):
            add_reqs(uv.get(key), "tool.uv")
    return out


def _explicit(index: dict[str, Any], uv: dict[str, Any], groups: Any) -> str:
    """Why an explicit uv index (``explicit = true``: only the packages ``[tool.uv.sources]``
    pins to it use it) is no default install's -- every pin to it under an extra (curobo's
    ``{ index = "pytorch-cu130", extra = "cu13-torch" }``) or a group ``uv sync`` leaves out,
    or no pin at all; "" when a pin applies to every install (or to a marker gpuport does not
    judge). A group is no extra: uv installs its default groups (``dev`` unless
    ``[tool.uv] default-groups`` says otherwise, and the groups they include) on a plain
    ``uv sync``/``uv run`` (forty-second re-run F4)."""
    name = index.get("name")
    if index.get("explicit") is not True or not isinstance(name, str):
        return ""
    sources = uv.get("sources")
    default = _default_groups(uv, groups)
    extras: set[str] = set()
    for spec in sources.values() if isinstance(sources, dict) else ():
        for pin in spec if isinstance(spec, list) else [spec]:
            if isinstance(pin, dict) and pin.get("index") == name:
                extra, group = pin.get("extra"), pin.get("group")
                if isinstance(extra, str) and extra:
                    extras.add(f"{extra} extra")
                elif isinstance(group, str) and group and default is not None:
                    if _normal_group(group) in default:
                        return ""  # installed by a plain ``uv sync``
                    extras.add(f"{group} group")
                else:
                    return ""
    if not extras:
        return "an explicit uv index that no [tool.uv.sources] entry uses"
    return f"an explicit uv index only the {', '.join(sorted(extras))}(s) use"


def _normal_group(name: str) -> str:
    """A group's name as uv compares it (PEP 503: runs of ``-_.`` are one ``-``, lower case)."""
    out = "-".join(p for p in name.lower().replace("_", "-").replace(".", "-").split("-") if p)
    return out if out else name


def _default_groups(uv: dict[str, Any], groups: Any) -> set[str] | None:
    """The dependency groups a plain ``uv sync`` installs (normalised names), the groups they
    include (``{ include-group = "x" }``) with them; None when every group is (``"all"``) or
    the setting is not one gpuport reads."""
    chosen = uv.get("default-groups", ["dev"])
    if chosen == "all" or not isinstance(chosen, list):
        return None
    if not all(isinstance(g, str) for g in chosen):
        return None
    table = (
        {_normal_group(k): v for k, v in groups.items() if isinstance(k, str)}
        if isinstance(groups, dict)
        else {}
    )
    out: set[str] = set()
    todo = [_normal_group(g) for g in chosen]
    while todo:
        group = todo.pop()
        if group in out:
            continue
        out.add(group)
        items = table.get(group)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                inc = item.get("include-group")
                if not isinstance(inc, str):
                    return None  # a table gpuport does not read
                todo.append(_normal_group(inc))
    return out


def _poetry_entries(poetry: dict[str, Any], lines: list[str]) -> Iterator[Entry]:
    sections: list[tuple[str, Any]] = [("tool.poetry.dependencies", poetry.get("dependencies"))]
    groups = poetry.get("group") or {}
    if isinstance(groups, dict):
        for gname, group in groups.items():
            if isinstance(group, dict):
                header = f"tool.poetry.group.{gname}.dependencies"
                sections.append((header, group.get("dependencies")))
    sections.append(("tool.poetry.dev-dependencies", poetry.get("dev-dependencies")))
    for header, deps in sections:
        if not isinstance(deps, dict):
            continue
        found = _find_section(lines, header)
        start = found if found is not None else 0
        end = _section_end(lines, start) if found is not None else len(lines)
        hint = start  # keys are in file order: look near the last one first
        for name, spec in deps.items():
            if name.lower() == "python":
                continue
            idx = _key_line(lines, name, hint, min(end, hint + NEAR))
            if idx is None:
                idx = _key_line(lines, name, start, end)
            else:
                hint = idx
            if idx is not None:
                line = idx + 1
            else:  # [tool.poetry.dependencies.torch] sub-table, or not found
                sub = _find_section(lines, f"{header}.{name}")
                line = sub + 1 if sub is not None else line_of(lines, name, start)
            if isinstance(spec, list):  # multiple constraints: one table each
                tables = _array_table_lines(lines, idx) if idx is not None else []
                for i, item in enumerate(spec):
                    at = tables[i] if i < len(tables) else line
                    yield Entry("req", _poetry_to_pep508(name, item), at)
            else:
                yield Entry("req", _poetry_to_pep508(name, spec), line)
    sources = InOrder(lines)
    for source in poetry.get("source") or []:
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            yield Entry("index", source["url"], sources.line(source["url"]))


def _poetry_to_pep508(name: str, spec: Any) -> str:
    """Poetry's ``name = "^1.2"`` / table form, reduced to a PEP 508 string."""
    version = ""
    extras: list[str] = []
    markers = ""
    if isinstance(spec, str):
        version = spec
    elif isinstance(spec, dict):
        version = str(spec.get("version", ""))
        extras = [str(e) for e in spec.get("extras", [])]
        if isinstance(spec.get("markers"), str):
            markers = spec["markers"].strip()
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
    out = f"{name}{extra}{pep}"
    if markers:
        try:
            Requirement(f"{out} ; {markers}")
        except InvalidRequirement:
            return out  # a marker packaging cannot read: keep the requirement itself
        out = f"{out} ; {markers}"
    return out


# --- setup.cfg ----------------------------------------------------------------------


def setup_cfg_entries(text: str) -> list[Entry]:
    """``install_requires`` and ``extras_require`` of setup.cfg (dangling-list syntax)."""
    out: list[Entry] = []
    section = ""
    key = ""
    for no, raw in enumerate(physical_lines(text), 1):
        line = raw.split("#", 1)[0].split(";", 1)[0] if raw.lstrip().startswith(("#", ";")) else raw
        stripped = line.strip()
        header = textre.match(r"^\[(.+)\]\s*$", stripped)
        if header:
            section, key = header.group(1).strip(), ""
            continue
        if not stripped:
            continue
        if not raw[:1].isspace() and "=" in line:
            key, _, value = line.partition("=")
            key = key.strip()
            first = textre.split(r"\s[#;]", value.strip(), maxsplit=1)[0].strip()
            if _is_req_key(section, key) and first:
                out.append(Entry("req", first, no))
            continue
        if raw[:1].isspace() and _is_req_key(section, key):
            value = textre.split(r"\s[#;]", stripped, maxsplit=1)[0].strip()
            if value:
                out.append(Entry("req", value, no))
    return out


def _is_req_key(section: str, key: str) -> bool:
    if section == "options" and key in ("install_requires", "setup_requires"):
        return True
    return section == "options.extras_require" and bool(key)


# --- conda environment.yml ----------------------------------------------------------

_CONDA_CUDA = textre.compile(
    r"^(cudatoolkit|cudatoolkit-dev|pytorch-cuda|cuda|cuda-[\w-]+|cudnn|nccl|"
    r"libcublas|libcusparse|libcurand|libcufft|cupy-cuda\w*|tensorrt)\b",
    re.I,
)
_CONDA_CUDA_BUILD = textre.compile(r"cuda|(?<![a-z])cu\d{2,3}", re.I)
_CONDA_RENAME = {"pytorch": "torch", "pytorch-gpu": "torch"}


def _nvidia_channel(channel: str) -> bool:
    chan = channel.strip().lower().rstrip("/")
    return chan.startswith("nvidia") or bool(textre.search(r"conda\.anaconda\.org/nvidia\b", chan))


def _item_line(lines: list[str], value: str, start: int = 0) -> int:
    """Line of a YAML block-list item ``- value``, else of ``value`` anywhere."""
    return _item_at(lines, value, start) or line_of(lines, value, start)


def _item_at(lines: list[str], value: str, start: int) -> int | None:
    for i in range(start, len(lines)):
        if value in lines[i] and _is_item(lines[i], value):
            return i + 1
    return None


def _is_item(line: str, value: str) -> bool:
    """Whether ``line`` is ``- value``, ``- "value"`` or ``- 'value'``, maybe with a comment
    (plain string tests: compiling a regex per item made a long list slow)."""
    text = line.lstrip()
    if not text.startswith("-"):
        return False
    text = text[1:].lstrip()
    for quote in ('"', "'", ""):
        form = quote + value + quote
        if text.startswith(form):
            rest = text[len(form) :].lstrip()
            if not rest or rest.startswith("#"):
                return True
    return False


class _Items:
    """Lines of a list's items, looked for from the previous item's line on (a list is in
    file order), so a long list costs linear time, not a search of the file per item."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.hint = 0

    def line(self, value: str) -> int:
        found = _item_at(self.lines, value, self.hint)
        if found is None:
            return _item_line(self.lines, value)
        self.hint = found - 1
        return found


def conda_entries(text: str) -> list[Entry]:
    # libyaml's safe loader where PyYAML has it: the pure-Python one is 10x slower
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is not None and has_merge(node):
            # PyYAML copies each merged mapping into every mapping that merges it: a chain
            # of merges is quadratic (twentieth re-run); environment files do not use them
            raise ValueError("YAML merge keys (<<) are not followed in an environment file")
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise ValueError(f"invalid YAML: {physical_lines(str(exc))[0]}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        return []
    lines = physical_lines(text)
    out: list[Entry] = []
    channels = [
        Entry("conda", f"the {channel} channel serves CUDA packages", line)
        for channel, line in _listed(data, node, "channels", text, lines)
        if _nvidia_channel(channel)
    ]
    deps = data.get("dependencies")
    for dep, line in _listed(data, node, "dependencies", text, lines):
        out.extend(_conda_dep(dep, line))
    if not any(e.kind == "conda" for e in out):
        # the channel is a finding only where no CUDA package it serves is one: `- nvidia`
        # beside `pytorch-cuda=12.1` is one construct (DPVO; issue 24, nineteenth sample)
        out[:0] = channels
    dep_nodes = _value_node(node, "dependencies")
    if isinstance(deps, list):
        # one `pip:` mapping listed many times (`- *p`) is one Python dict: read once, as its
        # entries sit at one place (twentieth re-run F8: 500 aliases of 500 packages, 17 KB,
        # made 250,000 findings)
        read: set[int] = set()
        for i, dep in enumerate(deps):
            if isinstance(dep, dict) and id(dep) not in read:
                read.add(id(dep))
                item = dep_nodes.value[i] if isinstance(dep_nodes, yaml.SequenceNode) else None
                for pip, line in _listed(dep, item, "pip", text, lines):
                    out.append(Entry("pip", pip.strip(), line))
    return out


def _value_node(node: Any, key: str) -> Any:
    """The value node of ``key`` in a mapping node (the last one, as the loaded dict has)."""
    if not isinstance(node, yaml.MappingNode):
        return None
    found = None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            found = v
    return found


_LINE_BREAK = textre.compile(r"\r\n|\r|\n")  # physical_lines' breaks


@lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    """Where each line of ``text`` starts, once per text: YAML also breaks lines at U+2028
    and U+0085, so they count as editors count them (a table per `- pip:` list was quadratic:
    thirteenth re-run, 100 KB of such lists, 103 s)."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


def _listed(
    data: dict[Any, Any], node: Any, key: str, text: str, lines: list[str]
) -> Iterator[tuple[str, int]]:
    """The strings of the list ``data[key]`` with their lines, from the YAML nodes (a search
    of the text per item made a long list, or a list on one line, quadratic). A value that is
    not a list lists nothing."""
    values = data.get(key)
    if not isinstance(values, list):
        return
    seq = _value_node(node, key)
    marks = seq.value if isinstance(seq, yaml.SequenceNode) else []
    items = _Items(lines)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            continue
        if len(marks) == len(values):
            yield value, bisect_right(_line_starts(text), marks[i].start_mark.index)
        else:  # a merged or odd document: look for it in the text
            yield value, items.line(value)


def _conda_dep(dep: str, line: int) -> Iterator[Entry]:
    channel, _, spec = dep.strip().rpartition("::")
    if _CONDA_CUDA.match(spec.strip()):
        yield Entry("conda", f"{dep} is part of the CUDA stack", line)
        return
    if channel and _nvidia_channel(channel):
        yield Entry("conda", f"{dep} comes from the nvidia channel", line)
        return
    name, pep = _conda_to_pep508(dep)
    match = textre.match(r"^\s*[A-Za-z0-9_.-]+(.*)$", spec)
    if match and _CONDA_CUDA_BUILD.search(match.group(1)):
        yield Entry("conda", f"CUDA build of {name}", line)
    yield Entry("req", _CONDA_RENAME.get(name.lower(), name) + pep, line)


def _conda_to_pep508(dep: str) -> tuple[str, str]:
    dep = dep.rsplit("::", 1)[-1].strip()
    match = textre.match(r"^([A-Za-z0-9_.-]+)\s*(.*)$", dep)
    if not match:
        return dep, ""
    name, rest = match.group(1), match.group(2).strip()
    if not rest:
        return name, ""
    rest = rest.split()[0]
    if rest[0] == "=" and not rest.startswith("=="):
        version = rest.lstrip("=").split("=")[0]
        return name, ("==" + version) if "*" not in version else ""
    rest = textre.split(r"(?<=[\w.*])=(?!=)", rest, maxsplit=1)[0]  # drop "=build"
    return name, rest if rest[0] in "<>=!~" else ""
