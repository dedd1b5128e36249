"""Kernel sources that no build of the project names.

A setup.py names the sources of each extension it builds, and only those are compiled.
vattention's ``pod_attn/setup.py`` lists 22 of the ``.cu`` kernels beside it; the 16 it does
not list (variants ``generate_kernels.py`` wrote and nobody added, two commented out of the
list) are not compiled by any build of the project, so their findings are not blockers of it
(issue 24, twenty-first sample: 18 findings in its population). Such a source is "not
compiled": its findings are lowered to info with the reason, and so are the headers that only
such sources include.

Conservative by construction: a source counts as named when its file name, or its name
without the suffix (a Makefile's ``kernel.o``), occurs as a word in any build file, Python
file or shell script of the project (comment lines of Python, Makefiles and scripts aside) or
in another native file (``#include "kernel.cu"``, JIT code), and nothing is said

* unless a setup.py of the project builds extensions, or a Makefile compiles,
* in a project with CMake, or any other build system gpuport does not read (meson, Bazel,
  SCons, Cargo, premake, xmake, .mk include files),
* in a project where a build file, or a Python file that builds (``cpp_extension``,
  ``Extension``, ``nvcc`` ...), makes a source name at run time: a glob
  (``glob("*.cu")``, ``$(wildcard``), a listing (``os.listdir``), a formatted or joined name
  (``f"fwd_{hdim}.cu"``, ``name + ".cu"``, ``endswith(".cu")``), or imports a project module
  that makes names (FlashAttention's setup.py forms every kernel's name in a loop),
* for the folder of a build that reads a file whose name it does not spell out
  (``open(path)``) or that the project does not hold; a file it reads that the project holds
  (``open("kernels.txt")``: a source list kept as data, fortieth re-run F6) is searched for
  the names like any build file,
* in a project with an include directive split across lines (``#include "k\\`` newline
  ``ernel.cu"``: its words are not the name),
* past :data:`MOST_BYTES` of Python and scripts to read, or :data:`MOST_ENTRIES` files.

Text only, through the file layer; nothing is compiled or run.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeGuard

from gpuport import fileio, pyparse, textre
from gpuport.scan.project.files import Candidate, Skip, classify, iter_entries
from gpuport.scan.project.unincluded import SPLICED
from gpuport.scan.rules.base import FileKind

__all__ = ["unnamed_sources"]

_SOURCES = (".cu", ".cpp", ".cc", ".cxx", ".c++", ".hip")
_SUFFIX = r"\.(?:cu|cpp|cc|cxx|c\+\+|hip|c)"
_WORD = textre.compile(r"[\w.+-]+")
#: other build systems, whose lists gpuport does not read: say nothing
_OTHER_BUILDS = textre.compile(
    r"^(?:meson\.build|meson_options\.txt|build|build\.bazel|workspace|module\.bazel"
    r"|sconstruct|sconscript|build\.rs|cargo\.toml|premake\d*\.lua|xmake\.lua|.*\.mk"
    r"|.*\.bzl|.*\.vcxproj|.*\.sln|build\.ninja|.*\.gyp|binding\.gyp|justfile)$",
    re.I,
)
_SCRIPTS = (".sh", ".bash", ".zsh", ".ksh", ".bat", ".cmd", ".ps1")
#: a source name made at run time: a glob or a pattern (`*.cu`, `%.cu` outside a Makefile's
#: pattern rule), a formatted name (`{hdim}.cu`, `$(NAME).cu`, `${x}.cu`), a bare suffix
#: (`+ ".cu"`, `endswith(".cu")`), a listing of a folder
_MADE = textre.compile(
    r"[*{}$)\]][^\s\"'/]*" + _SUFFIX + r"\b"
    r"|[\"']" + _SUFFIX + r"[\"']"
    r"|\b(?:glob|iglob|rglob|listdir|scandir|iterdir|walk|wildcard|GLOB(?:_RECURSE)?)\b"
    r"|\$\(shell\b|\bfind\s+\S+\s+-name\b"
)
#: a Makefile pattern rule (`%.o: %.cu`): compiles what an object list names, by stem
_PATTERN_RULE = textre.compile(r"^[^\n#]*%\.\w+[ \t]*:[^\n]*$", re.M)
#: a pattern rule whose target puts words around the stem (fastmoe's tests: `test_% : %.cu`
#: builds prune_gate.cu for `test_prune_gate`): the stem is not a word of its own there
_AFFIXED = textre.compile(
    r"^[ \t]*[^\s:#=]*(?:\w%|%\w)[^\s:#=]*[ \t]*:[^\n]*%" + _SUFFIX + r"\b", re.M
)
#: a Python file that builds or compiles (not a generator that only writes kernels)
_BUILDS = textre.compile(
    r"\b(?:cpp_extension|CUDAExtension|CppExtension|Extension|ext_modules|nvcc|hipcc|nvrtc"
    r"|load_inline|RawModule|SourceModule|RawKernel|jit|JIT)\b"
)
_FROM = textre.compile(r"^[ \t]*from[ \t]+\.*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = textre.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.M)
_EXTENSIONS = textre.compile(r"\b(?:CUDAExtension|CppExtension|Extension|ext_modules)\b")
_COMPILES = textre.compile(
    r"\b(?:nvcc|hipcc|g\+\+|gcc|clang\+\+|clang|icpx)\b|\$[({](?:CXX|CC|NVCC|HIPCC|COMPILER)[)}]"
)
#: a run of `../` (or `..\\`): how far above its folder a Makefile or script reaches
_UP = textre.compile(r"(?:\.\.[/\\])+")
_COMMENT_LINE = textre.compile(r"^[ \t]*(?:#|//|REM\b|::)[^\n]*", re.M)
#: a call that reads a file by its path (``open``, ``Path(...).read_text()``, numpy's and
#: pandas' loaders, configparser's ``read``): one that names no file leaves its sources unknown
_READERS = frozenset(
    {
        "open",
        "read_text",
        "read_bytes",
        "loadtxt",
        "genfromtxt",
        "fromfile",
        "read",
        "read_csv",
        "read_table",
        "read_json",
        "read_fwf",
        "read_excel",
    }
)
_READS = textre.compile(r"\b(?:" + "|".join(sorted(_READERS)) + r")\b")
#: readers whose name is also a handle's method (``f.read()``): a reader only given a path
_ARGUED = frozenset({"read"})
#: code files are searched as code, not as data a build reads
_CODE = (*_SOURCES, ".c", ".h", ".hpp", ".cuh", ".hh", ".hxx", ".inl", ".py", ".pyx")
#: a file a setup.py reads for its metadata, not its sources, where the project lacks it
_META = textre.compile(
    r"^(?:readme|licen[cs]e|copying|changelog|changes|history|authors|contributors|notice"
    r"|version|about|requirements|__init__|__version__|_version|__about__)\b[\w.-]*$"
    r"|\.(?:md|rst)$",
    re.I,
)
MOST_BYTES = 32 << 20
MOST_SOURCES = 5_000
MOST_ENTRIES = 50_000
_MAX_BYTES = 1 << 20


def _made(text: str, makefile: bool) -> bool:
    """Whether ``text`` makes a source name at run time (see :data:`_MADE`)."""
    if makefile:
        text = _PATTERN_RULE.sub("", text)
    return _MADE.search(_COMMENT_LINE.sub("", text)) is not None


def _stem(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]


def _pattern(stems: set[str]) -> re.Pattern[str]:
    """A mention of one of ``stems`` as a word of its own, its suffix or any other after it
    (``kernel``, ``kernel.cu``, ``kernel.o``): one linear pass per text, whatever the count
    of sources (a set of every word of every native file took seconds: vattention's 2,284
    driver files, issue 24)."""
    alternatives = "|".join(re.escape(s) for s in sorted(stems, key=len, reverse=True))
    return textre.compile(r"(?<![\w.+-])(?:" + alternatives + r")(?![\w+-])")


def unnamed_sources(
    root: Path,
    candidates: Sequence[Candidate],
    native: Mapping[str, str],
    build_files: Mapping[str, str],
) -> dict[str, str]:
    """Native sources of the project no build names -> why they are not compiled."""
    sources = [rel for rel in native if rel.lower().endswith(_SOURCES)]
    if not sources or not root.is_dir():
        return {}
    kinds = {rel: classify(rel) for rel in build_files}
    if FileKind.CMAKE in kinds.values() or not any(
        (kind is FileKind.SETUP_PY and _EXTENSIONS.search(build_files[rel]))
        or (kind is FileKind.MAKEFILE and _COMPILES.search(build_files[rel]))
        for rel, kind in kinds.items()
    ):
        return {}
    if any(SPLICED.search(t) for t in native.values()):
        return {}
    stems = {_stem(rel) for rel in sources}
    if len(stems) > MOST_SOURCES:
        return {}
    mention = _pattern(stems)
    named: set[str] = set()
    unknown: set[str] = set()  # folders whose sources a build may name at run time
    for rel, text in build_files.items():
        if kinds[rel] is FileKind.MAKEFILE and _AFFIXED.search(text):
            unknown.add(_reach(rel, text))  # `test_% : %.cu`: names inside other words
        if _made(text, kinds[rel] is FileKind.MAKEFILE):
            if kinds[rel] is not FileKind.MAKEFILE:
                return {}
            unknown.add(_reach(rel, text))  # a Makefile's `$(wildcard`, `$(shell`
        named |= set(mention.findall(_COMMENT_LINE.sub("", text)))
    texts = _other_texts(root, candidates, unknown)
    if texts is None:
        return {}
    imported: set[str] = set()  # modules a build (setup.py, a JIT loader) imports
    # each data file is read and searched once per scan, however often builds name it
    # (20,000 `open("kernels.txt")` lines read it 20,000 times: fortyfirst re-run F12)
    read: dict[str, str | None] = {}
    searched: set[str] = set()
    seen: set[str] = set()
    for rel, text in [*build_files.items(), *texts.items()]:
        if rel in seen:
            continue
        seen.add(rel)
        if rel.endswith(".py") and _BUILDS.search(text):
            imported |= _imports(text)
            data = _data_read(root, rel, text, read)
            if data is None:
                unknown.add(_reach(rel, text))  # a file read that may list its sources
                continue
            for held in data:
                body = read.get(held)
                if held not in searched and body is not None:
                    searched.add(held)
                    named |= set(mention.findall(body))
    for rel, text in texts.items():
        if _made(text, False):
            module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            parts = module.split(".")
            if _BUILDS.search(text) or any(
                ".".join(parts[i:]) in imported for i in range(len(parts))
            ):
                return {}  # a build that forms names, or one importing a module that does
        named |= set(mention.findall(_COMMENT_LINE.sub("", text)))
    in_native: dict[str, int] = {}  # stem -> how many native files mention it
    own: dict[str, set[str]] = {}
    wanted = set(sources)
    for rel, text in native.items():  # `#include "k.cu"`, JIT code: no comment left out
        found = set(mention.findall(text))
        if rel in wanted:
            own[rel] = found
        for word in found:
            in_native[word] = in_native.get(word, 0) + 1
    out: dict[str, str] = {}
    for rel in sources:
        if any(not folder or rel.startswith(f"{folder}/") for folder in unknown):
            continue
        stem = _stem(rel)
        if stem in named or in_native.get(stem, 0) > (stem in own.get(rel, set())):
            continue  # named by a build, a script, or another native file
        out[rel] = (
            "a source no build of the project names (no setup.py list, Makefile, script or "
            "include mentions it): nothing compiles it"
        )
    return out


def _imports(text: str) -> set[str]:
    """Dotted names a Python text imports, with every prefix (``import a.b`` runs ``a``)."""
    full: set[str] = set()
    for base, names in _FROM.findall(text):
        for name in _WORD.findall(names.replace(",", " ")):
            if name != "as":
                full.add(f"{base}.{name}" if base else name)
        if base:
            full.add(base)
    for names in _IMPORT.findall(text):
        full |= {n for n in _WORD.findall(names.replace(",", " ")) if n != "as"}
    out: set[str] = set()
    for name in full:
        parts = name.strip(".").split(".")
        out |= {".".join(parts[: i + 1]) for i in range(len(parts))}
    return out


def _data_read(root: Path, rel: str, text: str, read: dict[str, str | None]) -> set[str] | None:
    """The project files (rels) the Python build ``rel`` reads as data, their texts put in
    ``read`` (rel -> text, each file read once whatever the count of calls naming it): a
    source list kept as data (``open("kernels.txt")``, ``cfg.read("build.cfg")``,
    ``pd.read_csv("k.csv")``). Any string of the code that names a data file the project
    holds counts as a read of it, whatever call takes it (fortyfirst re-run F13: a
    configparser ``read`` was no known reader). None where a reader (:data:`_READERS`)
    takes a file it does not name, or one the project does not hold and that is no
    metadata file (README, version, requirements), or where ``text`` is not parsed: then its
    sources are not known."""
    try:
        tree = pyparse.parse(text)
    except SyntaxError:
        return set() if _READS.search(text) is None else None
    folder = _folder(rel)
    resolved: dict[str, str | None] = {}  # a path as written -> the project file it names

    def held(path: str) -> str | None:
        if path not in resolved:
            resolved[path] = _project_file(root, folder, path)
        return resolved[path]

    out: set[str] = set()
    for node in pyparse.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if _path_like(value):
            found = held(value)
            if found is not None and not found.lower().endswith(_CODE):
                out.add(found)
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in _READERS or _writes(node):
            continue
        if name in _ARGUED and not _takes_path(node):
            continue  # `f.read()`, `f.read(4096)`: a handle's read, not a file's
        paths = [v for c in ast.walk(node) if _path_like(v := getattr(c, "value", None))]
        if not paths:
            return None  # `open(path)`, `cfg.read(path)`: which file is not written here
        for path in paths:
            found = held(path)
            if found is not None:
                out.add(found)
            elif not _META.search(path.rsplit("/", 1)[-1]):
                return None
    for found in out:
        if found not in read:
            read[found] = fileio.read_text_or_none(root / found, limit=_MAX_BYTES, root=root)
    return out


def _path_like(value: object) -> TypeGuard[str]:
    """Whether a constant may be a file's path (a dot or slash, no space, not long)."""
    return (
        isinstance(value, str)
        and ("." in value or "/" in value)
        and len(value) < 300
        and not any(ch.isspace() for ch in value)
    )


