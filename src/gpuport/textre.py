"""Regular expressions on project text, in linear time (issue 23, item 4).

A pattern written for ``re`` runs on RE2 (``google-re2``), an engine whose time is linear in
the text: no input can make it backtrack. Code uses it as it would use ``re``:
``textre.compile(r"...", re.I)`` gives an object typed as :class:`re.Pattern` with
``search``/``match``/``fullmatch`` (with ``pos`` and ``endpos``), ``finditer``, ``findall``,
``sub``/``subn`` (a template or a function), ``split``, ``pattern``, ``groups`` and
``groupindex``; its matches offer ``group``, ``groups``, ``groupdict``, ``start``, ``end``,
``span``, ``expand``, indexing, ``string``, ``pos``, ``endpos`` and ``re``. ``textre.search``,
``textre.sub`` ... take a pattern string, as ``re``'s functions do.

A pattern compiles the first time it is used (module-level patterns cost a ``gpuport hipify``
call nothing until then), and RE2 is imported then too.

What differs from ``re`` (see :mod:`gpuport.textre_syntax`):

* classes follow ``re.ASCII``: ``\\w``, ``\\d``, ``\\s``, ``\\b`` and ``re.I`` know ASCII only;
* lookaround only as a one-character lookbehind at the head or a lookahead at the tail;
  no backreferences: such a pattern is refused (:class:`Unsupported`) when it is compiled;
* after an empty match, an iteration goes on from the next character; ``re`` would first try
  a lower-priority alternative that is not empty at the same place (``x*|b``);
* a lone surrogate (an undecodable byte read with ``surrogateescape``) and the private-use
  character U+10F000 + (its code - U+D800) are one character to a pattern.

Python ``re`` stays only where a pattern is proven to run in linear time; tests/test_textre.py
holds that list and fails on any other use of ``re`` in the package.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, cast

from gpuport.textre_syntax import SURROGATE_SHIFT, Translation, Unsupported, translate

__all__ = [
    "TextPattern",
    "Unsupported",
    "compile",
    "escape",
    "findall",
    "finditer",
    "fullmatch",
    "glob",
    "line_finder",
    "match",
    "search",
    "split",
    "sub",
    "subn",
]

escape = re.escape  # its output is parsed by Python's parser, like every pattern here

_engine: Any = None


def _re2() -> Any:
    global _engine
    if _engine is None:
        from re2 import _re2 as engine  # ~5 ms: only when a first pattern is used

        _engine = engine
        a = engine.RE2.Anchor
        _ANCHORS[:] = [a.UNANCHORED, a.ANCHOR_START, a.ANCHOR_BOTH]
    return _engine


_ANCHORS: list[Any] = []


# --- the text as RE2 sees it: UTF-8 bytes, and how to turn byte offsets into str offsets ---

# Runs of characters of one UTF-8 width. Linear in ``re``: each alternative is one class,
# repeated, and no two classes share a character (allowed in tests/test_textre.py).
_WIDTHS = re.compile("[\x00-\x7f]+|[\x80-\u07ff]+|[\u0800-\uffff]+|[\U00010000-\U0010ffff]+")
#: Lone surrogates (undecodable bytes under "surrogateescape") have no UTF-8: RE2 sees each as
#: a private-use character of the same offset (textre_syntax maps patterns the same way).
_SURROGATES = {c: c + SURROGATE_SHIFT for c in range(0xD800, 0xE000)}


class _Text:
    """A str as UTF-8 bytes, with byte <-> character offsets (identity for ASCII)."""

    __slots__ = ("bstarts", "buf", "cstarts", "widths")

    def __init__(self, text: str) -> None:
        self.cstarts: list[int] | None = None
        if text.isascii():
            self.buf = text.encode("ascii")
            return
        try:
            self.buf = text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.translate(_SURROGATES)
            self.buf = text.encode("utf-8")
        self.cstarts, self.bstarts, self.widths = [], [], []
        b = 0
        for run in _WIDTHS.finditer(text):
            width = len(run.group()[0].encode("utf-8"))
            self.cstarts.append(run.start())
            self.bstarts.append(b)
            self.widths.append(width)
            b += width * (run.end() - run.start())

    def byte(self, c: int) -> int:
        if self.cstarts is None:
            return c
        k = bisect_right(self.cstarts, c) - 1
        if k < 0:
            return c
        return self.bstarts[k] + (c - self.cstarts[k]) * self.widths[k]

    def char(self, b: int) -> int:
        if self.cstarts is None or b < 0:
            return b
        k = bisect_right(self.bstarts, b) - 1
        if k < 0:
            return b
        return self.cstarts[k] + (b - self.bstarts[k]) // self.widths[k]


_CACHE: dict[int, tuple[str, _Text]] = {}
_CACHED_FROM = 256  # shorter texts are encoded per call (cheaper than caching lines)


def _prepare(text: str) -> _Text:
    """The text's bytes, encoded once for the few texts being searched over and over."""
    if not isinstance(text, str):
        raise TypeError(f"textre searches str, not {type(text).__name__}")
    if len(text) < _CACHED_FROM:
        return _Text(text)
    hit = _CACHE.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    prepared = _Text(text)
    if len(_CACHE) >= 8:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[id(text)] = (text, prepared)  # holding the text keeps its id from being reused
    return prepared


