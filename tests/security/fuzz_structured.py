"""Structured inputs for the fuzz targets of result files (issue 23, item 8).

Random bytes rarely get past a JSON parser, and a valid file with one byte changed fails its
digest check: neither reaches the checks behind them. Here the fuzzer's bytes are read as a
*mutation program* for a valid document (a real bench run, validate report, capture header,
doctor snapshot or model config): each step picks a place in the document and replaces,
deletes, duplicates or retypes what is there, with values chosen for trouble (NaN, inf, -0.0,
huge and negative numbers, long and control-character strings, deep nesting, wrong types).
Most programs then recompute the file's digest (or snapshot id), so the loader's own checks,
not the digest, judge the result. The same bytes always give the same document, so the
coverage-guided fuzzer (atheris) and the mutation fuzzer both drive it.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any


class Program:
    """Reads choices from the fuzzer's bytes; past the end every choice is 0."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0

    def byte(self) -> int:
        if self.i >= len(self.data):
            return 0
        self.i += 1
        return self.data[self.i - 1]

    def below(self, n: int) -> int:
        """A number in [0, n)."""
        if n <= 1:
            return 0
        value = self.byte()
        if n > 256:
            value = value << 8 | self.byte()
        return value % n

    def text(self, limit: int = 64) -> str:
        n = self.below(limit + 1)
        raw = bytes(self.byte() for _ in range(n))
        return raw.decode("utf-8", "replace")


_SPECIAL: tuple[Any, ...] = (
    0, -1, 1, 2**63, -(2**63), 10**400, 0.0, -0.0, 1e308, -1e-308, math.nan, math.inf, -math.inf,
    "", " ", "\x00", "\x1b[2J", "\u202e", "é", "../../etc/passwd", "a" * 5000, "1e999", "NaN",
    True, False, None, [], {}, [None], {"": None},
)  # fmt: skip


def _value(p: Program, depth: int = 0) -> Any:
    kind = p.below(9)
    if kind == 0:
        return _SPECIAL[p.below(len(_SPECIAL))]
    if kind == 1:
        return p.text()
    if kind == 2:
        return (p.below(65536) - 32768) * (10 ** p.below(20))
    if kind == 3:
        return (p.below(65536) - 32768) / (1 + p.below(1000))
    if kind == 4 and depth < 4:
        return [_value(p, depth + 1) for _ in range(p.below(4))]
    if kind == 5 and depth < 4:
        return {p.text(12): _value(p, depth + 1) for _ in range(p.below(4))}
    if kind == 6:  # deep nesting
        value: Any = None
        for _ in range(p.below(300)):
            value = [value]
        return value
    if kind == 7:
        return p.text(8) * p.below(200)
    return None


def _places(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in the document, in a stable order."""
    out: list[tuple[Any, Any]] = []
    todo = [doc]
    while todo and len(out) < 20_000:
        node = todo.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            out.append((node, key))
            if isinstance(child, dict | list):
                todo.append(child)
    return out


def mutate(doc: Any, p: Program) -> Any:
    """The document after the program's steps (the document itself is not changed)."""
    doc = copy.deepcopy(doc)
    for _ in range(p.below(6)):
        places = _places(doc)
        if not places:
            break
        node, key = places[p.below(len(places))]
        op = p.below(6)
        if op == 0 or op == 1:
            node[key] = _value(p)
        elif op == 2:  # delete
            del node[key]
        elif op == 3 and isinstance(node, list):  # duplicate an element
            node.insert(key, copy.deepcopy(node[key]))
        elif op == 4:  # the same figure written as another type
            value = node[key]
            node[key] = str(value) if not isinstance(value, str) else _number(value)
        elif op == 5 and isinstance(node[key], int | float) and not isinstance(node[key], bool):
            node[key] = node[key] * (p.below(5) - 2) + p.below(3) - 1  # near the old value
    return doc


def _number(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return len(text)


def with_digest(doc: Any) -> Any:
    """The document with its content digest recomputed (a forger's file)."""
    from gpuport.integrity import digest_of

    if isinstance(doc, dict):
        doc = {k: v for k, v in doc.items() if k != "digest"}
        doc["digest"] = digest_of(doc)
    return doc


def dumps(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")


def program_input(seed: Any, data: bytes, seal: Callable[[Any], Any] | None) -> bytes:
    """The file a target reads: the seed mutated by ``data``; sealed (digest recomputed)
    unless the program's first byte says not to."""
    p = Program(data)
    keep_seal = p.below(8) != 0
    doc = mutate(seed, p)
    if seal is not None and keep_seal:
        doc = seal(doc)
    return dumps(doc)
