"""Which sources a CMake or Make build compiles for ROCm, read statically (never run).

CMake: ``if()``/``elseif()``/``else()``/``endif()`` are followed with each branch's
value on a ROCm build: ``if(BUILD_HIP)``, ``if(GGML_HIP)``, ``if(USE_ROCM)`` are
true; ``if(NOT HIP)``, ``if(BUILD_CUDA)``, ``if(USE_CUDA)``,
``if(${COMPUTE_BACKEND} STREQUAL "cuda")`` are false; the ``else()`` after a true
branch is false. ``set(VAR files...)`` and ``list(APPEND VAR ...)`` carry file
lists with the branch they were written in; every other command
(``add_library``, ``target_sources``, ``add_subdirectory`` ...) is a use.

Make: ``ifeq``/``ifneq``/``ifdef``/``ifndef``/``else``/``endif`` the same way, for
variables named like the CMake ones.

Like :mod:`build_setup_ast`, a build file counts only when it tests for
ROCm/HIP at least once.
"""

from __future__ import annotations

import re

from gpuport import textre
from gpuport.scan.cxx_cond import other_backend_names
from gpuport.scan.project.build_setup_ast import Use

__all__ = ["close_paren", "cmake_uses", "make_uses"]

_HIP_VAR = textre.compile(r"^(?:\w+_)?(?:HIP|ROCM|HIPCC|AMDGPU)(?:LIBS?)?(?:_\w+)?$", re.I)
#: A switch of the CUDA backend (``USE_CUDA``, ``MYLIB_BUILD_CUDA``, ``Kokkos_ENABLE_CUDA``,
#: ``CUDA_FOUND``): off in a ROCm build, which has its own HIP switch (issue 24: build options).
_CUDA_VAR = textre.compile(
    r"^(?:\w+_)?CUDA(?:LIBS?)?(?:_ONLY|_FOUND|_ENABLED|_BACKEND|_SUPPORT)?$", re.I
)
_NOT_ROCM_WORD = textre.compile(
    r"^(?:cuda|cublas|cu\d{2,3}|nvcc|nvidia|tensorrt|xpu|mps|cpu|npu|sycl|metal|vulkan)$", re.I
)
_ROCM_WORD = textre.compile(r"^(?:hip|hipblas|rocblas|rocm\d*|amd)$", re.I)
# shared with on_route.open_branch (the same values of a test on a ROCm build)
HIP_VAR, CUDA_VAR, NOT_ROCM_WORD, ROCM_WORD = _HIP_VAR, _CUDA_VAR, _NOT_ROCM_WORD, _ROCM_WORD
_CMD = textre.compile(r"^[ \t]*(\w+)[ \t]*\(", re.M)
_TOKEN = textre.compile(r'"[^"]*"|[^\s"]+')
_PAREN = textre.compile(r"[()]")
_VARREF = textre.compile(r"\$\{(\w+)\}")
_ROOT_VARS = (
    "CMAKE_CURRENT_SOURCE_DIR",
    "PROJECT_SOURCE_DIR",
    "CMAKE_SOURCE_DIR",
    "CMAKE_CURRENT_LIST_DIR",
)
_SOURCEISH = textre.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hh|inl)$|\*")
_SKIP_CMDS = frozenset(
    {"message", "option", "find_package", "include", "set_property", "install",
     "configure_file", "file", "string", "execute_process"}
)  # fmt: skip


