"""A fast, token-aware view of C, C++ and CUDA source (no parser, no dependencies).

Rules that look for CUDA hazards must not fire on comments or on text inside
string literals, and they must know whether a line already sits in a branch
written for ROCm. :func:`lex` gives both in one O(n) pass, driven by a single
compiled regular expression so that the work happens in C, not in a Python
loop over characters:

* :attr:`CxxSource.code` is the text with every comment and the inside of
  every string/char literal replaced by spaces. Newlines are kept and nothing
  moves, so an offset, line or column in ``code`` is the same in ``text`` and
  a regex can run on code only. Quote characters and literal prefixes stay,
  so ``asm("...")`` still reads ``asm("   ")``. The header name of an
  ``#include`` is kept as it is (it is not a string literal).
* :attr:`CxxSource.strings` lists the string literals (raw strings included)
  with the span of their body, so a rule can look inside ``asm("...")``.
* ``CxxSource.guarded(line)`` says whether the line lies in any branch of a
  preprocessor conditional whose controlling expression names a ROCm/HIP macro
  (``#ifdef USE_ROCM``, ``#if defined(__HIP_PLATFORM_AMD__)``, ``#ifndef
  __HIPCC__`` ... ``#else``). Such code is either not compiled on ROCm or was
  written for it.
* ``CxxSource.dead(line)`` says whether the line lies in a branch that is never
  compiled on any platform: ``#if 0``, ``#if false``, ``#if 0 && X`` and
  ``#elif 0`` bodies, and the ``#elif``/``#else`` branches after an ``#if 1``.
  The ``#else`` of an ``#if 0`` is live. Nesting is followed (anything inside a
  dead branch is dead, whatever its own conditions say). Rules report nothing
  on dead lines.

`gpuport hipify` reuses the same view for its hazard pass.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from gpuport import textre
from gpuport.scan.cxx_expr import (
    _ELIF_KINDS,
    _IF_KINDS,
    ROCM_MACRO,
    const_value,
    rocm_guard_expr,
)

__all__ = [
    "ROCM_MACRO",
    "CxxSource",
    "Directive",
    "StringLiteral",
    "const_value",
    "lex",
    "rocm_guard_expr",
    "within",
]

# Scanning jumps between the characters that can open a comment, a literal or a
# directive; every branch starts with a literal character, so the regex engine
# skips everything else in C. What opened the match is then sorted out in Python.
_SCAN = textre.compile(r"//[^\n\\]*(?:\\[\s\S][^\n\\]*)*|/\*[\s\S]*?(?:\*/|\Z)|\"|'|\#")
_STR_BODY = textre.compile(r'[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*')
_CHR_BODY = textre.compile(r"[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*")
_RAW_OPEN = textre.compile(r'(?P<delim>[^()\\\s"]{0,16})\(')
_INCLUDE = textre.compile(r'\#[ \t]*(?:include|include_next|import)[ \t]*(?:"[^"\n]*"|<[^>\n]*>)')
_BLANKS = frozenset(" \t\r\f\v")
_STRING_PREFIXES = frozenset({"", "u8", "u", "U", "L"})
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
_PP_NUMBER_TAIL = textre.compile(r"[\w.']+$")
_DIRECTIVE = textre.compile(
    r"^[ \t]*\#[ \t]*(?P<kind>if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b"
    r"(?P<expr>[^\n\\]*(?:\\[\s\S][^\n\\]*)*)",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class StringLiteral:
    """One string literal: ``start``/``end`` span the whole token, ``body_*`` its contents."""

    start: int
    end: int
    body_start: int
    body_end: int
    raw: bool


@dataclass(frozen=True, slots=True)
class Directive:
    """A conditional preprocessor directive (``#if`` ... ``#endif``)."""

    line: int
    offset: int
    kind: str
    expr: str
    rocm: bool
    #: The constant value of an ``#if``/``#elif`` expression made of literals only
    #: (``0``, ``false``, ``0 && defined(X)``, ``(1)``); None when it depends on macros.
    value: bool | None = None


class CxxSource:
    """The lexed view of one source text. Build it with :func:`lex`."""

    __slots__ = (
        "_closers",
        "_dead",
        "_guard",
        "_string_starts",
        "code",
        "directives",
        "line_starts",
        "strings",
        "text",
    )

    def __init__(
        self,
        text: str,
        code: str,
        strings: list[StringLiteral],
        directives: list[Directive],
        line_starts: list[int],
    ) -> None:
        self.text = text
        self.code = code
        self.strings = strings
        self._string_starts = [s.start for s in strings]
        self.directives = directives
        self.line_starts = line_starts
        self._guard = _guard_map(directives, len(self.line_starts))
        self._dead = _dead_map(directives, len(self.line_starts))
        self._closers: dict[str, dict[int, int]] = {}

    # -- positions -------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line_of(self, offset: int) -> int:
        """1-based line of ``offset``."""
        return bisect.bisect_right(self.line_starts, offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset``."""
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def offset_of(self, line: int, column: int = 1) -> int:
        """Offset of a 1-based ``line`` and ``column``."""
        return self.line_starts[line - 1] + column - 1

    def line_span(self, line: int) -> tuple[int, int]:
        """Offsets of the start and end (before the newline) of a 1-based line."""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return start, end

    def code_line(self, line: int) -> str:
        start, end = self.line_span(line)
        return self.code[start:end]

    # -- guards ----------------------------------------------------------------------------

    def guarded(self, line: int) -> bool:
        """Whether 1-based ``line`` is inside a ROCm-discriminating conditional."""
        return 0 < line < len(self._guard) and self._guard[line] > 0

    def guarded_at(self, offset: int) -> bool:
        return self.guarded(self.line_of(offset))

    def dead(self, line: int) -> bool:
        """Whether 1-based ``line`` is in a branch that is never compiled (``#if 0``)."""
        dead = self._dead
        return dead is not None and 0 < line < len(dead) and dead[line] > 0

    def dead_at(self, offset: int) -> bool:
        return self._dead is not None and self.dead(self.line_of(offset))

    # -- strings ---------------------------------------------------------------------------

    def strings_in(self, start: int, end: int) -> list[StringLiteral]:
        """String literals that begin within ``[start, end)``."""
        lo = bisect.bisect_left(self._string_starts, start)
        hi = bisect.bisect_left(self._string_starts, end)
        return self.strings[lo:hi]

    def string_body(self, lit: StringLiteral) -> str:
        return self.text[lit.body_start : lit.body_end]

    # -- brackets --------------------------------------------------------------------------

    def match_close(self, open_offset: int, limit: int = 200_000) -> int | None:
        """Offset of the bracket closing the one at ``open_offset`` (``(``, ``[`` or ``{``).

        Only the same kind of bracket is counted (comments and strings are already
        blank). Gives up after ``limit`` characters so unbalanced macros cost little.
        """
        opener = self.code[open_offset]
        closers = self._closers.get(opener)
        if closers is None:  # one pass per bracket kind: linear however many are asked for
            closers = self._closers[opener] = _pair_brackets(
                self.code, _BRACKET_RE[opener], self.directives
            )
        close = closers.get(open_offset)
        if close is None or close - open_offset >= limit:
            return None
        return close

    def call_args(self, open_offset: int) -> list[tuple[int, int]]:
        """Spans of the top-level, comma-separated arguments inside the parentheses at
        ``open_offset``; empty when unbalanced or when there are no arguments."""
        close = self.match_close(open_offset)
        if close is None:
            return []
        spans: list[tuple[int, int]] = []
        start = open_offset + 1
        for pos in self.top_level(open_offset + 1, close, ","):
            spans.append((start, pos))
            start = pos + 1
        if spans or self.code[start:close].strip():
            spans.append((start, close))
        return spans

    def top_level(self, start: int, end: int, sep: str) -> Iterator[int]:
        """Offsets in ``[start, end)`` of ``sep`` (``,``, ``:`` or ``;``)
        outside any bracket pair opened in that range. A closed pair is jumped over, so a
        caller that asks this of every nested call still does linear work in total."""
        code = self.code
        depth = 0
        pos = start
        while pos < end:
            m = _TOP_SCAN[sep].search(code, pos, end)
            if m is None:
                return
            ch = m.group()
            pos = m.end()
            if ch in "([{":
                close = self.match_close(m.start())
                if close is not None and close < end:
                    pos = close + 1
                else:
                    depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0:
                yield m.start()

    def function_bodies(
        self, qualifier: re.Pattern[str], exclude: re.Pattern[str] | None = None
    ) -> list[tuple[int, int]]:
        """Spans ``(open_brace, close_brace)`` of functions whose declaration carries a
        match of ``qualifier`` (e.g. ``__global__``), merged so they do not overlap.

        ``exclude`` drops declarations whose head (qualifier to brace) matches it, such
        as ``__host__`` for host-device functions. A qualifier followed by ``;`` or
        ``=`` before any ``{`` at parenthesis depth 0 is a variable or a prototype.
        """
        spans: list[tuple[int, int]] = []
        code = self.code
        for m in qualifier.finditer(code):
            pos = m.end()
            stop = min(len(code), pos + _HEAD_LIMIT)
            while (t := _HEAD_RE.search(code, pos, stop)) is not None:
                ch = t.group()
                pos = t.end()
                if ch == "(":  # jump over the parameter list; an unclosed one ends nothing
                    close = self.match_close(t.start())
                    if close is None:
                        break
                    pos = close + 1
                    continue
                if ch == ")":
                    continue
                if ch == "{":
                    lo = max(0, m.start() - 300)
                    head_start = max(code.rfind(c, lo, m.start()) for c in ";{}") + 1
                    head = code[max(head_start, lo) : t.start()]
                    if exclude is not None and exclude.search(head):
                        break
                    close = self.match_close(t.start())
                    if close is not None:
                        spans.append((t.start(), close))
                break
        spans.sort()
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return merged


_BRACKET_RE = {
    "(": textre.compile(r"[()]"),
    "[": textre.compile(r"[\[\]]"),
    "{": textre.compile(r"[{}]"),
}
_TOP_SCAN = {sep: textre.compile(r"[()\[\]{}" + sep + "]") for sep in ",:;"}
_HEAD_RE = textre.compile(r"[(){};=]")
#: A declaration head (qualifier to ``{``) longer than this is not looked at: it bounds the
#: work per qualifier, so a file of qualifiers alone stays linear.
_HEAD_LIMIT = 8192


def launch_configs(code: str) -> Iterator[tuple[int, int, int]]:
    """``(start, cfg_start, cfg_end)`` of each ``<<<cfg>>>`` in ``code`` with no ``;`` in
    ``cfg``: what ``textre.finditer(r"<<<([^;]*?)>>>", code)`` finds, in linear time (that regex
    retries every ``<`` of a ``<<<<...`` run against the rest of the file)."""
    pos = 0
    next_close = next_semi = -2  # -2: not looked for yet
    while (lt := code.find("<<<", pos)) != -1:
        cfg = lt + 3
        if next_close != -1 and next_close < cfg:
            next_close = code.find(">>>", cfg)
        if next_close == -1:
            return
        if next_semi != -1 and next_semi < cfg:
            next_semi = code.find(";", cfg)
        if next_semi != -1 and next_semi < next_close:
            pos = lt + 1
            continue
        yield lt, cfg, next_close
        pos = next_close + 3


def _pair_brackets(
    code: str, pattern: re.Pattern[str], directives: Sequence[Directive] = ()
) -> dict[int, int]:
    """Offset of the closing bracket for each opening one that is closed (one bracket kind).

    Each branch of a conditional (``#if A {`` ``#else {`` ``#endif``) is paired from the
    state before the ``#if``, and the first branch's state goes on after ``#endif``: two
    branches that each open a block the code after them closes once (fastllm's
    ``#if (CUDART_VERSION < 10000) ... {`` ``#else ... {``) left every later bracket of the
    file unpaired (issue 24, eleventh sample). The stack is a linked list, so keeping its
    state at a directive costs nothing however deep it is."""
    closers: dict[int, int] = {}
    stack: _Stack = None
    frames: list[tuple[_Stack, _Stack, bool]] = []  # (before #if, after branch 1, seen else)
    k = 0
    for m in pattern.finditer(code):
        while k < len(directives) and directives[k].offset < m.start():
            stack = _branch(directives[k].kind, stack, frames)
            k += 1
        if m.group() in "([{":
            stack = (m.start(), stack)
        elif stack is not None:
            closers.setdefault(stack[0], m.start())
            stack = stack[1]
    return closers


#: a bracket stack as a linked list: (offset of the top opener, the rest), or None when empty
_Stack = tuple[int, "_Stack"] | None


def _branch(kind: str, stack: _Stack, frames: list[tuple[_Stack, _Stack, bool]]) -> _Stack:
    """The bracket stack after conditional directive ``kind`` (see :func:`_pair_brackets`)."""
    if kind in ("if", "ifdef", "ifndef"):
        frames.append((stack, None, False))
    elif kind in ("elif", "elifdef", "elifndef", "else") and frames:
        before, first, seen = frames[-1]
        frames[-1] = (before, first if seen else stack, True)
        return before
    elif kind == "endif" and frames:
        _before, first, seen = frames.pop()
        if seen:
            return first
    return stack


def within(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` falls inside one of the sorted, disjoint ``spans``."""
    i = bisect.bisect_right(spans, (offset, 1 << 62)) - 1
    return i >= 0 and spans[i][0] <= offset <= spans[i][1]


def _line_starts(text: str) -> list[int]:
    """The offset each line starts at (str.find, not one regex match per line)."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def _blank(s: str) -> str:
    """``s`` with every character but line ends blank (string operations: a regex
    substitution called once per character was most of the lexer's time)."""
    if "\n" not in s and "\r" not in s:
        return " " * len(s)
    return "\n".join("\r".join(" " * len(q) for q in p.split("\r")) for p in s.split("\n"))


def _guard_map(directives: list[Directive], nlines: int) -> bytearray:
    """Per line (index = 1-based line), >0 when inside a ROCm-discriminating conditional."""
    diff = [0] * (nlines + 2)
    stack: list[list[int]] = []  # [start line, rocm flag]
    for d in directives:
        if d.kind in ("if", "ifdef", "ifndef"):
            stack.append([d.line, int(d.rocm)])
        elif d.kind in ("elif", "elifdef", "elifndef"):
            if stack and d.rocm:
                stack[-1][1] = 1
        elif d.kind == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                diff[start] += 1
                diff[d.line + 1] -= 1
    for start, rocm in stack:  # unterminated: runs to the end of the file
        if rocm:
            diff[start] += 1
            diff[nlines + 1] -= 1
    out = bytearray(nlines + 2)
    level = 0
    for i in range(nlines + 2):
        level += diff[i]
        out[i] = 1 if level > 0 else 0
    return out


def _dead_map(directives: list[Directive], nlines: int) -> bytearray | None:
    """Per line (index = 1-based line), 1 when in a branch no compiler ever sees; None when
    the file has no such branch (the common case costs one scan of the directives)."""
    if not any(d.value is not None for d in directives):
        return None
    out = bytearray(nlines + 2)
    stack: list[list[int]] = []  # [enclosing region dead, this branch dead, a branch was taken]
    dead = 0
    prev = 0  # the line of the previous directive
    for d in directives:
        if dead and d.line > prev + 1:
            out[prev + 1 : d.line] = b"\x01" * (d.line - prev - 1)
        if d.kind in _IF_KINDS:
            out[d.line] = dead
            branch = int(dead or d.value is False)
            stack.append([dead, branch, int(d.value is True)])
            dead = branch
        elif stack and d.kind in _ELIF_KINDS:
            frame = stack[-1]
            out[d.line] = frame[0]
            if frame[2]:
                frame[1] = 1
            else:
                frame[1] = int(frame[0] or d.value is False)
                frame[2] = int(d.value is True)
            dead = frame[1]
        elif stack and d.kind == "else":
            frame = stack[-1]
            out[d.line] = frame[0]
            frame[1] = int(frame[0] or frame[2])
            frame[2] = 1
            dead = frame[1]
        elif stack and d.kind == "endif":
            dead = stack.pop()[0]
            out[d.line] = dead
        else:  # an #elif/#else/#endif with no #if: leave the state alone
            out[d.line] = dead
        prev = d.line
    if dead and nlines > prev:
        out[prev + 1 : nlines + 1] = b"\x01" * (nlines - prev)
    return out


def _word_before(text: str, pos: int, limit: int = 4) -> str:
    """The identifier characters right before ``pos`` (at most ``limit`` + 1 of them)."""
    k = pos
    while k > 0 and pos - k <= limit and (text[k - 1].isalnum() or text[k - 1] == "_"):
        k -= 1
    return text[k:pos]


def _match_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """End of ``pattern`` matched at ``pos`` (the body patterns always match, maybe empty)."""
    m = pattern.match(text, pos)
    return m.end() if m else pos


def _in_number(text: str, pos: int) -> bool:
    """Whether the quote at ``pos`` continues a number (a C++14 digit separator)."""
    m = _PP_NUMBER_TAIL.search(text, max(0, pos - 80), pos)
    if m is None:
        return False
    tok = m.group()
    return tok[0].isdigit() or (tok[0] == "." and tok[1:2].isdigit())


def _lex(text: str) -> CxxSource:
    parts: list[str] = []
    strings: list[StringLiteral] = []
    last = 0
    pos = 0
    size = len(text)
    search = _SCAN.search
    while pos < size:
        m = search(text, pos)
        if m is None:
            break
        start = m.start()
        ch = text[start]
        if ch == "/":  # a comment
            parts.append(text[last:start])
            parts.append(_blank(m.group()))
            last = pos = m.end()
        elif ch == "#":  # keep the header name of an #include as code
            k = start  # only blanks before it on its line (looked at once per blank run)
            while k > 0 and text[k - 1] in _BLANKS:
                k -= 1
            inc = _INCLUDE.match(text, start) if k == 0 or text[k - 1] == "\n" else None
            pos = inc.end() if inc else start + 1
        elif ch == "'":
            if _in_number(text, start):
                pos = start + 1  # a digit separator: 1'000'000
                continue
            body_end = _match_end(_CHR_BODY, text, start + 1)
            closed = body_end < size and text[body_end] == "'"
            parts.append(text[last : start + 1])
            parts.append(_blank(text[start + 1 : body_end]))
            last = pos = body_end + 1 if closed else body_end
            if closed:
                parts.append("'")
        else:  # a string literal, maybe prefixed, maybe raw
            prefix = _word_before(text, start)
            raw = _RAW_OPEN.match(text, start + 1) if prefix in _RAW_PREFIXES else None
            parts.append(text[last : start + 1])
            if raw is not None:
                delim = raw.group("delim")
                close = text.find(")" + delim + '"', raw.end())
                # unterminated: the rest of the file is the string, as for a compiler (and
                # one search, not one per `R"(` of a file that has many)
                end = size if close == -1 else close + len(delim) + 2
                body_end = size if close == -1 else close
                parts.append(_blank(text[start + 1 : end - 1 if close != -1 else end]))
                if close != -1:
                    parts.append('"')
                strings.append(
                    StringLiteral(start - len(prefix), end, raw.end(), body_end, raw=True)
                )
                last = pos = end
                continue
            body_end = _match_end(_STR_BODY, text, start + 1)
            closed = body_end < size and text[body_end] == '"'
            parts.append(_blank(text[start + 1 : body_end]))
            end = body_end + 1 if closed else body_end
            if closed:
                parts.append('"')
            lit_start = start - len(prefix) if prefix in _STRING_PREFIXES else start
            strings.append(StringLiteral(lit_start, end, start + 1, body_end, raw=False))
            last = pos = end
    parts.append(text[last:])
    code = "".join(parts)
    line_starts = _line_starts(text)
    directives = [
        Directive(
            line=bisect.bisect_right(line_starts, m.start("kind")),
            offset=m.start("kind"),
            kind=m.group("kind"),
            expr=(expr := _unguarded(code, m)),
            rocm=rocm_guard_expr(m.group("kind"), expr),
            value=const_value(expr) if m.group("kind") in ("if", "elif") else None,
        )
        for m in _DIRECTIVE.finditer(code)
    ]
    return CxxSource(text, code, strings, directives, line_starts)


#: the name an include guard's ``#ifndef`` stands for when it looks like a platform test
INCLUDE_GUARD = "GPUPORT_INCLUDE_GUARD"


def _unguarded(code: str, m: re.Match[str]) -> str:
    """A directive's expression; an include guard named for ROCm (``#ifndef UCT_ROCM_COPY_EP_H``
    then ``#define UCT_ROCM_COPY_EP_H``) is no test of the platform, and read as one the whole
    header was "a branch ROCm never takes" (issue 24, fourteenth sample: ucx's ROCm
    transport headers listed as not built)."""
    expr = m.group("expr").strip()
    if m.group("kind") != "ifndef" or ROCM_MACRO.search(expr) is None:
        return expr
    after = _GUARD_DEFINE.match(code, m.end())
    if after is not None and after.group(1) == expr:
        return INCLUDE_GUARD
    return expr


_GUARD_DEFINE = textre.compile(r"\s*#[ \t]*define[ \t]+(\w+)")


@lru_cache(maxsize=2)
def lex(text: str) -> CxxSource:
    """Lex ``text`` once; the last few results are cached so several rule passes share them."""
    return _lex(text)
