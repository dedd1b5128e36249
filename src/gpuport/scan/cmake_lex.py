"""CMake's lexical layer, shared by the GP4xx checker and the project model: comments,
commands and their arguments. Nothing is evaluated: commands are found by their
``name(...)`` shape and arguments split the way CMake splits them (quotes kept together)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpuport import textre

__all__ = ["Command", "Word", "commands", "strip_cmake_comments"]

_BRACKET = textre.compile(r"\[(=*)\[")
_COMMAND = textre.compile(r"(?<!\w)([A-Za-z_]\w*)[ \t]*\(")  # (?<!\w): linear on long words
# An unterminated quote runs to the end (as commands() reads it): a quoted alternative that
# had to fail there made each search rescan the rest of the text, quadratic on `"\"\"\"...`.
_WORD = textre.compile(r'"((?:[^"\\]|\\.)*)"?|[^\s"]+', re.S)


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
        elif c == "\\":  # an escape outside quotes (\# \" \[): the next character is literal
            i += 2
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
            quoted = m.group(1)  # the text between the quotes, or None
            text = m.group(0) if quoted is None else quoted
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
            elif ch == "\\":  # an escaped character (\( \) \"): no paren, no quote
                j += 1
            elif ch == "[" and (b := _BRACKET.match(code, j)) is not None:
                # a bracket argument: its parentheses and quotes are its text (to its end)
                close = code.find("]" + b.group(1) + "]", b.end())
                j = n - 1 if close < 0 else close + len(b.group(1)) + 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        yield Command(m.group(1).lower(), code[m.end() : j - 1], m.start(), m.end(), j)
        pos = j
