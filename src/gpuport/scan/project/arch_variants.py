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
``sm90/`` beside a one-line ``common/u.cpp`` were "not built on ROCm"): a recent-generation
file is judged only when the sibling holds a file of the same name, once generation words are
taken out (``hopper/linear.cuh``, ``blackwell/linear_sm100.cuh`` and ``ampere/linear.cuh``),
that has code: device code (``__global__``/``__device__``) where the recent file has some, a
function body at least. Text only, from paths and those files.
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
_DEVICE = textre.compile(r"\b__(?:global|device)__\b")
#: a function body: `name(...) {` (a definition, not a declaration)
_BODY = textre.compile(r"\w[ \t]*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)[^;{}()\n]*\{")


def _stem(name: str) -> str:
    """The file name without its suffix and generation words (``linear_sm100.cuh`` ->
    ``linear``)."""
    base = name.rsplit(".", 1)[0] if "." in name else name
    return _GEN_WORD.sub("", base).lower() or base.lower()


def _code(text: str) -> tuple[bool, bool]:
    """Whether ``text`` has a function body, and device code."""
    return bool(_BODY.search(text)), bool(_DEVICE.search(text))


def recent_generation_variants(native: Mapping[str, str]) -> dict[str, str]:
    """Native file -> why a ROCm build does not compile it (see the module docstring)."""
    by_stem: dict[tuple[str, str], list[str]] = {}  # (older folder, stem) -> its files
    for rel in native:
        folder, _, name = rel.rpartition("/")
        parts = folder.split("/") if folder else []
        for depth in range(len(parts)):
            if _OLDER.match(parts[depth]):
                by_stem.setdefault(("/".join(parts[: depth + 1]), _stem(name)), []).append(rel)
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
    code: dict[str, tuple[bool, bool]] = {}  # each file read once (not once per variant)

    def variant_of(recent: str, older: str) -> bool:
        """Whether ``older`` is a variant of the code in ``recent``: code of its own, device
        code where the recent file has some."""
        for rel in (recent, older):
            if rel not in code:
                code[rel] = _code(native[rel])
        body, device = code[older]
        return body and (device or not code[recent][1])

    out: dict[str, str] = {}
    for rel in native:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            siblings = older.get(parent)
            if not (siblings and _RECENT.match(parts[depth])):
                continue
            stem = _stem(parts[-1])
            real = [
                sib
                for sib in siblings
                if any(
                    variant_of(rel, other)
                    for other in by_stem.get((f"{parent}/{sib}" if parent else sib, stem), ())[:8]
                )
            ]
            if real:
                where = f"{parent}/{real[0]}" if parent else real[0]
                out[rel] = (
                    f"{'/'.join(parts[: depth + 1])}/ is a variant for a recent NVIDIA "
                    f"generation beside {where}/: a ROCm build compiles that one"
                )
                break
    return out
