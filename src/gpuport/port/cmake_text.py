"""CMake text ``fix_cmake`` reads before it edits: what it cannot be sure of, and where a
statement closes.

A bracket comment (``#[[ ... ]]``, ``#[=[ ... ]=]``) or a bracket argument (``[[ ... ]]``)
runs over lines and hides or quotes whatever is inside; the line-by-line reading of the fix
took its body for arguments or a trailing comment, so text inside the comment became a live
command of the HIP branch or swallowed an inserted ``endif()`` (thirty-ninth re-run F5, F6).
A file holding one is left, with the reason. The HIP-marking block goes after the ``)`` that
closes the statement naming the last ``.cu`` source, found with CMake's lexical rules
(comments blanked, quoted arguments kept whole), not after the first ``)`` following the
first mention of a name (a comment, a quoted ``"util(x).cpp"``: F23).

The statements the fix edits are found by line patterns, then kept only where CMake's lexical
rules (``Statements``) read a command there: a ``find_package(CUDA...)``, ``project()`` or
``if(`` line inside a multi-line quoted argument is the string's text, and a ``# ")`` after
it closes the string rather than starting a comment (fortieth re-run F3). The fix's option
goes after the ``project()`` call CMake reads, to its real ``)`` (F13).
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.cmake_lex import Command, commands, strip_cmake_comments

__all__ = ["Statements", "after_head", "bracket_at", "cuda_lookups", "mark_named"]

_OPENER = textre.compile(r"[\"#\\]|\[=*\[")
_BRACKET = textre.compile(r"\[=*\[")
_CU = textre.compile(r"(?<![\w${}/.-])([\w./-]+\.cu)(?![\w.])")
_FIND = textre.compile(
    r"^([ \t]*)(find_package\s*\(\s*(?:CUDAToolkit|CUDA)\b[^)]*\))[ \t]*(#[^\n]*)?$", re.M | re.I
)
_ENABLE = textre.compile(
    r"^([ \t]*)(enable_language\s*\(\s*CUDA\s*\))[ \t]*(#[^\n]*)?$", re.M | re.I
)
_PLAIN_NAME = textre.compile(r"[\w./+-]+")  # written back into CMake: nothing it would parse


#: what makes a CUDA lookup matter: the CUDA language, FindCUDA's variables and commands,
#: CUDAToolkit's targets and variables
_CUDA_USE = textre.compile(
    r"\$\{CUDA_\w+\}|\bCUDA_(?:FOUND|\w+_LIBRAR\w*|INCLUDE\w*)\b|(?i:\bcuda_add_\w+)"
    r"|\bCUDA::\w+|\bCUDAToolkit_\w+|(?i:\benable_language\s*\(\s*CUDA\b)"
)


def uses_cuda(text: str) -> bool:
    """Whether CMake text enables CUDA or reads what a CUDA lookup gives."""
    return _CUDA_USE.search(text) is not None


def bracket_at(text: str) -> int | None:
    """Offset of the first bracket comment or bracket argument outside quoted arguments and
    line comments, or None."""
    i, n = 0, len(text)
    while (m := _OPENER.search(text, i)) is not None:
        tok = m.group()
        if tok == '"':  # a quoted argument, to its closing quote (escapes skipped)
            j = m.end()
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif tok == "\\":  # an escape (\# \[ \"): the next character is literal
            i = m.end() + 1
        elif tok == "#":
            if _BRACKET.match(text, m.end()):
                return m.start()
            nl = text.find("\n", m.end())
            if nl < 0:
                return None
            i = nl
        else:
            return m.start()
    return None


def mark_named(
    text: str, eol: str, option: str, mark: str, extra: list[str], after: int
) -> tuple[int, str] | None:
    """(offset, block): after the statement naming the file's last .cu source (or the
    ``set_source_files_properties`` ending at ``after`` that gives ``extra`` the CUDA
    language), those sources are HIP on the HIP build. None when no statement names one."""
    code = strip_cmake_comments(text)
    names = set(_CU.findall(code)) | set(extra)
    cu = sorted(c for c in names if _PLAIN_NAME.fullmatch(c))
    if not cu:
        return None
    wanted = set(cu)
    last = None
    for cmd in commands(code):
        named = bool(set(_CU.findall(cmd.args)) & wanted) or any(
            w.text in wanted for w in cmd.words()
        )
        if (named or (after and cmd.start < after <= cmd.end)) and (
            last is None or cmd.end > last.end
        ):
            last = cmd
    if last is None or last.end > len(text) or code[last.end - 1] != ")":
        return None  # a statement that does not close: nothing placed after it
    ls = text.rfind("\n", 0, last.start) + 1
    indent = textre.match(r"[ \t]*", text[ls:]).group(0)  # type: ignore[union-attr]
    nl = text.find("\n", last.end)
    end = len(text) if nl < 0 else nl
    if code[last.end : end].strip():
        return None  # another statement on the closing line: CMake reads none such
    block = (
        f"{eol}{indent}if({option})  {mark} the CUDA sources are HIP on the HIP build{eol}"
        f"{indent}    set_source_files_properties({' '.join(cu)} PROPERTIES LANGUAGE HIP){eol}"
        f"{indent}endif()"
    )
    return end, block


class Statements:
    """The commands CMake reads in a text (comments blanked, quoted and bracket arguments
    whole), by the offset of their name: a ``name(`` inside a string is none of them."""

    def __init__(self, text: str) -> None:
        self.code = strip_cmake_comments(text)
        self.by_start: dict[int, Command] = {c.start: c for c in commands(self.code)}

    def starts(self, start: int) -> bool:
        """Whether a command CMake reads starts (its name) at ``start``."""
        return start in self.by_start

    def exact(self, start: int, end: int, line_end: int | None = None) -> bool:
        """Whether a command CMake reads runs from ``start`` to ``end`` (just past its ``)``),
        with only blanks and a line comment after it to ``line_end``."""
        cmd = self.by_start.get(start)
        if cmd is None or cmd.end != end or self.code[end - 1 : end] != ")":
            return False
        return line_end is None or not self.code[end:line_end].strip()


def after_head(text: str, names: tuple[str, ...]) -> int:
    """The offset after the line that ends the run of ``names`` calls the file opens with
    (comments and blank lines between them), as CMake reads them; 0 when there is none."""
    st = Statements(text)
    pos = 0
    for cmd in sorted(st.by_start.values(), key=lambda c: c.start):
        if cmd.name not in names or st.code[pos : cmd.start].strip():
            break
        nl = text.find("\n", cmd.end)
        if nl < 0 or not st.exact(cmd.start, cmd.end, nl):
            break  # unclosed, or another statement on its closing line: nothing after it
        pos = nl + 1
    return pos


def cuda_lookups(text: str) -> tuple[list[re.Match[str]], str]:
    """The CUDA lookups (``find_package(CUDA...)``, ``enable_language(CUDA)``) CMake reads as
    commands, in order, and why one it reads cannot be wrapped line by line (empty if none).
    A line inside a multi-line quoted argument is the string's text, not a lookup: wrapped,
    its ``# ")`` closed the string and gpuport's ``endif()`` became live (fortieth re-run F3)."""
    st = Statements(text)
    out: list[re.Match[str]] = []
    why = ""
    for m in sorted([*_FIND.finditer(text), *_ENABLE.finditer(text)], key=lambda x: x.start()):
        if st.exact(m.start(2), m.end(2), m.end()):
            out.append(m)
        elif st.starts(m.start(2)) and not why:
            at = textre.line_finder(text)(m.start(2))
            why = (
                f"line {at}: {m.group(2)[:60]!r} is a CMake command "
                "gpuport does not read to its end line by line (a quoted ')' or text after "
                "it), so no HIP branch is written (left to a person)"
            )
    return out, why
