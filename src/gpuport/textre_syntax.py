"""Python regular-expression syntax rewritten for RE2 (the engine behind :mod:`gpuport.textre`).

The pattern is parsed by Python's own parser (``re._parser``), so every escape, flag and
``re.VERBOSE`` comment means what it means to ``re``; the tree is then written out in RE2's
syntax with nothing left to interpretation: character classes as explicit code-point ranges,
case folding as explicit ranges, ``.`` as ``[^\\n]`` or any character, ``^``/``$`` as the
assertions ``re`` gives them. Classes follow ``re.ASCII`` (``\\w`` is ``[0-9A-Za-z_]``,
``\\d`` is ``[0-9]``, ``\\s`` is ``[ \\t\\n\\r\\f\\v]``), the meaning RE2's ``\\b`` has too.

RE2 has no lookaround and no backreferences. These shapes are rewritten exactly; anything
else is refused with :class:`Unsupported` (the pattern must be written without it):

* a lookbehind of one character at the head of the pattern, of a top-level alternative, or of
  an alternative of a leading group (``(?<![\\w-])-l``, ``([ \\t]+|(?<![\\w-]))-arch``): the
  character before the match is matched too, and the match starts after it (an empty group
  marks where);
* a lookahead at the tail (``(?![\\w-])``, ``(?=\\s*<<)``, and ``$``, which in ``re`` means
  "at the end or before a final newline"), also at the tail of a group: what it looks at is
  matched too, and the match (and the groups) end where an empty group marks;
* a one-character lookahead in the top-level sequence followed by characters, classes and
  their repeats (``(?P<name>\\w+)(?![\\w(])(?P<value>[^\\n]*)``): the items after it are
  written once per way their first character can be reached, each limited to what the
  lookahead allows;
* ``(?!)`` (never matches) and ``(?=)``;
* a backreference to an earlier top-level group that can match only a few strings
  (``(["']?)word\\2``): one alternative per string.

Where the rewrite writes a group twice, both copies stand for the one group of the pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

from gpuport.textre_rewrite import (
    _A,
    _L,
    _M,
    _U,
    _WITNESS,
    SURROGATE_SHIFT,
    Items,
    Ranges,
    Unsupported,
    _char,
    _class,
    _complement,
    _expand_backrefs,
    _flatten,
    _has_groups,
    _head_alternatives,
    _hoist,
    _lookbehind,
    _mid_lookahead,
    _one_char,
    _set_of,
    _trie,
    _witness,
)

__all__ = ["SURROGATE_SHIFT", "Translation", "Unsupported", "translate"]


@dataclass
class Translation:
    """An RE2 pattern and how its groups map back to the Python pattern's."""

    pattern: str  # RE2 syntax
    #: Python group number -> the RE2 groups that stand for it (a group written twice has two)
    groups: dict[int, list[int]] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)  # empty groups where a match really starts
    ends: list[int] = field(default_factory=list)  # empty groups where a match really ends
    n: int = 0  # RE2 capturing groups in all
    #: the head of the match is one character of context (a lookbehind): RE2 starts one earlier
    context: bool = False


class _Writer:
    def __init__(self) -> None:
        self.t = Translation("")

    def group(self) -> int:
        self.t.n += 1
        return self.t.n

    def seq(self, items: list[tuple[Any, Any]], flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: Any, av: Any, flags: int) -> str:
        if op is C.LITERAL and not flags & re.I and not 0xD800 <= av <= 0xDFFF:
            return _char(av)  # the common case, without building a set
        ranges = _set_of(op, av, flags)
        if ranges is not None:
            return _class(ranges)
        if op is C.BRANCH:
            return "(?:" + "|".join(self.seq(list(alt), flags) for alt in av[1]) + ")"
        if op is C.SUBPATTERN:
            gid, add, remove, sub = av
            inner = self.seq(list(sub), (flags | add) & ~remove)
            if gid is None:
                return "(?:" + inner + ")"
            # the group's number is taken before its contents are written (RE2 counts '(')
            raise AssertionError("captured groups go through capture()")  # pragma: no cover
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
            if lo > 1000 or (hi is not C.MAXREPEAT and hi > 1000):
                raise Unsupported("a repeat count over 1000")
            body = "(?:" + self.seq(list(sub), flags) + ")"
            if hi is C.MAXREPEAT:
                rep = {0: "*", 1: "+"}.get(lo, f"{{{lo},}}")
            else:
                rep = f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
            return body + rep + ("?" if op is C.MIN_REPEAT else "")
        if op is C.AT:
            return self.at(av, flags)
        if op in (C.ASSERT, C.ASSERT_NOT) and not list(av[1]):
            return "" if op is C.ASSERT else _class([])  # (?=) always, (?!) never
        if op in (C.ASSERT, C.ASSERT_NOT):
            raise Unsupported("lookaround that is not a one-character lookbehind at the head "
                              "or a lookahead at the tail")  # fmt: skip
        raise Unsupported(f"{op} (backreferences, atomic groups and possessive repeats)")

    @staticmethod
    def at(av: Any, flags: int) -> str:
        if av is C.AT_BEGINNING:
            return "(?m:^)" if flags & _M else "\\A"
        if av is C.AT_BEGINNING_STRING:
            return "\\A"
        if av is C.AT_END:
            if flags & _M:
                return "(?m:$)"
            raise Unsupported("'$' (end or before a final newline) that is not at the tail")
        if av is C.AT_END_STRING:
            return "\\z"
        if av is C.AT_BOUNDARY:
            return "\\b"
        if av is C.AT_NON_BOUNDARY:
            return "\\B"
        raise Unsupported(f"assertion {av}")  # pragma: no cover


