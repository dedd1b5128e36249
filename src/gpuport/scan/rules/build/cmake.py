"""CMake syntax for the GP4xx checker: comments, commands, arguments, dead blocks.

Nothing here is evaluated: commands are found by their ``name(...)`` shape,
arguments are split the way CMake splits them (quotes kept together), and only
literal constants decide whether an ``if()`` branch is dead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport import textre
from gpuport.scan.rules.build.common import ROCM_COND, Guards
from gpuport.scan.rules.build.text import Spans, Text

_BRACKET = textre.compile(r"\[(=*)\[")
_COMMAND = textre.compile(r"(?<!\w)([A-Za-z_]\w*)[ \t]*\(")  # (?<!\w): linear on long words
_WORD = textre.compile(r'"(?:[^"\\]|\\.)*"|[^\s"]+', re.S)
# if(<constant>): CMake's false and true constants (a number other than 0 is true too).
_FALSE = textre.compile(r'(?i)0+|off|no|false|n|ignore|notfound|""|\S*-notfound')
_TRUE = textre.compile(r"(?i)0*[1-9]\d*|on|yes|true|y")
# A generator expression whose condition is "compiling CUDA": $<$<COMPILE_LANGUAGE:CUDA>:...>,
# $<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:...>, or one of these inside $<AND:...>.
_CUDA_LANG = textre.compile(r"\$<(?:COMPILE_LANGUAGE:CUDA|COMPILE_LANG_AND_ID:CUDA,[^>]*)>")


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def strip_cmake_comments(text: str) -> str:
    """Blank out ``#`` and ``#[[...]]`` comments, keeping strings and bracket arguments."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "[" and (m := _BRACKET.match(text, i)):
            end = text.find("]" + m.group(1) + "]", m.end())
            i = n if end < 0 else end + len(m.group(1)) + 2
        elif c == "#":
            m = _BRACKET.match(text, i + 1)
            if m:
                end = text.find("]" + m.group(1) + "]", m.end())
                end = n if end < 0 else end + len(m.group(1)) + 2
            else:
                end = text.find("\n", i)
                end = n if end < 0 else end
            _blank(chars, i, end)
            i = end
        else:
            i += 1
    return "".join(chars)


@dataclass(frozen=True)
class Word:
    text: str  # without surrounding quotes
    start: int  # offset in the file's text


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    args: str
    start: int  # offset of the command name
    args_start: int
    end: int  # offset just past ')'

    def words(self) -> list[Word]:
        """The arguments, split on whitespace with quoted arguments kept whole."""
        out: list[Word] = []
        for m in _WORD.finditer(self.args):
            raw = m.group(0)
            text = raw[1:-1] if raw.startswith('"') and len(raw) > 1 else raw
            out.append(Word(text, self.args_start + m.start()))
        return out


def commands(code: str) -> Iterator[Command]:
    pos = 0
    while (m := _COMMAND.search(code, pos)) is not None:
        depth, j, n = 1, m.end(), len(code)
        while j < n and depth:
            ch = code[j]
            if ch == '"':
                j += 1
                while j < n and code[j] != '"':
                    j += 2 if code[j] == "\\" else 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        yield Command(m.group(1).lower(), code[m.end() : j - 1], m.start(), m.end(), j)
        pos = j


def _cond_tokens(args: str) -> list[str]:
    """The words of an ``if()`` condition, with each parenthesis a word of its own."""
    return textre.findall(r'"(?:[^"\\]|\\.)*"|[()]|[^\s()"]+', args)


def _split_or(tokens: list[str]) -> list[list[str]]:
    """``tokens`` split at ``OR`` outside parentheses, each part without wrapping parens."""
    parts: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        depth += (tok == "(") - (tok == ")")
        if depth == 0 and tok == "OR":
            parts.append([])
        else:
            parts[-1].append(tok)
    return [_unwrap(p) for p in parts]


