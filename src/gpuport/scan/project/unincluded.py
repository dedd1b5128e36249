"""Headers that no source of the project includes, directly or through other headers.

A header is compiled only as part of a source that includes it. CUDASW4's ``oldkernels.cuh``
(72 of its 138 findings) is named only by ``#include oldkernels.cuh"`` -- a line no compiler
accepts, in a source of a make target the default build leaves out; QuaRot's vendored
FlashInfer ``mma.cuh`` is included only by headers that nothing of its extension includes
(issue 24: twenty-first and fifteenth samples). Such a header is not built by the project, so
its findings are not blockers of it ("not compiled": lowered to info, with the reason).

Conservative by construction: an include counts by its last path part (any header of that
name is taken as included; only a quoted include of a file beside its includer, which the
compiler takes first, counts as that file alone: cuckoo's same-named ``kernel.cuh`` in each
variant folder), a header is reached from every source of the project (``.cu``,
``.cpp``, ``.c`` ..., whatever the build says), and nothing is said

* in a project with no source at all (a header-only library: its headers are its product),
* unless the project builds with a Makefile that compiles or a setup.py that builds
  extensions (builds that list their sources) and has no CMake (whose include folders,
  installs and exports hand headers to other builds too often to tell),
* in a project that includes a macro's value anywhere (``#include KERNEL_HEADER``),
* for a header whose file name any Python file, build file or C/C++ text (outside its
  include lines) of the project mentions (a build file naming a file of that name in its own
  folder names that file only) (a kernel file read and compiled at run time:
  ``cupy.RawModule(code=open("k.cuh").read())``, jittor's JIT code generator writing
  ``#include "misc/cuda_atomic.h"`` into the sources it compiles),
* past :data:`MOST_PY_BYTES` of Python to read for those mentions.

Text only, through the file layer; nothing is compiled or run.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.project.files import Candidate, classify
from gpuport.scan.rules.base import FileKind

__all__ = ["SPLICED", "unincluded_headers"]

_SOURCES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".c++", ".hip", ".cl")
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".tcc", ".ipp")
_WORD = textre.compile(r"[\w.+-]+")
_QUOTED = textre.compile(r'^[ \t]*\#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
#: blanks and one-line block comments (a comment is a space before directives are read)
_GAP = r"(?:[ \t]|/\*[^\n]*?\*/)*"
#: an include a compiler joins across a backslash-newline before reading it (`#include
#: "ker\` / `nels.cuh"`, `#\` / `include`, `#inc\` / `lude`), or the `%:` digraph of `#`
#: (37th re-run F10); a continued `#if ... \` says nothing about includes (GMP's gmp.h
#: turned the rule off for KeyHunt-Cuda; issue 24, twenty-second sample). Comments before
#: the `#` or between it and `include` (`/**/#include "k.cu\`, a comment closing a line
#: above, `#/*` + newline + `*/include`) hide no directive either (39th re-run F8).
SPLICED = textre.compile(
    rf"^(?:[^\n]*\*/)?{_GAP}(?:\#|%:){_GAP}"
    r"(?:i|in|inc|incl|inclu|includ|include\b[^\n]*)?\\[ \t]*\r?$"
    rf"|^(?:[^\n]*\*/)?{_GAP}(?:\#|%:){_GAP}/\*[^\n]*$"
    r"|%:[ \t]*include",
    re.M,
)
#: an include of a macro's value (``#include CUB_HEADER``, ``#include NAME(x)``)
_COMPUTED = textre.compile(r"^[ \t]*\#[ \t]*include[ \t]+[A-Za-z_]\w*[ \t]*(?:\(|/[/*]|$)", re.M)
#: an include directive, well formed or not (CUDASW4's `#include oldkernels.cuh"` names
#: nothing a compiler would read)
_INCLUDE_LINE = textre.compile(r"^[ \t]*\#[ \t]*include\b[^\n]*", re.M)
#: a Makefile that compiles, a setup.py that builds extensions (jittor's setup.py builds
#: none: its C++ is compiled at run time by its own JIT, which includes what it wants)
_COMPILES = textre.compile(
    r"\b(?:nvcc|hipcc|g\+\+|gcc|clang\+\+|clang|icpx)\b|\$[({](?:CXX|CC|NVCC|HIPCC|COMPILER)[)}]"
)
_EXTENSIONS = textre.compile(r"\b(?:CUDAExtension|CppExtension|Extension|ext_modules)\b")
MOST_PY_BYTES = 32 << 20
_MAX_BYTES = 1 << 20


def _reached(
    includes: Mapping[str, frozenset[str]], texts: Mapping[str, str] | None = None
) -> set[str]:
    """The headers (relative paths) some source includes, followed through them. An include
    counts by its last path part (any header of that name) -- except a quoted one that names
    a file beside its includer, which the compiler always takes first: that file alone
    (cuckoo's ``#include "kernel.cuh"`` in ``cuckarood/`` and ``cuckaroom/`` is not
    ``cuckarooz/kernel.cuh``; issue 24, twenty-fifth sample)."""
    by_name: dict[str, list[str]] = {}
    for rel in includes:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    known = set(texts or ()) | set(includes)
    reached: set[str] = set()
    todo = [rel for rel in includes if rel.lower().endswith(_SOURCES)]
    seen = set(todo)
    while todo:
        rel = todo.pop()
        text = (texts or {}).get(rel)
        beside: set[str] = set()  # names this file includes from its own folder
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        for m in _QUOTED.finditer(text) if text and "include" in text else ():
            here = posixpath.normpath(posixpath.join(folder, m.group(1).strip()))
            if here in known and "/" not in m.group(1).strip():
                beside.add(here.rsplit("/", 1)[-1])
                reached.add(here)
                if here not in seen:
                    seen.add(here)
                    todo.append(here)
        for name in includes.get(rel, frozenset()):
            if name in beside:
                continue
            for other in by_name.get(name, ()):
                reached.add(other)
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
    return reached


def unincluded_headers(
    root: Path,
    candidates: Sequence[Candidate],
    native: Mapping[str, str],
    includes: Mapping[str, frozenset[str]],
    build_files: Mapping[str, str],
) -> dict[str, str]:
    """Headers of the project no source includes (transitively) -> why they are not built."""
    if not any(rel.lower().endswith(_SOURCES) for rel in includes):
        return {}
    if any(
        ("include" in text and _COMPUTED.search(text)) or SPLICED.search(text)
        for text in native.values()
    ):  # `#include HEADER_OF(x)`, `#include "ker\` + newline, `%:include`: not known
        return {}
    kinds = {rel: classify(rel) for rel in build_files}
    if FileKind.CMAKE in kinds.values() or not any(
        (kind is FileKind.MAKEFILE and _COMPILES.search(build_files[rel]))
        or (kind is FileKind.SETUP_PY and _EXTENSIONS.search(build_files[rel]))
        for rel, kind in kinds.items()
    ):
        return {}  # no build that compiles listed sources, or CMake (headers for other builds)
    reached = _reached(includes, native)
    left = {
        rel: rel.rsplit("/", 1)[-1]
        for rel in includes
        if rel.lower().endswith(_HEADERS) and rel not in reached
    }
    if not left:
        return {}
    wanted = set(left.values())
    mentioned: set[str] = set()
    beside: set[str] = set()  # headers a build file names as a file of its own folder
    for build, text in build_files.items():
        folder = build.rsplit("/", 1)[0] if "/" in build else ""
        for word in wanted & set(_WORD.findall(text)):
            here = posixpath.normpath(posixpath.join(folder, word))
            if here in left or here in includes:  # cuckarood/Makefile's `kernel.cuh`
                beside.add(here)
            else:
                mentioned.add(word)
    for rel, text in native.items():  # jittor's JIT code: `R"(#include "misc/x.h")"`
        if rel not in left:
            mentioned |= wanted & set(_WORD.findall(_INCLUDE_LINE.sub("", text)))
    spent = 0
    for c in candidates:
        if c.kind is not FileKind.PYTHON:
            continue
        py = fileio.read_text_or_none(c.path, limit=_MAX_BYTES, root=root)
        if py is None:
            continue
        spent += len(py)
        if spent > MOST_PY_BYTES:
            return {}  # a mention may be in a file not read: say nothing
        if any(suffix in py for suffix in _HEADERS):  # one pass per file, not one per name
            mentioned |= wanted & set(_WORD.findall(py))  # (thirty-sixth re-run F5)
    return {
        rel: "a header no source of the project includes, directly or through other headers"
        for rel, name in left.items()
        if name not in mentioned and rel not in beside
    }