# --- patterns ---


class _Compiled:
    __slots__ = (
        "first",
        "flags",
        "groupindex",
        "groups",
        "later",
        "plain",
        "re_first",
        "re_later",
    )

    def __init__(self, pattern: str, flags: int) -> None:
        first, later, state = translate(pattern, flags)
        engine = _re2()
        options = engine.RE2.Options()
        options.log_errors = False
        options.max_mem = 64 << 20  # the bundled catalog's trie patterns are large
        self.first: Translation = first
        self.later: Translation | None = later
        self.re_first = _build(engine, first, options)
        self.re_later = _build(engine, later, options) if later else None
        self.groups: int = state.groups - 1
        self.groupindex: dict[str, int] = dict(state.groupdict)
        self.flags: int = state.flags
        #: nothing rewritten: RE2's groups are the pattern's, one for one
        self.plain = (
            later is None
            and not first.starts
            and not first.ends
            and first.n == self.groups
            and all(first.groups.get(g) == [g] for g in range(1, self.groups + 1))
        )


def _build(engine: Any, t: Translation, options: Any) -> Any:
    compiled = engine.RE2(t.pattern.encode("utf-8"), options)
    if not compiled.ok():
        raise Unsupported(f"RE2 refused {t.pattern!r}: {compiled.error()}")
    return compiled


_UNANCHORED, _START, _BOTH = 0, 1, 2  # RE2.Anchor's values, in the same order


