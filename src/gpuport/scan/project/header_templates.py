"""Header templates a build configures into a header some file includes.

A header template (``vtkm/internal/Configure.h.in``) is read for the preprocessor facts
(:mod:`gpuport.scan.project.cxx_facts`): VTK-m's ``configure_file`` makes
``Configure.h`` from it, and the macro it defines only under ``__CUDA_ARCH__`` is false on a
ROCm pass (session 17). A template is only a header once a build configures it, though: an
old ``cmake/legacy/warp_compat.h.in`` no build names, whose output nothing includes, defined
``__ballot_sync`` under ``__HIP_PLATFORM_AMD__`` and so hid a real blocker as "covered by the
project's ROCm shim" (fortyfirst re-run F10).

So a template counts only where

* a build file configures it: CMake's ``configure_file`` (or a project's wrapper named
  ``*configure_file``) whose arguments name it, or autotools' ``AC_CONFIG_HEADERS`` /
  ``AC_CONFIG_FILES`` / ``AM_CONFIG_HEADER`` in the root's ``configure.ac`` /
  ``configure.in`` (``config.h`` from ``config.h.in``, ``out.h:in.h.in``), and
* a native file or another counted template includes what it makes (by file name: the
  output the call names, or the template's name without ``.in`` and ``.cmake``).

Anything else (a meson ``configure_file``, a name made in a variable) is not counted: a
macro it would define stays unseen, so a blocker stays a blocker. A call in a comment
configures nothing (forty-second re-run F2: ``# configure_file(...)`` in CMake, ``dnl`` or
``#`` before ``AC_CONFIG_HEADERS`` in configure.ac made the F10 template count again). Text
only, one pass per build file; what is included is followed as a worklist, each template
looked at once (forty-second re-run F21: a pass per template of a chain was quadratic).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.cmake_lex import strip_cmake_comments
from gpuport.scan.project.cxx_facts import includes_of

__all__ = ["configured_templates"]

_CMAKE_CONFIGURE = textre.compile(r"(?i:\b\w*configure_file)[ \t]*\(([^)]*)\)")
_AUTOCONF = textre.compile(
    r"\b(?:AC_CONFIG_HEADERS?|AC_CONFIG_FILES|AM_CONFIG_HEADER)[ \t]*\(\[?([^\])]*)"
)
_AUTOCONF_FILES = ("configure.ac", "configure.in")
#: m4's quotes and, outside them, its comments: ``#`` (copied, not expanded) and ``dnl``
_M4_TOKEN = textre.compile(r"\[|\]|#|(?<![\w$])dnl(?![\w])")
_MAX_BYTES = 1 << 20


def _base(path: str) -> str:
    return path.strip("\"'[]").rsplit("/", 1)[-1]


def _made(template: str) -> str:
    """The header a template makes by default (``Configure.h.in`` -> ``Configure.h``,
    ``config.h.cmake.in`` -> ``config.h``)."""
    name = template.removesuffix(".in")
    return name.removesuffix(".cmake")


def _cmake_outputs(texts: Iterable[str], wanted: set[str]) -> dict[str, set[str]]:
    """Template file name -> the header names ``configure_file`` calls make of it."""
    out: dict[str, set[str]] = {}
    for text in texts:
        if "onfigure_file" not in text.lower():
            continue
        if "#" in text:  # a call in a comment configures nothing (forty-second re-run F2)
            text = strip_cmake_comments(text)
        for m in _CMAKE_CONFIGURE.finditer(text):
            words = [_base(w) for w in m.group(1).split()]
            for name in set(words) & wanted:
                made = out.setdefault(name, {_made(name)})
                made.update(w for w in words if w != name and "." in w)
    return out


def _m4_code(text: str) -> str:
    """``text`` (configure.ac) without its m4 comments: ``dnl`` to the end of the line and
    ``#`` to the end of the line, each outside m4's ``[...]`` quotes (inside them both are
    text). Unbalanced quotes leave the rest as it is."""
    if "#" not in text and "dnl" not in text:
        return text
    parts: list[str] = []
    depth = 0
    last = 0
    pos = 0
    while m := _M4_TOKEN.search(text, pos):
        mark = m.group(0)
        pos = m.end()
        if mark == "[":
            depth += 1
        elif mark == "]":
            depth = max(0, depth - 1)
        elif depth == 0:  # a comment: to the end of the line
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
            parts.append(text[last : m.start()])
            last = pos
    parts.append(text[last:])
    return "".join(parts)


def _autoconf_outputs(root: Path, wanted: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in _AUTOCONF_FILES:
        path = root / name
        if not path.is_file():
            continue
        text = _m4_code(fileio.read_text_or_none(path, limit=_MAX_BYTES, root=root) or "")
        for m in _AUTOCONF.finditer(text):
            for token in m.group(1).replace(",", " ").split():
                output, _, inputs = token.partition(":")
                sources = [_base(i) for i in inputs.split(":") if i] or [_base(output) + ".in"]
                for source in sources:
                    if source in wanted:
                        out.setdefault(source, {_made(source)}).add(_base(output))
    return out


def configured_templates(
    templates: Mapping[str, str],
    build_files: Mapping[str, str],
    includes: Mapping[str, frozenset[str]],
    root: Path,
) -> dict[str, str]:
    """The ``templates`` (relative path -> text) a build configures into a header that a
    native file (``includes``: the file names each includes) or another such template
    includes (see the module docstring)."""
    if not templates:
        return {}
    wanted = {_base(rel) for rel in templates}
    made = _cmake_outputs(build_files.values(), wanted)
    if root.is_dir():
        for name, outputs in _autoconf_outputs(root, wanted).items():
            made.setdefault(name, set()).update(outputs)
    # a worklist over header names: each name included once wakes the templates making it
    # (a pass over every pending template per template found was quadratic on a chain)
    makers: dict[str, list[str]] = {}
    for rel in templates:
        for header in made.get(_base(rel), ()):
            makers.setdefault(header, []).append(rel)
    included: set[str] = {name for names in includes.values() for name in names}
    todo = [name for name in makers if name in included]
    out: dict[str, str] = {}
    while todo:
        for rel in makers.get(todo.pop(), ()):
            if rel in out:
                continue
            out[rel] = text = templates[rel]
            for name in includes_of(text):
                if name not in included:
                    included.add(name)
                    if name in makers:
                        todo.append(name)
    return out
