"""Native code for one recent NVIDIA generation beside a variant for an older one.

Libraries that tune kernels per GPU generation keep a folder per generation and pick one at
build or run time from the compute capability: mirage's ``persistent_kernel/tasks/ampere``,
``hopper`` and ``blackwell`` (TMA, ``wgmma``, ``tcgen05``: features only those NVIDIA chips
have; issue 24, twentieth sample). A ROCm build, or a port of one, takes the variant written
for the older generation (plain CUDA, which hipcc compiles) and never the Hopper/Blackwell one.

So where a folder holds a folder named for Hopper or a later generation (``hopper``,
``blackwell``, ``sm90``, ``sm100a``...) and one named for an older generation or no
generation at all that also holds native code (``ampere``, ``sm80``, ``common``, ``generic``),
the files of the recent-generation folder are not built by a ROCm build. Without such a
sibling (a Hopper-only library: its Hopper code is the library) nothing is decided.

The older sibling must be a variant of the same code (thirty-ninth re-run F19: kernels in
``sm90/`` beside a one-line ``common/u.cpp`` were "not built on ROCm"): it holds files with
code (device code, ``__global__``/``__device__``, where the recent folder has some; a
function body at least), at least a quarter as many as the recent folder, and the two share
a file-name word once generation words are taken out (``blackwell/linear_fp8_sm100.cuh`` and
``ampere/linear.cuh``; fortieth re-run F7: a lone ``common/fill.cu`` beside ``sm90/gemm.cu``
is another kernel, not a variant of it).

A source file (``.cu``, ``.cpp``...) is compiled by whatever build names it, a glob over both
folders compiles both: one in the recent folder is judged only where the sibling holds its
counterpart, a source of the same name (``sm90/gemm.cu`` beside ``sm80/gemm.cu``) with code,
which a build picks instead of it. Headers (mirage's tasks are ``.cuh`` files a header
includes per generation) are judged by folder. Text only, from paths and those files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gpuport import textre

__all__ = ["recent_generation_variants"]

_RECENT = textre.compile(
    r"^(?:hopper|blackwell|rubin|sm_?(?:9\d|1\d\d|2\d\d)[af]?|gb\d{3}|h100|h200|b200)$", re.I
)
_OLDER = textre.compile(
    r"^(?:ampere|ada|turing|volta|sm_?[5-8]\d|common|generic|default|portable|simt)$", re.I
)


#: a generation word inside a file name (`linear_sm100`, `gemm-hopper`, `attn_sm90a`)
_GEN_WORD = textre.compile(
    r"[_.-]?(?:hopper|blackwell|rubin|ampere|ada|turing|volta|sm_?\d{2,3}[af]?|gb\d{3}|h100|h200"
    r"|b200)(?:$|(?=[_.-]))",
    re.I,
)
_NAME_WORD = textre.compile(r"[A-Za-z0-9]+")
#: translation units: what a build compiles by name (headers are included)
_SOURCES = (".cu", ".cpp", ".cc", ".cxx", ".c++", ".c", ".hip", ".mm")
_DEVICE = textre.compile(r"\b__(?:global|device)__\b")
#: a function body: `name(...) {` (a definition, not a declaration)
_BODY = textre.compile(r"\w[ \t]*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)[^;{}()\n]*\{")


def _code(text: str) -> tuple[bool, bool]:
    """Whether ``text`` has a function body, and device code."""
    return bool(_BODY.search(text)), bool(_DEVICE.search(text))


def _stem(rel: str) -> str:
    """The file name without its suffix and generation words (``linear_sm100.cuh`` ->
    ``linear``)."""
    name = rel.rsplit("/", 1)[-1]
    base = name.rsplit(".", 1)[0] if "." in name else name
    return _GEN_WORD.sub("", base).lower() or base.lower()


def recent_generation_variants(native: Mapping[str, str]) -> dict[str, str]:
    """Native file -> why a ROCm build does not compile it (see the module docstring).

    The older sibling must be a variant of the recent code, not any folder (39th re-run F19:
    a one-line ``common/u.cpp`` beside ``sm90/`` hid its kernels): it holds files with code of
    their own -- device code where the recent folder has some -- at least a quarter as many
    as the recent folder holds (mirage's ``ampere/`` beside ``blackwell/``)."""
    folders: dict[str, set[str]] = {}  # parent -> child folders that hold native files
    for rel in native:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
    older = {
        parent: sorted(c for c in children if _OLDER.match(c))
        for parent, children in folders.items()
        if any(_RECENT.match(c) for c in children)
    }
    if not older:
        return {}
    # per folder below such a parent: (native files, files with a body, with device code too)
    counts: dict[str, list[int]] = {}
    words: dict[str, set[str]] = {}  # such a folder -> the words of its file names
    # (such a folder, a file's stem) -> (a file with a body, one with device code too)
    stems: dict[tuple[str, str], tuple[bool, bool]] = {}
    for rel, text in native.items():
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            if parent in older and (_OLDER.match(parts[depth]) or _RECENT.match(parts[depth])):
                body, device = _code(text)
                folder = "/".join(parts[: depth + 1])
                c = counts.setdefault(folder, [0, 0, 0])
                c[0] += 1
                c[1] += int(body)
                c[2] += int(body and device)
                stem = _stem(rel)
                words.setdefault(folder, set()).update(_NAME_WORD.findall(stem))
                had = stems.get((folder, stem), (False, False))
                stems[(folder, stem)] = (had[0] or body, had[1] or (body and device))
    out: dict[str, str] = {}
    for rel in native:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            siblings = older.get(parent)
            if not (siblings and _RECENT.match(parts[depth])):
                continue
            recent = "/".join(parts[: depth + 1])
            mine = counts.get(recent, [1, 0, 0])
            need = max(1, -(-mine[0] // 4))
            real = [
                sib
                for sib in siblings
                if (got := counts.get(f"{parent}/{sib}" if parent else sib))
                and got[2 if mine[2] else 1] >= need
                and words.get(recent, set())
                & words.get(f"{parent}/{sib}" if parent else sib, set())
            ]
            if rel.lower().endswith(_SOURCES):  # a source: its own counterpart, picked instead
                device = _code(native[rel])[1]
                real = [
                    sib
                    for sib in real
                    if (twin := stems.get((f"{parent}/{sib}" if parent else sib, _stem(rel))))
                    and twin[1 if device else 0]
                ]
            if real:
                where = f"{parent}/{real[0]}" if parent else real[0]
                out[rel] = (
                    f"{'/'.join(parts[: depth + 1])}/ is a variant for a recent NVIDIA "
                    f"generation beside {where}/: a ROCm build compiles that one"
                )
                break
    return out
