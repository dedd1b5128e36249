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
"""

from __future__ import annotations

from gpuport import textre
from gpuport.scan.cmake_lex import commands, strip_cmake_comments

__all__ = ["bracket_at", "mark_named"]

_OPENER = textre.compile(r"[\"#\\]|\[=*\[")
_BRACKET = textre.compile(r"\[=*\[")
_CU = textre.compile(r"(?<![\w${}/.-])([\w./-]+\.cu)(?![\w.])")
_PLAIN_NAME = textre.compile(r"[\w./+-]+")  # written back into CMake: nothing it would parse


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
