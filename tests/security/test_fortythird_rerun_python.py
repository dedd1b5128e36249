"""Forty-third re-run, Python findings: F4 and F5 (see /work/redteam43/FINDINGS.md).

F4: a probe whose failure makes ``main()`` return a failure status (``return 1`` into
``sys.exit(main())``), or calls ``parser.error(...)``, stops the program: GP204 stays major.
F5: a public probe called unguarded by an extensionless ``#!`` python tool or a notebook keeps
GP204 major (the other callers are not only ``*.py`` files).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from gpuport.models import Severity
from gpuport.scan.engine import scan_path


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _gp204(root: Path) -> list[Severity]:
    report = scan_path(root)
    return [f.severity for f in report.findings if f.rule_id == "GP204"]


_PROJECT = '[project]\nname = "pkg"\nversion = "0.1"\n'

_HAS_GPU = """\
    import argparse
    import subprocess
    import sys


    def _has_gpu():
        try:
            subprocess.run(["nvidia-smi", "-L"], check=True, capture_output=True)
            return True
        except (subprocess.CalledProcessError, FileNotFoundError):
            return False

"""


def test_f4_a_probe_whose_failure_fails_main_or_calls_parser_error_is_no_handled_failure(
    tmp_path: Path,
) -> None:
    shapes = {
        "status": """
            def main():
                if not _has_gpu():
                    print("error: no NVIDIA GPU found", file=sys.stderr)
                    return 1
                print("running")
                return 0


            if __name__ == "__main__":
                sys.exit(main())
            """,
        "system_exit": """
            def run():
                if not _has_gpu():
                    return "no NVIDIA GPU"
                return 0


            def cli():
                return run()


            if __name__ == "__main__":
                raise SystemExit(cli())
            """,
        "parser_error": """
            def cli():
                parser = argparse.ArgumentParser()
                parser.add_argument("--n", type=int, default=1)
                args = parser.parse_args()
                if not _has_gpu():
                    parser.error("an NVIDIA GPU is required")
                print(args.n)


            cli()
            """,
    }
    for name, body in shapes.items():
        root = tmp_path / name
        cli = textwrap.dedent(_HAS_GPU) + textwrap.dedent(body)
        _write(root, {"pyproject.toml": _PROJECT, "pkg/__init__.py": "", "pkg/cli.py": cli})
        assert _gp204(root) == [Severity.MAJOR], name
    # a main() that goes on on the CPU when the probe fails still handles the failure
    handled = tmp_path / "handled"
    cli = textwrap.dedent(_HAS_GPU) + textwrap.dedent(
        """
        def main():
            if not _has_gpu():
                print("no NVIDIA GPU: running on the CPU")
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        """
    )
    _write(handled, {"pyproject.toml": _PROJECT, "pkg/__init__.py": "", "pkg/cli.py": cli})
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


def test_f5_a_probe_called_by_a_shebang_tool_or_a_notebook_keeps_gp204(tmp_path: Path) -> None:
    base = {"pyproject.toml": _PROJECT, "pkg/__init__.py": "", "pkg/gpu.py": _GPU}
    tool = tmp_path / "tool"
    check = "#!/usr/bin/env python3\nfrom pkg.gpu import gpu_names\nprint(gpu_names()[0])\n"
    _write(tool, {**base, "tools/check": check})
    assert _gp204(tool) == [Severity.MAJOR]

    notebook = tmp_path / "notebook"
    demo = _notebook(
        "%matplotlib inline\n!pip list\nfrom pkg.gpu import gpu_names", "gpu_names()[0]"
    )
    _write(notebook, {**base, "demo.ipynb": demo})
    assert _gp204(notebook) == [Severity.MAJOR]

    # a notebook that also swallows the probe's failure uses it no other way
    quiet = tmp_path / "quiet"
    cell = (
        "import subprocess\nfrom pkg.gpu import gpu_names\ntry:\n    print(gpu_names())\n"
        "except (subprocess.CalledProcessError, FileNotFoundError):\n    print('no GPU')\n"
    )
    _write(quiet, {**base, "demo.ipynb": _notebook("%load_ext autoreload", cell)})
    assert _gp204(quiet) == [Severity.INFO]
