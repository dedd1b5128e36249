"""Where a project's own ``warpSize`` hides the HIP builtin (for GP308).

``template <int warpSize, typename T> struct warpReduce`` (AMReX), a function parameter
``int warpSize`` or a local ``constexpr int warpSize = 64;`` declares a name of the project's
own: inside its scope ``warpSize`` is that parameter or constant, a compile-time value where
it is a template parameter or constexpr, never the HIP device variable that stopped being
constexpr in ROCm 7. :func:`shadowed_spans` gives those scopes, so GP308 skips the uses
in them (and the declaration itself).

Scopes are read from brackets in the comment-free code: a template parameter's scope is the
templated entity (to the ``;`` of a declaration, or the matching ``}`` of its body), a
function parameter's the function (body or ``;``), a local's the rest of its block.
"""

from __future__ import annotations

from gpuport import textre

__all__ = ["shadowed_spans"]

_DECL = textre.compile(
    r"\b(?:int|unsigned|long|short|size_t|int32_t|uint32_t|int64_t|uint64_t|auto|char)"
    r"\s+(?:const\s+)?warpSize\b"
)
_LIMIT = 200_000  # brackets are matched this far at most


def _match(code: str, at: int, opener: str, closer: str) -> int:
    """Offset just past the bracket that closes the one at ``at`` (the end of the code,
    or of the limit, when it is never closed)."""
    depth = 0
    end = min(len(code), at + _LIMIT)
    for i in range(at, end):
        c = code[i]
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i + 1
    return end


def _entity_end(code: str, pos: int) -> int:
    """End of the declaration or definition that goes on at ``pos``: its ``;``, or the
    matching ``}`` of the first ``{``."""
    semi = code.find(";", pos)
    brace = code.find("{", pos)
    if brace == -1 or (semi != -1 and semi < brace):
        return len(code) if semi == -1 else semi + 1
    return _match(code, brace, "{", "}")


def _unclosed(code: str, lo: int, pos: int, opener: str, closer: str) -> int:
    """Offset of the innermost ``opener`` between ``lo`` and ``pos`` still open at ``pos``,
    or -1."""
    depth = 0
    for i in range(pos - 1, lo - 1, -1):
        c = code[i]
        if c == closer:
            depth += 1
        elif c == opener:
            if depth == 0:
                return i
            depth -= 1
    return -1


def shadowed_spans(code: str) -> list[tuple[int, int]]:
    """(start, end) offsets where ``warpSize`` names a declaration of the project's own."""
    if "warpSize" not in code:
        return []
    spans: list[tuple[int, int]] = []
    for m in _DECL.finditer(code):
        start = m.start()
        lo = max(0, start - 2000)
        head = max(
            code.rfind(";", lo, start), code.rfind("{", lo, start), code.rfind("}", lo, start)
        )
        angle = _unclosed(code, head + 1, start, "<", ">")
        paren = _unclosed(code, head + 1, start, "(", ")")
        if angle != -1 and code[max(head + 1, angle - 12) : angle].rstrip().endswith("template"):
            spans.append((start, _entity_end(code, _match(code, angle, "<", ">"))))
        elif paren != -1:
            spans.append((start, _entity_end(code, _match(code, paren, "(", ")"))))
        else:
            block = _unclosed(code, lo, start, "{", "}")
            spans.append((start, _match(code, block, "{", "}") if block != -1 else len(code)))
    return spans
