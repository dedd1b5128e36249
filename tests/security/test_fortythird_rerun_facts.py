"""Forty-third re-run, findings F3 and F13: "named by no file" and "no script runs it" missed
files the project runs.

* F3: a pip freeze that the project's own Python installer (``tools/install_deps.py``
  running ``pip install -r requirements.txt``) installs was counted apart as "named by no
  file", and the scan said READY.
* F13: a monitoring dependency (GPUtil) run by a Makefile recipe, a Dockerfile ``CMD``, a
  compose ``command:``, a ``pyproject.toml`` task or a local composite action was lowered as
  "no script runs it".
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from tests.scan.project_files import write


def _scan(root: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    return scan_path(write(root, files), ScanOptions(jobs=1))


_FREEZE = "".join(
    f"{n}==1.{i}.0\n"
    for i, n in enumerate(
        ["torch", "nvidia-cublas-cu12", "nvidia-cudnn-cu12", "nvidia-nccl-cu12", "triton"]
        + [f"pkg{k}" for k in range(20)]
    )
)


def test_a_freeze_the_projects_python_installer_installs_stays_core(tmp_path: Path) -> None:
    """F3: ``tools/install_deps.py`` (or a notebook's ``!pip install -r``) names the freeze,
    so its blockers stay core and the project is blocked; named by nothing, the freeze is
    still counted apart."""
    base = {
        "setup.py": 'from setuptools import setup\nsetup(name="pkg", packages=["pkg"])\n',
        "pkg/__init__.py": "",
        "requirements.txt": _FREEZE,
    }
    alone = _scan(tmp_path / "alone", base)
    assert alone.verdict.value != "blocked"  # nobody's install: counted apart
    for name, extra in {
        "py": {
            "tools/install_deps.py": "import subprocess, sys\nsubprocess.check_call(["
            '[sys.executable, "-m", "pip", "install", "-r", "requirements.txt"])\n'
        },
        "notebook": {
            "setup_env.ipynb": '{"cells": [{"source": ["!pip install -r requirements.txt\\n"]}]}\n'
        },
    }.items():
        r = _scan(tmp_path / name, {**base, **extra})
        assert r.verdict.value == "blocked", (name, r.verdict.value)


def test_a_monitor_the_projects_build_files_or_actions_run_is_not_lowered(
    tmp_path: Path,
) -> None:
    """F13: GPUtil run by a Makefile recipe, a Dockerfile CMD, a compose command, a poe task
    or a composite action keeps its severity; listed only as a dependency (pyproject's
    ``dependencies``, a Dockerfile's ``pip install``), it is still lowered."""
    run = 'python -c "import GPUtil; GPUtil.showUtilization()"'
    base = {
        "pyproject.toml": '[project]\nname="pkg"\nversion="0.1"\n',
        "pkg/__init__.py": "import torch\n",
        "requirements.txt": "torch\nGPUtil==1.4.0\n",
    }

    def gputil(name: str, extra: dict[str, str]) -> set[str]:
        r = _scan(tmp_path / name, {**base, **extra})
        return {
            f.severity.value
            for f in r.findings
            if f.rule_id == "GP101" and f.message.startswith("GPUtil")
        }

    assert gputil("alone", {}) == {"info"}
    for name, extra in {
        "make": {"Makefile": f"monitor:\n\t{run}\n"},
        "docker": {
            "Dockerfile": 'FROM python:3.11\nCMD ["python", "-c", "import GPUtil; '
            'GPUtil.showUtilization()"]\n'
        },
        "compose": {"docker-compose.yml": f"services:\n  mon:\n    image: x\n    command: {run}\n"},
        "poe": {"pyproject.toml": base["pyproject.toml"] + f"\n[tool.poe.tasks]\nmon = '{run}'\n"},
        "action": {
            ".github/actions/mon/action.yml": "runs:\n  using: composite\n  steps:\n"
            f"    - run: {run}\n      shell: bash\n"
        },
    }.items():
        got = gputil(name, extra)
        assert got and "info" not in got, (name, got)
    listed = {
        "pyproject.toml": '[project]\nname="pkg"\nversion="0.1"\ndependencies = ["GPUtil"]\n',
        "Dockerfile": "FROM python:3.11\nRUN pip install GPUtil\n",
    }
    assert gputil("listed", listed) == {"info"}
