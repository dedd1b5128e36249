"""Forty-second re-run, findings F1, F4, F5 and F17: project facts that lowered or moved
findings they do not describe.

* F1: a monitoring dependency nothing imports lowered every finding on its manifest line
  (a ``jax[cuda12]`` blocker beside ``GPUtil`` on one ``dependencies = [...]`` line).
* F4: an explicit CUDA uv index pinned under the ``dev`` dependency group (which a plain
  ``uv sync`` installs) was read as an opt-in extra's.
* F5: a pip freeze that install.sh, a CI workflow and tox.ini install was "named by no file".
* F17: "no Python file names it" missed a monitor run as a command (``gpustat`` in a shell
  script) and Python files without a ``.py`` name (a ``#!/usr/bin/env python`` tool).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write


def _scan(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _sev(report, rule: str, start: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        f.severity.value
        for f in report.findings
        if f.rule_id == rule and f.message.startswith(start)
    ]


_UV_GROUP = """\
[project]
name = "mypkg"
version = "0.1"
dependencies = ["numpy"]

[dependency-groups]
dev = ["torch==2.4.0"]
docs = ["sphinx"]

[tool.uv.sources]
torch = [{ index = "pytorch-cu121", group = "dev" }]

[[tool.uv.index]]
name = "pytorch-cu121"
url = "https://download.pytorch.org/whl/cu121"
explicit = true
"""


def test_a_cuda_uv_index_of_a_default_group_keeps_its_severity(tmp_path: Path) -> None:
    """F4: ``uv sync`` installs the dev group, so its pin to the CUDA index is the default
    install's; a group the default leaves out stays opt-in."""
    files = {"mypkg/__init__.py": "import torch\n"}
    r = _scan(tmp_path / "dev", {**files, "pyproject.toml": _UV_GROUP})
    gp104 = [f.severity.value for f in r.findings if f.rule_id == "GP104"]
    assert gp104 and "info" not in gp104, gp104
    chosen = _UV_GROUP.replace('group = "dev"', 'group = "docs"').replace(
        "[tool.uv.sources]", '[tool.uv]\ndefault-groups = ["dev", "docs"]\n\n[tool.uv.sources]'
    )
    r = _scan(tmp_path / "chosen", {**files, "pyproject.toml": chosen})
    assert "info" not in [f.severity.value for f in r.findings if f.rule_id == "GP104"]
    opt_in = _UV_GROUP.replace('group = "dev"', 'group = "docs"')
    r = _scan(tmp_path / "docs", {**files, "pyproject.toml": opt_in})
    msgs = [(f.severity.value, f.message) for f in r.findings if f.rule_id == "GP104"]
    assert [s for s, _ in msgs] == ["info"] and "docs group" in msgs[0][1], msgs


def test_a_monitor_nothing_imports_lowers_only_its_own_finding(tmp_path: Path) -> None:
    """F1: GPUtil's "never called there" lowered the ``jax[cuda12]`` blocker on its line."""
    deps = 'dependencies = ["GPUtil==1.4.0", "jax[cuda12]"]\n'
    r = _scan(
        tmp_path / "p",
        {
            "pkg/__init__.py": "import numpy\n",
            "pyproject.toml": f'[project]\nname = "pkg"\nversion = "0.1"\n{deps}',
        },
    )
    assert _sev(r, "GP106", "jax[cuda12]") == ["blocker"]
    assert r.verdict.value == "blocked"
    gputil = [f for f in r.findings if f.rule_id == "GP101" and f.message.startswith("GPUtil")]
    assert [f.severity.value for f in gputil] == ["info"]  # its own finding is still lowered
    assert "never called there" in gputil[0].message


def test_a_monitor_run_by_a_script_or_imported_outside_py_files_is_called(
    tmp_path: Path,
) -> None:
    """F17: ``gpustat --json`` in a shell script runs it; ``import GPUtil`` in a ``#!python``
    tool, a ``.pyx`` or a notebook imports it. A line that only installs it calls nothing."""
    reqs = "numpy\ngpustat==1.1.1\nGPUtil==1.4.0\n"
    base = {"requirements.txt": reqs, "main.py": "import numpy\n"}
    for name, extra in {
        "cli": {
            "monitor.sh": "#!/bin/sh\ngpustat --json > gpu.json\n",
            "tools/gpuwatch": "#!/usr/bin/env python\nimport GPUtil\nprint(GPUtil.getGPUs())\n",
        },
        "cython": {
            "ext/mon.pyx": "import GPUtil\n",
            "nb/look.ipynb": '{"cells": [{"source": ["import gpustat\\n"]}]}\n',
        },
    }.items():
        r = _scan(tmp_path / name, {**base, **extra})
        got = {f.message.split(":", 1)[0]: f.severity.value for f in r.findings
               if f.rule_id == "GP101"}  # fmt: skip
        assert got.get("gpustat") not in (None, "info"), (name, got)
        assert got.get("GPUtil") not in (None, "info"), (name, got)
    only_installs = {"install.sh": "#!/bin/sh\npip install gpustat GPUtil\n"}
    r = _scan(tmp_path / "inst", {**base, **only_installs})
    assert {f.severity.value for f in r.findings if f.rule_id == "GP101"} == {"info"}


_FREEZE = "".join(
    f"{n}==1.{i}.0\n"
    for i, n in enumerate(
        ["numpy", "scipy", "torch", "nvidia-cublas-cu12", "nvidia-cudnn-cu12", "triton"]
        + [f"pkg{k}" for k in range(16)]
    )
)
_PACKAGE = '[build-system]\nrequires = ["setuptools"]\n[project]\nname = "m"\nversion = "0.1"\n'


def test_a_freeze_a_script_ci_or_tox_installs_stays_core(tmp_path: Path) -> None:
    """F5: ``pip install -r requirements.txt`` in install.sh, a CI workflow, tox.ini's
    ``deps``, a noxfile, or glued (``-rrequirements.txt``), names the freeze: it stays core.
    Named by nothing, it is still counted apart."""
    base = {"m/__init__.py": "import torch\n", "pyproject.toml": _PACKAGE}
    base["requirements.txt"] = _FREEZE

    def blocked(name: str, extra: dict[str, str]) -> bool:
        r = _scan(tmp_path / name, {**base, **extra})
        return r.verdict.value == "blocked"

    assert not blocked("alone", {})  # the freeze nothing names: counted apart
    for name, extra in {
        "sh": {"install.sh": "#!/bin/sh\npip install -r requirements.txt\n"},
        "ci": {".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n"
               "      - run: pip install -r requirements.txt\n"},
        "tox": {"tox.ini": "[testenv]\ndeps = -r requirements.txt\n"},
        "nox": {"noxfile.py": 'def t(session):\n    session.install("-r", "requirements.txt")\n'},
        "glued": {"scripts/setup.sh": "pip install -rrequirements.txt\n"},
    }.items():  # fmt: skip
        assert blocked(name, extra), name
