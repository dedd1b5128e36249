"""Which files a scan reads, and reading them safely.

Classification is by name only; nothing in the project is imported or run.
Reading never raises: a file that is binary, too large, not UTF-8, unreadable
or a symlink loop comes back as a reason to skip it.
The .gitignore files keep what git keeps (forty-fifth re-run F1/F2): each path is judged by
itself, the deepest .gitignore's last matching line deciding, and an ignored folder is not
entered (:meth:`gpuport.scan.project.ignore_spec.IgnoreSpec.decide`). One .gitignore applies
at most MOST_PATTERN_CHARS of patterns, and once the walk's ignore budget is spent it fails
open: no pattern applies any more and what they would ignore is scanned (forty-sixth re-run F11).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gpuport import fileio, textre
from gpuport.models import GpuportError
from gpuport.scan.project.gitindex import GitFacts, git_facts
from gpuport.scan.project.ignore_spec import IgnoreSpec
from gpuport.scan.project.vendored_copies import copy_of
from gpuport.scan.rules.base import FileKind

NATIVE_SUFFIXES = {
    ".cu",
    ".cuh",
    ".cpp",
    ".cc",
    ".cxx",
    ".c++",
    ".h",
    ".hpp",
    ".hh",
    ".hxx",
    ".inl",
}
GPU_BINARY_SUFFIXES = {".cubin", ".fatbin", ".ptx"}
_REQUIREMENTS = textre.compile(r"^(requirements|constraints|reqs)([-_.][\w.-]*)?\.(txt|in)$", re.I)
_REQ_DIR_FILE = textre.compile(r".*\.(txt|in)$")
_DOCKERFILE = textre.compile(
    r"^(dockerfile|containerfile)([-_.][\w.-]*)?$|.*\.(dockerfile|containerfile)$", re.I
)
_COMPOSE = textre.compile(r"^(docker-)?compose([-_.][\w.-]*)?\.ya?ml$", re.I)
_CONDA = textre.compile(r"^(environment|conda)([-_.][\w.-]*)?\.ya?ml$", re.I)
#: Makefiles: the standard names, Automake's ``Makefile.am``, ``*.mk``, and a makefile named
#: for ROCm/HIP/AMD beside
#: the CUDA one (``makefile.hip``, ``Makefile_rocm``, ``amd.makefile``): a whole ROCm build
_MAKEFILE = textre.compile(
    r"^(gnumakefile|makefile|makefile\.am)$|.*\.mk$"
    r"|^(?:gnu)?makefile[._-](?:rocm|hip|amd)\w*$|^(?:rocm|hip|amd)\w*[._-]makefile$",
    re.I,
)


def rocm_makefile(name: str) -> bool:
    """Whether a file name is a Makefile named for ROCm/HIP/AMD (``makefile.hip``)."""
    low = name.lower()
    return _MAKEFILE.match(low) is not None and not (
        low in ("makefile", "gnumakefile", "makefile.am") or low.endswith(".mk")
    )


# Folders never entered and not worth a line in the report: version control and caches
# (every other folder whose name starts with a dot is treated the same way).
SILENT_DIRS = {"__pycache__", "CVS", "_darcs"}
# Someone else's code: skipped (and listed) unless --include-vendored.
VENDORED_DIRS = {
    "third_party", "third-party", "thirdparty", "vendor", "vendored", "external", "extern",
    "3rdparty", "_vendor", "_vendored",
}  # fmt: skip
# (A folder named ``submodules`` is vendored only where .gitmodules says so: see gitindex.)
INSTALLED_DIRS = {"site-packages", "dist-packages", "node_modules"}
ENV_NAMES = {"venv", "env", "virtualenv", "pyenv", "conda-env"}
BUILD_NAMES = {"build", "dist", "_build"}
PROJECT_FILES = ("setup.py", "pyproject.toml", "setup.cfg", "CMakeLists.txt")

DEFAULT_MAX_BYTES = fileio.LIMIT_SOURCE


def classify(rel_path: str) -> FileKind | None:
    """The kind of a file from its path relative to the root, or None to ignore it."""
    name = rel_path.rsplit("/", 1)[-1]
    lower = name.lower()
    suffix = PurePosixPath(lower).suffix
    if lower == "pyproject.toml":
        return FileKind.PYPROJECT
    if lower == "setup.py":
        return FileKind.SETUP_PY
    if lower == "setup.cfg":
        return FileKind.SETUP_CFG
    if suffix == ".py" or suffix == ".pyi":
        return FileKind.PYTHON
    if suffix in NATIVE_SUFFIXES:
        return FileKind.NATIVE
    if suffix in GPU_BINARY_SUFFIXES:
        return FileKind.GPU_BINARY
    if lower == "cmakelists.txt" or suffix == ".cmake":
        return FileKind.CMAKE
    if _MAKEFILE.match(name):
        return FileKind.MAKEFILE
    if _REQUIREMENTS.match(name):
        return FileKind.REQUIREMENTS
    parent = rel_path.rsplit("/", 2)[-2].lower() if "/" in rel_path else ""
    if parent == "requirements" and _REQ_DIR_FILE.match(lower):
        return FileKind.REQUIREMENTS
    if _DOCKERFILE.match(name):
        return FileKind.DOCKERFILE
    if _COMPOSE.match(name):
        return FileKind.COMPOSE
    if _CONDA.match(name):
        return FileKind.CONDA_ENV
    return None


@dataclass(frozen=True)
class Candidate:
    path: Path
    rel: str
    kind: FileKind
    root: Path


@dataclass(frozen=True)
class Skip:
    rel: str
    reason: str


_Ignores = tuple[tuple[str, IgnoreSpec], ...]


def safe_name(text: str) -> str:
    """A path as text that can always be encoded: undecodable bytes become \\xNN."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _gitignore(folder: Path, root: Path) -> tuple[IgnoreSpec | None, Skip | None]:
    """The folder's own .gitignore, with git's matching rules (None when there is none), and
    a Skip when it cannot be read (a pipe, a device, too large, a link out of the root) or
    holds lines that are not patterns (``!``: git ignores such a line; so does gpuport, and
    says so)."""
    path = folder / ".gitignore"
    if not os.path.lexists(path):
        return None, None
    rel = path.relative_to(root).as_posix()
    try:
        text = fileio.read_text(path, limit=fileio.LIMIT_SETTINGS, root=root, errors="replace")
    except fileio.ReadRefused as exc:
        return None, Skip(rel, f"{exc.reason}; its ignore rules were not applied")
    # git splits lines at "\n" alone (dropping a "\r" before it) and skips a UTF-8 BOM
    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
    spec, bad = gitignore_spec(lines)
    if not bad:
        return spec, None
    shown = ", ".join(str(n) for n in bad[:5]) + (
        f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    )
    return spec, Skip(
        rel,
        f"line {shown} is not a valid pattern (or is over {LONGEST_PATTERN} characters or "
        f"{MOST_WILDCARDS} wildcards, or past line {MOST_LINES:,} or "
        f"{MOST_PATTERN_CHARS:,} characters of patterns); "
        "not applied (as git does)",
    )


