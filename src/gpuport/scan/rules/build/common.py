"""What the build-file checkers share: token patterns, fix texts and ROCm guard ranges.

CMake, Makefiles and setup.py name the same nvcc flags, NVIDIA architectures,
half-precision macros and CUDA libraries; the patterns here find them in any of
the three, and :func:`flag_fix` / :func:`lib_fix` say what to use on ROCm.

:data:`ROCM_ARCH` takes a bare gfx word as an AMD target only where the build could use it,
not in what it prints (``message()``, ``$(warning ...)``, ``echo``) or in a quoted sentence
(forty-second re-run F18: ``message(STATUS "AMD gfx942 is not supported")`` hid GP403),
nor in a test whose branch fails the build (``if(ARCH STREQUAL "gfx906") message(FATAL_ERROR)``,
``ifeq`` + ``$(error)``), a denylist (``set(AMD_UNSUPPORTED gfx906)``), a ``list(REMOVE_ITEM)``
or a ``$(filter-out)`` (forty-third re-run F10: each of these hid GP403). Forty-fourth re-run
F10: a branch fails anywhere in it (not only first), ``string(REPLACE "gfx906" "")`` and
``$(subst)`` replace, a list used only to remove or refuse (``set(OLD gfx803)`` +
``list(REMOVE_ITEM GPU_TARGETS ${OLD})``) is no target list, and a ROCm setting only removed
from is no setting given. Forty-fifth re-run F11: a ROCm setting counts only where the build
uses its value, not where it is only tested in a branch that fails or just prints
(``if(GPU_TARGETS) message(FATAL_ERROR ...)``), cleared (``set(GPU_TARGETS "")``) or unset.
Forty-sixth re-run F8: a branch that only prints, fails, clears or unsets is idle (a refusal
that ends in ``unset(GPU_TARGETS CACHE)``), and a read that only measures (``list(LENGTH|FIND)``,
``string(LENGTH|FIND)``) uses no value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from re import Match

from gpuport import textre
from gpuport.intervals import Intervals, in_any
from gpuport.models import Severity
from gpuport.scan.cmake_lex import Command, commands

NVCC_ONLY = textre.compile(
    r"(?<![\w-])((?:--?use_fast_math|--expt-relaxed-constexpr|--expt-extended-lambda"
    r"|--extended-lambda|-gencode|--generate-code|-Xptxas|--ptxas-options|-lineinfo"
    r"|--generate-line-info|-rdc|--relocatable-device-code|--default-stream|-Xcompiler"
    r"|--compiler-options|--?maxrregcount|--gpu-architecture)(?![\w-])"
    r"|-arch(?=[= ]+(?:sm|compute)_))"
)
_FLAG_FIX = {
    "use_fast_math": "use -ffast-math (clang) instead",
    "expt-relaxed-constexpr": "drop it: clang allows constexpr host functions in device code",
    "expt-extended-lambda": "drop it: clang accepts __device__ lambdas without a flag",
    "extended-lambda": "drop it: clang accepts __device__ lambdas without a flag",
    "Xptxas": "drop it: there is no ptxas on ROCm (limit registers with __launch_bounds__)",
    "ptxas-options": "drop it: there is no ptxas on ROCm (limit registers with __launch_bounds__)",
    "maxrregcount": "drop it: limit registers with __launch_bounds__",
    "lineinfo": "use -gline-tables-only (or -g)",
    "generate-line-info": "use -gline-tables-only (or -g)",
    "rdc": "use -fgpu-rdc",
    "relocatable-device-code": "use -fgpu-rdc",
    "default-stream": "use -fgpu-default-stream=per-thread",
    "Xcompiler": "pass host flags directly: hipcc/clang compiles host and device code",
    "compiler-options": "pass host flags directly: hipcc/clang compiles host and device code",
}
_ARCH_FLAGS = {"gencode", "generate-code", "gpu-architecture", "arch"}
# Variables and properties that hold a CUDA architecture list. A name alone is not a finding:
# it must be given a value that lists architectures (see lists_arch), not OFF, native, an empty
# value or another variable, and a test (if(DEFINED ...)) or unset() is not one.
_ARCH_NAMES = r"CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES|TORCH_CUDA_ARCH_LIST|CUDA_ARCH_LIST"
ARCH_VAR = textre.compile(rf"(?:{_ARCH_NAMES})")
# NAME=value inside one word: -DCMAKE_CUDA_ARCHITECTURES=80, TORCH_CUDA_ARCH_LIST="8.0 9.0".
ARCH_ASSIGN = textre.compile(
    rf"(?<![\w{{(])(?:-D)?({_ARCH_NAMES})(?::\w+)?=(\"[^\"]*\"|'[^']*'|[^\s\"')]*)"
)
# sm_80 / compute_90a name an NVIDIA architecture wherever they are written.
SM_TOKEN = textre.compile(r"(?<![\w])(?:sm|compute)_\d{2,3}[a-z]?\b")
_ARCH_WORD = textre.compile(
    r"(?i)\d{2,3}[a-z]?(?:-real|-virtual)?|\d{1,2}\.\d[a-z]?(?:\+ptx)?"
    r"|(?:sm|compute)_\d{2,3}[a-z]?|all|all-major"
)
# an AMD target named: a ROCm architecture setting, or a bare gfx target in the file's code
# (SeisSol's DEVICE_ARCH_OPTIONS menu lists sm_90 and gfx942 side by side; twenty-fourth sample)
_ROCM_SETTING = textre.compile(
    r"PYTORCH_ROCM_ARCH|(?<![\w])GPU_TARGETS|AMDGPU_TARGET|--offload-arch|HIP_ARCHITECTURES"
)
_GFX = textre.compile(r"(?<![\w])gfx(?:9\d[\da-f]|1\d{3})(?![\w])")
#: text a build prints: Make's $(info/warning/error ...), an echo or printf (to the line's end)
_PRINTED = textre.compile(
    r"\$[({](?:info|warning|error)[ \t][^\n]*|(?<![\w-])(?:echo|printf)(?![\w-])[^\n;&|]*"
)
#: words of running text (a sentence, not a list of values)
_SENTENCE_WORDS = frozenset(
    {"a", "an", "the", "to", "of", "for", "in", "on", "is", "are", "be", "by", "with", "this",
     "that", "which", "will", "and", "or", "not", "no", "only", "yet", "supported", "e.g"}
)  # fmt: skip
_LETTERS = textre.compile(r"[(\[]?[A-Za-z][A-Za-z]+(?:\.[a-z])?[.,:;!)\]]?")


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The quoted strings of the line ``text[start:end]`` that are running text (offsets in
    ``text``): at least four words of letters, one of them a word of sentences (``is``,
    ``not``, ``the``)."""
    out: list[tuple[int, int]] = []
    i = text.find('"', start, end)
    while i >= 0:
        j = text.find('"', i + 1, end)
        if j < 0:
            break
        letters = [w for w in text[i + 1 : j].split() if _LETTERS.fullmatch(w)]
        if len(letters) >= 4 and any(
            w.strip("()[].,:;!").lower() in _SENTENCE_WORDS for w in letters
        ):
            out.append((i, j))
        i = text.find('"', j + 1, end)
    return out


#: a variable whose name says its values are refused (a denylist, not targets to build)
_REFUSING = frozenset(
    {"UNSUPPORTED", "UNSUPP", "NOSUPPORT", "DENY", "DENIED", "DENYLIST", "BLACKLIST",
     "BLACKLISTED", "BLOCKLIST", "BLOCKED", "EXCLUDE", "EXCLUDED", "EXCLUDES", "BANNED",
     "DISALLOW", "DISALLOWED", "BROKEN", "SKIP", "SKIPPED", "IGNORE", "IGNORED", "REJECT",
     "REJECTED", "DEPRECATED", "INVALID", "BAD"}
)  # fmt: skip
_FAILS = frozenset({"FATAL_ERROR", "SEND_ERROR"})
#: a Make assignment's variable (``NAME := value``, ``override NAME += value``), to the line end
_MAKE_SET = textre.compile(
    r"(?m)^[ \t]*(?:(?:export|override)[ \t]+)*([A-Za-z_][\w.-]*)[ \t]*[:+?!]*=[^\n]*"
)
_FILTER_OUT = textre.compile(r"\$[({]filter-out[ \t][^,)}]*")


def _refusing(name: str) -> bool:
    """Whether a variable's name says it lists what the build refuses (``AMD_UNSUPPORTED``,
    ``GPU_DENYLIST``, ``NOT_SUPPORTED_ARCHS``)."""
    parts = textre.split(r"[^A-Z0-9]+", name.upper())
    return any(w in _REFUSING for w in parts) or "NOT_SUPPORTED" in name.upper()


def _fails(c: Command) -> bool:
    """``message(FATAL_ERROR|SEND_ERROR ...)`` or ``return()``."""
    if c.name == "return":
        return True
    words = c.args.split(None, 1) if c.name == "message" else []
    return bool(words) and words[0].strip('"').upper() in _FAILS


def _failing_branches(cmds: list[Command]) -> list[tuple[int, int]]:
    """The spans of the CMake conditions (``if``/``elseif``/``while``) whose own branch fails
    the build anywhere in it, not only as its first command (forty-fourth re-run F10: a
    ``message(WARNING)`` first). One pass with a stack; a failure in a nested branch fails
    only that branch."""
    out: list[tuple[int, int]] = []
    stack: list[list[int]] = []  # per open block: [condition start, end (-1: else), fails]
    for c in cmds:
        if c.name in ("if", "while"):
            stack.append([c.start, c.end, 0])
        elif c.name in ("elseif", "else", "endif", "endwhile") and stack:
            top = stack[-1]
            if top[2] and top[1] >= 0:
                out.append((top[0], top[1]))
            if c.name in ("endif", "endwhile"):
                stack.pop()
            else:
                stack[-1] = [c.start, c.end if c.name == "elseif" else -1, 0]
        elif stack and _fails(c):
            stack[-1][2] = 1
    return out


_BLOCKS = {"if": "endif", "while": "endwhile", "foreach": "endforeach"}
_IDLE = frozenset({"message", "return", "unset"})
#: ``list()``/``string()`` sub-commands that only measure or search a value (a count, an
#: index, a comparison): the value read there flows into no target (forty-sixth re-run F8)
_MEASURES = {"list": frozenset({"LENGTH", "FIND"}), "string": frozenset({"LENGTH", "FIND"})}


def _measures(c: Command) -> bool:
    """``list(LENGTH|FIND ...)`` or ``string(LENGTH|FIND ...)``: a read that gives a number."""
    kinds = _MEASURES.get(c.name)
    if kinds is None:
        return False
    words = c.args.split(None, 1)
    return bool(words) and words[0].upper() in kinds


def _clears(c: Command) -> bool:
    """``unset(NAME)`` or ``set(NAME)``/``set(NAME "")`` (maybe ``CACHE``): nothing given."""
    if c.name == "unset":
        return True
    if c.name != "set":
        return False
    values = [w.text for w in c.words()[1:]]
    if "CACHE" in values:
        values = values[: values.index("CACHE")]
    return all(v.strip("\"'") == "" for v in values)


def _idle(c: Command) -> bool:
    """A command that uses no value to set targets or flags: it prints, fails, clears or
    unsets, or only measures (forty-sixth re-run F8: ``unset(GPU_TARGETS CACHE)`` after a
    warning, ``list(LENGTH GPU_TARGETS n)``)."""
    return c.name in _IDLE or _clears(c) or _measures(c)


def _idle_conditions(cmds: list[Command]) -> list[tuple[int, int]]:
    """The spans of the conditions and loop heads (``if``/``elseif``/``while``/``foreach``)
    whose own branch does nothing but print, fail or hold such branches itself (forty-fifth
    re-run F11: ``if(GPU_TARGETS) message(FATAL_ERROR ...)``, ``if(DEFINED GPU_TARGETS)
    message(WARNING "ignored")``, ``foreach(a IN LISTS GPU_TARGETS)`` around a refusal): a
    setting tested there is refused or ignored, not used. One pass with a stack."""
    out: list[tuple[int, int]] = []
    # per open block: [branch head start, its end (-1: else), branch works, block works]
    stack: list[list[int]] = []
    for c in cmds:
        if c.name in _BLOCKS:
            stack.append([c.start, c.end, 0, 0])
        elif c.name in ("elseif", "else", "endif", "endwhile", "endforeach") and stack:
            top = stack[-1]
            if not top[2] and top[1] >= 0:
                out.append((top[0], top[1]))
            top[3] |= top[2]
            if c.name in ("elseif", "else"):
                top[:3] = [c.start, c.end if c.name == "elseif" else -1, 0]
                continue
            stack.pop()
            if stack and top[3]:
                stack[-1][2] = 1  # a nested block that does work makes its branch work
        elif stack and not _idle(c):
            stack[-1][2] = 1
    return out


def _emptied(cmds: list[Command]) -> list[tuple[int, int]]:
    """The name of ``unset(NAME)`` and of ``set(NAME)``/``set(NAME "")`` (maybe ``CACHE``):
    a setting cleared, not given (forty-fifth re-run F11)."""
    out: list[tuple[int, int]] = []
    for c in cmds:
        words = c.words() if c.name in ("set", "unset") else []
        if words and _clears(c):
            out.append((words[0].start, words[0].start + len(words[0].text)))
    return out


#: a Make assignment of nothing (``GPU_TARGETS :=``): a setting cleared
_MAKE_EMPTY = textre.compile(
    r"(?m)^[ \t]*(?:(?:export|override)[ \t]+)*[A-Za-z_][\w.-]*[ \t]*[:?!]?=[ \t]*$"
)


#: a Make conditional's lines: open (``ifeq``...), ``else`` (maybe ``else ifeq``), ``endif``,
#: and ``$(error ...)``
_MAKE_COND = textre.compile(
    r"(?m)^[ \t]*(?:(ifeq|ifneq|ifdef|ifndef)\b|(else)\b|(endif)\b|(\$[({]error[ \t]))[^\n]*"
)


def _make_failing(text: str) -> list[tuple[int, int]]:
    """The lines of Make conditionals whose own branch fails with ``$(error ...)`` (one pass,
    a stack, as :func:`_failing_branches`)."""
    out: list[tuple[int, int]] = []
    stack: list[list[int]] = []
    for m in _MAKE_COND.finditer(text):
        if m.group(1):
            stack.append([m.start(), m.end(), 0])
        elif (m.group(2) or m.group(3)) and stack:
            top = stack[-1]
            if top[2] and top[1] >= 0:
                out.append((top[0], top[1]))
            if m.group(3):
                stack.pop()
            else:
                conditional = textre.search(r"\b(?:ifeq|ifneq|ifdef|ifndef)\b", m.group(0))
                stack[-1] = [m.start(), m.end() if conditional else -1, 0]
        elif m.group(4) and stack:
            stack[-1][2] = 1
    return out


#: the pattern argument of Make's ``$(subst gfx906,,...)`` / ``$(patsubst ...)``: replaced
_SUBST = textre.compile(r"\$[({](?:subst|patsubst)[ \t][^,)}]*")
#: a variable use: ``${X}``, ``$(X)``, or a bare name (a condition's ``X IN_LIST OLD``)
_NAME = textre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _replaced(c: Command) -> list[tuple[int, int]]:
    """The spans of ``string(REPLACE <match> <replace> <out> ...)`` (or ``REGEX REPLACE``)
    that name no kept target (forty-fourth re-run F10: ``string(REPLACE "gfx906" "" ...)``):
    all but its replacement, which is what the build keeps."""
    words = c.words()
    if len(words) < 3 or words[0].text.upper() not in ("REPLACE", "REGEX"):
        return []
    at = 2
    if words[0].text.upper() == "REGEX":
        if words[1].text.upper() not in ("REPLACE", "REPLACE_ALL") or len(words) < 4:
            return []
        at = 3
    keep = words[at].start
    return [(c.start, keep), (keep + len(words[at].text) + 2, c.end)]


def _not_targets(text: str) -> tuple[Intervals, Intervals, Intervals]:
    """The spans of ``text`` whose gfx words are no AMD target the build uses: what it prints,
    a condition whose branch fails the build, a denylist, an item removed, filtered out or
    replaced, and a list whose every use is such a removal or refusal (forty-fourth re-run F10:
    ``set(AMD_OLD_ARCHS gfx803)`` + ``list(REMOVE_ITEM GPU_TARGETS ${AMD_OLD_ARCHS})``)."""
    spans = [p.span() for p in _PRINTED.finditer(text)]
    dropped = [p.span() for p in _FILTER_OUT.finditer(text)]
    dropped += [p.span() for p in _SUBST.finditer(text)]
    lists: dict[str, list[tuple[int, int]]] = {}  # name -> its assignments (candidates)
    for m in _MAKE_SET.finditer(text):
        (spans if _refusing(m.group(1)) else lists.setdefault(m.group(1), [])).append(m.span())
    cmds = list(commands(text))
    for c in cmds:
        if c.name == "message":
            spans.append((c.start, c.end))
        elif c.name == "string":
            dropped += _replaced(c)
        elif c.name in ("set", "list"):
            words = c.args.split(None, 2)
            if c.name == "list" and words and words[0].upper() in ("REMOVE_ITEM", "FILTER"):
                if words[0].upper() == "REMOVE_ITEM" or "EXCLUDE" in c.args.upper():
                    dropped.append((c.start, c.end))
                continue
            name = words[0] if c.name == "set" else (words[1] if len(words) > 1 else "")
            if words and _refusing(name):
                spans.append((c.start, c.end))
            elif c.name == "set" and words:
                lists.setdefault(name, []).append((c.start, c.end))
    failing = _failing_branches(cmds) + _make_failing(text)
    removed = dropped + failing
    # a ROCm setting is no target given where it is only removed, refused, printed, tested
    # in a branch that does nothing else, or cleared (forty-fifth re-run F11)
    unused = removed + [(c.start, c.end) for c in cmds if c.name == "message"]
    measured = [(c.start, c.end) for c in cmds if _measures(c)]
    unused += _idle_conditions(cmds) + _emptied(cmds) + measured
    spans += measured  # a gfx word searched for (``list(FIND ...)``) is tested, not given
    unused += [m.span() for m in _MAKE_EMPTY.finditer(text)]
    spans += removed
    lists = {n: own for n, own in lists.items() if any(_GFX.search(text[a:b]) for a, b in own)}
    if lists:
        spans += _only_refused(text, lists, Intervals(removed), Intervals(list(spans)))
    return Intervals(spans), Intervals(dropped), Intervals(unused)


def _only_refused(
    text: str,
    lists: dict[str, list[tuple[int, int]]],
    removed: Intervals,
    said: Intervals,
) -> list[tuple[int, int]]:
    """The assignments of the variables whose every use (outside their own assignments) is
    in what is removed, refused or printed, with at least one removal or refusal: a list of
    what the build drops, not of targets. One pass over the names of ``text``; two rounds, so
    a list built of such a list counts too."""
    uses: dict[str, list[int]] = {}
    for m in _NAME.finditer(text):
        if m.group(0) in lists:
            uses.setdefault(m.group(0), []).append(m.start())
    out: list[tuple[int, int]] = []
    mine = {name: Intervals(own) for name, own in lists.items()}
    for _round in range(2):
        done = Intervals(out)
        for name, own in list(lists.items()):
            at = [u for u in uses.get(name, ()) if u not in mine[name]]
            if (
                at
                and any(u in removed or u in done for u in at)
                and all(u in said or u in done for u in at)
            ):
                out += own
                del lists[name]
    return out


class _RocmArch:
    """``ROCM_ARCH.search(text)``: the first AMD target ``text`` names (a ROCm architecture
    setting, or a bare gfx word the build could use), or None. A gfx word in what the build
    prints (CMake ``message()``, Make's ``$(info ...)``, ``echo``) or in a quoted sentence is
    not one (forty-second re-run F18), nor one in a rejection test or a denylist (forty-third
    re-run F10), nor a setting or gfx word only removed or replaced (``list(REMOVE_ITEM
    GPU_TARGETS ...)``, ``string(REPLACE "gfx906" "" ...)``), nor a list used only to remove
    or refuse targets (forty-fourth re-run F10)."""

    def search(self, text: str) -> Match[str] | None:
        said: Intervals | None = None
        for found in _ROCM_SETTING.finditer(text):
            if said is None:
                said, _dropped, unused = _not_targets(text)
            if found.start() not in unused:
                return found
        line_end = -1
        sentences = Intervals([])
        for m in _GFX.finditer(text):
            at = m.start()
            if said is None:
                said, _dropped, _unused = _not_targets(text)
            if at > line_end:  # each line's quoted sentences, once
                line_start = text.rfind("\n", 0, at) + 1
                line_end = text.find("\n", at)
                line_end = len(text) if line_end < 0 else line_end
                sentences = Intervals(_sentences(text, line_start, line_end))
            if at not in said and at not in sentences:
                return m
        return None


ROCM_ARCH = _RocmArch()
HALF_MACRO = textre.compile(r"(?<![\w-])-[UD]\s*__CUDA_NO_\w+__")
CUDA_LIB_NAMES = {
    "cudart": "hip::host (libamdhip64)",
    "cudart_static": "hip::host (libamdhip64)",
    "cuda": "hip::host (libamdhip64; driver API)",
    "cublas": "roc::hipblas",
    "cublasLt": "roc::hipblaslt",
    "cudnn": "MIOpen (the API differs)",
    "curand": "hip::hiprand",
    "cufft": "hip::hipfft",
    "cusparse": "roc::hipsparse",
    "cusolver": "roc::hipsolver",
    "nccl": "RCCL (rccl)",
    "nvrtc": "hipRTC (hiprtc)",
    "nvToolsExt": "rocTX (roctx64)",
    "nvidia-ml": "amd_smi",
}
LIB_ALT = "|".join(sorted(CUDA_LIB_NAMES, key=len, reverse=True))
# ${CUDA_LIBRARIES}, ${CUDA_cublas_LIBRARY}; not ${CUDA_LINK_LIBRARIES_KEYWORD} (PRIVATE/PUBLIC).
LINK = textre.compile(
    rf"(?<![\w-])-l({LIB_ALT})(?![\w-])|\bCUDA::(\w+)|\$\{{(CUDA_\w*LIBRAR(?:Y|IES))\}}"
)
NVCC_WORD = textre.compile(r"(?<![\w-])nvcc(?![\w-])")
# ROCm/HIP words in a condition (USE_ROCM, HIP_FOUND, GGML_HIP, torch.version.hip, "HIP");
# a bare "AMD" is left out on purpose: it also names AMD CPU options, and a false guard would
# hide a real blocker.
ROCM_COND = textre.compile(r"(?i)(?<![a-z0-9])(?:rocm|hip|amdgpu)")


def lists_arch(value: str) -> bool:
    """Whether a value names CUDA architectures: ``80;90``, ``8.0 9.0+PTX``, ``sm_80``, ``all``.

    ``OFF``, ``native``, an empty value or ``${OTHER_VARIABLE}`` do not.
    """
    words = textre.split(r"[\s;,\"'=]+", value)
    return any(_ARCH_WORD.fullmatch(w) for w in words if w)


# Single-dash spellings that Debian's hipcc (HIP 5.2) and clang 15 accept when compiling for
# gfx90a (measured 2026-11-22): they build, but do nothing useful for AMD code (clang reads
# -lineinfo as "link libineinfo" and -use_fast_math as "-u se_fast_math"). Lower severity.
_ACCEPTED_SPELLINGS = ("-use_fast_math", "-lineinfo", "-Xptxas")


def flag_severity(flag: str) -> Severity | None:
    """MINOR for flags hipcc accepts (but ignores or misreads); None keeps the rule's MAJOR."""
    return Severity.MINOR if flag in _ACCEPTED_SPELLINGS else None


def flag_fix(flag: str, target: str) -> str:
    key = flag.lstrip("-")
    hint = f"use --offload-arch={target}" if key in _ARCH_FLAGS else _FLAG_FIX.get(key, "drop it")
    if flag in _ACCEPTED_SPELLINGS:
        return (
            f"{flag} is an nvcc flag that hipcc/clang accept but do not apply to AMD code "
            f"(clang may read it as another option): for ROCm builds {hint}."
        )
    return f"{flag} is nvcc-only (hipcc/clang reject it): for ROCm builds {hint}."


def _lib_hip(name: str) -> str | None:
    base = name.removeprefix("-l").removeprefix("CUDA::").removeprefix("lib")
    return CUDA_LIB_NAMES.get(base) or CUDA_LIB_NAMES.get(base.removesuffix("_static"))


def lib_fix(name: str) -> str:
    hip = _lib_hip(name)
    if hip:
        return f"On ROCm link {hip} instead of {name}."
    return f"On ROCm link the ROCm counterparts of {name} (hip::host, roc::hipblas, ...)."


def libs_fix(names: list[str]) -> str:
    """:func:`lib_fix` for several libraries linked on one line."""
    if len(names) == 1:
        return lib_fix(names[0])
    known = [f"{hip} instead of {name}" for name in names if (hip := _lib_hip(name))]
    rest = [name for name in names if not _lib_hip(name)]
    parts = [f"On ROCm link {'; '.join(known)}."] if known else []
    if rest:
        parts.append(f"Replace {', '.join(rest)} with their ROCm counterparts.")
    return " ".join(parts)


@dataclass
class Guards:
    """Line ranges inside conditionals that branch on ROCm/HIP."""

    ranges: list[tuple[int, int]] = field(default_factory=list)

    def __contains__(self, line: int) -> bool:
        return in_any(self.ranges, line, closed=True)  # a search, not a scan of every range