def _takes_path(call: ast.Call) -> bool:
    """Whether a ``read``-like call is given something that may be a path (not nothing,
    not a byte count)."""
    args = [*call.args, *(k.value for k in call.keywords)]
    return any(
        not (isinstance(a, ast.Constant) and isinstance(a.value, int | type(None))) for a in args
    )


def _writes(call: ast.Call) -> bool:
    """Whether an ``open`` call opens its file for writing (``"w"``, ``"a"``, ``"x"``)."""
    modes = [k.value for k in call.keywords if k.arg == "mode"] + call.args[1:2]
    return any(
        isinstance(m, ast.Constant) and isinstance(m.value, str) and bool(set(m.value) & set("wax"))
        for m in modes
    )


def _project_file(root: Path, folder: str, path: str) -> str | None:
    """The project file (its rel) ``path`` names, relative to ``folder``, else to the root,
    or None when the project holds no such file."""
    for base in (folder, ""):
        rel = posixpath.normpath(posixpath.join(base, path))
        if rel.startswith(("../", "/")) or rel in ("..", "."):
            continue
        try:
            if (root / rel).is_file():
                return rel
        except (OSError, ValueError):
            continue
    return None


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _reach(rel: str, text: str) -> str:
    """The folder whose sources a Makefile or script that forms names may compile: its own,
    or the one as many levels up as its longest run of ``../`` ("" for the whole project)."""
    up = max((len(m.group(0)) // 3 for m in _UP.finditer(text)), default=0)
    parts = rel.split("/")[:-1]
    return "/".join(parts[: max(len(parts) - up, 0)])


def _other_texts(
    root: Path, candidates: Sequence[Candidate], unknown: set[str]
) -> dict[str, str] | None:
    """Python files and shell scripts of the project (rel -> text), or None when the reading
    budget is spent (then nothing is said). The folders of other build systems, and of
    scripts that form source names, are added to ``unknown``; one that reaches above its
    folder (``../``) makes the answer None."""
    out: dict[str, str] = {}
    spent = 0
    for c in candidates:
        if c.kind is FileKind.PYTHON:
            text = fileio.read_text_or_none(c.path, limit=_MAX_BYTES, root=root)
            if text is None:
                return None  # a file not read may name a source
            spent += len(text)
            if spent > MOST_BYTES:
                return None
            out[c.rel] = text
    entries = 0
    for item in iter_entries(root):
        entries += 1
        if entries > MOST_ENTRIES:
            return None
        if isinstance(item, Skip):
            continue
        rel, entry = item
        name = rel.rsplit("/", 1)[-1]
        if _OTHER_BUILDS.match(name):
            unknown.add(_folder(rel))
            continue
        if name.lower().endswith(_SCRIPTS):
            text = fileio.read_text_or_none(Path(entry.path), limit=_MAX_BYTES, root=root)
            if text is None:
                return None
            spent += len(text)
            if spent > MOST_BYTES:
                return None
            if _made(text, False):  # `nvcc *.cu`, `for f in kernels/*.cu`
                unknown.add(_reach(rel, text))
            out[rel] = text
    return out