#: A .gitignore line longer than this, or with more wildcards (``*``, ``?``, ``[``) than
#: MOST_WILDCARDS, is left out like a line that is not a pattern: each file's match costs time
#: that grows with the path's length times the wildcards (64 lines of 4,000 ``?`` took over
#: 30 s for one path). Real .gitignore lines are a few dozen characters with a few wildcards.
LONGEST_PATTERN = 1024
MOST_WILDCARDS = 64


#: Lines of one .gitignore applied: each file's match grows with them (``!a`` / ``*`` repeated
#: over 400 KB took 20 s and 677 MB); real ones have a few hundred.
MOST_LINES = 10_000


#: Characters of patterns one .gitignore applies (compiling costs microseconds a character:
#: 132 KB of ``x1[!a]...`` took > 10 s; forty-sixth re-run F11); lines past it are left out
#: (and said), what they would ignore is scanned. Real ones hold a few KB; 1 MB costs < 2 s.
MOST_PATTERN_CHARS = 150_000


def _too_costly(line: str) -> bool:
    return len(line) > LONGEST_PATTERN or sum(map(line.count, "*?[")) > MOST_WILDCARDS


def _left_out(lines: list[str]) -> set[int]:
    """The (1-based) numbers of the lines too costly to apply: past MOST_LINES, each too long
    or too wild (:func:`_too_costly`), and every pattern once MOST_PATTERN_CHARS are used.
    Where a ``!`` line is among them, every line is: leaving out a re-inclusion alone would
    hide what it keeps (the walk fails open, forty-sixth re-run F11)."""
    out: set[int] = set()
    used = 0
    negated = False
    for n, line in enumerate(lines, 1):
        if not line or line.startswith("#"):
            continue
        if n > MOST_LINES or _too_costly(line) or used + len(line) > MOST_PATTERN_CHARS:
            out.add(n)
            negated = negated or line.startswith("!")
            continue
        used += len(line)
    if negated:
        return {n for n, line in enumerate(lines, 1) if line and not line.startswith("#")}
    return out


