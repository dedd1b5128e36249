"""Preprocessor expressions of the C++ lexer (:mod:`gpuport.scan.cxx`): does an ``#if``
test ROCm, and what is its value when it is made of literals only."""

from __future__ import annotations

from gpuport import textre

__all__ = ["ROCM_MACRO", "const_value", "names_rocm", "rocm_guard_expr", "rocm_polarity"]

#: A controlling expression that mentions one of these names discriminates
#: ROCm: ``__HIP_PLATFORM_AMD__``, ``__HIP_PLATFORM_HCC__``, ``__HIPCC__``,
#: ``__HIP__``, ``__HIP_DEVICE_COMPILE__``, ``USE_ROCM``, ``HIP_PLATFORM``,
#: ``GGML_USE_HIP``, ``TORCH_HIP_VERSION``, ``__AMDGCN__``, ``__gfx942__``,
#: ``__GFX9__`` and the like. ``HIP``/``ROCM`` must start a word part, so
#: ``OWNERSHIP`` or ``CHIP_ID`` do not count.
ROCM_MACRO = textre.compile(
    r"(?<![A-Za-z0-9])(?:HIP|ROCM|ROCm|rocm|AMDGCN|AMDGPU|amdgcn|amdgpu)(?![a-z])"
    r"|\b__gfx\d+\w*__\b|\b__GFX\d+__\b"
)


def _strip_parens(expr: str) -> str:
    """``expr`` without parentheses that wrap all of it: ``((a || b))`` -> ``a || b``."""
    return _unwrap(expr)


def _unwrap(expr: str) -> str:
    """``expr`` stripped, without the parentheses that wrap all of it, in one pass: peeling
    one pair at a time rescanned the text per pair (``#if ((((…1))))`` of 50 KB: 15 s)."""
    expr = expr.strip()
    match: dict[int, int] = {}
    opened: list[int] = []
    for k, ch in enumerate(expr):
        if ch == "(":
            opened.append(k)
        elif ch == ")" and opened:
            match[opened.pop()] = k
    i, j = 0, len(expr) - 1
    while i < j and expr[i] == "(" and match.get(i) == j:
        i, j = i + 1, j - 1
        while i <= j and expr[i].isspace():
            i += 1
        while j >= i and expr[j].isspace():
            j -= 1
    return expr[i : j + 1]


def rocm_polarity(term: str) -> int:
    """1 when ``term`` tests ROCm positively (``defined(USE_ROCM)``, ``HIP_VERSION >=
    50000``), -1 when negated (``!defined(__HIPCC__)``), 0 when it names no ROCm macro
    or mixes both (``defined(USE_ROCM) && !defined(__HIPCC__)``)."""
    return _polarity(term, frozenset())


def _polarity(term: str, extra: frozenset[str]) -> int:
    signs = {
        -1 if conj.startswith("!") else 1
        for conj in map(_strip_parens, _split_top(term, "&&"))
        if names_rocm(conj, extra)
    }
    return signs.pop() if len(signs) == 1 else 0


_WORD = textre.compile(r"[A-Za-z_]\w*")


def names_rocm(expr: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether ``expr`` names a ROCm macro, or one of ``extra`` (the project's own macros
    whose every definition sits in a ROCm-discriminating branch:
    :attr:`gpuport.scan.project.cxx_facts.CxxFacts.rocm_names`)."""
    if ROCM_MACRO.search(expr) is not None:
        return True
    return bool(extra) and not extra.isdisjoint(_WORD.findall(expr))


def rocm_guard_expr(kind: str, expr: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a conditional directive discriminates ROCm: its expression names a ROCm
    macro, and when it is a disjunction (``a || b``) every disjunct tests ROCm with the
    same polarity. ``!defined(USE_ROCM) || ROCM_VERSION >= 60200`` and
    ``defined(__HIP_PLATFORM_AMD__) || defined(__CUDACC__)`` are both compiled on ROCm.
    ``extra``: project macros that stand for a ROCm test (:func:`names_rocm`)."""
    if not names_rocm(expr, extra):
        return False
    if kind not in ("if", "elif"):
        return True
    disjuncts = [_strip_parens(d) for d in _split_top(_strip_parens(expr), "||")]
    if len(disjuncts) < 2:
        return True
    signs = {_polarity(d, extra) for d in disjuncts}
    return len(signs) == 1 and 0 not in signs


_IF_KINDS = ("if", "ifdef", "ifndef")
_ELIF_KINDS = ("elif", "elifdef", "elifndef")
_INT = textre.compile(r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*")


def _split_top(expr: str, op: str) -> list[str]:
    """``expr`` split at ``op`` (``||`` or ``&&``) outside parentheses."""
    if op not in expr:
        return [expr]
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and expr.startswith(op, i):
            parts.append(expr[start:i])
            i += len(op)
            start = i
            continue
        i += 1
    parts.append(expr[start:])
    return parts


def const_value(expr: str, depth: int = 0) -> bool | None:
    """The value of a preprocessor expression when literals alone decide it, else None.

    ``0``, ``false``, ``!1``, ``0 && defined(X)``, ``(0)`` are False; ``1``, ``true``,
    ``1 || X`` are True; anything that needs a macro's value is None.
    """
    expr = " ".join(expr.replace("\\\n", " ").split())
    if not expr or depth > 20:
        return None
    expr = _unwrap(expr)
    ors = _split_top(expr, "||")
    if len(ors) > 1:
        values = [const_value(p, depth + 1) for p in ors]
        if True in values:
            return True
        return False if all(v is False for v in values) else None
    ands = _split_top(expr, "&&")
    if len(ands) > 1:
        values = [const_value(p, depth + 1) for p in ands]
        if False in values:
            return False
        return True if all(v is True for v in values) else None
    if expr.startswith("!") and not expr.startswith("!="):
        inner = const_value(expr[1:], depth + 1)
        return None if inner is None else not inner
    if expr in ("true", "false"):
        return expr == "true"
    if _INT.fullmatch(expr):
        digits = expr.rstrip("uUlL")
        prefixed = digits[:2] in ("0x", "0X", "0b", "0B")
        # non-zero iff a digit is: no int() (a 5,000-digit literal would raise ValueError)
        return (digits[2:] if prefixed else digits).strip("0'") != ""
    return None
