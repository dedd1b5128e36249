"""Dependency reading details that annotated fixtures cannot express."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement

from gpuport.scan import scan_path
from gpuport.scan.rules.deps import _below_minimum
from gpuport.scan.rules.deps_readers import _poetry_to_pep508, conda_entries, setup_py_entries


def test_include_is_followed_and_reported_at_the_included_file(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("-r deps/gpu.pip\n")
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "gpu.pip").write_text("# gpu extras\ntensorrt>=10\n")
    report = scan_path(tmp_path)
    hits = [f for f in report.findings if f.rule_id == "GP101"]
    assert [(h.location.path, h.location.line) for h in hits] == [("deps/gpu.pip", 2)]


def test_include_cycle_terminates(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("-r a.pip\n")
    (tmp_path / "a.pip").write_text("-r b.pip\npycuda\n")
    (tmp_path / "b.pip").write_text("-r a.pip\n")
    report = scan_path(tmp_path)
    assert [f.location.path for f in report.findings if f.rule_id == "GP101"] == ["a.pip"]


def test_rocm_index_in_parent_satisfies_included_torch(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "--index-url https://download.pytorch.org/whl/rocm6.4\n-r torch.pip\n"
    )
    (tmp_path / "torch.pip").write_text("torch==2.5.1\n")
    assert not [f for f in scan_path(tmp_path).findings if f.rule_id == "GP102"]


def test_continuation_lines_report_the_first_physical_line(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\ntensorrt \\\n    >=10.0\n")
    hits = [f for f in scan_path(tmp_path).findings if f.rule_id == "GP101"]
    assert [h.location.line for h in hits] == [2]


@pytest.mark.parametrize(
    ("spec", "below"),
    [
        ("bitsandbytes==0.43.1", True),
        ("bitsandbytes==0.50.0", False),
        ("bitsandbytes<0.50", True),
        ("bitsandbytes<=0.50.0", False),
        ("bitsandbytes~=0.43.0", True),
        ("bitsandbytes~=0.50", False),
        ("bitsandbytes==0.4.*", True),
        ("bitsandbytes==0.50.*", False),
        ("bitsandbytes>=0.40", False),
        ("bitsandbytes", False),
    ],
)
def test_below_minimum(spec: str, below: bool) -> None:
    assert _below_minimum(Requirement(spec), "0.50.0") is below


@pytest.mark.parametrize(
    ("name", "spec", "pep508"),
    [
        ("torch", "^2.3", "torch>=2.3"),
        ("torch", "2.3.1", "torch==2.3.1"),
        ("torch", "*", "torch"),
        ("jax", {"version": "~0.4", "extras": ["cuda12"]}, "jax[cuda12]>=0.4"),
        ("x", {"url": "https://e.org/x.whl"}, "x @ https://e.org/x.whl"),
    ],
)
def test_poetry_specs_become_pep508(name: str, spec: object, pep508: str) -> None:
    assert _poetry_to_pep508(name, spec) == pep508


def test_setup_py_names_are_resolved_without_running_it() -> None:
    text = (
        "REQS = ['pycuda']\nEXTRA = {'x': ['tensorrt']}\n"
        "setup(install_requires=REQS, extras_require=EXTRA)\n"
    )
    assert [(e.value, e.line) for e in setup_py_entries(text)] == [("pycuda", 1), ("tensorrt", 2)]


def test_conda_renames_pytorch_and_flags_cuda_packages() -> None:
    text = "channels: [nvidia]\ndependencies:\n  - pytorch=2.3.1\n  - pytorch::pytorch-cuda=12.1\n"
    entries = conda_entries(text)
    assert [(e.kind, e.value.split()[0]) for e in entries] == [
        ("conda", "the"),
        ("req", "torch==2.3.1"),
        ("conda", "pytorch::pytorch-cuda=12.1"),
    ]


def test_invalid_manifest_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'x'\n")
    (tmp_path / "environment.yml").write_text("dependencies: [a, b\n")
    report = scan_path(tmp_path)
    reasons = {s.path: s.reason for s in report.skipped}
    assert "invalid TOML" in reasons["pyproject.toml"]
    assert "invalid YAML" in reasons["environment.yml"]
