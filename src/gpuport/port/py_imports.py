"""Where ``port`` may add an import line to a Python file, and which files it edits at all
(thirty-ninth re-run F25).

gpuport reads a Python file as UTF-8 and places edits on that reading; Python decodes the
file with its PEP 263 coding cookie (line 1 or 2). A cookie naming another encoding
(``utf-7``: ``+ACM-`` is ``#``) makes both readings differ, so such a file is not edited
unless the two agree: UTF-8 itself, or an ASCII file under an ASCII-compatible one-byte
encoding. An added import never goes above the first lines' shebang or coding cookie (the
shell would run the file, or Python decode it as UTF-8), nor above the docstring or a
``from __future__`` import, and is checked by parsing the result: the module's statements
must be the old ones with the one import added.
"""

from __future__ import annotations

import ast
import codecs

from gpuport import textre

__all__ = ["foreign_cookie", "import_at"]

#: PEP 263's cookie, as the tokenizer reads it (on line 1 or 2)
_COOKIE = textre.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_FIRST_LINES = textre.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
#: encodings that read an ASCII text as ASCII (one byte a character, no shift states)
_ASCII_SAFE = textre.compile(r"ascii|iso8859-\d+|cp125\d|latin-1|koi8-[ru]|mac-roman")


def foreign_cookie(text: str) -> str | None:
    """Why Python would not read ``text`` (gpuport's UTF-8 reading) as gpuport does: a
    coding cookie on line 1 or 2 naming another encoding; None when both readings agree."""
    rows = []
    pos = 0
    for _ in range(2):
        m = _FIRST_LINES.match(text, pos)
        if m is None or not m.group(0):
            break
        rows.append(m.group(0))
        pos = m.end()
    for row in rows:
        m = _COOKIE.match(row)
        if m is None:
            continue
        name = m.group(1)
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            return f"its coding cookie names {name!r}, an encoding Python does not know"
        if codec in ("utf-8", "utf-8-sig"):
            return None
        if _ASCII_SAFE.fullmatch(codec) and text.isascii():
            try:
                if text.encode("ascii").decode(codec) == text:
                    return None
            except UnicodeError:
                pass
        return (
            f"its coding cookie says {name}: Python decodes the file otherwise than gpuport's "
            "UTF-8 reading, where its edits are placed"
        )
    return None


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def import_at(tree: ast.Module, text: str, starts: list[int], line: str) -> tuple[int, str] | None:
    """Where to insert the import ``line`` (one statement ending in a newline) and the text
    to insert: after the last top-level import of the module's opening block, else after
    its docstring, never above the shebang or coding-cookie lines (the first two, when they
    are comments). None when the module parsed with it is not the old one plus that import
    (a backslash-continued line, a statement sharing the import's line)."""
    last: ast.stmt | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            last = stmt
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        elif last is not None:
            break
    if last is not None:
        row = last.end_lineno or last.lineno
    elif tree.body and _docstring(tree.body[0]):
        row = tree.body[0].end_lineno or tree.body[0].lineno
    else:
        row = 0
    floor = 0  # the shebang / coding-cookie lines stay the first ones
    while floor < 2 and floor + 1 < len(starts):
        first = text[starts[floor] : starts[floor + 1]]
        if first.strip() and not first.lstrip(" \t\f").startswith("#"):
            break
        floor += 1
    row = max(row, floor)
    pos = starts[row] if row < len(starts) else len(text)
    insert = line if pos == 0 or text[pos - 1] in "\r\n" else "\n" + line
    try:
        new = ast.parse(text[:pos] + insert + text[pos:])
        added = ast.dump(ast.parse(line).body[0])
    except (SyntaxError, ValueError, RecursionError):
        return None
    old = [ast.dump(s) for s in tree.body]
    got = [ast.dump(s) for s in new.body]
    docstring = bool(tree.body) and _docstring(tree.body[0])
    for j, dump in enumerate(got):
        if dump == added and got[:j] + got[j + 1 :] == old and not (docstring and j == 0):
            return pos, insert
    return None
