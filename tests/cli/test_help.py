"""`--help` (issue 29): each command says what it assumes, and a plain flag shows no type."""

from __future__ import annotations

from typing import Any

import pytest

ASSUMING = {
    ("assess",): ["the current folder", "target gfx942", "offered, not used", "else 6.4"],
    ("scan",): ["target gfx942", "judge core code", "--scope all"],
    ("hipify",): ["HIP version installed here, else 6.4", "exits 1 when a translation fails"],
    ("bench",): ["first GPU", "else the CPU", "GPU catalog"],
    ("compare",): ["first run is the baseline", "95%"],
    ("cost",): ["h100-sxm and mi300x", "bf16", "context 8192", "dated"],
    ("doctor",): ["read-only", "changes nothing"],
    ("validate", "capture"): ["KV cache off", "--device"],
    ("validate", "check"): ["A's numeric settings", "fp64 arbitration"],
}


@pytest.mark.parametrize("command", list(ASSUMING))
def test_help_states_the_assumptions(
    cli: Any, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per paragraph: the phrases stay whole
    res = cli(*command, "--help")
    assert res.code == 0
    text = " ".join(res.out.split())
    for phrase in ASSUMING[command]:
        assert phrase in text, (command, phrase)
    assert "<bool>" not in res.out  # a plain flag takes no value
    assert "<list[" not in res.out  # a repeatable option reads <str>...


@pytest.mark.parametrize("command", list(ASSUMING))
def test_help_paragraphs_fill_an_80_column_terminal(
    cli: Any, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """A docstring's line breaks are not kept: each source line wrapped again at 80 columns
    into a long line and a stub ("pyproject.toml," alone on a line)."""
    monkeypatch.setenv("COLUMNS", "80")
    res = cli(*command, "--help")
    head = res.out.split("╭")[0]  # the description, above the argument and option boxes
    paragraphs: list[list[str]] = [[]]
    for line in head.splitlines():
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    lines = [line for p in paragraphs for line in p[:-1]]  # a paragraph's last line may be short
    short = [line for line in lines if len(line) < 55 and not line.startswith("Usage:")]
    assert not short, short
