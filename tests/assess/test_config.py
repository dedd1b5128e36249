"""Project settings: [tool.gpuport], gpuport.toml, flags, precedence and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.assess.config import VALID_KEYS, load_settings
from gpuport.models import GpuportError
from tests.assess.conftest import MINOR, PORTABLE


def _project(tmp_path: Path, pyproject: str | None = None, own: str | None = None) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    if own is not None:
        (root / "gpuport.toml").write_text(own)
    return root


def test_defaults_without_settings(tmp_path: Path) -> None:
    s = load_settings(_project(tmp_path))
    assert s.targets == ("gfx942",)
    assert s.gpus == ("h100-sxm", "mi300x")
    assert s.models == ()
    assert s.context == 8192
    assert s.doctor is False and s.hipify_check is False
    assert all(item.origin == "default" for item in s.echo())
    assert s.config_file is None


def test_pyproject_table_is_read_with_its_origin() -> None:
    s = load_settings(PORTABLE)
    assert s.models == ("llama-3-70b",)
    assert s.gpus == ("h100-sxm", "mi300x", "mi325x")
    assert s.concurrency == 28
    assert dict(s.prices) == {"h100-sxm": 2.90, "mi300x": 1.85}
    assert s.origin("models") == "pyproject.toml"
    assert s.origin("dtype") == "default"


def test_gpuport_toml_accepts_aliases_and_strings() -> None:
    s = load_settings(MINOR)
    assert s.targets == ("gfx942",)  # `target = "mi300x"` resolves to its gfx name
    assert s.gpus == ("h100-sxm", "mi300x")  # a comma-separated string is a list
    assert s.origin("targets") == "gpuport.toml"


def test_gpuport_toml_wins_over_pyproject_with_a_note(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        pyproject='[tool.gpuport]\nmodel = "llama-3-70b"\ncontext = 4096\n',
        own='model = "llama-3-8b"\n',
    )
    s = load_settings(root)
    assert s.models == ("llama-3-8b",)
    assert s.context == 8192  # the pyproject table is ignored whole, not merged
    assert s.origin("models") == "gpuport.toml"
    assert any("ignored" in n for n in s.notes)


def test_flags_override_settings_key_by_key() -> None:
    s = load_settings(PORTABLE, {"context": 4096, "gpus": ["mi300x"], "prices": ["mi300x=2.5"]})
    assert s.context == 4096 and s.origin("context") == "flag"
    assert s.gpus == ("mi300x",) and s.origin("gpus") == "flag"
    assert dict(s.prices) == {"mi300x": 2.5}
    assert s.models == ("llama-3-70b",) and s.origin("models") == "pyproject.toml"


def test_kebab_case_keys_and_nested_table_in_gpuport_toml(tmp_path: Path) -> None:
    root = _project(tmp_path, own='[tool.gpuport]\nhipify-check = false\nfail-on = "major"\n')
    s = load_settings(root)
    assert s.hipify_check is False and s.origin("hipify_check") == "gpuport.toml"
    assert s.fail_on == "major"


@pytest.mark.parametrize("key", ["hipify_check", "hipify-check", "doctor"])
def test_a_project_cannot_turn_on_settings_that_run_programs(tmp_path: Path, key: str) -> None:
    """Issue 23: the project's own file may narrow what gpuport does, never make it run the
    HIP compiler or doctor's probes; the flag still does."""
    root = _project(tmp_path, own=f"{key} = true\n")
    s = load_settings(root)
    attr = key.replace("-", "_")
    assert getattr(s, attr) is False and s.origin(attr) == "default"
    assert any(f"{key.replace('-', '_')} = true" in n and "not applied" in n for n in s.notes)
    flag = load_settings(root, {attr: True})
    assert getattr(flag, attr) is True and flag.origin(attr) == "flag"


def test_unknown_key_lists_the_valid_ones(tmp_path: Path) -> None:
    root = _project(tmp_path, pyproject="[tool.gpuport]\nmodels_served = 3\n")
    with pytest.raises(GpuportError) as err:
        load_settings(root)
    text = str(err.value)
    assert "models_served" in text and "\n" not in text
    assert all(key in text for key in VALID_KEYS)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('context = "big"', "`context` must be a positive integer"),
        ("concurrency = 0", "`concurrency` must be a positive integer"),
        ("doctor = 1", "`doctor` must be true or false"),
        ('dtype = "fp3"', "`dtype` must be one of"),
        ("prices = 3", "`prices` must be a table"),
        ("prices = { mi300x = -1 }", "positive number"),
        ('gpus = ["h100-sxm", 7]', "`gpus` must be a list of strings"),
        ('gpus = ["nonexistent-gpu"]', "unknown GPU"),
        ('model = "not-a-model"', "unknown model"),
        ('targets = ["gfx9999"]', "gfx9999"),
    ],
)
def test_bad_values_are_one_line_errors(tmp_path: Path, body: str, needle: str) -> None:
    root = _project(tmp_path, own=body + "\n")
    with pytest.raises(GpuportError) as err:
        load_settings(root)
    assert needle in str(err.value)
    assert err.value.exit_code == 2


def test_price_for_a_gpu_not_compared_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, own='gpus = ["mi300x"]\nprices = { h100-sxm = 2.0 }\n')
    with pytest.raises(GpuportError, match="not among gpus"):
        load_settings(root)


def test_a_request_someone_set_longer_than_context_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, own="input_tokens = 900\noutput_tokens = 200\n")
    with pytest.raises(GpuportError, match="raise context"):
        load_settings(root, {"context": 1024})


def test_paths_in_settings_are_relative_to_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path, own='validate = ["reports/parity.json"]\nbench = ["nightly"]\n')
    s = load_settings(root)
    assert s.validate == (str(root / "reports" / "parity.json"),)
    # a bare name in a project's settings is a file of the project too, never a history id of
    # this machine nor a file of the current folder (ninth independent review)
    assert s.bench == (str(root / "nightly"),)
    assert load_settings(root, {"bench": ["nightly"]}).bench == ("nightly",)  # a flag: a label


def test_invalid_toml_and_missing_folder(tmp_path: Path) -> None:
    root = _project(tmp_path, own="model = \n")
    with pytest.raises(GpuportError, match="not valid TOML"):
        load_settings(root)
    with pytest.raises(GpuportError, match="does not exist"):
        load_settings(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(GpuportError, match="not a folder"):
        load_settings(tmp_path / "file.txt")