def close_paren(text: str, start: int, *, blank_line_ends: bool = False) -> int:
    """The offset of the ``)`` closing the ``(`` at ``start`` within 4,000 characters, or -1
    (also at a blank line first, with ``blank_line_ends``: a CMake command never spans one in
    practice)."""
    depth = 0
    for i in range(start, min(len(text), start + 4000)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        elif blank_line_ends and c == "\n" and text[i + 1 : i + 2] == "\n":
            return -1
    return -1


def _strip_comments(text: str) -> str:
    return textre.sub(r"#[^\n]*", "", text)


#: An option for an NVIDIA-only library (``USE_CUDNN``, ``USE_TENSORRT_RUNTIME``,
#: ``WITH_NVSHMEM``, ``USE_CUTLASS``): off in a ROCm build, whose libraries have other names.
_NV_TECH_VAR = textre.compile(
    r"^(?:\w+_)?(?:CUDNN|TENSORRT|NVSHMEM|CUTLASS|CUBLASLT|NVTX|CUSPARSELT|NVJPEG|NCCL)(?:_\w+)?$",
    re.I,
)


def _term_value(tokens: list[str], false_vars: frozenset[str] = frozenset()) -> bool | None:
    """One side of AND/OR: ``NOT X``, ``X``, ``X STREQUAL "cuda"``; ``false_vars`` are
    variables the project sets true only where ROCm does not build."""
    neg = False
    while tokens and tokens[0].upper() == "NOT":
        neg, tokens = not neg, tokens[1:]
    v: bool | None = None
    if len(tokens) == 1:
        # ``@X@`` in a configure_file() template is the value of X
        name = _VARREF.sub(r"\1", tokens[0]).strip('"').strip("@")
        if name in false_vars:
            v = False
        elif _HIP_VAR.match(name):
            v = True
        elif _CUDA_VAR.match(name) or _NV_TECH_VAR.match(name) or other_backend_names(name):
            v = False  # other_backend_names: if(X_USE_SYCL), a third backend ROCm never enables
    elif len(tokens) == 3 and tokens[1].upper() in ("STREQUAL", "MATCHES", "EQUAL"):
        word = tokens[2].strip('"')
        if _ROCM_WORD.match(word):
            v = True
        elif _NOT_ROCM_WORD.match(word):
            v = False
    if v is None:
        return None
    return not v if neg else v


def cond_value(expr: str, false_vars: frozenset[str] = frozenset()) -> bool | None:
    tokens = [t for t in _TOKEN.findall(expr.replace("(", " ").replace(")", " "))]
    ors: list[list[str]] = [[]]
    for t in tokens:
        if t.upper() == "OR":
            ors.append([])
        else:
            ors[-1].append(t)
    values: list[bool | None] = []
    for part in ors:
        ands: list[list[str]] = [[]]
        for t in part:
            if t.upper() == "AND":
                ands.append([])
            else:
                ands[-1].append(t)
        vals = [_term_value(a, false_vars) for a in ands]
        if False in vals:
            values.append(False)
        elif vals and all(v is True for v in vals):
            values.append(True)
        else:
            values.append(None)
    if True in values:
        return True
    return False if values and all(v is False for v in values) else None


def _mentions_rocm(expr: str) -> bool:
    return any(
        _HIP_VAR.match(_VARREF.sub(r"\1", t).strip('"')) or _ROCM_WORD.match(t.strip('"'))
        for t in _TOKEN.findall(expr.replace("(", " ").replace(")", " "))
    )


class _Branches:
    """The open conditionals: per frame [line of the test that made it CUDA-only or 0,
    an earlier branch is true on ROCm, all earlier branches are false on ROCm].

    Beside the stack, per depth: the first CUDA-only test line of the frames up to it and
    whether all of them are the branch ROCm takes, so each line's question is one lookup (the
    frames were walked per line: thousands of unclosed ``if(FOO)`` then thousands of plain
    lines, 800 KB, 82 s CPU; sixteenth re-run)."""

    def __init__(self) -> None:
        self.stack: list[list[int]] = []
        self.tested = False
        self._cuda: list[int] = []  # first frame[0] != 0 among stack[: i + 1], or 0
        self._taken: list[bool] = []  # all(frame[3] for frame in stack[: i + 1])

    def _sum_top(self) -> None:
        f = self.stack[-1]
        below_cuda = self._cuda[-2] if len(self._cuda) > 1 else 0
        below_taken = self._taken[-2] if len(self._taken) > 1 else True
        self._cuda[-1] = below_cuda or f[0]
        self._taken[-1] = below_taken and bool(f[3])

    def cuda_line(self) -> int:
        return self._cuda[-1] if self._cuda else 0

    def open(self, value: bool | None, line: int) -> None:
        taken = int(value is True)  # [3]: this branch is the one ROCm takes
        # [4]: the line of the test of the current branch
        self.stack.append([line if value is False else 0, taken, int(value is False), taken, line])
        self._cuda.append(0)
        self._taken.append(True)
        self._sum_top()

    def other(self, value: bool | None, line: int, bare_else: bool = False) -> None:
        """``elseif``/``else`` (value True for a bare else)."""
        if not self.stack:
            return
        f = self.stack[-1]
        f[3] = int(not f[1] and value is True and (f[2] or not bare_else))
        f[4] = line
        if f[1] or value is False:  # an earlier branch is the one ROCm takes
            f[0] = line
        else:
            f[0] = 0
        f[1] = int(f[1] or value is True)
        f[2] = int(f[2] and value is False)
        self._sum_top()

    def rocm_taken(self) -> bool:
        """Inside branches that a ROCm build surely takes (``elseif(WITH_HIP)``)."""
        return bool(self._taken) and self._taken[-1]

    def close(self) -> None:
        if self.stack:
            self.stack.pop()
            self._cuda.pop()
            self._taken.pop()


#: Entries the variables of a CMake file may copy, per character of it: ``set(A1 ${A0}
#: ${A0})``, ``set(A2 ${A1} ${A1})``... doubled per line (24 lines: over 60 s and 3 GB)
BUDGET_PER_CHAR = 4  # 32 let 100 KB of chained lists cost 24-33 s (twelfth re-run)


class _TooLarge(Exception):
    """The file's variables stand for more entries than its size allows."""


def _expand(
    token: str, env: dict[str, list[tuple[str, bool, int]]], budget: list[int]
) -> list[tuple[str, bool, int]]:
    token = token.strip('"')
    whole = _VARREF.fullmatch(token)
    if whole and whole.group(1) in env:
        got = env[whole.group(1)]
        budget[0] -= len(got) + 1
        if budget[0] < 0:
            raise _TooLarge
        return list(got)
    for var in _ROOT_VARS:
        token = token.replace("${" + var + "}/", "").replace("${" + var + "}", "")
    if "$" in token or not token:
        return []
    return [(token.lstrip("./") if token.startswith("./") else token, False, 0)]


def _needs_cuda(cmd: str, args: str) -> bool:
    """A command that configures the CUDA toolchain: ``enable_language(CUDA)``,
    ``project(... CUDA)``, ``find_package(CUDAToolkit REQUIRED)``."""
    words = args.upper().split()
    if cmd == "enable_language":
        return "CUDA" in words
    if cmd == "project":
        return "CUDA" in words[1:]
    if cmd == "find_package" and words:
        return words[0] in ("CUDA", "CUDATOOLKIT") and "REQUIRED" in words
    return False


def _branches_needing_cuda(commands: list[tuple[str, str, int]]) -> set[int]:
    """Indices of ``if``/``elseif`` commands whose own branch (not its nested ones'
    alternatives) configures the CUDA toolchain: that branch is CUDA-only, whatever its
    test (an opt-in ``if(USE_VLLM)`` that calls ``enable_language(CUDA)``)."""
    out: set[int] = set()
    open_branch: list[int] = []  # the if/elseif whose branch is being read, per depth
    for k, (cmd, args, _) in enumerate(commands):
        if cmd == "if":
            open_branch.append(k)
        elif cmd in ("elseif", "else") and open_branch:
            open_branch[-1] = k if cmd == "elseif" else -1
        elif cmd == "endif" and open_branch:
            open_branch.pop()
        elif open_branch and open_branch[-1] >= 0 and _needs_cuda(cmd, args):
            out.add(open_branch[-1])
    return out


def _closing_parens(code: str) -> dict[int, int]:
    """Where each ``(`` closes, from one pass (an unclosed one has no entry)."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for m in _PAREN.finditer(code):
        if m.group() == "(":
            stack.append(m.start())
        elif stack:
            out[stack.pop()] = m.start()
    return out


def cmake_uses(text: str) -> tuple[list[Use], bool, list[tuple[int, int, int]]]:
    """The source patterns a CMake file uses, whether it tests for ROCm/HIP at all, and the
    lines of commands in branches ROCm never takes (first, last, line of the test); no model
    (nothing used, nothing tested) when its variables stand for more entries than its size
    allows (:data:`BUDGET_PER_CHAR`)."""
    try:
        return _cmake_uses(text, [BUDGET_PER_CHAR * len(text) + 100_000])
    except _TooLarge:
        return [], False, []


def _cmake_uses(text: str, budget: list[int]) -> tuple[list[Use], bool, list[tuple[int, int, int]]]:
    code = _strip_comments(text)
    env: dict[str, list[tuple[str, bool, int]]] = {}
    uses: list[Use] = []
    ranges: list[tuple[int, int, int]] = []
    br = _Branches()
    closes = _closing_parens(code)
    line_of = textre.line_finder(code)
    after = 0  # a command inside another's arguments is an argument (and costs no second walk)
    commands: list[tuple[str, str, int]] = []
    for m in _CMD.finditer(code):
        if m.start() < after:
            continue
        close = closes.get(m.end() - 1)
        if close is None:  # unclosed (CMake refuses the file): its arguments end with the line
            close = code.find("\n", m.end())
            close = len(code) if close == -1 else close
        after = close + 1
        commands.append((m.group(1).lower(), code[m.end() : close], line_of(m.start())))
    needs_cuda = _branches_needing_cuda(commands)
    returned = 0  # the line of the test whose branch returned from the file on ROCm
    in_function = 0
    for k, (cmd, args, line) in enumerate(commands):
        if cmd in ("if", "elseif"):
            br.tested = br.tested or _mentions_rocm(args)
            value = cond_value(args)
            if value is None and k in needs_cuda:
                value = False  # the branch needs nvcc: a ROCm build never configures it
            (br.open if cmd == "if" else br.other)(value, line)
            continue
        if cmd == "else":
            br.other(True, line, bare_else=True)
            continue
        if cmd == "endif":
            br.close()
            continue
        if cmd in ("option", "set", "cmake_dependent_option") and _mentions_rocm(
            args.split()[0] if args.split() else ""
        ):
            br.tested = True
        if cmd == "enable_language" and "HIP" in args.upper():
            br.tested = True
        cl = br.cuda_line() or returned
        if cl:
            # every command of a branch ROCm never takes, find_package() and message() too:
            # a finding on one is not configured there (RAJA's find_package(CUDAToolkit)
            # under if(RAJA_ENABLE_CUDA AND RAJA_ENABLE_NVTX))
            ranges.append((line, line + args.count("\n"), cl))
        if cmd in ("function", "macro"):
            in_function += 1
        elif cmd in ("endfunction", "endmacro"):
            in_function = max(0, in_function - 1)
        if cmd == "return" and not returned and not in_function and br.rocm_taken():
            # if(NOT USE_CUDA) return() endif(): the rest of the file is the CUDA backend's
            returned = br.stack[-1][4]
            continue
        words = _TOKEN.findall(args)
        if cmd == "file" and len(words) >= 3 and words[0].upper() in ("GLOB", "GLOB_RECURSE"):
            # file(GLOB VAR patterns...): the variable holds those files, like set()
            pats = [w for w in words[2:] if w.upper() not in ("CONFIGURE_DEPENDS",)]
            got = [
                t
                for tok in pats
                if not tok.upper().startswith("RELATIVE")
                for t in _expand(tok, env, budget)
            ]
            env[words[1]] = [(p, c or bool(cl), ln or cl) for p, c, ln in got]
            continue
        if cmd in _SKIP_CMDS:
            continue
        tokens = _TOKEN.findall(args)
        if cmd == "set" and tokens:
            got = [t for tok in tokens[1:] for t in _expand(tok, env, budget)]
            # each entry once: set(Ak ${Ak-1} ${Ak-1}) doubled 2 M copies of one source
            # within the budget, 33 s and 755 MB (eighth review)
            env[tokens[0]] = list(dict.fromkeys((p, c or bool(cl), ln or cl) for p, c, ln in got))
            continue
        if cmd == "list" and len(tokens) >= 3 and tokens[0].upper() == "REMOVE_ITEM":
            if br.rocm_taken():  # the ROCm build takes these sources out: CUDA-only
                gone = {p for tok in tokens[2:] for p, _, _ in _expand(tok, env, budget)}
                env[tokens[1]] = [
                    (p, True, line) if p in gone else (p, c, ln)
                    for p, c, ln in env.get(tokens[1], [])
                ]
            continue
        if cmd == "list" and len(tokens) >= 3 and tokens[0].upper() == "APPEND":
            got = [t for tok in tokens[2:] for t in _expand(tok, env, budget)]
            have = env.setdefault(tokens[1], [])
            have.extend((p, c or bool(cl), ln or cl) for p, c, ln in got)
            env[tokens[1]] = list(dict.fromkeys(have))
            continue
        for tok in tokens:
            for p, c, ln in _expand(tok, env, budget):
                if cmd == "add_subdirectory" or _SOURCEISH.search(p):
                    uses.append(Use(p, c or bool(cl), ln or cl or line))
    return list(dict.fromkeys(uses)), br.tested, ranges


_MAKE_COND = textre.compile(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef|if|else|endif)\b(.*)$", re.M)
#: what makes an Automake conditional's block the CUDA build's: its variables and programs
_AM_CUDA = textre.compile(r"\$\((?:CUDA|NVCC|NVML|CUPTI)\w*\)|\bnvcc\b|-lcuda\b|-lcudart\b")


def _automake_cuda_blocks(lines: list[str]) -> dict[int, bool]:
    """Per line (1-based) of an Automake ``if NAME`` (``Makefile.am``): whether its block, up
    to the matching ``endif``, uses CUDA's make variables or nvcc (``if HAVE_GDA`` around
    ``$(CUDA_CPPFLAGS)``: a component the CUDA build alone compiles; issue 24, fourteenth
    sample, ucx). One pass with a running count, not a search per block (nesting)."""
    marks = [0]
    for raw in lines:
        marks.append(marks[-1] + (1 if _AM_CUDA.search(raw) else 0))
    out: dict[int, bool] = {}
    stack: list[int] = []
    for n, raw in enumerate(lines, 1):
        word = raw.strip().split(None, 1)[0] if raw.strip() else ""
        if word == "if":
            stack.append(n)
        elif word == "endif" and stack:
            start = stack.pop()
            out[start] = marks[n] - marks[start] > 0
    return out


_AMD_GPU_VALUE = textre.compile(r"(?i)^(?:gpu[_-]amd|amd[_-]gpu|gpu[_-](?:hip|rocm))$")
_NV_GPU_VALUE = textre.compile(r"(?i)^(?:gpu[_-](?:nvidia|cuda)|nvidia[_-]gpu)$")
_MAKE_SRC = textre.compile(r"[\w./*-]+\.(?:cu|cuh|cpp|cc|cxx|c)\b")


def make_uses(text: str) -> tuple[list[Use], bool, list[tuple[int, int, int]]]:
    """The source files a Makefile names per branch, and whether it tests for ROCm/HIP."""
    uses: list[Use] = []
    ranges: list[tuple[int, int, int]] = []
    br = _Branches()
    lines = text.split("\n")
    # variables the file compares with a ROCm value somewhere: backend selectors, whose
    # NVIDIA values (cublas, cuda) a ROCm build never sets
    selectors = {
        m.group(1)
        for m in textre.finditer(r"\$\((\w+)\)\s*,\s*(\w+)\s*\)", text)
        if _ROCM_WORD.match(m.group(2))
    }
    blocks = _automake_cuda_blocks(lines) if "endif" in text else {}
    for n, raw in enumerate(lines, 1):
        m = _MAKE_COND.match(raw)
        if m:
            kind, rest = m.group(1), m.group(2)
            words = textre.findall(r"\$\((\w+)\)|\b(\w+)\b", rest)
            names = [a or b for a, b in words]
            if kind == "if":  # Automake: `if NAME` / `if !NAME`
                name = names[0] if names else ""
                hip = bool(_HIP_VAR.match(name))
                cuda = bool(_CUDA_VAR.match(name)) or (blocks.get(n, False) and not hip)
                v = True if hip else (False if cuda else None)
                br.tested = br.tested or hip
                br.open(v if v is None or not rest.strip().startswith("!") else not v, n)
            elif kind in ("ifdef", "ifndef"):
                name = names[0] if names else ""
                v = True if _HIP_VAR.match(name) else (False if _CUDA_VAR.match(name) else None)
                br.tested = br.tested or bool(_HIP_VAR.match(name))
                br.open(v if kind == "ifdef" or v is None else not v, n)
            elif kind in ("ifeq", "ifneq"):
                hip = any(_HIP_VAR.match(x) or _ROCM_WORD.match(x) for x in names)
                cuda = any(_CUDA_VAR.match(x) or _NOT_ROCM_WORD.match(x) for x in names)
                # a configuration named for the vendor's GPUs (Smilei's `$(call parse_config,
                # gpu_amd)` / `gpu_nvidia`: issue 24, twentieth sample)
                amd_gpu = any(_AMD_GPU_VALUE.match(x) for x in names)
                nv_gpu = any(_NV_GPU_VALUE.match(x) for x in names)
                hip, cuda = hip or amd_gpu, cuda or nv_gpu
                br.tested = br.tested or hip
                v = True if hip and not cuda else (False if cuda and not hip else None)
                lower = [x.lower() for x in names]
                selector = any(x in selectors for x in names)  # BUILD_TYPE=cublas|hipblas
                if v is not None and not selector and not (amd_gpu or nv_gpu) and (
                    "1" not in names and "ON" not in names and "hip" not in lower
                    and "cuda" not in lower
                ):  # fmt: skip
                    v = None
                br.open(v if kind == "ifeq" or v is None else not v, n)
            elif kind == "else":
                br.other(True, n)
            else:
                br.close()
            continue
        cl = br.cuda_line()
        if cl:
            ranges.append((n, n, cl))
        for s in _MAKE_SRC.findall(raw.split("#", 1)[0]):
            uses.append(Use(s.lstrip("./") if s.startswith("./") else s, bool(cl), cl or n))
    return uses, br.tested, ranges
