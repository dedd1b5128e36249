"""Integer constants a C/C++ file defines (``#define WARP_SIZE 32``, ``constexpr int
kTile = 32;``), read as text. :mod:`gpuport.scan.project.cxx_facts` merges them over the project;
the warp rules ask them what a named tile size is. Imports nothing from the rules, so
both can use it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable

from gpuport import textre
from gpuport.scan.cxx import CxxSource
from gpuport.scan.cxx_expr import rocm_guard_expr

__all__ = [
    "TILE_SIZE",
    "constexpr_rocm_lines",
    "int_constants",
    "known_ints",
    "nearest",
    "tile_only_defines",
]

# Both start with a literal, so the regex engine can skip ahead in C; where a match starts
# (the start of its line, a word boundary) is checked after.
_DEFINE_VALUE = textre.compile(r"\#[ \t]*define[ \t]+(\w+)\b(?!\()[ \t]*([^\n]*)")
_CONSTEXPR_VALUE = textre.compile(
    r"constexpr\s+(?:static\s+)?(?:const\s+)?(?:unsigned\s+|signed\s+)?"
    r"(?:int|unsigned|long|short|size_t|u?int(?:32|64|16)_t|auto)\s+(\w+)\s*=\s*([^;,{}]+);"
)
_INT_TEXT = textre.compile(r"\(?\s*(\d+)[uUlL]*\s*\)?")
_COMMENT_TAIL = textre.compile(r"\s*(?://.*|/\*.*)?$")


def int_constants(text: str) -> dict[str, set[str]]:
    """Every object-like ``#define`` and integer ``constexpr`` of a file: name -> the
    value texts it is given (an integer's digits, else the text as written)."""
    out: dict[str, set[str]] = {}
    if "define" in text:
        for m in _DEFINE_VALUE.finditer(text):
            if not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
                _add_value(out, m.group(1), m.group(2))
    if "constexpr" in text:
        for m in _CONSTEXPR_VALUE.finditer(text):
            if not m.start() or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                _add_value(out, m.group(1), m.group(2))
    return out


#: longer digit runs are kept as written, never given to int(): Python refuses more than 4,300
#: digits (a ValueError, which ended `gpuport scan` as an internal error: twenty-eighth re-run
#: F11), and no size a rule asks about is that long
_MAX_DIGITS = 30


def _add_value(out: dict[str, set[str]], name: str, raw: str) -> None:
    value = _COMMENT_TAIL.sub("", raw).strip()
    num = _INT_TEXT.fullmatch(value)
    if num and len(num.group(1)) <= _MAX_DIGITS:
        value = str(int(num.group(1)))
    out.setdefault(name, set()).add(value)


def known_ints(values: dict[str, set[str]]) -> dict[str, int]:
    """The names whose every definition is the same integer (of at most 30 digits)."""
    return {
        name: int(next(iter(vals)))
        for name, vals in values.items()
        if len(vals) == 1 and next(iter(vals)).isdigit() and len(next(iter(vals))) <= _MAX_DIGITS
    }


#: a cooperative-groups tile of a fixed size: ``tiled_partition<N>``, ``thread_block_tile<N>``
TILE_SIZE = textre.compile(r"\b(?:tiled_partition|thread_block_tile)\s*<\s*(?P<size>[\w:]+)\s*>")
_WARP_DEFINE = textre.compile(
    r"^[ \t]*\#[ \t]*define[ \t]+(\w*(?:WARP|Warp|warp|WAVE|Wave|wave)\w*)[ \t]+\(?32[uU]?\)?[ \t]*"
    r"(?://[^\n]*|/\*[^\n]*)?$",
    re.M,
)
_FUNCTION_HEAD = textre.compile(r"__global__|__device__")
_REACH = 30000  # how far back a use looks for its function head, and on for its tile


def tile_only_defines(
    texts: dict[str, str],
    includes_of: Callable[[str], frozenset[str]],
    ints: dict[str, int],
    known: dict[str, frozenset[str]] | None = None,
    unused: dict[tuple[str, str], str] | None = None,
) -> dict[tuple[str, str], str]:
    """``#define WARP_SIZE 32`` in a header whose every use, in the header and in the files
    that include it, sits in a device function that makes 32-thread tiles (a
    ``tiled_partition<WARP_SIZE>``/``<32>`` there): the 32 is then the tile's size, which HIP
    gives on a 64-lane wavefront too, not a claim about the hardware. (header, name) ->
    the evidence; a define with no use, or any use outside such a function, is not listed.
    ``known``: the includes of every file when the caller has them already. ``unused``, when
    given, gets each such define that neither the header nor any file including it names
    again (llamafile's ``llamafile/cuda.h:78``, issue 24's tenth sample; a name in a
    comment or a directive counts as a use): a constant nothing reads claims nothing about
    the hardware. A header no file includes is left out: it may be there for code outside
    the project (a library's public header)."""
    out: dict[tuple[str, str], str] = {}
    includes: dict[str, frozenset[str]] | None = known
    included_by: dict[str, list[str]] | None = None
    quiet: list[tuple[str, str, list[str]]] = []  # (header, name, users) with no use in tiles
    for rel, text in texts.items():
        if "define" not in text or "32" not in text:
            continue
        names = dict.fromkeys(m.group(1) for m in _WARP_DEFINE.finditer(text))
        if not names:
            continue
        if includes is None:  # only for a project that has such a define
            includes = {r: includes_of(t) for r, t in texts.items()}
        if included_by is None:
            included_by = _included_by(includes)
        users = _includers(rel, included_by)  # once per header, not once per define
        uses = dict.fromkeys(names, 0)
        for user in users:  # every define of the header in one pass over each user
            for name, (n, good) in _uses_in_tiles(texts[user], set(uses), ints).items():
                if good:
                    uses[name] += n
                else:
                    del uses[name]
            if not uses:
                break
        for name, n in uses.items():
            # a header some file includes, or a source file (which nothing includes: its
            # define is its own; gpu4pyscf's pbc/contract_ft_ao.cu, fourteenth sample)
            if not n and unused is not None and (len(users) > 1 or _is_source(rel)):
                quiet.append((rel, name, users))
            if n:
                out[(rel, name)] = (
                    f"all {n} uses of {name} in {len(users)} files sit in device functions "
                    f"that make 32-thread tiles (`tiled_partition<...>`)"
                )
    if quiet and unused is not None:
        unused.update(_unused(quiet, texts))
    return out


def _is_source(rel: str) -> bool:
    return rel.lower().endswith((".cu", ".cc", ".cpp", ".cxx", ".c", ".hip"))


def _unused(
    quiet: list[tuple[str, str, list[str]]], texts: dict[str, str]
) -> dict[tuple[str, str], str]:
    """Of the (header, name, users) given, those whose name is written once in the header (its
    definition) and nowhere in its users. One pass over the words of every file (a look per
    define and user was quadratic: 16,000 defines in one header, 12 s)."""
    names = {name.encode() for _h, name, _u in quiet}
    mentions: dict[str, dict[str, int]] = {}  # name -> file -> times written
    for rel, text in texts.items():
        words = text.encode("utf-8", "surrogateescape").translate(_NOT_NAME).split()
        for word, times in Counter(w for w in words if w in names).items():
            mentions.setdefault(word.decode(), {})[rel] = times
    out: dict[tuple[str, str], str] = {}
    for header, name, users in quiet:
        per = mentions.get(name, {})
        if per.get(header, 0) <= 1 and not any(per.get(u, 0) for u in users if u != header):
            out[(header, name)] = (
                f"neither this file nor the {len(users) - 1} files that include it use it"
                if len(users) > 1
                else "nothing in this file uses it"
            )
    return out


#: every ASCII byte that cannot be in an identifier, mapped to a space (words by bytes.split)
_NOT_NAME = bytes(
    c if c >= 128 or chr(c).isalnum() or chr(c) == "_" else ord(" ") for c in range(256)
)


def _included_by(includes: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """File -> the files that include it. An include names a file; where several files of
    the project have that name, it is taken to be the one nearest the includer (most leading
    folders in common; a tie keeps all). Built once per scan: rebuilt for each header, it was
    headers x files (fourteenth re-run, F11: 400 KB of one-define headers, 53 s CPU)."""
    owners: dict[str, list[str]] = {}
    for rel in includes:
        owners.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    out: dict[str, list[str]] = {}
    for rel, names in includes.items():
        for name in names:
            for target in nearest(rel, owners.get(name, [])):
                out.setdefault(target, []).append(rel)
    return out


def _includers(header: str, included_by: dict[str, list[str]]) -> list[str]:
    """The header and every file that includes it, directly or through other headers."""
    found, seen, frontier = [header], {header}, [header]
    while frontier:
        new = []
        for target in frontier:
            for rel in included_by.get(target, ()):
                if rel not in seen:
                    seen.add(rel)
                    new.append(rel)
        found += new
        frontier = new
    return found


#: more equally near files of one name than this: the include is ambiguous and resolves to
#: none (thousands of folders each with its own ``x.h``, included from a file near none of them,
#: resolved every includer to all of them: includers x folders)
MOST_TIES = 64
_SHORT = 16
#: per long candidate list (kept with the list, so its id is not reused while here): its length
#: and the candidates under each folder of theirs
_NEAREST: dict[int, tuple[list[str], int, dict[str, list[str]]]] = {}


def _common(parts: list[str], rel: str) -> int:
    n = 0
    for a, b in zip(parts, rel.split("/")[:-1], strict=False):
        if a != b:
            break
        n += 1
    return n


def nearest(includer: str, candidates: list[str]) -> set[str]:
    """Of the files an include's name may denote, those nearest the includer (most leading
    folders in common); a tie keeps all, up to :data:`MOST_TIES`. A long list is indexed by
    folder once (per list and length) and each question walks the includer's folders."""
    if len(candidates) <= 1:
        return set(candidates)
    parts = includer.split("/")[:-1]
    if len(candidates) < _SHORT:
        best = max(_common(parts, c) for c in candidates)
        return {c for c in candidates if _common(parts, c) == best}
    got = _NEAREST.get(id(candidates))
    if got is None or got[0] is not candidates or got[1] != len(candidates):
        under: dict[str, list[str]] = {}
        for c in candidates:
            folders = c.split("/")[:-1]
            for k in range(len(folders) + 1):
                under.setdefault("/".join(folders[:k]), []).append(c)
        while len(_NEAREST) >= 4096:
            del _NEAREST[next(iter(_NEAREST))]
        got = _NEAREST[id(candidates)] = (candidates, len(candidates), under)
    for k in range(len(parts), -1, -1):
        found = got[2].get("/".join(parts[:k]))
        if found:
            return set(found) if len(found) <= MOST_TIES else set()
    return set()


_WORD = textre.compile(r"\w+")
_DIRECTIVE = textre.compile(r"[ \t]*\#[ \t]*(?:define|undef|ifn?def|if|elif)\b")
_COMMENT_LINE = textre.compile(r"[ \t\r\f\v]*(?:\*|/\*)")


def _uses_in_tiles(text: str, names: set[str], ints: dict[str, int]) -> dict[str, tuple[int, bool]]:
    """For each of ``names`` used in ``text`` (not in a directive or a comment): how many
    uses, and whether every one sits in a device function that makes a 32-thread tile. One
    pass over the text's words for all the names, the function heads and tiles found once
    (a header of thousands of such defines rescanned the text per define: 400 KB took 16 s
    CPU; fourteenth re-run, F3)."""
    out: dict[str, tuple[int, bool]] = {}
    if len(names) < 16 and not any(n in text for n in names):
        return out
    heads = [(m.start(), m.end()) for m in _FUNCTION_HEAD.finditer(text)]
    head_starts = [h[0] for h in heads]
    head_ends = [h[1] for h in heads]
    tiles = [(m.start(), m.end(), m.group("size")) for m in TILE_SIZE.finditer(text)]
    tile_starts = [t[0] for t in tiles]
    in_tile: dict[tuple[int, int, str], bool] = {}  # (head, end, name) -> a 32 tile there
    scanned, known, skip_line, comment_at = 0, False, False, -1
    for m in _WORD.finditer(text):
        name = m.group(0)
        if name not in names or not out.get(name, (0, True))[1]:
            continue
        nl = text.rfind("\n", scanned, m.start())  # the use's line, found moving forward
        scanned = m.start()
        if nl >= 0 or not known:  # a new line: whether it is a directive, where // starts
            known, line_start = True, nl + 1
            line_end = text.find("\n", line_start)
            line_end = len(text) if line_end < 0 else line_end
            skip_line = bool(
                _DIRECTIVE.match(text, line_start) or _COMMENT_LINE.match(text, line_start)
            )
            comment_at = text.find("//", line_start, line_end)
        if skip_line or (comment_at >= 0 and comment_at + 2 <= m.start()):
            continue  # in a directive or a comment
        n = out.get(name, (0, True))[0] + 1
        i = bisect_right(head_ends, m.start()) - 1  # the last head before the use
        if i < 0 or head_starts[i] < m.start() - _REACH:
            out[name] = (n, False)
            continue
        j = bisect_left(head_starts, m.end())  # the next head after it, within reach
        if j < len(heads) and head_ends[j] <= m.end() + _REACH:
            end = head_starts[j]
        else:
            end = min(len(text), m.end() + _REACH)
        key = (i, end, name)
        if key not in in_tile:
            k = bisect_left(tile_starts, head_starts[i])
            in_tile[key] = False
            while k < len(tiles) and tiles[k][1] <= end:
                if _size_is_32(tiles[k][2], name, ints):
                    in_tile[key] = True
                    break
                k += 1
        out[name] = (n, in_tile[key])
    return out


def _size_is_32(size: str, name: str, ints: dict[str, int]) -> bool:
    last = size.rsplit("::", 1)[-1]
    return size == "32" or last == name or ints.get(last) == 32


_CONSTEXPR_BOOL = textre.compile(
    r"constexpr\s+(?:static\s+)?(?:const\s+)?bool\s+(\w+)\s*=\s*([^;{}]+);"
)
_IF_CONSTEXPR = textre.compile(r"\bif\s+constexpr\s*\(")
_ELSE = textre.compile(r"\s*else\b\s*")
_IF_AFTER_ELSE = textre.compile(r"if\s+(?:constexpr\s*)?\(")


def constexpr_rocm_lines(src: CxxSource) -> list[tuple[int, int]]:
    """Line ranges of ``if constexpr`` chains whose condition tells ROCm apart, like a
    preprocessor conditional on ``USE_ROCM``: the condition names a ROCm macro, or a
    ``constexpr bool`` of the file whose value does (bitsandbytes' ``constexpr bool
    HIP_LDS_LUT_SHFL = BNB_HIP && ...`` / ``if constexpr (HIP_LDS_LUT_SHFL) {...} else
    {<CUDA shuffle>}``). Either branch counts, as for ``#if``: one is not instantiated on
    ROCm, the other was written for it."""
    code = src.code
    if "constexpr" not in code:
        return []
    rocm_bools = {
        m.group(1): m.group(2)
        for m in _CONSTEXPR_BOOL.finditer(code)
        if rocm_guard_expr("if", " ".join(m.group(2).split()))
    }
    out: list[tuple[int, int]] = []
    for m in _IF_CONSTEXPR.finditer(code):
        close = src.match_close(m.end() - 1, limit=2000)
        if close is None:
            continue
        cond = " ".join(code[m.end() : close].split())
        for name, value in rocm_bools.items():
            if name in cond:
                cond = textre.sub(rf"\b{re.escape(name)}\b", f"({' '.join(value.split())})", cond)
        if not rocm_guard_expr("if", cond):
            continue
        end = _branch_end(src, close + 1)
        while end is not None:
            nxt = _ELSE.match(code, end + 1)
            if nxt is None:
                break
            after = _IF_AFTER_ELSE.match(code, nxt.end())
            if after is not None:  # `else if (...)`: its condition, then its body
                cond_close = src.match_close(after.end() - 1, limit=2000)
                end = _branch_end(src, cond_close + 1) if cond_close is not None else None
            else:
                end = _branch_end(src, nxt.end())
        if end is not None:
            out.append((src.line_of(m.start()), src.line_of(end)))
    return out


def _branch_end(src: CxxSource, pos: int) -> int | None:
    """Offset of the last character of the statement or block starting at ``pos``."""
    code = src.code
    while pos < len(code) and code[pos] in " \t\r\n":
        pos += 1
    if pos >= len(code):
        return None
    if code[pos] == "{":
        return src.match_close(pos)
    semi = code.find(";", pos)
    return semi if semi != -1 else None
