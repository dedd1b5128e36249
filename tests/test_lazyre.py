"""gpuport.lazyre: patterns compiled on first use behave as compiled ones, and no module hands
one to a function of ``re`` (which would refuse it)."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import pytest

from gpuport import lazyre

SRC = Path(__file__).resolve().parent.parent / "src" / "gpuport"


def test_compiles_on_first_use_and_then_holds_the_compiled_methods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        calls.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    p = lazyre.compile(r"a(?P<b>b)+", re.I)
    assert calls == []  # defining it compiles nothing
    m = p.search("xABb")
    assert m is not None and m.group(0) == "ABb" and m.group("b") == "b"
    assert [p.fullmatch("ab"), p.match("b")][1] is None
    assert p.sub("-", "aab") == "a-" and p.findall("ab ab") == ["b", "b"]
    assert [x.span() for x in p.finditer("ab-ab")] == [(0, 2), (3, 5)]
    assert p.split("xaby") == ["x", "b", "y"] and p.subn("", "ab") == ("", 1)
    assert (p.pattern, p.groups, p.groupindex["b"]) == (r"a(?P<b>b)+", 1, 1)
    assert p.flags == real(r"a(?P<b>b)+", re.I).flags
    assert calls == [r"a(?P<b>b)+"]  # once
    assert p.search.__self__.__class__ is re.Pattern  # type: ignore[attr-defined]


def test_copies_before_and_after_use() -> None:  # as pickle does: through __reduce__
    p = lazyre.compile(r"\d+")
    assert copy.deepcopy(p).findall("1 22") == ["1", "22"]
    assert p.search("x3") is not None
    assert copy.deepcopy(p).findall("1 22") == ["1", "22"]


def test_a_bad_pattern_fails_when_used() -> None:
    p = lazyre.compile(r"(")
    with pytest.raises(re.error):
        p.search("x")


_RE_FUNCS = {"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}


def _lazy_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and (value.func.value.id, value.func.attr) == ("lazyre", "compile")
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_no_module_gives_a_lazy_pattern_to_re_functions_or_isinstance() -> None:
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in SRC.rglob("*.py")}
    lazy = {n for tree in trees.values() for n in _lazy_names(tree)}
    assert len(lazy) > 100  # the check sees the patterns
    wrong: list[str] = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func, first = node.func, node.args[0]
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "re"
                and (func.attr in _RE_FUNCS or func.attr == "compile")
                and isinstance(first, ast.Name)
                and first.id in lazy
            ):
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno}")
            if (
                isinstance(func, ast.Name)
                and func.id == "isinstance"
                and len(node.args) == 2
                and "re.Pattern" in ast.unparse(node.args[1])
            ):
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not wrong
