"""What a compile check may say of a compiler's output (issue 23): the files a compile read
(its ``-MD`` list), whether it read one outside the project and the toolchain, and the first
error, quoted only when it is located in a file the compile listed inside the allowed folders
(:func:`shown_error`). Split from :mod:`gpuport.hipify.compiler`, which runs the compiles.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gpuport import fileio, textre

__all__ = [
    "NOT_JUDGED",
    "dependencies",
    "first_error_line",
    "hidden_include",
    "read_outside",
    "shown_error",
    "within",
]

#: The largest ``-MD`` list read back
_DEPFILE_MAX = 2_000_000


def within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both absolute, links already resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def first_error_line(output: str) -> str:
    """The first ``error:`` line of compiler output (else its last line)."""
    for line in output.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else "the compiler failed without a message"


def _location(line: str) -> str | None:
    """The file of ``FILE:LINE[:COL]: [fatal ]error: ...``; None for a message with no line
    number (the driver's ``clang: error: ...``)."""
    for marker in (": fatal error:", ": error:"):
        at = line.find(marker)
        if at >= 0:
            break
    else:
        return None
    head, numbered = line[:at], 0
    for _ in range(2):
        rest, colon, number = head.rpartition(":")
        if not colon or not number.isdigit():
            break
        head, numbered = rest, numbered + 1
    return head if numbered and head else None


def dependencies(depfile: Path) -> list[str] | None:
    """The files a compile read, from the make rule its ``-MD -MF depfile`` wrote (``None``
    when there is none or it cannot be read): ``target: dep dep \\`` lines, spaces in a
    name escaped with a backslash."""
    try:
        text = fileio.read_text(depfile, limit=_DEPFILE_MAX)
    except (fileio.ReadRefused, OSError):
        return None
    text = text.replace("\\\n", " ").replace("$$", "$")
    _, sep, rest = text.partition(": ")
    if not sep:
        return None
    deps: list[str] = []
    word: list[str] = []
    chars = iter(rest)
    for c in chars:
        if c == "\\":
            nxt = next(chars, "")
            if nxt in " #":
                word.append(nxt)
                continue
            word.append(c + nxt)
        elif c in " \t\n":
            if word:
                deps.append("".join(word))
                word = []
        else:
            word.append(c)
    if word:
        deps.append("".join(word))
    return deps


def read_outside(depfile: Path, allowed: Sequence[Path], *, generated: bool = False) -> str | None:
    """The name of a file outside ``allowed`` that the compile read (``"?"`` when the
    compile's list of files is missing or cannot be trusted), else ``None``. Relative names
    are the compile's, which ran in the depfile's folder. A name with a component that
    starts with a space makes the list untrusted: clang writes a
    folder ``a\\ b`` as ``a/\\ b``, read back as ``a/ b``, so ``a\\ b/../../secret`` looked one
    level deeper, inside the project (fourth review). ``generated``: a ``-MG`` list, whose
    missing headers (plain names, no ``..``) are not files that were read."""
    deps = dependencies(depfile)
    if deps is None:
        return "?"
    roots = [os.path.realpath(a) for a in allowed]
    for dep in deps:
        if dep.startswith(" ") or "/ " in dep:
            return "?"
        path = depfile.parent / dep
        if generated and not os.path.lexists(path):
            if not dep.startswith("/") and ".." not in Path(dep).parts:
                continue  # a header that is not there: nothing was read
            return "?"
        real = os.path.realpath(path)
        if not any(within(real, r) for r in roots):
            return Path(dep).name[:60]
    return None


#: The result of a compile that read (or may have read) a file outside the project and the
#: toolchain: the same words whether it compiled or not, or its status would tell a bit of
#: that file (units that compile iff bit J of byte I of it is set; fourth review)
NOT_JUDGED = "not judged: the unit reads a file outside the project and the toolchain"


#: A message of a compiler's driver, which names no file (``clang: error: ...``, ``nvcc fatal``)
_DRIVER = textre.compile(r"^(?:[A-Za-z0-9_.+-]+: (?:fatal )?error: |nvcc fatal\s*: )")
#: What follows the file of a located message: clang's ``:LINE[:COL]: error:``, nvcc's
#: ``(LINE): error:``
_AT_LINE = textre.compile(r"^(?::\d+(?::\d+)?: (?:fatal )?error:|\(\d+\): (?:catastrophic )?error)")


def _listed_at(line: str, deps: Sequence[str], base: Path, allowed: Sequence[Path]) -> str | None:
    """The file of a located message when it is one the compile listed as read (``deps``,
    relative to ``base``) and lies inside ``allowed``; else None."""
    for dep in sorted(deps, key=len, reverse=True):
        if line.startswith(dep) and _AT_LINE.match(line[len(dep) :]):
            real = os.path.realpath(base / dep)
            if any(within(real, os.path.realpath(a)) for a in allowed):
                return dep
            return None
    return None


#: A header not found, as clang, gcc and nvcc's front end say it
_NOT_FOUND = (
    textre.compile(r"^(?P<f>.+?):(?P<n>\d+):\d+: fatal error: '(?P<h>[^']+)' file not found$"),
    textre.compile(
        r"^(?P<f>.+?):(?P<n>\d+):\d+: fatal error: (?P<h>[^:]+): No such file or directory$"
    ),
    textre.compile(
        r'^(?P<f>.+?)\((?P<n>\d+)\): catastrophic error: cannot open source file "(?P<h>[^"]+)"$'
    ),
)


def _missing_include(line: str, allowed: Sequence[Path]) -> bool:
    """Whether ``line`` says a header was not found, at a line of a file inside ``allowed``
    whose ``#include`` names that header as written: what it quotes is the project's own
    text (clang writes no ``-MD`` list when a header is missing, so a missing header read as
    a failure with no message; third review's rerun on HeCBench)."""
    if line.lower().count("error") != 1:
        return False
    found = next((m for p in _NOT_FOUND if (m := p.match(line)) is not None), None)
    if found is None:
        return False
    real = os.path.realpath(found.group("f"))
    root = next((a for a in allowed if within(real, os.path.realpath(a))), None)
    if root is None:
        return False
    try:
        text = fileio.read_text(
            Path(real), limit=fileio.LIMIT_SOURCE, root=Path(root), errors="replace"
        )
        lines = text.split("\n")
    except (fileio.ReadRefused, OSError, UnicodeDecodeError):
        return False
    n, name = int(found.group("n")), found.group("h")
    at = lines[n - 1] if 0 < n <= len(lines) else ""
    return "include" in at and (f'"{name}"' in at or f"<{name}>" in at)


def shown_error(output: str, allowed: Sequence[Path], depfile: Path) -> str:
    """The first error line, or a note in its place. What a report may quote of a
    compiler's output: a message located in a file the compile listed as read (``depfile``,
    its ``-MD`` list) inside ``allowed`` (links resolved), or a driver's message that names no
    file; nothing when the compile read a file outside ``allowed`` (``struct`` + ``#include
    "/secret"`` named the secret in a type at a project line), and nothing located anywhere
    else: an assembler's ``.include`` reads a file no list names, and a folder named ``d:1:
    error: z`` made its message about an outside file look located at ``d`` (third review).
    A line that names a second error is not shown either."""
    line = first_error_line(output)[:2000]
    deps = dependencies(depfile)
    if deps is None:  # a fatal error stops clang before it writes the list
        if _missing_include(line, allowed):
            return line
        return "message not shown: the list of files the compile read is missing"
    outside = read_outside(depfile, allowed)
    if outside is not None:
        return (
            "message not shown: the unit reads a file outside "
            f"the project and the toolchain ({outside})"
        )
    if line.lower().count("error:") > 1:
        return "message not shown: it names more than one error"
    if _listed_at(line, deps, depfile.parent, allowed) is not None or _DRIVER.match(line):
        return line
    where = _location(line)
    name = f" ({Path(where).name[:60]})" if where else ""
    return (
        "message not shown: it is not located in a file of the project or the toolchain "
        f"that the compile read{name}"
    )


def _search_dirs(flags: Sequence[str]) -> list[str]:
    """The include folders a compile's flags name (``-I``, ``-iquote``, ``-isystem``)."""
    out: list[str] = []
    it = iter(flags)
    for word in it:
        if word in ("-I", "-iquote", "-isystem"):
            out.append(next(it, ""))
        elif word.startswith("-I") and len(word) > 2:
            out.append(word[2:])
    return [d for d in out if d]


def hidden_include(output: str, allowed: Sequence[Path], flags: Sequence[str] = ()) -> bool:
    """Whether the compile missed a header that lies, or may lie, outside ``allowed``: an
    absolute or ``..`` name that leads outside, or a link of the project's. The confined
    compiler sees nothing outside (:mod:`gpuport.sandbox`), so such a header is "not found"
    whether or not it exists; its unit is judged as one that read outside, the same words
    either way (else ``#include "/home/me/.ssh/id_rsa"`` would tell whether the file is
    there). Decided from the project's own text and links, never from what lies outside."""
    roots = [os.path.realpath(a) for a in allowed]
    for line in output.splitlines():
        found = next((m for p in _NOT_FOUND if (m := p.match(line.strip())) is not None), None)
        if found is None:
            continue
        name = found.group("h")
        dirs = [str(Path(found.group("f")).parent), *_search_dirs(flags)]
        names = [name] if Path(name).is_absolute() else [str(Path(d) / name) for d in dirs if d]
        for cand in map(os.path.normpath, names):
            if not any(within(cand, r) for r in roots) or _link_on_the_way(cand, roots):
                return True
    return False


def _link_on_the_way(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` (inside one of ``roots``, lexically) or a folder on the way down to it
    from that root is a link: the project's own entries, looked at without following them."""
    root = next((r for r in roots if within(path, r)), None)
    if root is None:
        return False
    here = path
    while within(here, root) and here != root:
        if Path(here).is_symlink():
            return True
        here = str(Path(here).parent)
    return False