def _unwrap(tokens: list[str]) -> list[str]:
    while len(tokens) >= 2 and tokens[0] == "(" and tokens[-1] == ")":
        depth = 0
        for i, tok in enumerate(tokens):
            depth += (tok == "(") - (tok == ")")
            if depth == 0 and i < len(tokens) - 1:
                return tokens
        tokens = tokens[1:-1]
    return tokens


def rocm_condition(args: str) -> bool:
    """Whether an ``if()``/``elseif()`` condition branches on ROCm/HIP: it names ROCm, and
    when it is a disjunction every part names ROCm with the same polarity, so
    ``if(USE_CUDA OR USE_ROCM)`` (taken on CUDA and ROCm alike) is not a guard."""
    if not ROCM_COND.search(args):
        return False
    parts = _split_or(_cond_tokens(args))
    if len(parts) < 2:
        return True
    signs = set()
    for part in parts:
        if not ROCM_COND.search(" ".join(part)):
            return False
        signs.add(bool(part) and part[0] == "NOT")
    return len(signs) == 1


def rocm_guards(cmds: list[Command], text: Text) -> Guards:
    """Line ranges of ``if()`` blocks (all branches) whose conditions name ROCm/HIP."""
    guards = Guards()
    stack: list[tuple[int, bool]] = []
    last = len(text.starts)
    for cmd in cmds:
        line = text.pos(cmd.start)[0]
        if cmd.name == "if":
            stack.append((line, rocm_condition(cmd.args)))
        elif cmd.name == "elseif" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or rocm_condition(cmd.args))
        elif cmd.name == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                guards.ranges.append((start, line))
    guards.ranges.extend((start, last) for start, rocm in stack if rocm)
    return guards


def dead_spans(cmds: list[Command], end: int) -> Spans:
    """Offsets of branches that never run: ``if(0)``/``if(OFF)``/``if(FALSE)`` bodies, and
    the ``elseif``/``else`` branches after an ``if(1)``/``if(ON)``/``if(TRUE)``."""
    spans: Spans = []
    stack: list[tuple[int | None, bool]] = []  # (start of the dead branch, a branch taken)
    for cmd in cmds:
        cond = cmd.args.strip()
        if cmd.name == "if":
            stack.append(_branch(cond, False, cmd.end))
        elif cmd.name in ("elseif", "else", "endif") and stack:
            dead_from, taken = stack.pop()
            if dead_from is not None:
                spans.append((dead_from, cmd.start))
            if cmd.name == "elseif":
                stack.append(_branch(cond, taken, cmd.end))
            elif cmd.name == "else":
                stack.append((cmd.end if taken else None, True))
    spans.extend((start, end) for start, _ in stack if start is not None)
    return spans


def _branch(cond: str, taken: bool, body: int) -> tuple[int | None, bool]:
    if taken or _FALSE.fullmatch(cond):
        return body, taken
    return None, bool(_TRUE.fullmatch(cond))


def cuda_only_spans(code: str) -> Spans:
    """Values of generator expressions that apply only when CUDA is compiled (one pass)."""
    spans: Spans = []
    stack: list[list[int]] = []  # [offset of "$<", offset of its first ":" or -1]
    j, n = 0, len(code)
    while j < n:
        ch = code[j]
        if ch == "$" and code.startswith("$<", j):
            stack.append([j, -1])
            j += 2
            continue
        if stack and ch == ":" and stack[-1][1] < 0:
            stack[-1][1] = j
        elif stack and ch == ">":
            start, colon = stack.pop()
            cond = code[start + 2 : colon] if colon >= 0 else ""
            if _CUDA_LANG.fullmatch(cond) or (
                cond.startswith("$<AND:")
                and _CUDA_LANG.search(cond)
                and not textre.search(r"\$<(?:OR|NOT):", cond)
            ):
                spans.append((colon + 1, j))
        j += 1
    return spans