class TextPattern:
    """A compiled-on-first-use pattern that runs on RE2; used as an :class:`re.Pattern`."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        if not isinstance(pattern, str):
            raise TypeError("textre patterns are str")
        self.pattern = pattern
        self._flags = flags
        self._c: _Compiled | None = None

    def _compiled(self) -> _Compiled:
        if self._c is None:
            self._c = _Compiled(self.pattern, self._flags)
        return self._c

    def check(self) -> TextPattern:
        """Compile now (a test compiles every pattern of the package this way)."""
        self._compiled()
        return self

    @property
    def flags(self) -> int:
        return self._compiled().flags

    @property
    def groups(self) -> int:
        return self._compiled().groups

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self._compiled().groupindex)

    def __reduce__(self) -> tuple[type[TextPattern], tuple[str, int]]:
        return (TextPattern, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"textre.compile({self.pattern!r}, {self._flags!r})"

    # -- one match --

    def _at(self, text: str, t: _Text, pos: int, endpos: int, anchor: int) -> TextMatch | None:
        c = self._c or self._compiled()
        if c.plain and t.cstarts is None:  # the common case: offsets are RE2's as they are
            buf: Any = t.buf
            if endpos < len(buf):
                buf = memoryview(buf)[:endpos]
            spans = c.re_first.Match(_ANCHORS[anchor], buf, pos, endpos)
            return None if spans[0][0] < 0 else TextMatch(self, text, pos, endpos, spans)
        buf = t.buf
        bend = t.byte(endpos)
        if bend < len(buf):
            buf = memoryview(buf)[:bend]  # endpos is the end of the text, as in re
        if c.re_later is None or pos == 0:
            tr, rx, bpos = c.first, c.re_first, t.byte(pos)
        else:  # start one character early: the character before is the lookbehind's
            tr, rx, bpos = cast(Translation, c.later), c.re_later, t.byte(pos - 1)
        spans = rx.Match(_ANCHORS[anchor], buf, bpos, bend)
        if spans[0][0] < 0:
            return None
        start = _first(spans, tr.starts, spans[0])[0] if tr.starts else spans[0][0]
        end = _first(spans, tr.ends, (spans[0][1], 0))[0] if tr.ends else spans[0][1]
        if anchor and start != t.byte(pos):
            return None  # the alternative that matched starts a character later
        if anchor == _BOTH and end != bend:
            return None  # a lookahead's text was matched too
        out = [(t.char(start), t.char(end))]
        for g in range(1, c.groups + 1):
            s, e = _first(spans, tr.groups.get(g, ()), (-1, -1))
            if e > end:  # a group that ends in a lookahead: it ends where the match does
                e = end
            out.append((t.char(s), t.char(e)))
        return TextMatch(self, text, pos, endpos, out)

    def _clamp(self, text: str, pos: int, endpos: int | None) -> tuple[_Text, int, int]:
        t = _prepare(text)
        n = len(text)
        if pos or endpos is not None:
            pos = min(max(pos, 0), n)
            endpos = n if endpos is None else min(max(endpos, 0), n)
        else:
            endpos = n
        return t, pos, endpos

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> TextMatch | None:
        t, pos, endpos = self._clamp(string, pos, endpos)
        return None if pos > endpos else self._at(string, t, pos, endpos, _UNANCHORED)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> TextMatch | None:
        t, pos, endpos = self._clamp(string, pos, endpos)
        return None if pos > endpos else self._at(string, t, pos, endpos, _START)

    def fullmatch(self, string: str, pos: int = 0, endpos: int | None = None) -> TextMatch | None:
        t, pos, endpos = self._clamp(string, pos, endpos)
        return None if pos > endpos else self._at(string, t, pos, endpos, _BOTH)

    # -- every match --

    def finditer(self, string: str, pos: int = 0, endpos: int | None = None) -> Iterator[TextMatch]:
        t, pos, endpos = self._clamp(string, pos, endpos)
        return self._iter(string, t, pos, endpos)

    def _iter(self, text: str, t: _Text, pos: int, endpos: int) -> Iterator[TextMatch]:
        empty_before = False
        while pos <= endpos:
            m = self._at(text, t, pos, endpos, _UNANCHORED)
            if m is None:
                return
            s, e = m._spans[0]
            if empty_before and s == e == pos:  # no second empty match at the same place
                if pos >= endpos:
                    return
                m = self._at(text, t, pos + 1, endpos, _UNANCHORED)
                if m is None:
                    return
                s, e = m._spans[0]
            yield m
            empty_before = s == e
            pos = e

    def findall(self, string: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        n = self.groups
        out: list[Any] = []
        for m in self.finditer(string, pos, endpos):
            if n == 0:
                out.append(m.group())
            elif n == 1:
                out.append(m.groups("")[0])
            else:
                out.append(m.groups(""))
        return out

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        expand = repl if callable(repl) else _template(repl, self)
        pieces: list[str] = []
        last = done = 0
        for m in self.finditer(string):
            if count and done >= count:
                break
            s, e = m._spans[0]
            pieces.append(string[last:s])
            pieces.append(expand(cast("re.Match[str]", m)))
            last = e
            done += 1
        pieces.append(string[last:])
        return "".join(pieces), done

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.subn(repl, string, count)[0]

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """As ``re``: the pieces, with each match's groups between them (None where unset)."""
        out: list[str | Any] = []
        last = 0
        for done, m in enumerate(self.finditer(string)):
            if maxsplit and done >= maxsplit:
                break
            s, e = m._spans[0]
            out.append(string[last:s])
            out.extend(m.groups())
            last = e
        out.append(string[last:])
        return out


