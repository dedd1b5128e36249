"""Rewrites of a parsed Python pattern that RE2 can run (used by :mod:`gpuport.textre_syntax`).

Character sets as code-point ranges, and the lookaround and backreference shapes that have an
exact form without them (listed in :mod:`gpuport.textre_syntax`): every rewrite keeps the
order in which ``re`` tries the alternatives, so the first match is the same.
"""

from __future__ import annotations

import re
from functools import lru_cache
from re import _constants as C  # type: ignore[attr-defined]
from typing import Any

MAXCHAR = 0x10FFFF
_I, _M, _S, _X, _A, _U, _L = (re.I, re.M, re.S, re.X, re.A, re.U, re.L)

Ranges = list[tuple[int, int]]
_WITNESS = object()  # an item: the rest of a negative lookahead, checked at the tail
Items = list[tuple[Any, Any]]
_DIGIT: Ranges = [(0x30, 0x39)]
_WORD: Ranges = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_SPACE: Ranges = [(0x09, 0x0D), (0x20, 0x20)]
_LINEBREAK: Ranges = [(0x0A, 0x0A)]


class Unsupported(ValueError):
    """The pattern uses something RE2 cannot run in linear time (lookaround, backreferences)."""


def _norm(ranges: Ranges) -> Ranges:
    out: Ranges = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _complement(ranges: Ranges) -> Ranges:
    out: Ranges = []
    nxt = 0
    for lo, hi in _norm(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAXCHAR:
        out.append((nxt, MAXCHAR))
    return out


def _fold(ranges: Ranges) -> Ranges:
    """Add the other case of every ASCII letter in the ranges (``re.I`` with ``re.ASCII``)."""
    extra: Ranges = []
    for lo, hi in ranges:
        for a, b, delta in ((0x41, 0x5A, 32), (0x61, 0x7A, -32)):
            s, e = max(lo, a), min(hi, b)
            if s <= e:
                extra.append((s + delta, e + delta))
    return _norm(ranges + extra)


_CATEGORIES: dict[Any, Ranges] = {
    C.CATEGORY_DIGIT: _DIGIT,
    C.CATEGORY_NOT_DIGIT: _complement(_DIGIT),
    C.CATEGORY_WORD: _WORD,
    C.CATEGORY_NOT_WORD: _complement(_WORD),
    C.CATEGORY_SPACE: _SPACE,
    C.CATEGORY_NOT_SPACE: _complement(_SPACE),
    C.CATEGORY_LINEBREAK: _LINEBREAK,
    C.CATEGORY_NOT_LINEBREAK: _complement(_LINEBREAK),
}


@lru_cache(maxsize=4096)
def _char(c: int) -> str:
    if c < 0x80 and (chr(c).isalnum() or c == 0x5F):
        return chr(c)
    return f"\\x{{{c:X}}}"


#: Lone surrogates have no UTF-8: RE2 sees U+D800..U+DFFF as U+10F000..U+10F7FF (private use)
SURROGATE_SHIFT = 0x10F000 - 0xD800


def _no_surrogates(ranges: Ranges) -> Ranges:
    out: Ranges = []
    for lo, hi in ranges:
        if hi < 0xD800 or lo > 0xDFFF:
            out.append((lo, hi))
            continue
        if lo < 0xD800:
            out.append((lo, 0xD7FF))
        if hi > 0xDFFF:
            out.append((0xE000, hi))
        out.append((max(lo, 0xD800) + SURROGATE_SHIFT, min(hi, 0xDFFF) + SURROGATE_SHIFT))
    return out


def _class(ranges: Ranges) -> str:
    return _class_of(tuple(ranges))


@lru_cache(maxsize=4096)
def _class_of(key: tuple[tuple[int, int], ...]) -> str:
    ranges = _norm(_no_surrogates(list(key)))
    if not ranges:
        return "[^\\x{0}-\\x{10FFFF}]"  # matches nothing
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _char(ranges[0][0])
    parts = [_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}" for lo, hi in ranges]
    return "[" + "".join(parts) + "]"


def _set_of(op: Any, av: Any, flags: int) -> Ranges | None:
    """The characters one item matches, if it is a one-character item."""
    if op is C.LITERAL:
        ranges: Ranges = [(av, av)]
    elif op is C.NOT_LITERAL:
        ranges = _complement(_fold([(av, av)]) if flags & _I else [(av, av)])
        return ranges
    elif op is C.ANY:
        return [(0, MAXCHAR)] if flags & _S else _complement(_LINEBREAK)
    elif op is C.IN:
        ranges = []
        negate = False
        for iop, iav in av:
            if iop is C.NEGATE:
                negate = True
            elif iop is C.LITERAL:
                ranges.append((iav, iav))
            elif iop is C.RANGE:
                ranges.append(iav)
            elif iop is C.CATEGORY:
                ranges += _CATEGORIES[iav]
            else:  # pragma: no cover - the parser emits nothing else in a class
                raise Unsupported(f"class item {iop}")
        if flags & _I:
            ranges = _fold(ranges)
        return _complement(ranges) if negate else _norm(ranges)
    else:
        return None
    return _fold(ranges) if flags & _I else ranges


def _has_groups(items: Any) -> bool:
    for op, av in items:
        if op is C.SUBPATTERN and av[0] is not None:
            return True
        nested = op in (C.SUBPATTERN, C.MAX_REPEAT, C.MIN_REPEAT, C.ASSERT, C.ASSERT_NOT)
        if nested and _has_groups(av[-1]):
            return True
        if op is C.BRANCH and any(_has_groups(a) for a in av[1]):
            return True
    return False


def _one_char(items: Any, flags: int) -> Ranges | None:
    items = list(items)
    if len(items) != 1:
        return None
    op, av = items[0]
    if op is C.SUBPATTERN and av[0] is None:
        return _one_char(av[3], (flags | av[1]) & ~av[2])
    return _set_of(op, av, flags)


def _lookbehind(items: list[tuple[Any, Any]], flags: int) -> tuple[Ranges, bool, int]:
    """Leading one-character lookbehinds: the characters allowed before, whether the start of
    the text is allowed, and how many items they take."""
    allowed: Ranges = [(0, MAXCHAR)]
    at_start = True
    k = 0
    for op, av in items:
        if op not in (C.ASSERT, C.ASSERT_NOT) or av[0] != -1:
            break
        ranges = _one_char(av[1], flags)
        if ranges is None:
            raise Unsupported("a lookbehind of more than one character")
        if op is C.ASSERT:
            allowed = _intersect(allowed, ranges)
            at_start = False
        else:
            allowed = _intersect(allowed, _complement(ranges))
        k += 1
    return allowed, at_start, k


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    return _complement(_norm(_complement(a) + _complement(b)))


def _has_look(items: Any) -> bool:
    for op, av in items:
        if op in (C.ASSERT, C.ASSERT_NOT) and av[0] == 1:
            return True
        if op is C.SUBPATTERN and _has_look(av[3]):
            return True
        if op is C.BRANCH and any(_has_look(a) for a in av[1]):
            return True
    return False


def _flatten(items: Items) -> list[Items]:
    """The pattern as top-level alternatives, with every group or branch that holds a
    lookahead distributed (``a(?:b|c(?!d)e)f`` -> ``abf|ac(?!d)ef``; a capturing group is
    written once per alternative)."""
    for i, (op, av) in enumerate(items):
        head, rest = items[:i], items[i + 1 :]
        if op is C.BRANCH and _has_look(items[i : i + 1]):
            return [f for a in av[1] for f in _flatten([*head, *a, *rest])]
        if op is C.SUBPATTERN and not av[1] and not av[2] and _has_look(av[3]):
            gid, body = av[0], list(av[3])
            if len(body) == 1 and body[0][0] is C.BRANCH:
                return [
                    f
                    for a in body[0][1][1]
                    for f in _flatten([*head, (C.SUBPATTERN, (gid, 0, 0, list(a))), *rest])
                ]
            if gid is None:
                return _flatten([*head, *body, *rest])
    return [items]


def _head_alternatives(items: Items) -> list[Items]:
    """The pattern as alternatives, distributed over a leading group of alternatives (so a
    lookbehind at the head of one of them is at the head of the pattern)."""
    if not items:
        return [items]
    op, av = items[0]
    if op is C.BRANCH:
        return [list(a) + items[1:] for a in av[1]]
    if op is C.SUBPATTERN and len(av[3]) == 1 and av[3][0][0] is C.BRANCH:
        gid, add, remove, body = av
        return [[(C.SUBPATTERN, (gid, add, remove, list(a))), *items[1:]] for a in body[0][1][1]]
    return [items]


def _is_lookbehind(item: tuple[Any, Any]) -> bool:
    return item[0] in (C.ASSERT, C.ASSERT_NOT) and item[1][0] == -1


def _hoist(alt: Items) -> Items:
    """``((?<!x)a)b`` -> ``(?<!x)(a)b``: a lookbehind at the head of a leading group."""
    if alt and alt[0][0] is C.SUBPATTERN:
        gid, add, remove, body = alt[0][1]
        body = list(body)
        k = 0
        while k < len(body) and _is_lookbehind(body[k]):
            k += 1
        if k and not add and not remove:
            return [*body[:k], (C.SUBPATTERN, (gid, add, remove, body[k:])), *alt[1:]]
    return alt


def _expand_backrefs(items: Items, flags: int) -> Items:
    """``(["']?)w\\2`` -> ``(?:(")w"|(')w'|()w)``: one alternative per string the group matches."""
    for j, (op, av) in enumerate(items):
        if op is not C.GROUPREF:
            continue
        i = next(
            (i for i, (o, a) in enumerate(items[:j]) if o is C.SUBPATTERN and a[0] == av), None
        )
        strings = None if i is None or flags & _I else _strings(list(items[i][1][3]), flags)
        if i is None or strings is None:
            raise Unsupported("a backreference other than to a top-level group of few strings")
        alts = [
            [(C.SUBPATTERN, (av, 0, 0, _literals(w))), *items[i + 1 : j], *_literals(w)]
            for w in strings
        ]
        return _expand_backrefs([*items[:i], (C.BRANCH, (None, alts)), *items[j + 1 :]], flags)
    return items


def _literals(text: str) -> Items:
    return [(C.LITERAL, ord(c)) for c in text]


def _strings(items: Items, flags: int, most: int = 16) -> list[str] | None:
    """The strings a group can match, in the order ``re`` tries them (None: too many)."""
    out = [""]
    for op, av in items:
        chars = _set_of(op, av, flags)
        if chars is not None:
            if sum(hi - lo + 1 for lo, hi in chars) > most:
                return None
            opts = [chr(c) for lo, hi in chars for c in range(lo, hi + 1)]
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[:2] == (0, 1):
            inner = _strings(list(av[2]), flags, most)
            if inner is None:
                return None
            opts = [*inner, ""] if op is C.MAX_REPEAT else ["", *inner]
        elif op is C.BRANCH:
            opts = []
            for alt in av[1]:
                got = _strings(list(alt), flags, most)
                if got is None:
                    return None
                opts += got
        elif op is C.SUBPATTERN and av[0] is None and not av[1] and not av[2]:
            got = _strings(list(av[3]), flags, most)
            if got is None:
                return None
            opts = got
        else:
            return None
        out = [a + b for a in out for b in opts]
        if len(out) > most:
            return None
    return out


def _mid_lookahead(items: Items, flags: int) -> Items:
    """A one-character lookahead in the top-level sequence, with more after it: the rest
    written once per way its first character is reached, limited to what the lookahead
    allows; where the rest is all empty, the lookahead stays, now at the tail."""
    for j, (op, av) in enumerate(items[:-1]):
        if op in (C.ASSERT, C.ASSERT_NOT) and av[0] == 1 and list(av[1]):
            chars = _one_char(av[1], flags)
            if chars is not None:
                allowed = chars if op is C.ASSERT else _complement(chars)
                alts = _restrict(items[j + 1 :], items[j], allowed, flags)
            elif op is C.ASSERT_NOT:
                alts = _restrict_trie(items[j + 1 :], _trie(av[1], flags), flags)
            else:
                raise Unsupported("a positive lookahead of more than one character before the tail")
            return [*items[:j], (C.BRANCH, (None, alts))]
    return items


Trie = dict[int, "Trie"]
_END = -1  # a key of a trie node: a string of the lookahead ends here


def _trie(items: Any, flags: int) -> Trie:
    """The strings a negative lookahead refuses, as a tree of their characters (lower case
    under ``re.I``: the other case is added where the tree is used)."""
    strings = _strings(list(items), flags & ~_I, most=64)
    if strings is None:
        raise Unsupported("a negative lookahead of more than a few strings")
    root: Trie = {}
    for text in strings:
        if flags & _I:
            text = "".join(c.lower() if c.isascii() else c for c in text)
        node = root
        for c in text:
            node = node.setdefault(ord(c), {})
        node[_END] = {}
    return root


def _witness(node: Trie, flags: int) -> str:
    """Matches the shortest text showing that none of the node's strings starts here."""
    if _END in node:
        return _class([])  # one of them already matched: no witness
    parts = ["\\z", _class(_complement(_keys(node, flags)))]
    parts += [_class(_key(c, flags)) + _witness(child, flags) for c, child in sorted(node.items())]
    return "(?:" + "|".join(parts) + ")"


def _key(c: int, flags: int) -> Ranges:
    return _fold([(c, c)]) if flags & _I else [(c, c)]


def _keys(node: Trie, flags: int) -> Ranges:
    return _norm([r for c in node if c != _END for r in _key(c, flags)])


def _restrict_trie(items: Items, node: Trie, flags: int, depth: int = 0) -> list[Items]:
    """``items`` limited to texts that do not start with any string of the trie."""
    if _END in node:
        return []
    if depth > 256:
        raise Unsupported("a lookahead before a repeat that can match nothing")
    if not items:  # the lookahead looks past the end of the pattern: checked at the tail
        return [[(_WITNESS, node)]]
    (op, av), rest = items[0], items[1:]
    if op is C.AT and av is C.AT_END and not flags & _M:
        # '$' leaves "" or "\n" after it
        if _END in node.get(10, {}):
            raise Unsupported("a lookahead of a newline before '$'")
        return [items]
    chars = _set_of(op, av, flags)
    if chars is not None:
        free = _intersect(chars, _complement(_keys(node, flags)))
        alts = [[_chars(free), *rest]] if free else []
        for c, child in sorted(node.items()):
            got = _intersect(chars, _key(c, flags)) if c != _END else []
            if got:
                alts += [[_chars(got), *r] for r in _restrict_trie(rest, child, flags, depth + 1)]
        return alts
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, hi, body = av
        more: list[Items] = []
        if hi != 0:
            left = hi if hi is C.MAXREPEAT else hi - 1
            again = (op, (max(lo - 1, 0), left, body))
            more = _restrict_trie([*body, again, *rest], node, flags, depth + 1)
        less = _restrict_trie(rest, node, flags, depth + 1) if lo == 0 else []
        return more + less if op is C.MAX_REPEAT else less + more
    if op is C.SUBPATTERN and av[0] is None and not av[1] and not av[2]:
        return _restrict_trie([*av[3], *rest], node, flags, depth + 1)
    if op is C.BRANCH:
        return [r for a in av[1] for r in _restrict_trie([*a, *rest], node, flags, depth + 1)]
    raise Unsupported("a lookahead followed by more than characters and their repeats")


def _chars(ranges: Ranges) -> tuple[Any, Any]:
    return (C.IN, [(C.RANGE, r) for r in ranges])


def _restrict(
    items: Items, look: tuple[Any, Any], allowed: Ranges, flags: int, depth: int = 0
) -> list[Items]:
    if depth > 64:
        raise Unsupported("a lookahead before a repeat that can match nothing")
    if not items:
        return [[look]]
    (op, av), rest = items[0], items[1:]
    if op is C.AT and av is C.AT_END and not flags & _M:
        # '$' leaves "" or "\n" after it: a negative lookahead that allows "\n" holds there
        if look[0] is C.ASSERT_NOT and _intersect(allowed, _LINEBREAK):
            return [items]
        raise Unsupported("a lookahead before '$' that depends on the final newline")
    gid = None
    inner = (op, av)
    if op is C.SUBPATTERN and len(av[3]) == 1 and not av[1] and not av[2]:
        gid, inner = av[0], av[3][0]

    def wrap(seq: Items) -> Items:
        return seq if gid is None else [(C.SUBPATTERN, (gid, 0, 0, seq))]

    iop, iav = inner
    chars = _set_of(iop, iav, flags)
    if chars is not None:
        got = _intersect(chars, allowed)
        return [wrap([_chars(got)]) + rest] if got else []
    if iop in (C.MAX_REPEAT, C.MIN_REPEAT) and len(iav[2]) == 1:
        lo, hi, body = iav
        chars = _set_of(body[0][0], body[0][1], flags)
        if chars is not None:
            got = _intersect(chars, allowed)
            more: list[Items] = []
            if got and hi != 0:
                left = hi if hi is C.MAXREPEAT else hi - 1
                more = [wrap([_chars(got), (iop, (max(lo - 1, 0), left, body))]) + rest]
            less = (
                [wrap([]) + r for r in _restrict(rest, look, allowed, flags, depth + 1)]
                if lo == 0
                else []
            )
            return more + less if iop is C.MAX_REPEAT else less + more
    if gid is None and iop in (C.MAX_REPEAT, C.MIN_REPEAT) and iav[1] != 0:
        lo, hi, body = iav
        left = hi if hi is C.MAXREPEAT else hi - 1
        more = _restrict(
            [*body, (iop, (max(lo - 1, 0), left, body)), *rest], look, allowed, flags, depth + 1
        )
        less = _restrict(rest, look, allowed, flags, depth + 1) if lo == 0 else []
        return more + less if iop is C.MAX_REPEAT else less + more
    raise Unsupported("a lookahead followed by more than characters and their repeats")
