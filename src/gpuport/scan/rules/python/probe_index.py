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
scan starts with none (:func:`new_scan`). Forty-third re-run F5: the project's Python is not
only its ``*.py`` files: ``*.pyw``, extensionless tools whose ``#!`` line names python and the
code cells of notebooks (:func:`python_source`) are read for callers too. Forty-fourth re-run
F6: so are Cython (``.pyx``/``.pxd``/``.pxi``), tools run by ``uv run --script``/``pipx run``
or holding a PEP 723 ``# /// script`` block, and ``#!`` python tools with a dot in their name
(``tools/check.v2``). F19: a notebook's lone surrogate (valid JSON) no longer crashes the scan.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gpuport import fileio, textre
from gpuport.errors import GpuportError

__all__ = ["MOST_BYTES", "MOST_FILES", "ProbeIndex", "lookup", "new_scan", "python_source"]

#: how much of the project is read for the other callers of a swallowed probe; past it only
#: a private (``_``) probe stays swallowed: a public one's callers are not all seen
MOST_FILES = 20_000
MOST_BYTES = 64 * 1024 * 1024
#: names asked about that the first read did not find defined: read again at most this often
_MOST_REREADS = 4
_DEF_NAME = textre.compile(r"(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([^\s(:\[]+)")
#: extensionless files whose first bytes are read for a ``#!...python`` line
_MOST_HEADS = 30_000
_PY_SHEBANG = textre.compile(r"^#![^\n]*(?:\b(?:python|pypy)[\d.]*\b|\b(?:uv|pipx)[ \t]+run\b)")
#: a PEP 723 inline-metadata block: the file is a Python script (run by uv, pipx, hatch)
_PEP723 = b"# /// script"
#: Python read whole by its suffix (Cython's too: a caller there is a use, judged or not)
_PY_SUFFIXES = (".py", ".pyw", ".ipynb", ".pyx", ".pxd", ".pxi")
#: suffixes that are no Python tool (their first bytes are not read for a ``#!`` line)
_NOT_TOOL_WORDS = (
    ".md .rst .txt .json .yaml .yml .toml .cfg .ini .csv .tsv .xml .html .htm .css .js .ts"
    " .png .jpg .jpeg .gif .svg .ico .pdf .zip .gz .tgz .bz2 .xz .tar .whl .so .a .o .dll"
    " .dylib .exe .bin .pt .pth .onnx .npy .npz .pkl .h5 .safetensors .ckpt .lock .log"
    " .c .cc .cpp .cxx .h .hh .hpp .hxx .cu .cuh .cl .metal .cmake .mk .sh .bash .zsh .bat"
    " .ps1 .cmd .go .rs .java .kt .scala .rb .pl .php .lua .jl .r .m .swift .pyi .pyc .pyo"
    " .ptx .cubin .fatbin .hip .inc .in .def .proto .s .asm .mat .wav .mp3 .mp4 .ttf .woff"
    " .jsonl .parquet .arrow .tfrecord .mlir .ll .td .ply .obj .stl .vtk .npz .dat .raw .jpg"
)
_NOT_TOOL_SUFFIXES = frozenset(_NOT_TOOL_WORDS.split())
#: cell magics whose body is still Python (``%%time``); any other cell magic's body is not
_PY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
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
    """(relative path, path) of the project's Python files: ``*.py``/``*.pyw``, notebooks,
    Cython and ``#!`` python tools (forty-third re-run F5, forty-fourth F6); None past
    :data:`MOST_FILES` (or :data:`_MOST_HEADS` files' first bytes looked at)."""
    from gpuport.scan.project.files import iter_entries  # the project layer, when needed

    got: list[tuple[str, str]] = []
    heads = 0
    for item in iter_entries(root):
        if not isinstance(item, tuple):
            continue
        rel, entry = item
        name = rel.rsplit("/", 1)[-1]
        if not name.endswith(_PY_SUFFIXES):
            dot = name.rfind(".")
            if dot > 0 and name[dot:].lower() in _NOT_TOOL_SUFFIXES:
                continue
            heads += 1  # extensionless, or a dotted name (`check.v2`): its #! line says
            if heads > _MOST_HEADS:
                return None
            if not _python_tool(entry.path, root):
                continue
        got.append((rel, entry.path))
        if len(got) > MOST_FILES:
            return None
    return got


def _python_tool(path: str, root: Path) -> bool:
    """Is ``path`` a file whose first line is a ``#!`` line naming python?"""
    try:
        if Path(path).is_symlink():
            return False
        with fileio.open_regular(Path(path), root=root) as fh:
            head = fh.read(256)
    except (GpuportError, OSError):
        return False
    if head.startswith(b"#!") and _PY_SHEBANG.match(head.decode("utf-8", "replace")):
        return True
    return _PEP723 in head  # a PEP 723 script run as `uv run tools/check` (no #! line)


def python_source(path: str, data: bytes) -> bytes:
    """The Python of a file read as ``data``: a notebook's code cells, one after the other (an
    IPython ``%magic``/``!shell`` line becomes ``pass``, a cell under another language's cell
    magic is left out); any other file as it is. A notebook that is not JSON is returned as it
    is (it then does not parse: a use not judged)."""
    if not path.endswith(".ipynb"):
        return data
    try:
        cells = json.loads(data).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return data
    out: list[str] = []
    for cell in cells if isinstance(cells, list) else ():
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        text = "".join(p for p in src if isinstance(p, str)) if isinstance(src, list) else src
        if not isinstance(text, str):
            continue
        lines = text.split("\n")
        if lines[0].startswith("%%"):
            if lines[0][2:].split(" ", 1)[0] not in _PY_CELL_MAGICS:
                continue
            lines[0] = ""
        for line in lines:
            body = line.lstrip()
            if body.startswith(("%", "!")):
                line = line[: len(line) - len(body)] + "pass"
            out.append(line)
    # a lone surrogate (`"\\ud800"` is valid JSON) cannot be encoded: it becomes "?", and the
    # notebook is still read (forty-fourth re-run F19: UnicodeEncodeError crashed the scan)
    return "\n".join(out).encode("utf-8", "replace")


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
        data = python_source(path, data)
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
        data = python_source(path, data)
        hits = frozenset(wanted[w] for w in set(data.translate(_NOT_NAME).split()) & wanted.keys())
        if hits:
            for name in hits:
                index.named.setdefault(name, []).append(len(index.files))
            index.files.append((rel, path))
            index.words.append(hits)
    return index