def _first(spans: list[tuple[int, int]], numbers: Any, default: tuple[int, int]) -> tuple[int, int]:
    for k in numbers:
        span: tuple[int, int] = spans[k]
        if span[0] >= 0:
            return span
    return default


class TextMatch:
    """One match; used as an :class:`re.Match`."""

    __slots__ = ("_spans", "endpos", "pos", "re", "string")

    def __init__(
        self, pattern: TextPattern, string: str, pos: int, endpos: int, spans: list[tuple[int, int]]
    ) -> None:
        self.re = pattern
        self.string = string
        self.pos = pos
        self.endpos = endpos
        self._spans = spans

    def _index(self, group: int | str) -> int:
        if isinstance(group, str):
            index = self.re._compiled().groupindex.get(group)
            if index is None:
                raise IndexError("no such group")
            return index
        if not 0 <= group < len(self._spans):
            raise IndexError("no such group")
        return group

    def span(self, group: int | str = 0) -> tuple[int, int]:
        if type(group) is int and 0 <= group < len(self._spans):
            return self._spans[group]
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def __getitem__(self, group: int | str) -> str | None:
        s, e = self.span(group)
        return None if s < 0 else self.string[s:e]

    def group(self, *groups: int | str) -> Any:
        if not groups:
            return self[0]
        if len(groups) == 1:
            return self[groups[0]]
        return tuple(self[g] for g in groups)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        values = (self[g] for g in range(1, len(self._spans)))
        return tuple(default if v is None else v for v in values)

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        names = self.re._compiled().groupindex
        return {name: default if self[i] is None else self[i] for name, i in names.items()}

    @property
    def lastindex(self) -> int | None:
        """The group that closed last (the outermost of those ending furthest right)."""
        best, best_end = None, -1
        for g in range(1, len(self._spans)):
            if self._spans[g][1] > best_end and self._spans[g][0] >= 0:
                best, best_end = g, self._spans[g][1]
        return best

    @property
    def lastgroup(self) -> str | None:
        last = self.lastindex
        names = {i: n for n, i in self.re._compiled().groupindex.items()}
        return names.get(last) if last is not None else None

    def expand(self, template: str) -> str:
        return _template(template, self.re)(cast("re.Match[str]", self))

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<textre.Match span={self.span()!r} match={self.group()!r}>"


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _template(repl: str, pattern: TextPattern) -> Callable[[re.Match[str]], str]:
    """``re``'s replacement templates: ``\\1``, ``\\g<name>``, ``\\g<1>`` and escapes."""
    parts: list[str | int] = []
    i = 0
    while i < len(repl):
        c = repl[i]
        nxt = repl[i + 1 : i + 2]
        if c != "\\" or not nxt:
            parts.append(c)
            i += 1
        elif nxt == "g":
            close = repl.find(">", i)
            if repl[i + 2 : i + 3] != "<" or close < 0:
                raise re.error("bad \\g escape in a replacement")
            name = repl[i + 3 : close]
            parts.append(int(name) if name.isdigit() else pattern.groupindex[name])
            i = close + 1
        elif nxt.isdigit() and nxt != "0":
            digits = repl[i + 1 : i + 3] if repl[i + 2 : i + 3].isdigit() else nxt
            parts.append(int(digits))
            i += 1 + len(digits)
        elif nxt in _ESCAPES:
            parts.append(_ESCAPES[nxt])
            i += 2
        elif nxt.isascii() and nxt.isalnum():
            raise re.error(f"bad escape \\{nxt} in a replacement")
        else:
            parts.append(c + nxt)
            i += 2
    for p in parts:
        if isinstance(p, int) and not 0 <= p <= pattern.groups:
            raise re.error(f"invalid group reference {p}")

    def expand(m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return expand


# --- the re-like module functions ---


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)`` on RE2, compiled when first used."""
    return cast("re.Pattern[str]", TextPattern(pattern, flags))


@lru_cache(maxsize=1024)
def glob(pattern: str) -> re.Pattern[str]:
    """A shell glob as a pattern: ``glob(g).match(name)`` is ``fnmatch.fnmatchcase(name, g)``.

    ``fnmatch`` writes ``(?>.*?b)`` for a second star, an atomic group RE2 has none of; the
    language is the same without it (a glob has no groups to backtrack into)."""
    import fnmatch

    return compile(fnmatch.translate(pattern).replace("(?>", "(?:"))


@lru_cache(maxsize=8)
def line_finder(text: str) -> Callable[[int], int]:
    """``pos -> text.count("\\n", 0, pos) + 1`` (the line of a match) in log time, after one
    pass over the text: counting from the start for each of many matches was quadratic."""
    breaks: list[int] = []
    at = text.find("\n")
    while at != -1:
        breaks.append(at)
        at = text.find("\n", at + 1)
    return lambda pos: bisect_left(breaks, pos) + 1


def regex(pattern: str) -> str:
    """The RE2 text a Python pattern becomes (for reading and for tests)."""
    return translate(pattern)[0].pattern


#: The patterns the module functions compiled, least recently used first: past 512 the
#: oldest goes (clearing all of them at once made a caller that cycles through a few more
#: than 512 patterns recompile every one; fourteenth re-run). A caller that builds a
#: pattern per name in a loop still recompiles past 512: look names up in a set instead.
_FUNCTION_CACHE: OrderedDict[tuple[str, int], TextPattern] = OrderedDict()
_FUNCTION_CACHE_SIZE = 512


def _cached(pattern: str | re.Pattern[str], flags: int) -> TextPattern:
    if isinstance(pattern, TextPattern):
        return pattern
    if not isinstance(pattern, str):
        raise TypeError("textre functions take a pattern string or a textre pattern")
    key = (pattern, flags)
    got = _FUNCTION_CACHE.get(key)
    if got is None:
        got = TextPattern(pattern, flags)
        _FUNCTION_CACHE[key] = got
        if len(_FUNCTION_CACHE) > _FUNCTION_CACHE_SIZE:
            _FUNCTION_CACHE.popitem(last=False)
    else:
        _FUNCTION_CACHE.move_to_end(key)
    return got


def search(pattern: str | re.Pattern[str], string: str, flags: int = 0) -> re.Match[str] | None:
    return cast("re.Match[str] | None", _cached(pattern, flags).search(string))


def match(pattern: str | re.Pattern[str], string: str, flags: int = 0) -> re.Match[str] | None:
    return cast("re.Match[str] | None", _cached(pattern, flags).match(string))


def fullmatch(pattern: str | re.Pattern[str], string: str, flags: int = 0) -> re.Match[str] | None:
    return cast("re.Match[str] | None", _cached(pattern, flags).fullmatch(string))


def finditer(
    pattern: str | re.Pattern[str], string: str, flags: int = 0
) -> Iterator[re.Match[str]]:
    return cast("Iterator[re.Match[str]]", _cached(pattern, flags).finditer(string))


def findall(pattern: str | re.Pattern[str], string: str, flags: int = 0) -> list[Any]:
    return _cached(pattern, flags).findall(string)


def sub(
    pattern: str | re.Pattern[str],
    repl: str | Callable[[re.Match[str]], str],
    string: str,
    count: int = 0,
    flags: int = 0,
) -> str:
    return _cached(pattern, flags).sub(repl, string, count)


def subn(
    pattern: str | re.Pattern[str],
    repl: str | Callable[[re.Match[str]], str],
    string: str,
    count: int = 0,
    flags: int = 0,
) -> tuple[str, int]:
    return _cached(pattern, flags).subn(repl, string, count)


def split(
    pattern: str | re.Pattern[str], string: str, maxsplit: int = 0, flags: int = 0
) -> list[str | Any]:
    return _cached(pattern, flags).split(string, maxsplit)
