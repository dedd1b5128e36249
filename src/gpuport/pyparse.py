"""One parse and one walk of a Python text, shared by every reader of that text.

A project's ``setup.py`` is read by six readers (its requirements, the build model, the
extras, the refusals, the build checker and its generator check). Each parsed it again and
walked the whole tree again: a 400 KB ``setup.py`` of ``R = R + [...]`` lines took four
parses and about ten full walks (4.6 s CPU; 14 s at 800 KB). :func:`parse` gives the same
tree for the same text while it is among the last few parsed, and :func:`walk` lists a
module's nodes once. Nothing here compiles to code or runs anything: ``ast.parse`` only.

The shared tree is read-only by convention: no reader of gpuport changes a node.
"""

from __future__ import annotations

import ast
import weakref
from collections import OrderedDict
from collections.abc import Iterable

#: What CPython's parser raises on a text it cannot parse (MemoryError: deep brackets)
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)

_KEEP = 4  # texts whose trees are kept (a project usually has one setup.py)
#: Texts larger than this are not parsed: six readers walk a setup.py's tree, so a 2 MB one of
#: 150,000 statements cost over a minute (thirty-third re-run F2); the largest real setup.py
#: gpuport has read is under 100 KB
PARSE_LIMIT = 1 << 20


class TooLarge(SyntaxError):
    """A text over :data:`PARSE_LIMIT`: not analysed (its message says so)."""


_parsed: OrderedDict[str, ast.Module | str] = OrderedDict()
_nodes: weakref.WeakKeyDictionary[ast.Module, list[ast.AST]] = weakref.WeakKeyDictionary()


def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, the same tree for the same text while it is among the last
    few parsed. A text the parser refuses raises :class:`SyntaxError` with the parser's
    message, every time it is asked for (the failure is remembered too)."""
    if len(text) > PARSE_LIMIT:
        raise TooLarge(
            f"too large to analyse ({len(text) / 1e6:.1f} MB; Python files whose structure is "
            f"read, such as setup.py, are analysed up to {PARSE_LIMIT >> 20} MB)"
        )
    hit = _parsed.get(text)
    if hit is None:
        try:
            hit = ast.parse(text)
        except PARSE_ERRORS as exc:
            hit = str(getattr(exc, "msg", None) or exc or type(exc).__name__)
        _parsed[text] = hit
        while len(_parsed) > _KEEP:
            _parsed.popitem(last=False)
    else:
        _parsed.move_to_end(text)
    if isinstance(hit, str):
        raise SyntaxError(hit)
    return hit


def walk(node: ast.AST) -> Iterable[ast.AST]:
    """The nodes under ``node`` in :func:`ast.walk`'s order; a module's are listed once
    and the list is given to every later reader (a sub-tree is walked as it is)."""
    if not isinstance(node, ast.Module):
        return ast.walk(node)
    got = _nodes.get(node)
    if got is None:
        got = list(ast.walk(node))
        _nodes[node] = got
    return got
