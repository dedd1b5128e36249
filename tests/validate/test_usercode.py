"""load_callable: the one place gpuport runs user code, with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import GpuportError
from gpuport.usercode import call_user, load_callable


def test_file_reference(tmp_path: Path) -> None:
    (tmp_path / "sibling.py").write_text("VALUE = 41\n")
    f = tmp_path / "factory.py"
    f.write_text(
        "import sibling\n"
        "def build():\n    return sibling.VALUE + 1\n"
        "class F:\n    @staticmethod\n    def make():\n        return 'made'\n"
    )
    assert load_callable(f"{f}:build", what="--model")() == 42
    assert load_callable(f"{f}:F.make", what="--model")() == "made"


def test_module_reference_from_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "userpkg_gpuport_test"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("def build():\n    return 'ok'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_callable("userpkg_gpuport_test.mod:build", what="--model")() == "ok"


def test_loading_writes_no_bytecode_into_the_users_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", False)  # as Python runs by default
    (tmp_path / "sib_nobc.py").write_text("VALUE = 1\n")
    f = tmp_path / "factory_nobc.py"
    f.write_text("import sib_nobc\ndef build():\n    return sib_nobc.VALUE\n")
    pkg = tmp_path / "userpkg_nobc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("def build():\n    return 2\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_callable(f"{f}:build", what="--model")() == 1
    assert load_callable("userpkg_nobc.mod:build", what="--model")() == 2
    assert not list(tmp_path.rglob("__pycache__"))
    import sys

    assert sys.dont_write_bytecode is False  # left as it was


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nocolon", "must look like"),
        (":build", "must look like"),
        ("mod:", "must look like"),
        ("mod:not-an-identifier", "must look like"),
        ("gpuport_no_such_module_abc:build", "no module named"),
        ("missing/file.py:build", "no such file"),
        ("json:nothing_here", "has no attribute"),
        ("json:__doc__", "not callable"),
    ],
)
def test_errors_are_one_line(ref: str, message: str) -> None:
    with pytest.raises(GpuportError, match=message) as info:
        load_callable(ref, what="--model")
    assert "\n" not in str(info.value)


def test_errors_inside_user_code(tmp_path: Path) -> None:
    f = tmp_path / "bad_import.py"
    f.write_text("import gpuport_surely_missing_dep\n")
    with pytest.raises(GpuportError, match=r"running .* failed: ModuleNotFoundError"):
        load_callable(f"{f}:build", what="--model")
    g = tmp_path / "raises.py"
    g.write_text("def build():\n    raise ValueError('bad\\nthing')\n")
    fn = load_callable(f"{g}:build", what="--model")
    with pytest.raises(GpuportError, match=r"build\(\) raised ValueError: bad$"):
        call_user(fn, "build()")
