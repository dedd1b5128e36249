"""The text of a documentation page that a reader sees (routes_docs reads only that).

Blanked, keeping the line numbers:

* in any page, an HTML comment (``<!-- ... -->``, an unclosed one to the end of the page);
* in Markdown (any page neither reStructuredText nor AsciiDoc): struck-out text (``~~...~~``,
  GitHub's ``~...~``, ``<del>``/``<s>``/``<strike>`` to their closing tag or the paragraph's
  end: forty-first re-run F9) and a link reference definition, never rendered: the
  ``[//]: # (...)`` / ``[comment]: <> (...)`` comment idiom (forty-first re-run F2); only
  the destination of one that the page references outside code (a fenced block, a code
  span: forty-third re-run F14; an indented code block: forty-fourth re-run F20) is kept
  (forty-second re-run F16), and a line is a definition only as CommonMark reads one, so
  ``[Status]: AMD GPUs are not supported.`` is shown text (forty-second re-run F14);
* in reStructuredText, a comment (``..`` and the block indented under it) at any
  indentation, inside a list item or a directive's body too (forty-first re-run F17), but not
  a directive, a link target, a substitution or a footnote, nor text inside a literal block;
  a ``.. todo::`` and its body, which Sphinx hides by default (forty-second re-run F15);
  an ``.. only::`` and its body where no builder's tags plus the project's own make its
  expression true (``.. only:: draft``: forty-third re-run F16), and an ``.. ifconfig::``
  and its body where ``conf.py``'s literal values make it false (forty-fourth re-run F17);
* in Markdown (MyST), a ``{only}``, ``{ifconfig}`` or ``{todo}`` directive fence and its
  body by the same rules (``:::{only} draft``: forty-fourth re-run F17);
* in AsciiDoc (``.adoc``, ``.asciidoc``, ``.asc``), a ``////`` comment block, a ``//``
  comment line, a ``[comment]`` block or paragraph, and ``[.line-through]#...#`` (F2).

:func:`shows_text` says whether anything but headings is left: a page of comments only is
empty (forty-first re-run F8).

Every pattern runs on RE2 (:mod:`gpuport.textre`) and each pass is linear in the page.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping

from gpuport import textre

__all__ = ["shown", "shows_text"]

#: An HTML comment (Markdown pages hide it), or one left open to the end of the page.
_HTML_COMMENT = textre.compile(r"<!--.*?(?:-->|$)", re.S)
#: Struck-out Markdown text: ``~~...~~`` (no blank line inside), a single-tilde ``~...~`` as
#: GitHub renders it (not ``~/path``, not "~10x ... ~8x"), and the HTML strike elements, to
#: their closing tag or the paragraph's end.
_STRUCK = textre.compile(
    r"(?<!~)~~[^~\s](?:[^~\n]|~[^~\n]|\n[ \t]*[^\s~])*?~~"
    r"|(?:^|[\s(*_])~[^\s~/](?:[^~\n]*[^\s~])?~(?:[\s.,;:!?)*_]|$)"
    r"|<(?:del|s|strike)(?:\s[^>]*)?>.*?(?:</(?:del|s|strike)\s*>|\n[ \t]*\n|$)",
    re.S,
)
#: A Markdown link reference definition: its label (group 1), its destination (group 2), and
#: the title after it (never shown as page text).
_LINK_DEF = textre.compile(r"^ {0,3}\[((?:[^\]\\\n]|\\.)+)\]:[ \t]*(<[^>\n]*>|\S+)?")
#: A destination on the line after its label.
_DESTINATION = textre.compile(r"^[ \t]*(<[^>\n]*>|\S+)")
#: A bracketed text: a link's text or a reference's label (``[text][label]``, ``[label]``).
_BRACKETED = textre.compile(r"\[([^\[\]\n]+)\]")
_TICKS = textre.compile(r"`+")
_CLOSERS = {"(": ")", '"': '"', "'": "'"}
#: a list item's marker and the blanks after it (group 1; of more than four, one is the item's)
_LIST_ITEM = textre.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])([ \t]+|$)")
_FENCE = textre.compile(r"^ {0,3}(?:```|~~~)")
_ATX = textre.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
#: A reStructuredText explicit markup line that is no comment: a directive (``.. note::``),
#: a link target (``.. _x:``, ``.. __:``), a substitution (``.. |x|``), a footnote or citation
#: (``.. [1]``).
_RST_MARKUP = textre.compile(r"^\.\.[ \t]+(?:[\w:.+-]+::|_|\||\[)")
#: A directive whose body is literal text: a ``..`` in it is code, not a comment.
#: A directive whose body no reader sees: Sphinx renders a ``todo`` only where the build
#: sets ``todo_include_todos``, and a to-do is no route either way (forty-second re-run F15).
_RST_HIDDEN = textre.compile(r"^\.\.[ \t]+todo::", re.I)
#: ``.. only:: <expression>``: its body is rendered only where the expression of Sphinx tags
#: holds (forty-third re-run F16: ``.. only:: draft``).
_RST_ONLY = textre.compile(r"^\.\.[ \t]+only::(.*)$", re.I)
#: ``.. ifconfig:: <expression>`` (sphinx.ext.ifconfig): its body is rendered only where the
#: expression over ``conf.py``'s values holds (forty-fourth re-run F17)
_RST_IFCONFIG = textre.compile(r"^\.\.[ \t]+ifconfig::(.*)$", re.I)
#: a MyST directive fence (backticks or a colon fence) of a directive whose body a build may
#: hide: ``:::{only} draft``, ``` ```{ifconfig} rocm_ready ```, ``:::{todo}``
_MYST_OPEN = textre.compile(r"^ {0,3}(`{3,}|:{3,}|~{3,})\{(only|ifconfig|todo)\}(.*)$", re.I)
_MYST_FENCE = textre.compile(r"^ {0,3}(`{3,}|:{3,}|~{3,})")
_TAG_TOKEN = textre.compile(r"[()]|[A-Za-z_]\w*|\S+")
#: the builders a default build may run, (name, format): each sets the tags ``name``,
#: ``format``, ``builder_<name>`` and ``format_<format>``
_BUILDERS = (
    *(
        (name, "html")
        for name in (
            "html", "dirhtml", "singlehtml", "epub", "json", "pickle",
            "readthedocs", "readthedocsdirhtml", "readthedocssinglehtml",
        )
    ),
    ("latex", "latex"), ("text", "text"), ("man", "man"), ("texinfo", "texinfo"),
    ("xml", "xml"), ("pseudoxml", "pseudoxml"),
)  # fmt: skip
_RST_LITERAL = textre.compile(
    r"^\.\.[ \t]+(?:code|code-block|sourcecode|parsed-literal|highlight|literalinclude)::", re.I
)
_ADOC_SUFFIXES = (".adoc", ".asciidoc", ".asc")
_ADOC_STRUCK = textre.compile(r"\[\.?line-through\](?:##.*?##|#[^#\n]*#)")
#: An AsciiDoc delimited block: its delimiter line (a comment one is ``////``).
_ADOC_DELIMITER = textre.compile(r"^(?:/{4,}|-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|--)$")
#: A page line that is no text of its own: a heading (Markdown, HTML, AsciiDoc), a rule or a
#: title's adornment (punctuation only), a blank line.
_ADORNMENT = textre.compile(r"^[ \t]*[^\w\s]{2,}[ \t]*$")
_NO_TEXT = textre.compile(
    r"^[ \t]*(?:#{1,6}(?:[ \t].*)?|<h[1-6][^>]*>.*</h[1-6]>|={1,6}[ \t].*|[^\w\s]*)[ \t]*$", re.I
)


def _blank(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")  # the line numbers stay


def _indent(line: str) -> int:
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(8))


def shown(
    rel: str,
    text: str,
    tags: frozenset[str] | None = frozenset(),
    config: Mapping[str, bool] | None = None,
) -> str:
    """``text`` with what a reader of the rendered page does not see blanked (see the module
    docstring); ``rel`` names the page, its suffix its markup. ``tags``: the Sphinx tags the
    project's own build sets besides the builder's (``tags.add`` in ``conf.py``, ``-t``);
    None when it sets some that cannot be read, so every ``.. only::`` body is shown.
    ``config``: the truth of the literal values ``conf.py`` gives its names, for
    ``ifconfig`` (a name not in it leaves the body shown)."""
    if "<!--" in text:
        text = _HTML_COMMENT.sub(_blank, text)
    name = rel.lower()
    known = config or {}
    if name.endswith(".rst"):
        return _rst_shown(text, tags, known) if ".." in text else text
    if name.endswith(_ADOC_SUFFIXES):
        return _adoc_shown(text)
    if "{" in text:
        text = _myst_shown(text, tags, known)
    if "~" in text or "<" in text:
        text = _STRUCK.sub(_blank, text)
    return _markdown_defs(text) if "]:" in text else text


def _markdown_defs(text: str) -> str:
    """Link reference definitions blanked as CommonMark reads them, keeping a destination
    that a reference on the page uses (it may be a ROCm wheel index a route names): a label
    or title is never rendered, nor is a definition nothing references (forty-second re-run
    F16). A line is a definition only when what follows its destination is a title, closed
    before a blank line, and nothing else: ``[Status]: AMD GPUs are not supported.`` is a
    paragraph, shown (F14). A definition cannot interrupt a paragraph, and a fenced code
    block holds none."""
    lines = text.split("\n")
    fenced = False
    after_break = True  # the line before is blank, a heading or a definition
    kept: list[tuple[int, str, str]] = []  # (line, label, destination) of each definition
    code: list[int] = []  # the lines of code blocks, fences included
    indented = False  # the line before is in an indented code block
    listed = 0  # the column the content of the open list item starts at (0: in no list)
    i = 0
    while i < len(lines):
        line = lines[i]
        head = line.lstrip(" ")[:1]  # the regexes run only on lines that may match
        if head in "`~" and head and _FENCE.match(line):
            code.append(i)
            fenced, after_break, i = not fenced, True, i + 1
            continue
        if fenced:
            code.append(i)
        elif line.strip():
            width = len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(4))
            if (after_break or indented) and width >= listed + 4:
                code.append(i)  # an indented code block (forty-fourth re-run F20)
                indented, after_break, i = True, True, i + 1
                continue
            indented = False
            item = _LIST_ITEM.match(line) if head in "-*+0123456789" else None
            if item is not None:
                listed = len(item.group(0)) if len(item.group(1)) <= 4 else item.start(1) + 1
            elif after_break and width < listed:
                listed = 0  # the list ended
        m = _LINK_DEF.match(line) if not fenced and after_break and "]:" in line else None
        found = _definition(lines, i, m) if m is not None else None
        if m is None or found is None:
            after_break = (
                fenced or not line.strip() or (head == "#" and _ATX.match(line) is not None)
            )
            i += 1
            continue
        end, destination = found
        kept.append((i, m.group(1), destination))
        for j in range(i, end + 1):
            lines[j] = ""
        after_break, i = True, end + 1
    if not kept:
        return text
    prose = list(lines)  # no link is made inside code (forty-third re-run F14)
    for i in code:
        prose[i] = ""
    used = {_label(r.group(1)) for r in _BRACKETED.finditer(_without_code_spans(prose))}
    for i, label, destination in kept:
        target = destination.strip("<>")
        # an anchor (``#``, ``#(a comment)``), an empty ``<>`` or one with spaces leads nowhere
        if _label(label) in used and target and target[:1] not in "#/" and " " not in target:
            lines[i] = target
    return "\n".join(lines)


def _without_code_spans(lines: list[str]) -> str:
    """The lines joined, each inline code span (a run of backticks to the next run of the
    same length in its paragraph) blanked: CommonMark makes no link inside one. A run with
    no closing run is literal text. Linear but for a log factor: each paragraph's runs are
    listed once and each closing run is found by bisecting the runs of its length."""
    paras: list[list[str]] = [[]]
    for line in lines:  # a blank line (spaces only too) ends a paragraph
        if line.strip():
            paras[-1].append(line)
        elif paras[-1]:
            paras.append([])
    out: list[str] = []
    for para in ("\n".join(p) for p in paras):
        if "`" not in para:
            out.append(para)
            continue
        runs = [(m.start(), m.end()) for m in _TICKS.finditer(para)]
        by_length: dict[int, list[int]] = {}
        for k, (a, b) in enumerate(runs):
            by_length.setdefault(b - a, []).append(k)
        pieces: list[str] = []
        done = 0  # the offset of para copied so far
        k = 0
        while k < len(runs):
            a, b = runs[k]
            same = by_length[b - a]
            n = bisect.bisect_right(same, k)
            if n == len(same):
                k += 1
                continue
            close = same[n]
            pieces.append(para[done:b])
            pieces.append(" " * (runs[close][0] - b))
            done = runs[close][0]
            k = close + 1
        pieces.append(para[done:])
        out.append("".join(pieces))
    return "\n".join(out)


def _label(label: str) -> str:
    return " ".join(label.split()).casefold()


def _definition(lines: list[str], i: int, m: re.Match[str]) -> tuple[int, str] | None:
    """Where the link reference definition that ``m`` starts on line ``i`` ends, and its
    destination; None when the line is no definition but paragraph text. A destination with
    an unbalanced ``(`` (``#(a comment)``) ends before it, a title starting there."""
    line, at = lines[i], m.end()
    destination = m.group(2)
    if destination is None:  # the destination may stand on the next line
        if line[at:].strip() or i + 1 >= len(lines) or not lines[i + 1].strip():
            return None
        i += 1
        line = lines[i]
        d = _DESTINATION.match(line)
        if d is None:
            return None
        destination, at = d.group(1), d.end()
    lenient = False  # a title glued to the destination, ``#(a comment)``, reads as one
    if not destination.startswith("<") and destination.count("(") > destination.count(")"):
        cut = destination.index("(")
        at -= len(destination) - cut
        destination, lenient = destination[:cut], True
    rest = line[at:]
    if not rest.strip():  # a title may stand on the next lines; a line that is none is text
        end = _title(lines, i + 1, 0) if i + 1 < len(lines) else None
        return (i if end is None else end), destination
    if rest[:1] not in " \t" and not lenient:
        return None
    end = _title(lines, i, at)
    return None if end is None else (end, destination)


def _title(lines: list[str], i: int, at: int) -> int | None:
    """The line a link title opening on line ``i`` at ``at`` (after blanks) closes on, with
    nothing after it on that line; None when there is no title there or it does not close
    before a blank line."""
    line = lines[i]
    start = len(line) - len(line[at:].lstrip(" \t"))
    closer = _CLOSERS.get(line[start : start + 1], "")
    if not closer:
        return None
    pos = start + 1
    while True:
        escaped = False
        for k in range(pos, len(line)):
            c = line[k]
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == closer:
                return i if not line[k + 1 :].strip() else None
            elif closer == ")" and c == "(":
                return None
        i += 1
        if i >= len(lines) or not lines[i].strip():
            return None
        line, pos = lines[i], 0


def _only_holds(expression: str, tags: frozenset[str] | None) -> bool:
    """Whether an ``.. only::`` expression may hold in a build of the project: under some
    builder's tags plus ``tags`` (True when ``tags`` is None or the expression does not
    parse, where Sphinx keeps the body too)."""
    if tags is None:
        return True
    tokens = [m.group() for m in _TAG_TOKEN.finditer(expression)][:200]
    if not tokens:
        return True
    for name, fmt in _BUILDERS:
        on = tags | {name, fmt, f"builder_{name}", f"format_{fmt}"}
        value = _evaluate(tokens, on)
        if value is None or value:
            return True
    return False


def _evaluate(tokens: list[str], on: frozenset[str]) -> bool | None:
    """A Sphinx tag expression (names, ``and``, ``or``, ``not``, parentheses) under the
    tags ``on``; None when it does not parse."""
    at = 0

    def atom(depth: int) -> bool | None:
        nonlocal at
        if at >= len(tokens) or depth > 50:
            return None
        word = tokens[at]
        at += 1
        if word == "not":
            value = atom(depth + 1)
            return None if value is None else not value
        if word == "(":
            value = either(depth + 1)
            if value is None or at >= len(tokens) or tokens[at] != ")":
                return None
            at += 1
            return value
        if word in ("and", "or", ")") or not (word[0].isalpha() or word[0] == "_"):
            return None
        return word in on

    def both(depth: int) -> bool | None:
        nonlocal at
        value = atom(depth)
        while value is not None and at < len(tokens) and tokens[at] == "and":
            at += 1
            right = atom(depth)
            value = None if right is None else value and right
        return value

    def either(depth: int) -> bool | None:
        nonlocal at
        value = both(depth)
        while value is not None and at < len(tokens) and tokens[at] == "or":
            at += 1
            right = both(depth)
            value = None if right is None else value or right
        return value

    value = either(0)
    return value if at == len(tokens) else None


def _ifconfig_holds(expression: str, config: Mapping[str, bool]) -> bool:
    """Whether an ``ifconfig`` expression may hold: False only where it is names joined by
    ``and``/``or``/``not`` and parentheses, each a name ``conf.py`` gives a literal value,
    and false under those values."""
    tokens = [m.group() for m in _TAG_TOKEN.finditer(expression)][:200]
    names = [t for t in tokens if t not in ("and", "or", "not", "(", ")")]
    if not names or any(n not in config for n in names):
        return True
    value = _evaluate(tokens, frozenset(n for n in names if config[n]))
    return value is None or value


def _hides(
    directive: str, expression: str, tags: frozenset[str] | None, config: Mapping[str, bool]
) -> bool:
    """Whether a build hides the body of a directive (``only``, ``ifconfig``, ``todo``)."""
    name = directive.lower()
    if name == "todo":
        return True
    if name == "only":
        return not _only_holds(expression, tags)
    return not _ifconfig_holds(expression, config)


def _myst_shown(text: str, tags: frozenset[str] | None, config: Mapping[str, bool]) -> str:
    """MyST directives whose body the Sphinx build hides blanked: ``:::{only} draft`` to its
    closing fence, ``{ifconfig}`` where ``conf.py``'s values make it false, ``{todo}``
    (forty-fourth re-run F17), also inside another directive; a fence inside a code block
    is code."""
    lines = text.split("\n")
    closer = ""  # the fence of the open code block or hidden directive
    hidden = False
    open_: list[str] = []  # the fences of the shown directives the line is inside

    def closes(fence: str, line: str, opener: str) -> bool:
        return line.strip() == fence and fence[0] == opener[0] and len(fence) >= len(opener)

    for i, line in enumerate(lines):
        head = line.lstrip(" ")[:1]
        m = _MYST_FENCE.match(line) if head in "`:~" and head else None
        fence = "" if m is None else m.group(1)
        if closer:
            lines[i] = "" if hidden else line
            if fence and closes(fence, line, closer):
                closer = ""
            continue
        if not fence:
            continue
        if open_ and closes(fence, line, open_[-1]):
            open_.pop()
            continue
        opened = _MYST_OPEN.match(line)
        if opened is not None and _hides(opened.group(2), opened.group(3).strip(), tags, config):
            closer, hidden, lines[i] = fence, True, ""
        elif line.lstrip(" ")[len(fence) :].lstrip().startswith("{"):
            open_.append(fence)  # a shown directive: its body is page text
        else:
            closer, hidden = fence, False
    return "\n".join(lines)


def _rst_shown(
    text: str,
    tags: frozenset[str] | None = frozenset(),
    config: Mapping[str, bool] | None = None,
) -> str:
    """reStructuredText comments blanked: ``..`` alone or followed by text that is no
    directive, target, substitution or footnote, at any indentation, with the lines after it
    that are blank or indented deeper; a ``.. todo::`` and its body the same way. An empty
    comment (``..`` then a blank line) holds nothing after it; a literal block (after ``::``,
    a code directive) holds no comment."""
    lines = text.split("\n")
    comment: int | None = None  # the indentation of the comment the lines are in
    literal: int | None = None  # the indentation of the line a literal block hangs from
    for i, line in enumerate(lines):
        stripped = line.strip()
        depth = _indent(line)
        if comment is not None:
            if not stripped or depth > comment:
                lines[i] = ""
                continue
            comment = None
        if literal is not None:
            if not stripped or depth > literal:
                continue
            literal = None
        if stripped.startswith("..") and (stripped == ".." or stripped[2:3] in " \t"):
            only = _RST_ONLY.match(stripped)
            ifconfig = _RST_IFCONFIG.match(stripped)
            if (
                _RST_HIDDEN.match(stripped)
                or (only is not None and not _only_holds(only.group(1), tags))
                or (ifconfig is not None and not _ifconfig_holds(ifconfig.group(1), config or {}))
            ):  # the directive and the block under it
                lines[i], comment = "", depth
                continue
            if _RST_MARKUP.match(stripped):
                literal = depth if _RST_LITERAL.match(stripped) else None
                continue
            lines[i] = ""
            empty = stripped == ".." and (i + 1 == len(lines) or not lines[i + 1].strip())
            comment = None if empty else depth
            continue
        if stripped.endswith("::"):
            literal = depth
    return "\n".join(lines)


def _adoc_shown(text: str) -> str:
    """AsciiDoc comments and struck text blanked; a listing, literal or passthrough block
    (``----``, ``....``, ``++++``) is verbatim, its ``//`` lines are no comments."""
    if "line-through" in text:
        text = _ADOC_STRUCK.sub(_blank, text)
    if "//" not in text and "[comment]" not in text.lower():
        return text
    lines = text.split("\n")
    closer = ""  # the delimiter that ends the comment or verbatim block the lines are in
    hidden = False  # whether that block is a comment
    paragraph = False  # inside a [comment] paragraph, to its blank line
    pending = False  # a [comment] line was just seen
    for i, line in enumerate(lines):
        stripped = line.rstrip()
        if closer:
            closer = "" if stripped == closer else closer
            lines[i] = "" if hidden else line
            continue
        if paragraph:
            if stripped:
                lines[i] = ""
                continue
            paragraph = False
        delimiter = _ADOC_DELIMITER.match(stripped) is not None
        if pending:
            pending = False
            if delimiter:  # a [comment] block, of any delimiter
                closer, hidden, lines[i] = stripped, True, ""
                continue
            if stripped:  # a [comment] paragraph
                paragraph, lines[i] = True, ""
                continue
        if delimiter and stripped[:1] in "/-.+" and stripped != "--":
            closer, hidden = stripped, stripped[:1] == "/"
            lines[i] = "" if hidden else line
        elif stripped.lower() == "[comment]":
            pending, lines[i] = True, ""
        elif stripped.startswith("//") and stripped[2:3] != "/":
            lines[i] = ""
    return "\n".join(lines)


def shows_text(text: str) -> bool:
    """Whether a shown page has a line besides headings (a title over its adornment too),
    rules and blank lines."""
    lines = [line for line in text.split("\n") if line.strip()]
    for i, line in enumerate(lines):
        if _NO_TEXT.match(line):
            continue
        underlined = i + 1 < len(lines) and _ADORNMENT.match(lines[i + 1]) is not None
        if not underlined:
            return True
    return False
