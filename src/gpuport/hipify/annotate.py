"""``--annotate``: write each hazard into the source as a ``// gpuport: GP3xx ...`` comment.

The comment goes on its own line above the hazard's line, with that line's indentation (above
the first line of a macro when the hazard sits on a ``\\``-continued line, so the macro is not
cut). Comments are inserted into the *original* text before translation: the translator never
touches comments, and line numbers of the hazards refer to that text. Annotating is idempotent:
a comment that is already among the ``// gpuport:`` lines directly above is not added again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuport import textre
from gpuport.linebreaks import odd_line_break
from gpuport.scan.finding import Finding

__all__ = ["COMMENT_PREFIX", "annotate", "comment_for"]

COMMENT_PREFIX = "// gpuport: "
_SUGGESTION = textre.compile(r";\s*(replace with .+)$", re.IGNORECASE)


def comment_for(finding: Finding) -> str:
    """``// gpuport: GP301 Inline PTX assembly — replace with __lane_id()`` (one line)."""
    text = f"{finding.rule_id} {finding.title}"
    if finding.rule_id == "GP301":
        m = _SUGGESTION.search(finding.message.strip())
        if m:
            text += f" — {m.group(1)}"
    return COMMENT_PREFIX + " ".join(text.split())


def _logical_start(lines: list[str], index: int) -> int:
    """The first physical line of the logical line ``index`` is part of: gcc and clang splice
    a backslash followed by blanks and the newline too (with a warning), so ``\\ `` continues
    the line as ``\\`` does (39th re-run F27: the comment landed inside a macro)."""
    while index > 0 and lines[index - 1].rstrip("\r\n").rstrip(" \t\f\v").endswith("\\"):
        index -= 1
    return index


def annotate(text: str, hazards: Iterable[Finding]) -> str:
    """``text`` with a comment line above each hazard's line (see the module docstring);
    unchanged when it holds a line break the compiler would not see where ``splitlines``
    does (a form feed in a ``//`` comment: the comment's tail would become code)."""
    if odd_line_break(text) is not None:
        return text
    lines = text.splitlines(keepends=True)
    wanted: dict[int, list[str]] = {}
    for h in hazards:
        number = h.location.line
        if number is None or not 1 <= number <= len(lines):
            continue
        index = _logical_start(lines, number - 1)
        comments = wanted.setdefault(index, [])
        comment = comment_for(h)
        if comment not in comments:
            comments.append(comment)
    if not wanted:
        return text
    out: list[str] = []
    for i, line in enumerate(lines):
        extra = wanted.get(i)
        if extra:
            present: set[str] = set()
            j = i - 1
            while j >= 0 and lines[j].lstrip().startswith(COMMENT_PREFIX):
                present.add(lines[j].strip())
                j -= 1
            body = line.rstrip("\r\n")
            indent = body[: len(body) - len(body.lstrip(" \t"))]
            eol = line[len(body) :] or ("\r\n" if "\r\n" in text else "\n")
            out.extend(f"{indent}{c}{eol}" for c in extra if c not in present)
        out.append(line)
    return "".join(out)
