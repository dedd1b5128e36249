"""CMake projects that enable CUDA in ``project()``: ``project(NAME LANGUAGES CXX CUDA)`` or the
old ``project(NAME CXX CUDA)`` (J21, cuda_memtest; sphexa's ryoanji). The HIP build cannot
have CUDA enabled (a machine with ROCm and no nvcc stops in ``project()``), so the language
leaves the call and is enabled right after it, on the CUDA build only::

    project(CUDA_memtest LANGUAGES CXX)
    option(GPUPORT_HIP ... OFF)
    if(GPUPORT_HIP)
        include(${CMAKE_CURRENT_LIST_DIR}/cmake/gpuport_hip.cmake)
    else()
        enable_language(CUDA)  # gpuport: was in project()
    endif()

as the real port wrote it (``project(... LANGUAGES CXX)``, ``enable_language(CUDA)`` on its CUDA
branch). With the option off, the CUDA configure enables the same languages in the same
order: it is kept safe only where that holds. It is unsafe when CUDA is not the last language
listed (CUDA would then be enabled after languages it came before) or when the project's
CMake files name a project-include hook (``CMAKE_PROJECT_INCLUDE``,
``CMAKE_PROJECT_<NAME>_INCLUDE``, ``..._INCLUDE_BEFORE``, ``CMAKE_PROJECT_TOP_LEVEL_INCLUDES``),
which ``project()`` runs after enabling its languages: it would now run before CUDA is
enabled. A call gpuport cannot read word by word (a variable, a comment, a generator
expression inside it) is left as it was, and so is the file.

Sources the file compiles as CUDA through ``set_source_files_properties(... PROPERTIES
LANGUAGE CUDA)`` (a ``.cpp`` built by nvcc) are listed for the HIP build's ``LANGUAGE HIP``
marking: with CUDA not enabled, the HIP build has no compiler for them otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuport import textre
from gpuport.port.cmake_text import Statements

__all__ = ["ProjectCuda", "cuda_language_sources", "find_project_cuda", "names_a_hook"]

_PROJECT = textre.compile(r"^([ \t]*)project[ \t]*\(([^()]*)\)", re.M | re.I)
_WORD = textre.compile(r"\"[^\"]*\"|[^\s\"]+")
_KEYWORDS = frozenset({"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"})
_HOOK = textre.compile(r"\bCMAKE_PROJECT_(?:\w+_)?INCLUDE(?:_BEFORE)?\b|CMAKE_PROJECT_TOP_LEVEL")
_LANG_CUDA = textre.compile(
    r"\bset_source_files_properties[ \t]*\(([^()]*?)\bPROPERTIES\b([^()]*)\)", re.I
)


@dataclass(frozen=True)
class ProjectCuda:
    """A ``project()`` call that enables CUDA: its span, the call without CUDA, the
    languages it lists, and why moving CUDA out would change a CUDA configure (empty when
    it would not)."""

    start: int
    end: int
    indent: str
    without: str
    languages: tuple[str, ...]
    unsafe: str


def names_a_hook(text: str) -> bool:
    """Whether a CMake text names a project-include hook (what ``others`` is read for)."""
    return _HOOK.search(text) is not None


def find_project_cuda(text: str, others: str = "") -> ProjectCuda | None:
    """The first ``project()`` call of ``text`` that names CUDA as a language, read word by
    word; None when there is none or it cannot be read. ``others``: the text of the
    project's other CMake files (for project-include hooks)."""
    live = Statements(text)
    for m in _PROJECT.finditer(text):
        body = m.group(2)
        if "CUDA" not in body.upper():
            continue
        if not live.starts(m.start() + len(m.group(1))):
            continue  # a line of a quoted argument or a comment: no call (40th re-run F3)
        if any(c in body for c in "#$<"):
            return None  # a variable, a comment or a generator expression: not read
        words = [(w.group(0), w.start(), w.end()) for w in _WORD.finditer(body)]
        if len(words) < 2:
            return None
        langs: list[tuple[str, int, int]] = []
        keyed = any(w.upper() in _KEYWORDS for w, _, _ in words[1:])
        i = 1
        while i < len(words):
            word = words[i][0]
            if keyed and word.upper() == "LANGUAGES":
                i += 1
                while i < len(words) and words[i][0].upper() not in _KEYWORDS:
                    langs.append(words[i])
                    i += 1
                continue
            if not keyed:
                langs.append(words[i])
            i += 2 if keyed and word.upper() in _KEYWORDS else 1
        names = [w.upper() for w, _, _ in langs]
        if names.count("CUDA") != 1:
            return None
        cuda = next(x for x in langs if x[0].upper() == "CUDA")
        if len(langs) == 1:
            new_body = body[: cuda[1]] + "NONE" + body[cuda[2] :]
        else:
            lo = cuda[1]
            while lo > 0 and body[lo - 1] in " \t\r\n":
                lo -= 1
            new_body = body[:lo] + body[cuda[2] :]
        call = text[m.start() + len(m.group(1)) : m.end()]
        head = call[: call.index("(") + 1]
        unsafe = ""
        if names[-1] != "CUDA":
            after = ", ".join(w for w, _, _ in langs[names.index("CUDA") + 1 :])
            unsafe = (
                f"project() enables CUDA before {after}: enabled after project(), CUDA would "
                "come after them on the CUDA configure too"
            )
        elif (hook := _HOOK.search(text + "\n" + others)) is not None:
            unsafe = (
                f"the project names {hook.group(0)}, a hook project() runs after enabling its "
                "languages: on the CUDA configure it would now run before CUDA is enabled"
            )
        return ProjectCuda(
            start=m.start() + len(m.group(1)),
            end=m.end(),
            indent=m.group(1),
            without=f"{head}{new_body})",
            languages=tuple(names),
            unsafe=unsafe,
        )
    return None