def gitignore_spec(lines: list[str]) -> tuple[IgnoreSpec, list[int]]:
    """A spec of git's matching rules from ``lines`` (matched on RE2, linear in the path and
    the patterns: :mod:`gpuport.scan.project.ignore_spec`), and the (1-based) numbers of the
    lines that are not valid patterns (or too costly to match: :func:`_too_costly`) and were
    left out."""
    long = _left_out(lines)
    lines = ["" if n in long else line for n, line in enumerate(lines, 1)]
    try:
        return IgnoreSpec(lines), sorted(long)
    # GitIgnorePatternError: a line is not a pattern; re.error: pathspec wrote a regex no
    # engine takes (a reversed range, ``[x-u]``, which git's own matching never matches)
    except (ValueError, re.error, textre.Unsupported):
        pass
    good: list[str] = []
    bad: list[int] = sorted(long)
    for number, line in enumerate(lines, 1):
        try:
            IgnoreSpec([line])
        except (ValueError, re.error, textre.Unsupported):
            bad.append(number)
            good.append("")  # keeps the other lines' numbers and order
            continue
        good.append(line)
    return IgnoreSpec(good), sorted(bad)


def _matches_nothing(pattern: str) -> bool:
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

    regex, include = GitIgnoreSpecPattern.pattern_to_regex(pattern)
    return include is None or not regex


def _ignored(rel: str, is_dir: bool, ignores: _Ignores) -> bool:
    """Whether the .gitignore files from the root down to this folder ignore ``rel`` itself,
    as git decides: the last line that matches it in the deepest file that has one (a
    nested ``!k.cu`` re-includes what the root's ``*.cu`` ignored: forty-fifth re-run F2).
    The folders above are not looked at: the walk enters no ignored one."""
    for base, spec in reversed(ignores):
        decided = spec.decide(rel[len(base) + 1 :] if base else rel, is_dir)
        if decided is not None:
            return decided
    return False


#: a header template a build configures into the header it compiles (VTK-m's
#: ``vtkm/internal/Configure.h.in`` -> ``Configure.h``, by CMake's ``configure_file``)
_HEADER_TEMPLATE = textre.compile(r".*\.(?:h|hh|hpp|hxx|cuh)(?:\.cmake)?\.in$", re.I)


def header_template(rel_path: str) -> bool:
    """Whether a file is a header template (read for the preprocessor facts, never judged)."""
    return _HEADER_TEMPLATE.match(rel_path.rsplit("/", 1)[-1]) is not None


#: a text template a program renders into code (PyFR's Mako kernels, compiled at run time):
#: a template engine's suffix, or ``.in`` after a source suffix (``configure_file``'s
#: ``k.cu.in``, ``k.cpp.in``); forty-third re-run F6: ``.cu.mustache``, ``.mak``...
_TEXT_TEMPLATE = textre.compile(
    r".*\.(?:mako|mak|jinja2?|j2|tmpl|tpl|template|mustache|hbs|handlebars|njk|nunjucks|tera"
    r"|liquid|ejs|erb|twig|(?:cu|cpp|cc|cxx|c|hip|inl)\.in)$",
    re.I,
)
#: a source or header suffix followed by any other (forty-fourth re-run F8: the list above is
#: closed, and ``k.cu.m4``, ``.cu.gotmpl``, ``.cu.tt``, ``.cu.ftl``, ``.cu.in.in`` escaped
#: it): the suffix after the source one, the last group
_SOURCE_THEN = textre.compile(
    r".*\.(?:cu|cuh|cpp|cc|cxx|c|h|hh|hpp|hxx|hip|inl|cl)(?:\.[A-Za-z0-9_-]+)*\.([A-Za-z0-9_-]+)$",
    re.I,
)
#: what such a last suffix is when the file is no template: a backup, a build output, a
#: document, an archive or a patch (never compiled as it stands)
_NOT_TEMPLATE = frozenset(
    {"bak", "orig", "old", "rej", "swp", "swo", "save", "backup", "tmp", "temp", "disabled",
     "o", "obj", "d", "ptx", "cubin", "fatbin", "ii", "i", "s", "ll", "bc", "gch", "pch",
     "gcda", "gcno", "log", "html", "htm", "pdf", "png", "svg", "md", "rst", "json", "gz",
     "bz2", "xz", "zst", "zip", "tar", "diff", "patch", "orig~", "dox"}
)  # fmt: skip


