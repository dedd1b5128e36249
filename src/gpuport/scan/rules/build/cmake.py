"""CMake for the GP4xx checker: ROCm guards, dead blocks, CUDA-only values, help strings.

The lexical layer (comments, commands, arguments) is :mod:`gpuport.scan.cmake_lex`. Nothing
here is evaluated: only literal constants decide whether an ``if()`` branch is dead.
"""

from __future__ import annotations

from gpuport import textre
from gpuport.scan.cmake_lex import Command
from gpuport.scan.rules.build.common import ROCM_COND, Guards
from gpuport.scan.rules.build.text import Spans, Text

# if(<constant>): CMake's false and true constants (a number other than 0 is true too).
_FALSE = textre.compile(r'(?i)0+|off|no|false|n|ignore|notfound|""|\S*-notfound')
_TRUE = textre.compile(r"(?i)0*[1-9]\d*|on|yes|true|y")
# A generator expression whose condition is "compiling CUDA": $<$<COMPILE_LANGUAGE:CUDA>:...>,
# $<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:...>, or one of these inside $<AND:...>.
_CUDA_LANG = textre.compile(r"\$<(?:COMPILE_LANGUAGE:CUDA|COMPILE_LANG_AND_ID:CUDA,[^>]*)>")


def _cond_tokens(args: str) -> list[str]:
    """The words of an ``if()`` condition, with each parenthesis a word of its own."""
    return textre.findall(r'"(?:[^"\\]|\\.)*"?|[()]|[^\s()"]+', args)  # "? as in _WORD


def _split_or(tokens: list[str]) -> list[list[str]]:
    """``tokens`` split at ``OR`` outside parentheses, each part without wrapping parens."""
    parts: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        depth += (tok == "(") - (tok == ")")
        if depth == 0 and tok == "OR":
            parts.append([])
        else:
            parts[-1].append(tok)
    return [_unwrap(p) for p in parts]


def _unwrap(tokens: list[str]) -> list[str]:
    while len(tokens) >= 2 and tokens[0] == "(" and tokens[-1] == ")":
        depth = 0
        for i, tok in enumerate(tokens):
            depth += (tok == "(") - (tok == ")")
            if depth == 0 and i < len(tokens) - 1:
                return tokens
        tokens = tokens[1:-1]
    return tokens


def rocm_condition(args: str) -> bool:
    """Whether an ``if()``/``elseif()`` condition branches on ROCm/HIP: it names ROCm, and
    when it is a disjunction every part names ROCm with the same polarity, so
    ``if(USE_CUDA OR USE_ROCM)`` (taken on CUDA and ROCm alike) is not a guard."""
    if not ROCM_COND.search(args):
        return False
    parts = _split_or(_cond_tokens(args))
    if len(parts) < 2:
        return True
    signs = set()
    for part in parts:
        if not ROCM_COND.search(" ".join(part)):
            return False
        signs.add(bool(part) and part[0] == "NOT")
    return len(signs) == 1


def rocm_guards(cmds: list[Command], text: Text) -> Guards:
    """Line ranges of ``if()`` blocks (all branches) whose conditions name ROCm/HIP."""
    guards = Guards()
    stack: list[tuple[int, bool]] = []
    last = len(text.starts)
    for cmd in cmds:
        line = text.pos(cmd.start)[0]
        if cmd.name == "if":
            stack.append((line, rocm_condition(cmd.args)))
        elif cmd.name == "elseif" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or rocm_condition(cmd.args))
        elif cmd.name == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                guards.ranges.append((start, line))
    guards.ranges.extend((start, last) for start, rocm in stack if rocm)
    return guards


