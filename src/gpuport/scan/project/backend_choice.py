"""Another backend's code, read in a file itself (issue 24, eighth round): a run-time switch
on the GPU's PCI vendor ID with a case for AMD, a preprocessor chain one branch of which is
written for HIP, and a Dockerfile stage no ROCm stage is built from. Text only."""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.project.on_route import has_hip_mark

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


def vendor_case(text: str, line: int) -> int | None:
    """When ``line`` is in another vendor's ``case`` (or the ``default``) of a ``switch`` on a
    GPU's PCI vendor ID that has a case for AMD (``case 0x1002:``), the line of AMD's case:
    that code is chosen at run time for other vendors and never runs on an AMD GPU. None
    otherwise."""
    if "0x1002" not in text and "0X1002" not in text:
        return None
    line_of = textre.line_finder(text)
    for amd in _AMD_CASE.finditer(text):
        sw = None
        for m in _SWITCH.finditer(text, 0, amd.start()):
            sw = m
        if sw is None:
            continue
        body = text.find("{", sw.end())
        if body < 0 or body > amd.start():
            continue
        depth, end = 0, len(text)
        labels: list[tuple[int, bool]] = []
        for i in range(body, len(text)):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
            elif depth == 1 and c in "cd":
                got = _LABEL.match(text, i)
                if got and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                    labels.append((i, got.start() == amd.start()))
        if not any(is_amd for _, is_amd in labels) or not labels[0][0] < amd.end() <= end:
            continue
        first, last = line_of(sw.start()), line_of(end)
        if not first <= line <= last:
            continue
        mine = [k for k, (at, _) in enumerate(labels) if line_of(at) <= line]
        if not mine:
            continue
        k = mine[-1]
        # a case that falls through into AMD's shares its code with it
        if labels[k][1] or _falls_to_amd(text, labels, k):
            return None
        return line_of(amd.start())
    return None


def _falls_to_amd(text: str, labels: list[tuple[int, bool]], k: int) -> bool:
    """Whether the case labels from ``k`` reach AMD's label with no code between them."""
    for j in range(k, len(labels) - 1):
        between = text[labels[j][0] : labels[j + 1][0]]
        between = _LABEL.sub("", between).strip()
        if between:
            return False
        if labels[j + 1][1]:
            return True
    return False


_COND = textre.compile(r"^[ \t]*\#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)


def hip_sibling_branch(text: str, line: int) -> int | None:
    """When ``line`` is in a branch of a preprocessor chain (``#if``/``#elif``/``#else``)
    another branch of which is the HIP side (its code is written for HIP: ``hip/`` headers,
    ``hip*`` calls, a HIP macro; the backend selector ``#elif (MYLIB_BACKEND == 2)``), and
    its own branch is not: the line of that HIP branch. The chain chooses the backend at
    compile time, so this branch is another backend's (a ROCm build takes the HIP one).
    None otherwise."""
    if not has_hip_mark(text):
        return None
    line_of = textre.line_finder(text)
    # per open chain: the (start offset, start line) of each branch so far
    stack: list[list[tuple[int, int]]] = []
    found: int | None = None
    for m in _COND.finditer(text):
        kind, at = m.group(1), line_of(m.start())
        if kind in ("if", "ifdef", "ifndef"):
            stack.append([(m.start(), at)])
        elif kind in ("elif", "else") and stack:
            stack[-1].append((m.start(), at))
        elif kind == "endif" and stack:
            branches = stack.pop()
            first, last = branches[0][1], at
            if not first < line < last:
                continue
            bounds = [*branches, (m.start(), at)]
            inside = [k for k in range(len(branches)) if bounds[k][1] < line < bounds[k + 1][1]]
            if not inside:
                continue
            mine = inside[0]
            bodies = [text[bounds[k][0] : bounds[k + 1][0]] for k in range(len(branches))]
            if has_hip_mark(bodies[mine]):
                continue
            hip = next((k for k, b in enumerate(bodies) if k != mine and has_hip_mark(b)), None)
            if hip is not None:
                found = bounds[hip][1]
                break
    return found


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


def docker_stage_off(text: str, line: int) -> str | None:
    """In a multi-stage Dockerfile with a stage named for ROCm (``AS rocm-7-deps``): when
    ``line`` is in a stage that no ROCm stage is built from (its ``FROM`` parents and
    ``COPY --from`` sources, followed), the ROCm stage's name and line; that stage is another
    platform's (ollama's CUDA ``mlx`` stage beside its ``rocm`` ones). None otherwise."""
    stages: list[tuple[int, str, str]] = []  # (line, name, parent)
    line_of = textre.line_finder(text)
    for m in _FROM.finditer(text):
        stages.append((line_of(m.start()), (m.group(2) or "").lower(), m.group(1).lower()))
    rocm = [s for s in stages if s[1] and (_ROCM_STAGE.search(s[1]) or s[2].startswith("rocm/"))]
    if len(stages) < 2 or not rocm:
        return None
    rocm.sort(key=lambda s: _ROCM_STAGE.search(s[1]) is None)  # a stage named for ROCm first
    mine = [s for s in stages if s[0] <= line]
    if not mine or not mine[-1][1]:
        return None
    here = mine[-1]
    ends = {
        s[0]: (stages[k + 1][0] if k + 1 < len(stages) else 1 << 30) for k, s in enumerate(stages)
    }
    by_name = {s[1]: s for s in stages if s[1]}
    needed: set[str] = set()
    todo = [s[1] for s in rocm]
    lines = text.split("\n")
    while todo:
        name = todo.pop()
        if "$" in name:  # FROM base-${TARGETARCH}: any stage the pattern can name
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
    if here[1] in needed:
        return None
    return (
        f"a stage no ROCm stage is built from (the ROCm stage {rocm[0][1]!r} is line {rocm[0][0]})"
    )
