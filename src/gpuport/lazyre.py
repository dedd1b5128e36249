"""Regular expressions compiled the first time they are used.

The modules a ``gpuport hipify`` run imports define about 330 patterns at module level, of
which a run over a real folder uses about 95; compiling them all cost ~0.065 s of every call
(start-up, issue 18). :func:`compile` returns a stand-in that compiles its pattern on first
use, then holds the compiled pattern's methods and attributes itself, so later calls cost what
a compiled pattern's do. It is typed as :class:`re.Pattern`: code uses it as one (``.search``,
``.sub``, ``.pattern`` …). Only ``re``'s module functions (``re.sub(P, …)``) and ``isinstance(P,
re.Pattern)`` see the difference: call the pattern's own methods instead (a test checks that
no module does otherwise).
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["LazyPattern", "compile"]

# What a compiled pattern offers; copied onto the stand-in when it compiles.
_ATTRS = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class LazyPattern:
    """A pattern and its flags, compiled by the first attribute asked of it."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for names not yet on the instance
        if name.startswith("__") or name == "_args":
            raise AttributeError(name)
        compiled = re.compile(*self._args)
        for attr in _ATTRS:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[type[LazyPattern], tuple[str, int]]:
        return (LazyPattern, self._args)

    def __repr__(self) -> str:
        pattern, flags = self._args
        return f"lazy re.compile({pattern!r}, {flags!r})"


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))