def text_template(rel_path: str) -> bool:
    """Whether a file is named like a text template (Mako, Jinja, Mustache, ``.tmpl``,
    ``.cu.in``, or any suffix after a source suffix but a backup's, an output's, a
    document's: ``.cu.m4``, ``.cu.gotmpl``)."""
    name = rel_path.rsplit("/", 1)[-1]
    if _TEXT_TEMPLATE.match(name) is not None:
        return True
    m = _SOURCE_THEN.match(name)
    return m is not None and m.group(1).lower() not in _NOT_TEMPLATE


def read_texts(candidates: Iterable[Candidate], max_bytes: int) -> dict[str, str]:
    """Relative path -> text of the candidates that read as text (the others are left out)."""
    return {c.rel: t for c in candidates if isinstance(t := read_text(c.path, max_bytes), str)}


def walk(
    root: Path,
    *,
    include_vendored: bool = False,
    exclude: tuple[str, ...] = (),
    templates: bool = False,
    kernel_templates: list[tuple[str, Path]] | None = None,
) -> Iterator[Candidate | Skip]:
    """Yield the files to scan under ``root`` (or root itself if it is a file).

    ``templates``: yield header templates too (:func:`header_template`), as native files.
    ``kernel_templates``: a list this appends ``(relative path, path)`` of every file named
    like a text template (:func:`text_template`: Mako, Jinja...) to, for the caller to look
    into; such files are never yielded. Header templates are appended too (a ``k.cuh.in``
    kernel header is never judged; forty-third re-run F6), and still yielded.

    Every ``.gitignore`` from the root down is honoured for the folder it sits
    in. Symlinked directories are not followed (so loops cannot happen);
    symlinked files are read if their target is a regular file inside ``root``;
    a link that leaves the root is listed as skipped, never read.
    """
    if not root.is_dir():
        kind = classify(f"{root.resolve().parent.name}/{root.name}")
        outside = fileio.outside_root(root, root.parent)  # a link out of its own folder
        if not root.is_file():  # a FIFO would block, /dev/zero never end: never read
            yield Skip(root.name, "not a regular file (pipe, socket or device)")
        elif outside is not None:
            yield Skip(root.name, outside)
        elif kind is None:
            yield Skip(root.name, "not a file kind gpuport scans")
        else:
            yield Candidate(root, root.name, kind, root.parent)
        return
    root_name = root.resolve().name
    for item in iter_entries(root, include_vendored=include_vendored, exclude=exclude):
        if isinstance(item, Skip):
            yield item
            continue
        rel, entry = item
        kind = classify(rel if "/" in rel else f"{root_name}/{rel}")
        if kind is None and header_template(rel):
            if kernel_templates is not None and not _is_link(entry):
                kernel_templates.append((rel, Path(entry.path)))  # looked into for kernels
            if templates:
                kind = FileKind.NATIVE
        if kind is None and kernel_templates is not None and text_template(rel):
            if not _is_link(entry):  # a link is never read here (it could leave the root)
                kernel_templates.append((rel, Path(entry.path)))
            continue
        if kind is None:
            if _is_link(entry) and _is_dir_link(Path(entry.path)):
                yield Skip(rel, "symbolic link to a folder: not followed")
            continue
        if _is_link(entry):
            why = fileio.outside_root(Path(entry.path), root)
            if why is not None:  # requirements-x.txt -> /etc/passwd is never read
                yield Skip(rel, why)
                continue
        yield Candidate(Path(entry.path), rel, kind, root)


