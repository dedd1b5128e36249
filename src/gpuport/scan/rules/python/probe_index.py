"""Which Python files of a project name which ``nvidia-smi`` probe: the project read once a scan.

:func:`~gpuport.scan.rules.python.elsewhere.seen_elsewhere` asks, for each file that swallows
a probe's failure, which other files name the probe. The first version re-read and searched
every other Python file for each such file, files x files: 700 modules of 470 bytes, each with
its own probe, took 13 s (forty-second re-run F20). Now the project is read twice per scan,
whatever the number of probes: once for the functions defined in its files that run
``nvidia-smi`` (the probes), once for the files each of those names is a word of. A file over
1 MiB (read within the bounds) and one that is not UTF-8 are read too: a name found there is
a use not judged, not a file passed over (forty-second re-run F10). A scan asks about a file
once: the second ask about one is the next scan, which reads the project again; and each
scan starts with none (:func:`new_scan`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpuport import fileio, textre

__all__ = ["MOST_BYTES", "MOST_FILES", "ProbeIndex", "lookup", "new_scan"]

#: how much of the project is read for the other callers of a swallowed probe; past it only
#: a private (``_``) probe stays swallowed: a public one's callers are not all seen
MOST_FILES = 20_000
MOST_BYTES = 64 * 1024 * 1024
#: names asked about that the first read did not find defined: read again at most this often
_MOST_REREADS = 4
_DEF_NAME = textre.compile(r"(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([^\s(:\[]+)")
#: every ASCII byte that cannot be in an identifier, mapped to a space (words by bytes.split)
_NOT_NAME = bytes(
    c if c >= 128 or chr(c).isalnum() or chr(c) == "_" else ord(" ") for c in range(256)
)


@dataclasses.dataclass
class ProbeIndex:
    """The files of one project that name a probe."""

    names: frozenset[str]  # the names looked for
    files: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (rel, path)
    words: list[frozenset[str]] = dataclasses.field(default_factory=list)  # names in each
    named: dict[str, list[int]] = dataclasses.field(default_factory=dict)  # name -> files
    complete: bool = True  # every Python file was read within the bounds
    asked: set[str] = dataclasses.field(default_factory=set)  # files asked about this scan
    rereads: int = 0


_INDEX: dict[str, ProbeIndex | None] = {}  # project root -> its index (None: past MOST_FILES)


def new_scan() -> None:
    """Forget every index: a scan starts (``scan_path`` calls it, before any worker forks), so
    no scan reads another's, as ``port``'s scan after its edits would."""
    _INDEX.clear()


def lookup(root: Path, rel: str, names: frozenset[str]) -> ProbeIndex | None:
    """The index of ``root`` for the file ``rel`` asking about ``names``; None past
    :data:`MOST_FILES`. A name the index lacks is read for (a few times a scan at most; the
    caller takes one still missing as unseen)."""
    key = str(root)
    index = _INDEX.get(key)
    if key not in _INDEX or (index is not None and rel in index.asked):
        index = _read(root, names, 0)  # the first ask of a scan
    elif index is not None and not names <= index.names and index.rereads < _MOST_REREADS:
        index = _read(root, names | index.names, index.rereads + 1, index.asked)
    if len(_INDEX) >= 8 and key not in _INDEX:
        _INDEX.clear()
    _INDEX[key] = index
    if index is not None:
        index.asked.add(rel)
    return index


def _python_files(root: Path) -> list[tuple[str, str]] | None:
    """(relative path, path) of the project's Python files; None past :data:`MOST_FILES`."""
    from gpuport.scan.project.files import iter_entries  # the project layer, when needed

    got: list[tuple[str, str]] = []
    for item in iter_entries(root):
        if isinstance(item, tuple) and item[0].endswith(".py"):
            got.append((item[0], item[1].path))
            if len(got) > MOST_FILES:
                return None
    return got


def _bytes(path: str, root: Path, budget: int) -> bytes | None:
    """The file's bytes; None when it is not read (a link out of the project, not a regular
    file); raises OverflowError when it is larger than ``budget``."""
    try:
        size = Path(path).stat().st_size
    except OSError:
        return None
    if size > budget:
        raise OverflowError
    try:
        return fileio.read_bytes(Path(path), limit=budget, root=root)
    except fileio.ReadRefused:
        return None


def _read(
    root: Path, asked: frozenset[str], rereads: int, seen: set[str] | None = None
) -> ProbeIndex | None:
    files = _python_files(root)
    if files is None:
        return None
    names = set(asked)
    spent = 0
    for _rel, path in files:  # the functions of the files that run nvidia-smi
        try:
            data = _bytes(path, root, MOST_BYTES - spent)
        except OverflowError:
            break  # the second pass says it is incomplete
        if data is None:
            continue
        spent += len(data)
        if b"nvidia-smi" in data:
            text = data.decode("utf-8", "surrogateescape")
            names.update(n for n in _DEF_NAME.findall(text) if n.isidentifier())
    index = ProbeIndex(frozenset(names), rereads=rereads, asked=set(seen or ()))
    wanted = {n.encode("utf-8", "surrogateescape"): n for n in names}
    spent = 0
    for rel, path in files:
        try:
            data = _bytes(path, root, MOST_BYTES - spent)
        except OverflowError:
            index.complete = False
            break
        if data is None:
            continue
        spent += len(data)
        hits = frozenset(wanted[w] for w in set(data.translate(_NOT_NAME).split()) & wanted.keys())
        if hits:
            for name in hits:
                index.named.setdefault(name, []).append(len(index.files))
            index.files.append((rel, path))
            index.words.append(hits)
    return index