_PLAIN_SOURCE = textre.compile(r"[\w./+-]+")


def cuda_language_sources(text: str) -> tuple[list[str], int]:
    """The literal source names ``set_source_files_properties(... PROPERTIES LANGUAGE CUDA)``
    gives the CUDA language (``.cu`` files too), and the end of the last such statement (0
    when there is none)."""
    names: list[str] = []
    end = 0
    for m in _LANG_CUDA.finditer(text):
        props = m.group(2).split()
        if not any(
            p.upper() == "LANGUAGE" and i + 1 < len(props) and props[i + 1] == "CUDA"
            for i, p in enumerate(props)
        ):
            continue
        for w in m.group(1).split():  # plain names only: a quoted piece split at a blank
            # would change the quote parity of what is written back (37th re-run F8)
            if _PLAIN_SOURCE.fullmatch(w) is not None and w not in names:
                names.append(w)
        end = m.end()
    return names, end


_QUOTED = textre.compile(r"^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"", re.M)


def unmapped_sources(
    texts: dict[str, str], mapped: set[str], uses_cuda_names: dict[str, str]
) -> tuple[str, str] | None:
    """A CUDA translation unit (``.cu``) the HIP build compiles whose own text or the
    project files it includes (``#include "..."`` by file name, transitively, among
    ``texts``) use a CUDA runtime name HIP spells differently (``uses_cuda_names``: file ->
    a name), while none of them is in ``mapped`` (the files given the compatibility
    header's branch): nvcc includes the CUDA runtime header by itself, hip-clang does not
    map the names, so the HIP build stops there (J25, QuEST; sphexa's ryoanji). (file,
    name) of the first, or None."""
    by_name: dict[str, list[str]] = {}
    for rel in texts:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    included_by: dict[str, set[str]] = {}  # file -> the files that include it
    for rel, text in texts.items():
        for m in _QUOTED.finditer(text):
            for dep in by_name.get(m.group(1).rsplit("/", 1)[-1], []):
                included_by.setdefault(dep, set()).add(rel)
    reach_mapped = _upward(mapped, included_by)
    reach_user = _upward(set(uses_cuda_names), included_by)
    for rel in sorted(texts):
        if rel.endswith(".cu") and rel in reach_user and rel not in reach_mapped:
            return rel, uses_cuda_names.get(rel, "the CUDA runtime (in a header it includes)")
    return None


def _upward(start: set[str], included_by: dict[str, set[str]]) -> set[str]:
    """``start`` and every file that includes one of them, directly or not (each file
    visited once: linear in the include graph)."""
    seen = set(start)
    todo = list(start)
    while todo:
        for parent in included_by.get(todo.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen
