"""Another backend's code, read in a file itself (issue 24, eighth round): a run-time switch
on the GPU's PCI vendor ID with a case for AMD, a preprocessor chain one branch of which is
written for HIP, and a Dockerfile stage no ROCm stage is built from. Text only."""

from __future__ import annotations

import bisect
import functools
import re

from gpuport import textre
from gpuport.intervals import FirstHolding
from gpuport.scan.project.on_route import _HIP_MARK, has_hip_mark

__all__ = [
    "docker_stage_off",
    "hip_sibling_branch",
    "may_choose_backend",
    "other_backend",
    "vendor_case",
]


def may_choose_backend(text: str) -> bool:
    """Whether :func:`other_backend` can say anything about a line of ``text`` (one pass)."""
    return "0x1002" in text or "0X1002" in text or has_hip_mark(text)


#: PCI vendor IDs of a run-time vendor switch: AMD's, and the others' (NVIDIA, Intel, Apple,
#: Qualcomm, ARM) which a ROCm run never takes.
_AMD_CASE = textre.compile(r"\bcase\s+0[xX]0*1002[uUlL]*\s*:")
_SWITCH = textre.compile(r"\bswitch\s*\(")
_LABEL = textre.compile(r"\bcase\s+[^:;{}]+:(?!:)|\bdefault\s*:(?!:)")


_BRACE_OR_LABEL = textre.compile(r"[{}]|\bcase\s+[^:;{}]+:(?!:)|\bdefault\s*:(?!:)")


@functools.lru_cache(maxsize=8)
def _vendor_lines(text: str) -> FirstHolding[int]:
    """:func:`vendor_case`'s answer for every line of ``text``, from one pass over its
    braces and case labels (per finding, each AMD case searched the file from the top for its
    switch and walked its braces: a 40 KB file of switches past two minutes; sixteenth
    re-run)."""
    lines: list[tuple[int, int, int]] = []
    if "0x1002" not in text and "0X1002" not in text:
        return FirstHolding(lines)
    line_of = textre.line_finder(text)
    opens: list[int] = []
    close: dict[int, int] = {}
    labels_in: dict[int, list[int]] = {}  # an open brace -> the labels directly inside it
    for m in _BRACE_OR_LABEL.finditer(text):
        t = m.group(0)
        if t == "{":
            opens.append(m.start())
        elif t == "}":
            if opens:
                close[opens.pop()] = m.start()
        elif opens and (m.start() == 0 or not (text[m.start() - 1].isalnum()
                                               or text[m.start() - 1] == "_")):  # fmt: skip
            labels_in.setdefault(opens[-1], []).append(m.start())
    braces = sorted([*close, *opens])
    switches = list(_SWITCH.finditer(text))
    switch_ends = [m.end() for m in switches]
    done: set[int] = set()  # switches whose lines are decided
    for amd in _AMD_CASE.finditer(text):
        i = bisect.bisect_right(switch_ends, amd.start()) - 1
        if i < 0 or switches[i].start() in done:
            continue
        sw = switches[i]
        k = bisect.bisect_left(braces, sw.end())
        body = braces[k] if k < len(braces) else -1
        if body < 0 or body > amd.start() or text[body] != "{":
            continue
        end = close.get(body, len(text))
        labels = labels_in.get(body, [])
        if amd.start() not in labels or not labels[0] < amd.end() <= end:
            continue
        done.add(sw.start())
        amd_line = line_of(amd.start())
        # a case that falls through into AMD's shares its code with it
        falls = [False] * len(labels)
        for j in range(len(labels) - 2, -1, -1):
            between = _LABEL.sub("", text[labels[j] : labels[j + 1]]).strip()
            falls[j] = not between and (labels[j + 1] == amd.start() or falls[j + 1])
        last = line_of(end)
        for j, at in enumerate(labels):
            upto = line_of(labels[j + 1]) - 1 if j + 1 < len(labels) else last
            own = at == amd.start() or falls[j]
            lines.append((line_of(at), upto, 0 if own else amd_line))
        lines.append((line_of(labels[0]), last, 0))  # lines past the labels, if any
    return FirstHolding(lines)


def vendor_case(text: str, line: int) -> int | None:
    """When ``line`` is in another vendor's ``case`` (or the ``default``) of a ``switch`` on a
    GPU's PCI vendor ID that has a case for AMD (``case 0x1002:``), the line of AMD's case:
    that code is chosen at run time for other vendors and never runs on an AMD GPU. None
    otherwise."""
    return _vendor_lines(text).at(line) or None  # a substring test per call scanned the file


_COND = textre.compile(r"^[ \t]*\#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)


@functools.lru_cache(maxsize=8)
def _sibling_lines(text: str) -> FirstHolding[int]:
    """:func:`hip_sibling_branch`'s answer for every line, from one pass over the file's
    conditionals; whether a branch is written for HIP is a search among the file's HIP marks,
    found once (per finding, every chain around it was sliced and searched: nested ``#if``,
    40 KB, 48 s; sixteenth re-run)."""
    lines: list[tuple[int, int, int]] = []
    if not has_hip_mark(text):
        return FirstHolding(lines)
    line_of = textre.line_finder(text)
    marks = [m.start() for m in _HIP_MARK.finditer(text)]

    def hip(a: int, b: int) -> bool:
        k = bisect.bisect_left(marks, a)
        return k < len(marks) and marks[k] < b

    stack: list[list[tuple[int, int]]] = []  # per open chain: (offset, line) of each branch
    for m in _COND.finditer(text):
        kind, at = m.group(1), line_of(m.start())
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([(m.start(), at)])
        elif kind in ("elif", "else") and stack:
            stack[-1].append((m.start(), at))
        elif kind == "endif" and stack:
            bounds = [*stack.pop(), (m.start(), at)]
            marked = [hip(bounds[k][0], bounds[k + 1][0]) for k in range(len(bounds) - 1)]
            first = next((k for k, h in enumerate(marked) if h), None)
            if first is None:
                continue
            for k, h in enumerate(marked):
                if not h:  # a branch not written for HIP beside one that is
                    lines.append((bounds[k][1] + 1, bounds[k + 1][1] - 1, bounds[first][1]))
    return FirstHolding(lines)


def hip_sibling_branch(text: str, line: int) -> int | None:
    """When ``line`` is in a branch of a preprocessor chain (``#if``/``#elif``/``#else``)
    another branch of which is the HIP side (its code is written for HIP: ``hip/`` headers,
    ``hip*`` calls, a HIP macro; the backend selector ``#elif (MYLIB_BACKEND == 2)``), and
    its own branch is not: the line of that HIP branch. The chain chooses the backend at
    compile time, so this branch is another backend's (a ROCm build takes the HIP one).
    None otherwise."""
    return _sibling_lines(text).at(line) or None


def other_backend(path: str, text: str, line: int) -> str | None:
    """Why ``line`` of a native file is another backend's code, chosen in the file itself:
    another vendor's case of a run-time switch on the GPU's PCI vendor ID
    (:func:`vendor_case`), or a branch of a preprocessor chain whose HIP branch is another
    (:func:`hip_sibling_branch`); None otherwise."""
    at = vendor_case(text, line)
    if at is not None:
        return f"another GPU vendor's case of a run-time vendor switch ({path}:{at}: AMD's case)"
    at = hip_sibling_branch(text, line)
    if at is not None:
        return f"another backend's branch: the HIP branch of this conditional is {path}:{at}"
    return None


_FROM = textre.compile(
    r"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(\S+)(?:[ \t]+AS[ \t]+(\S+))?[ \t]*$", re.I | re.M
)
_COPY_FROM = textre.compile(r"--from=(\S+)", re.I)
_VAR = textre.compile(r"(\$\{?\w+\}?)")
_ROCM_STAGE = textre.compile(r"rocm|(?<![a-z])hip|amd(?!64)", re.I)


@functools.lru_cache(maxsize=8)
def _docker_stages(text: str) -> tuple[list[int], list[str], set[str], tuple[int, str]] | None:
    """The stage table of a Dockerfile, once per file (per finding, every ``FROM`` was found
    and the file split again: 800 KB past two minutes; sixteenth re-run): the stages' first
    lines and names, the names some ROCm stage is built from, and the ROCm stage named. None
    when the file has no ROCm stage beside another."""
    stages: list[tuple[int, str, str]] = []  # (line, name, parent)
    line_of = textre.line_finder(text)
    for m in _FROM.finditer(text):
        stages.append((line_of(m.start()), (m.group(2) or "").lower(), m.group(1).lower()))
    rocm = [s for s in stages if s[1] and (_ROCM_STAGE.search(s[1]) or s[2].startswith("rocm/"))]
    if len(stages) < 2 or not rocm:
        return None
    rocm.sort(key=lambda s: _ROCM_STAGE.search(s[1]) is None)  # a stage named for ROCm first
    ends = {
        s[0]: (stages[k + 1][0] if k + 1 < len(stages) else 1 << 30) for k, s in enumerate(stages)
    }
    by_name = {s[1]: s for s in stages if s[1]}
    needed: set[str] = set()
    todo = [s[1] for s in rocm]
    lines = text.split("\n")
    patterns_seen: set[str] = set()
    while todo:
        name = todo.pop()
        if "$" in name:  # FROM base-${TARGETARCH}: any stage the pattern can name
            if name in patterns_seen:
                continue
            patterns_seen.add(name)
            pattern = textre.compile(
                "".join(".*" if p.startswith("$") else re.escape(p) for p in _VAR.split(name))
            )
            todo.extend(n for n in by_name if n not in needed and pattern.fullmatch(n))
            continue
        if name in needed or name not in by_name:
            continue
        needed.add(name)
        first, _, parent = by_name[name]
        todo.append(parent)
        body = "\n".join(lines[first - 1 : ends[first] - 1])
        todo.extend(m.group(1).lower() for m in _COPY_FROM.finditer(body))
    return [s[0] for s in stages], [s[1] for s in stages], needed, (rocm[0][0], rocm[0][1])


def docker_stage_off(text: str, line: int) -> str | None:
    """In a multi-stage Dockerfile with a stage named for ROCm (``AS rocm-7-deps``): when
    ``line`` is in a stage that no ROCm stage is built from (its ``FROM`` parents and
    ``COPY --from`` sources, followed), the ROCm stage's name and line; that stage is another
    platform's (ollama's CUDA ``mlx`` stage beside its ``rocm`` ones). None otherwise."""
    got = _docker_stages(text)
    if got is None:
        return None
    firsts, names, needed, (rocm_line, rocm_name) = got
    k = bisect.bisect_right(firsts, line) - 1
    if k < 0 or not names[k] or names[k] in needed:
        return None
    return f"a stage no ROCm stage is built from (the ROCm stage {rocm_name!r} is line {rocm_line})"
