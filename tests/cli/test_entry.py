"""``gpuport hipify`` without typer (gpuport.cli.entry): its parser accepts only command lines
typer accepts too, and gives run_hipify exactly what typer gives it; anything else is left to
typer, whose messages the user then sees."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuport.cli import app as app_module
from gpuport.cli import hipify_cmd
from gpuport.cli.entry import HIPIFY_OPTIONS, hipify_arguments
from gpuport.cli.hipify_run import run_hipify


def _typer_params() -> list[Any]:
    app_module._register(["hipify"])
    return list(typer.main.get_command(app_module.app).commands["hipify"].params)  # type: ignore[attr-defined]


def test_parser_names_exactly_the_typer_command_options() -> None:
    params = [p for p in _typer_params() if p.opts[0].startswith("-")]
    flags = {flag: p for p in params for flag in p.opts}
    assert set(flags) == set(HIPIFY_OPTIONS)
    for flag, (name, kind) in HIPIFY_OPTIONS.items():
        p = flags[flag]
        assert p.name == name, flag
        assert bool(p.is_flag) == (kind == "flag"), flag
        assert not p.multiple and not p.secondary_opts and p.envvar is None, flag


def test_run_hipify_defaults_are_the_typer_defaults() -> None:
    defaults = {
        name: p.default
        for name, p in inspect.signature(run_hipify).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    typer_defaults = {p.name: p.default for p in _typer_params() if p.name != "path"}
    assert set(defaults) == set(typer_defaults)
    for name, value in typer_defaults.items():  # fmt: typer holds the choice's text
        assert defaults[name] == value or str(defaults[name]) == value, name


PLAIN = [
    ["k.cu"],
    ["k.cu", "--hip-version", "5.2"],
    ["src", "-o", "out", "--hip-version=6.2", "--format", "json", "--output", "r.json"],
    ["src", "--out-dir", "out", "-t", "gfx90a", "--check", "--offload-arch", "gfx90a,gfx1030"],
    ["--stats", "k.cu", "-f", "markdown", "--annotate", "--diff"],
    ["k.cu", "--in-place", "--launch-syntax", "ggl", "--build-files", "--wave64", "report"],
    ["k.cu", "--fail-on", "hazard", "--target=mi300x", "--format=terminal"],
    ["a b/k.cu", "-o", "out dir"],
]

NOT_PLAIN = [
    [],
    ["--help"],
    ["k.cu", "--help"],
    ["k.cu", "other.cu"],
    ["k.cu", "-o"],
    ["k.cu", "-oout"],
    ["k.cu", "-o", "a", "-o", "b"],
    ["k.cu", "--check=yes"],
    ["k.cu", "-f=json"],
    ["k.cu", "--format", "sarif"],
    ["k.cu", "--format", "JSON"],
    ["k.cu", "--target", "-x"],
    ["k.cu", "--no-such-option"],
    ["--", "k.cu"],
    ["k.cu", "--hip-version", ""],
    [""],
]


def _typer_kwargs(monkeypatch: pytest.MonkeyPatch, words: list[str]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def record(path: Path, **kwargs: Any) -> int:
        seen.update(kwargs, path=path)
        return 0

    monkeypatch.setattr(hipify_cmd, "run_hipify", record)
    with pytest.raises(SystemExit) as done:
        app_module.main(["hipify", *words])
    assert done.value.code == 0
    return seen


def _with_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    params = inspect.signature(run_hipify).parameters.items()
    defaults = {n: p.default for n, p in params if p.default is not inspect.Parameter.empty}
    return {**defaults, **kwargs}


@pytest.mark.parametrize("words", PLAIN, ids=" ".join)
def test_plain_command_lines_parse_as_typer_parses_them(
    monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    fast = hipify_arguments(words)
    assert fast is not None
    expected = _typer_kwargs(monkeypatch, words)
    got = _with_defaults(fast)
    assert got == expected
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize("words", NOT_PLAIN, ids=lambda w: " ".join(w) or "(none)")
def test_other_command_lines_are_left_to_typer(words: list[str]) -> None:
    assert hipify_arguments(words) is None


def test_entry_runs_hipify_without_typer_and_reports_errors_in_one_line(
    cli: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.cu"
    done = cli("hipify", str(missing), "--hip-version", "5.2")
    assert done.code == 2
    assert done.err.strip().splitlines() == [f"gpuport: error: no such file or folder: {missing}"]


def test_entry_leaves_usage_errors_to_typer(cli: Any) -> None:
    done = cli("hipify", "k.cu", "--format", "sarif")
    assert done.code == 2
    assert "gpuport hipify: error:" in done.err and "--help" in done.err
