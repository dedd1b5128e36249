"""Integer constants a C/C++ file defines (``#define WARP_SIZE 32``, ``constexpr int
kTile = 32;``), read as text. :mod:`gpuport.scan.cxx_facts` merges them over the project;
the warp rules ask them what a named tile size is. Imports nothing from the rules, so
both can use it.
"""

from __future__ import annotations

import re

__all__ = ["int_constants", "known_ints"]

_DEFINE_VALUE = re.compile(r"^[ \t]*\#[ \t]*define[ \t]+(\w+)\b(?!\()[ \t]*([^\n]*)$", re.M)
_CONSTEXPR_VALUE = re.compile(
    r"\bconstexpr\s+(?:static\s+)?(?:const\s+)?(?:unsigned\s+|signed\s+)?"
    r"(?:int|unsigned|long|short|size_t|u?int(?:32|64|16)_t|auto)\s+(\w+)\s*=\s*([^;,{}]+);"
)
_INT_TEXT = re.compile(r"\(?\s*(\d+)[uUlL]*\s*\)?")
_COMMENT_TAIL = re.compile(r"\s*(?://.*|/\*.*)?$")


def int_constants(text: str) -> dict[str, set[str]]:
    """Every object-like ``#define`` and integer ``constexpr`` of a file: name -> the
    value texts it is given (an integer's digits, else the text as written)."""
    out: dict[str, set[str]] = {}
    if "define" in text:
        for m in _DEFINE_VALUE.finditer(text):
            _add_value(out, m.group(1), m.group(2))
    if "constexpr" in text:
        for m in _CONSTEXPR_VALUE.finditer(text):
            _add_value(out, m.group(1), m.group(2))
    return out


def _add_value(out: dict[str, set[str]], name: str, raw: str) -> None:
    value = _COMMENT_TAIL.sub("", raw).strip()
    num = _INT_TEXT.fullmatch(value)
    out.setdefault(name, set()).add(str(int(num.group(1))) if num else value)


def known_ints(values: dict[str, set[str]]) -> dict[str, int]:
    """The names whose every definition is the same integer."""
    return {
        name: int(next(iter(vals)))
        for name, vals in values.items()
        if len(vals) == 1 and next(iter(vals)).isdigit()
    }