def iter_entries(
    root: Path,
    *,
    include_vendored: bool = False,
    exclude: tuple[str, ...] = (),
) -> Iterator[tuple[str, os.DirEntry[str]] | Skip]:
    """Every non-folder entry under the folder ``root`` that the skip rules let through.

    The one traversal behind :func:`walk` (which classifies the entries) and hipify's copy of
    non-CUDA files: ``.gitignore`` files from the root down (for untracked files only: what
    the git index tracks is scanned even if ignored), ``--exclude`` patterns, hidden, vendored
    (by name, or a git submodule), installed, build and virtual-environment folders;
    symlinked folders are never entered. Yields ``(relative path, entry)``, or a Skip saying
    why something was passed over.
    """
    git = git_facts(root)
    if git.problem:
        yield Skip(".git/index", f"could not be read ({git.problem}): .gitignore was applied to "
                   "tracked files too")  # fmt: skip
    excludes = None
    if exclude:
        excludes, bad = gitignore_spec(list(exclude))
        if bad:
            raise GpuportError(f"exclude pattern {exclude[bad[0] - 1]!r} is not a valid pattern")
        empty = next((p for p in exclude if _matches_nothing(p)), None)
        if empty is not None:  # a blank, a comment, an unclosed ``[``: git reads no pattern
            raise GpuportError(f"exclude pattern {empty!r} is not a pattern (it matches nothing)")
    # (folder, .gitignore files that apply in it, its depth, whether a .gitignore past
    # MOST_NESTED_GITIGNORES was already said for this path, whether the folder is ignored:
    # entered only because git tracks files in it, where git ignores every untracked one)
    stack: list[tuple[Path, _Ignores, int, bool, bool]] = [(root, (), 0, False, False)]
    spent = 0.0  # CPU seconds reading, compiling and matching ignore patterns
    # past the budget no pattern is read or matched: the walk fails open (forty-sixth F11)
    spent_out = False
    last_read = ""  # the last .gitignore read: said when the budget runs out
    while stack:
        current, inherited, depth, told, inside_ignored = stack.pop()
        here = current.relative_to(root).as_posix()
        here = "" if here == "." else here
        if not spent_out and spent > IGNORE_BUDGET_S:
            spent_out = True
            yield _ignore_spent(inherited, last_read)
        if spent_out:
            inherited, excludes = (), None
            own, problem = None, None
        elif len(inherited) < MOST_NESTED_GITIGNORES:
            # reading and compiling them counts too (thousands of .gitignore files of 10,000
            # lines each: > 60 s compiling; thirty-third re-run F7)
            started = time.process_time()
            own, problem = _gitignore(current, root)
            spent += time.process_time() - started
            if own is not None:
                last_read = f"{here}/.gitignore" if here else ".gitignore"
        else:  # each file is matched against every .gitignore above it: a chain is bounded
            own, problem = None, None if told else _too_deep_gitignore(current, root)
            told = told or problem is not None
        if problem is not None:
            yield problem
        ignores = (*inherited, (here, own)) if own is not None else inherited
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            yield Skip(here or ".", f"cannot list folder: {exc.strerror or exc}")
            continue
        subdirs: list[tuple[Path, bool]] = []
        for entry in entries:
            rel = f"{here}/{entry.name}" if here else entry.name
            if safe_name(rel) != rel:
                yield Skip(safe_name(rel), "file name is not valid UTF-8")
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                yield Skip(rel, f"cannot stat: {exc.strerror or exc}")
                continue
            if not spent_out and spent > IGNORE_BUDGET_S:
                spent_out = True
                yield _ignore_spent(ignores, last_read)
                ignores, excludes = (), None
            if is_dir and depth + 1 > MOST_FOLDER_DEPTH:
                yield Skip(rel + "/", _TOO_DEEP)
                continue
            if is_dir:
                why = _dir_skip_reason(Path(entry.path), include_vendored, rel, git, root)
                if why is not None:
                    if why:
                        yield Skip(rel + "/", why)
                    continue
            ignored = dropped = inside_ignored
            if ignores or excludes is not None:  # no clock read where nothing is matched
                started = time.process_time()
                ignored = ignored or _ignored(rel, is_dir, ignores)
                dropped = (
                    ignored and rel not in (git.tracked_dirs if is_dir else git.tracked)
                ) or (excludes is not None and excludes.decide(rel, is_dir) is True)
                spent += time.process_time() - started
            elif ignored:
                dropped = rel not in (git.tracked_dirs if is_dir else git.tracked)
            if dropped:
                continue
            if is_dir:
                subdirs.append((Path(entry.path), ignored))
                continue
            yield rel, entry
        stack.extend((d, ignores, depth + 1, told, i) for d, i in reversed(subdirs))


#: .gitignore files applied to one path, from the root down: each entry is matched against
#: every one of them over its whole path, so a chain of hundreds of nested folders each with a
#: .gitignore cost time cubic in the depth (819 levels, 48 KB: over the 10 s budget; fourteenth
#: review). Real projects have a handful along one path. Deeper ones are not applied, and the
#: first of them is said: what they would ignore is scanned, never hidden.
MOST_NESTED_GITIGNORES = 32

