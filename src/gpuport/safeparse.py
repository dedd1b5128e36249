"""Bounded JSON and TOML parsing for every file gpuport did not write in this run.

A result file, a capture header, a settings file or a ``--knowledge`` TOML can come from
anyone. Python's parsers fail on some of them with exceptions that are not parse errors:
a 5,000-digit integer raises ``ValueError`` (the 4,300-digit limit of ``int()``), 100,000
nested brackets raise ``RecursionError``. Here every such input becomes a
:class:`ParseError` with a one-line reason, and what parses is checked to nest at most
:data:`MAX_DEPTH` levels and to hold no number longer than :data:`MAX_NUMBER_CHARS`
characters, so later code (validation, rendering) never meets them either. Callers add
the file name and raise :class:`~gpuport.models.GpuportError` (exit 2).
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_NUMBER_CHARS",
    "ParseError",
    "check_bounds",
    "json_value",
    "toml_table",
]

#: Deepest nesting accepted; gpuport's own files nest under 10 levels.
MAX_DEPTH = 64
#: Longest number literal accepted (a float64 needs under 30 characters).
MAX_NUMBER_CHARS = 100
_MAX_INT_BITS = 333  # about 10**100


class ParseError(ValueError):
    """The input is not valid JSON/TOML or exceeds the bounds; ``str()`` is one line."""


def _number(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise ParseError(
            f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS} are read)"
        )


def _parse_int(text: str) -> int:
    _number(text)
    return int(text)


def _parse_float(text: str) -> float:
    _number(text)
    return float(text)


def json_value(data: str | bytes) -> Any:
    """Parse JSON ``data`` (text, or bytes in UTF-8/16/32), bounded; :class:`ParseError`."""
    try:
        value = json.loads(data, parse_int=_parse_int, parse_float=_parse_float)
    except ParseError:
        raise
    except RecursionError:
        raise ParseError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:  # json.JSONDecodeError, and int()'s digit limit
        raise ParseError(_one_line(exc)) from None
    check_bounds(value)
    return value


def toml_table(data: str | bytes) -> dict[str, Any]:
    """Parse TOML ``data`` (text, or UTF-8 bytes), bounded; :class:`ParseError`."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    _refuse_deep_keys(text)
    try:
        value = tomllib.loads(text, parse_float=_parse_float)
    except ParseError:
        raise
    except RecursionError:
        raise ParseError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(_one_line(exc)) from None
    except ValueError:  # int()'s 4,300-digit limit, raised from inside tomllib
        raise ParseError(f"a number longer than {MAX_NUMBER_CHARS} characters") from None
    check_bounds(value)
    return value


def _refuse_deep_keys(text: str) -> None:
    """Refuse a key of more than :data:`MAX_DEPTH` dotted parts before tomllib reads it:
    tomllib keeps every prefix of a dotted key (``a.a.a…a = 1`` of 40 KB took 2.4 GB and of
    100 KB 11 GB) and builds a table header part by part (quadratic). One pass over the
    lines: the dots before a line's first ``=`` (a key), or in a ``[header]``. A line inside
    a multi-line string may be counted too; no real key has that many parts."""
    for line in text.splitlines():
        head = line.lstrip()
        if head.startswith("["):
            key = head.partition("]")[0]
        elif "=" in head:
            key = head.partition("=")[0]
        else:
            continue  # not a key (an array's next line, a string's)
        if key.count(".") > MAX_DEPTH:
            raise ParseError(f"a key of more than {MAX_DEPTH} dotted parts")


def check_bounds(value: Any) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and integers over about 10**100
    (iteratively: a value built by hand may be deeper than Python's recursion limit)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            if isinstance(item, int) and item.bit_length() > _MAX_INT_BITS:
                raise ParseError(f"a number longer than {MAX_NUMBER_CHARS} characters")
            continue
        if depth >= MAX_DEPTH:
            raise ParseError(f"nested too deeply (more than {MAX_DEPTH} levels)")
        stack.extend((child, depth + 1) for child in children)


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
