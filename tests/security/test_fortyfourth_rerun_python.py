"""Forty-fourth re-run, Python findings: F5, F6, F19 and F13 (see /work/redteam44/FINDINGS.md).

* F5: a probe whose failure makes a console-script entry point (``[project.scripts]``) return a
  failure status, makes ``main()`` return ``os.EX_UNAVAILABLE``, or calls ``ap.error(...)``
  on an ``ArgumentParser`` stops the program: GP204 stays major.
* F6: a public probe called unguarded by a ``uv run --script`` tool, a Cython ``.pyx`` file or
  a ``#!`` python tool with a dot in its name keeps GP204 major.
* F19: a lone surrogate in a notebook (valid JSON) no longer crashes the scan; the notebook is
  still read.
* F13: a monitoring dependency (GPUtil) run by a Kubernetes manifest's ``command:`` or a
  ``package.json`` script is not lowered as "no script runs it"; a config that only lists it
  still is.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan import ScanOptions, scan_path


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _gp204(root: Path) -> list[Severity]:
    report = scan_path(root, ScanOptions(jobs=1))
    assert not [s for s in report.skipped if s.internal], report.skipped
    return [f.severity for f in report.findings if f.rule_id == "GP204"]


_PROJECT = '[project]\nname = "pkg"\nversion = "0.1"\n'

_HAS_GPU = """\
    import argparse
    import os
    import subprocess
    import sys


    def _has_gpu():
        try:
            subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True)
            return True
        except (subprocess.CalledProcessError, FileNotFoundError):
            return False

