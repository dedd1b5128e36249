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

Nothing a build is shown to compile is set aside (fortyfirst re-run F5, F15): a source a
HIP build names (a CMake file enabling HIP, or a ROCm build file outside its CUDA-only
branches), a source a build names beside its older twin (a build listing both
``sm80/gemm.cu`` and ``sm90/gemm.cu`` compiles both: it picks neither), and every file such
a HIP-built source includes, directly or through other headers (``ops.cu``, compiled as HIP,
including ``sm90/gemm_utils.cuh``). A header included only where ROCm does not compile is
set aside by the preprocessor facts, before this. A recent source only a CUDA build names,
beside a twin no build names, is still the variant (the ROCm build takes the twin), and so
is a recent header a CUDA build's source includes beside its older twin.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from gpuport import textre
from gpuport.scan.project.files import classify
from gpuport.scan.rules.base import FileKind

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


#: a build file that compiles HIP: a CMake file enabling the HIP language (``project(x
#: LANGUAGES CXX HIP)``, ``enable_language(HIP)``, a source's ``LANGUAGE HIP``), finding HIP,
#: or a Makefile calling hipcc
_HIP_CMAKE = textre.compile(
    r"(?i:^[ \t]*(?:enable_language[ \t]*\([ \t]*HIP\b|find_package[ \t]*\([ \t]*hip\b"
    r"|hip_add_(?:library|executable)\b))"
    r"|(?i:^[ \t]*project)[ \t]*\([^)]*\bHIP\b|\bLANGUAGES?[ \t]+(?:[A-Z]+[ \t]+)*HIP\b",
    re.M,
)
_HIPCC = textre.compile(r"\bhipcc\b")


def _hip_build(rel: str, text: str) -> bool:
    kind = classify(rel)
    if kind is FileKind.CMAKE:
        return _HIP_CMAKE.search(text) is not None
    return kind is FileKind.MAKEFILE and _HIPCC.search(text) is not None


def named_sources(
    sources: Mapping[str, tuple[str, bool]],
    not_built: Collection[str],
    rocm_named: Collection[str],
    build_files: Mapping[str, str],
) -> tuple[set[str], set[str]]:
    """(the sources a build names, set aside by nothing yet; those of them a HIP build
    compiles: named by a ROCm build file outside its CUDA-only branches, by a CMake file
    that enables HIP, or by a Makefile calling hipcc). ``sources``: source ->
    ("build file:line", by a setup.py)."""
    named = {rel for rel in sources if rel not in not_built}
    hip: set[str] = {rel for rel in rocm_named if rel not in not_built}
    own: dict[str, bool] = {}
    for rel in named:
        build = sources[rel][0].rsplit(":", 1)[0]
        if build not in own:
            own[build] = _hip_build(build, build_files.get(build, ""))
        if own[build]:
            hip.add(rel)
    return named, hip


def compiled_closure(compiled: Collection[str], resolved: Mapping[str, frozenset[str]]) -> set[str]:
    """``compiled`` and every project file they include, directly or not (each file is
    followed once: linear in the includes)."""
    seen = set(compiled)
    todo = list(seen)
    while todo:
        for header in resolved.get(todo.pop(), ()):
            if header not in seen:
                seen.add(header)
                todo.append(header)
    return seen


def recent_generation_variants(
    native: Mapping[str, str],
    named: tuple[Collection[str], Collection[str]] = ((), ()),
    resolved: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, str]:
    """Native file -> why a ROCm build does not compile it (see the module docstring);
    ``named``: the sources a build names and those a HIP build compiles
    (:func:`named_sources`), ``resolved``: the project files each native file's includes
    denote. What a build is shown to compile is never a variant set aside.

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
    built, hip_built = named
    out: dict[str, str] = {}
    for rel in native:
        if rel in hip_built:
            continue  # the HIP build compiles it
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
                    and not (rel in built and _named_twin(rel, parent, sib, built))
                ]
            if real:
                where = f"{parent}/{real[0]}" if parent else real[0]
                out[rel] = (
                    f"{'/'.join(parts[: depth + 1])}/ is a variant for a recent NVIDIA "
                    f"generation beside {where}/: a ROCm build compiles that one"
                )
                break
    if out and hip_built:
        # what a source the HIP build compiles includes is compiled with it (a CUDA build's
        # includes of both generations are its own choice: a ROCm port takes the older)
        seeds = {r for r in hip_built if r not in out}
        for rel in compiled_closure(seeds, resolved or {}):
            out.pop(rel, None)
    return out


def _named_twin(rel: str, parent: str, sib: str, built: Collection[str]) -> bool:
    """Whether a build also names a same-stem twin of ``rel`` in the older folder ``sib``
    (then it compiles both: it picks neither)."""
    folder = f"{parent}/{sib}" if parent else sib
    stem = _stem(rel)
    return any(
        other.startswith(folder + "/")
        and "/" not in other[len(folder) + 1 :]
        and _stem(other) == stem
        for other in built
    )
