"""Dependency reading details that annotated fixtures cannot express."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement

from gpuport.knowledge import load_packages, resolve_target
from gpuport.scan import scan_path
from gpuport.scan.engine import check_text
from gpuport.scan.finding import Finding
from gpuport.scan.rules import FileKind
from gpuport.scan.rules.deps.pins import below_minimum, floor_below
from gpuport.scan.rules.deps.readers import (
    _poetry_to_pep508,
    conda_entries,
    pyproject_entries,
    setup_py_entries,
)


def _hits(findings: list[Finding], rule: str) -> list[tuple[str, int | None]]:
    return [(f.location.path, f.location.line) for f in findings if f.rule_id == rule]


def _messages(findings: list[Finding], rule: str) -> list[str]:
    return [f.message for f in findings if f.rule_id == rule]


def _check(text: str, kind: FileKind, rel: str) -> tuple[list[Finding], str | None]:
    return check_text(rel, text, kind, resolve_target("gfx942"), load_packages())


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
    assert below_minimum(Requirement(spec), "0.50.0") is below


@pytest.mark.parametrize(
    ("name", "spec", "pep508"),
    [
        ("torch", "^2.3", "torch>=2.3"),
        ("torch", "2.3.1", "torch==2.3.1"),
        ("torch", "*", "torch"),
        ("jax", {"version": "~0.4", "extras": ["cuda12"]}, "jax[cuda12]>=0.4"),
        ("x", {"url": "https://e.org/x.whl"}, "x @ https://e.org/x.whl"),
        (
            "torch",
            {"version": "2.1.0+cu118", "markers": "sys_platform == 'linux'"},
            "torch==2.1.0+cu118 ; sys_platform == 'linux'",
        ),
        ("torch", {"version": "2.1.0", "markers": "not a marker ("}, "torch==2.1.0"),
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


# --- includes --------------------------------------------------------------------


def test_include_with_a_requirements_name_is_followed_even_when_gitignored(
    tmp_path: Path,
) -> None:
    (tmp_path / ".gitignore").write_text("requirements-gpu.txt\n")
    (tmp_path / "requirements.txt").write_text("-r requirements-gpu.txt\n")
    (tmp_path / "requirements-gpu.txt").write_text("numpy\ntensorrt\n")
    assert _hits(scan_path(tmp_path).findings, "GP101") == [("requirements-gpu.txt", 2)]


def test_included_file_is_reported_relative_to_the_scanned_root(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "common").mkdir()
    (tmp_path / "svc" / "requirements.txt").write_text("-r ../common/gpu.pip\n")
    (tmp_path / "common" / "gpu.pip").write_text("pycuda\n")
    assert _hits(scan_path(tmp_path).findings, "GP101") == [("common/gpu.pip", 1)]


def test_walker_and_include_report_a_shared_file_once(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("-r requirements-dev.txt\n")
    (tmp_path / "requirements-dev.txt").write_text("pycuda\n")
    assert _hits(scan_path(tmp_path).findings, "GP101") == [("requirements-dev.txt", 1)]


def test_include_outside_the_scanned_folder_is_never_read(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (tmp_path / "secret.txt").write_text("tensorrt\n")
    (proj / "link.pip").symlink_to(tmp_path / "secret.txt")
    (proj / "requirements.txt").write_text(
        "-r ../secret.txt\n-c /etc/passwd\n--requirement=link.pip\n-rlink.pip\n"
    )
    findings = scan_path(proj).findings
    assert not _hits(findings, "GP101")
    assert [(f.location.line, f.message) for f in findings if f.rule_id == "GP110"] == [
        (1, "include outside the scanned folder, not read: ../secret.txt"),
        (2, "include outside the scanned folder, not read: /etc/passwd"),
        (3, "include outside the scanned folder, not read: link.pip"),
        (4, "include outside the scanned folder, not read: link.pip"),
    ]


def test_missing_include_says_no_such_file(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\n-r gone.pip\n")
    findings = scan_path(tmp_path).findings
    assert [(f.location.line, f.message) for f in findings if f.rule_id == "GP110"] == [
        (2, "cannot read included file gone.pip: no such file")
    ]


def test_include_depth_is_limited(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("-r d1.pip\n")
    for i in range(1, 9):
        (tmp_path / f"d{i}.pip").write_text(f"-r d{i + 1}.pip\npycuda\n")
    paths = {path for path, _ in _hits(scan_path(tmp_path).findings, "GP101")}
    assert paths == {f"d{i}.pip" for i in range(1, 6)}


def test_conda_pip_include_is_relative_to_the_env_file(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "env").mkdir(parents=True)
    (proj / "env" / "environment.yml").write_text(
        "dependencies:\n  - pip:\n    - -r gpu.pip\n    - -r ../../outside.pip\n"
    )
    (proj / "env" / "gpu.pip").write_text("tensorrt\n")
    (tmp_path / "outside.pip").write_text("pycuda\n")
    findings = scan_path(proj).findings
    assert _hits(findings, "GP101") == [("env/gpu.pip", 1)]
    assert _messages(findings, "GP110") == [
        "include outside the scanned folder, not read: ../../outside.pip"
    ]


# --- line numbers and messages -----------------------------------------------------


def test_form_feed_and_line_separator_do_not_shift_requirement_lines(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "numpy\x0c\ntensorrt\u2028\n# note \u2028 here\npycuda\n", encoding="utf-8"
    )
    assert _hits(scan_path(tmp_path).findings, "GP101") == [
        ("requirements.txt", 2),
        ("requirements.txt", 4),
    ]


def test_line_separator_does_not_shift_manifest_lines() -> None:
    toml = '[project]\n# note \u2028 here\ndependencies = ["pycuda"]\n'
    assert [e.line for e in pyproject_entries(toml)] == [3]
    cfg = "[options]\ninstall_requires =\n    numpy\x0c\n    pycuda\n"
    findings, _ = _check(cfg, FileKind.SETUP_CFG, "setup.cfg")
    assert _hits(findings, "GP101") == [("setup.cfg", 4)]
    yml = 'name: "a\u2028b"\ndependencies:\n  - cudatoolkit=11.8\n'
    assert [e.line for e in conda_entries(yml)] == [3]
    setup = "X = 1\x0c\ns = '''\n  numpy\u2028\n  pycuda\n'''\nsetup(install_requires=s)\n"
    assert [(e.value, e.line) for e in setup_py_entries(setup)] == [("numpy", 3), ("pycuda", 4)]


def test_messages_never_contain_a_raw_newline() -> None:
    text = '[project]\ndependencies = ["not valid!!\\nat all", "x @ https://e/x-cu121\\n.whl"]\n'
    findings, _ = _check(text, FileKind.PYPROJECT, "pyproject.toml")
    assert findings
    assert all("\n" not in f.message for f in findings)
    assert "not a PEP 508 requirement: not valid!! at all" in _messages(findings, "GP110")


# --- setup.py ----------------------------------------------------------------------


def test_setup_py_kwargs_extensions_and_newline_strings() -> None:
    text = (
        "base = ['numpy']\n"  # 1
        "base += ['pycuda']\n"  # 2
        "base.extend(['tensorrt'])\n"  # 3
        "base.append('pynvml')\n"  # 4
        "base = base + ['gpustat']\n"  # 5
        "kw = {'install_requires': base, 'setup_requires': '''\n"  # 6
        "    cupy-cuda12x  # a comment\n"  # 7
        "\n"  # 8
        "    wheel\n"  # 9
        "'''}\n"  # 10
        "setup(name='x', **kw)\n"  # 11
        "setup(**dict(install_requires='a\\nb  # c'))\n"  # 12
    )
    assert [(e.value, e.line) for e in setup_py_entries(text)] == [
        ("numpy", 1),
        ("pycuda", 2),
        ("tensorrt", 3),
        ("pynvml", 4),
        ("gpustat", 5),
        ("cupy-cuda12x", 7),
        ("wheel", 9),
        ("a", 12),
        ("b", 12),
    ]


def test_setup_py_fstrings_use_known_names_and_mark_unknown_parts() -> None:
    text = (
        "CU = 'cu118'\n"
        "V = get_version()\n"
        "setup(install_requires=[f'torch==2.1.0+{CU}', f'torch=={V}+cu{V}', 'flash' + '-attn'])\n"
    )
    assert [(e.value, e.partial) for e in setup_py_entries(text)] == [
        ("torch==2.1.0+cu118", False),
        ("torch==X+cuX", True),
        ("flash-attn", False),
    ]


def test_setup_py_fstring_cuda_label_is_a_cuda_build() -> None:
    text = "v = ver()\nsetup(install_requires=[f'torch=={v}+cu{v}', f'jax=={v}'])\n"
    findings, _ = _check(text, FileKind.SETUP_PY, "setup.py")
    assert _hits(findings, "GP105") == [("setup.py", 2)]
    assert not _hits(findings, "GP110")


# --- pyproject, conda --------------------------------------------------------------


def test_poetry_constraint_array_gives_one_entry_per_table() -> None:
    text = (
        "[tool.poetry.dependencies]\n"  # 1
        "# torch = 'not this line'\n"  # 2
        'torchvision = "^0.16"\n'  # 3
        "torch = [\n"  # 4
        '  { version = "2.1.0+cu118", markers = "sys_platform == \'linux\'" },\n'  # 5
        '  { version = "2.1.0", markers = "sys_platform == \'darwin\'" },\n'  # 6
        "]\n"  # 7
        'jax = [{ version = "0.4.30" }, { version = "0.4.31" }]\n'  # 8
        "\n"  # 9
        "[tool.poetry.dependencies.pycuda]\n"  # 10
        'version = "2024.1"\n'  # 11
    )
    assert [(e.value, e.line) for e in pyproject_entries(text)] == [
        ("torchvision>=0.16", 3),
        ("torch==2.1.0+cu118 ; sys_platform == 'linux'", 5),
        ("torch==2.1.0 ; sys_platform == 'darwin'", 6),
        ("jax==0.4.30", 8),
        ("jax==0.4.31", 8),
        ("pycuda==2024.1", 10),
    ]


def test_bare_names_are_located_by_whole_word_outside_comments() -> None:
    text = "[project]\n# torch is added below\ndependencies = [\n  'torchvision',\n  'torch',\n]\n"
    assert [(e.value, e.line) for e in pyproject_entries(text)] == [
        ("torchvision", 4),
        ("torch", 5),
    ]


def test_build_system_requires_is_read() -> None:
    text = '[build-system]\nrequires = ["setuptools", "torch==2.3.0+cu121"]\n'
    findings, _ = _check(text, FileKind.PYPROJECT, "pyproject.toml")
    assert _hits(findings, "GP105") == [("pyproject.toml", 2)]


def test_conda_pip_index_message_shows_only_the_url() -> None:
    text = (
        "dependencies:\n  - pip:\n"
        "    - --extra-index-url=https://download.pytorch.org/whl/cu118\n"
        "    - --index-url   https://download.pytorch.org/whl/cu121\n"
    )
    findings, _ = _check(text, FileKind.CONDA_ENV, "environment.yml")
    assert _messages(findings, "GP104") == [
        "index https://download.pytorch.org/whl/cu118 serves CUDA wheels",
        "index https://download.pytorch.org/whl/cu121 serves CUDA wheels",
    ]


def test_conda_channels_and_cuda_builds() -> None:
    text = (
        "channels:\n  - nvidia/label/cuda-12.1.0\n"
        "dependencies:\n"
        "  - pytorch=2.1.0=py3.11_cuda12.1_cudnn8.9.2_0\n"
        "  - pytorch==2.1.0=py3.11_cpu_0\n"
        "  - conda-forge/label/a.b::cudatoolkit=11.8\n"
    )
    # the channel serves the CUDA packages listed: those are the findings, not it too
    assert [(e.kind, e.value, e.line) for e in conda_entries(text)] == [
        ("conda", "CUDA build of pytorch", 4),
        ("req", "torch==2.1.0", 4),
        ("req", "torch==2.1.0", 5),
        ("conda", "conda-forge/label/a.b::cudatoolkit=11.8 is part of the CUDA stack", 6),
    ]
    # with no CUDA package of its own listed, the channel is the finding (DPVO's `- nvidia`
    # beside `pytorch-cuda=12.1` was two findings of one construct: issue 24, nineteenth)
    alone = "channels:\n  - nvidia/label/cuda-12.1.0\ndependencies:\n  - numpy\n"
    assert [(e.kind, e.value) for e in conda_entries(alone) if e.kind == "conda"] == [
        ("conda", "the nvidia/label/cuda-12.1.0 channel serves CUDA packages")
    ]


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("-e git+https://github.com/Dao-AILab/flash-attention.git#egg=flash-attn", "GP102"),
        ("-e git+https://github.com/org/x.git#egg=pycuda&subdirectory=py", "GP101"),
        ("--find-links https://data.pyg.org/whl/torch-2.1.0+cu121.html", "GP104"),
        ("-f https://data.pyg.org/whl/torch-2.1.0+cu118.html", "GP104"),
    ],
)
def test_requirements_egg_names_and_find_links(line: str, rule: str) -> None:
    findings, _ = _check(line + "\n", FileKind.REQUIREMENTS, "requirements.txt")
    assert [f.rule_id for f in findings] == [rule]


@pytest.mark.parametrize(
    ("spec", "admits_older"),
    [
        ("bitsandbytes>=0.43", True),  # issue 29: pre-ROCm releases stay allowed
        ("bitsandbytes>0.49", True),
        ("bitsandbytes~=0.45", True),
        ("bitsandbytes>=0.50.0", False),
        ("bitsandbytes", False),
        ("bitsandbytes==0.43.1", False),  # below_minimum's case (major), not this one
    ],
)
def test_floor_below(spec: str, admits_older: bool) -> None:
    assert floor_below(Requirement(spec), "0.50.0") is admits_older