"""


def test_f5_a_probe_failing_an_entry_point_an_exit_constant_or_ap_error_keeps_gp204(
    tmp_path: Path,
) -> None:
    scripts = _PROJECT + '[project.scripts]\npkg-run = "pkg.cli:run"\n'
    shapes = {
        "entry_point": (  # the finding's own shape
            scripts,
            """
            def run():
                if not _has_gpu():
                    print("error: no NVIDIA GPU found", file=sys.stderr)
                    return 1
                return 0
            """,
        ),
        "exit_constant": (
            _PROJECT,
            """
            def main():
                if not _has_gpu():
                    return os.EX_UNAVAILABLE
                return os.EX_OK


            if __name__ == "__main__":
                sys.exit(main())
            """,
        ),
        "ap_error": (
            _PROJECT,
            """
            def cli():
                ap = argparse.ArgumentParser()
                args = ap.parse_args()
                if not _has_gpu():
                    ap.error("an NVIDIA GPU is required")
                print(args)


            cli()
            """,
        ),
    }
    for name, (meta, body) in shapes.items():
        cli = textwrap.dedent(_HAS_GPU) + textwrap.dedent(body)
        root = _write(
            tmp_path / name, {"pyproject.toml": meta, "pkg/__init__.py": "", "pkg/cli.py": cli}
        )
        assert _gp204(root) == [Severity.MAJOR], name

    # another module's entry point (pyproject's scripts, setup.cfg's console_scripts) fails on
    # the public probe
    for name, meta in {
        "pyproject": {"pyproject.toml": _PROJECT + '[project.scripts]\npkg-go = "pkg.cli:go"\n'},
        "setup_cfg": {
            "pyproject.toml": _PROJECT,
            "setup.cfg": "[options.entry_points]\nconsole_scripts =\n    pkg-go = pkg.cli:go\n",
        },
    }.items():
        other = _write(tmp_path / name, {**meta, **_CALLER})
        assert _gp204(other) == [Severity.MAJOR], name
    # an entry point that goes on on the CPU, or returns success, still handles the failure
    cli = textwrap.dedent(_HAS_GPU) + textwrap.dedent(
        """
        def run():
            if not _has_gpu():
                print("no NVIDIA GPU: running on the CPU")
                return os.EX_OK
            return 0
        """
    )
    handled = _write(
        tmp_path / "handled", {"pyproject.toml": scripts, "pkg/__init__.py": "", "pkg/cli.py": cli}
    )
    assert _gp204(handled) == [Severity.INFO]


_GPU = """\
    import subprocess


    def gpu_names():
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            check=True, capture_output=True, text=True,
        )
        return out.stdout.split("\\n")


    def describe():
        try:
            return gpu_names()
        except (subprocess.CalledProcessError, FileNotFoundError):
            return []
    """


_CALLER = {
    "pkg/__init__.py": "",
    "pkg/gpu.py": _GPU,
    "pkg/cli.py": """\
                import subprocess

                from pkg.gpu import gpu_names


                def _ok():
                    try:
                        gpu_names()
                        return True
                    except (subprocess.CalledProcessError, FileNotFoundError):
                        return False


                def go():
                    if not _ok():
                        return 1
                    return 0
                """,
}


def test_f6_a_probe_called_by_a_uv_script_a_pyx_or_a_dotted_tool_keeps_gp204(
    tmp_path: Path,
) -> None:
    base = {"pyproject.toml": _PROJECT, "pkg/__init__.py": "", "pkg/gpu.py": _GPU}
    assert _gp204(_write(tmp_path / "alone", base)) == [Severity.INFO]
    call = "from pkg.gpu import gpu_names\nprint(gpu_names()[0])\n"
    for name, extra in {
        "uv": {"tools/check": "#!/usr/bin/env -S uv run --script\n# /// script\n# ///\n" + call},
        "pep723": {"tools/check": "# /// script\n# dependencies = []\n# ///\n" + call},
        "pyx": {"pkg/fast.pyx": call},
        "dotted": {"tools/check.v2": "#!/usr/bin/env python3\n" + call},
    }.items():
        assert _gp204(_write(tmp_path / name, {**base, **extra})) == [Severity.MAJOR], name
    # a dotted data file that is no Python tool is not a caller
    data = {"tools/names.v2": "gpu_names()[0]\n", "notes.md": "call gpu_names()[0]\n"}
    assert _gp204(_write(tmp_path / "data", {**base, **data})) == [Severity.INFO]


def _notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": c.splitlines(keepends=True), "metadata": {}}
                for c in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_f19_a_lone_surrogate_in_a_notebook_does_not_crash_the_scan(tmp_path: Path) -> None:
    base = {"pyproject.toml": _PROJECT, "pkg/__init__.py": "", "pkg/gpu.py": _GPU}
    quiet = _write(tmp_path / "quiet", {**base, "demo.ipynb": _notebook('label = "\ud800"\n')})
    assert _gp204(quiet) == [Severity.INFO]
    # the notebook is still read: its unguarded call is seen
    cell = 'label = "\ud800"\nfrom pkg.gpu import gpu_names\ngpu_names()[0]\n'
    caller = _write(tmp_path / "caller", {**base, "demo.ipynb": _notebook(cell)})
    assert _gp204(caller) == [Severity.MAJOR]


def test_f13_a_monitor_run_by_a_k8s_manifest_or_package_json_is_not_lowered(
    tmp_path: Path,
) -> None:
    base = {
        "pyproject.toml": _PROJECT,
        "pkg/__init__.py": "import torch\n",
        "requirements.txt": "torch\nGPUtil==1.4.0\n",
    }

    def gputil(name: str, extra: dict[str, str]) -> set[str]:
        report = scan_path(_write(tmp_path / name, {**base, **extra}), ScanOptions(jobs=1))
        return {
            f.severity.value
            for f in report.findings
            if f.rule_id == "GP101" and f.message.startswith("GPUtil")
        }

    pod = (
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: m\n    image: pkg\n"
        '    command: ["python", "-c", "import GPUtil; GPUtil.showUtilization()"]\n'
    )
    block = (
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: m\n    command:\n"
        "    - python\n    - -c\n    - import GPUtil; GPUtil.showUtilization()\n"
    )
    package = json.dumps(
        {"name": "ui", "scripts": {"monitor": "python -c 'import GPUtil'"}}, indent=2
    )
    pixi = '[project]\nname = "pkg"\n\n[tasks]\nmon = "python -c \'import GPUtil\'"\n'
    for name, extra in {
        "k8s": {"k8s/monitor.yaml": pod},
        "k8s_block": {"deploy/monitor.yml": block},
        "npm": {"ui/package.json": package},
        "pixi": {"pixi.toml": pixi},
    }.items():
        got = gputil(name, extra)
        assert got and "info" not in got, (name, got)
    # a config that only lists it as a dependency still runs nothing
    listed = {"deps.yaml": "packages:\n  - GPUtil==1.4.0\n", "meta.json": '{"deps": ["GPUtil"]}'}
    assert gputil("listed", listed) == {"info"}
