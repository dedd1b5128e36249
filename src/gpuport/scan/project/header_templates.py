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
macro it would define stays unseen, so a blocker stays a blocker. Text only, one pass per
build file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.project.cxx_facts import includes_of

__all__ = ["configured_templates"]

_CMAKE_CONFIGURE = textre.compile(r"(?i:\b\w*configure_file)[ \t]*\(([^)]*)\)")
_AUTOCONF = textre.compile(
    r"\b(?:AC_CONFIG_HEADERS?|AC_CONFIG_FILES|AM_CONFIG_HEADER)[ \t]*\(\[?([^\])]*)"
)
_AUTOCONF_FILES = ("configure.ac", "configure.in")
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
        for m in _CMAKE_CONFIGURE.finditer(text):
            words = [_base(w) for w in m.group(1).split()]
            for name in set(words) & wanted:
                made = out.setdefault(name, {_made(name)})
                made.update(w for w in words if w != name and "." in w)
    return out


def _autoconf_outputs(root: Path, wanted: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in _AUTOCONF_FILES:
        path = root / name
        if not path.is_file():
            continue
        text = fileio.read_text_or_none(path, limit=_MAX_BYTES, root=root) or ""
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
    included: set[str] = {name for names in includes.values() for name in names}
    out: dict[str, str] = {}
    pending = {rel: text for rel, text in templates.items() if _base(rel) in made}
    while True:  # a template counts once what it makes is included; it may include another
        found = {rel: text for rel, text in pending.items() if made[_base(rel)] & included}
        if not found:
            return out
        for rel, text in found.items():
            out[rel] = text
            del pending[rel]
            included |= includes_of(text)
