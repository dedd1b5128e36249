"""Fixtures for the validate tests: the tiny model's refs, one shared capture, the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuport.validate.capture import CaptureOptions, capture

MODELS = Path(__file__).resolve().parent / "models.py"


def ref(name: str = "build") -> str:
    """``tests/validate/models.py:NAME`` as a user would write it (absolute here)."""
    return f"{MODELS}:{name}"


@pytest.fixture(scope="session")
def a_gpv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Machine A's capture of the reference model, made once per session (read-only)."""
    out = tmp_path_factory.mktemp("capture") / "a.gpv"
    capture(CaptureOptions(model_ref=ref(), out=out))
    return out


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def vcli(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., Result]]:
    """``gpuport validate ...`` through the real entry point, with validate registered for the
    test if app.py does not register it (yet)."""
    from gpuport.cli import app as app_module
    from gpuport.cli.validate_cmd import register

    groups = app_module.app.registered_groups
    before = list(groups)
    if not any(g.name == "validate" for g in groups):
        register(app_module.app)

    def run(*args: str) -> Result:
        code = 0
        try:
            app_module.main(["validate", *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    yield run
    groups[:] = before
