"""ROCm routes a project documents: README lines and tables, pages under ``docs/`` (or
``doc/``, ``documentation/``).

Read as text, never run. Each piece of evidence says whether it counts as a route and, when
it does not, why (issue 24):

* an install or build step that names ROCm (``pip install ... --index-url .../rocm6.2``,
  ``docker run ... rocm/pytorch``, ``--device=/dev/kfd``, ``-DGGML_HIP=ON``,
  ``X_TARGET_DEVICE=rocm pip install .``) counts, in a README or in any page under ``docs/``
  whatever its name;
* a support table with a positive mark for AMD/ROCm (a cell ``✅ Vulkan, ROCm``, or ``✅``
  under an ``AMD GPU`` column or beside an ``AMD`` row) counts;
* a sentence that says the project supports or runs on AMD GPUs / ROCm counts (issue 24
  takes a documented route as a route: thirty-ninth re-run F14 kept this), but not a hedge
  (``may``/``might``/``should``/``could`` work, ``in theory``, ``untested``) nor a question
  (``Does it run on AMD?``), which state nothing;
* a page under ``docs/`` named for ROCm/AMD counts, unless its own lines only say support
  is absent, promised or hedged;
* a heading alone, or a line that says ROCm is not supported (``on hold``, ``not yet``,
  ``unsupported``) or is a to-do (``TODO``, ``FIXME``, ``Todo:`` in any case as a label:
  forty-second re-run F15), is listed but does not count, and says so; a promise is read
  to the end of its sentence where a paragraph wraps it ("via ROCm is still / under
  development": mcx, session 19), and so is a denial or hedge right after the ROCm/AMD word
  ("through ROCm is / not available yet": forty-third re-run F8), but not one in the next
  sentence or after another subject; a stated plan ("we plan to support ... in a future
  release") is a promise (forty-third re-run F15); a sentence counts only when it states
  present support: "on our roadmap", "will be added later this year" are promises, and a
  parenthetical insertion before a wrapped denial does not hide it (forty-fourth re-run
  F14, F15: :mod:`gpuport.scan.project.route_words`);
* a claim whose sentence gives AMD support through another API (OpenCL, Vulkan, SYCL, or any
  means "through/via/using X" that is no ROCm/HIP, ROCm install or way of building this
  code: DirectX 12, OpenGL, wgpu, Kompute) and names neither ROCm nor HIP does not count:
  another program's route, not a ROCm build of this code (mcx's MCXCL, session 19;
  forty-fourth re-run F16).

Only text a reader sees is read (:mod:`gpuport.scan.project.doc_shown`): not an HTML
comment, a reStructuredText comment at any indentation, an AsciiDoc comment, a Markdown
``[//]: # (...)`` comment, nor struck-out text (fortieth re-run F8, forty-first re-run F2,
F9, F17), nor a reST ``.. only::`` body no build's tags show (the tags ``conf.py`` or a
docs Makefile sets are read: forty-third re-run F16), nor a MyST ``{only}`` or an
``ifconfig`` body ``conf.py``'s values hide (forty-fourth re-run F17); a page named for
ROCm that shows nothing but headings is no route (forty-first re-run F8). A denial is one
however it is written: "isn't supported", "won't work", "no support for AMD", "lacks
support" (forty-first re-run F14). Forty-fifth re-run: support placed outside this
repository ("in our fork, x-rocm, not in this repository": F9) or in the past ("not
anymore", "broken since 2.0", "deprecated": F10) is no route, nor is support "with ZLUDA"
(F15). Forty-sixth re-run: support in a repository, plugin or port of its own name ("see
the x-rocm repository", "x-rocm, our downstream port": F7) is elsewhere, and support
"using/via/with" a translation layer or a compiler that is not ROCm/HIP's ("(ROCm) using
the SCALE compiler": F6) is no ROCm route even where "(ROCm)" labels the hardware.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.model import RouteEvidence
from gpuport.scan.project.doc_shown import shown, shows_text
from gpuport.scan.project.files import MOST_FOLDER_DEPTH
from gpuport.scan.project.route_words import HEADING as _HEADING
from gpuport.scan.project.route_words import PROMISE as _PROMISE
from gpuport.scan.project.route_words import WITHDRAWN as _WITHDRAWN
from gpuport.scan.project.route_words import WORD as _WORD
from gpuport.scan.project.route_words import elsewhere as _elsewhere
from gpuport.scan.project.route_words import other_api as _other_api
from gpuport.scan.project.route_words import sentence as _sentence
from gpuport.scan.project.route_words import wrapped_against as _wrapped_against

__all__ = ["NEGATION", "doc_routes", "doc_texts", "rocm_settings"]

_ROCM_NAME = textre.compile(r"(?:^|[-_.\s])(?:rocm|amd|hip)(?:[-_.\d\s]|$)", re.I)
#: A line worth reading: it names ROCm/AMD somewhere, also inside a word (``whl/rocm6.2``,
#: ``-DGGML_HIP=ON``).
_MENTION = textre.compile(r"rocm|\bamd|hip\b|_hip|hipblas|radeon|instinct|/dev/kfd|gfx\d", re.I)
#: An install, build or run step that names ROCm.
_STEP = textre.compile(
    r"(?:pip3?\s+install|uv\s+pip|--(?:extra-)?index-url|conda\s+install|docker\s+(?:run|pull)"
    r"|apt(?:-get)?\s+install|cmake\b|make\b|\w+=\S+\s+pip|python\s+setup\.py)[^\n]*"
    r"(?:rocm|\bhip\b|hipblas|gfx\d)"
    r"|(?:rocm|hipblas)[^\n]*(?:pip3?\s+install|--index-url|docker\s+(?:run|pull))"
    r"|download\.pytorch\.org/whl/rocm|repo\.radeon\.com|--device[= ]/dev/kfd"
    r"|-D\s*\w*(?:HIP|ROCM)\w*=(?:ON|1|TRUE)\b|\b\w*(?:HIP|ROCM)\w*=1\s+(?:make|cmake|pip)"
    r"|\b[A-Z][A-Z0-9_]*(?:TARGET|DEVICE|BACKEND|PLATFORM)[A-Z0-9_]*=[\"']?(?:rocm|hip)\b",
    re.I,
)
#: An install step that brings ROCm builds of the packages (a wheel index, an image).
_INSTALL = textre.compile(
    r"pip3?\s+install|--(?:extra-)?index-url|docker\s+(?:run|pull)|repo\.radeon", re.I
)
#: A sentence that claims support.
_CLAIM = textre.compile(
    r"\b(?:supports?|supported|runs?\s+on|works?\s+on|compatible\s+with|available\s+for"
    r"|tested\s+on|support\s+for)\b[^\n.]{0,80}?\b(?:ROCm|AMD\s+(?:GPU|Instinct|Radeon)"
    r"|AMD\b|Instinct|Radeon|MI[23]\d\dX?)\b"
    r"|\b(?:ROCm|AMD\s+GPUs?)\b[^\n.]{0,40}?\b(?:is|are)\s+(?:supported|fully\s+supported)\b",
    re.I,
)
#: A claim that states nothing: hedged ("should work on AMD GPUs", "may run on ROCm", "in
#: theory", "untested") or asked ("Does it run on AMD?"); 39th re-run F14.
#: The hedge must be about the support itself: llamafile's "Multiple GPU support may be broken
#: on AMD Radeon systems" beside its stated AMD support is a caveat, not a hedge (tenth sample).
#: Fortieth re-run F20: "should support", "haven't tested", "we don't know", "asked whether",
#: a question mark inside the line ("AMD GPUs are supported? No.").
_HEDGE = textre.compile(
    r"\b(?:may|might|could|should|would|probably|possibly|hopefully|likely|maybe|perhaps)"
    r"\s+(?:also\s+|even\s+|well\s+)?(?:work|run|support"
    r"|be\s+(?:supported|compatible|usable|fine))\b"
    r"|\b(?:in\s+theory|theoretically|untested|unverified|not\s+sure|whether)\b"
    r"|\b(?:have|has)\s*n[o']t\s+(?:been\s+)?(?:tested|tried|verified)\b|\bnobody\s+has\b"
    r"|\b(?:do|does)\s*(?:n't|\s+not)\s+know\b"
    r"|\?\s|\?[ \t*_)\]]*$",
    re.I,
)
#: A version requirement on ROCm, as requirement tables give it: "AMD ROCm >= 4.0" (a
#: Markdown link between the name and the bound allowed), "ROCm 6.0+", "ROCm 5.7 or later"
#: (jittor's README requirements row, thirteenth sample).
_REQUIRES = textre.compile(
    r"\b(?:ROCm|HIP)\b(?:\]\([^)\s]{0,200}\))?\s*(?:>=|≥|=>"
    r"|v?\d+(?:\.\d+)*\s*(?:\+|or\s+(?:later|newer|higher|above)))",
    re.I,
)
#: AMD named as a CPU maker: "tested on the same AMD 5700U laptop" (finufft's timing remark,
#: thirteenth sample) is no ROCm route; a line that also names a GPU word still is read.
_AMD_CPU = textre.compile(
    r"\bAMD\s+(?:Ryzen|EPYC|Threadripper|Athlon|Opteron|Phenom|\d{4}[A-Z]{0,2}\b)"
    r"|\b(?:Ryzen|EPYC|Threadripper|Zen\s?\d|CPUs?|processors?|single[- ]thread\w*)\b",
    re.I,
)
_GPU_WORD = textre.compile(
    r"\b(?:GPUs?|ROCm|HIP|Instinct|Radeon|MI[123]\d\dX?|gfx\d{3,4}\w*|accelerators?)\b", re.I
)
#: A denial: "not (yet) supported", and every negated auxiliary the same way, contracted or
#: not, with a straight or curly apostrophe or none ("isn't supported", "aren't supported",
#: "won't work", "can't run", "doesn't support", "will never be supported", "isnt
#: supported"), "no (official) support", "lacks support", "incompatible" (forty-first re-run
#: F14: the contractions read as routes, in READMEs and in installers' strings).
_NEGATION = textre.compile(
    r"(?:\bnot|\bnever|n['’]t|\b(?:is|are|was|were|wo|ca|do|does|did|has|have)nt)"
    r"(?:\s+(?:yet|currently|officially|really|fully|be|been|being|going\s+to|able\s+to"
    r"|ever|at\s+all))*\s+(?:supported|support(?:s|ing)?|work(?:s|ing)?|run(?:s|ning)?"
    r"|available|tested|compatible|function(?:s|al)?|build|compile|officially|possible"
    r"|usable|installable)\b"
    r"|\bunsupported\b|\bincompatible\b|\bno\s+(?:[\w/+-]+\s+){0,2}?support(?:ed)?\b"
    r"|\black(?:s|ing)?\s+(?:of\s+)?(?:[\w/+-]+\s+){0,2}?support\b"
    r"|\bon\s+hold\b|\bno\s+longer\b|\bcannot\b"
    r"|\b(?:removed|dropped|discontinued|abandoned)\b"
    r"|\bcoming\s+soon\b|\bplanned\b|\bno\s+(?:ROCm|AMD)\b|\bwithout\s+(?:ROCm|AMD)\b"
    r"|\bonly\s+(?:NVIDIA|CUDA)\b|❌|✗|✘|" + _WITHDRAWN,
    re.I,
)
#: a text that says ROCm is not supported (route_code reads an installer's strings with it)
NEGATION = _NEGATION
#: A to-do, not a route: "TODO(someday): docker run --device=/dev/kfd rocm/pytorch"; in any
#: case as a label ("Todo: docker run ...", "- to-do ...": forty-second re-run F15).
_TODO = textre.compile(r"\b(?:TODO|FIXME|TBD|XXX)\b")
_TODO_LABEL = textre.compile(
    r"\b(?:to-?do|fixme)\b(?:[ \t]*\([^)\n]{0,40}\))?[ \t*_]*:"
    r"|^[ \t>*_+-]*(?:\d+[.)][ \t]+)?(?:\[[ xX]\][ \t]+)?[*_]*(?:to-?do|fixme)\b",
    re.I,
)
_POSITIVE = textre.compile(
    r"✅|✓|✔|☑|:white_check_mark:|:heavy_check_mark:|^\s*(?:yes|supported)\b", re.I
)
_CELL_SPLIT = textre.compile(r"(?<!\\)\|")
_HTML_CELL = textre.compile(r"<t([hd])\b[^>]*>(.*?)</t[hd]>", re.I | re.S)
_TAG = textre.compile(r"<[^>]+>")
#: A setting the install docs give a ROCm value: ``VLLM_TARGET_DEVICE=rocm``, ``ENV
#: GPU_BACKEND=hip``, ``--build-arg BACKEND=rocm``.
_SETTING = textre.compile(r"\b([A-Z][A-Z0-9_]{2,})=[\"']?(rocm|hip|amd)\b", re.I)

_DOC_SUFFIXES = (".md", ".mdx", ".rst", ".txt")
_MAX_DOC_PAGES = 600
_MAX_DOC_BYTES = 1_000_000
_PER_KIND = 3  # evidence lines kept per file and kind


def _line(text: str, pos: int) -> int:
    return textre.line_finder(text)(pos)  # one line index per text, not a count per call


def _text_of(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : end if end >= 0 else len(text)]


def _short(text: str, limit: int = 120) -> str:
    return " ".join(_TAG.sub(" ", text).split())[:limit]


def _read(path: Path, root: Path) -> str | None:
    return fileio.read_text_or_none(path, limit=_MAX_DOC_BYTES, root=root)


def doc_texts(root: Path) -> dict[str, str]:
    """The README files and documentation pages (relative path -> text), bounded."""
    out: dict[str, str] = {}
    for path in [*_readmes(root), *_doc_pages(root)]:
        text = _read(path, root)
        if text is not None:
            out[path.relative_to(root).as_posix()] = text
    return out


def _readmes(root: Path) -> list[Path]:
    try:
        return sorted(
            p for p in root.iterdir() if p.name.lower().startswith("readme") and p.is_file()
        )
    except OSError:
        return []


#: the folders a project keeps its documentation in (``doc/installation.rst``: issue 24, ninth
#: round, a build page for AMD GPUs under ``doc/``)
_DOC_FOLDERS = ("docs", "doc", "documentation")


def _doc_pages(root: Path) -> list[Path]:
    """The documentation pages under the doc folders in path order (that of
    ``sorted(rglob)``), at most :data:`_MAX_DOC_PAGES`. An explicit stack, not ``rglob``:
    Python 3.11's ``rglob`` recurses once per folder level (a 1,500-level chain under
    ``docs/`` ended the scan in a RecursionError; twenty-fifth re-run, F8), and ``sorted``
    listed everything before the cut. Folders deeper than the walker's
    :data:`MOST_FOLDER_DEPTH` are not entered, links are never followed, and the walk stops
    at the page cap."""
    out: list[Path] = []
    for name in _DOC_FOLDERS:
        docs = root / name
        if not docs.is_dir() or docs.is_symlink():
            continue
        stack: list[tuple[Path, int, bool]] = [(docs, 0, True)]  # (path, depth, a folder)
        while stack:
            path, depth, is_dir = stack.pop()
            if not is_dir:
                if len(out) >= _MAX_DOC_PAGES:
                    return out
                out.append(path)
                continue
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                continue
            children: list[tuple[Path, int, bool]] = []
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < MOST_FOLDER_DEPTH:
                            children.append((Path(entry.path), depth + 1, True))
                    elif (
                        entry.is_file(follow_symlinks=False)
                        and Path(entry.name).suffix.lower() in _DOC_SUFFIXES
                    ):
                        children.append((Path(entry.path), depth + 1, False))
                except OSError:
                    continue
            stack.extend(reversed(children))
    return out


def _tables(text: str) -> Iterator[list[list[tuple[int, str]]]]:
    """Tables of a Markdown or HTML page as rows of (line, cell text); the first row is the
    header."""
    rows: list[list[tuple[int, str]]] = []
    for line, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("|") and stripped.count("|") >= 2:
            cells = [c.strip() for c in _CELL_SPLIT.split(stripped.strip("|"))]
            if not all(textre.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                rows.append([(line, c) for c in cells])
        elif rows:
            yield rows
            rows = []
    if rows:
        yield rows
    lower = text.lower()
    start = lower.find("<table")
    while start >= 0:
        end = lower.find("</table>", start)
        end = len(text) if end < 0 else end
        block_rows: list[list[tuple[int, str]]] = []
        for tr in textre.finditer(r"<tr\b.*?(?:</tr>|(?=<tr\b)|$)", text[start:end], re.I | re.S):
            tds = [
                (_line(text, start + tr.start() + c.start()), _short(c.group(2), 200))
                for c in _HTML_CELL.finditer(tr.group())
            ]
            if tds:
                block_rows.append(tds)
        if block_rows:
            yield block_rows
        start = lower.find("<table", end)


def _table_evidence(rel: str, text: str) -> list[RouteEvidence]:
    out: list[RouteEvidence] = []
    for rows in _tables(text):
        header = rows[0]
        amd_cols = {i for i, (_, c) in enumerate(header) if _WORD.search(c)}
        for row in rows[1:]:
            row_amd = bool(row) and _WORD.search(row[0][1]) is not None
            for i, (line, cell) in enumerate(row):
                about = _WORD.search(cell) is not None or i in amd_cols or (row_amd and i > 0)
                if about and _POSITIVE.search(cell) and not _NEGATION.search(cell):
                    out.append(
                        RouteEvidence(
                            kind="docs",
                            path=rel,
                            line=line,
                            detail=f"support table: {_short(cell, 80)!r} for AMD/ROCm",
                        )
                    )
                    return out  # one line per file is enough
    return out


def _around_mention(line: str) -> str:
    """The line, from a little before its first ROCm/AMD word when that lies far in (a long
    table row shows the AMD cell, not the OS column)."""
    found = _WORD.search(line) or _MENTION.search(line)
    if found is None or found.start() <= 80:
        return line
    return "... " + line[found.start() - 30 :]


#: a Sphinx tag the project's build sets: ``tags.add("draft")`` in ``conf.py``, ``-t draft``
#: on a ``sphinx-build`` line of a docs Makefile or the Read the Docs settings
_TAG_ADD = textre.compile(r"\btags\.add\(\s*(?:[\"']([A-Za-z_]\w*)[\"']\s*\))?")
_TAG_OPTION = textre.compile(r"(?:^|\s)-t[ \t]*([A-Za-z_]\w*|\$)")
_TAG_FILES = (
    *(f"{d}/{s}conf.py" for d in _DOC_FOLDERS for s in ("", "source/")),
    *(f"{d}/{m}" for d in _DOC_FOLDERS for m in ("Makefile", "make.bat")),
    ".readthedocs.yaml",
    ".readthedocs.yml",
)


#: a name ``conf.py`` gives a value at the top level (``rocm_ready = False``), or a default
#: an extension declares (``app.add_config_value("rocm_ready", False, "env")``), and a
#: ``-D name=value`` override on the build line (the value is then unknown)
_CONF_VALUE = textre.compile(r"^([A-Za-z_]\w*)[ \t]*=[ \t]*([^#\n]*?)[ \t]*(?:#.*)?$", re.M)
_ADD_CONFIG = textre.compile(r"add_config_value\(\s*[\"']([A-Za-z_]\w*)[\"']\s*,\s*([^,)\n]*)")
_DEFINE = textre.compile(r"(?:^|\s)-D[ \t]*([A-Za-z_]\w*)=")
_FALSE = ("False", "None", "0", '""', "''", "[]", "{}", "()")
_TRUE = ("True", "1")


def _sphinx_build(root: Path) -> tuple[frozenset[str] | None, dict[str, bool]]:
    """The Sphinx tags the project's docs build sets beyond the builder's, for ``..
    only::`` (forty-third re-run F16); None when it sets one that cannot be read (a
    ``tags.add(variable)``, ``-t $(TAG)``), so that no ``.. only::`` body is hidden. And the
    truth of each literal config value (``rocm_ready = False``) for ``ifconfig``
    (forty-fourth re-run F17): a name given another value, twice, or overridden with ``-D``
    is left out, so its ``ifconfig`` body is shown."""
    found: set[str] | None = set()
    values: dict[str, bool | None] = {}
    for rel in _TAG_FILES:
        text = _read(root / rel, root)
        if text is None:
            continue
        python = rel.endswith(".py")
        for m in (_TAG_ADD if python else _TAG_OPTION).finditer(text):
            if m.group(1) is None or m.group(1) == "$":
                found = None
            elif found is not None:
                found.add(m.group(1))
        assigned = [*_CONF_VALUE.finditer(text), *_ADD_CONFIG.finditer(text)] if python else []
        for m in assigned:
            value = m.group(2).strip()
            truth = False if value in _FALSE else True if value in _TRUE else None
            if truth is None and value[:1] in "\"'" and len(value) > 2 and value[-1] == value[0]:
                truth = True  # a non-empty string
            known = values.get(m.group(1), truth)
            values[m.group(1)] = truth if known == truth else None
        for m in _DEFINE.finditer(text) if not python else ():
            values[m.group(1)] = None
    config = {k: v for k, v in values.items() if v is not None}
    return (None if found is None else frozenset(found)), config


def _shown(
    rel: str,
    text: str,
    build: tuple[frozenset[str] | None, dict[str, bool]] = (frozenset(), {}),
) -> str:
    """``text`` as a reader sees it (see :mod:`gpuport.scan.project.doc_shown`)."""
    return shown(rel, text, *build)


def _line_evidence(rel: str, text: str, page: bool) -> list[RouteEvidence]:
    """Install steps, claims of support and headings naming ROCm/AMD, each with whether it
    counts."""
    out: list[RouteEvidence] = []
    kept: dict[str, int] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not _MENTION.search(line):
            continue
        heading = _HEADING.match(line)
        said = _sentence(line, lines, number)  # the sentence goes on past a wrapped line
        todo = _TODO.search(line) is not None or _TODO_LABEL.search(line) is not None
        promised = todo or _PROMISE.search(said) is not None
        away = not promised and _elsewhere(said)  # in a fork, another repository (F9)
        negated = (
            promised
            or away
            or _NEGATION.search(line) is not None
            or _wrapped_against(line, said, _NEGATION)
        )
        no = (
            "the line is a to-do, which is not a route yet"
            if todo
            else "the line promises it for later, which is not a route yet"
            if promised
            else "the line places the support outside this repository (a fork, another "
            "repository or plugin), which is no route of this code"
            if away
            else "the line says it is not supported"
        )
        if _STEP.search(line):
            what, counts, why = "install step", not negated, no
        elif _CLAIM.search(line):
            if _AMD_CPU.search(line) and not _GPU_WORD.search(line):
                continue  # an AMD CPU, not a GPU route
            hedged = not negated and (
                _HEDGE.search(line) is not None or _wrapped_against(line, said, _HEDGE)
            )
            other = not (negated or hedged) and _other_api(line, lines, number)
            if hedged:
                no = "the line hedges or asks, which states no support"
            elif other:
                no = (
                    "the sentence gives AMD support through another API (OpenCL, Vulkan, "
                    "SYCL...) or a CUDA translation layer or compiler (ZLUDA, SCALE...), not "
                    "a ROCm/HIP build of this code"
                )
            what, counts, why = "says it supports", not (negated or hedged or other), no
        elif _REQUIRES.search(line):
            what, counts, why = "requires", not negated, no
        elif negated and _WORD.search(line):
            what, counts, why = "says", False, no
        elif heading and _WORD.search(line) and not page:
            what, counts, why = (
                "heading",
                False,
                "a heading alone: no install step or statement of support under it was found",
            )
        else:
            continue
        if kept.get(what, 0) >= _PER_KIND:
            continue
        kept[what] = kept.get(what, 0) + 1
        out.append(
            RouteEvidence(
                kind="docs",
                path=rel,
                line=number,
                detail=f"{what}: {_short(_around_mention(line))}",
                counts=counts,
                why="" if counts else why,
                install=counts and what == "install step" and _INSTALL.search(line) is not None,
            )
        )
    return out


def doc_routes(root: Path) -> list[RouteEvidence]:
    """Route evidence from the README files at the root and the pages under ``docs/``."""
    out: list[RouteEvidence] = []
    build = _sphinx_build(root)
    for p in _readmes(root):
        text = _read(p, root)
        if text is None:
            continue
        text = _shown(p.name, text, build)
        out += _table_evidence(p.name, text) + _line_evidence(p.name, text, page=False)
    named = 0
    for p in _doc_pages(root):
        rel = p.relative_to(root).as_posix()
        if _ROCM_NAME.search(p.stem) and named < _PER_KIND:
            named += 1
            out.append(_named_page(p, rel, root, build))
            continue
        text = _read(p, root)
        if text is None or not _MENTION.search(text):
            continue
        text = _shown(rel, text, build)
        found = [r for r in _line_evidence(rel, text, page=True) if r.counts]
        out += (_table_evidence(rel, text) + found)[:1]
    return out


def _named_page(
    path: Path,
    rel: str,
    root: Path,
    build: tuple[frozenset[str] | None, dict[str, bool]] = (frozenset(), {}),
) -> RouteEvidence:
    """A page named for ROCm/AMD: a route, unless its own lines say only that support is
    absent, promised or hedged (fortieth re-run F22: ``docs/amd.md`` saying "AMD GPUs are
    not supported" was a route by its name), or it shows no text but headings (forty-first
    re-run F8: a page holding only ``<!-- TODO: write the ROCm guide -->``)."""
    evidence = RouteEvidence(kind="docs", path=rel, line=None, detail="ROCm/AMD page by name")
    text = _read(path, root)
    if text is None:
        return evidence
    text = _shown(rel, text, build)
    if not shows_text(text):
        why = "the page shows nothing but headings: its other text is comments or struck out"
        return evidence.model_copy(update={"counts": False, "why": why})
    found = _line_evidence(rel, text, page=True)
    against = [r for r in found if not r.counts]
    if any(r.counts for r in found) or not against:
        return evidence
    return evidence.model_copy(
        update={"counts": False, "why": f"the page's line {against[0].line}: {against[0].why}"}
    )


def rocm_settings(root: Path, texts: dict[str, str]) -> dict[str, str]:
    """Settings the project's docs, READMEs and container recipes give a ROCm value
    (``VLLM_TARGET_DEVICE=rocm`` -> {"VLLM_TARGET_DEVICE": "rocm"}); ``texts`` holds the
    Dockerfiles and other files already read."""
    found: dict[str, str] = {}
    pages = [*_readmes(root), *_doc_pages(root)]
    bodies = list(texts.values())
    for p in pages:
        text = _read(p, root)
        if text is not None:
            bodies.append(text)
    for text in bodies:
        if "=" not in text:
            continue
        for m in _SETTING.finditer(text):
            found.setdefault(m.group(1), m.group(2).lower())
    return found
