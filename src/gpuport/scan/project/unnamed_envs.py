"""Conda environment files that no other file of the project names.

GroundingDINO keeps an ``environment.yaml`` (a ``conda env export`` of someone's machine:
``cudatoolkit``, ``nvidia::cuda-*``, ``pytorch-cuda`` pins) that no README, page, script,
Dockerfile, CI job or build file names; its documented install is ``pip install -e .``
(issue 24, eighteenth sample; DROID-SLAM's in the seventeenth was the same). Counted as core,
its 23 blockers made the project "blocked". In a project that installs as a package (a
``setup.py`` or ``pyproject.toml`` at its root), such a file is nobody's install route: its
findings are counted apart (scope extra) with the reason. One that any of those files names
(``conda env create -f environment.yml`` in the README), or whose environment another file
names (relion's CMake looks the ``relion-5.0`` environment up), stays core.

The same holds for a ``pip freeze`` of someone's machine kept as a requirements file (the
twenty-fourth sample's KIVI: 181 of 182 lines pinned with ``==``, ``nvidia-*-cu12`` among them,
its documented install ``pip install -e .``): a requirements file of 20 requirements or more,
nine in ten pinned exactly, that no other file names (no ``-r``/``pip install -r`` line, no
``setup.py`` reading it, no page) is counted apart in a project that installs as a package.
A hand-written requirements file (ranges, few pins) stays core whether or not it is named.

The files that may name one are the view's build and route files, the READMEs and pages, and
the project's scripts, CI workflows, ``tox.ini``, ``noxfile.py`` and configs
(:mod:`script_texts`: the scan reads none of these; forty-second re-run F5, a freeze
``install.sh``, CI and tox install was "named by no file"); an option glued to the file
(``-rrequirements.txt``) names it too. The project's own Python names it as well: its
``*.py`` files and its Python not named so (``#!python`` tools, notebooks), as an installer
that runs ``pip install -r requirements.txt`` (forty-third re-run F3: ``tools/install_deps.py``
installed a freeze "named by no file", and the scan said READY). When not all of them could
be read, nothing is moved.

A name built from a variable names every file its pattern could match (forty-fourth re-run
F7: ``pip install -r requirements-${FLAVOR}.txt`` in ``install.sh``, or
``f"requirements-{flavor}.txt"`` in a Python installer, names ``requirements-cuda.txt``): a
computed name is "maybe named", and a freeze maybe named stays core. So does a shell or
Python glob (forty-fifth re-run F18: ``for f in requirements/*.txt; do pip install -r "$f"``
names ``requirements/cuda.txt``): a glob names every file it can match, looked up by its
folder and the literal start and end of its last part (``**`` or a glob in a folder: any
depth beneath), never each glob tried on each file. An install command (``pip install -r``,
``uv pip``, ``conda ... --file``) with a glob, a listing or a placeholder near it names every
file of each folder written there as a word of its own (forty-sixth re-run F10: ``find
requirements -name "*.txt" -exec pip install -r {} \\;``, ``cd requirements && for f in
*.txt``, ``Path("requirements").glob("*.txt")``); each text is read once.

Files are read as text, bounded, inside the project; nothing is run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.project.files import Candidate, read_text
from gpuport.scan.project.routes_docs import doc_texts
from gpuport.scan.project.script_texts import project_scripts
from gpuport.scan.rules.base import FileKind

__all__ = ["naming_texts", "unnamed_conda_files", "unnamed_freezes"]

_MAX_BYTES = 1 << 20
_ENV_NAME = textre.compile(r"(?m)^name:[ \t]*[\"']?([\w.+-]+)")
#: files that name an install step, read besides the build and route files the view has
_SCRIPT_SUFFIXES = (".sh", ".bash", ".ps1", ".bat", ".yml", ".yaml", ".cfg", ".ini", ".txt")


def unnamed_conda_files(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    package: str,
) -> dict[str, str]:
    """Conda environment files no other file names -> why their findings are not core
    (``known_texts``: relative path -> text of the files the view already read)."""
    if not package or not root.is_dir():
        return {}
    conda = [c.rel for c in candidates if c.kind is FileKind.CONDA_ENV]
    if not conda:
        return {}
    texts, complete = _naming_texts(root, candidates, known_texts, FileKind.CONDA_ENV, conda)
    if not complete:
        return {}  # a script gpuport could not read may name it
    names = {rel: rel.rsplit("/", 1)[-1] for rel in conda}
    envs: dict[str, str] = {}  # relion's CMake finds its env by name ("relion-5.0")
    for rel in conda:
        own = fileio.read_text_or_none(root / rel, limit=_MAX_BYTES, root=root) or ""
        env = _ENV_NAME.search(own)
        if env is not None:
            envs[rel] = env.group(1)
    # one pass over each text for every name (a pass per conda file and text was quadratic:
    # 3,000 conda files beside 8 MB of docs, > 60 s; thirty-third re-run F1)
    found_in = _where_named(set(names.values()), texts)
    env_in = _where_env_named(set(envs.values()), texts)
    out: dict[str, str] = {}
    for rel in conda:
        if found_in.get(names[rel], set()) - {rel} or (
            rel in envs and env_in.get(envs[rel], set()) - {rel}
        ):
            continue
        out[rel] = (
            f"a conda environment file no file of the project names; its install is {package}"
        )
    return out


_REQ_LINE = textre.compile(r"(?m)^[ \t]*([A-Za-z0-9][^\s#;]*)")
_PINNED = textre.compile(r"^[A-Za-z0-9][\w.\[\],-]*==[^=*]+$")
_MIN_FREEZE = 20


def _is_freeze(text: str) -> bool:
    """Twenty requirements or more, nine in ten pinned exactly (``name==1.2.3``)."""
    reqs = _REQ_LINE.findall(text)
    if len(reqs) < _MIN_FREEZE:
        return False
    return sum(1 for r in reqs if _PINNED.match(r)) * 10 >= len(reqs) * 9


def unnamed_freezes(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    package: str,
) -> dict[str, str]:
    """Requirements files that are a ``pip freeze`` no other file names -> why their findings
    are not core (see the module's docstring)."""
    if not package or not root.is_dir():
        return {}
    reqs = [c.rel for c in candidates if c.kind is FileKind.REQUIREMENTS]
    freezes = []
    others: dict[str, str] = {}
    for rel in reqs:
        text = fileio.read_text_or_none(root / rel, limit=_MAX_BYTES, root=root)
        if text is None:
            continue
        if _is_freeze(text):
            freezes.append(rel)
        others[rel] = text  # ``-r requirements.txt`` in another requirements file names it
    if not freezes:
        return {}
    texts, complete = _naming_texts(root, candidates, known_texts, FileKind.REQUIREMENTS, freezes)
    if not complete:
        return {}  # a script gpuport could not read may name it
    texts.update(others)
    names = {rel: rel.rsplit("/", 1)[-1] for rel in freezes}
    found_in = _where_named(set(names.values()), texts, ".t")
    unnamed = [rel for rel in freezes if not found_in.get(names[rel], set()) - {rel}]
    patterns = _computed_names(texts) if unnamed else {}
    unnamed = [rel for rel in unnamed if not _maybe_named(rel, patterns)]
    wild = _wild_named(texts, {p for rel in unnamed for p in _folder_keys(rel)}) if unnamed else {}
    return {
        rel: f"a pip freeze no file of the project names; its install is {package}"
        for rel in unnamed
        if not any(wild.get(k, set()) - {rel} for k in _folder_keys(rel))
    }


#: a command that installs requirements files: ``pip install -r``, ``uv pip``, ``pip-sync``,
#: ``conda install --file`` / ``conda env create -f`` (forty-sixth re-run F10)
_INSTALLS = textre.compile(
    r"\bpip3?\b[^\n]{0,40}?\binstall\b[^\n]{0,160}?(?:-r|--requirements?|-c|--constraints?)"
    r"|\buv\s+pip\b|\bpip-sync\b|\b(?:conda|mamba|micromamba)\b[^\n]{0,60}?\b(?:install|create"
    r"|update)\b[^\n]{0,160}?(?:--file|-f)\b",
    re.I,
)
#: what makes the files an install names open: a file glob (``*.txt``, ``req*.in``,
#: ``requirements/*``), a listing (``os.listdir``, ``Path.glob``, ``find``, ``ls``), or a
#: placeholder given as the file (``-r {}``, ``-r "$f"``, ``-r %%f``, ``-r {req}``)
_WILD = textre.compile(
    r"[\w./+-]*[*?][\w+*?-]*\.\w|/\*(?:[\s\"')\]]|$)|\b(?:listdir|scandir|iterdir|walk|r?glob"
    r"|Get-ChildItem|gci|ls|find|xargs)\b|(?:-r|--requirements?|--file|-f|-c)[\s=]*[\"']?"
    r"(?:\{\}|\$\{?[A-Za-z_]\w*|\{[A-Za-z_]\w*\}|%%?[A-Za-z_]\w*)",
    re.I,
)
#: a glob with no folder (``*.txt``): it names files of the folder the command runs in
_BARE_GLOB = textre.compile(r"(?:^|[\s\"'(=,\[])[\w+-]*[*?][\w+*?-]*\.\w")
_SPAN = 600  # characters either side of an install command read with it
_WILD_MARK = "gpuport:wild-install"
_HERE = "gpuport:here"


def _folder_keys(rel: str) -> set[str]:
    """The words by which an open install may name ``rel``'s folder: each of its parts, or
    :data:`_HERE` (the folder a command runs in) for a file at the root."""
    folder = rel.rpartition("/")[0]
    return set(folder.split("/")) if folder else {_HERE}


def _wild_words(text: str) -> set[str]:
    """The words said within :data:`_SPAN` characters of a command that installs
    requirements files through a glob, a listing or a placeholder (``find requirements -name
    "*.txt" -exec pip install -r {} \\;``, ``cd requirements && for f in *.txt``,
    ``Path("requirements").glob("*.txt")``): the folder written as a word of its own names
    every file in it (forty-sixth re-run F10); :data:`_HERE` when a glob names no folder.
    Each span of text is read once (spans next to each other merged): linear time."""
    out: set[str] = set()
    spans: list[tuple[int, int]] = []
    for m in _INSTALLS.finditer(text):
        a, b = max(0, m.start() - _SPAN), m.end() + _SPAN
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    for a, b in spans:
        part = text[a:b]
        if _WILD.search(part) is None:
            continue
        out |= _file_words(part)
        if _BARE_GLOB.search(part) is not None:
            out.add(_HERE)
    for line in text.splitlines() if _WILD_MARK in text else ():
        if line.startswith(_WILD_MARK):  # a Python installer's, kept by :func:`_python_names`
            out.update(line.split()[1:])
    return out


def _wild_named(texts: Mapping[str, str], keys: set[str]) -> dict[str, set[str]]:
    """Folder word (of ``keys``) -> the texts whose open installs name it (:func:`_wild_words`)."""
    out: dict[str, set[str]] = {}
    for rel, text in texts.items():
        for word in _wild_words(text) & keys:
            out.setdefault(word, set()).add(rel)
    return out


#: a file name built from a variable: literal file-name characters around one placeholder or
#: more (``${X}``, ``$(X)``, ``$X``, ``{x}``/``{{ x }}``, ``%s``/``%(x)s``, ``%X%``, ``<x>``)
_PLACEHOLDER = (
    r"(?:\$\{[^}\n]{1,80}\}|\$\([^)\n]{1,80}\)|\$[A-Za-z_]\w*|\{\{[^}\n]{0,80}\}\}"
    r"|\{[^{}\n]{0,80}\}|%\(\w+\)s|%s|%[A-Za-z_]\w*%|<[A-Za-z_]\w*>)"
)
_COMPUTED = textre.compile(
    r"(?P<before>[\w./+-]*)"
    + _PLACEHOLDER
    + r"(?:[\w.+-]*"
    + _PLACEHOLDER
    + r")*(?P<after>[\w.+-]*)"
)
#: a bare extension: ``${X}.txt`` alone could name any requirements file; too weak to count
_BARE_EXT = textre.compile(r"^\.\w*$")


#: a path with a glob character (``requirements/*.txt``, ``reqs/**/*.txt``, ``req-?.txt``)
_GLOB = textre.compile(r"[\w./+-]*(?:\*|\?|\[[^\]\s/]{1,40}\])(?:[\w./+*?-]|\[[^\]\s/]{1,40}\])*")
_GLOB_CHAR = textre.compile(r"[*?\[]")


def _computed_names(texts: Mapping[str, str]) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(a file name's literal start, its literal end after the last variable) -> the folder
    written before it -> the texts that build it, for each file name built from a variable
    with a literal start, a folder, or more than an extension after it, and each glob
    (:func:`_glob_key`; a folder ending ``/**``: any depth beneath). One pass a text."""
    out: dict[tuple[str, str], dict[str, set[str]]] = {}
    for rel, text in texts.items():
        if "$" in text or "{" in text or "%" in text or "<" in text:
            for m in _COMPUTED.finditer(text):
                key = _key_of(m)
                if key is not None:
                    out.setdefault(key[1:], {}).setdefault(key[0], set()).add(rel)
        if "*" in text or "?" in text or "[" in text:
            for g in _GLOB.finditer(text):
                key = _glob_key(g.group())
                if key is not None:
                    out.setdefault(key[1:], {}).setdefault(key[0], set()).add(rel)
    return out


def _glob_key(glob: str) -> tuple[str, str, str] | None:
    """(folder, literal start, literal end) of the files a glob can match: its last part's
    text before the first and after the last glob character; a glob character in a folder
    part (``**``, ``req*/``) makes the folder the literal ones before it plus ``/**`` (any
    depth beneath). None when too little is literal to name a file (``*.txt``, ``*``)."""
    glob = glob.rstrip("/.")
    parts = [p for p in glob.split("/") if p not in ("", ".")]
    if not parts:
        return None
    name, folders = parts[-1], parts[:-1]
    deep = next((i for i, p in enumerate(folders) if _GLOB_CHAR.search(p)), None)
    folder = "/".join(folders if deep is None else [*folders[:deep], "**"])
    first = _GLOB_CHAR.search(name)
    if first is None:
        start, end = name, ""
    else:
        start = name[: first.start()]
        tail = name[first.start() :]
        k = max(tail.rfind("*"), tail.rfind("?"), tail.rfind("]"))
        end = tail[k + 1 :]
    if folder in ("", "**") and (not end or (not start and _BARE_EXT.match(end))):
        return None  # ``*.txt``, and words a glob character ends (``why?``, ``r[0]``)
    return folder, start, end


def _key_of(m: re.Match[str]) -> tuple[str, str, str] | None:
    """(folder, literal start, literal end) of a name built from a variable, or None when too
    little of it is literal to name a file: no start, and no folder or only an extension."""
    before, after = m.group("before") or "", m.group("after") or ""
    folder, _, start = before.rpartition("/")
    folder = folder.lstrip("./")
    if not start and (not after or (not folder and _BARE_EXT.match(after))):
        return None
    return folder, start, after


def _maybe_named(rel: str, patterns: Mapping[tuple[str, str], Mapping[str, set[str]]]) -> bool:
    """Whether a file name built from a variable (:func:`_computed_names`), in a text other
    than ``rel`` itself, could be ``rel``: each split of its name into a literal start and end
    is looked up (not each pattern tried); with no literal start, the folder written before
    the variable must end ``rel``'s folder."""
    if not patterns:
        return False
    folder, _, name = rel.rpartition("/")
    name = name[:255]
    parts = folder.split("/") if folder else []
    tails = {"", *("/".join(parts[k:]) for k in range(len(parts)))}
    # a glob's ``a/**``: ``a`` anywhere in ``rel``'s folder (a few parts: a few sub-paths)
    within = {"", *("/".join(parts[a:b]) for a in range(len(parts)) for b in range(a + 1, 9 + a))}
    starts = {key[0] for key in patterns}
    for i in range(len(name) + 1):
        start = name[:i]
        if start not in starts:
            continue
        for j in range(i, len(name) + 1):
            by_folder = patterns.get((start, name[j:]))
            if not by_folder:
                continue
            for f, where in by_folder.items():
                if f == "**" or f.endswith("/**"):
                    ok = bool(start) or f[:-3].rstrip("/") in within
                else:
                    ok = bool(start) or f in tails
                if ok and where - {rel}:
                    return True
    return False


def naming_texts(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    kind: FileKind,
    files: Sequence[str],
    configs: bool = True,
    python: bool = True,
) -> dict[str, str]:
    """The texts that may name one of ``files`` (of ``kind``) as an install or run step:
    the view's build and route files, READMEs and pages, CI files and scripts, and the
    READMEs of the folders from each file's up to the root (relative path -> text).
    ``configs``: also the project's config files (``tox.ini``'s ``deps = -r``); not for a
    question a config's own keys would answer wrongly (a conda recipe's ``build:`` is no
    image build: torchani's ``recipe/meta.yaml``, session 19). ``python``: also the
    project's Python, each file kept as what names a file (see :func:`_python_names`)."""
    return _naming_texts(root, candidates, known_texts, kind, files, configs, python)[0]


def _naming_texts(
    root: Path,
    candidates: Sequence[Candidate],
    known_texts: Iterable[tuple[str, str]],
    kind: FileKind,
    files: Sequence[str],
    configs: bool = True,
    python: bool = True,
) -> tuple[dict[str, str], bool]:
    """:func:`naming_texts`, and whether every script that may name one was read."""
    texts: dict[str, str] = dict(known_texts)
    texts.update(doc_texts(root))
    scripts = project_scripts(root, candidates)  # shell, CI, tox, nox: never candidates
    complete = scripts.complete
    read = [*scripts.run.items(), *(scripts.config.items() if configs else ())]
    if python:  # an installer in Python: ``tools/install_deps.py``, a notebook's ``!pip``
        read += [(rel, _python_names(text)) for rel, text in scripts.python.items()]
        for c in candidates:
            if c.kind is FileKind.PYTHON and c.rel not in texts:
                code = read_text(c.path, root=root)
                if not isinstance(code, str):
                    complete = False  # a Python file gpuport could not read may name it
                    continue
                texts[c.rel] = _python_names(code)
    for rel, text in read:
        if rel not in files:
            texts.setdefault(rel, text)
    for c in candidates:
        if c.rel in texts or c.kind is kind:
            continue
        if c.rel.startswith(".github/") or c.rel.endswith(_SCRIPT_SUFFIXES):
            got = fileio.read_text_or_none(root / c.rel, limit=_MAX_BYTES, root=root)
            if got is not None:
                texts[c.rel] = got
    readmes: dict[str, str] = {}
    listed: set[str] = set()
    for rel in files:  # examples/x/README.md names it: each folder listed once
        readmes.update(_folder_readmes(root, rel, texts, readmes, listed))
    texts.update(readmes)
    return texts, complete


_FILE_WORD = textre.compile(r"[\w.+-]+")
#: every ASCII character that is not a file-name character, to a space (``str.translate``)
_NOT_FILE_CHAR = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) in "_.+-")}


def _file_words(text: str) -> set[str]:
    """The words of file-name characters of ``text`` (``[\\w.+-]+``), split at C speed: a
    pattern match per word was 6 million matches for unsloth's 1,800 Python files (20 s);
    only a word with non-ASCII characters is split by the pattern."""
    words = set(text.translate(_NOT_FILE_CHAR).split())
    odd = {w for w in words if not w.isascii()}
    if odd:
        words -= odd
        for w in odd:
            words.update(_FILE_WORD.findall(w))
    return words


def _python_names(text: str) -> str:
    """What of a Python file can name an install file or a conda environment: its words of
    file-name characters (each once) and its lines about conda. A project's Python is read
    whole only when such a file exists; what is kept of it stays small."""
    words = _file_words(text)
    conda = _CONDA_LINE.findall(text) if "onda" in text or "ONDA" in text else []
    # a name built from a variable (``f"requirements-{flavor}.txt"``) is kept as written
    computed = (
        {m.group() for m in _COMPUTED.finditer(text) if _key_of(m) is not None}
        if "{" in text or "%" in text or "$" in text
        else set()
    )
    if "*" in text or "?" in text or "[" in text:  # ``glob("requirements/*.txt")``
        computed |= {g.group() for g in _GLOB.finditer(text) if _glob_key(g.group()) is not None}
    wild = _wild_words(text)  # kept apart: the words alone no longer say what installs
    mark = [" ".join([_WILD_MARK, *sorted(wild)])] if wild else []
    return "\n".join([*sorted(words), *conda, *sorted(computed), *mark])


def _where_named(
    names: set[str], texts: Mapping[str, str], hint: str = ".y"
) -> dict[str, set[str]]:
    """Name -> the texts it appears in (as a word of file-name characters: the way a command
    line or a page names a file); ``hint``: text every name contains."""
    out: dict[str, set[str]] = {}
    for rel, text in texts.items():
        if hint not in text:  # every conda file name ends in .yml or .yaml
            continue
        words = _file_words(text)
        # an option glued to its value names the file too: ``-rrequirements.txt``,
        # ``-fenvironment.yml`` (forty-second re-run F5)
        words |= {w[2:] for w in words if len(w) > 2 and w[0] == "-" and w[1].isalpha()}
        for word in words & names:  # docs/environment.yml too
            out.setdefault(word, set()).add(rel)
    return out


_CONDA_LINE = textre.compile(r"(?i)conda[^\n]{0,200}")
_ENV_WORD = textre.compile(r"[\w.-]+")


def _where_env_named(envs: set[str], texts: Mapping[str, str]) -> dict[str, set[str]]:
    """Environment name -> the texts that name it on a line about conda, after the word
    (``conda activate dino``, ``set(CONDA_ENV_NAME "relion-5.0")``): a package named like
    it is no mention."""
    out: dict[str, set[str]] = {}
    if not envs:
        return out
    for rel, text in texts.items():
        if "onda" not in text and "ONDA" not in text:
            continue
        for m in _CONDA_LINE.finditer(text):
            for word in set(_ENV_WORD.findall(m.group()[5:])) & envs:
                out.setdefault(word, set()).add(rel)
    return out


def _folder_readmes(
    root: Path, rel: str, known: Mapping[str, str], seen: Mapping[str, str], listed: set[str]
) -> dict[str, str]:
    """The README files of the folders from ``rel``'s up to the root (relative path -> text),
    but those in ``known`` or already read (``seen``); ``listed``: folders already listed."""
    out: dict[str, str] = {}
    parts = rel.split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        folder = "/".join(parts[:depth])
        if folder in listed:
            continue
        listed.add(folder)
        try:
            names = [e.name for e in os.scandir(root / folder) if e.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for n in names:
            key = f"{folder}/{n}"
            if n.lower().startswith("readme") and key not in known and key not in seen:
                got = fileio.read_text_or_none(root / key, limit=_MAX_BYTES, root=root)
                if got is not None:
                    out[key] = got
    return out