def dead_spans(cmds: list[Command], end: int) -> Spans:
    """Offsets of branches that never run: ``if(0)``/``if(OFF)``/``if(FALSE)`` bodies, and
    the ``elseif``/``else`` branches after an ``if(1)``/``if(ON)``/``if(TRUE)``."""
    spans: Spans = []
    stack: list[tuple[int | None, bool]] = []  # (start of the dead branch, a branch taken)
    for cmd in cmds:
        cond = cmd.args.strip()
        if cmd.name == "if":
            stack.append(_branch(cond, False, cmd.end))
        elif cmd.name in ("elseif", "else", "endif") and stack:
            dead_from, taken = stack.pop()
            if dead_from is not None:
                spans.append((dead_from, cmd.start))
            if cmd.name == "elseif":
                stack.append(_branch(cond, taken, cmd.end))
            elif cmd.name == "else":
                stack.append((cmd.end if taken else None, True))
    spans.extend((start, end) for start, _ in stack if start is not None)
    return spans


def _branch(cond: str, taken: bool, body: int) -> tuple[int | None, bool]:
    if taken or _FALSE.fullmatch(cond):
        return body, taken
    return None, bool(_TRUE.fullmatch(cond))


def cuda_only_spans(code: str) -> Spans:
    """Values of generator expressions that apply only when CUDA is compiled (one pass)."""
    spans: Spans = []
    stack: list[list[int]] = []  # [offset of "$<", offset of its first ":" or -1]
    j, n = 0, len(code)
    while j < n:
        ch = code[j]
        if ch == "$" and code.startswith("$<", j):
            stack.append([j, -1])
            j += 2
            continue
        if stack and ch == ":" and stack[-1][1] < 0:
            stack[-1][1] = j
        elif stack and ch == ">":
            start, colon = stack.pop()
            cond = code[start + 2 : colon] if colon >= 0 else ""
            if (
                cond == "DEVICE_LINK"
                or _CUDA_LANG.fullmatch(cond)
                or (
                    cond.startswith("$<AND:")
                    and _CUDA_LANG.search(cond)
                    and not textre.search(r"\$<(?:OR|NOT):", cond)
                )
            ):
                spans.append((colon + 1, j))
        j += 1
    return spans


#: words of running text: a help string has some (``the``, ``to``, ``for``...)
_FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "to", "of", "for", "in", "on", "is", "are", "be", "by", "via", "with",
     "this", "that", "which", "will", "and", "or", "if", "when", "e.g", "eg", "i.e", "use"}
)  # fmt: skip
_PROSE_WORD = textre.compile(r"[(\[]?[A-Za-z][a-z]+(?:\.[a-z])?[.,:;)\]]?")
#: a bare command-line option (not inside backticks or quotes): ``-arch=sm_70``, ``--gpu``
_BARE_FLAG = textre.compile(r"(?:^|\s)--?[A-Za-z]")
_QUOTED_CODE = textre.compile(r"`[^`]*`")


def prose_spans(cmds: list[Command], code: str) -> Spans:
    """Quoted arguments that are running text, not values: a build flag's help string in a
    project's own command (TeaLeaf's ``register_flag_required(CMAKE_CUDA_COMPILER "Path to
    the CUDA nvcc compiler")``, ``"... (e.g `sm_70`) for nvcc"``; issue 24, fifteenth
    sample). Running text: at least four words of letters, one of them a function word
    (``the``, ``to``, ``for``...), and no option outside backticks (``sh -c "nvcc -arch=sm_70
    ... && echo the build is done"`` runs nvcc)."""
    spans: Spans = []
    for cmd in cmds:
        if cmd.name == "message" or '"' not in cmd.args:
            continue
        for w in cmd.words():
            if code[w.start] != '"' or " " not in w.text:
                continue
            words = w.text.split()
            letters = [t for t in words if _PROSE_WORD.fullmatch(t)]
            plain = _QUOTED_CODE.sub(" ", w.text)
            if (
                len(letters) >= 4
                and any(t.strip("()[].,:;").lower() in _FUNCTION_WORDS for t in letters)
                and not _BARE_FLAG.search(plain)
            ):
                spans.append((w.start, w.start + len(w.text) + 2))
    return spans