#: Folders deeper than this are not walked (and said): a path's length, which every match and
#: every read's link check costs, is bounded by it. Real projects are a few dozen deep at most.
MOST_FOLDER_DEPTH = 128
_TOO_DEEP = f"not walked: more than {MOST_FOLDER_DEPTH} folders deep"


def _too_deep_gitignore(folder: Path, root: Path) -> Skip | None:
    path = folder / ".gitignore"
    if not os.path.lexists(path):
        return None
    return Skip(
        path.relative_to(root).as_posix(),
        f"not applied, nor any deeper .gitignore on this path: {MOST_NESTED_GITIGNORES} "
        ".gitignore files in the folders above it already apply (files they would ignore "
        "are scanned)",
    )


#: CPU seconds a walk may spend reading, compiling and matching .gitignore and --exclude
#: patterns; past it, what is left is listed as not read. 3,000 patterns such as ``*a??...??x``
#: cost 1 s per path of 240 characters (RE2 gives up its DFA on them; sixth review), 30 empty
#: files 30 s; 110 .gitignore files of 10,000 lines, 60 s to compile (thirty-third re-run).
IGNORE_BUDGET_S = 10.0
_IGNORE_SPENT = (
    f"reading and matching the .gitignore patterns took over {IGNORE_BUDGET_S:g} s of CPU, so "
    "gpuport stopped walking with ignore rules: this file, every other .gitignore and "
    "--exclude are not applied from here on, and what they would ignore is scanned"
)


def _ignore_spent(ignores: _Ignores, last_read: str) -> Skip:
    """The spent budget, said on the deepest .gitignore here, the last read, or --exclude."""
    if ignores:
        base = ignores[-1][0]
        return Skip(f"{base}/.gitignore" if base else ".gitignore", _IGNORE_SPENT)
    return Skip(last_read or "--exclude", _IGNORE_SPENT)


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _dir_skip_reason(
    folder: Path,
    include_vendored: bool,
    rel: str = "",
    git: GitFacts | None = None,
    root: Path | None = None,
) -> str | None:
    """None to enter the folder; "" to skip it silently; else the reason it is skipped.

    Virtual environments are recognised by content (``pyvenv.cfg``, ``conda-meta``)
    and build output by sitting beside a project file, so a source folder that
    happens to be called ``env`` or ``build`` is still scanned.
    """
    name = folder.name
    if name in SILENT_DIRS or (name.startswith(".") and name != ".ci"):
        return ""
    if name in INSTALLED_DIRS:
        return "installed third-party packages: not scanned"
    if not include_vendored and name in VENDORED_DIRS:
        return "vendored code: not scanned (--include-vendored scans it)"
    if not include_vendored and git is not None and rel in git.submodules:
        return "git submodule (another repository): not scanned (--include-vendored scans it)"
    copy = None if include_vendored or root is None else copy_of(folder, root)
    if copy is not None:
        return (
            f"vendored code: a copy of {copy} (its own build declares it, with its own "
            "licence): not scanned (--include-vendored scans it)"
        )
    try:
        if (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir():
            return "virtual environment: not scanned"
        if name in ENV_NAMES and (folder / "bin" / "activate").is_file():
            return "virtual environment: not scanned"
        is_build = name in BUILD_NAMES or name.startswith("cmake-build-")
        if is_build and any((folder.parent / f).is_file() for f in PROJECT_FILES):
            return "build output: not scanned"
    except OSError as exc:  # a path longer than PATH_MAX stopped every command with exit 4
        return f"cannot be read ({exc.strerror or type(exc).__name__}): not scanned"
    return None


def _is_dir_link(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def read_text(
    path: Path, max_bytes: int = DEFAULT_MAX_BYTES, root: Path | None = None
) -> str | Skip:
    """The file's text, or a Skip saying why it cannot be scanned (through
    :func:`gpuport.fileio.read_bytes`: regular files only, bounded, inside ``root`` if given)."""
    rel = path.name
    try:
        data = fileio.read_bytes(path, limit=max_bytes, root=root)
    except fileio.ReadRefused as exc:
        return Skip(rel, exc.reason)
    if b"\x00" in data[:8192]:
        return Skip(rel, "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skip(rel, f"not valid UTF-8 (byte {exc.start})")
    return text.removeprefix("\ufeff")


_os_reason = fileio.os_reason