class _Translator(_Writer):
    """Writes a pattern, capturing groups numbered as RE2 numbers them."""

    def item(self, op: Any, av: Any, flags: int) -> str:
        if op is C.SUBPATTERN and av[0] is not None:
            gid, add, remove, sub = av
            number = self.group()
            self.t.groups.setdefault(gid, []).append(number)
            return "(" + self.seq(list(sub), (flags | add) & ~remove) + ")"
        return super().item(op, av, flags)

    def tail(self, items: list[tuple[Any, Any]], flags: int) -> str:
        """A sequence in tail position: a lookahead (or ``$``) at its end is matched too."""
        if not items:
            return ""
        op, av = items[-1]
        body = self.seq(items[:-1], flags)
        look = self.lookahead(op, av, flags)
        if look is not None:
            marker = self.group()
            self.t.ends.append(marker)
            return body + "()" + look
        if op is C.BRANCH:
            alts = [self.tail(list(alt), flags) for alt in av[1]]
            return body + "(?:" + "|".join(alts) + ")"
        if op is C.SUBPATTERN:  # a group's end is clamped to the marker when it matched
            gid, add, remove, sub = av
            if gid is None:
                return body + "(?:" + self.tail(list(sub), (flags | add) & ~remove) + ")"
            number = self.group()
            self.t.groups.setdefault(gid, []).append(number)
            return body + "(" + self.tail(list(sub), (flags | add) & ~remove) + ")"
        return body + self.item(op, av, flags)

    def lookahead(self, op: Any, av: Any, flags: int) -> str | None:
        if op is _WITNESS:
            return _witness(av, flags)
        if op is C.AT and av is C.AT_END and not flags & _M:
            return "\\n?\\z"
        if op in (C.ASSERT, C.ASSERT_NOT) and not list(av[1]):
            return None  # (?=) and (?!): item() writes them
        if op is C.ASSERT and av[0] == 1:
            if _has_groups(av[1]):  # they would capture what re only looks at
                raise Unsupported("a group inside a lookahead")
            return "(?:" + _Writer().seq(list(av[1]), flags) + ")"
        if op is C.ASSERT_NOT and av[0] == 1:
            ranges = _one_char(av[1], flags)
            if ranges is not None:
                return "(?:" + _class(_complement(ranges)) + "|\\z)"
            return _witness(_trie(av[1], flags), flags)
        return None


def translate(pattern: str, flags: int = 0) -> tuple[Translation, Translation | None, Any]:
    """RE2 patterns for ``pattern``: one for a search that may start at the start of the text,
    and, when the pattern has a head lookbehind, one for a search that starts later (which
    begins one character early and never matches ``\\A``). Also the parsed pattern's state
    (group names, flags)."""
    if flags & (_L | re.DEBUG):
        raise Unsupported("re.LOCALE and re.DEBUG")
    parsed = P.parse(pattern, flags & ~_U | _A)
    state = parsed.state
    flags = state.flags
    items = _expand_backrefs(list(parsed.data), flags)
    try:
        return (*_translate(items, flags), state)
    except Unsupported:
        flat = _flatten(items)
        if len(flat) == 1:
            raise
        return (*_translate([(C.BRANCH, (None, flat))], flags), state)


def _translate(items: Items, flags: int) -> tuple[Translation, Translation | None]:
    if len(items) == 1 and items[0][0] is C.BRANCH:
        alts = [_mid_lookahead(list(a), flags) for a in items[0][1][1]]
        items = [(C.BRANCH, (None, alts))]
    else:
        items = _mid_lookahead(items, flags)
    alts = [_hoist(a) for a in _head_alternatives(items)]
    heads = [_lookbehind(a, flags) for a in alts]
    if not any(k for _, _, k in heads):
        w = _Translator()
        w.t.pattern = w.tail(items, flags)
        return w.t, None
    return _with_context(alts, heads, flags, True), _with_context(alts, heads, flags, False)


def _with_context(
    alts: list[list[tuple[Any, Any]]],
    heads: list[tuple[Ranges, bool, int]],
    flags: int,
    from_start: bool,
) -> Translation:
    """``\\A(?:alternatives allowed at the start)|(?:[before]()alternative|...)``: every
    alternative past the start takes exactly one character of context first, so the match
    that starts first in RE2 is the one that starts first in ``re``."""
    w = _Translator()
    w.t.context = True
    out: list[str] = []
    if from_start:
        first = []
        for alt, (_, at_start, k) in zip(alts, heads, strict=True):
            if at_start:
                marker = w.group()
                w.t.starts.append(marker)
                first.append("()" + w.tail(alt[k:], flags))
        if first:
            out.append("\\A(?:" + "|".join(first) + ")")
    later = []
    for alt, (allowed, _, k) in zip(alts, heads, strict=True):
        if allowed:
            marker = w.group()
            w.t.starts.append(marker)
            later.append(_class(allowed) + "()" + w.tail(alt[k:], flags))
    if later:
        out.append("(?:" + "|".join(later) + ")")
    w.t.pattern = "|".join(out) if out else "[^\\x{0}-\\x{10FFFF}]"
    return w.t
